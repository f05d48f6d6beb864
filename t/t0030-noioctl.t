#!/bin/bash
# helper-noioctl, the kernel before Linux 6.10 on this one: under its
# seccomp filter the four nsfs ioctls that translate process numbers
# (NS_GET_PID_FROM_PIDNS, NS_GET_TGID_FROM_PIDNS, NS_GET_PID_IN_PIDNS,
# NS_GET_TGID_IN_PIDNS) fail with ENOTTY, as an older nsfs answers, and
# nothing else changes. The same calls, made by the same Python script
# without the filter, are the ground truth: on Linux 6.10 and later each
# of them gives a process its own number in its own namespace.
#
# The ioctls are made by python3 (fcntl.ioctl), run by helper-noioctl:
# the filter is on the process that makes them. The request is made
# twice, the second time with bits above the 32 the kernel reads set,
# which the filter must see through as the kernel does.
test_description='helper-noioctl: the four nsfs ioctls that translate
process numbers fail with ENOTTY under its seccomp filter, in the process
it execs and in that process children; every other ioctl works; the
daemon runs under it with TEST_DAEMON_NOIOCTL, as the same process.'
. "$(dirname "$0")/test-lib.sh"

NOIOCTL=$BIN/helper-noioctl

# NOIOCTL: the filter can be installed here (seccomp, a known
# architecture).
test_lazy_prereq NOIOCTL '"$BIN/helper-noioctl" true'

