#!/bin/bash
test_description='The live system: a process with a busy thread and a
sleeping one, read through timingfs and compared with the files of the
kernel. No test depends on how fast anything runs: every kernel value is
read before and after the file it is compared with, and bounds the value
of the file.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

# The busy thread's runtime in ns, from the kernel.
sched_ns() {
	local ns rest
	read -r ns rest <"/proc/$PID/task/$1/schedstat" && echo "$ns"
}

# has_run TID NS: the thread TID has run NS ns at least.
has_run() {
	local ns
	ns=$(sched_ns "$1") && test "$ns" -ge "$2"
}

# gone_from_mount PID: the mount answers ENOENT for proc/PID; what it
# answered is left in $r.
gone_from_mount() {
	r=$("$BIN/helper-io" errno stat "$MNT/proc/$1") && test "$r" = ENOENT
}

# start_of PID: when the process PID started (field 22 of its stat, in
# ticks after boot); empty when there is none.
start_of() {
	awk '{ sub(/^.*\) /, ""); print $20 }' "/proc/$1/stat" 2>/dev/null
}

# number_free PID: no process has the number PID. When one has, it was
# taken again (pid_max may be 32768, and other jobs run here): a test of
# the task that had it can tell nothing, and says why.
number_free() {
	test ! -d "/proc/$1" && return 0
	echo "pid $1 was taken again: $(cat "/proc/$1/comm" 2>/dev/null)" >&2
	return 1
}

# stop_pid PID: end a helper a test started, and reap it; for
# test_when_finished, so never a failure.
stop_pid() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	return 0
}

# A task that exits is gone at once here (keep = 0); t1600 keeps them.
test_expect_success 'setup: mounted, exited tasks not kept' '
	write_config "$TRASH/live.conf" format.units=windows exited.keep=0 &&
	mount_timingfs "$TRASH/live.conf" &&
	HZ=$(sed -n "s/^tsc_hz //p" "$MNT/info") &&
	echo "tsc_hz $HZ" &&
	test "$HZ" -gt 0
'

# The busy thread runs up half a second of CPU time, however long that
# takes: up to 40 s, a margin for a loaded machine within the test
# timeout.
test_expect_success 'setup: a process with a busy and a sleeping thread' '
	before_start=$(date +%s%N) &&
	{ "$BIN/helper-busy" -k >"$TRASH/pids" & } &&
	HELPER=$! &&
	kill_at_exit "$HELPER" &&
	wait_file "$TRASH/pids" &&
	after_start=$(date +%s%N) &&
	read -r PID BUSY SLEEPER <"$TRASH/pids" &&
	echo "process $PID, busy $BUSY, sleeping $SLEEPER" &&
	HELPER_START=$(start_of "$PID") &&
	test -n "$HELPER_START" &&
	wait_for 40 has_run "$BUSY" 500000000 &&
	ns=$(sched_ns "$BUSY") &&
	echo "busy thread: $ns ns" &&
	test "$ns" -ge 500000000
'

test_expect_success 'the helper runs as it said' '
	test "$PID" = "$HELPER" &&
	test -d "/proc/$PID/task/$BUSY" && test -d "/proc/$PID/task/$SLEEPER"
'

test_expect_success 'info has a TSC frequency and its source' '
	test "$HZ" -gt 1000000 &&
	grep -E "^tsc_source (cpuid|calibrated|cntfrq)$" "$MNT/info" &&
	grep -x "units windows" "$MNT/info" &&
	grep -x "clk_tck $(getconf CLK_TCK)" "$MNT/info"
'

test_expect_success 'threads/ lists the threads /proc lists' '
	ls "/proc/$PID/task" >expect &&
	ls "$MNT/proc/$PID/threads" >actual &&
	test_cmp expect actual &&
	test "$(wc -l <actual)" = 3
'

# Every process /proc lists both before and after ours is in ours.
test_expect_success 'proc/ lists processes, not threads, and self' '
	ls /proc | grep -E "^[0-9]+$" | sort >procs-before &&
	ls "$MNT/proc" >list &&
	ls /proc | grep -E "^[0-9]+$" | sort >procs-after &&
	grep -x "$PID" list && grep -x 1 list && grep -x self list &&
	! grep -x "$BUSY" list &&
	comm -12 procs-before procs-after >stable &&
	grep -E "^[0-9]+$" list | sort >ours &&
	comm -23 stable ours >missing &&
	echo "$(wc -l <stable) processes throughout, missing: $(cat missing)" &&
	test "$(wc -l <stable)" -gt 2 &&
	test ! -s missing
