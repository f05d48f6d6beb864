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
	test_cmp idle.expect actual &&
	# An offline processor has no line: left out.
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

# ---- a task's records, short, garbled, absurd, empty, huge, gone -------

# broken_101: thread 101's value files that need its stat are EIO, the
# tables that hold its line too; its cycles (schedstat) still read.
broken_101() {
	local f
	for f in times kernel_time creation_time; do
		test "$(errno_of read "$MNT/proc/100/threads/101/$f")" = EIO ||
			return 1
	done &&
	test "$(cat "$MNT/proc/100/threads/101/cycles")" = 7500 &&
	test "$(errno_of read "$MNT/proc/100/threads.table")" = EIO
}

# stat_101 FIELD VALUE: thread 101's stat with field FIELD (proc(5)'s
# numbers: 14 utime, 22 starttime, 39 processor) set to VALUE.
stat_101() {
	awk -v n="$1" -v v="$2" "{ \$n = v; print }" \
		"$TRASH/tree.orig/proc/100/task/101/stat" >"$T101/stat"
}

test_expect_success 'a stat cut short, or a field that is no number: EIO' '
	test_when_finished mend &&
	line=$(cat "$T101/stat") &&
	for cut in 13 38; do
		echo "$line" | cut -d " " -f 1-$cut >"$T101/stat" &&
		broken_101 || return 1
	done &&
	for bad in "14 x1" "15 1x" "14 -5" "22 18446744073709551616" \
		"39 4294967296"; do
		stat_101 $bad && broken_101 || return 1
	done &&
	for text in "101 (worker)" "101 worker S 1" "$(printf "\001\377)\n")"; do
		put proc/100/task/101/stat "$text" &&
		broken_101 || return 1
	done &&
	cp "$TRASH/tree.orig/proc/100/task/101/stat" "$T101/stat" &&
	cat "$MNT/proc/100/threads/101/times" >actual &&
	test_cmp times.101 actual
'

# The name is the kernel's comm, which a task may set to anything but a
# NUL (prctl PR_SET_NAME): parentheses, ") (", spaces, newlines. It ends
# at the last ")". A long one is read whole.
test_expect_success 'an absurd comm, 5000 bytes of ) ( spaces and newlines' '
	test_when_finished mend &&
	rest=$(cut -d " " -f 3- "$T101/stat") &&
	comm=$(for i in $(seq 1 350); do printf ") (x) S 1 \n (( "; done) &&
	printf "101 (%s) %s\n" "$comm" "$rest" >"$T101/stat" &&
	test "$(wc -c <"$T101/stat")" -gt 5000 &&
	cat "$MNT/proc/100/threads/101/times" >actual &&
	test_cmp times.101 actual &&
	printf "%s\n" "${comm:0:15}" >name.want &&
	cmp name.want "$MNT/proc/100/threads/101/name" &&
	field=$(awk "\$1 == 100 && \$2 == 101 { print \$8 }" "$MNT/proc/table") &&
	test "$field" = ")\\040(x)\\040S\\0401\\040\\012\\040((\\040" &&
	printf "101 ()) %s\n" "$rest" >"$T101/stat" &&
	cat "$MNT/proc/100/threads/101/times" >actual &&
	test_cmp times.101 actual &&
	grep "^100 101 7500 0 25 133444736500100000 0 )\$" "$MNT/proc/table"
'

# Who a task is comes from its status, at the lookup of its directory:
# the kernel keeps a name for a second, so these are names no test here
# looked up before.
test_expect_success 'empty files: EIO' '
	test_when_finished mend &&
	: >"$T101/stat" &&
	broken_101 &&
	mend &&
	: >"$T101/schedstat" &&
	test "$(errno_of read "$MNT/proc/100/threads/101/cycles")" = EIO &&
	test "$(errno_of read "$MNT/proc/100/threads/101/times")" = EIO &&
	test "$(cat "$MNT/proc/100/threads/100/cycles")" = 4500000369 &&
	mend &&
	: >"$TREE/proc/100/task/102/status" &&
	test "$(errno_of stat "$MNT/proc/100/threads/102/cycles")" = EIO &&
	mend &&
	: >"$TREE/proc/200/status" &&
	test "$(errno_of stat "$MNT/proc/200/cycles")" = EIO &&
	test "$(errno_of stat "$MNT/proc/100/cycles")" = OK
