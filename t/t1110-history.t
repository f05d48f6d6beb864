#!/bin/bash
test_description='A process of 6000 threads, more than the 4096 slots the
history of kernel/user splits once had: when every thread'"'"'s utime:stime
proportion moves toward user time with the same runtime, no thread'"'"'s
kernel_time or user_time goes back, and each still sums to its runtime.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

TREE=$TRASH/tree
PID=1000
FIRST=1000
LAST=6999

# make_tree: process $PID with threads $FIRST..$LAST in $TREE, laid out
# as t/fixtures/m2 is, owned by the tester. Thread T runs
# 1000000000 + 1000 * T ns, 90 % of it in the kernel (utime 10, stime 90).
make_tree() {
	mkdir -p "$TREE/proc/$PID/task" &&
	cp -r "$FIXTURES/m2/sys" "$TREE/sys" &&
	cp "$FIXTURES/m2/proc/stat" "$TREE/proc/stat" &&
	seq "$FIRST" "$LAST" | sed "s|^|$TREE/proc/$PID/task/|" | xargs mkdir &&
	awk -v dir="$TREE/proc/$PID" -v pid="$PID" -v first="$FIRST" \
		-v last="$LAST" -v uid="$(id -u)" -v gid="$(id -g)" '
	function status(file, tid) {
		printf "Name:\tworker\nState:\tS (sleeping)\nTgid:\t%d\n" \
			"Pid:\t%d\nPPid:\t1\nUid:\t%d\t%d\t%d\t%d\n" \
			"Gid:\t%d\t%d\t%d\t%d\nThreads:\t%d\n", pid, tid,
			uid, uid, uid, uid, gid, gid, gid, gid,
			last - first + 1 >file
		close(file)
	}
	BEGIN {
		for (t = first; t <= last; t++) {
			status(dir "/task/" t "/status", t)
			f = dir "/task/" t "/schedstat"
			printf "%d 0 1\n", 1000000000 + 1000 * t >f
			close(f)
		}
		status(dir "/status", pid)
	}' &&
	write_stats 10 90
}

# write_stats UTIME STIME: every thread's stat (and the process's) with
# that utime and stime, in clock ticks, and the rest as m2's.
write_stats() {
	awk -v dir="$TREE/proc/$PID" -v pid="$PID" -v first="$FIRST" \
		-v last="$LAST" -v utime="$1" -v stime="$2" '
	function stat(file, tid) {
		printf "%d (worker) S 1 %d %d 0 -1 4194560 120 0 0 0 %d %d " \
			"0 0 20 0 %d 0 5000 10240000 300 " \
			"18446744073709551615 94000000000000 94000000100000 " \
			"140700000000000 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 " \
			"94000000200000 94000000300000 94000000400000 " \
			"140700000001000 140700000001100 140700000001100 " \
			"140700000002000 0\n", tid, pid, pid, utime, stime,
			last - first + 1 >file
		close(file)
	}
	BEGIN {
		for (t = first; t <= last; t++)
			stat(dir "/task/" t "/stat", t)
		stat(dir "/stat", pid)
	}'
}

test_expect_success 'setup: the tree mounted, in nanoseconds' '
	make_tree &&
	write_config "$TRASH/tree.conf" "sources.proc=$TREE/proc" \
		"sources.sys=$TREE/sys" clock.tsc_hz=3000000000 \
		format.units=unix &&
	mount_timingfs "$TRASH/tree.conf"
'

# check_table BEFORE AFTER: every thread of BEFORE is in AFTER, with no
# less kernel_time and no less user_time, and in AFTER each thread's
# kernel_time + user_time is its runtime. Prints what is wrong (the
# first 20 threads of it).
check_table() {
	awk -v first="$FIRST" -v last="$LAST" -v pid="$PID" \
		-v header="$TABLE_HEADER" '
	FNR == 1 {
		if ($0 != header)
			{ print FILENAME ": header " $0; bad++ }
		next
	}
	NR == FNR { k[$2] = $4; u[$2] = $5; n1++; next }
	{
		n2++
		run = 1000000000 + 1000 * $2
		if ($2 == pid)
			run += 1000000
		if ($4 + $5 != run && bad++ < 20)
			print "tid " $2 ": " $4 " + " $5 " is not " run
		if (!($2 in k))
			{ print "tid " $2 ": not read before"; bad++; next }
		if ($4 < k[$2] || $5 < u[$2]) {
			if (went_back++ < 20)
				print "tid " $2 ": kernel " k[$2] " -> " $4 \
					", user " u[$2] " -> " $5
		}
	}
	END {
		if (n1 != last - first + 1 || n2 != n1)
			{ print "lines: " n1 ", then " n2; bad++ }
		if (went_back)
			print went_back " threads went back"
		exit bad + went_back > 0
	}' "$1" "$2"
}

test_expect_success 'the first read: 90 % of each runtime in the kernel' '
	cat "$MNT/proc/$PID/threads.table" >before &&
	test "$(wc -l <before)" = 6001 &&
	t=$((FIRST + 1)) && run=$((1000000000 + 1000 * t)) &&
	grep "^$PID $t " before >line &&
	read -r p tid cycles kernel user created exited <line &&
	test "$kernel" = $((run * 9 / 10)) &&
	test "$user" = $((run - run * 9 / 10))
'

# The main thread runs a millisecond more, so that the second read is
# seen to be a fresh one; every other thread keeps its runtime, and all
# of them now have 10 % in the kernel by their stat.
test_expect_success 'the proportion moves toward user time: nothing goes back' '
	write_stats 90 10 &&
	printf "%d 0 1\n" $((1000000000 + 1000 * PID + 1000000)) \
		>"$TREE/proc/$PID/task/$PID/schedstat" &&
	cat "$MNT/proc/$PID/threads.table" >after &&
	check_table before after &&
	cat "$MNT/proc/table" >all &&
	check_table before all
'

test_expect_success 'unmounted cleanly' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_done
