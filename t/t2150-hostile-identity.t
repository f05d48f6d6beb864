#!/bin/bash
# Hostile tenants, identity (docs/design.md, "Security": "Seeing"): a reopened file
# is the task it was, and a view is the reader's own for as long as
# anything holds it.
#
# (a) In a PID namespace of its own (numbers taken again at will by
# ns_last_pid), a reader holds an O_PATH descriptor of proc/A, one of
# proc/A/creation_time and a working directory in proc/A; A ends; a new
# process of the same owner takes A's number. Every way back in (a
# reopen through /proc/self/fd, a listing of the held directory, a
# file opened from the working directory) is ENOENT, or A's own final
# values while the daemon keeps A since it exited, never the new
# task's values.
#
# (c) Readers of 1,100 namespaces, one after another, each holding its
# proc/1 open until the next one has looked proc/ up, then gone: the
# kernel keeps the names of each (its proc/ was replaced while they
# were open), which would hold every slot; the daemon has them dropped
# once slots run short, and every reader gets its view, never EAGAIN.
#
# (b) A reader in namespace A holds a working directory in proc/ and an
# O_PATH descriptor of proc/1 of its view, and makes no request for
# more than VIEW_IDLE_S (3 s), while readers of VIEW_SLOTS (1024) other
# namespaces come and go, and one more stays: the held handles still
# show A's processes (its proc/1's creation_time), never another's.
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
test_description='Hostile tenants: a reopened file is the task it was;
a view held by a descriptor or a working directory is never reused.'
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot make PID namespaces"
export MNT TRASH

test_expect_success 'setup: mount' '
	write_config "$TRASH/off.conf" access.hidepid=off &&
	mount_timingfs "$TRASH/off.conf" -o allow_other
'

# attempt WHAT FN: "WHAT:result", or "WHAT:ERRNO" when FN fails.
cat >"$TRASH/attempt.py" <<'PY'
import errno
def attempt(what, fn):
    try:
        return "%s:%s" % (what, fn())
    except OSError as e:
        return "%s:%s" % (what, errno.errorcode[e.errno])
PY

cat >"$TRASH/held.py" <<'PY'
import os, sys
from attempt import attempt
mnt = os.environ["MNT"]
pid = sys.argv[1]
f = os.open("%s/proc/%s/creation_time" % (mnt, pid), os.O_PATH)
d = os.open("%s/proc/%s" % (mnt, pid), os.O_PATH)
os.chdir("%s/proc/%s" % (mnt, pid))
def look():
    out = [attempt("reopen", lambda: open("/proc/self/fd/%d" % f).read().split()[-1]),
           attempt("list", lambda: "creation_time" in os.listdir("/proc/self/fd/%d" % d)),
           attempt("cwd", lambda: open("creation_time").read().strip())]
    return " ".join(out)
print("before " + look(), flush=True)
sys.stdin.readline()
print("after " + look(), flush=True)
PY