'

# No source has a size limit that a kernel could reach: a status of
# many groups, a stat of a long name, read whole. One of 64 MiB and
# more is no kernel's: EIO, and the daemon goes on.
test_expect_success 'huge files: read whole; beyond 64 MiB, EIO' '
	test_when_finished mend &&
	{
		grep -v "^Groups:" "$TRASH/tree.orig/proc/100/task/101/status" &&
		printf "Groups:\t%s\n" "$(seq -s " " 1 200000)"
	} >"$T101/status" &&
	test "$(wc -c <"$T101/status")" -gt 1000000 &&
	rest=$(cut -d " " -f 3- "$T101/stat") &&
	{
		printf "101 (" &&
		head -c 2000000 /dev/zero | tr "\0" ")" &&
		printf ") %s\n" "$rest"
	} >"$T101/stat" &&
	cat "$MNT/proc/100/threads/101/times" >actual &&
	test_cmp times.101 actual &&
	{
		printf "101 (" &&
		head -c 67108864 /dev/zero | tr "\0" x &&
		printf ") %s\n" "$rest"
	} >"$T101/stat" &&
	test "$(errno_of read "$MNT/proc/100/threads/101/times")" = EIO &&
	rm "$T101/stat" &&
	mend &&
	cat "$MNT/proc/100/threads/101/times" >actual &&
	test_cmp times.101 actual &&
	is_running "$TFS_PID"
'

# A task whose directory is there and a file of it is not: broken, EIO.
# A task whose directory is gone: ENOENT, and out of the listings and
# tables. A file opened before reads its snapshot.
test_expect_success 'sources removed: a file EIO, a task ENOENT' '
	test_when_finished mend &&
	rm "$T101/schedstat" &&
	test "$(errno_of read "$MNT/proc/100/threads/101/cycles")" = EIO &&
	rm -r "$T101" &&
	test "$(errno_of read "$MNT/proc/100/threads/101/cycles")" = ENOENT &&
	test "$(errno_of read "$MNT/proc/100/threads/101/times")" = ENOENT &&
	test "$(nums "$MNT/proc/100/threads")" = "100 102 " &&
	sed 1d "$MNT/proc/100/threads.table" | cut -d " " -f 2 | sort >actual &&
	printf "100\n102\n" >expect &&
	test_cmp expect actual &&
	rm -r "$TREE/proc/200" &&
	test "$(errno_of read "$MNT/proc/200/cycles")" = ENOENT &&
	test "$(errno_of opendir "$MNT/proc/200/threads")" = ENOENT &&
	test "$(nums "$MNT/proc")" = "100 " &&
	! grep "^200 " "$MNT/proc/table"
'

test_expect_success 'a file opened before its source goes reads its snapshot' '
	test_when_finished mend &&
	mkfifo go &&
	{ "$BIN/helper-io" hold "$MNT/proc/100/threads/101/times" <go \
		>held & } &&
	pid=$! &&
	exec 9>go &&
	wait_file held &&
	rm -r "$T101" &&
	test "$(errno_of read "$MNT/proc/100/threads/101/times")" = ENOENT &&
	echo >&9 &&
	exec 9>&- &&
	wait "$pid" &&
	{ echo open && echo "mode 100444 uid 1001" && cat times.101; } >expect &&
	test_cmp expect held
'

