#!/bin/bash
# A name is the task it was (docs/design.md, "Names and identities", "Security":
# "Seeing", "Exited tasks").
#
# In a PID namespace of its own, whose numbers are taken again at will
# (ns_last_pid), a process A of uid X (nobody) is held three ways by a
# reader of the same uid (or by root, under invisible, to whom every
# task is visible): an O_PATH descriptor of proc/A/times (reopened
# through /proc/self/fd/N), a working directory in proc/A (open("cycles"))
# and a directory descriptor of proc/A (openat "creation_time"). A exits
# and a task B takes its number, B of another uid or of the same one.
# Timing-sensitive work is done by one Python program, the namespace's
# init (root), which forks A, the reader and B and times the reader's
# looks: 0, 50, 300, 800 ms and 2 s after A was reaped. Each round runs
# twice: with the reader's looks alone, and with a fresh walk by root
# after each look (+walk), which names B and may reach the very inode
# the reader holds. A, B and the reader are made dumpable again after
# they change uid, as after an exec: procfs shows a task that is not
# as root's, and the reader would not see A at all.
#
# - Retention off ([exited] keep = 0), hidepid invisible and off: every
#   look through what the reader held is an error (ENOENT, the contract;
#   ESRCH and EIO are taken too), never B's values. A fresh path walk
#   by root names B: its creation_time is B's (later than A's, by as
#   many clock ticks as the kernel's starts of the two differ); a fresh
#   walk by the reader names B, or ENOENT under invisible when B is
#   another uid's and the reader is not root. Retention is off here
#   because the contract serves a retained task's final values through
#   its held names (below); ENOENT is for a task gone.
# - Retention on (keep = 60, the default; taskstats): A held the same
#   three ways exits, and no task takes its number: each way back in
#   gives A's final values (exit_time set, creation_time A's, the same
#   values a fresh walk shows). Then the same with B taking A's number
#   (another uid): the held names still give A's final values, never
#   B's, and a fresh walk names B.
TEST_OTHER_USERS=1 # the reader is nobody: a trash it reaches
test_description='A name is the task it was: a reopen, a working
directory and an openat on a held directory of a task whose number
another task took are ENOENT (retention off) or the exited task'"'"'s
final values (retention on), at 0, 50, 300, 800 ms and 2 s; a fresh walk
names the new task.'
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot make PID namespaces"
export MNT TRASH

NOBODY=$(id -u nobody)
# Another user, with no entry in /etc/passwd: a uid is all it takes.
OTHER=54321

# The namespace's init: the orchestra, as root. Arguments: SCENARIO
# (gone: A exits and B takes its number; kept: A exits, retained, and
# nothing takes it; kept-taken: retained, and B takes it), the uid of A,
# of the reader and of B, and the file to write what it saw to (JSON).
# It never asserts: check.py does.
cat >"$TRASH/orch.py" <<'PY'
import ctypes, errno, json, os, sys, time

mnt = os.environ["MNT"]
scenario, out = sys.argv[1], sys.argv[5]
walks = scenario.endswith("+walk")
scenario = scenario.replace("+walk", "")
x, ru, y = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
DELAYS = [0, 50, 300, 800, 2000]
TICK_NS = 1000000000 // os.sysconf("SC_CLK_TCK")
seen = {"scenario": scenario, "walks": walks, "x": x, "reader": ru, "y": y, "tick_ns": TICK_NS}

libc = ctypes.CDLL(None, use_errno=True)
PR_SET_DUMPABLE = 4

def become(uid):
    """uid's, wholly; dumpable again, as after an exec (a change of
    credentials clears it, and procfs then shows the task as root's)."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    if libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl")

def attempt(fn):
    try:
        return fn()
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))

def read_path(path, dir_fd=None):
    fd = os.open(path, os.O_RDONLY, dir_fd=dir_fd)
    try:
        return os.read(fd, 65536).decode()
    finally:
        os.close(fd)

def keyed(text):
    return dict(l.split(" ", 1) for l in text.splitlines())

def start_ticks(pid):
    s = open("/proc/%d/stat" % pid).read()
    return int(s[s.rindex(")") + 2:].split()[19])

def child(uid, body):
    """A child of uid, running body(); it says "k" once it is that uid,
    then body() runs; a line from the parent's pipe ends it."""
    r, w = os.pipe()
    r2, w2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.close(w2)
            become(uid)
            body(w, r2)
        except BaseException as e:
            os.write(w, ("E %r" % e).encode())
        finally:
            os._exit(0)
    os.close(w)
    os.close(r2)
    got = os.read(r, 1)
    if got != b"k":
        sys.exit("child %d (uid %d) did not start: %s" % (pid, uid, (got + os.read(r, 4096)).decode()))
    return pid, r, w2

