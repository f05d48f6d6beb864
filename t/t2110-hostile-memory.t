#!/bin/bash
test_description='Hostile tenants: the memory a reader makes the daemon hold
is bounded, per reader ([limits] reader_snapshots) and in total
(total_snapshots). Four processes of one user, each holding 900 opens of
proc/table with a process of 1,000 threads on the machine, leave the
daemon under 160 MiB; their opens past the budget fail with ENOMEM
promptly, while root and another user read whole tables and value
files. A lowered budget takes effect; the total refuses every reader
but the host root; a bad value is a configuration error.'
TEST_OTHER_USERS=1 # the readers are other users: a trash they reach
# The hogs make the daemon render about 700 tables of 1,000 threads
# before they reach their budget: a minute or two on a loaded machine.
TEST_TIMEOUT=${TEST_TIMEOUT:-600}
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot read as other users"
test_have_prereq SETPRIV || skip_all "no setpriv (util-linux)"
# A sanitized build keeps shadow memory and freed blocks aside: its
# resident memory is no measure of the daemon's.

HOG=$((2110000000 + $$ % 100000))
OTHER=$((HOG + 1))
THIRD=$((HOG + 2))
MANY_THREADS=1000
HOLD_OPENS=900
RSS_MAX_KIB=$((160 * 1024))

as() {
	local uid=$1
	shift
	setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"
}

# hold UID N OUT: in the background, UID holds N opens of proc/table,
# its line in OUT; setpriv executes the helper, so that $! is the
# helper itself (a function run in the background would be a subshell,
# which a kill leaves the helper behind).
hold() {
	setpriv --reuid="$1" --regid="$1" --clear-groups \
		"$BIN/helper-hold" "$MNT/proc/table" "$2" >"$3" 2>"$3.err" &
}

# daemon_kib FIELD: the daemon's VmRSS or VmHWM, KiB.
daemon_kib() {
	sed -n "s/^$1:[^0-9]*\([0-9]*\).*/\1/p" "/proc/$(server_of "$TFS_PID")/status"
}

# hogs_reported N: all N hold.K.out have their line; meanwhile the
# daemon's peak stays under the bound (else it stops the wait: failed).
hogs_reported() {
	local k hwm
	hwm=$(daemon_kib VmHWM)
	if ! test_have_prereq ASAN && [ "$hwm" -gt "$RSS_MAX_KIB" ]; then
		echo "daemon VmHWM $hwm KiB, above $RSS_MAX_KIB, while the hogs opened"
		HOGS_OVER=1
		return 0
	fi
	for k in $(seq "$1"); do
		[ -s "hold.$k.out" ] || return 1
	done
}

# table_whole FILE PID N: FILE is a proc/table: the header, lines of 7
# integers and a name, N of them of process PID.
table_whole() {
	head -n 1 "$1" | grep -qx "$TABLE_HEADER" &&
	test "$(tail -n +2 "$1" | grep -cvEx "$TABLE_LINE")" = 0 &&
	test "$(grep -c "^$2 " "$1")" = "$3"
}

# field NAME FILE: the value after NAME in helper-hold's line.
field() {
	sed -n "s/.*\\<$1 \\([0-9]*\\).*/\\1/p" "$2"
}

test_expect_success 'setup: the live tree; a process of 1,000 threads' '
	write_config live.conf exited.keep=0 &&
	mount_timingfs live.conf -o allow_other &&
	start_many $MANY_THREADS many.out &&
	wait_for 20 test -e "$MNT/proc/$MANY/threads/$(ls /proc/$MANY/task | sort -n | tail -n 1)" &&
	cat "$MNT/proc/table" >table.root &&
	table_whole table.root "$MANY" $MANY_THREADS
'

test_expect_success 'four hogs of one user hold 900 opens of proc/table each: the daemon stays under 160 MiB, their opens past the budget fail with ENOMEM at once' '
	echo "daemon VmRSS before: $(daemon_kib VmRSS) KiB" &&
	started=$SECONDS &&
	HOGS= &&
	for k in 1 2 3 4; do
		hold $HOG $HOLD_OPENS hold.$k.out &&
		kill_at_exit $! &&
		HOGS="$HOGS $!" || return 1
	done &&
	HOGS_OVER= &&
	wait_for 500 hogs_reported 4 &&
	echo "the hogs were done in $((SECONDS - started)) s" &&
	test -z "$HOGS_OVER" &&
	HWM=$(daemon_kib VmHWM) &&
	echo "daemon VmRSS $(daemon_kib VmRSS) KiB, VmHWM $HWM KiB, at most $RSS_MAX_KIB" &&
	{ test_have_prereq ASAN || test "$HWM" -le $RSS_MAX_KIB; } &&
	total_ok=0 &&
	for k in 1 2 3 4; do
		echo "hog $k: $(cat hold.$k.out)" &&
		test "$(field other hold.$k.out)" = 0 &&
		test $(($(field ok hold.$k.out) + $(field enomem hold.$k.out))) = $HOLD_OPENS &&
		test "$(field slowest_ms hold.$k.out)" -lt 1000 &&
		total_ok=$((total_ok + $(field ok hold.$k.out))) || return 1
	done &&
	echo "opens held: $total_ok of $((4 * HOLD_OPENS))" &&
	test $total_ok -lt $((4 * HOLD_OPENS)) &&
	test $total_ok -gt 0
'