# Names that are not canonical stay ENOENT even where the tree has a
# directory of that name; directories that are no task are not listed.
test_expect_success 'a bad name: ENOENT, whatever the tree holds' '
	test_when_finished mend &&
	cp -r "$TREE/proc/100" "$TREE/proc/0100" &&
	cp -r "$TREE/proc/100" "$TREE/proc/+100" &&
	mkdir "$TREE/proc/300" "$TREE/proc/abc" &&
	for name in 0100 +100 abc 0 00 4294967396; do
		test "$(errno_of stat "$MNT/proc/$name")" = ENOENT || return 1
	done &&
	test "$(nums "$MNT/proc")" = "100 200 "
'

# What the groups are made of is read at start-up: a broken one, and
# the daemon does not start, with what is wrong.
test_expect_success 'present, a node cpulist or btime broken: no start, exit 1' '
	mkdir -p mnt2 &&
	for case in "sys/devices/system/cpu/present:garbage" \
		"sys/devices/system/cpu/present:" \
		"sys/devices/system/node/node0/cpulist:0-1x" \
		"proc/stat:cpu0 1 2 3 4 5"; do
		mend &&
		put "${case%%:*}" "${case#*:}" &&
		test_expect_code 1 bounded 20 "$TIMINGFS" -f \
			-c "$TRASH/tree.conf" mnt2 2>>err || return 1
	done &&
	mend &&
	cat err &&
	test "$(grep -c "^timingfs: $TREE/sys/devices/system: cannot read the processors: Input/output error\$" err)" = 3 &&
	grep "^timingfs: $TREE/proc/stat: no btime: Input/output error\$" err &&
	! is_mounted "$TRASH/mnt2"
'

# ---- live tasks that exit under the engine's open files ------------------

LIVE=$TRASH/live
KEEP=$TRASH/keep

test_expect_success 'setup: a daemon on this machine, exited tasks not kept' '
	write_config "$TRASH/live.conf" exited.keep=0 &&
	mkdir -p "$LIVE" &&
	start_timingfs_on LIVE "$LIVE" -c "$TRASH/live.conf" &&
	kill_at_exit "$LIVE_PID" &&
	grep "^exit_source none\$" "$LIVE/info"
'

# The engine keeps a task's files open for the next read; a task that
# has exited reads ESRCH there: ENOENT to the reader, never a value.
test_expect_success 'a task or thread that exits after its files were read: ENOENT' '
	{ sleep 60 & } &&
	pid=$! &&
	kill_at_exit "$pid" &&
	cat "$LIVE/proc/$pid/times" "$LIVE/proc/$pid/threads/$pid/times" &&
	ls -l "/proc/$(server_of "$LIVE_PID")/fd" >fds &&
	grep " -> /proc/$pid/" fds &&
	kill -KILL "$pid" &&
	test_expect_code 137 wait "$pid" &&
	for f in cycles times kernel_time creation_time exit_time; do
		test "$(errno_of read "$LIVE/proc/$pid/$f")" = ENOENT &&
		test "$(errno_of read "$LIVE/proc/$pid/threads/$pid/$f")" = ENOENT ||
			return 1
	done &&
	test "$(errno_of opendir "$LIVE/proc/$pid/threads")" = ENOENT &&
	! grep "^$pid " "$LIVE/proc/table" &&
	# A thread that exits in a live process: the process reads on.
	{ "$BIN/helper-exit" thread 10 thread.go >thread.out & } &&
	hp=$! &&
	kill_at_exit "$hp" &&
	wait_file thread.out &&
	read -r pid tid <thread.out &&
	cat "$LIVE/proc/$pid/threads/$tid/times" &&
	touch thread.go &&
	wait_file thread.out 2 &&
	test "$(errno_of read "$LIVE/proc/$pid/threads/$tid/cycles")" = ENOENT &&
	test "$(errno_of read "$LIVE/proc/$pid/threads/$tid/times")" = ENOENT &&
	test "$(cat "$LIVE/proc/$pid/cycles")" -gt 0 &&
	touch thread.go.end &&
	wait "$hp"
