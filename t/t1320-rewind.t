#!/bin/bash
# A rewind is fresh (docs/design.md, "Rewinds";
# timingfs(8), ERRORS):
# monitoring code keeps descriptors open and reads them again
# from the start; each read at offset 0 takes a new snapshot, and the
# reads after it at other offsets continue that snapshot.
#
# Value files: descriptors of proc/PID/cycles, user_time and times of a
# process whose thread burns CPU time (helper-busy), each read once at
# its open; then, once a fresh open shows a larger value, each is read
# again from the start by pread(2) at 0, lseek(2) to 0 and read(2),
# preadv(2) at 0, and Python's f.seek(0); f.read(): each must show the
# value now, larger than its first read, no smaller than the fresh
# open's before it and no larger than a fresh open's after it. Twice,
# so that a second rewind is fresh too.
#
# threads.table: a descriptor of the table of a Python process of 10
# threads, read whole; the process starts a thread; a rewind (lseek 0)
# read in 37-byte chunks to the end is one whole snapshot (the header
# once, lines of 7 integers and a name, no thread twice) that has the new thread.
# Then a rewind whose first 37 bytes are read before the process starts
# yet another thread, and the rest after: one snapshot, taken at the
# offset-0 read, so without that thread. And two threads that pread(2)
# one descriptor at offset 0 at once, again and again, each get a whole
# table every time.
test_description='A rewind is fresh: pread at 0, lseek 0 and read,
preadv at 0 and Python seek(0) and read of a kept descriptor of cycles,
user_time and times show the value now; a rewound threads.table read in
37-byte chunks is one whole new snapshot.'
. "$(dirname "$0")/test-lib.sh"
require_fuse


cat >"$TRASH/rewind.py" <<'PY'
import os, sys, time

mnt = os.environ["MNT"]
pid, busy = sys.argv[1], sys.argv[2]
# file -> how its value is read from its content
FILES = {
    "cycles": lambda t: int(t),
    "user_time": lambda t: int(t),
    "times": lambda t: int(dict(l.split(" ") for l in t.splitlines())["cycles"]),
    "times:user_time": lambda t: int(dict(l.split(" ") for l in t.splitlines())["user_time"]),
}
def path(f):
    return "%s/proc/%s/%s" % (mnt, pid, f.split(":")[0])

def fresh(f):
    with open(path(f)) as fo:
        return FILES[f](fo.read())

def busy_ns():
    return int(open("/proc/%s/task/%s/schedstat" % (pid, busy)).read().split()[0])

# Each way: open() -> handle; first(handle) and rewind(handle) -> text.
def o_fd(f):
    return os.open(path(f), os.O_RDONLY)
def read_all(fd):
    out = b""
    while True:
        b = os.read(fd, 4096)
        if not b:
            return out.decode()
        out += b
def pread0(fd):
    return os.pread(fd, 4096, 0).decode()
def lseek_read(fd):
    os.lseek(fd, 0, os.SEEK_SET)
    return read_all(fd)
def preadv0(fd):
    b = bytearray(4096)
    n = os.preadv(fd, [b], 0)
    return bytes(b[:n]).decode()
def py_open(f):
    return open(path(f))
def py_rewind(fo):
    fo.seek(0)
    return fo.read()
WAYS = {
    "pread": (o_fd, read_all, pread0),
    "lseek+read": (o_fd, read_all, lseek_read),
    "preadv": (o_fd, read_all, preadv0),
    "python seek(0)+read": (py_open, lambda fo: fo.read(), py_rewind),
}

held = {}
for f in FILES:
    for w, (op, first, _) in WAYS.items():
        h = op(f)
        held[f, w] = [h, FILES[f](first(h))]
bad = 0
for rnd in (1, 2):
    # The busy thread burns until a fresh open of every file shows more
    # than every held first read; up to 20 s (a margin for a loaded
    # machine).
    want = {f: max(v for (g, _), (_, v) in held.items() if g == f) for f in FILES}
    start, end = busy_ns(), time.monotonic() + 20
    while any(fresh(f) <= want[f] for f in FILES) or busy_ns() < start + 50000000:
        if time.monotonic() > end:
            print("waited 20 s for the values to grow: %r" % {f: fresh(f) for f in FILES})
            sys.exit(1)
        time.sleep(0.02)
    for f in FILES:
        for w, (_, _, rewind) in WAYS.items():
            h, first = held[f, w]
            before = fresh(f)
            try:
                text = rewind(h)
                now = FILES[f](text)
            except (OSError, ValueError, KeyError) as e:
                text, now = None, "%r" % e
            after = fresh(f)
            ok = isinstance(now, int) and first < now and before <= now <= after
            bad += not ok
            print("%s round %d, %s %s: first %d, fresh before %d, rewound %s, fresh after %d%s" % (
                "ok" if ok else "FAIL", rnd, f, w, first, before, now, after,
                "" if ok else (" (the first read's value again)" if now == first else "")))
            if isinstance(now, int):
                held[f, w][1] = now
sys.exit(1 if bad else 0)
PY

# The process whose table is read: N threads that wait; a line on stdin
# starts one more, which prints its tid; it ends at the end of stdin.
cat >"$TRASH/threads.py" <<'PY'
import os, sys, threading
stop = threading.Event()
def start():
    got = []
    ready = threading.Event()
    def run():
        got.append(threading.get_native_id())
        ready.set()
        stop.wait()
    threading.Thread(target=run, daemon=True).start()
    ready.wait()
    return got[0]