'

test_expect_success 'a thread is no process; a thread of another is none of ours' '
	test "$("$BIN/helper-io" errno stat "$MNT/proc/$BUSY")" = ENOENT &&
	test "$("$BIN/helper-io" errno stat "$MNT/proc/$PID/threads/1")" = ENOENT &&
	test "$("$BIN/helper-io" errno stat "$MNT/proc/1/threads/$BUSY")" = ENOENT &&
	test "$("$BIN/helper-io" errno read "$MNT/proc/$BUSY/cycles")" = ENOENT &&
	test "$("$BIN/helper-io" errno stat "$MNT/proc/$PID/threads/$BUSY")" = OK
'

# The thread's runtime from schedstat, read before and after the file,
# bounds the file's value: within 2% of that range.
test_expect_success 'busy thread: cycles / tsc_hz within 2% of schedstat' '
	before=$(sched_ns "$BUSY") &&
	cycles=$(cat "$MNT/proc/$PID/threads/$BUSY/cycles") &&
	after=$(sched_ns "$BUSY") &&
	ns=$((cycles * 1000000 / (HZ / 1000))) &&
	echo "schedstat $before..$after ns, file $ns ns" &&
	test "$ns" -ge $((before / 100 * 98)) &&
	test "$ns" -le $((after / 100 * 102))
'

test_expect_success 'sleeping thread: cycles are its schedstat runtime' '
	sched=$(sched_ns "$SLEEPER") &&
	cycles=$(cat "$MNT/proc/$PID/threads/$SLEEPER/cycles") &&
	ns=$((cycles * 1000000000 / HZ)) &&
	echo "schedstat $sched ns, file $ns ns" &&
	test "$ns" -le "$sched" && test "$ns" -ge $((sched - 2))
'

# Windows units: 100-ns intervals. kernel + user, each rounded down,
# against the cycles converted back to time, rounded down: at most one
# unit apart. Converted in two parts, whole seconds and the rest: cycles
# times 10^7 leaves 64 bits once a task has run 7 minutes at 2 GHz
# (init, on a machine up for a day).
test_expect_success 'kernel_time + user_time is cycles in one times snapshot' '
	for task in "$PID" "$PID/threads/$BUSY" "$PID/threads/$SLEEPER" 1; do
		cat "$MNT/proc/$task/times" >times &&
		cycles= kernel_time= user_time= &&
		eval "$(sed "s/ /=/" times)" &&
		test -n "$cycles" && test -n "$kernel_time" &&
		test -n "$user_time" &&
		of_cycles=$((cycles / HZ * 10000000 + cycles % HZ * 10000000 / HZ)) &&
		sum=$((kernel_time + user_time)) &&
		diff=$((sum - of_cycles)) &&
		echo "$task: $kernel_time + $user_time = $sum, cycles: $of_cycles" &&
		test "${diff#-}" -le 1 || return 1
	done
'

test_expect_success 'the busy thread has a user and a kernel share' '
	kernel_time= user_time= &&
	eval "$(sed "s/ /=/" "$MNT/proc/$PID/threads/$BUSY/times")" &&
	echo "kernel $kernel_time user $user_time" &&
	test "$kernel_time" -gt 0 && test "$user_time" -gt 0
'

test_expect_success 'the split follows the kernel utime:stime proportion' '
	set -- $(cut -d")" -f2 "/proc/$PID/task/$BUSY/stat") &&
	utime=${12} stime=${13} &&
	kernel_time= user_time= &&
	eval "$(sed "s/ /=/" "$MNT/proc/$PID/threads/$BUSY/times")" &&
	set -- $(cut -d")" -f2 "/proc/$PID/task/$BUSY/stat") &&
	utime2=${12} stime2=${13} &&
	echo "stat $utime:$stime..$utime2:$stime2, file $user_time:$kernel_time" &&
	test "$kernel_time" -gt 0 && test "$user_time" -gt 0 &&
	test $((kernel_time * (utime + stime) * 100)) -ge \
		$(( (kernel_time + user_time) * stime * 80 )) &&
	test $((kernel_time * (utime2 + stime2) * 100)) -le \
		$(( (kernel_time + user_time) * stime2 * 120 ))
'

