#!/bin/bash
test_description='The mounted tree on fixture roots: its shape and exact
values, in both unit systems, with groups of 64 and of fewer. tsc_hz is
3 GHz, so a nanosecond is 3 cycles; USER_HZ is 100.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

# remount NAME FIXTURE [key=value...]: the daemon before (if any) ends
# cleanly, and one on FIXTURE with those keys serves $MNT.
remount() {
	local name=$1 fixture=$2
	shift 2
	if [ -n "$TFS_PID" ]; then
		unmount_timingfs && test "$TFS_STATUS" = 0 || return 1
	fi
	fixture_config "$TRASH/$name.conf" "$fixture" "$@" &&
		mount_timingfs "$TRASH/$name.conf"
}

test_expect_success 'setup: the m2 fixture mounted' '
	remount m2 m2
'

test_expect_success 'the root holds info, groups and proc' '
	ls "$MNT" >actual &&
	printf "groups\ninfo\nproc\n" >expect &&
	test_cmp expect actual
'

# Every node of the tree, without following links. Thread 102's stat
# is cut short: who a task is comes from its status alone, so the
# thread and its files are there, and only the files that need its stat
# are EIO when read.
test_expect_success 'the whole tree of m2' '
	(cd "$MNT" && find . 2>"$TRASH/err") >unsorted &&
	test ! -s "$TRASH/err" &&
	sort unsorted >actual &&
	task_files() {
		for f in creation_time cycles exit_time kernel_time name \
			times user_time; do
			echo "$1/$f"
		done
	} &&
	{
		echo . && echo ./info &&
		echo ./groups && echo ./groups/current && echo ./groups/0 &&
		echo ./groups/0/cpus && echo ./groups/0/idle_cycles &&
		for m in 0 1; do
			echo ./groups/0/cpu$m &&
			echo ./groups/0/cpu$m/cpu &&
			echo ./groups/0/cpu$m/idle_cycles
		done &&
		echo ./proc && echo ./proc/self && echo ./proc/table &&
		for p in 100 200; do
			echo ./proc/$p && task_files ./proc/$p &&
			echo ./proc/$p/threads && echo ./proc/$p/threads.table
		done &&
		for t in 100 101 102; do
			echo ./proc/100/threads/$t &&
			task_files ./proc/100/threads/$t
		done &&
		echo ./proc/200/threads/200 &&
		task_files ./proc/200/threads/200
	} | sort >expect &&
	test_cmp expect actual
'

# A file's size is the length of the content a path walk to it finds
# (snapshot.h): here, where the fixture's values stay put, the length
# of what cat reads after it. A file whose source is broken (thread 102's
# stat is cut short) has size 0, and reading it is an error.
test_expect_success 'types and modes: files 0444, dirs 0555, links 0777' '
	{ (cd "$MNT" && find . -printf "%y %m %s %p\n" 2>/dev/null) >all || :; } &&
	cat all &&
	! grep -v -e "^d 555 0 " -e "^f 444 [0-9]* " -e "^l 777 " all &&
	grep "^f " all | while read -r type mode size path
	do
		if test "$size" = 0
		then
			test_must_fail cat "$MNT/$path" >/dev/null 2>&1
		else
			test "$size" = "$(cat "$MNT/$path" | wc -c)"
		fi ||
		{ echo "$path: size $size, content $(cat "$MNT/$path" | wc -c)"; return 1; }
	done &&
	test "$(grep -c "^f 444 0 " all)" = 8 &&
	grep -x "l 777 .* ./proc/self" all &&
	grep -x "l 777 .* ./groups/current" all &&
	test "$(grep -c "^f " all)" = 52 &&
	test "$(grep -c "^d " all)" = 14
'

# expected_translate: how the daemon translates numbers between PID
# namespaces here: with the nsfs ioctls where this kernel has them
# (6.10) and the daemon is not kept from them (TEST_DAEMON_NOIOCTL),
# else from NSpid lines.
expected_translate() {
	if [ -z "${TEST_DAEMON_NOIOCTL:-}" ] && python3 -c '
import fcntl, os
fd = os.open("/proc/self/ns/pid", os.O_RDONLY)
assert fcntl.ioctl(fd, 0x8004b708, os.getpid()) == os.getpid()
' 2>/dev/null
	then
		echo ioctl
	else
		echo nspid
	fi
}

