#!/bin/bash
test_description='Exited tasks: a process or thread that exits stays
readable for [exited] keep seconds, with its exit instant and final
times, from the exit records of the kernel (taskstats). The helpers say
when they told a task to exit and when they reaped it, and the exit_time
must fall between; the CPU time they burnt is measured by the clocks of
the kernel.'
TEST_OTHER_USERS=1 # a test reads as nobody: a trash it reaches
. "$(dirname "$0")/test-lib.sh"
require_fuse

[ "$(id -u)" = 0 ] || skip_all "not root: taskstats needs CAP_NET_ADMIN"

# kept DIR: up to 10 s (a margin for a loaded machine) for DIR's
# exit_time to be set (the record is read by the daemon's listener, a
# moment after the kernel sent it); says so when it is not.
kept() {
	local t
	test_poll_ 10 has_exit_time "$1" && return 0
	echo "waited 10 s for $1 to have an exit_time; it has: ${t:-none}" >&2
	return 1
}

# has_exit_time DIR: DIR's exit_time is set; what it read left in $t.
has_exit_time() {
	t=$(cat "$1/exit_time" 2>/dev/null) && [ "$t" != 0 ]
}

# value FILE KEY: KEY's value in a "key value" FILE.
value() {
	sed -n "s/^$2 //p" "$1"
}

# near CYCLES NS PERCENT: CYCLES, as time, is within PERCENT of NS.
near() {
	awk -v c="$1" -v ns="$2" -v p="$3" -v hz="$HZ" 'BEGIN {
		t = c / hz * 1e9; d = t - ns; if (d < 0) d = -d
		print "cycles as ns " t ", want " ns
		exit !(d <= ns * p / 100)
	}'
}

# consistent TIMES: kernel + user == cycles as time, to a unit each.
consistent() {
	awk -v hz="$HZ" '
		{ v[$1] = $2 }
		END {
			t = v["cycles"] * 1e9 / hz; s = v["kernel_time"] + v["user_time"]
			d = t - s; if (d < 0) d = -d
			exit !(d <= 2 + t * 1e-9)
		}' "$1"
}

# child_start NAME MS: helper-exit's child burning MS ms, its pid the
# first line of NAME.out; child_reap NAME: tell it to exit, and reap it
# (the helper's status).
child_start() {
	local pid
	"$BIN/helper-exit" child "$2" "$TRASH/go.$1" >"$TRASH/$1.out" &
	pid=$!
	kill_at_exit "$pid"
	echo "$pid" >"$TRASH/$1.helper" &&
	wait_file "$TRASH/$1.out"
}

child_reap() {
	local pid
	pid=$(cat "$TRASH/$1.helper") &&
	touch "$TRASH/go.$1" &&
	wait "$pid"
}

# number_free PID: no process has the number PID. When one has, it was
# taken again (pid_max may be 32768, and other jobs run here): a test of
# the task that had it can tell nothing, and says why.
number_free() {
	test ! -d "/proc/$1" && return 0
	echo "pid $1 was taken again: $(cat "/proc/$1/comm" 2>/dev/null)" >&2
	return 1
}

# stop_pid PID: end a helper a test started, with what it started, and
# reap it; for test_when_finished, so never a failure.
stop_pid() {
	kill_tree "$1"
	wait "$1" 2>/dev/null
	return 0
}

# rss: the daemon's resident set, in KiB.
rss() {
	sed -n "s/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p" "/proc/$(server_of "$TFS_PID")/status"
}

# as_nobody CMD...: CMD as the user nobody, without root's groups.
as_nobody() {
	setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups "$@"
}

# The shell of the PID namespace test calls it (and wait_file).
export -f kept has_exit_time

