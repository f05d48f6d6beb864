#!/bin/bash
test_description='The two task sources side by side: one daemon with
[sources] tasks = bpf and one with tasks = procfs read the same sleeping
threads, in the host view and in a PID namespace of their own. Every
value file and every table line is the same on both (the threads do not
run), but for creation_time, which bpf gives to the nanosecond within
the clock tick that procfs gives; and in every table line kernel_time +
user_time is cycles, as time.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

test_lazy_prereq BPF '
	[ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ] &&
	[ "$(awk "/^NSpid:/ { print NF }" /proc/self/status)" = 2 ]
'
if ! test_have_prereq BPF; then
	skip_all "the task iterator needs root, the kernel BTF and the initial PID namespace"
fi

B=$TRASH/bpf
P=$TRASH/procfs
mkdir -p "$B" "$P"
# Enough threads that a pass over every task pays for their table (a
# 32nd of the machine's tasks; engine.h) on a machine of up to 2,000.
THREADS=64

# same_files PID TID DIRB DIRP: the thread's files on both mounts: the
# same cycles, kernel_time, user_time and exit_time; creation_time on
# bpf within the tick procfs names (with a millisecond either side: the
# boot instant is taken to the ms for ticks, to the us for bpf).
same_files() {
	local f a b tick=$((1000000000 / $(getconf CLK_TCK)))
	for f in ${TABLE_VALUES/ creation_time/}; do
		a=$(cat "$3/proc/$1/threads/$2/$f") &&
		b=$(cat "$4/proc/$1/threads/$2/$f") &&
		test "$a" = "$b" ||
			{ echo "thread $2: $f $a on bpf, $b on procfs"; return 1; }
	done
	a=$(cat "$3/proc/$1/threads/$2/creation_time") &&
	b=$(cat "$4/proc/$1/threads/$2/creation_time") &&
	test "$a" -ge $((b - 1000000)) && test "$a" -lt $((b + tick + 1000000)) ||
		{ echo "thread $2: creation_time $a on bpf, $b on procfs"; return 1; }
}

# table_columns FILE: a table's lines without creation_time (column 6).
table_columns() {
	awk "NR > 1 { \$6 = \"\"; print }" "$1" | sort
}

# sums_hold FILE HZ: in every line of table FILE, kernel_time + user_time
# (ns) is cycles at HZ, to a cycle and a ns of rounding.
sums_hold() {
	awk -v hz="$2" "NR > 1 {
		d = \$3 * 1e9 / hz - (\$4 + \$5)
		if (d < 0) d = -d
		if (d > 1 + 2e9 / hz) { print \"line \" NR \": \" \$0; bad = 1 }
		n++
	} END { exit bad || !n }" "$1"
}

# Both count cycles at one TSC frequency, given: each would calibrate
# its own, and their cycles differ then by a unit of rounding.
test_expect_success 'setup: both mounts, and threads that sleep' '
	write_config "$TRASH/bpf.conf" format.units=unix sources.tasks=bpf \
		clock.tsc_hz=3000000000 &&
	write_config "$TRASH/procfs.conf" format.units=unix \
		sources.tasks=procfs clock.tsc_hz=3000000000 &&
	start_timingfs_on TB "$B" -c "$TRASH/bpf.conf" &&
	start_timingfs_on TP "$P" -c "$TRASH/procfs.conf" &&
	grep -x "task_source bpf" "$B/info" &&
	grep -x "task_source procfs" "$P/info" &&
	HZ=$(sed -n "s/^tsc_hz //p" "$B/info") &&
	{ "$BIN/helper-born" "$THREADS" 1000 "$TRASH/born" </dev/null & } &&
	BORN=$! &&
	kill_at_exit "$BORN" &&
	wait_file "$TRASH/born" $((THREADS + 1)) 30 &&
	sleep 0.2
'

test_expect_success 'host view: every thread the same on both' '
	for tid in $(ls "/proc/$BORN/task"); do
		same_files "$BORN" "$tid" "$B" "$P" || return 1
	done
'