test_expect_success 'info says what the engine found' '
	version=$("$TIMINGFS" --version | sed -n "s/^timingfs version //p") &&
	translate=$(expected_translate) &&
	cat >expect <<-EOT &&
	version $version
	units windows
	tsc_hz 3000000000
	tsc_source config
	clk_tck 100
	idle_source proc_stat
	task_source procfs
	identity_source ticks
	group_max_size 64
	group_count 1
	jobs none
	pidns caller
	pidns_translate $translate
	pidns_scans 0
	hidepid off
	hidepid_gid none
	exit_source none
	server_pid $(server_of "$TFS_PID")
	server_starts 1
	EOT
	cat "$MNT/info" >actual &&
	test_cmp expect actual
'

test_expect_success 'groups: one group of two, and current' '
	ls "$MNT/groups" >actual &&
	printf "0\ncurrent\n" >expect &&
	test_cmp expect actual &&
	ls "$MNT/groups/0" >actual &&
	printf "cpu0\ncpu1\ncpus\nidle_cycles\n" >expect &&
	test_cmp expect actual &&
	test "$(cat "$MNT/groups/0/cpus")" = 0-1 &&
	ls "$MNT/groups/0/cpu1" >actual &&
	printf "cpu\nidle_cycles\n" >expect &&
	test_cmp expect actual
'

# cpu0: idle 5000 + iowait 20 ticks = 50.2 s = 150600000000 cycles;
# cpu1: 5000 + 30 ticks = 50.3 s = 150900000000 cycles.
test_expect_success 'idle cycles of the group and of each processor' '
	printf "cpu0 150600000000\ncpu1 150900000000\n" >expect &&
	cat "$MNT/groups/0/idle_cycles" >actual &&
	test_cmp expect actual &&
	test "$(cat "$MNT/groups/0/cpu0/idle_cycles")" = 150600000000 &&
	test "$(cat "$MNT/groups/0/cpu1/idle_cycles")" = 150900000000 &&
	test "$(cat "$MNT/groups/0/cpu1/cpu")" = 1
'

test_expect_success 'proc lists processes, not threads, and self' '
	ls "$MNT/proc" >actual &&
	printf "100\n200\nself\ntable\n" >expect &&
	test_cmp expect actual &&
	ls "$MNT/proc/100" >actual &&
	printf "%s\n" creation_time cycles exit_time kernel_time name \
		threads threads.table times user_time >expect &&
	test_cmp expect actual &&
	ls "$MNT/proc/100/threads" | sort -n >actual &&
	printf "100\n101\n102\n" >expect &&
	test_cmp expect actual
'

# Process 100, from the captured stat: utime 300 + stime 100 ticks = 4 s;
# kernel 1 s = 10000000 x 100 ns; user 3 s; 12e9 cycles; created 5000
# ticks = 50 s after btime 1700000000: 1700000050 s after the Unix epoch,
# FILETIME 17000000500000000 + 116444736000000000.
test_expect_success 'process times, windows units' '
	cat >expect <<-\EOT &&
	cycles 12000000000
	kernel_time 10000000
	user_time 30000000
	creation_time 133444736500000000
	exit_time 0
	EOT
	cat "$MNT/proc/100/times" >actual &&
	test_cmp expect actual &&
	test "$(cat "$MNT/proc/100/cycles")" = 12000000000 &&
	test "$(cat "$MNT/proc/100/kernel_time")" = 10000000 &&
	test "$(cat "$MNT/proc/100/user_time")" = 30000000 &&
	test "$(cat "$MNT/proc/100/creation_time")" = 133444736500000000 &&
	test "$(cat "$MNT/proc/100/exit_time")" = 0
'

# Thread 100: schedstat 1500000123 ns, utime:stime 100:50, so kernel
# 500000041 ns (5000000 x 100 ns), user 1000000082 ns (10000000).
# Thread 101: 2500 ns, utime = stime = 0: all user, 25 x 100 ns; created
# one tick (100000 x 100 ns) after 100.
test_expect_success 'thread times, windows units' '
	cat >expect <<-\EOT &&
	cycles 4500000369
	kernel_time 5000000
	user_time 10000000
	creation_time 133444736500000000
	exit_time 0
	EOT
	cat "$MNT/proc/100/threads/100/times" >actual &&
	test_cmp expect actual &&
	cat >expect <<-\EOT &&
	cycles 7500
	kernel_time 0
	user_time 25
	creation_time 133444736500100000
	exit_time 0
	EOT
	cat "$MNT/proc/100/threads/101/times" >actual &&
	test_cmp expect actual &&
	test "$(cat "$MNT/proc/100/threads/101/cycles")" = 7500