# Without taskstats in the kernel there are no exit records: the tests
# that need them have the prerequisite TASKSTATS.
test_expect_success 'setup: mounted, exited tasks kept 2 s' '
	write_config "$TRASH/keep.conf" format.units=unix exited.keep=2 &&
	mount_timingfs "$TRASH/keep.conf" &&
	HZ=$(sed -n "s/^tsc_hz //p" "$MNT/info") &&
	test "$HZ" -gt 0 &&
	if grep "no taskstats in this kernel" "$TRASH/TFS.err"; then
		echo "no exit records: the tests of kept tasks are skipped"
	else
		test_set_prereq TASKSTATS
	fi
'

test_expect_success TASKSTATS 'info: exit_source taskstats, keep, and the counts' '
	cat "$MNT/info" >info &&
	grep -x "exit_source taskstats" info &&
	grep -x "exit_keep 2" info &&
	grep -Ex "exit_retained [0-9]+" info &&
	grep -Ex "exit_dropped [0-9]+" info &&
	grep -Ex "exit_lost [0-9]+" info
'

# What the tests of a child read, read at once, while it is kept: the
# tests after this one may take longer than the 2 s it is kept.
test_expect_success TASKSTATS 'setup: a child that burnt 0.3 s, exited' '
	child_start child 300 &&
	CHILD=$(head -n 1 child.out) &&
	CHILD_CT=$(cat "$MNT/proc/$CHILD/creation_time") &&
	CHILD_ET=$(cat "$MNT/proc/$CHILD/exit_time") &&
	child_reap child &&
	{ read -r _ && read -r T1 T2; } <child.out &&
	kept "$MNT/proc/$CHILD" &&
	cat "$MNT/proc/$CHILD/times" >child.times &&
	cat "$MNT/proc/$CHILD/threads/$CHILD/times" >child.thread &&
	ls "$MNT/proc" >child.ls &&
	cat "$MNT/proc/table" >child.table &&
	$BIN/helper-io errno write "$MNT/proc/$CHILD/cycles" >child.write &&
	EXITED_AT=$(date +%s%N)
'

test_expect_success TASKSTATS 'a child that exited: its exit_time, between stop and reap' '
	echo "alive: exit_time $CHILD_ET; stop $T1, reap $T2" &&
	cat child.times &&
	test "$CHILD_ET" = 0 &&
	et=$(value child.times exit_time) &&
	test "$et" -ge "$T1" && test "$et" -le "$T2"
'

test_expect_success TASKSTATS 'its cycles are the 0.3 s it burnt, within 5%' '
	near "$(value child.times cycles)" 300000000 5
'

test_expect_success TASKSTATS 'kernel + user == cycles as time; creation_time unchanged' '
	consistent child.times &&
	test "$(value child.times creation_time)" = "$CHILD_CT"
'

test_expect_success TASKSTATS 'its one thread reads the same, and it is listed' '
	test_cmp child.times child.thread &&
	grep -x "$CHILD" child.ls &&
	awk -v p="$CHILD" -v et="$(value child.times exit_time)" \
		"\$1 == p && \$2 == p && \$7 == et { n++ } END { exit n != 1 }" \
		child.table
'

test_expect_success TASKSTATS 'a write to a kept task is refused: EROFS' '
	echo EROFS >expect &&
	test_cmp expect child.write
'

test_expect_success TASKSTATS 'gone after keep seconds: ENOENT, and unlisted' '
	now=$(date +%s%N) &&
	left=$(( (EXITED_AT + 3500000000 - now) / 1000000 )) &&
	if [ "$left" -gt 0 ]; then sleep "$(awk -v m=$left "BEGIN { print m / 1000 }")"; fi &&
	number_free "$CHILD" &&
	test "$($BIN/helper-io errno read "$MNT/proc/$CHILD/cycles")" = ENOENT &&
	test "$($BIN/helper-io errno stat "$MNT/proc/$CHILD")" = ENOENT &&
	! ls "$MNT/proc" | grep -x "$CHILD" &&
	! awk "\$1 == $CHILD" "$MNT/proc/table" | grep .
'