'

# A number that comes back as another task: that task, not the files
# the engine kept of the one that died. Two clock ticks pass first (the
# sleep lets time pass; creation times count ticks), so that the new
# task's creation_time is the later.
test_expect_success ROOT 'a number taken by a new task reads the new task' '
	{ sleep 60 & } &&
	pid=$! &&
	kill_at_exit "$pid" &&
	old=$(cat "$LIVE/proc/$pid/creation_time") &&
	kill -KILL "$pid" &&
	test_expect_code 137 wait "$pid" &&
	sleep 0.02 &&
	{ "$BIN/helper-exit" reuse "$pid" >reuse.out & } &&
	hp=$! &&
	kill_at_exit "$hp" &&
	wait_file reuse.out &&
	test "$(cat reuse.out)" = "$pid" &&
	new=$(cat "$LIVE/proc/$pid/creation_time") &&
	test "$new" -gt "$old" &&
	kill -KILL "$pid" &&
	wait "$hp"
'

# ---- a full taskstats socket ----------------------------------------------

test_expect_success ROOT 'setup: a daemon that keeps exited tasks' '
	write_config "$TRASH/keep.conf" exited.keep=60 &&
	mkdir -p "$KEEP" &&
	start_timingfs_on KEEP "$KEEP" -c "$TRASH/keep.conf" &&
	kill_at_exit "$KEEP_PID" &&
	if grep "^exit_source taskstats\$" "$KEEP/info"; then
		test_set_prereq TASKSTATS
	fi
'

# The drops the kernel counted on the daemon's taskstats socket
# (NETLINK_GENERIC, 16, in /proc/net/netlink).
taskstats_drops() {
	local inos
	inos=$(ls -l "/proc/$(server_of "$KEEP_PID")/fd" |
		sed -n "s/.*socket:\[\([0-9]*\)\]\$/\1/p" | tr "\n" " ") &&
	awk -v inos=" $inos" "\$2 == 16 && index(inos, \" \" \$10 \" \") {
		drops += \$9 } END { print drops + 0 }" /proc/net/netlink
}

# wait_lost: up to 10 s (a margin for a loaded machine) for info to
# count an overrun, which the listener meets when it reads again.
wait_lost() {
	test_poll_ 10 has_lost && return 0
	echo "waited 10 s for info to count lost exit records; exit_lost $(exit_lost)" >&2
	return 1
}

has_lost() {
	[ "$(exit_lost)" -gt 0 ]
}

exit_lost() {
	sed -n "s/^exit_lost //p" "$KEEP/info"
}

