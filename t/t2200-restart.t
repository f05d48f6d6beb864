#!/bin/bash
# Restarts that nobody sees: the server killed (SIGKILL) again and again
# under readers, each time replaced by its supervisor, and no reader
# sees an error, a torn or truncated content, or a pause over 3 s.
#
# The readers (t/lib-restart.sh): value files and big tables, on the
# host's mount, in four containers attached to the daemon and in a runc
# container started with the OCI hook, by cat, dd, busybox, the shell's
# read, read(2), sendfile and splice.
# Meanwhile the server is killed 20 times, 0.05-0.5 s apart (random),
# each kill once the last one's successor serves (server_starts moved),
# so that each kill hits a live server. Then: no reader logged an
# error, every reader read a good copy after the last kill, each
# reader's next answer after each kill came within 3 s (from the kill,
# or from the start of its next read if it was pausing between two; a
# tool's copy of a big table within 30 s, its system calls unseen),
# some kills landed in the middle of a table's read, server_starts is
# 21, the supervisor reaped every server it lost; a SIGTERM to the
# supervisor unmounts both mounts and leaves no process of the daemon.
# All of it twice: with the kernel's FUSE_NOTIFY_RESEND (Linux 6.9),
# then, with a daemon started afresh, with TIMINGFS_TEST_NO_RESEND=1,
# which makes it answer what the dead server had read from its own copy,
# as on older kernels (it says so on stderr: at least once here).
# The bound of 3 s is a test of its own, for the build that ships: a
# build under the sanitizers (make check-sanitize) takes three times as
# long over everything, and its answers' times say nothing.
test_description='The server killed twenty times under readers of
values and big tables, on the host and in containers (four attached,
one runc), with the kernel resending what the dead server had read,
then with the daemon answering from its own copy: no reader sees an
error or a torn content or waits over 3 s; SIGTERM then unmounts
everything.'
# Two rounds of 20 kills on a loaded machine.
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot make a container"
test_have_prereq UNSHARE || skip_all "no PID namespaces (unshare)"

. "$TEST_DIRECTORY/lib-restart.sh"

KILLS=20
KILLS_NO_RESEND=20
MNT2=$TRASH/mnt-no-resend
TFS2_PID=

trap 'cleanup_restart TFS2 "$MNT2"' EXIT

# answered_from_copy NAME: how many times NAME's daemon said it answered
# requests from its own copy of what the dead server had read.
answered_from_copy() {
	grep -c "answered [0-9]* requests the last server had read" \
		"$TRASH/$1.err"
}

test_expect_success 'setup: a container, a process of 3,000 threads' '
	restart_setup
'

test_expect_success 'resend: a daemon (allow_other), attached to four containers' '
	start_timingfs -c "$TRASH/restart.conf" -o allow_other &&
	server_started "$MNT" $TFS_PID 1 &&
	echo "supervisor $TFS_PID, server $spid" &&
	attach_containers "$TIMINGFS_CONTROL" "$MNT"
'

test_expect_success 'resend: 20 kills under readers: no error, no torn table' '
	restarts_under_readers TFS "$MNT" "$TRASH/resend" $KILLS kill_servers &&
	test "$(answered_from_copy TFS)" = 0
'

test_expect_success !ASAN 'resend: every answer within 3 s of a kill' '
	answered_in_time "$TRASH/resend"
'

test_expect_success 'resend: after the kills, both mounts served, every server reaped' '
	served "$MNT" &&
	server_started "$MNT" $TFS_PID $((KILLS + 1)) &&
	reaped_all $TFS_PID
'

test_expect_success 'resend: SIGTERM unmounts everything, leaves no process' '
	stop_daemon TFS "$MNT"
'

test_expect_success 'no resend: a daemon afresh, attached to four containers' '
	mkdir -p "$MNT2" &&
	TIMINGFS_TEST_NO_RESEND=1 start_timingfs_on TFS2 "$MNT2" \
		-c "$TRASH/restart.conf" -o allow_other &&
	server_started "$MNT2" $TFS2_PID 1 &&
	echo "supervisor $TFS2_PID, server $spid" &&
	tr "\0" "\n" </proc/$spid/environ | grep -x TIMINGFS_TEST_NO_RESEND=1 &&
	attach_containers "$(control_of TFS2)" "$MNT2"
'

test_expect_success 'no resend: 20 kills under readers: no error, no torn table' '
	restarts_under_readers TFS2 "$MNT2" "$TRASH/no-resend" \
		$KILLS_NO_RESEND kill_servers &&
	echo "answered from its own copy after $(answered_from_copy TFS2) kills" &&
	test "$(answered_from_copy TFS2)" -gt 0
'

test_expect_success !ASAN 'no resend: every answer within 3 s of a kill' '
	answered_in_time "$TRASH/no-resend"
'

test_expect_success 'no resend: after the kills, both mounts served, every server reaped' '
	served "$MNT2" &&
	server_started "$MNT2" $TFS2_PID $((KILLS_NO_RESEND + 1)) &&
	reaped_all $TFS2_PID
'

test_expect_success 'no resend: SIGTERM unmounts everything, leaves no process' '
	stop_daemon TFS2 "$MNT2"
'

test_done