test_expect_success 'process cycles include all its threads' '
	b=$(cat "$MNT/proc/$PID/threads/$BUSY/cycles") &&
	s=$(cat "$MNT/proc/$PID/threads/$SLEEPER/cycles") &&
	p=$(cat "$MNT/proc/$PID/cycles") &&
	echo "process $p, threads $b + $s" &&
	test "$b" -gt 0 && test "$s" -gt 0 &&
	test "$p" -ge $((b + s))
'

test_expect_success 'creation_time is the real start, to a second' '
	created=$(cat "$MNT/proc/$PID/creation_time") &&
	created_ns=$(( (created - 116444736000000000) * 100 )) &&
	echo "started between $before_start and $after_start, file $created_ns" &&
	test "$created_ns" -ge $((before_start - 1000000000)) &&
	test "$created_ns" -le $((after_start + 1000000000)) &&
	test "$(cat "$MNT/proc/$PID/threads/$PID/creation_time")" = "$created" &&
	t=$(cat "$MNT/proc/$PID/threads/$BUSY/creation_time") &&
	test "$t" -ge "$created" &&
	test "$t" -le $((created + (after_start - before_start) / 100 + 10000000))
'

test_expect_success 'creation_time is the same at every read' '
	a=$(cat "$MNT/proc/1/creation_time") &&
	b=$(cat "$MNT/proc/$PID/threads/$SLEEPER/creation_time") &&
	echo "process 1: $a, sleeping thread: $b" &&
	test "$a" -gt 0 && test "$b" -gt "$a" &&
	for i in $(seq 1 20); do
		test "$(cat "$MNT/proc/1/creation_time")" = "$a" &&
		test "$(cat "$MNT/proc/$PID/threads/$SLEEPER/creation_time")" = "$b" ||
		return 1
	done
'

test_expect_success 'exit_time is 0 for running tasks' '
	test "$(cat "$MNT/proc/$PID/exit_time")" = 0 &&
	test "$(cat "$MNT/proc/$PID/threads/$BUSY/exit_time")" = 0 &&
	grep -x "exit_time 0" "$MNT/proc/$PID/threads/$SLEEPER/times"
'

test_expect_success 'counters never go backwards over many reads' '
	last_t=0 last_p=0 last_k=0 last_u=0 last_i=0 &&
	for i in $(seq 1 300); do
		read -r t <"$MNT/proc/$PID/threads/$BUSY/cycles" &&
		read -r p <"$MNT/proc/$PID/cycles" &&
		read -r k <"$MNT/proc/$PID/kernel_time" &&
		read -r u <"$MNT/proc/$PID/user_time" &&
		read -r idle <"$MNT/groups/0/cpu0/idle_cycles" &&
		test "$t" -ge "$last_t" && test "$p" -ge "$last_p" &&
		test "$k" -ge "$last_k" && test "$u" -ge "$last_u" &&
		test "$idle" -ge "$last_i" || {
			echo "read $i: $t $p $k $u $idle after" \
				"$last_t $last_p $last_k $last_u $last_i"
			return 1
		}
		last_t=$t last_p=$p last_k=$k last_u=$u last_i=$idle || return 1
	done &&
	test "$last_t" -gt 0 && test "$last_i" -gt 0
'

# The kernel's own count, read before and after the file, bounds it:
# with proc_stat as the source, /proc/stat's idle + iowait, to a tick;
# with cpuidle, the sum of the processor's idle states' residencies
# (µs), to a microsecond. The two measures of idle time are not the
# same: on a VM that was paused once, /proc/stat's ticks accounted for
# 2,599 s of 2,658 s up, and its idle + iowait was 1.2% below the
# residencies' sum, so neither bounds the other.
cpuidle_us() {
	local sum=0 f
	for f in /sys/devices/system/cpu/cpu$1/cpuidle/state*/time; do
		sum=$((sum + $(cat "$f"))) || return 1
	done &&
	echo $sum
}