for _ in range(int(sys.argv[1])):
    start()
print(os.getpid(), flush=True)
for line in sys.stdin:
    print(start(), flush=True)
PY

# The reader of the table: whole, a new thread, a rewind in 37-byte
# chunks; then a rewind whose first chunk comes before another thread
# starts; then two threads' preads at 0 on one descriptor.
cat >"$TRASH/table.py" <<'PY'
import os, re, subprocess, sys, threading

mnt = os.environ["MNT"]
HEADER = os.environ["TABLE_HEADER"]
LINE = re.compile(os.environ["TABLE_LINE"].replace("[:space:]", r"\s"))
p = subprocess.Popen([sys.executable, os.environ["TRASH"] + "/threads.py", "10"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
pid = int(p.stdout.readline())
path = "%s/proc/%d/threads.table" % (mnt, pid)
bad = []

def new_thread():
    p.stdin.write("go\n")
    p.stdin.flush()
    return int(p.stdout.readline())

def whole(what, text):
    """The tids of a whole table, or None (and why, in bad)."""
    lines = text.split("\n")
    why = None
    if not text.endswith("\n"):
        why = "the last line is cut: %r" % lines[-1]
    elif lines[0] != HEADER:
        why = "line 1 is no header: %r" % lines[0]
    elif HEADER in lines[1:]:
        why = "the header twice"
    else:
        tids = []
        for n, l in enumerate(lines[1:-1], 2):
            if not LINE.fullmatch(l):
                why = "line %d is not 7 integers and a name: %r" % (n, l)
                break
            f = l.split(" ")
            if int(f[0]) != pid:
                why = "line %d is not of pid %d: %r" % (n, pid, l)
                break
            tids.append(int(f[1]))
        if not why and len(set(tids)) != len(tids):
            why = "a thread twice: %r" % sorted(tids)
        if not why:
            return tids
    bad.append("%s: %s" % (what, why))
    print("FAIL %s: %s; it read:\n%s" % (what, why, text))
    return None

def chunks(fd, size, first=None):
    out = b""
    while True:
        b = os.read(fd, size)
        if not b:
            return out.decode()
        out += b
        if first:
            first()
            first = None

fd = os.open(path, os.O_RDONLY)
t0 = whole("the first read", chunks(fd, 65536)) or []
tid = new_thread()
print("%d threads first; a new thread %d" % (len(t0), tid))
if tid in t0:
    bad.append("the new thread %d was in the first read" % tid)
os.lseek(fd, 0, os.SEEK_SET)
t1 = whole("the rewind in 37-byte chunks", chunks(fd, 37))
if t1 is not None:
    print("the rewind: %d threads" % len(t1))
    if tid not in t1:
        bad.append("the rewind has no thread %d: the first snapshot again" % tid)
        print("FAIL the rewind has no thread %d (%d threads, as at the first read)" % (tid, len(t1)))
    elif sorted(t1) != sorted(t0 + [tid]):
        bad.append("the rewind has threads %r, not the first read's and %d" % (sorted(t1), tid))

# A rewind: its first 37 bytes, then another thread, then the rest.
later = []
os.lseek(fd, 0, os.SEEK_SET)
t2 = whole("the rewind with a thread started after its first chunk",
           chunks(fd, 37, lambda: later.append(new_thread())))
if t2 is not None:
    print("the rewind begun before thread %d: %d threads" % (later[0], len(t2)))
    if later[0] in t2:
        bad.append("thread %d, started after the offset-0 read, is in its snapshot" % later[0])
    if tid not in t2:
        bad.append("the second rewind has no thread %d" % tid)
os.close(fd)

# Two threads rewinding one descriptor at once, by whole preads at 0.
fd = os.open(path, os.O_RDONLY)
counts = [0, 0]
def hammer(i):
    for _ in range(300):
        t = whole("thread %d's pread at 0" % i, os.pread(fd, 1 << 20, 0).decode())
        if t is None:
            return
        counts[i] += 1
ts = [threading.Thread(target=hammer, args=(i,)) for i in (0, 1)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("two threads' preads at 0 of one descriptor: %d and %d whole tables" % tuple(counts))
os.close(fd)
p.stdin.close()
p.wait()
for b in bad:
    print("FAIL " + b)
sys.exit(1 if bad else 0)
PY

# stop_pid PID: end a helper a test started, and reap it; for
# test_when_finished, so never a failure.
stop_pid() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

test_expect_success 'setup: mounted, a process with a busy thread' '
	write_config "$TRASH/rewind.conf" format.units=windows &&
	mount_timingfs "$TRASH/rewind.conf" &&
	{ "$BIN/helper-busy" -k >"$TRASH/pids" & } &&
	HELPER=$! &&
	kill_at_exit "$HELPER" &&
	wait_file "$TRASH/pids" &&
	read -r PID BUSY SLEEPER <"$TRASH/pids" &&
	echo "process $PID, busy thread $BUSY"
'

test_expect_success PYTHON3 'kept descriptors of cycles, user_time, times: a rewind shows the value now' '
	bounded 60 python3 "$TRASH/rewind.py" "$PID" "$BUSY"
'

test_expect_success PYTHON3 'threads.table rewound, read in 37-byte chunks: one whole new snapshot' '
	bounded 60 python3 "$TRASH/table.py"
'

test_done
