#!/bin/bash
# Rewinds through restarts (docs/design.md, "Rewinds": a
# descriptor opened before a restart rewinds as before; "Restarts that
# nobody sees"): monitoring code keeps
# descriptors and reads them again from the start, and a restart of the
# server must not show it a torn or an older value.
#
# (a) 100 kept descriptors of proc/PID/cycles and 100 of proc/PID/times
# of a process that burns CPU time, each rewound again and again by
# pread(2) of 8 bytes at offset 0 and then the rest at offset 8 (so
# that a restart can come between the two), while the server is killed
# (SIGKILL) 10 times, each once its successor serves. Every copy is
# whole (a number and a newline; the five keys of times, each a number),
# no value of a descriptor is smaller than the one it read before, and
# no read fails.
#
# (b) A rewind after the task is gone: a descriptor of a process's
# cycles, read once; the process exits. While the daemon keeps it
# (exited keep = 2 s), every rewind gives its final value; once the
# keep ran out, every rewind of six is ENOENT, never the old value
# again.
#
# (c) A rewind checks access as a reopen does: under hidepid=invisible,
# a reader keeps a descriptor of a process's cycles it may see, then
# takes another uid (setresuid): its rewinds are errors, as a reopen
# is, never the value.
test_description='Rewinds through restarts: 100 rewound descriptors of
cycles and 100 of times through 10 server kills, none torn or backwards;
a rewind after the keep ran out is ENOENT every time; a rewind checks
access again.'
TEST_TIMEOUT=${TEST_TIMEOUT:-180}
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: the test takes other uids"
command -v python3 >/dev/null || skip_all "no python3 (scripts/install-deps installs it)"

. "$TEST_DIRECTORY/lib-restart.sh"

KILLS=10
DIR=$TRASH/rewinds
MNT_INV=$TRASH/mnt-invisible
INV_PID=
trap 'cleanup_restart INV "$MNT_INV"' EXIT

# The rewinder: COUNT descriptors of each of FILES of PID, rewound in
# turn until DIR/stop is there; at the end "reads R malformed M
# backwards B failed F", and the first few faults, on stdout.
cat >"$TRASH/rewinder.py" <<'PY'
import errno, os, re, sys

mnt, pid, count, d = os.environ["MNT"], sys.argv[1], int(sys.argv[2]), sys.argv[3]
VALUE = re.compile(rb"(0|[1-9][0-9]*)\n")
KEYS = [b"cycles", b"kernel_time", b"user_time", b"creation_time", b"exit_time"]
GROW = {b"cycles", b"kernel_time", b"user_time"}

def parse(name, data):
    if name == "cycles":
        return {b"cycles": int(data)} if VALUE.fullmatch(data) else None
    lines = data.split(b"\n")
    if lines[-1] != b"" or len(lines) != 6:
        return None
    out = {}
    for k, l in zip(KEYS, lines):
        key, _, v = l.partition(b" ")
        if key != k or not VALUE.fullmatch(v + b"\n"):
            return None
        out[k] = int(v)
    return out

fds = [(name, os.open("%s/proc/%s/%s" % (mnt, pid, name), os.O_RDONLY))
       for name in ("cycles", "times") for _ in range(count)]
last = [parse(name, os.read(fd, 4096)) for name, fd in fds]
reads = malformed = backwards = failed = 0
faults = []
while not os.path.exists(d + "/stop"):
    for i, (name, fd) in enumerate(fds):
        try:
            data = os.pread(fd, 8, 0)
            data += os.pread(fd, 4096, 8)
        except OSError as e:
            failed += 1
            faults.append("%s: %s" % (name, errno.errorcode.get(e.errno)))
            continue
        reads += 1
        v = parse(name, data)
        if v is None:
            malformed += 1
            faults.append("%s malformed: %r" % (name, data))
            continue
        old = last[i]
        if any(v[k] < old[k] for k in v if k in GROW) or \
                v.get(b"creation_time") != old.get(b"creation_time"):
            backwards += 1
            faults.append("%s went back: %r after %r" % (name, v, old))
        last[i] = v
print("reads %d malformed %d backwards %d failed %d" % (reads, malformed, backwards, failed))
for f in faults[:5]:
    print(f)
PY

test_expect_success 'setup: mount, a process that burns CPU time' '
	mkdir -p "$DIR" &&
	write_config "$TRASH/keep.conf" exited.keep=2 &&
	mount_timingfs "$TRASH/keep.conf" -o allow_other &&
	{ "$BIN/helper-busy" -k >"$TRASH/busy.out" & } &&
	kill_at_exit $! &&
	wait_file "$TRASH/busy.out" &&
	read -r BUSY _ <"$TRASH/busy.out" &&
	server_started "$MNT" $TFS_PID 1