def wait_line(fd):
    os.read(fd, 1)

def task_body(w, r):
    os.write(w, b"k")
    wait_line(r)

# The reader: holds A three ways, then looks at each command.
def reader_body(a):
    def body(w, r):
        f = os.open("%s/proc/%d/times" % (mnt, a), os.O_PATH)
        d = os.open("%s/proc/%d" % (mnt, a), os.O_RDONLY | os.O_DIRECTORY)
        os.chdir("%s/proc/%d" % (mnt, a))
        os.write(w, b"k")
        cmds = os.fdopen(r, "r")
        res = os.fdopen(w, "w")
        for line in cmds:
            cmd = line.split()
            if cmd[0] == "look":
                t = time.monotonic()
                look = {
                    "reopen": attempt(lambda: read_path("/proc/self/fd/%d" % f)),
                    "cwd": attempt(lambda: read_path("cycles")),
                    "dirfd": attempt(lambda: read_path("creation_time", dir_fd=d)),
                    "at": t,
                }
            elif cmd[0] == "walk":
                look = {"walk": attempt(lambda: read_path("%s/proc/%d/creation_time" % (mnt, a)))}
            else:
                break
            res.write(json.dumps(look) + "\n")
            res.flush()
    return body

def ask(rw, what):
    os.write(rw[1], (what + "\n").encode())
    line = b""
    while not line.endswith(b"\n"):
        got = os.read(rw[0], 65536)
        if not got:
            sys.exit("the reader is gone")
        line += got
    return json.loads(line)

# A, of uid x; the reader holds it.
a, a_r, a_w = child(x, task_body)
a_ticks = start_ticks(a)
reader, rd_r, rd_w = child(ru, reader_body(a))
rd = (rd_r, rd_w)
seen["a"] = a
seen["before"] = ask(rd, "look")
seen["a_root"] = attempt(lambda: read_path("%s/proc/%d/times" % (mnt, a)))
# B is made at least 50 ms after A, which is five ticks of field 22.
time.sleep(0.1)
os.write(a_w, b"x")
os.waitpid(a, 0)
exited = time.monotonic()
b = None
if scenario in ("gone", "kept-taken"):
    if scenario == "kept-taken":
        # The exit record first: A is retained when B comes.
        end = time.monotonic() + 10
        while time.monotonic() < end:
            t = attempt(lambda: read_path("%s/proc/%d/exit_time" % (mnt, a)))
            if t not in ("0\n",) and not t.isupper():
                break
            time.sleep(0.02)
        seen["a_kept_root"] = attempt(lambda: read_path("%s/proc/%d/times" % (mnt, a)))
        exited = time.monotonic()
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write("%d" % (a - 1))
    b, b_r, b_w = child(y, task_body)
    seen["b"] = b
    seen["b_ticks_after_a"] = start_ticks(b) - a_ticks
    seen["b_ready_ms"] = (time.monotonic() - exited) * 1000
    # At each delay, a look; with +walk, then a fresh walk by root,
    # which names B (the kernel may reach the inode the reader holds
    # that way), and a look again.
    looks = []
    for ms in DELAYS:
        time.sleep(max(0, exited + ms / 1000 - time.monotonic()))
        look = ask(rd, "look")
        look["ms"] = ms
        look["at_ms"] = round((look.pop("at") - exited) * 1000, 1)
        if walks:
            look["walk"] = attempt(lambda: read_path("%s/proc/%d/times" % (mnt, a)))
            again = ask(rd, "look")
            for way in ("reopen", "cwd", "dirfd"):
                look[way + "_after_walk"] = again[way]
        looks.append(look)
    seen["looks"] = looks
else:
    # Kept, nothing takes the number: the record comes a moment after
    # the exit (the daemon's listener); up to 10 s for it.
    end = time.monotonic() + 10
    looks = []
    while True:
        look = ask(rd, "look")
        look["at_ms"] = round((look.pop("at") - exited) * 1000, 1)
        looks.append(look)
        r = look["reopen"]
        if (not r.isupper() and keyed(r).get("exit_time", "0") != "0") or time.monotonic() > end:
            break
        time.sleep(0.05)
    seen["looks"] = looks[-3:]
    seen["tries"] = len(looks)