test_expect_success 'host view: the process the same on both' '
	for f in ${TABLE_VALUES/ creation_time/}; do
		test "$(cat "$B/proc/$BORN/$f")" = "$(cat "$P/proc/$BORN/$f")" ||
			return 1
	done
'

test_expect_success 'host view: threads.table the same on both, its sums whole' '
	passes=$(sed -n "s/^task_passes //p" "$B/info") &&
	cat "$B/proc/$BORN/threads.table" >bpf.table &&
	test "$(sed -n "s/^task_passes //p" "$B/info")" = $((passes + 1)) &&
	! grep "^task_passes" "$P/info" &&
	cat "$P/proc/$BORN/threads.table" >procfs.table &&
	test "$(wc -l <bpf.table)" = $((THREADS + 2)) &&
	table_columns bpf.table >bpf.cols &&
	table_columns procfs.table >procfs.cols &&
	test_cmp procfs.cols bpf.cols &&
	sums_hold bpf.table "$HZ" && sums_hold procfs.table "$HZ"
'

# A pass learns a new task's start all the same (t1120); once its start
# is known, its table costs no pass.
test_expect_success 'a process of one thread: its table from its files, no pass' '
	{ sleep 60 </dev/null >/dev/null 2>&1 & } &&
	one=$! &&
	kill_at_exit "$one" &&
	# Its start to the ns, learned by a pass, first.
	cat "$B/proc/$one/creation_time" &&
	passes=$(sed -n "s/^task_passes //p" "$B/info") &&
	test "$(wc -l <"$B/proc/$one/threads.table")" = 2 &&
	test "$(sed -n "s/^task_passes //p" "$B/info")" = "$passes" &&
	table_columns "$B/proc/$one/threads.table" >bpf.cols &&
	table_columns "$P/proc/$one/threads.table" >procfs.cols &&
	test_cmp procfs.cols bpf.cols &&
	kill "$one"
'

# proc/table reads procfs until a pass would have cost less, then takes
# one pass for the rest of the table (the process is past that point:
# the machine has more than a 32nd of its tasks before it). Its first
# read learns the starts of the tasks a pass lacks (PID 1 threads, on
# some machines), a pass each: the second counts.
test_expect_success 'host view: proc/table lines of the process the same on both, one pass' '
	cat "$B/proc/table" >/dev/null &&
	passes=$(sed -n "s/^task_passes //p" "$B/info") &&
	cat "$B/proc/table" >bpf.all &&
	test "$(sed -n "s/^task_passes //p" "$B/info")" = $((passes + 1)) &&
	grep "^$BORN " bpf.all >bpf.rows &&
	grep "^$BORN " "$P/proc/table" >procfs.rows &&
	test "$(wc -l <bpf.rows)" = $((THREADS + 1)) &&
	sed "1i header" bpf.rows >bpf.t && sed "1i header" procfs.rows >procfs.t &&
	table_columns bpf.t >bpf.cols && table_columns procfs.t >procfs.cols &&
	test_cmp procfs.cols bpf.cols &&
	sums_hold bpf.t "$HZ"
'

# A root reader of the host view reads every task: the pass lists the
# processes, with those it hides (PID 1 on some machines) as the last
# listing of /proc found them. Every process there before and after the
# read is in it, with every thread.
test_expect_success 'host view: proc/table lists every process, read twice' '
	for i in 1 2; do
		ls /proc | grep "^[0-9]" | sort >before &&
		cat "$B/proc/table" >bpf.all &&
		ls /proc | grep "^[0-9]" | sort >after &&
		comm -12 before after >stable &&
		awk "NR > 1 { print \$1 }" bpf.all | sort -u >listed &&
		comm -23 stable listed >missing &&
		test_cmp /dev/null missing &&
		test "$(grep -c "^1 " bpf.all)" = "$(ls /proc/1/task | wc -l)" ||
			return 1
	done
'