test_expect_success 'idle cycles of each processor match the kernel'"'"'s count' '
	clk=$(getconf CLK_TCK) &&
	source=$(sed -n "s/^idle_source //p" "$MNT/info") &&
	echo "idle_source $source" &&
	for cpu in $(seq 0 $(($(nproc) - 1))); do
		if test "$source" = cpuidle
		then
			before=$(cpuidle_us $cpu) &&
			c=$(cat "$MNT/groups/0/cpu$cpu/idle_cycles") &&
			after=$(cpuidle_us $cpu) &&
			awk -v c="$c" -v lo="$before" -v hi="$after" -v hz="$HZ" \
				-v cpu="$cpu" "BEGIN {
				us = c * 1e6 / hz
				printf \"cpu%d: residencies %d..%d us, file %.0f us\n\",
					cpu, lo, hi, us
				exit !(c > 0 && us >= lo - 1 && us <= hi + 1)
			}"
		else
			set -- $(grep "^cpu$cpu " /proc/stat) &&
			before=$(($5 + $6)) &&
			c=$(cat "$MNT/groups/0/cpu$cpu/idle_cycles") &&
			set -- $(grep "^cpu$cpu " /proc/stat) &&
			after=$(($5 + $6)) &&
			ticks=$((c / (HZ / clk))) &&
			echo "cpu$cpu: /proc/stat $before..$after ticks, file $ticks" &&
			test "$ticks" -gt 0 &&
			test "$ticks" -ge $((before - 1)) &&
			test "$ticks" -le $((after + 1))
		fi || return 1
	done
'

test_expect_success 'groups/0/idle_cycles has a line per online CPU' '
	cut -d" " -f1 "$MNT/groups/0/idle_cycles" >actual &&
	ls "$MNT/groups/0" | grep "^cpu[0-9]" | sort -V >expect &&
	test_cmp expect actual &&
	test "$(wc -l <actual)" = "$(nproc)"
'

test_expect_success 'groups/0/cpus is the online CPUs here' '
	test "$(sed -n "s/^group_count //p" "$MNT/info")" = 1 &&
	test "$(cat "$MNT/groups/0/cpus")" = \
		"$(cat /sys/devices/system/cpu/online)"
'

test_expect_success 'proc/self is the reader, as a relative link' '
	out=$(sh -c "echo \$\$; exec readlink \"$MNT/proc/self\"") &&
	set -- $out &&
	test "$1" = "$2" &&
	a=$(readlink "$MNT/proc/self") && b=$(readlink "$MNT/proc/self") &&
	test "$a" != "$b" &&
	test "$(stat -c %F "$MNT/proc/self")" = "symbolic link" &&
	sh -c "exec cat \"$MNT/proc/self/exit_time\"" >out && test "$(cat out)" = 0
'

test_expect_success 'proc/self in a thread is its process' '
	out=$("$BIN/helper-threads" "$MNT/proc/self") &&
	echo "$out" &&
	set -- $out &&
	test $# = 3 &&
	test "$1" = "$2" && test "$1" = "$3"
'

test_expect_success 'groups/current is the group of the reader' '
	for cpu in $(seq 0 $(($(nproc) - 1))); do
		target=$(taskset -c "$cpu" readlink "$MNT/groups/current") &&
		echo "cpu$cpu: groups/$target" &&
		grep -qx "$cpu" "$MNT/groups/$target"/cpu*/cpu || return 1
	done
'

test_expect_success 'proc/PID belongs to the owner of /proc/PID' '
	for p in 1 "$PID" "$$"; do
		test "$(stat -c %u:%g "$MNT/proc/$p")" = \
			"$(stat -c %u:%g "/proc/$p")" || return 1
	done &&
	test "$(stat -c %u:%g "$MNT/proc/$PID/threads/$BUSY/cycles")" = \
		"$(stat -c %u:%g "/proc/$PID")"
'

# setpriv sets the owner, then runs sleep: wait for that.
test_expect_success SETPRIV 'a process of another owner is theirs' '
	{ setpriv --reuid=65534 --regid=65534 --clear-groups sleep 30 & } &&
	other=$! &&
	test_when_finished "stop_pid $other" &&
	wait_owner "$other" 65534 &&
	test "$(stat -c %u:%g "/proc/$other")" = 65534:65534 &&
	owner=$(stat -c %u:%g "$MNT/proc/$other/cycles") &&
	echo "owner $owner" &&
	test "$owner" = 65534:65534
'

