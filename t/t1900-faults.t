#!/bin/bash
test_description='Faults: sources that vanish or lie, a full taskstats
socket, readers killed in the middle of a read, a stale mount. A reader
gets ENOENT for a task that is gone or a name that is not there, and EIO
for a source that is broken: never an empty or made-up value; the
daemon lives through all of it.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

# A copy of the m2 fixture, which the tests break and mend while it is
# mounted: the engine reads its files at every open. Thread 102's stat,
# cut short in m2 (t1200), is mended here so that the tables read.
TREE=$TRASH/tree
T101=$TREE/proc/100/task/101

SQ="'"

# errno_of CALL PATH: the errno name of one call (helper-io).
errno_of() {
	"$BIN/helper-io" errno "$@"
}

# put FILE TEXT: FILE of the tree (relative to it) holds TEXT now.
put() {
	printf "%s" "$2" >"$TREE/$1"
}

# mend: the tree as it was after setup.
mend() {
	rm -rf "$TREE" && cp -r "$TRASH/tree.orig" "$TREE"
}

test_expect_success 'setup: a copy of m2 mounted' '
	cp -r "$FIXTURES/m2" "$TREE" &&
	sed "s/^101 /102 /" "$T101/stat" >"$TREE/proc/100/task/102/stat" &&
	cp -r "$TREE" "$TRASH/tree.orig" &&
	write_config "$TRASH/tree.conf" "sources.proc=$TREE/proc" \
		"sources.sys=$TREE/sys" clock.tsc_hz=3000000000 &&
	mount_timingfs "$TRASH/tree.conf" &&
	# Thread 101: 2500 ns of runtime, 0 utime and stime: all user
	# time; started 5001 ticks after btime 1700000000.
	cat >times.101 <<-\EOT &&
	cycles 7500
	kernel_time 0
	user_time 25
	creation_time 133444736500100000
	exit_time 0
	EOT
	cat "$MNT/proc/100/threads/101/times" >actual &&
	test_cmp times.101 actual &&
	printf "cpu0 150600000000\ncpu1 150900000000\n" >idle.expect &&
	cat "$MNT/groups/0/idle_cycles" >actual &&
	test_cmp idle.expect actual
'

test_expect_success 'PROC/stat replaced or removed: read afresh, then EIO' '
	test_when_finished mend &&
	sed "s/^cpu1 200 0 100 5000 30/cpu1 200 0 100 6000 30/" \
		"$TREE/proc/stat" >stat.new &&
	mv stat.new "$TREE/proc/stat" &&
	cat "$MNT/groups/0/idle_cycles" >actual &&
	printf "cpu0 150600000000\ncpu1 180900000000\n" >expect &&
	test_cmp expect actual &&
	# What the mended tree reads from now on: idle never goes back.
	mv expect idle.expect &&
	rm "$TREE/proc/stat" &&
	test "$(errno_of read "$MNT/groups/0/idle_cycles")" = EIO &&
	test "$(errno_of read "$MNT/groups/0/cpu0/idle_cycles")" = EIO &&
	test_must_fail cat "$MNT/groups/0/idle_cycles" >out &&
	test ! -s out
'

# /proc/stat lists the online processors only: one that is online and
# has no line (or a short one) is a broken source, for the whole group.
test_expect_success 'PROC/stat without an online processor: EIO, not a gap' '
	test_when_finished mend &&
	sed "/^cpu1 /d" "$TRASH/tree.orig/proc/stat" >"$TREE/proc/stat" &&
	for f in idle_cycles cpu0/idle_cycles cpu1/idle_cycles; do
		test "$(errno_of read "$MNT/groups/0/$f")" = EIO || return 1
	done &&
	sed "s/^cpu1 .*/cpu1 200 0 100/" "$TRASH/tree.orig/proc/stat" \
		>"$TREE/proc/stat" &&
	test "$(errno_of read "$MNT/groups/0/idle_cycles")" = EIO &&
	put proc/stat "" &&
	test "$(errno_of read "$MNT/groups/0/idle_cycles")" = EIO &&
	put proc/stat "$(grep -v "^cpu" "$TRASH/tree.orig/proc/stat")" &&
	test "$(errno_of read "$MNT/groups/0/idle_cycles")" = EIO &&
	cp "$TRASH/tree.orig/proc/stat" "$TREE/proc/stat" &&
	cat "$MNT/groups/0/idle_cycles" >actual &&
	test_cmp idle.expect actual
'

test_expect_success 'an offline processor without a PROC/stat line is left out' '
	test_when_finished mend &&
	sed "/^cpu1 /d" "$TRASH/tree.orig/proc/stat" >"$TREE/proc/stat" &&
	put sys/devices/system/cpu/online "0
" &&
	cat "$MNT/groups/0/idle_cycles" >actual &&
	printf "cpu0 150600000000\n" >expect &&
	test_cmp expect actual &&
	test "$(cat "$MNT/groups/0/cpus")" = 0 &&
	test "$(cat "$MNT/groups/0/cpu0/idle_cycles")" = 150600000000
'

# The online list is read at every use; present and the nodes' lists
# make the groups at start-up (below).
test_expect_success 'an online cpulist that is garbage, or empty: EIO' '
	test_when_finished mend &&
	for list in garbage 0- 1-0 0,,1 ,0 -1 "0 1" 0-1x "0-1