seen["fresh_root"] = attempt(lambda: read_path("%s/proc/%d/times" % (mnt, a)))
seen["fresh_reader"] = ask(rd, "walk")["walk"]
ask_quit = os.write(rd_w, b"quit\n")
os.waitpid(reader, 0)
if b:
    os.write(b_w, b"x")
    os.waitpid(b, 0)
with open(out, "w") as f:
    json.dump(seen, f, indent=1)
PY

# check.py FILE: what orch.py saw, judged; says what and why; 1 when
# something is wrong.
cat >"$TRASH/check.py" <<'PY'
import json, sys

s = json.load(open(sys.argv[1]))
hidepid = sys.argv[2]
bad = []
def keyed(text):
    return dict(l.split(" ", 1) for l in text.strip().splitlines())
def err(v):
    return v.isupper()
def say(what):
    print(what)
def fail(what):
    print("FAIL: " + what)
    bad.append(what)

print("scenario %s%s, hidepid %s: A %d (uid %d), the reader uid %d, B %s (uid %d)" % (
    s["scenario"], " (a walk by root after each look)" if s["walks"] else "", hidepid, s["a"], s["x"], s["reader"], s.get("b"), s["y"]))
before = s["before"]
print("before the exit: reopen %r cwd %r dirfd %r" % (before["reopen"], before["cwd"], before["dirfd"]))
for way in ("reopen", "cwd", "dirfd"):
    if err(before[way]):
        fail("before the exit, %s: %s" % (way, before[way]))
if bad:
    sys.exit(1)
a_ct = keyed(before["reopen"])["creation_time"]
if before["dirfd"].strip() != a_ct:
    fail("before the exit, dirfd creation_time %s is not the reopen's %s" % (before["dirfd"].strip(), a_ct))
if keyed(s["a_root"])["creation_time"] != a_ct:
    fail("root's walk of A's times says creation_time %s, the reader %s" % (keyed(s["a_root"])["creation_time"], a_ct))

fresh = s["fresh_root"]
print("fresh walk by root of proc/%d/times afterwards: %r" % (s["a"], fresh))
print("fresh walk by the reader of proc/%d/creation_time: %r" % (s["a"], s["fresh_reader"]))

def whose(value, b_ct):
    v = value.strip()
    if b_ct is not None and v == b_ct:
        return " (B's creation_time!)"
    if v == a_ct:
        return " (A's creation_time)"
    return ""

if s["scenario"] == "gone" or s["scenario"] == "kept-taken":
    if s["b"] != s["a"]:
        fail("B took %d, not A's number %d: nothing was tested" % (s["b"], s["a"]))
        sys.exit(1)
    print("B ready %.1f ms after A was reaped; B started %d ticks after A" % (s["b_ready_ms"], s["b_ticks_after_a"]))
    b_ct = None
    if err(fresh):
        fail("a fresh walk by root of proc/%d/times: %s, not B's values" % (s["a"], fresh))
    else:
        t = keyed(fresh)
        b_ct = t["creation_time"]
        if t["exit_time"] != "0":
            fail("a fresh walk shows exit_time %s: not B, which runs" % t["exit_time"])
        # Units: unix (ns). B's start, after A's by the kernel's ticks.
        d = int(b_ct) - int(a_ct)
        want = s["b_ticks_after_a"] * s["tick_ns"]
        print("B's creation_time - A's: %d ns; the kernel's starts differ by %d ns" % (d, want))
        if b_ct == a_ct or d <= 0:
            fail("a fresh walk shows creation_time %s, not later than A's %s: not B" % (b_ct, a_ct))
        elif abs(d - want) > 2 * s["tick_ns"]:
            fail("B's creation_time is %d ns after A's, the kernel says %d ns (+-2 ticks)" % (d, want))
    # The reader's own walk: B where it may see it.
    fr = s["fresh_reader"]
    if hidepid == "invisible" and s["reader"] != 0 and s["y"] != s["reader"]:
        if fr != "ENOENT":
            fail("under invisible, the reader's fresh walk to another uid's B: %r, not ENOENT" % fr)
    elif err(fr) or (b_ct is not None and fr.strip() != b_ct):
        fail("the reader's fresh walk: %r, not B's creation_time %s" % (fr, b_ct))
    def ct_of(v):
        return keyed(v).get("creation_time", "") if "\n" in v.strip() else v.strip()
    for look in s["looks"]:
        w = look.get("walk")
        if s["walks"] and (err(w) or b_ct is None or ct_of(w) != b_ct):
            fail("%d ms after A's exit, a fresh walk by root: %r, not B's creation_time %s" % (look["ms"], w, b_ct))
        for after in ("", "_after_walk") if s["walks"] else ("",):
            print("%4d ms (at %.1f ms)%s: %s" % (
                look["ms"], look["at_ms"], after and ", after a walk",
                ", ".join("%s %r%s" % (way, look[way + after],
                                      "" if err(look[way + after]) or way == "cwd" else whose(ct_of(look[way + after]), b_ct))
                          for way in ("reopen", "cwd", "dirfd"))))
            wrong = []
            for way in ("reopen", "cwd", "dirfd"):
                v = look[way + after]
                if s["scenario"] == "gone":
                    if v not in ("ENOENT", "ESRCH", "EIO"):
                        wrong.append(way)
                elif (err(v) or
                      (way == "reopen" and keyed(v) != keyed(s["a_kept_root"])) or
                      (way == "dirfd" and v.strip() != a_ct) or
                      (way == "cwd" and v.strip() != keyed(s["a_kept_root"])["cycles"])):
                    wrong.append(way)
            if wrong:
                fail("%d ms%s: %s gave %s" % (
                    look["ms"], after and ", after a walk", " and ".join(wrong),
                    "data, not ENOENT" if s["scenario"] == "gone" else "other than A's final values"))
    if s["scenario"] == "kept-taken":
        k = s["a_kept_root"]
        print("A retained, by a fresh walk before B came: %r" % k)
        if err(k) or keyed(k)["exit_time"] == "0" or keyed(k)["creation_time"] != a_ct:
            fail("A was not retained with its exit_time before B came: %r" % k)
