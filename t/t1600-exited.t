#!/bin/bash
# Exited tasks: a process or thread that exits stays readable for
# [exited] keep seconds, with its exit instant and final times, from the
# kernel's taskstats exit records. The helpers say when they told a task
# to exit and when they reaped it, and the exit_time must fall between;
# the CPU time they burnt is measured by the kernel's own clocks.
. "$(dirname "$0")/test-lib.sh"
require_fuse

[ "$(id -u)" = 0 ] || skip_all "not root: taskstats needs CAP_NET_ADMIN"

write_config "$TRASH/keep.conf" format.units=unix exited.keep=2
mount_timingfs "$TRASH/keep.conf" || exit 1
if grep -q "no taskstats in this kernel" "$TRASH/TFS.err"; then
	skip_all "this kernel has no taskstats: $(cat "$TRASH/TFS.err")"
fi
HZ=$(sed -n "s/^tsc_hz //p" "$MNT/info")
export HZ

# kept DIR: up to 1 s for DIR's exit_time to be set (the record is read
# by the daemon's listener, a moment after the kernel sent it).
kept() {
	local i t
	for i in $(seq 1 100); do
		t=$(cat "$1/exit_time" 2>/dev/null) && [ "$t" != 0 ] && return 0
		sleep 0.01
	done
	return 1
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
# first line of NAME.out; child_reap NAME: tell it to exit, and reap it.
child_start() {
	"$BIN/helper-exit" child "$2" "$TRASH/go.$1" >"$TRASH/$1.out" &
	echo $! >"$TRASH/$1.helper"
	wait_file "$TRASH/$1.out"
}

child_reap() {
	touch "$TRASH/go.$1"
	wait "$(cat "$TRASH/$1.helper")"
}
export -f kept value near consistent

test_expect_success 'info: exit_source taskstats, keep, and the counts' '
	cat "$MNT/info" >info &&
	grep -x "exit_source taskstats" info &&
	grep -x "exit_keep 2" info &&
	grep -Ex "exit_retained [0-9]+" info &&
	grep -Ex "exit_dropped [0-9]+" info &&
	grep -Ex "exit_lost [0-9]+" info
'

"$BIN/helper-exit" child 300 "$TRASH/go.child" >"$TRASH/child.out" &
kill_at_exit $!
CHILD_HELPER=$!
wait_file "$TRASH/child.out"
CHILD=$(head -n 1 "$TRASH/child.out")
CHILD_CT=$(cat "$MNT/proc/$CHILD/creation_time")
CHILD_ET=$(cat "$MNT/proc/$CHILD/exit_time")
touch "$TRASH/go.child"
wait $CHILD_HELPER
read -r T1 T2 < <(sed -n 2p "$TRASH/child.out")
kept "$MNT/proc/$CHILD" &&
	cat "$MNT/proc/$CHILD/times" >"$TRASH/child.times" &&
	cat "$MNT/proc/$CHILD/threads/$CHILD/times" >"$TRASH/child.thread" &&
	ls "$MNT/proc" >"$TRASH/child.ls" &&
	cat "$MNT/proc/table" >"$TRASH/child.table"
EXITED_AT=$(date +%s%N)
export CHILD CHILD_CT CHILD_ET T1 T2 EXITED_AT

test_expect_success 'a child that exited: its exit_time, between stop and reap' '
	echo "alive: exit_time $CHILD_ET; stop $T1, reap $T2" &&
	cat child.times &&
	test "$CHILD_ET" = 0 &&
	et=$(value child.times exit_time) &&
	test "$et" -ge "$T1" && test "$et" -le "$T2"
'

test_expect_success 'its cycles are the 0.3 s it burnt, within 5%' '
	near "$(value child.times cycles)" 300000000 5
'

test_expect_success 'kernel + user == cycles as time; creation_time unchanged' '
	consistent child.times &&
	test "$(value child.times creation_time)" = "$CHILD_CT"
'

test_expect_success 'its one thread reads the same, and it is listed' '
	test_cmp child.times child.thread &&
	grep -x "$CHILD" child.ls &&
	awk -v p="$CHILD" -v et="$(value child.times exit_time)" \
		"\$1 == p && \$2 == p && \$7 == et { n++ } END { exit n != 1 }" \
		child.table
'

test_expect_success 'a write to a kept task is refused: EROFS' '
	test "$($BIN/helper-io errno write "$MNT/proc/$CHILD/cycles")" = EROFS
'

test_expect_success 'gone after keep seconds: ENOENT, and unlisted' '
	now=$(date +%s%N) &&
	left=$(( (EXITED_AT + 3500000000 - now) / 1000000 )) &&
	if [ "$left" -gt 0 ]; then sleep "$(awk -v m=$left "BEGIN { print m / 1000 }")"; fi &&
	test "$($BIN/helper-io errno read "$MNT/proc/$CHILD/cycles")" = ENOENT &&
	test "$($BIN/helper-io errno stat "$MNT/proc/$CHILD")" = ENOENT &&
	! ls "$MNT/proc" | grep -x "$CHILD" &&
	! awk "\$1 == $CHILD" "$MNT/proc/table" | grep .
'

"$BIN/helper-exit" thread 300 "$TRASH/go.thread" >"$TRASH/thread.out" &
THREAD_HELPER=$!
kill_at_exit $THREAD_HELPER
wait_file "$TRASH/thread.out"
read -r PID TID <"$TRASH/thread.out"
TID_CT=$(cat "$MNT/proc/$PID/threads/$TID/creation_time")
touch "$TRASH/go.thread"
wait_file "$TRASH/thread.out" 2
read -r U1 U2 < <(sed -n 2p "$TRASH/thread.out")
kept "$MNT/proc/$PID/threads/$TID" &&
	cat "$MNT/proc/$PID/threads/$TID/times" >"$TRASH/thread.times" &&
	cat "$MNT/proc/$PID/times" >"$TRASH/process.times" &&
	ls "$MNT/proc/$PID/threads" >"$TRASH/thread.ls" &&
	cat "$MNT/proc/$PID/threads.table" >"$TRASH/thread.table"
touch "$TRASH/go.thread.end"
wait $THREAD_HELPER
export PID TID TID_CT U1 U2

test_expect_success 'a thread that exited in a live process: its exit_time' '
	cat thread.times &&
	et=$(value thread.times exit_time) &&
	test "$et" -ge "$U1" && test "$et" -le "$U2" &&
	near "$(value thread.times cycles)" 300000000 5 &&
	consistent thread.times &&
	test "$(value thread.times creation_time)" = "$TID_CT"
'

test_expect_success 'it is listed under threads/ and in threads.table' '
	grep -x "$TID" thread.ls && grep -x "$PID" thread.ls &&
	awk -v t="$TID" -v et="$(value thread.times exit_time)" \
		"\$2 == t && \$7 == et { n++ } END { exit n != 1 }" thread.table &&
	awk -v p="$PID" "\$2 == p && \$7 == 0 { n++ } END { exit n != 1 }" \
		thread.table
'

test_expect_success 'the live process counts its exited thread, and runs on' '
	cat process.times &&
	test "$(value process.times exit_time)" = 0 &&
	test "$(value process.times cycles)" -ge "$(value thread.times cycles)"
'

"$BIN/helper-exit" group 100 "$TRASH/go.group" >"$TRASH/group.out" &
GROUP_HELPER=$!
kill_at_exit $GROUP_HELPER
wait_file "$TRASH/group.out"
read -r GPID GTID <"$TRASH/group.out"
touch "$TRASH/go.group"
wait $GROUP_HELPER
kept "$MNT/proc/$GPID" &&
	cat "$MNT/proc/$GPID/times" >"$TRASH/group.times" &&
	cat "$MNT/proc/$GPID/threads/$GPID/cycles" >"$TRASH/group.main" &&
	cat "$MNT/proc/$GPID/threads/$GTID/cycles" >"$TRASH/group.second" &&
	ls "$MNT/proc/$GPID/threads" >"$TRASH/group.ls"
export GPID GTID

test_expect_success 'a process of two threads: its totals from the group record' '
	cat group.times group.main group.second &&
	sum=$(( $(cat group.main) + $(cat group.second) )) &&
	c=$(value group.times cycles) &&
	test $((c - sum)) -le 2 && test $((sum - c)) -le 2 &&
	near "$c" 300000000 5 &&
	consistent group.times &&
	printf "%s\n" "$GPID" "$GTID" | sort >expect &&
	sort group.ls >actual && test_cmp expect actual
'

test_expect_success 'a number taken again while kept: the live task shows' '
	child_start reused 10
	old=$(head -n 1 reused.out)
	child_reap reused
	kept "$MNT/proc/$old"
	old_ct=$(cat "$MNT/proc/$old/creation_time")
	"$BIN/helper-exit" reuse "$old" >reuse.out &
	r=$!
	wait_file reuse.out
	test "$(cat reuse.out)" = "$old"
	cat "$MNT/proc/$old/times" >new.times
	ls "$MNT/proc/$old/threads" >new.ls
	kill_tree $r
	cat new.times
	test "$(value new.times exit_time)" = 0
	test "$(value new.times creation_time)" != "$old_ct"
	echo "$old" >expect && test_cmp expect new.ls
'

test_expect_success 'a task of a PID namespace: kept under its numbers there' '
	unshare -p -f --mount-proc bash -c "
		\$BIN/helper-exit child 100 \$TRASH/go.ns >\$TRASH/ns.out &
		h=\$!
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

test_expect_success 'a kept task of the host is no task of a namespace' '
	child_start host 10
	c=$(head -n 1 host.out)
	child_reap host
	kept "$MNT/proc/$c"
	test "$($BIN/helper-io errno stat "$MNT/proc/$c")" = OK
	r=$(unshare -p -f --mount-proc "$BIN/helper-io" errno stat "$MNT/proc/$c")
	test "$r" = ENOENT
'

unmount_timingfs
test_expect_success 'the daemon exited 0 after the unmount' '
	test "$TFS_STATUS" = 0
'

write_config "$TRASH/burst.conf" format.units=unix exited.max_tasks=1000

# rss: the daemon's resident set, in KiB.
rss() {
	sed -n "s/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p" "/proc/$TFS_PID/status"
}

test_expect_success 'a burst of 20,000 tasks: 1,000 kept, the memory flat' '
	mount_timingfs "$TRASH/burst.conf"
	"$BIN/helper-exit" threads 20000 </dev/null >warm.out
	sleep 0.5
	before=$(rss)
	"$BIN/helper-exit" threads 20000 </dev/null >burst.out
	sleep 0.5
	after=$(rss)
	read -r pid first last <burst.out
	cat "$MNT/info" >info
	grep "^exit_" info
	echo "RSS $before KiB, then $after KiB"
	grep -x "exit_retained 1000" info
	test "$(value info exit_dropped)" -ge 18000
	test $((after - before)) -lt 256
	test "$(cat "$MNT/proc/$pid/threads/$last/exit_time")" -gt 0
	test "$($BIN/helper-io errno stat "$MNT/proc/$pid/threads/$first")" = ENOENT
	unmount_timingfs
'

test_expect_success 'hidepid=invisible: a kept task exists for its owner alone' '
	command -v setpriv >/dev/null
	nobody=$(id -u nobody)
	chmod 755 "$TRASH"
	write_config invisible.conf access.hidepid=invisible exited.keep=30
	mount_timingfs invisible.conf -o allow_other
	child_start mine 10
	mine=$(head -n 1 mine.out)
	child_reap mine
	setpriv --reuid=$nobody --regid=$nobody --clear-groups \
		"$BIN/helper-exit" child 10 "$TRASH/go.theirs" >theirs.out &
	h=$!
	wait_file theirs.out
	theirs=$(head -n 1 theirs.out)
	touch "$TRASH/go.theirs"
	wait $h
	kept "$MNT/proc/$mine"
	kept "$MNT/proc/$theirs"
	as_nobody() {
		setpriv --reuid=$nobody --regid=$nobody --clear-groups "$@"
	}
	test "$(as_nobody "$BIN/helper-io" errno stat "$MNT/proc/$theirs")" = OK
	test "$(as_nobody "$BIN/helper-io" errno stat "$MNT/proc/$mine")" = ENOENT
	as_nobody ls "$MNT/proc" >listed
	grep -x "$theirs" listed
	! grep -x "$mine" listed
	as_nobody cat "$MNT/proc/table" >table
	awk -v p="$theirs" "\$1 == p { n++ } END { exit n != 1 }" table
	! awk -v p="$mine" "\$1 == p" table | grep .
	test "$(stat -c %u "$MNT/proc/$theirs")" = "$nobody"
	unmount_timingfs
'

test_expect_success 'keep = 0: exit_source none, an exited task ENOENT' '
	write_config keep0.conf exited.keep=0
	mount_timingfs keep0.conf
	grep -x "exit_source none" "$MNT/info"
	! grep "^exit_keep" "$MNT/info"
	child_start k0 10
	c=$(head -n 1 k0.out)
	test "$(cat "$MNT/proc/$c/exit_time")" = 0
	child_reap k0
	test "$($BIN/helper-io errno stat "$MNT/proc/$c")" = ENOENT
	unmount_timingfs
'

test_expect_success 'without CAP_NET_ADMIN: exit_source none, and why' '
	command -v setpriv >/dev/null
	printf "#!/bin/sh\nexec setpriv --inh-caps=-net_admin --bounding-set=-net_admin %s \"\$@\"\n" \
		"$TIMINGFS" >nocap-timingfs
	chmod +x nocap-timingfs
	TIMINGFS=$TRASH/nocap-timingfs
	start_timingfs -c "$TRASH/keep.conf"
	grep -x "exit_source none" "$MNT/info"
	grep "CAP_NET_ADMIN" "$TRASH/TFS.err"
	child_start nocap 10
	c=$(head -n 1 nocap.out)
	child_reap nocap
	test "$($BIN/helper-io errno stat "$MNT/proc/$c")" = ENOENT
	unmount_timingfs
	test "$TFS_STATUS" = 0
'

test_done