test_expect_success 'meanwhile root and another user read whole tables and value files' '
	cat "$MNT/proc/table" >table.root2 &&
	table_whole table.root2 "$MANY" $MANY_THREADS &&
	as $OTHER cat "$MNT/proc/table" >table.other &&
	table_whole table.other "$MANY" $MANY_THREADS &&
	as $OTHER cat "$MNT/proc/$MANY/threads.table" >threads.other &&
	test "$(grep -c "^$MANY " threads.other)" = $MANY_THREADS &&
	v=$(as $OTHER cat "$MNT/proc/$MANY/cycles") &&
	test -n "$v" && test -z "${v//[0-9]/}" &&
	v=$(cat "$MNT/groups/0/idle_cycles" | head -n 1) &&
	test -n "$v"
'

test_expect_success 'the hog user itself is refused the table, with ENOMEM' '
	test_must_fail as $HOG cat "$MNT/proc/table" 2>refused.err &&
	cat refused.err &&
	grep -q "Cannot allocate memory" refused.err
'

test_expect_success 'the daemon said so, rate-limited: at most a line per reader in 10 s' '
	grep "reader_snapshots" "$TRASH/TFS.err" >said &&
	cat said &&
	grep -q "uid $HOG " said &&
	test "$(wc -l <said)" -le 30
'

test_expect_success 'the hogs gone, their budget is given back' '
	kill $HOGS &&
	{ wait $HOGS 2>/dev/null || :; } &&
	wait_for 60 as $HOG cat "$MNT/proc/table" >/dev/null &&
	hold $HOG 20 again.out &&
	AGAIN=$! &&
	kill_at_exit $AGAIN &&
	wait_file again.out "" 60 &&
	cat again.out &&
	test "$(field ok again.out)" = 20 &&
	kill $AGAIN &&
	{ wait $AGAIN 2>/dev/null || :; }
'

test_expect_success 'reader_snapshots = 1: a reader holds at most 1 MiB' '
	unmount_timingfs &&
	write_config small.conf exited.keep=0 limits.reader_snapshots=1 &&
	mount_timingfs small.conf -o allow_other &&
	bytes=$(wc -c <"$MNT/proc/table") &&
	hold $HOG 100 small.out &&
	SMALL=$! &&
	kill_at_exit $SMALL &&
	wait_file small.out "" 120 &&
	echo "proc/table $bytes bytes; held: $(cat small.out)" &&
	ok=$(field ok small.out) &&
	test "$ok" -gt 0 &&
	test $((ok * bytes)) -le $((1024 * 1024)) &&
	test "$(field enomem small.out)" = $((100 - ok)) &&
	as $OTHER cat "$MNT/proc/table" >table.small &&
	table_whole table.small "$MANY" $MANY_THREADS &&
	kill $SMALL &&
	{ wait $SMALL 2>/dev/null || :; }
'

test_expect_success 'SIGHUP applies a new [limits]' '
	unmount_timingfs &&
	write_config hup.conf exited.keep=0 &&
	mount_timingfs hup.conf -o allow_other &&
	write_config hup.conf exited.keep=0 limits.reader_snapshots=1 &&
	kill -HUP $TFS_PID &&
	wait_for 10 grep -q "budgets 1 MiB a reader" "$TRASH/TFS.err" &&
	bytes=$(wc -c <"$MNT/proc/table") &&
	hold $HOG 100 hup.out &&
	HUP=$! &&
	kill_at_exit $HUP &&
	wait_file hup.out "" 120 &&
	echo "proc/table $bytes bytes; held: $(cat hup.out)" &&
	ok=$(field ok hup.out) &&
	test $((ok * bytes)) -le $((1024 * 1024)) &&
	test "$(field enomem hup.out)" -gt 0 &&
	kill $HUP &&
	{ wait $HUP 2>/dev/null || :; }
'

test_expect_success 'total_snapshots: past the total every reader is refused but the host root' '
	unmount_timingfs &&
	write_config total.conf exited.keep=0 limits.reader_snapshots=2 \
		limits.total_snapshots=3 &&
	mount_timingfs total.conf -o allow_other &&
	hold $HOG 100 total.1.out &&
	T1=$! &&
	kill_at_exit $T1 &&
	wait_file total.1.out "" 120 &&
	hold $OTHER 100 total.2.out &&
	T2=$! &&
	kill_at_exit $T2 &&
	wait_file total.2.out "" 120 &&
	echo "first: $(cat total.1.out); second: $(cat total.2.out)" &&
	test "$(field ok total.2.out)" -lt "$(field ok total.1.out)" &&
	hold $THIRD 5 total.3.out &&
	T3=$! &&
	kill_at_exit $T3 &&
	wait_file total.3.out "" 120 &&
	echo "third: $(cat total.3.out)" &&
	test "$(field enomem total.3.out)" -ge 4 &&
	grep -q "total_snapshots" "$TRASH/TFS.err" &&
	cat "$MNT/proc/table" >table.total &&
	table_whole table.total "$MANY" $MANY_THREADS &&
	kill $T1 $T2 $T3 &&
	{ wait $T1 $T2 $T3 2>/dev/null || :; }
'

test_expect_success 'a bad [limits] value: exit 2, naming the file, the line and the key' '
	unmount_timingfs &&
	printf "[limits]\nreader_snapshots = 32\ntotal_snapshots = 0\n" >bad.conf &&
	test_expect_code 2 "$TIMINGFS" -f -c bad.conf "$MNT" 2>bad.err &&
	cat bad.err &&
	grep -q "bad.conf:3: \[limits\] total_snapshots: 0 is out of range 1..65536" bad.err &&
	printf "[limits]\nreader_snapshots = lots\n" >bad2.conf &&
	test_expect_code 2 "$TIMINGFS" -f -c bad2.conf "$MNT" 2>bad2.err &&
	grep -q "bad2.conf:2: \[limits\] reader_snapshots: .lots. is not a number of MiB" bad2.err
'

test_done
