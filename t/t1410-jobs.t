#!/bin/bash
test_description='jobs/: the CPU accounting of cgroups as Windows accounts
jobs. Cgroups made by the test on the hierarchy that accounts the CPU
here (v1 cpuacct), a busy child, a sleeping one and one that exited;
their values against the kernel'"'"'s own files, read before and after
with the busy child stopped; a PID namespace whose first process is in
a cgroup of the test sees that cgroup and nothing above it; a cgroup
made again under its name is not the one a held directory names; and a
cgroup2 mounted in a sys root of its own, for a v2 layout.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

V1=/sys/fs/cgroup/cpuacct
CG=$V1/timingfs-t1410-$$
V2SYS=$TRASH/v2sys
V2=$V2SYS/fs/cgroup
V2CG=$V2/timingfs-t1410-$$

# cgroup_rm DIR: every process in DIR and below killed, then DIR and
# what is below it removed, deepest first.
cgroup_rm() {
	local d p
	[ -d "$1" ] || return 0
	for d in $(find "$1" -depth -type d); do
		for p in $(cat "$d/cgroup.procs" 2>/dev/null); do
			kill -CONT "$p" 2>/dev/null
			kill -KILL "$p" 2>/dev/null
		done
	done
	for d in $(find "$1" -depth -type d); do
		test_poll_ 10 rmdir "$d" 2>/dev/null
	done
}

jobs_cleanup() {
	kill_cleanup_pids
	cgroup_rm "$CG"
	cgroup_rm "$V2CG"
	unmount_timingfs_on V2 "$TRASH/mnt2" >/dev/null 2>&1
	if is_mounted "$V2"; then
		umount "$V2" 2>/dev/null || umount -l "$V2"
	fi
	is_mounted "$V2" || cleanup
}
trap jobs_cleanup EXIT

# in_cgroup DIR CMD...: CMD run in the background in cgroup DIR (its
# pid in $!), as a child of this shell.
in_cgroup() {
	local dir=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$dir" "$@" &
}

# procs_are DIR PIDS: the processes of cgroup DIR are PIDS (one line).
procs_are() {
	test "$(cat "$1/cgroup.procs" | tr "\n" " ")" = "$2 "
}

# used_at_least DIR NS: cgroup DIR has used NS ns of CPU time.
used_at_least() {
	test "$(cat "$1/cpuacct.usage")" -ge "$2"
}

# total FILE: kernel_time + user_time of a times file.
total() {
	awk '$1 == "kernel_time" || $1 == "user_time" { s += $2 } END { print s }' "$1"
}

# value FILE KEY: the value of line KEY of a times file.
value() {
	sed -n "s/^$2 //p" "$1"
}

# within_one USAGE_BEFORE USAGE_AFTER TOTAL: TOTAL (in 100 ns) is the
# usage (ns) converted, to within one unit, between the two readings.
within_one() {
	echo "usage $1..$2 ns, kernel+user $3" &&
	test "$3" -ge $(($1 / 100 - 1)) && test "$3" -le $(($2 / 100))
}

# view.sh MNT CGROUP, run as the first process of a PID namespace in
# CGROUP: what it sees of jobs/, a line each.
cat >"$TRASH/view.sh" <<-\EOF
	M=$1 C=$2
	sh -c 'echo $$ >"$0/inner/cgroup.procs"; exec sleep 1000' "$C" &
	i=0
	while [ "$(cat "$C/inner/cgroup.procs")" != "$!" ] && [ $i -lt 100 ]; do
		sleep 0.1; i=$((i + 1))
	done
	echo "list $(ls "$M/jobs" | tr "\n" " ")"
	echo "up $(stat -c %i "$M/jobs/..") root $(stat -c %i "$M")"
	echo "self $(readlink "$M/proc/self/job")"
	echo "inner $(readlink "$M/proc/$!/job")"
	if [ -e "$M/jobs/sub" ] || [ -e "$M/jobs/../jobs/sub" ]; then
		echo "sibling seen"
	else
		echo "sibling unseen"
	fi
	before=$(cat "$C/cpuacct.usage")
	cat "$M/jobs/times" >"$M.times.$$"
	after=$(cat "$C/cpuacct.usage")
	echo "usage $before $after $(awk '$1 ~ /_time$/ { s += $2 } END { print s }' "$M.times.$$")"
	rm -f "$M.times.$$"
	echo "procs $(cat "$M/jobs/active_processes") $(cat "$M/jobs/inner/active_processes")"
	kill $!
EOF

test_lazy_prereq CPUACCT_V1 '
	grep -q " - cgroup [^ ]* [^ ]*cpuacct" /proc/self/mountinfo &&
	test -w "$V1"
'
test_lazy_prereq UNSHARE 'unshare -p -f --mount-proc true'
test_lazy_prereq PYTHON 'python3 -c "import os"'

test_expect_success 'setup: mounted' '
	write_config "$TRASH/live.conf" format.units=windows exited.keep=0 &&
	mount_timingfs "$TRASH/live.conf" &&
	HZ=$(sed -n "s/^tsc_hz //p" "$MNT/info") &&
	test "$HZ" -gt 0