x" 0-99999999999 "" "
"; do
		put sys/devices/system/cpu/online "$list" &&
		printf "%s: %s %s\n" "$list" \
			"$(errno_of read "$MNT/groups/0/cpus")" \
			"$(errno_of opendir "$MNT/groups/0")" || return 1
	done >actual &&
	cat actual &&
	test "$(grep -c ": EIO EIO\$" actual)" = 12 &&
	put sys/devices/system/cpu/online "0-1
" &&
	test "$(cat "$MNT/groups/0/cpus")" = 0-1
'

# ---- a stale mount ------------------------------------------------------

# make_stale DIR [ARGS]: a daemon on DIR killed without auto_unmount,
# which leaves its mount behind, dead: ENOTCONN. test_when_finished
# unmount_all DIR clears what a test left.
make_stale() {
	local dir=$1
	shift
	mkdir -p "$dir" &&
	start_timingfs_on DEAD "$dir" -c "$TRASH/tree.conf" \
		-o no_auto_unmount "$@" &&
	kill -KILL "$DEAD_PID" &&
	test_expect_code 137 wait "$DEAD_PID" &&
	DEAD_PID= &&
	test "$(errno_of stat "$dir")" = ENOTCONN
}

unmount_all() {
	while is_mounted "$1"; do
		fusermount3 -u -z "$1" || return 1
	done
}

# wait_served DIR: up to 10 s for a live timingfs to answer at DIR.
wait_served() {
	local i
	for i in $(seq 1 200); do
		[ "$(errno_of stat "$1/info")" = OK ] && return 0
		sleep 0.05
	done
	return 1
}

mounts_at() {
	awk -v dir="$1" '$2 == dir' /proc/self/mounts | wc -l
}

STALE=$TRASH/stale
STALE_REAL=$(cd "$TRASH" && pwd -P)/stale

test_expect_success 'a stale mount: the next start says what to do, exits 1' '
	test_when_finished "unmount_all \"$STALE\"" &&
	make_stale "$STALE" &&
	test_expect_code 1 timeout 10 "$TIMINGFS" -f -c "$TRASH/tree.conf" "$STALE" \
		2>err &&
	cat >expect <<-EOT &&
	timingfs: $STALE_REAL: a stale timingfs mount is there (its daemon died): clear it with \`fusermount3 -u $STALE_REAL\`, or start with -o unmount_stale
	EOT
	test_cmp expect err &&
	test "$(errno_of stat "$STALE")" = ENOTCONN &&
	test "$(mounts_at "$STALE_REAL")" = 1
'

test_expect_success 'with -o unmount_stale it clears the stale mount and serves' '
	test_when_finished "unmount_all \"$STALE\"" &&
	make_stale "$STALE" &&
	start_timingfs_on FRESH "$STALE" -c "$TRASH/tree.conf" \
		-o unmount_stale &&
	kill_at_exit "$FRESH_PID" &&
	wait_served "$STALE" &&
	test "$(mounts_at "$STALE_REAL")" = 1 &&
	test "$(cat "$STALE/proc/100/cycles")" = 12000000000 &&
	echo "timingfs: $STALE_REAL: unmounted a stale timingfs mount (its daemon died)" >expect &&
	test_cmp expect "$TRASH/FRESH.err" &&
	unmount_timingfs_on FRESH "$STALE" &&
	test "$FRESH_STATUS" = 0 &&
	test "$(mounts_at "$STALE_REAL")" = 0
'

test_expect_success 'a stale mount of another file system is never cleared' '
	test_when_finished "unmount_all \"$STALE\"" &&
	make_stale "$STALE" -o subtype=notours &&
	test_expect_code 1 timeout 10 "$TIMINGFS" -f -c "$TRASH/tree.conf" \
		-o unmount_stale "$STALE" 2>err &&
	cat >expect <<-EOT &&
	timingfs: cannot mount on $STALE_REAL: a stale fuse.notours mount is there, not timingfs${SQ}s (Transport endpoint is not connected): clear it with \`fusermount3 -u $STALE_REAL\`
	EOT
	test_cmp expect err &&
	test "$(errno_of stat "$STALE")" = ENOTCONN
'

test_expect_success 'a live mount is never cleared: a second one goes over it' '
	test_when_finished "unmount_all \"$STALE\"" &&
	mkdir -p "$STALE" &&
	start_timingfs_on FIRST "$STALE" -c "$TRASH/tree.conf" &&
	kill_at_exit "$FIRST_PID" &&
	{ "$TIMINGFS" -f -c "$TRASH/tree.conf" -o unmount_stale "$STALE" \
		2>second.err & } &&
	second=$! &&
	kill_at_exit "$second" &&
	for i in $(seq 1 200); do
		test "$(mounts_at "$STALE_REAL")" = 2 && break
		sleep 0.05
	done &&
	test "$(mounts_at "$STALE_REAL")" = 2 &&
	test ! -s second.err &&
	fusermount3 -u "$STALE" &&
	wait "$second" &&
	is_running "$FIRST_PID" &&
	test "$(cat "$STALE/proc/100/cycles")" = 12000000000 &&
	unmount_timingfs_on FIRST "$STALE" &&
	test "$FIRST_STATUS" = 0
'

test_expect_success '--help names -o unmount_stale' '
	"$TIMINGFS" --help >help &&
	grep "^    -o unmount_stale " help
'

test_done
