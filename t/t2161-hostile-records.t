#!/bin/bash
# Hostile tenants, records (docs/design.md, "Security": "Names under
# `proc/`"; "Names and rewinds"): the records of the names a reader makes the kernel keep
# are bounded per uid (RECORDS_PER_UID, inodes.h), and charged to it.
#
# nobody holds O_PATH descriptors of the directories of its own exited
# threads (helper-names), in processes of up to HOLD_EACH descriptors
# each (the hard limit of descriptors here may be below what it takes),
# asking for up to NAMES in all, until it is refused: ENOMEM past its
# bound, having held no more than RECORDS_PER_UID. While it holds them,
# another uid's cat of a value file takes no more than twice its median
# time with none held, and root reads proc/1/cycles, proc/table, lists
# proc/ and stats proc/1. Then the server is killed five times: each
# successor charges the records it takes over to nobody again, so a
# new process of nobody is refused at once, and root is served.
TEST_OTHER_USERS=1 # the readers are other users: a trash they reach
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
test_description='Hostile tenants: the names one uid makes the kernel
keep are bounded per uid (ENOMEM past its bound), others are served as
fast as with none held, and the bound holds through server kills.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-restart.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot read as other users"
test_have_prereq SETPRIV || skip_all "no setpriv (util-linux)"

NOBODY=$(id -u nobody)
OTHER=$((2161000000 + $$ % 100000))
NAMES=200000
RECORDS_PER_UID=16384
KILLS=5
CATS=101
# Descriptors a process may hold: the hard limit, as root may raise it.
HARD=$(ulimit -Hn)
NR_OPEN=$(cat /proc/sys/fs/nr_open)
HOLD_EACH=$((HARD > NAMES ? NAMES : HARD - 100))

as() {
	local uid=$1
	shift
	setpriv --reuid="$uid" --regid="$uid" --clear-groups "$@"
}

# median_cat UID FILE: the median time, in microseconds, of CATS cats of
# FILE by UID (one shell of UID times them all).
median_cat() {
	as "$1" bash -c '
		for i in $(seq '"$CATS"'); do
			t0=$EPOCHREALTIME
			cat "$1" >/dev/null || exit 1
			t1=$EPOCHREALTIME
			echo $(( (${t1/./} - ${t0/./}) ))
		done' - "$2" | sort -n | sed -n "$(((CATS + 1) / 2))p"
}

# hold_names N OUT: nobody holds up to N names in a process of its
# own, in the background, until the fifo hold.go is written; its
# lines in OUT. Waits for its last line.
hold_names() {
	{ as "$NOBODY" "$BIN/helper-names" "$MNT" "$1" <hold.go >"$2" 2>&1 & } &&
	kill_at_exit $! &&
	wait_for 120 grep -qs "^ok" "$2" &&
	tail -n 1 "$2"
}

# field NAME FILE: the value after NAME in helper-names' last line.
field() {
	awk -v k="$1" '/^ok / { for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$2"
}

root_served() {
	cat "$MNT/proc/1/cycles" >cycles.out &&
	check_value cycles.out &&
	head -n 1 "$MNT/proc/table" | grep -q "^pid tid" &&
	ls "$MNT/proc" | grep -qx 1 &&
	stat "$MNT/proc/1" >/dev/null
}

test_expect_success 'setup: hidepid invisible; another uid'"'"'s cats with no names held' '
	echo "descriptors: hard limit $HARD, nr_open $NR_OPEN: $HOLD_EACH a process" &&
	write_config "$TRASH/records.conf" access.hidepid=invisible &&
	mount_timingfs "$TRASH/records.conf" -o allow_other &&
	mkfifo hold.go &&
	exec 8<>hold.go &&
	BASE=$(median_cat $OTHER "$MNT/proc/self/cycles") &&
	echo "median cat with none held: $BASE us" &&
	test "$BASE" -gt 0
'

test_expect_success 'nobody is refused past its bound, having held no more' '
	held=0 k=0 refused=0 &&
	while [ "$held" -lt $NAMES ] && [ "$refused" = 0 ]; do
		k=$((k + 1)) &&
		want=$((NAMES - held < HOLD_EACH ? NAMES - held : HOLD_EACH)) &&
		hold_names $want "names.$k.out" &&
		held=$((held + $(field ok "names.$k.out"))) &&
		refused=$(field enomem "names.$k.out") &&
		test "$(field other "names.$k.out")" = 0 || return 1
	done &&
	echo "nobody holds $held names in $k processes; refused $refused" &&
	echo "$held" >held &&
	test "$refused" -gt 0 &&
	test "$held" -le $RECORDS_PER_UID &&
	test "$held" -ge $((RECORDS_PER_UID / 2)) &&
	grep "uid $NOBODY .*refused a name under proc/ at its bound" TFS.err
'

test_expect_success 'another uid reads as fast as with none held; root is served' '
	now=$(median_cat $OTHER "$MNT/proc/self/cycles") &&
	echo "median cat: $now us held, $BASE us with none" &&
	test "$now" -le $((2 * BASE)) &&
	root_served
'

test_expect_success 'through five server kills, nobody is refused at once; root is served' '
	for n in $(seq 1 $KILLS); do
		wait_successor "$MNT" "$TFS_PID" $n &&
		kill -KILL "$spid" || return 1
	done &&
	wait_successor "$MNT" "$TFS_PID" $((KILLS + 1)) &&
	hold_names 1000 names.after.out &&
	test "$(field ok names.after.out)" -le 2 &&
	test "$(field enomem names.after.out)" -gt 0 &&
	root_served &&
	now=$(median_cat $OTHER "$MNT/proc/self/cycles") &&
	echo "median cat after the kills: $now us" &&
	test "$now" -le $((2 * BASE))
'

test_expect_success 'the holders let go: nobody gets its names again' '
	echo >&8 && echo >&8 && echo >&8 && echo >&8 && echo >&8 &&
	for f in names.*.out; do echo >&8; done &&
	sleep 1 &&
	hold_names 1000 names.again.out &&
	test "$(field ok names.again.out)" = 1000 &&
	echo >&8
'

test_expect_success 'cleanup: unmount' '
	exec 8>&- &&
	kill_cleanup_pids &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_done
