#!/bin/bash
test_description='Creation times to the nanosecond: with [sources] tasks
= bpf the engine reads every task start from one pass of a BPF task
iterator, so a thread made between two readings of CLOCK_REALTIME has a
creation_time between them (within 50 us); with tasks = procfs it is in
clock ticks, as stat field 22 gives it. Where BPF cannot be had (bpf(2)
refused, no kernel BTF), auto falls back to procfs and says why, and bpf
does not start. A captured tree is always procfs.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

# The task iterator needs root, the kernel BTF and the initial PID
# namespace; where those are, a daemon that cannot load it fails here.
test_lazy_prereq BPF '
	[ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ] &&
	[ "$(awk "/^NSpid:/ { print NF }" /proc/self/status)" = 2 ]
'

THREADS=200

# start_threads: $THREADS threads of helper-born, 1 ms apart; their
# lines in $TRASH/born, its pid in $BORN.
start_threads() {
	{ "$BIN/helper-born" "$THREADS" 1000 "$TRASH/born" </dev/null & } &&
	BORN=$! &&
	kill_at_exit "$BORN" &&
	wait_file "$TRASH/born" $((THREADS + 1)) 30 &&
	test "$(grep -c -v "^ready" "$TRASH/born")" = "$THREADS"
}

# check_born LOW HIGH: each thread's creation_time (units = unix) lies
# within [BEFORE - LOW, AFTER + HIGH] ns; those off by more than 50 us
# before BEFORE are counted in $EARLY, the others that fail in $BAD.
check_born() {
	local tid before after ct
	EARLY=0 BAD=0
	while read -r tid before after; do
		[ "$tid" = ready ] && continue
		read -r ct <"$MNT/proc/$BORN/threads/$tid/creation_time" ||
			return 1
		if [ "$ct" -lt $((before - $1)) ] || [ "$ct" -gt $((after + $2)) ]; then
			BAD=$((BAD + 1))
			[ "$BAD" -le 3 ] && echo "thread $tid: $ct not in [$before, $after]"
		elif [ "$ct" -lt $((before - 50000)) ]; then
			EARLY=$((EARLY + 1))
		fi
	done <"$TRASH/born"
	echo "threads $THREADS bad $BAD more than 50 us early $EARLY"
}

test_expect_success BPF 'setup: tasks = bpf, units = unix; info says bpf' '
	write_config "$TRASH/bpf.conf" format.units=unix sources.tasks=bpf &&
	mount_timingfs "$TRASH/bpf.conf" &&
	grep -x "task_source bpf" "$MNT/info" &&
	start_threads
'

test_expect_success BPF 'bpf: every creation_time within 50 us of its thread start' '
	check_born 50000 50000 &&
	test "$BAD" = 0 && test "$EARLY" = 0
'

test_expect_success BPF 'bpf: the same value in times, threads.table, and read again' '
	while read -r tid before after; do
		[ "$tid" = ready ] && continue
		ct=$(cat "$MNT/proc/$BORN/threads/$tid/creation_time") &&
		test "$(sed -n "s/^creation_time //p" \
			"$MNT/proc/$BORN/threads/$tid/times")" = "$ct" &&
		echo "$tid $ct" || return 1
	done <"$TRASH/born" >"$TRASH/values" &&
	awk "NR > 1 { print \$2, \$6 }" "$MNT/proc/$BORN/threads.table" |
		sort >"$TRASH/table" &&
	sort "$TRASH/values" >"$TRASH/values.sorted" &&
	join "$TRASH/values.sorted" "$TRASH/table" >"$TRASH/joined" &&
	test "$(wc -l <"$TRASH/joined")" = "$THREADS" &&
	! awk "\$2 != \$3" "$TRASH/joined" | grep . &&
	while read -r tid ct; do
		test "$(cat "$MNT/proc/$BORN/threads/$tid/creation_time")" = "$ct" ||
			return 1
	done <"$TRASH/values"
'