'

# "a) (b": utime 7, stime 3; its thread ran 123456789 ns, kernel share
# 3/10 = 37037036 ns.
test_expect_success 'a command name holding ") (" parses' '
	test "$(cat "$MNT/proc/200/kernel_time")" = 300000 &&
	test "$(cat "$MNT/proc/200/user_time")" = 700000 &&
	test "$(cat "$MNT/proc/200/threads/200/kernel_time")" = 370370 &&
	test "$(cat "$MNT/proc/200/threads/200/cycles")" = 370370367
'

test_expect_success 'proc/PID and below belong to the process owner' '
	test "$(stat -c "%u %g %a %s" "$MNT/proc/100")" = "1001 101 555 0" &&
	test "$(stat -c "%u %g %a %s" "$MNT/proc/100/threads/101/cycles")" = \
		"1001 101 444 $(cat "$MNT/proc/100/threads/101/cycles" | wc -c)" &&
	test "$(stat -c "%u %g" "$MNT/proc/200/times")" = "0 0" &&
	test "$(stat -c "%a %s" "$MNT/info")" = "444 $(cat "$MNT/info" | wc -c)" &&
	test "$(stat -c "%a" "$MNT/groups/0")" = 555
'

test_expect_success 'a truncated stat line is an I/O error, not a value' '
	for f in ${TABLE_VALUES#cycles } times; do
		! cat "$MNT/proc/100/threads/102/$f" >out 2>err &&
		grep "Input/output error" err &&
		test ! -s out || return 1
	done &&
	test "$(cat "$MNT/proc/100/threads/102/cycles")" = 2997
'

# A table's line holds what the thread's own files hold.
test_expect_success 'threads.table: a header, then each thread as its files say' '
	t=$MNT/proc/200/threads/200 &&
	{
		echo "$TABLE_HEADER" &&
		echo "200 200 $(cat "$t/cycles") $(cat "$t/kernel_time")" \
			"$(cat "$t/user_time") $(cat "$t/creation_time")" \
			"$(cat "$t/exit_time") a)\\040(b"
	} >expect &&
	test "$(cat "$t/name")" = "a) (b" &&
	cat "$MNT/proc/200/threads.table" >actual &&
	test_cmp expect actual &&
	test "$(cat "$t/cycles")" = 370370367
'

test_expect_success 'a table with a broken source is EIO, never a short table' '
	! cat "$MNT/proc/100/threads.table" >out 2>err &&
	grep "Input/output error" err && test ! -s out &&
	! cat "$MNT/proc/table" >out 2>err &&
	grep "Input/output error" err && test ! -s out
'

test_expect_success 'a thread is not a process; a thread of another is not ours' '
	test "$("$BIN/helper-io" errno stat "$MNT/proc/101")" = ENOENT &&
	test "$("$BIN/helper-io" errno stat "$MNT/proc/100/threads/200")" = ENOENT &&
	test "$("$BIN/helper-io" errno stat "$MNT/proc/100/threads/999")" = ENOENT &&
	test "$("$BIN/helper-io" errno stat "$MNT/proc/999")" = ENOENT
'

test_expect_success 'non-canonical names are ENOENT' '
	for name in proc/0100 proc/+100 proc/-100 proc/100x proc/0 \
		proc/4294967396 proc/100/threads/0101 groups/1 groups/00 \
		groups/+0 groups/0/cpu2 groups/0/cpu01 groups/0/cpu \
		groups/0/cpu-1 proc/100/nothing info/x; do
		echo "$name $("$BIN/helper-io" errno stat "$MNT/$name")"
	done >actual &&
	! grep -v -e " ENOENT\$" -e "^info/x ENOTDIR\$" actual
'

test_expect_success 'setup: m2 with format.units=unix mounted' '
	remount unix m2 format.units=unix
'

test_expect_success 'unix units: durations and timestamps in ns' '
	cat >expect <<-\EOT &&
	cycles 4500000369
	kernel_time 500000041
	user_time 1000000082
	creation_time 1700000050000000000
	exit_time 0
	EOT
	cat "$MNT/proc/100/threads/100/times" >actual &&
	test_cmp expect actual &&
	test "$(cat "$MNT/proc/100/user_time")" = 3000000000 &&
	grep -x "units unix" "$MNT/info"
'

test_expect_success 'setup: cpuidle mounted' '
	remount cpuidle cpuidle
'

# The residencies of the idle states, microseconds: cpu0 100 + 2000000 +
# 500000 = 2.5001 s, cpu1 10 + 1000 = 1.01 ms; /proc/stat is not used.
test_expect_success 'cpuidle: idle cycles from the idle states residencies' '
	grep -x "idle_source cpuidle" "$MNT/info" &&
	printf "cpu0 7500300000\ncpu1 3030000\n" >expect &&
	cat "$MNT/groups/0/idle_cycles" >actual &&
	test_cmp expect actual &&
	test "$(cat "$MNT/groups/0/cpu1/idle_cycles")" = 3030000
'

test_expect_success 'setup: nonuma with groups.max_size=2 mounted' '
	remount nonuma nonuma groups.max_size=2
'

# No node directories: every CPU is in node 0, which groups of 2 split.
test_expect_success 'no NUMA information: one node, split by max_size' '
	ls "$MNT/groups" >actual &&
	printf "0\n1\ncurrent\n" >expect &&
	test_cmp expect actual &&
	test "$(cat "$MNT/groups/0/cpus")" = 0-1 &&
	test "$(cat "$MNT/groups/1/cpus")" = 2 &&
	test "$(cat "$MNT/groups/1/cpu0/cpu")" = 2 &&
	printf "cpu0 300000000\n" >expect &&
	test_cmp expect "$MNT/groups/1/idle_cycles" &&
	test "$("$BIN/helper-io" errno stat "$MNT/groups/1/cpu1")" = ENOENT
'

test_expect_success 'setup: m96 mounted' '
	remount m96 m96
'

# node0 = 0-23,48-71 and node1 = 24-47,72-95 (CPU 30 offline): each
# fills a group of its own.
test_expect_success 'm96, groups of 64: a node per group, offline unlisted' '
	ls "$MNT/groups" >actual &&
	printf "0\n1\ncurrent\n" >expect &&
	test_cmp expect actual &&
	test "$(cat "$MNT/groups/0/cpus")" = "0-23,48-71" &&
	test "$(cat "$MNT/groups/1/cpus")" = "24-29,31-47,72-95" &&
	test "$(cat "$MNT/groups/0/cpu24/cpu")" = 48 &&
	test "$(cat "$MNT/groups/1/cpu7/cpu")" = 31 &&
	test "$("$BIN/helper-io" errno stat "$MNT/groups/1/cpu6")" = ENOENT &&
	test "$(ls "$MNT/groups/1" | grep -c "^cpu[0-9]")" = 47 &&
	test "$(wc -l <"$MNT/groups/1/idle_cycles")" = 47
'

# CPU N idles 1000+N ticks plus 2 of iowait: cpu24 is 10.26 s, cpu95
# (group 1, M47) 10.97 s.
test_expect_success 'm96: idle cycles by group-relative number' '
	test "$(cat "$MNT/groups/1/cpu0/idle_cycles")" = 30780000000 &&
	grep -x "cpu0 30780000000" "$MNT/groups/1/idle_cycles" &&
	! grep "^cpu6 " "$MNT/groups/1/idle_cycles" &&
	grep -x "cpu47 32910000000" "$MNT/groups/1/idle_cycles"
'

test_expect_success 'setup: m96 with groups.max_size=16 mounted' '
	remount m96-16 m96 groups.max_size=16
'

test_expect_success 'm96, groups of 16: nodes split in CPU order' '
	for g in 0 1 2 3 4 5; do
		echo "$g $(cat "$MNT/groups/$g/cpus")"
	done >actual &&
	cat >expect <<-\EOT &&
	0 0-15
	1 16-23,48-55
	2 56-71
	3 24-29,31-39
	4 40-47,72-79
	5 80-95
	EOT
	test_cmp expect actual &&
	test "$("$BIN/helper-io" errno stat "$MNT/groups/6")" = ENOENT &&
	grep -x "group_max_size 16" "$MNT/info"
'

test_expect_success 'setup: m200 mounted' '
	remount m200 m200
'

test_expect_success 'm200: a node of 100 splits 64 + 36, the next starts anew' '
	for g in 0 1 2 3; do
		echo "$g $(cat "$MNT/groups/$g/cpus")"
	done >actual &&
	printf "0 0-63\n1 64-99\n2 100-163\n3 164-199\n" >expect &&
	test_cmp expect actual &&
	test "$(wc -l <"$MNT/groups/0/idle_cycles")" = 64 &&
	test "$(cat "$MNT/groups/3/cpu35/cpu")" = 199
'

test_expect_success 'the last daemon unmounts, exit 0' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_done