# The daemon stopped while tasks exit: the kernel queues their records
# until the socket's buffer is full, then drops them and says so to the
# daemon (ENOBUFS) when it reads again.
test_expect_success TASKSTATS 'a full taskstats socket: counted, logged, the rest kept' '
	test "$(exit_lost)" = 0 &&
	test "$(taskstats_drops)" = 0 &&
	ksrv=$(server_of "$KEEP_PID") &&
	kill -STOP "$ksrv" &&
	test_when_finished "kill -CONT $ksrv" &&
	# The first burst stays alive (its stdin open) with its threads kept.
	{ sleep 30 | "$BIN/helper-exit" threads 1000 >burst.out & } &&
	hp=$! &&
	kill_at_exit "$hp" &&
	test_when_finished "kill_tree $hp KILL; :" &&
	wait_file burst.out &&
	for i in $(seq 1 20); do
		test "$(taskstats_drops)" -gt 0 && break
		"$BIN/helper-exit" threads 7000 </dev/null >/dev/null ||
			return 1
	done &&
	{
		test "$(taskstats_drops)" -gt 0 ||
		{ echo "20 bursts of 7,000 exits, and the kernel dropped none"; false; }
	} &&
	kill -CONT "$ksrv" &&
	wait_lost &&
	grep "exit records lost: the receive buffer overran" "$TRASH/KEEP.err" &&
	is_running "$KEEP_PID" &&
	read -r pid first last <burst.out &&
	# Its first thread was queued before the buffer was full (its
	# last may not be, where other tasks of the machine exited too).
	test "$(cat "$KEEP/proc/$pid/threads/$first/exit_time")" -gt 0 &&
	# The listener goes on: a task that exits once it has drained the
	# backlog the bursts left is kept. While the buffer is still full the
	# record of a task is lost too (counted), so a new task is tried each
	# second, for a margin of 30 s on a loaded (or sanitized) machine.
	kept= &&
	for try in $(seq 1 30); do
		{ sleep 0.1 & } &&
		p=$! &&
		wait "$p" &&
		for i in $(seq 1 20); do
			test -e "$KEEP/proc/$p/exit_time" && kept=$p && break
			sleep 0.05
		done &&
		test -z "$kept" || break
	done &&
	if test -n "$kept"; then
		echo "task $kept kept at try $try"
	else
		echo "waited 30 tries (a second each) for a new task to be kept: none was"
	fi &&
	test -n "$kept" &&
	test "$(cat "$KEEP/proc/$kept/exit_time")" -gt 0 &&
	test "$(cat "$KEEP/proc/$kept/cycles")" -gt 0
'

# ---- readers killed in the middle of a read ------------------------------

rss_kb() {
	awk "/^VmRSS:/ { print \$2 }" "/proc/$(server_of "$LIVE_PID")/status"
}

fd_count() {
	ls "/proc/$(server_of "$LIVE_PID")/fd" | wc -l
}

test_expect_success 'setup: a process of 1000 threads' '
	{ "$BIN/helper-many" 1000 >many.out & } &&
	BIG=$! &&
	kill_at_exit "$BIG" &&
	wait_file many.out "" 30 &&
	TABLE=$LIVE/proc/$BIG/threads.table &&
	test "$(sed 1d "$TABLE" | wc -l)" = 1000
'

# kill_readers N: N readers of the big table, each killed at another
# moment: while the daemon makes the table at its open, between reads
# (stopped first), or opened and never read.
kill_readers() {
	local i r
	for i in $(seq 1 "$1"); do
		{ cat "$TABLE" >/dev/null & } &&
		r=$! &&
		sleep "0.0$((i % 10))" &&
		# It may have read the whole table already: nothing to kill.
		{ kill -KILL "$r" 2>/dev/null || :; } &&
		{ wait "$r" || :; } &&
		rm -f part &&
		{ bash -c "exec 8<\"\$1\" && head -c 4096 <&8 >/dev/null &&
			echo >\"\$2\" && kill -STOP \$\$" _ "$TABLE" part & } &&
		r=$! &&
		wait_file part &&
		kill -KILL "$r" &&
		{ wait "$r" || :; } &&
		{ "$BIN/helper-io" hold "$TABLE" >held </dev/zero & } &&
		r=$! &&
		kill -STOP "$r" &&
		kill -KILL "$r" &&
		{ wait "$r" || :; } ||
			return 1
	done
}

test_expect_success 'readers killed mid-read: the daemon lives, nothing left' '
	cat "$TABLE" "$TABLE" >/dev/null &&
	fds=$(fd_count) &&
	kill_readers 2 &&
	rss=$(rss_kb) &&
	kill_readers 4 &&
	cat "$TABLE" >/dev/null &&
	is_running "$LIVE_PID" &&
	echo "fds $fds -> $(fd_count), rss $rss -> $(rss_kb) kB" &&
	test "$(fd_count)" -le "$fds" &&
	test "$(rss_kb)" -lt $((rss + 4096)) &&
	test "$(sed 1d "$TABLE" | wc -l)" = 1000 &&
	test "$(sed 1d "$TABLE" | cut -d " " -f 1 | sort -u)" = "$BIG" &&
	test "$(cat "$LIVE/proc/$BIG/cycles")" -gt 0