test_expect_success TASKSTATS 'setup: a thread that burnt 0.3 s exited, its process runs' '
	{ "$BIN/helper-exit" thread 300 "$TRASH/go.thread" >thread.out & } &&
	THREAD_HELPER=$! &&
	kill_at_exit "$THREAD_HELPER" &&
	wait_file thread.out &&
	read -r PID TID <thread.out &&
	TID_CT=$(cat "$MNT/proc/$PID/threads/$TID/creation_time") &&
	touch go.thread &&
	wait_file thread.out 2 &&
	{ read -r _ && read -r U1 U2; } <thread.out &&
	kept "$MNT/proc/$PID/threads/$TID" &&
	cat "$MNT/proc/$PID/threads/$TID/times" >thread.times &&
	cat "$MNT/proc/$PID/times" >process.times &&
	ls "$MNT/proc/$PID/threads" >thread.ls &&
	cat "$MNT/proc/$PID/threads.table" >thread.table &&
	touch go.thread.end &&
	wait "$THREAD_HELPER"
'

test_expect_success TASKSTATS 'a thread that exited in a live process: its exit_time' '
	cat thread.times &&
	et=$(value thread.times exit_time) &&
	test "$et" -ge "$U1" && test "$et" -le "$U2" &&
	near "$(value thread.times cycles)" 300000000 5 &&
	consistent thread.times &&
	test "$(value thread.times creation_time)" = "$TID_CT"
'

test_expect_success TASKSTATS 'it is listed under threads/ and in threads.table' '
	grep -x "$TID" thread.ls && grep -x "$PID" thread.ls &&
	awk -v t="$TID" -v et="$(value thread.times exit_time)" \
		"\$2 == t && \$7 == et { n++ } END { exit n != 1 }" thread.table &&
	awk -v p="$PID" "\$2 == p && \$7 == 0 { n++ } END { exit n != 1 }" \
		thread.table
'

test_expect_success TASKSTATS 'the live process counts its exited thread, and runs on' '
	cat process.times &&
	test "$(value process.times exit_time)" = 0 &&
	test "$(value process.times cycles)" -ge "$(value thread.times cycles)"
'

test_expect_success TASKSTATS 'setup: a process of two threads exited' '
	{ "$BIN/helper-exit" group 100 "$TRASH/go.group" >group.out & } &&
	GROUP_HELPER=$! &&
	kill_at_exit "$GROUP_HELPER" &&
	wait_file group.out &&
	read -r GPID GTID <group.out &&
	touch go.group &&
	wait "$GROUP_HELPER" &&
	kept "$MNT/proc/$GPID" &&
	cat "$MNT/proc/$GPID/times" >group.times &&
	cat "$MNT/proc/$GPID/threads/$GPID/cycles" >group.main &&
	cat "$MNT/proc/$GPID/threads/$GTID/cycles" >group.second &&
	ls "$MNT/proc/$GPID/threads" >group.ls
'

test_expect_success TASKSTATS 'a process of two threads: its totals from the group record' '
	cat group.times group.main group.second &&
	sum=$(( $(cat group.main) + $(cat group.second) )) &&
	c=$(value group.times cycles) &&
	test $((c - sum)) -le 2 && test $((sum - c)) -le 2 &&
	near "$c" 300000000 5 &&
	consistent group.times &&
	printf "%s\n" "$GPID" "$GTID" | sort >expect &&
	sort group.ls >actual && test_cmp expect actual
'

# helper-exit reuse makes a child of the number given (clone3's
# set_tid), while timingfs still keeps the task that had it.
test_expect_success TASKSTATS 'a number taken again while kept: the live task shows' '
	child_start reused 10 &&
	old=$(head -n 1 reused.out) &&
	child_reap reused &&
	kept "$MNT/proc/$old" &&
	old_ct=$(cat "$MNT/proc/$old/creation_time") &&
	{ "$BIN/helper-exit" reuse "$old" >reuse.out & } &&
	r=$! &&
	test_when_finished "stop_pid $r" &&
	wait_file reuse.out &&
	test "$(cat reuse.out)" = "$old" &&
	cat "$MNT/proc/$old/times" >new.times &&
	ls "$MNT/proc/$old/threads" >new.ls &&
	cat new.times &&
	test "$(value new.times exit_time)" = 0 &&
	test "$(value new.times creation_time)" -gt "$old_ct" &&
	echo "$old" >expect &&
	test_cmp expect new.ls