# Opened while the task runs; read after it exited (and after the
# attribute timeout, so that fstat asks the daemon): the snapshot. The
# helper is ended and reaped here, by the shell that started it. Fd 3,
# the process file this shell holds open, is read by the next test.
# New opens are made at once, while its number is surely free.
test_expect_success 'setup: files held open while their task exits' '
	mkfifo "$TRASH/hold-in" &&
	{
		"$BIN/helper-io" hold "$MNT/proc/$PID/threads/$BUSY/times" \
			<"$TRASH/hold-in" >"$TRASH/held" 2>&1 &
	} &&
	HOLDER=$! &&
	kill_at_exit "$HOLDER" &&
	exec 8>"$TRASH/hold-in" &&
	exec 3<"$MNT/proc/$PID/cycles" &&
	wait_file "$TRASH/held" &&
	kill "$HELPER" &&
	test_expect_code 143 wait "$HELPER" &&
	"$BIN/helper-io" errno read "$MNT/proc/$PID/cycles" >gone.cycles &&
	"$BIN/helper-io" errno read "$MNT/proc/$PID/threads/$BUSY/times" \
		>gone.times &&
	sleep 1.2 &&
	echo go >&8 &&
	exec 8>&- &&
	wait "$HOLDER"
'

test_expect_success 'a file kept open across its task exit reads its snapshot' '
	test_when_finished "exec 3<&-" &&
	test "$(start_of "$PID")" != "$HELPER_START" &&
	cat held &&
	grep -x "mode 100444 uid 0" held &&
	grep "^cycles [1-9][0-9]*$" held &&
	grep -x "exit_time 0" held &&
	read -r snapshot <&3 &&
	test "$snapshot" -gt 0
'

test_expect_success 'a task gone is ENOENT at open, and leaves the tree' '
	echo ENOENT >expect &&
	test_cmp expect gone.cycles &&
	test_cmp expect gone.times &&
	number_free "$PID" &&
	{ wait_for 10 gone_from_mount "$PID" || { echo "stat: $r"; false; }; } &&
	test "$r" = ENOENT &&
	! ls "$MNT/proc" | grep -x "$PID"
'

# A big process: 2,000 threads (their start, up to 30 s on a loaded
# machine). Who each is comes from its own status, so its threads/
# lists exactly what the kernel lists, and a listing read from any
# offset lands on an entry or at its end.
test_expect_success 'setup: a process of 2,000 threads' '
	start_many 2000 "$TRASH/many"
'

test_expect_success 'a process of 2,000 threads: threads/ is its task/' '
	ls "/proc/$MANY/task" | sort -n >expect &&
	test "$(wc -l <expect)" = 2000 &&
	ls "$MNT/proc/$MANY/threads" | sort -n >actual &&
	test_cmp expect actual
'

test_expect_success 'its threads read: the last one listed, and its times' '
	tid=$(tail -n 1 expect) &&
	grep -x "cycles [0-9]*" "$MNT/proc/$MANY/threads/$tid/times" &&
	test "$(stat -c %u "$MNT/proc/$MANY/threads/$tid")" = "$(id -u)"
'

# kernel_time + user_time is cycles as time, to one unit of rounding
# of each: cycles * 10^7 / tsc_hz in 100-ns units.
test_expect_success 'its threads.table: every thread, each line consistent' '
	{ read -r header && cat >rows; } <"$MNT/proc/$MANY/threads.table" &&
	test "$header" = "$TABLE_HEADER" &&
	cut -d" " -f2 rows | sort -n >tids &&
	test_cmp expect tids &&
	test -z "$(cut -d" " -f1 rows | sort -u | grep -vx "$MANY")" &&
	awk -v hz="$HZ" "
		NF != 8 || \$7 != 0 { print \"bad line: \" \$0; bad = 1 }
		{ t = \$3 * 1e7 / hz; d = \$4 + \$5 - t; if (d < 0) d = -d;
		  if (d > 2 + t * 1e-9) { print \"inconsistent: \" \$0; bad = 1 } }
		END { exit bad }" rows
'

test_expect_success 'proc/table: every process, the big one whole' '
	grep -c "^$MANY " "$MNT/proc/table" >count &&
	test "$(cat count)" = 2000 &&
	grep -q "^$$ $$ " "$MNT/proc/table" &&
	test "$(head -n 1 "$MNT/proc/table")" = "$TABLE_HEADER"
'

test_expect_success 'readdir from every offset lands on an entry or ends' '
	"$BIN/helper-dirseek" "$MNT/proc/$MANY/threads" >out &&
	test "$(cat out)" = "2002 entries" &&
	"$BIN/helper-dirseek" "$MNT/proc" &&
	"$BIN/helper-dirseek" "$MNT/groups/0" &&
	"$BIN/helper-dirseek" "$MNT"
'

test_expect_success 'the daemon exits 0 at the unmount' '
	unmount_timingfs &&
	echo "exit status $TFS_STATUS" &&
	cat "$TRASH/TFS.err" &&
	test "$TFS_STATUS" = 0
'
test_done