test_expect_success UNSHARE,PYTHON3 'a number another task of the same owner took: ENOENT, never its data' '
	mkfifo "$TRASH/go" &&
	bounded 60 unshare -p -f --mount-proc bash -c "
		{ sleep 1000 & } ; a=\$!
		{ /usr/bin/python3 \"\$TRASH/held.py\" \$a <\"\$TRASH/go\" >\"\$TRASH/held.out\" & } ; r=\$!
		exec 9>\"\$TRASH/go\"
		wait_file \"\$TRASH/held.out\" 1 || exit 1
		kill \$a; wait \$a
		echo \$((a - 1)) >/proc/sys/kernel/ns_last_pid
		{ sleep 1000 & } ; b=\$!
		wait_for 10 test -e \"\$MNT/proc/\$b/creation_time\" || exit 1
		cat \"\$MNT/proc/\$b/creation_time\" >\"\$TRASH/new.ct\"
		echo \"A \$a B \$b\" >\"\$TRASH/held.pids\"
		echo go >&9
		wait \$r
		kill \$b
	" &&
	cat held.pids held.out new.ct &&
	read -r _ a _ b <held.pids &&
	test "$a" = "$b" &&
	grep "^before reopen:[0-9]* list:True cwd:[0-9]" held.out &&
	old=$(sed -n "s/^before .*cwd://p" held.out) &&
	! grep "^after.*$(cat new.ct)" held.out &&
	grep -E "^after reopen:(ENOENT|EIO|$old) list:(ENOENT|EIO|True) cwd:(ENOENT|EIO|$old)$" held.out
'

# fill N [held]: readers of N namespaces of their own, one after
# another, each looking proc/1 up in its view, then gone; with "held",
# each holds its proc/1 open until the next one has looked it up. They
# come at most 200 a second: a slot is given again once its view has
# been unused for VIEW_IDLE_S (3 s, counted in whole seconds, view.h),
# so the 1,022 slots serve at most 1,022 new views in up to 4 s, and a
# faster flood is refused EAGAIN by design; at 200 a second the first
# slots are free again long before the last ones are taken, on a
# machine that makes namespaces faster than that (this one makes 370 a
# second) as on a slow one.
cat >"$TRASH/fill.py" <<'PY'
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWPID = 0x20000000
mnt = os.environ["MNT"]
held = sys.argv[2:] == ["held"]
prev = None
def reap(c, what):
    _, st = os.waitpid(c, 0)
    if os.waitstatus_to_exitcode(st) != 0:
        sys.exit("%s: status %d" % (what, os.waitstatus_to_exitcode(st)))
start = time.monotonic()
for i in range(int(sys.argv[1])):
    time.sleep(max(0, start + i / 200 - time.monotonic()))
    r, w = os.pipe()
    r2, w2 = os.pipe()
    c = os.fork()
    if c == 0:
        os.close(r)
        os.close(w2)
        if libc.unshare(CLONE_NEWPID) != 0:
            os._exit(2)
        g = os.fork()
        if g == 0:
            try:
                fd = os.open(mnt + "/proc/1", os.O_PATH)
            except OSError as e:
                os.write(w, ("%d" % e.errno).encode())
                os._exit(3)
            os.write(w, b"k")
            if held:
                os.read(r2, 1)
            os._exit(0)
        _, st = os.waitpid(g, 0)
        os._exit(os.waitstatus_to_exitcode(st))
    os.close(w)
    os.close(r2)
    got = os.read(r, 8)
    os.close(r)
    if got != b"k":
        sys.exit("namespace %d: errno %s" % (i, got.decode() or "?"))
    if not held:
        os.close(w2)
        reap(c, "namespace %d" % i)
        continue
    if prev:
        os.write(prev[1], b"x")
        os.close(prev[1])
        reap(prev[0], "namespace %d" % (i - 1))
    prev = (c, w2)
if prev:
    os.write(prev[1], b"x")
    os.close(prev[1])
    reap(prev[0], "the last namespace")
PY

cat >"$TRASH/slot.py" <<'PY'
import os, sys
from attempt import attempt
mnt = os.environ["MNT"]
d = os.open(mnt + "/proc/1", os.O_PATH)
os.chdir(mnt + "/proc")
def look():
    return " ".join([
        attempt("cwd", lambda: open("1/creation_time").read().strip()),
        attempt("fd", lambda: open(os.open("creation_time", os.O_RDONLY, dir_fd=d)).read().strip())])
print("before " + look(), flush=True)
sys.stdin.readline()
print("after " + look(), flush=True)
PY

test_expect_success UNSHARE,PYTHON3 'a view held by a working directory and a descriptor: never another namespace'"'"'s' '
	mkfifo "$TRASH/go2" &&
	{ unshare -p -f --mount-proc /usr/bin/python3 "$TRASH/slot.py" \
		<"$TRASH/go2" >"$TRASH/slot.out" & } &&
	exec 8>"$TRASH/go2" &&
	wait_file "$TRASH/slot.out" 1 &&
	bounded 300 /usr/bin/python3 "$TRASH/fill.py" 1030 &&
	sleep 5 &&
	{ unshare -p -f --mount-proc bash -c "
		cat \"\$MNT/proc/1/creation_time\" >\"\$TRASH/other.ct\"; exec sleep 1000" & } &&
	other=$! &&
	test_when_finished "kill_tree $other KILL || :" &&
	wait_file "$TRASH/other.ct" &&
	echo go >&8 && exec 8>&- &&
	wait_file "$TRASH/slot.out" 2 &&
	cat slot.out other.ct &&
	grep "^before cwd:[0-9]* fd:[0-9]" slot.out &&
	before=$(sed -n "s/^before cwd:\([0-9]*\) .*/\1/p" slot.out) &&
	! grep "^after.*$(cat other.ct)" slot.out &&
	grep -x "after cwd:$before fd:$before" slot.out
'


test_expect_success UNSHARE,PYTHON3 'names the kernel keeps of 1,100 views gone: every new reader gets its view' '
	bounded 400 /usr/bin/python3 "$TRASH/fill.py" 1100 held &&
	unshare -p -f --mount-proc cat "$MNT/proc/1/creation_time"
'

test_done
