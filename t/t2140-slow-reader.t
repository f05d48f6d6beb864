#!/bin/bash
# One reader's slow request does not hold up the mount's other readers.
# The slow request: a copy of the m2 fixture in which the schedstat of
# thread 200 is a FIFO, so that the daemon's open of it (to make
# proc/200/threads/200/cycles) waits for a writer, as a /proc file of a
# task stuck in the kernel would keep a worker. Meanwhile other readers
# of the same mount read value files and listings: each must
# be answered (bounded: 10 s, a margin for a loaded machine) while the
# slow one is still stuck; then a writer comes, and the slow reader gets
# its whole value.
test_description='One reader stuck in the daemon (a fixture whose
schedstat is a FIFO nobody writes): the other readers of the same mount
are answered meanwhile; the stuck one gets its value once the FIFO is
written.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

SLOW=$TRASH/slow
FIFO=$SLOW/proc/200/task/200/schedstat

# release: while the daemon waits in the FIFO's open, write it the
# schedstat, bounded: a reader whose request the daemon has taken
# waits for its answer even through SIGKILL, so nothing ends before.
release() {
	while stuck_in_fifo "$(server_of "$TFS_PID")" 2>/dev/null; do
		bounded 10 sh -c 'cat "$1" >"$2"' - "$TRASH/schedstat" "$FIFO" ||
			return 1
		sleep 0.1
	done
	return 0
}

cleanup_slow() {
	[ -z "$TFS_PID" ] || release
	cleanup
}
trap cleanup_slow EXIT

# stuck_in_fifo PID: a thread of PID waits in a FIFO's open for a
# writer (the kernel's wait_for_partner, in fifo_open).
stuck_in_fifo() {
	grep -q -e wait_for_partner -e fifo_open /proc/$1/task/*/wchan
}

test_expect_success 'setup: m2 with a FIFO for the schedstat of thread 200' '
	cp -R "$FIXTURES/m2" "$SLOW" &&
	cp "$SLOW/proc/200/task/200/schedstat" "$TRASH/schedstat" &&
	rm "$SLOW/proc/200/task/200/schedstat" &&
	mkfifo "$SLOW/proc/200/task/200/schedstat" &&
	write_config "$TRASH/slow.conf" "sources.proc=$SLOW/proc" \
		"sources.sys=$SLOW/sys" clock.tsc_hz=3000000000 &&
	mount_timingfs "$TRASH/slow.conf" &&
	cat "$MNT/proc/100/threads/101/cycles" >expect.101 &&
	test -s expect.101 &&
	echo $((123456789 * 3)) >expect.200
'

test_expect_success 'a reader stuck in the daemon, the others answered meanwhile' '
	{ cat "$MNT/proc/200/threads/200/cycles" >slow.out 2>slow.err & } &&
	slow=$! &&
	kill_at_exit $slow &&
	test_when_finished release &&
	wait_for 10 stuck_in_fifo "$(server_of "$TFS_PID")" &&
	is_running $slow &&
	bounded 10 cat "$MNT/proc/100/threads/101/cycles" >got.101 &&
	test_cmp expect.101 got.101 &&
	bounded 10 cat "$MNT/info" >info &&
	grep "^units windows" info &&
	bounded 10 ls "$MNT/proc" >procs &&
	grep -x 100 procs &&
	grep -x 200 procs &&
	bounded 10 ls "$MNT/proc/100/threads" >ls &&
	printf "100\n101\n102\n" >expect.ls &&
	test_cmp expect.ls ls &&
	bounded 10 cat "$MNT/groups/0/cpus" >cpus &&
	test -s cpus &&
	echo "the stuck reader still waits: $(ps -o pid=,stat=,args= -p $slow)" &&
	is_running $slow &&
	stuck_in_fifo "$(server_of "$TFS_PID")" &&
	release &&
	wait $slow &&
	cat slow.out &&
	test_cmp expect.200 slow.out
'

# The stuck request alone, or nearly: the daemon idle a while, so that
# the walk sends its lookups (a task's directory is not cached without
# an exit listener, and its lookup reads the schedstat too, which says
# which task the number is) as the first requests after a pause, which
# the watchdog must not sleep through; release feeds the FIFO to every
# read of it. Five times: which tick the request meets is a matter of
# microseconds.
stuck_after_pause() {
	test -d "$MNT/proc/200/threads/200" &&
	sleep 0.2 &&
	{ cat "$MNT/proc/200/threads/200/cycles" >slow3.out 2>&1 & } &&
	slow=$! &&
	kill_at_exit $slow &&
	wait_for 10 stuck_in_fifo "$(server_of "$TFS_PID")" &&
	bounded 10 cat "$MNT/proc/100/threads/101/cycles" >got.101 &&
	test_cmp expect.101 got.101 &&
	release &&
	wait $slow &&
	test_cmp expect.200 slow3.out
}

test_expect_success 'a stuck request, the first after a pause, is given up' '
	test_when_finished release &&
	for i in 1 2 3 4 5
	do
		stuck_after_pause || return 1
	done
'

test_expect_success 'the daemon goes on: the same file twice, as it comes' '
	{ cat "$MNT/proc/200/threads/200/cycles" >slow2.out 2>&1 & } &&
	slow=$! &&
	kill_at_exit $slow &&
	test_when_finished release &&
	wait_for 10 stuck_in_fifo "$(server_of "$TFS_PID")" &&
	bounded 10 cat "$MNT/proc/100/cycles" >/dev/null &&
	release &&
	wait $slow &&
	test_cmp expect.200 slow2.out &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_done
