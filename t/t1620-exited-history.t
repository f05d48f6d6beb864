#!/bin/bash
test_description='Exited tasks keep the kernel/user split they were shown
with: a process of one thread, shown as a process while it lived, and a
process of 6000 threads (more than the engine remembers the starts of by
thread number), each thread shown in its table while it lived: at exit,
when the exit record'"'"'s utime:stime proportion differs from the one the
live stat had, no kernel_time or user_time goes back.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

[ "$(id -u)" = 0 ] || skip_all "not root: taskstats needs CAP_NET_ADMIN"

N=6000

# no_less BEFORE AFTER: every line of BEFORE (a table's, the header
# left out, exit_time 0) has a line of the same tid in AFTER that has
# exited (exit_time set) and no less kernel_time nor user_time. Prints
# the first 20 that are wrong.
no_less() {
	awk '
	FNR == 1 { next }
	NR == FNR { k[$2] = $4; u[$2] = $5; n1++; next }
	!($2 in k) { next }
	{
		n2++
		if ($7 == 0 && bad++ < 20)
			print "tid " $2 ": no exit_time"
		if (($4 < k[$2] || $5 < u[$2]) && back++ < 20)
			print "tid " $2 ": kernel " k[$2] " -> " $4 \
				", user " u[$2] " -> " $5
	}
	END {
		if (n2 != n1) { print "lines: " n1 ", then " n2; bad++ }
		if (back) print back " went back"
		exit bad + back > 0
	}' "$1" "$2"
}

# exited DIR: DIR's exit_time is set.
exited() {
	local t
	t=$(cat "$1/exit_time" 2>/dev/null) && [ "$t" != 0 ]
}

# all_exited PID: the threads table of PID, into after, has N lines of
# threads that exited.
all_exited() {
	cat "$MNT/proc/$1/threads.table" >after &&
	[ "$(awk '$7 != 0' after | wc -l)" -ge "$N" ]
}

test_expect_success 'setup: mounted, exited tasks kept 60 s' '
	write_config "$TRASH/keep.conf" format.units=unix exited.keep=60 &&
	mount_timingfs "$TRASH/keep.conf" &&
	grep -x "exit_source taskstats" "$MNT/info"
'

# A process that burns 5 ms, less than a clock tick: its stat says no
# time in the kernel, and all of its runtime is shown as user time;
# the exit record counts the kernel time of its exit in microseconds.
test_expect_success 'a process of one thread: shown as a process, then exited' '
	{ "$BIN/helper-exit" child 5 "$TRASH/go.one" >one.out & } &&
	helper=$! &&
	kill_at_exit $helper &&
	wait_file one.out &&
	pid=$(head -1 one.out) &&
	cat "$MNT/proc/$pid/kernel_time" >k1 &&
	cat "$MNT/proc/$pid/user_time" >u1 &&
	touch "$TRASH/go.one" &&
	wait $helper &&
	test_poll_ 10 exited "$MNT/proc/$pid" &&
	cat "$MNT/proc/$pid/kernel_time" >k2 &&
	cat "$MNT/proc/$pid/user_time" >u2 &&
	echo "alive: kernel $(cat k1) user $(cat u1)" &&
	echo "exited: kernel $(cat k2) user $(cat u2)" &&
	test "$(cat k2)" -ge "$(cat k1)" &&
	test "$(cat u2)" -ge "$(cat u1)"
'

test_expect_success "$N threads shown in their table, then exited" '
	exec 8< <(sleep 1000) &&
	{ "$BIN/helper-exit" hold $N "$TRASH/go.many" <&8 >many.out & } &&
	helper=$! &&
	kill_at_exit $helper &&
	wait_file many.out &&
	pid=$(head -1 many.out) &&
	cat "$MNT/proc/$pid/threads.table" >all.before &&
	grep -v "^$pid $pid " all.before >before &&
	test "$(wc -l <before)" -eq $((N + 1)) &&
	touch "$TRASH/go.many" &&
	test_poll_ 60 grep -qx exited many.out &&
	test_poll_ 10 all_exited $pid &&
	no_less before after
'

test_expect_success 'unmounted cleanly' '
	exec 8<&- &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_done