'

test_expect_success 'the daemons unmount and exit 0' '
	unmount_timingfs_on LIVE "$LIVE" &&
	test "$LIVE_STATUS" = 0 &&
	if test_have_prereq ROOT; then
		unmount_timingfs_on KEEP "$KEEP" &&
		test "$KEEP_STATUS" = 0
	fi
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
	kill_daemon "$DEAD_PID" &&
	test_expect_code 137 wait "$DEAD_PID" &&
	DEAD_PID= &&
	test "$(errno_of stat "$dir")" = ENOTCONN
}

unmount_all() {
	while is_mounted "$1"; do
		fusermount3 -u -z "$1" || return 1
	done
}

# wait_served DIR: up to 10 s (a margin for a loaded machine) for a
# live timingfs to answer at DIR; says so when none does.
wait_served() {
	test_poll_ 10 is_served "$1" && return 0
	echo "waited 10 s for a timingfs to answer at $1; stat of its info: $(errno_of stat "$1/info")" >&2
	return 1
}

is_served() {
	[ "$(errno_of stat "$1/info")" = OK ]
}

mounts_at() {
	mounts_of "$1" | wc -l
}

# mounted_twice DIR: two mounts at DIR.
mounted_twice() {
	test "$(mounts_at "$1")" = 2
}

STALE=$TRASH/stale
STALE_REAL=$(cd "$TRASH" && pwd -P)/stale

test_expect_success 'a stale mount: the next start says what to do, exits 1' '
	test_when_finished "unmount_all \"$STALE\"" &&
	make_stale "$STALE" &&
	test_expect_code 1 bounded 20 "$TIMINGFS" -f -c "$TRASH/tree.conf" "$STALE" \
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
	test "$(mounts_at "$STALE_REAL")" = 0 &&
	"$TIMINGFS" --help >help &&
	grep "^    -o unmount_stale " help
'

test_expect_success 'a stale mount of another file system is never cleared' '
	test_when_finished "unmount_all \"$STALE\"" &&
	make_stale "$STALE" -o subtype=notours &&
	test_expect_code 1 bounded 20 "$TIMINGFS" -f -c "$TRASH/tree.conf" \
		-o unmount_stale "$STALE" 2>err &&
	cat >expect <<-EOT &&
	timingfs: cannot mount on $STALE_REAL: a stale fuse.notours mount is there, not timingfs${SQ}s (Transport endpoint is not connected): clear it with \`fusermount3 -u $STALE_REAL\`
	EOT
	test_cmp expect err &&
	test "$(errno_of stat "$STALE")" = ENOTCONN
'

# The second daemon mounts over the first within 20 s, as start_timingfs
# waits for a daemon.
test_expect_success 'a live mount is never cleared: a second one goes over it' '
	test_when_finished "unmount_all \"$STALE\"" &&
	mkdir -p "$STALE" &&
	start_timingfs_on FIRST "$STALE" -c "$TRASH/tree.conf" &&
	kill_at_exit "$FIRST_PID" &&
	{ "$TIMINGFS" -f -c "$TRASH/tree.conf" -o unmount_stale "$STALE" \
		2>second.err & } &&
	second=$! &&
	kill_at_exit "$second" &&
	{
		wait_for 20 mounted_twice "$STALE_REAL" ||
		{ echo "$(mounts_at "$STALE_REAL") mounts at $STALE_REAL"; false; }
	} &&
	test "$(mounts_at "$STALE_REAL")" = 2 &&
	test ! -s second.err &&
	fusermount3 -u "$STALE" &&
	wait "$second" &&
	is_running "$FIRST_PID" &&
	test "$(cat "$STALE/proc/100/cycles")" = 12000000000 &&
	unmount_timingfs_on FIRST "$STALE" &&
	test "$FIRST_STATUS" = 0
'

test_done