'

test_expect_success "(a) 200 rewound descriptors through $KILLS server kills: none torn, none backwards" '
	{ python3 "$TRASH/rewinder.py" $BUSY 100 "$DIR" >"$DIR/out" 2>&1 & } &&
	rpid=$! && kill_at_exit $rpid &&
	sleep 0.5 &&
	for k in $(seq 1 $KILLS); do
		sleep "$(printf 0.%03d $((100 + RANDOM % 401)))" &&
		wait_successor "$MNT" "$TFS_PID" "$k" &&
		kill -KILL "$spid" || return 1
	done &&
	wait_successor "$MNT" "$TFS_PID" $((KILLS + 1)) &&
	sleep 0.5 &&
	touch "$DIR/stop" &&
	wait $rpid &&
	cat "$DIR/out" &&
	read -r _ reads _ malformed _ backwards _ failed <"$DIR/out" &&
	test "$reads" -gt 1000 &&
	test "$malformed" = 0 && test "$backwards" = 0 && test "$failed" = 0
'

# A rewound descriptor of a process that ends: its rewinds, while kept
# and after.
cat >"$TRASH/after.py" <<'PY'
import errno, os, subprocess, sys, time
mnt = os.environ["MNT"]
p = subprocess.Popen(["sleep", "1000"])
fd = os.open("%s/proc/%d/cycles" % (mnt, p.pid), os.O_RDONLY)
first = os.read(fd, 4096)
p.kill(); p.wait()
def rewinds(n):
    out = []
    for _ in range(n):
        try:
            out.append(os.pread(fd, 4096, 0).decode().strip())
        except OSError as e:
            out.append(errno.errorcode[e.errno])
        time.sleep(0.05)
    return out
kept = rewinds(4)
time.sleep(4)  # the keep (2 s) runs out
gone = rewinds(6)
print("kept " + " ".join(kept))
print("gone " + " ".join(gone))
PY

test_expect_success '(b) a rewind while kept: the final value; after: ENOENT every time' '
	python3 "$TRASH/after.py" >"$TRASH/after.out" &&
	cat "$TRASH/after.out" &&
	read -r _ k1 k2 k3 k4 <<<"$(grep ^kept "$TRASH/after.out")" &&
	case $k1 in *[!0-9]*|"") false ;; esac &&
	test "$k1" = "$k2" && test "$k1" = "$k3" && test "$k1" = "$k4" &&
	test "$(grep ^gone "$TRASH/after.out")" = \
		"gone ENOENT ENOENT ENOENT ENOENT ENOENT ENOENT"
'

cat >"$TRASH/access.py" <<'PY'
import errno, os, sys
mnt, target = os.environ["MNT"], sys.argv[1]
# The mount as root: the checkout may be where uid 1000 cannot go.
m = os.open(mnt, os.O_PATH)
os.setresgid(1000, 1000, 1000)
os.setgroups([])
os.setresuid(1000, 1000, 0)  # may see target (uid 1000); can come back
fd = os.open("proc/%s/cycles" % target, os.O_RDONLY, dir_fd=m)
first = os.read(fd, 4096).decode().strip()
os.setresuid(0, 0, 0)  # back, to become uid 1001 for good
os.setresgid(1001, 1001, 1001)
os.setresuid(1001, 1001, 1001)
def attempt(fn):
    try:
        return fn().decode().strip()
    except OSError as e:
        return errno.errorcode[e.errno]
print("first", first)
print("rewind", attempt(lambda: os.pread(fd, 4096, 0)))
print("rewind", attempt(lambda: os.pread(fd, 4096, 0)))
print("reopen", attempt(lambda: open("/proc/self/fd/%d" % fd, "rb").read()))
PY

test_expect_success '(c) under invisible, a rewind by a reader who lost access: an error' '
	write_config "$TRASH/invisible.conf" access.hidepid=invisible &&
	mkdir -p "$MNT_INV" &&
	start_timingfs_on INV "$MNT_INV" -o allow_other,config="$TRASH/invisible.conf" &&
	{ setpriv --reuid 1000 --regid 1000 --clear-groups sleep 1000 & } &&
	target=$! && kill_at_exit $target &&
	wait_owner $target 1000 &&
	MNT=$MNT_INV python3 "$TRASH/access.py" $target >"$TRASH/access.out" &&
	cat "$TRASH/access.out" &&
	grep -E "^first [0-9]+$" "$TRASH/access.out" &&
	test "$(grep -c -E "^(rewind|reopen) E[A-Z]+$" "$TRASH/access.out")" = 3
'

test_done