# NS_IOCTLS: the kernel is Linux 6.10 or later, which has the ioctls.
test_lazy_prereq NS_IOCTLS '
	v=$(uname -r) &&
	major=${v%%.*} && rest=${v#*.} && minor=${rest%%[!0-9]*} &&
	test "$major" -gt 6 || { test "$major" = 6 && test "$minor" -ge 10; }
'

# nscheck.py [NSFILE PID NR]: each of the four on NSFILE, a namespace
# in which the task the caller numbers PID has the number NR (by
# default the caller's own namespace and number): the FROM ioctls asked
# for NR, the IN ioctls for PID. "NAME low|high ok" when it answers the
# number expected, else the errno's name (or the number it answered).
NSCHECK='import errno, fcntl, os, sys
nsfile, pid, nr = "/proc/self/ns/pid", os.getpid(), os.getpid()
if len(sys.argv) == 4:
    nsfile, pid, nr = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
fd = os.open(nsfile, os.O_RDONLY)
for name, code, arg, want in (("PID_FROM_PIDNS", 6, nr, pid),
                              ("TGID_FROM_PIDNS", 7, nr, pid),
                              ("PID_IN_PIDNS", 8, pid, nr),
                              ("TGID_IN_PIDNS", 9, pid, nr)):
    req = 2 << 30 | 4 << 16 | 0xB7 << 8 | code  # _IOR(0xb7, code, int)
    for high, bits in (("low", 0), ("high", 1 << 32)):
        try:
            r = fcntl.ioctl(fd, req | bits, arg)
            out = "ok" if r == want else str(r)
        except OSError as e:
            out = errno.errorcode[e.errno]
        print(name, high, out)'

# otherioctl.py [NSFILE]: ioctls the filter must leave alone: FIONREAD
# on a pipe holding 5 bytes, and nsfs's older NS_GET_NSTYPE and
# NS_GET_PARENT on NSFILE (by default the caller's own namespace, whose
# parent is above what it may see: EPERM; that of a namespace below it:
# a descriptor).
OTHERIOCTL='import array, errno, fcntl, os, sys, termios
r, w = os.pipe()
os.write(w, b"12345")
buf = array.array("i", [0])
fcntl.ioctl(r, termios.FIONREAD, buf, True)
print("FIONREAD", buf[0])
fd = os.open(sys.argv[1] if len(sys.argv) > 1 else "/proc/self/ns/pid",
             os.O_RDONLY)
print("NS_GET_NSTYPE", hex(fcntl.ioctl(fd, 0xB7 << 8 | 3)))
try:
    p = fcntl.ioctl(fd, 0xB7 << 8 | 2)
    print("NS_GET_PARENT", "fd" if p >= 0 else p)
except OSError as e:
    print("NS_GET_PARENT", errno.errorcode[e.errno])'

test_expect_success 'setup: the scripts, a configuration' '
	printf "%s\n" "$NSCHECK" >nscheck.py &&
	printf "%s\n" "$OTHERIOCTL" >otherioctl.py &&
	write_config "$TRASH/empty.conf" exited.keep=0
'

# expect_all VALUE: what nscheck.py prints when all four answer VALUE.
expect_all() {
	local n
	for n in PID_FROM_PIDNS TGID_FROM_PIDNS PID_IN_PIDNS TGID_IN_PIDNS; do
		printf "%s low %s\n%s high %s\n" "$n" "$1" "$n" "$1"
	done
}

test_expect_success 'no command: usage, exit 2' '
	test_expect_code 2 "$NOIOCTL" 2>err &&
	grep "^usage: helper-noioctl COMMAND" err &&
	test_expect_code 2 "$NOIOCTL" --help 2>err &&
	grep "^usage:" err
'

test_expect_success NOIOCTL 'a command that is not there: exit 127, named' '
	test_expect_code 127 "$NOIOCTL" "$TRASH/missing" 2>err &&
	grep -F "$TRASH/missing" err
'

test_expect_success NOIOCTL 'the command is exec-ed: the same pid, its exit status' '
	{ "$NOIOCTL" sh -c "echo \$\$ >pid.out; exit 7" & } &&
	p=$! &&
	{ wait "$p"; rc=$?; } &&
	echo "pid $p, said $(cat pid.out), exit $rc" &&
	test "$rc" = 7 &&
	test "$(cat pid.out)" = "$p"
'

test_expect_success NOIOCTL 'the filter is on, with no new privileges, and inherited' '
	"$NOIOCTL" sh -c "cat /proc/\$\$/status; sh -c \"cat /proc/\\\$\\\$/status\"" >status &&
	grep -E "^(NoNewPrivs|Seccomp):" status &&
	test "$(grep -c "^NoNewPrivs:[[:space:]]*1$" status)" = 2 &&
	test "$(grep -c "^Seccomp:[[:space:]]*2$" status)" = 2 &&
	grep "^Seccomp:[[:space:]]*0$" /proc/$$/status
'

test_expect_success PYTHON3,NS_IOCTLS 'without the filter: each of the four answers the process own number' '
	python3 nscheck.py >actual &&
	cat actual &&
	expect_all ok >expect &&
	test_cmp expect actual
'

test_expect_success NOIOCTL,PYTHON3 'under the filter: each of the four fails with ENOTTY' '
	"$NOIOCTL" python3 nscheck.py >actual &&
	cat actual &&
	expect_all ENOTTY >expect &&
	test_cmp expect actual
'

test_expect_success NOIOCTL,PYTHON3 'under the filter, in a child of the command: ENOTTY' '
	"$NOIOCTL" sh -c "python3 nscheck.py; echo status \$?" >actual &&
	cat actual &&
	{ expect_all ENOTTY && echo "status 0"; } >expect &&
	test_cmp expect actual
'

test_expect_success NOIOCTL,PYTHON3 'other ioctls: the same answers with and without the filter' '
	python3 otherioctl.py >expect &&
	"$NOIOCTL" python3 otherioctl.py >actual &&
	cat actual &&
	test_cmp expect actual &&
	grep -x "FIONREAD 5" actual &&
	grep -x "NS_GET_NSTYPE 0x20000000" actual
'

# A namespace below this one, as the daemon sees its readers: its init,
# a sleeper, is 1 there and $NS_SLEEPER here.
test_expect_success ROOT,UNSHARE 'setup: a PID namespace, its init a sleeper' '
	{ unshare -p -f sleep 1000 >/dev/null 2>&1 </dev/null & } &&
	NS_UNSHARE=$! &&
	kill_at_exit "$NS_UNSHARE" &&
	NS_SLEEPER=$(child_of "$NS_UNSHARE") &&
	echo "unshare $NS_UNSHARE, its child $NS_SLEEPER" &&
	grep "^NSpid:[[:space:]]*$NS_SLEEPER[[:space:]]*1$" "/proc/$NS_SLEEPER/status" &&
	test "$(readlink "/proc/$NS_SLEEPER/ns/pid")" != "$(readlink /proc/self/ns/pid)"
'

test_expect_success PYTHON3,NS_IOCTLS,ROOT,UNSHARE 'a namespace below, without the filter: the four translate' '
	python3 nscheck.py "/proc/$NS_SLEEPER/ns/pid" "$NS_SLEEPER" 1 >actual &&
	cat actual &&
	expect_all ok >expect &&
	test_cmp expect actual
'

test_expect_success NOIOCTL,PYTHON3,ROOT,UNSHARE 'a namespace below, under the filter: ENOTTY; NS_GET_PARENT works' '
	"$NOIOCTL" python3 nscheck.py "/proc/$NS_SLEEPER/ns/pid" "$NS_SLEEPER" 1 >actual &&
	cat actual &&
	expect_all ENOTTY >expect &&
	test_cmp expect actual &&
	python3 otherioctl.py "/proc/$NS_SLEEPER/ns/pid" >expect &&
	"$NOIOCTL" python3 otherioctl.py "/proc/$NS_SLEEPER/ns/pid" >actual &&
	cat actual &&
	test_cmp expect actual &&
	grep -x "NS_GET_PARENT fd" actual
'

# The wrapper of test-lib: the daemon, the process whose pid is
# $TFS_PID, is the one under the filter, and it serves. The assignment
# before start_timingfs holds for that call only.
test_expect_success NOIOCTL,FUSE,ROOT 'TEST_DAEMON_NOIOCTL: the daemon runs under the filter, as $TFS_PID' '
	TEST_DAEMON_NOIOCTL=1 start_timingfs -c "$TRASH/empty.conf" &&
	test "$(readlink "/proc/$TFS_PID/exe")" = "$TIMINGFS" &&
	grep "^Seccomp:[[:space:]]*2$" "/proc/$TFS_PID/status" &&
	grep "^NoNewPrivs:[[:space:]]*1$" "/proc/$TFS_PID/status" &&
	grep -x "pidns caller" "$MNT/info" &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_expect_success FUSE,ROOT 'without TEST_DAEMON_NOIOCTL: no filter on the daemon' '
	TEST_DAEMON_NOIOCTL= start_timingfs -c "$TRASH/empty.conf" &&
	test "$(readlink "/proc/$TFS_PID/exe")" = "$TIMINGFS" &&
	grep "^Seccomp:[[:space:]]*0$" "/proc/$TFS_PID/status" &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_done
