#!/bin/bash
# Upgrades that nobody sees: timingfsctl upgrade, again and again under
# readers, each time to a binary built anew (t/bin/timingfs-next, the
# daemon as version VERSION+next) or back, installed where the daemon
# was started from as a package would install it (a rename over the
# running file); a binary that exits 1 at its start is refused.
#
# The readers (t/lib-restart.sh): value files and big tables, on the
# host's mount, in four containers attached to the daemon and in a runc
# container started with the OCI hook, by cat, dd, busybox, the shell's
# read, read(2), sendfile and splice.
# Meanwhile 10 upgrades, 0.05-0.5 s apart (random), each once the last
# one's server serves: each makes timingfsctl upgrade exit 0, and the
# mount's info then says the version just installed, a new server_pid
# and one more server_starts. Then no reader logged an error or a bad
# copy, every reader's next answer after each upgrade came within 3 s
# (a tool's copy of a big table within 30 s, its system calls unseen),
# and the supervisor kept its pid throughout. Then a binary that exits
# 1 at its start: timingfsctl upgrade exits 1 and says why in one line,
# the server serves on (the same pid, the same version), and SIGUSR2
# after the good binary is back upgrades as timingfsctl does.
# The bound of 3 s is a test of its own, for the build that ships: a
# build under the sanitizers (make check-sanitize) takes three times as
# long over everything, and its answers' times say nothing.
test_description='timingfsctl upgrade ten times under readers of values
and big tables, on the host and in containers (four attached, one
runc), to a binary built anew and back: no reader sees an error or a
torn content or waits over 3 s; a binary that exits 1 is refused in
one line and the old server serves on; SIGUSR2 upgrades too.'
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot make a container"
test_have_prereq UNSHARE || skip_all "no PID namespaces (unshare)"

. "$TEST_DIRECTORY/lib-restart.sh"

UPGRADES=10

trap 'cleanup_restart' EXIT

test_expect_success 'setup: a container, a process of 3,000 threads' '
	restart_setup &&
	upgrade_setup
'

test_expect_success 'a daemon started from the installed binary, attached to four containers' '
	TIMINGFS=$DAEMON start_timingfs -c "$TRASH/restart.conf" \
		-o allow_other &&
	server_started "$MNT" $TFS_PID 1 &&
	echo "supervisor $TFS_PID, server $spid" &&
	grep -x "version $VERSION_NOW" "$TRASH/info.out" &&
	attach_containers "$TIMINGFS_CONTROL" "$MNT"
'

# upgrades_logged N: the supervisor logged N upgrades. It logs one once
# the server it replaced is reaped, which may come after the new server
# answers.
upgrades_logged() {
	test "$(grep -c "upgraded: server" "$TRASH/TFS.err")" = "$1"
}

test_expect_success '10 upgrades under readers: no error, no torn table' '
	restarts_under_readers TFS "$MNT" "$TRASH/upgrades" $UPGRADES \
		upgrade_servers &&
	is_running $TFS_PID &&
	wait_for 10 upgrades_logged $UPGRADES
'

test_expect_success !ASAN 'every answer within 3 s of an upgrade' '
	answered_in_time "$TRASH/upgrades"
'

test_expect_success 'after the upgrades, both mounts served, every server reaped' '
	served "$MNT" &&
	server_started "$MNT" $TFS_PID $((UPGRADES + 1)) &&
	reaped_all $TFS_PID
'

test_expect_success 'an upgrade to a binary that exits 1 is refused in one line; the server serves on' '
	server_started "$MNT" $TFS_PID $((UPGRADES + 1)) &&
	old=$spid &&
	version=$(sed -n "s/^version //p" "$TRASH/info.out") &&
	printf "#!/bin/sh\necho \"not this one\" >&2\nexit 1\n" >broken &&
	chmod +x broken &&
	install_daemon broken &&
	test_expect_code 1 "$TIMINGFSCTL" upgrade >upgrade.out 2>&1 &&
	cat upgrade.out &&
	test "$(wc -l <upgrade.out)" = 1 &&
	grep "not this one" upgrade.out &&
	served "$MNT" &&
	server_started "$MNT" $TFS_PID $((UPGRADES + 1)) &&
	test "$spid" = "$old" &&
	grep -x "version $version" "$TRASH/info.out" &&
	grep "upgrade refused" "$TRASH/TFS.err"
'

test_expect_success 'SIGUSR2 upgrades to the binary installed' '
	install_daemon "$BIN/timingfs-next" &&
	kill -USR2 $TFS_PID &&
	wait_successor "$MNT" $TFS_PID $((UPGRADES + 2)) &&
	grep -x "version $VERSION_NEXT" "$TRASH/info.out" &&
	served "$MNT" &&
	reaped_all $TFS_PID
'

# The state an upgrade hands over holds each attached mount's options as
# attach was given them: one of 750 bytes (the control socket takes a
# message of 64 KiB) must come through too.
# init_sleeps PID: the container's init PID has done with its mounts.
init_sleeps() {
	test "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep
}

test_expect_success 'a container attached with 750 bytes of options: an upgrade keeps it served' '
	opts=$(printf "ro,allow_other,%.0s" $(seq 1 50)) &&
	opts=${opts%,} &&
	test ${#opts} -gt 600 &&
	{ unshare -m -p -f --mount-proc sh -c "$CONTAINER_INIT" & } &&
	kill_at_exit $! &&
	init=$(child_of $!) &&
	# Its init unmounts what timingfs mounts it inherited, then sleeps:
	# an attach before that would be unmounted with them.
	wait_for 10 init_sleeps "$init" &&
	"$TIMINGFSCTL" attach -o "$opts" "/proc/$init/ns/pid" "$TARGET" &&
	mounted_in_container "$init" "$TARGET" &&
	c=$(conn_of "/proc/$init/mountinfo" "$TARGET") &&
	CONNS="$CONNS $c" &&
	INITS="$INITS $init" &&
	served "$MNT" &&
	{ "$TIMINGFSCTL" upgrade >upgrade.out 2>&1 ||
		{ cat upgrade.out; false; }; } &&
	wait_successor "$MNT" $TFS_PID $((UPGRADES + 3)) &&
	served "$MNT" &&
	test "$("$TIMINGFSCTL" mounts | wc -l)" = $((CONTAINERS + 1)) &&
	reaped_all $TFS_PID
'

test_expect_success 'SIGTERM unmounts everything, leaves no process' '
	stop_daemon TFS "$MNT"
'

test_done