'

test_expect_success TASKSTATS,UNSHARE 'a task of a PID namespace: kept under its numbers there' '
	unshare -p -f --mount-proc bash -c "
		{ \$BIN/helper-exit child 100 \$TRASH/go.ns >\$TRASH/ns.out & } &&
		h=\$! &&
		wait_file \$TRASH/ns.out && c=\$(head -n 1 \$TRASH/ns.out) &&
		ct=\$(cat \$MNT/proc/\$c/creation_time) &&
		touch \$TRASH/go.ns && wait \$h &&
		kept \$MNT/proc/\$c &&
		echo \$c \$ct \$(cat \$MNT/proc/\$c/exit_time) &&
		ls \$MNT/proc | grep -x \$c
	" >ns.seen &&
	cat ns.seen &&
	read -r nr ct et _ <ns.seen &&
	test "$nr" -lt 100 &&
	test "$et" -gt 0 &&
	host=$(grep -lx "$et" "$MNT"/proc/[0-9]*/exit_time | head -n 1) &&
	host=${host%/exit_time} &&
	echo "on the host: $host" &&
	test "$(cat "$host/creation_time")" = "$ct"
'

test_expect_success TASKSTATS,UNSHARE 'a kept task of the host is no task of a namespace' '
	child_start host 10 &&
	c=$(head -n 1 host.out) &&
	child_reap host &&
	kept "$MNT/proc/$c" &&
	test "$($BIN/helper-io errno stat "$MNT/proc/$c")" = OK &&
	r=$(unshare -p -f --mount-proc "$BIN/helper-io" errno stat "$MNT/proc/$c") &&
	test "$r" = ENOENT
'

test_expect_success 'the daemon exits 0 at the unmount' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

# The first 20,000 threads warm the daemon up; the second are measured.
# Each burst is taken in once the record of its process, which exits
# after all its threads, is kept. The memory may grow by less than 256
# KiB; under ASan, whose allocator holds freed blocks back in a
# quarantine before reusing them, by less than 1 MiB (a sanitized run
# in CI grew by 372 KiB once, where 7 others grew by 56 KiB at most).
RSS_SLACK=256
test_have_prereq ASAN && RSS_SLACK=1024
test_expect_success TASKSTATS 'a burst of 20,000 tasks: 1,000 kept, the memory flat' '
	test_when_finished unmount_timingfs &&
	write_config "$TRASH/burst.conf" format.units=unix exited.max_tasks=1000 &&
	mount_timingfs "$TRASH/burst.conf" &&
	"$BIN/helper-exit" threads 20000 </dev/null >warm.out &&
	read -r pid first last <warm.out &&
	kept "$MNT/proc/$pid" &&
	before=$(rss) &&
	"$BIN/helper-exit" threads 20000 </dev/null >burst.out &&
	read -r pid first last <burst.out &&
	kept "$MNT/proc/$pid" &&
	after=$(rss) &&
	cat "$MNT/info" >info &&
	grep "^exit_" info &&
	echo "RSS $before KiB, then $after KiB" &&
	test "$before" -gt 0 && test "$after" -gt 0 &&
	grep -x "exit_retained 1000" info &&
	test "$(value info exit_dropped)" -ge 18000 &&
	test $((after - before)) -lt "$RSS_SLACK" &&
	test "$(cat "$MNT/proc/$pid/threads/$last/exit_time")" -gt 0 &&
	test "$($BIN/helper-io errno stat "$MNT/proc/$pid/threads/$first")" = ENOENT &&
	unmount_timingfs