else:
    print("%d looks until the reopen showed an exit_time; the last ones:" % s["tries"])
    for look in s["looks"]:
        print("  at %.1f ms: reopen %r, cwd %r, dirfd %r" % (look["at_ms"], look["reopen"], look["cwd"], look["dirfd"]))
    last = s["looks"][-1]
    if err(fresh):
        fail("a fresh walk of retained A's times: %s" % fresh)
    for way in ("reopen", "cwd", "dirfd"):
        if err(last[way]):
            fail("%s of retained A: %s, not its final values" % (way, last[way]))
    if not bad:
        t = keyed(last["reopen"])
        if t["exit_time"] == "0":
            fail("the reopen shows no exit_time after 10 s")
        if t["creation_time"] != a_ct:
            fail("the reopen shows creation_time %s, not A's %s" % (t["creation_time"], a_ct))
        if t != keyed(fresh):
            fail("the reopen's final values differ from a fresh walk's: %r" % fresh)
        if last["dirfd"].strip() != a_ct:
            fail("dirfd creation_time %r, not A's %s" % (last["dirfd"], a_ct))
        if last["cwd"].strip() != t["cycles"]:
            fail("cwd cycles %r, not A's final %s" % (last["cwd"], t["cycles"]))
sys.exit(1 if bad else 0)
PY

# round NAME HIDEPID SCENARIO READER_UID B_UID: orch.py in a PID
# namespace of its own (A nobody's, the reader READER_UID's, B B_UID's),
# then check.py. The namespace's init ends with unshare (--kill-child).
round() {
	bounded 30 unshare -p -f --kill-child --mount-proc \
		/usr/bin/python3 "$TRASH/orch.py" "$3" "$NOBODY" "$4" "$5" \
		"$TRASH/$1.json" &&
	/usr/bin/python3 "$TRASH/check.py" "$TRASH/$1.json" "$2"
}

# both NAME HIDEPID SCENARIO READER_UID B_UID: round, with the reader's
# looks alone, then with a fresh walk by root after each (+walk); both
# run, whichever fails.
both() {
	local rc=0
	round "$1" "$2" "$3" "$4" "$5" || rc=1
	round "$1+walk" "$2" "$3+walk" "$4" "$5" || rc=1
	return "$rc"
}

test_expect_success 'setup: hidepid=invisible, retention off' '
	write_config "$TRASH/invisible.conf" access.hidepid=invisible \
		exited.keep=0 format.units=unix &&
	mount_timingfs "$TRASH/invisible.conf" -o allow_other
'

test_expect_success UNSHARE,PYTHON3 'invisible: A'"'"'s number taken by another uid: held names ENOENT, never its data' '
	both inv-other invisible gone $NOBODY $OTHER