'

test_expect_success CPUACCT_V1 'info says jobs v1 where cpuacct is a v1 hierarchy' '
	grep -x "jobs v1" "$MNT/info"
'

test_expect_success CPUACCT_V1 'setup: a cgroup with an exited, a busy and a sleeping child' '
	mkdir "$CG" &&
	in_cgroup "$CG" sh -c "i=0; while [ \$i -lt 100000 ]; do i=\$((i + 1)); done" &&
	wait $! &&
	EXITED=$(cat "$CG/cpuacct.usage") &&
	echo "the exited child ran $EXITED ns" &&
	test "$EXITED" -gt 0 &&
	in_cgroup "$CG" "$BIN/helper-busy" -k >"$TRASH/busy" &&
	BUSY=$! && kill_at_exit "$BUSY" &&
	in_cgroup "$CG" sleep 1000 &&
	SLEEPER=$! && kill_at_exit "$SLEEPER" &&
	wait_file "$TRASH/busy" &&
	wait_for 20 procs_are "$CG" "$BUSY $SLEEPER" &&
	wait_for 40 used_at_least "$CG" $((EXITED + 200000000))
'

test_expect_success CPUACCT_V1 'jobs/ lists the cgroup; its files and times' '
	J=$MNT/jobs/${CG##*/} &&
	ls "$MNT/jobs" >list &&
	grep -x "${CG##*/}" list && grep -x times list &&
	ls "$J" >files &&
	printf "%s\n" active_processes cycles kernel_time times user_time >expect &&
	test_cmp expect files &&
	test "$(stat -c %F "$J")" = directory
'

test_expect_success CPUACCT_V1 'values never go backwards while the busy child runs' '
	prev=0 && prevk=0 && prevu=0 &&
	for i in 1 2 3 4 5 6 7 8 9 10; do
		cat "$J/times" >t &&
		c=$(value t cycles) && k=$(value t kernel_time) &&
		u=$(value t user_time) &&
		test "$c" -ge "$prev" && test "$k" -ge "$prevk" &&
		test "$u" -ge "$prevu" &&
		prev=$c && prevk=$k && prevu=$u || return 1
	done
'

test_expect_success CPUACCT_V1 'kernel + user time is the usage, the exited child included' '
	kill -STOP "$BUSY" &&
	before=$(cat "$CG/cpuacct.usage") &&
	cat "$J/times" >t &&
	after=$(cat "$CG/cpuacct.usage") &&
	within_one "$before" "$after" "$(total t)" &&
	test "$(total t)" -ge $((EXITED / 100)) &&
	test "$(value t kernel_time)" -gt 0 && test "$(value t user_time)" -gt 0
'

test_expect_success CPUACCT_V1 'cycles are the usage times tsc_hz' '
	usage=$(cat "$CG/cpuacct.usage") &&
	c=$(cat "$J/cycles") &&
	us=$((c / (HZ / 1000000))) &&
	echo "usage $usage ns, cycles $c as $us us" &&
	test "$us" -ge $((usage / 1000 * 999 / 1000)) &&
	test "$us" -le $((usage / 1000 * 1001 / 1000 + 1))
'

test_expect_success CPUACCT_V1 'the value files agree with times (busy child stopped)' '
	cat "$J/times" >t &&
	for v in cycles kernel_time user_time active_processes; do
		test "$(cat "$J/$v")" = "$(value t $v)" || return 1
	done
'

test_expect_success CPUACCT_V1 'active_processes counts the live ones, below too' '
	test "$(cat "$J/active_processes")" = 2 &&
	mkdir "$CG/sub" &&
	in_cgroup "$CG/sub" sleep 1000 &&
	kill_at_exit $! &&
	wait_for 20 procs_are "$CG/sub" $! &&
	test "$(cat "$J/active_processes")" = 3 &&
	test "$(cat "$J/sub/active_processes")" = 1 &&
	kill -CONT "$BUSY"
'

test_expect_success CPUACCT_V1 'proc/PID/job links to the job of the process' '
	test "$(readlink "$MNT/proc/$BUSY/job")" = "../../jobs/${CG##*/}" &&
	test "$(readlink "$MNT/proc/$$/job")" = "../../jobs" &&
	test "$(cat "$MNT/proc/$BUSY/job/active_processes")" = 3
'

test_expect_success CPUACCT_V1 'writes are EROFS, bad names ENOENT' '
	test "$("$BIN/helper-io" errno stat "$J/nosuch")" = ENOENT &&
	test "$("$BIN/helper-io" errno stat "$MNT/jobs/${CG##*/}/sub/x/y")" = ENOENT &&
	test "$("$BIN/helper-io" errno mkdir "$J/new")" = EROFS &&
	test ! -d "$CG/new"
'

# A held directory of jobs/NAME names the cgroup it was, not another made
# under its name since: the held one reads ENOENT.
test_expect_success CPUACCT_V1,PYTHON 'a cgroup made again under its name is another job' '
	mkdir "$CG/again" &&
	python3 - "$J/again" "$CG/again" >out <<-\EOF &&
	import errno, os, sys
	held = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
	os.read(os.open("cycles", os.O_RDONLY, dir_fd=held), 64)
	os.rmdir(sys.argv[2])
	os.mkdir(sys.argv[2])
	try:
	    os.open("cycles", os.O_RDONLY, dir_fd=held)
	    print("opened")
	except OSError as e:
	    print(errno.errorcode[e.errno])
	EOF
	echo ENOENT >expect &&
	test_cmp expect out &&
	wait_for 5 test -e "$J/again/cycles"
'

# A PID namespace whose first process is in $CG/view: its jobs/ is that
# cgroup, nothing above it or beside it is reachable.
test_expect_success CPUACCT_V1,UNSHARE 'in a PID namespace: jobs/ is its first process'"'"'s cgroup' '
	mkdir "$CG/view" "$CG/view/inner" &&
	in_cgroup "$CG/view" unshare -p -f --mount-proc sh "$TRASH/view.sh" "$MNT" "$CG/view" >out &&
	wait $! &&
	cat out &&
	grep -x "list active_processes cycles inner kernel_time times user_time " out &&
	grep -x "up 1 root 1" out &&
	grep -x "self ../../jobs" out &&
	grep -x "inner ../../jobs/inner" out &&
	grep -x "sibling unseen" out &&
	set -- $(sed -n "s/^procs //p" out) &&
	test "$1" -ge 3 && test "$2" = 1 &&
	set -- $(sed -n "s/^usage //p" out) &&
	within_one "$1" "$2" "$3"
'

test_expect_success CPUACCT_V1,UNSHARE 'a process outside the namespace'"'"'s cgroup has no job link' '
	mkdir -p "$CG/view" &&
	in_cgroup "$CG/view" unshare -p -f --mount-proc sh -c \
		"sh -c \"echo \\\$\\\$ >$CG/sub/cgroup.procs; sleep 0.5\" & sleep 0.2; readlink $MNT/proc/\$!/job || echo none; wait" >out &&
	wait $! &&
	test "$(cat out)" = none
'

# A directory of the host's jobs/ held open into a PID namespace whose
# first process is in $CG/view reads nothing through it: its view's
# jobs/ is $CG/view, and the host's root is above it.
test_expect_success CPUACCT_V1,UNSHARE 'a held directory of another view'"'"'s jobs/ reads nothing above' '
	mkdir -p "$CG/view" &&
	cat "$MNT/jobs/cycles" >/dev/null &&
	in_cgroup "$CG/view" unshare -p -f --mount-proc sh -c \
		"cat /proc/self/fd/9/cycles || echo refused; ls /proc/self/fd/9/ || echo unlisted" \
		>out 2>err 9<"$MNT/jobs" &&
	wait $! &&
	cat out err &&
	grep -x refused out && grep -x unlisted out &&
	test "$(wc -l <out)" = 2
'

test_expect_success CPUACCT_V1 'the test cgroup goes' '
	kill_cleanup_pids &&
	cgroup_rm "$CG" &&
	test ! -d "$CG" &&
	test "$("$BIN/helper-io" errno stat "$J")" = ENOENT
'

# A v2-only layout: cgroup2 mounted in a sys root of a second daemon.
test_expect_success 'setup: a daemon whose sys root holds a cgroup2 alone' '
	mkdir -p "$V2" "$TRASH/mnt2" &&
	ln -s /sys/devices "$V2SYS/devices" &&
	mount -t cgroup2 none "$V2" &&
	write_config "$TRASH/v2.conf" format.units=windows exited.keep=0 \
		"sources.sys=$V2SYS" &&
	start_timingfs_on V2 "$TRASH/mnt2" -c "$TRASH/v2.conf" &&
	grep -x "jobs v2" "$TRASH/mnt2/info"
'

test_expect_success 'v2: kernel + user time is cpu.stat'"'"'s usage_usec' '
	mkdir "$V2CG" &&
	in_cgroup "$V2CG" "$BIN/helper-busy" -k >"$TRASH/busy2" &&
	B2=$! && kill_at_exit "$B2" &&
	wait_file "$TRASH/busy2" &&
	sleep 0.3 &&
	kill -STOP "$B2" &&
	J2=$TRASH/mnt2/jobs/${V2CG##*/} &&
	before=$(sed -n "s/^usage_usec //p" "$V2CG/cpu.stat") &&
	cat "$J2/times" >t &&
	after=$(sed -n "s/^usage_usec //p" "$V2CG/cpu.stat") &&
	cat t &&
	within_one $((before * 1000)) $((after * 1000)) "$(total t)" &&
	test "$(value t active_processes)" = 1 &&
	test "$(readlink "$TRASH/mnt2/proc/$B2/job")" = "../../jobs/${V2CG##*/}" &&
	kill -CONT "$B2"
'

test_expect_success 'v2: the daemon is unmounted, the cgroup2 goes' '
	kill_cleanup_pids &&
	cgroup_rm "$V2CG" &&
	unmount_timingfs_on V2 "$TRASH/mnt2" &&
	umount "$V2"
'

test_done