test_expect_success BPF 'bpf: within the tick that stat field 22 names' '
	tick=$((1000000000 / $(getconf CLK_TCK))) &&
	boot=$(sed -n "s/^btime //p" /proc/stat) &&
	while read -r tid ct; do
		s=$(awk "{ sub(/^.*\\) /, \"\"); print \$20 }" \
			"/proc/$BORN/task/$tid/stat") &&
		off=$((ct - boot * 1000000000 - s * tick)) &&
		# btime is whole seconds: the offset lies within a second
		# and a tick of the start in ticks.
		test "$off" -gt -1000000000 && test "$off" -lt $((1000000000 + tick)) ||
			{ echo "thread $tid: $ct, stat $s"; return 1; }
	done <"$TRASH/values"
'

test_expect_success BPF 'cleanup: bpf mount' '
	unmount_timingfs && test "$TFS_STATUS" = 0
'

test_expect_success 'setup: tasks = procfs; info says procfs' '
	write_config "$TRASH/procfs.conf" format.units=unix sources.tasks=procfs &&
	mount_timingfs "$TRASH/procfs.conf" &&
	grep -x "task_source procfs" "$MNT/info" &&
	{ [ -n "${BORN:-}" ] || start_threads; }
'

# A tick is 10 ms at USER_HZ 100: most starts lie more than 50 us after
# the tick they are counted in.
test_expect_success 'procfs: creation_time in ticks, as before' '
	tick=$((1000000000 / $(getconf CLK_TCK))) &&
	check_born $((tick + 1000000)) 1000000 &&
	test "$BAD" = 0 && test "$EARLY" -ge $((THREADS / 2))
'

test_expect_success 'cleanup: procfs mount' '
	unmount_timingfs && test "$TFS_STATUS" = 0
'

test_expect_success BPF 'bpf(2) refused: auto falls back to procfs and says why' '
	write_config "$TRASH/auto.conf" sources.tasks=auto &&
	TEST_DAEMON_OLDKERNEL=1 mount_timingfs "$TRASH/auto.conf" &&
	grep -x "task_source procfs" "$MNT/info" &&
	grep "task source procfs: cannot load the task iterator" "$TRASH/TFS.err" &&
	unmount_timingfs && test "$TFS_STATUS" = 0
'

test_expect_success BPF 'bpf(2) refused: tasks = bpf does not start, and says why' '
	test_expect_code 1 "$BIN/helper-oldkernel" "$TIMINGFS" -f \
		-c "$TRASH/bpf.conf" "$MNT" 2>"$TRASH/err" &&
	cat "$TRASH/err" &&
	grep "\[sources\] tasks = bpf: cannot load the task iterator" "$TRASH/err" &&
	! is_mounted "$MNT"
'

test_expect_success BPF,UNSHARE 'no kernel BTF: auto falls back to procfs and says why' '
	unshare -m sh -c "
		mount -t tmpfs none /sys/kernel/btf &&
		\"$TIMINGFS\" -c \"$TRASH/auto.conf\" \"$MNT\" 2>\"$TRASH/nobtf.err\" &&
		cat \"$MNT/info\" >\"$TRASH/nobtf.info\";
		fusermount3 -u \"$MNT\"
	" &&
	cat "$TRASH/nobtf.err" &&
	grep -x "task_source procfs" "$TRASH/nobtf.info" &&
	grep "task source procfs: no kernel BTF" "$TRASH/nobtf.err"
'

test_expect_success 'a captured tree is procfs, whatever tasks says' '
	fixture_config "$TRASH/fix.conf" m2 sources.tasks=bpf &&
	mount_timingfs "$TRASH/fix.conf" &&
	grep -x "task_source procfs" "$MNT/info" &&
	unmount_timingfs && test "$TFS_STATUS" = 0
'

test_expect_success 'tasks = anything else: exit 2, naming file, line and key' '
	write_config "$TRASH/bad.conf" sources.tasks=ebpf &&
	test_expect_code 2 "$TIMINGFS" -f -c "$TRASH/bad.conf" "$MNT" \
		2>"$TRASH/bad.err" &&
	cat "$TRASH/bad.err" &&
	grep "bad.conf:2: \[sources\] tasks: .ebpf. is not auto, bpf or procfs" \
		"$TRASH/bad.err"
'

test_expect_success 'cleanup: the threads' '
	kill "$BORN" &&
	{ wait "$BORN"; test $? = 143; }
'

test_done