'

test_expect_success UNSHARE,PYTHON3 'invisible: A'"'"'s number taken by the same uid: held names ENOENT, never its data' '
	both inv-same invisible gone $NOBODY $NOBODY
'

# Root sees every task under invisible too: what it held of A must not
# become B's because B is visible to it: access lets root read B, so
# only the name's identity (docs/design.md, "Names and identities") keeps A's
# names from B's data.
test_expect_success UNSHARE,PYTHON3 'invisible, a root reader: A'"'"'s number taken by another uid: ENOENT, never its data' '
	both inv-root invisible gone 0 $OTHER
'

test_expect_success 'setup: hidepid=off, retention off' '
	unmount_timingfs &&
	write_config "$TRASH/off.conf" access.hidepid=off exited.keep=0 \
		format.units=unix &&
	mount_timingfs "$TRASH/off.conf" -o allow_other
'

test_expect_success UNSHARE,PYTHON3 'off: A'"'"'s number taken by another uid: held names ENOENT, never its data' '
	both off-other off gone $NOBODY $OTHER
'

test_expect_success UNSHARE,PYTHON3 'off: A'"'"'s number taken by the same uid: held names ENOENT, never its data' '
	both off-same off gone $NOBODY $NOBODY
'

# keep = 60 is the default: not written. Exit records need root or
# CAP_NET_ADMIN (the daemon is root here) and taskstats in the kernel.
test_expect_success 'setup: hidepid=invisible, exited tasks retained (keep = 60)' '
	unmount_timingfs &&
	write_config "$TRASH/kept.conf" access.hidepid=invisible \
		format.units=unix &&
	mount_timingfs "$TRASH/kept.conf" -o allow_other &&
	grep -x "exit_keep 60" "$MNT/info" &&
	if grep -x "exit_source taskstats" "$MNT/info"; then
		test_set_prereq TASKSTATS
	fi
'

test_expect_success UNSHARE,PYTHON3,TASKSTATS 'retained, number free: the held names give A'"'"'s final values' '
	round kept invisible kept $NOBODY $NOBODY
'

test_expect_success UNSHARE,PYTHON3,TASKSTATS 'retained, number taken by another uid: still A'"'"'s final values, a walk names B' '
	both kept-taken invisible kept-taken $NOBODY $OTHER
'

# A record's index is the next record's once the kernel forgot every
# name of it; what the daemon knew of the old record's nodes must go
# with it. One thread (this Python program) looks up proc/A/threads.table,
# A exits and leaves a ring of one exited task at the next exit (its
# names dropped, so forgotten: its record freed), and B, forked at
# once, takes the free index: B's table, read within the 20 ms in which
# a thread's second lookup of the same node reuses its first's
# rendering, has only B's lines, never A's.
cat >"$TRASH/reuse.py" <<'PY'
import os, signal, sys, time

mnt = os.environ["MNT"]

def spawn():
    pid = os.fork()
    if pid == 0:
        signal.pause()
        os._exit(0)
    return pid

def reap(pid):
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)

wrong = 0
for i in range(int(sys.argv[1])):
    a, d = spawn(), spawn()
    time.sleep(0.002)
    os.stat(mnt + "/proc/%d/threads.table" % a)
    reap(a)
    reap(d)  # pushes A out of the ring of one: its names dropped
    time.sleep(0.003)
    b = spawn()
    with open(mnt + "/proc/%d/threads.table" % b) as f:
        lines = f.read().splitlines()
    reap(b)
    if lines[1:] != [l for l in lines[1:] if l.split()[0] == str(b)] or \
       len(lines) != 2:
        wrong += 1
        if wrong <= 3:
            print("proc/%d/threads.table, after a lookup of proc/%d/threads.table:" % (b, a), lines)
print("rounds", i + 1, "wrong", wrong)
sys.exit(1 if wrong else 0)
PY

test_expect_success 'setup: a ring of one exited task (keep = 5, max_tasks = 1)' '
	unmount_timingfs &&
	write_config "$TRASH/ring.conf" exited.keep=5 exited.max_tasks=1 &&
	mount_timingfs "$TRASH/ring.conf" &&
	grep -x "exit_source taskstats" "$MNT/info"
'

test_expect_success PYTHON3 'a record freed and taken by the next process: its table is its own, never the last one'"'"'s' '
	python3 "$TRASH/reuse.py" 200
'

test_done
