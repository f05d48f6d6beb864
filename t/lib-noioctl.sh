# lib-noioctl.sh: run another test script again, with every daemon it
# starts through test-lib (start_timingfs, start_timingfs_on) under
# t/bin/helper-noioctl, as on a kernel without the nsfs ioctls that
# translate numbers between PID namespaces (before Linux 6.10): there
# the daemon must translate by the NSpid/NStgid lines (docs/containers.md:
# the `nspid` way). A script tNNNN-NAME-nspid.t sources this file, then, at its
# top level (not in a function), the script it runs again:
#
#   test_description='...'
#   . "$(dirname "$0")/lib-noioctl.sh"
#   . "$(dirname "$0")/tNNNN-NAME.t"
#
# The sourced script sources test-lib.sh, which takes the test's name,
# so its trash directory (t/trash.tNNNN-NAME-nspid), from $0: this
# script's, not the other's. The other's test_description replaces this
# one's. Its tests run as they are, then test_done runs
# test_before_done: the test of this file, that info says
# "pidns_translate nspid" (with TEST_DAEMON_NOIOCTL empty, as in a run
# made without the filter, "pidns_translate ioctl").
#
# A daemon that a test runs by "$TIMINGFS" itself (t1500's pidns= that
# is no namespace) runs without the filter.

TEST_DAEMON_NOIOCTL=1

# Without the helper nothing here would be what it says: a build is
# missing (bail out), or the filter cannot be installed here (skip).
if [ ! -x "$(dirname "$0")/bin/helper-noioctl" ]; then
	echo "Bail out! no $(dirname "$0")/bin/helper-noioctl: run make first"
	exit 1
fi
if ! "$(dirname "$0")/bin/helper-noioctl" true; then
	echo "1..0 # SKIP helper-noioctl cannot install its filter here"
	exit 0
fi

# test_before_done: a daemon of its own, started as the others were,
# whose info names the way it translates, once.
test_before_done() {
	test_expect_success 'info says pidns_translate nspid under helper-noioctl (ioctl without it)' '
		if [ -n "$TEST_DAEMON_NOIOCTL" ]; then want=nspid; else want=ioctl; fi &&
		echo "TEST_DAEMON_NOIOCTL=$TEST_DAEMON_NOIOCTL: want pidns_translate $want" &&
		mkdir -p "$TRASH/translate" &&
		write_config "$TRASH/translate.conf" exited.keep=0 &&
		start_timingfs_on TRANSLATE "$TRASH/translate" \
			-c "$TRASH/translate.conf" &&
		test_when_finished "unmount_timingfs_on TRANSLATE \"\$TRASH/translate\"" &&
		grep "^Seccomp:" "/proc/$TRANSLATE_PID/status" &&
		{
			test -z "$TEST_DAEMON_NOIOCTL" ||
			grep "^Seccomp:[[:space:]]*2$" "/proc/$TRANSLATE_PID/status"
		} &&
		cat "$TRASH/translate/info" &&
		grep -x "pidns_translate $want" "$TRASH/translate/info" &&
		test "$(grep -c "^pidns_translate " "$TRASH/translate/info")" = 1
	'
}