'

# nobody reads through a mount of root: allow_other, and a trash
# directory it may enter.
test_expect_success TASKSTATS,SETPRIV 'hidepid=invisible: a kept task exists for its owner alone' '
	test_when_finished unmount_timingfs &&
	NOBODY=$(id -u nobody) &&
	chmod 755 "$TRASH" &&
	write_config invisible.conf access.hidepid=invisible exited.keep=30 &&
	mount_timingfs invisible.conf -o allow_other &&
	child_start mine 10 &&
	mine=$(head -n 1 mine.out) &&
	child_reap mine &&
	{
		as_nobody "$BIN/helper-exit" child 10 "$TRASH/go.theirs" \
			>theirs.out &
	} &&
	h=$! &&
	kill_at_exit "$h" &&
	wait_file theirs.out &&
	theirs=$(head -n 1 theirs.out) &&
	touch "$TRASH/go.theirs" &&
	wait "$h" &&
	kept "$MNT/proc/$mine" &&
	kept "$MNT/proc/$theirs" &&
	test "$(as_nobody "$BIN/helper-io" errno stat "$MNT/proc/$theirs")" = OK &&
	test "$(as_nobody "$BIN/helper-io" errno stat "$MNT/proc/$mine")" = ENOENT &&
	as_nobody ls "$MNT/proc" >listed &&
	grep -x "$theirs" listed &&
	! grep -x "$mine" listed &&
	as_nobody cat "$MNT/proc/table" >table &&
	awk -v p="$theirs" "\$1 == p { n++ } END { exit n != 1 }" table &&
	! awk -v p="$mine" "\$1 == p" table | grep . &&
	test "$(stat -c %u "$MNT/proc/$theirs")" = "$NOBODY" &&
	unmount_timingfs
'

# The live task is seen in proc/table: a lookup of its own name would
# leave the kernel an entry of it for a second (FS_TIMEOUT_S), and a
# stat then would not ask the daemon.
test_expect_success 'keep = 0: exit_source none, an exited task ENOENT' '
	test_when_finished unmount_timingfs &&
	write_config keep0.conf exited.keep=0 &&
	mount_timingfs keep0.conf &&
	grep -x "exit_source none" "$MNT/info" &&
	! grep "^exit_keep" "$MNT/info" &&
	child_start k0 10 &&
	c=$(head -n 1 k0.out) &&
	awk -v p="$c" "\$1 == p && \$2 == p { print \$7 }" \
		"$MNT/proc/table" >alive &&
	echo 0 >expect &&
	test_cmp expect alive &&
	child_reap k0 &&
	test "$($BIN/helper-io errno stat "$MNT/proc/$c")" = ENOENT &&
	test "$($BIN/helper-io errno read "$MNT/proc/$c/exit_time")" = ENOENT &&
	unmount_timingfs
'

# The daemon runs through a wrapper that takes CAP_NET_ADMIN away; the
# assignment before start_timingfs holds for that call only.
test_expect_success TASKSTATS,SETPRIV 'without CAP_NET_ADMIN: exit_source none, and why' '
	test_when_finished unmount_timingfs &&
	printf "#!/bin/sh\nexec setpriv --inh-caps=-net_admin --bounding-set=-net_admin %q \"\$@\"\n" \
		"$TIMINGFS" >nocap-timingfs &&
	chmod +x nocap-timingfs &&
	TIMINGFS=$TRASH/nocap-timingfs start_timingfs -c "$TRASH/keep.conf" &&
	grep -x "exit_source none" "$MNT/info" &&
	grep "CAP_NET_ADMIN" "$TRASH/TFS.err" &&
	child_start nocap 10 &&
	c=$(head -n 1 nocap.out) &&
	child_reap nocap &&
	test "$($BIN/helper-io errno stat "$MNT/proc/$c")" = ENOENT &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_done