test_expect_success UNSHARE 'a PID namespace: its threads the same on both, in its numbers' '
	unshare -p -f --mount-proc bash -c "
		\"$BIN/helper-born\" 40 1000 \"$TRASH/ns.born\" </dev/null &
		for i in \$(seq 100); do
			grep -q ^ready \"$TRASH/ns.born\" 2>/dev/null && break
			sleep 0.1
		done
		sleep 0.2
		pid=\$(sed -n \"s/^ready //p\" \"$TRASH/ns.born\")
		ls \"$B/proc/\$pid/threads\" >\"$TRASH/ns.tids\"
		cp \"$B/proc/\$pid/threads.table\" \"$TRASH/ns.bpf.table\"
		cp \"$P/proc/\$pid/threads.table\" \"$TRASH/ns.procfs.table\"
		grep \"^\$pid \" \"$B/proc/table\" >\"$TRASH/ns.bpf.rows\"
		grep \"^\$pid \" \"$P/proc/table\" >\"$TRASH/ns.procfs.rows\"
		for tid in \$(cat \"$TRASH/ns.tids\"); do
			for f in ${TABLE_VALUES% exit_time}; do
				echo \$tid \$f \$(cat \"$B/proc/\$pid/threads/\$tid/\$f\") \
					\$(cat \"$P/proc/\$pid/threads/\$tid/\$f\")
			done
		done >\"$TRASH/ns.values\"
		echo \$pid >\"$TRASH/ns.pid\"
		kill %1
	" &&
	test "$(cat "$TRASH/ns.pid")" -lt 20 &&
	test "$(wc -l <"$TRASH/ns.tids")" = 41 &&
	tick=$((1000000000 / $(getconf CLK_TCK))) &&
	while read -r tid f a b; do
		if [ "$f" = creation_time ]; then
			test "$a" -ge $((b - 1000000)) &&
			test "$a" -lt $((b + tick + 1000000))
		else
			test "$a" = "$b"
		fi || { echo "thread $tid: $f $a on bpf, $b on procfs"; return 1; }
	done <"$TRASH/ns.values" &&
	test "$(wc -l <"$TRASH/ns.values")" = 164 &&
	table_columns "$TRASH/ns.bpf.table" >bpf.cols &&
	table_columns "$TRASH/ns.procfs.table" >procfs.cols &&
	test_cmp procfs.cols bpf.cols &&
	sums_hold "$TRASH/ns.bpf.table" "$HZ" &&
	test "$(wc -l <"$TRASH/ns.bpf.rows")" = 41 &&
	sed "1i header" "$TRASH/ns.bpf.rows" >bpf.t &&
	sed "1i header" "$TRASH/ns.procfs.rows" >procfs.t &&
	table_columns bpf.t >bpf.cols && table_columns procfs.t >procfs.cols &&
	test_cmp procfs.cols bpf.cols &&
	sums_hold bpf.t "$HZ"
'

# A kernel before 6.1 cannot scope a pass to a process: the table takes
# a pass of the whole machine where that pays, with the same lines.
test_expect_success 'no pass scoped to a process: threads.table the same, from a pass of all' '
	mkdir -p "$TRASH/unscoped" &&
	TIMINGFS_TEST_NO_SCOPED_PASS=1 start_timingfs_on TU "$TRASH/unscoped" \
		-c "$TRASH/bpf.conf" &&
	grep -x "task_source bpf" "$TRASH/unscoped/info" &&
	cat "$TRASH/unscoped/proc/table" >/dev/null &&
	passes=$(sed -n "s/^task_passes //p" "$TRASH/unscoped/info") &&
	cat "$TRASH/unscoped/proc/$BORN/threads.table" >unscoped.table &&
	test "$(sed -n "s/^task_passes //p" "$TRASH/unscoped/info")" = \
		$((passes + 1)) &&
	cat "$P/proc/$BORN/threads.table" >procfs.table &&
	table_columns unscoped.table >unscoped.cols &&
	table_columns procfs.table >procfs.cols &&
	test_cmp procfs.cols unscoped.cols &&
	unmount_timingfs_on TU "$TRASH/unscoped" && test "$TU_STATUS" = 0
'

test_expect_success 'cleanup' '
	kill "$BORN" &&
	{ wait "$BORN"; test $? = 143; } &&
	unmount_timingfs_on TB "$B" && test "$TB_STATUS" = 0 &&
	unmount_timingfs_on TP "$P" && test "$TP_STATUS" = 0
'

test_done
