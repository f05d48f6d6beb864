#!/bin/bash
test_description='Soak: a churn of short-lived threads and processes
(helper-churn) while four walkers (helper-walk) read the whole tree of a
daemon that keeps exited tasks: no error but ENOENT for the tasks that
left, every value well-formed, the daemon alive and mounted, and its
descriptors and resident memory flat from the end of a warm-up to the
end. TEST_SOAK_SECONDS (default 12) is how long the churn and the walks
last; the script takes about 12 s more, 25 s in all.'

TEST_SOAK_SECONDS=${TEST_SOAK_SECONDS:-12}
TEST_TIMEOUT=${TEST_TIMEOUT:-$((TEST_SOAK_SECONDS + 40))}
if [ "$TEST_SOAK_SECONDS" -lt 8 ] 2>/dev/null; then
	echo "Bail out! TEST_SOAK_SECONDS=$TEST_SOAK_SECONDS: 8 s at least (a warm-up of 5)"
	exit 1
fi
. "$(dirname "$0")/test-lib.sh"
require_fuse

# The churn: thread births and forks a second (every other child has
# threads of its own), while four walkers read. The warm-up: a quarter of the
# soak, at least 5 s.
THREAD_RATE=800
FORK_RATE=80
WALKERS=4
WARMUP=$((TEST_SOAK_SECONDS / 4 > 5 ? TEST_SOAK_SECONDS / 4 : 5))
# Exited tasks kept 5 s, at most 500 of them: a churn of a tenth of its
# rate keeps the ring full.
KEEP=5
MAX_TASKS=500
# The bounds that grow up to a size and stay: the task files the engine
# keeps open and the pidfds it keeps to ask identities (two tables of
# TASK_FDS each, src/engine/taskfd.h), counted apart
# from the daemon's other descriptors; and one more open by each of
# libfuse's workers (10) between an open and its keeping.
TASK_FDS=2048 # of task files
IDENT_FDS=2048 # of pidfds
WORKERS=10
# What each walker must have read, at least, so that the soak cannot
# pass by reading nothing.
FILES_FLOOR=1000

# A sanitized build (make check-sanitize): ASan's quarantine keeps freed
# memory resident by design, so the daemon's RSS is no measure of its
# own (its descriptors are), and the churner's forks and thread starts
# cost many times more: it promises a quarter of the churn.
if test_have_prereq ASAN; then
	THREAD_RATE=200
	FORK_RATE=20
fi

# fd_count, rss_kib: the daemon's open descriptors but its caches'
# (cache_count: its task files and pidfds); its resident set.
fd_count() {
	ls -l "/proc/$(server_of "$TFS_PID")/fd" | sed 1d |
		grep -c -v -e " -> /proc/[0-9]" -e " -> anon_inode:\[pidfd\]"
}

cache_count() {
	ls -l "/proc/$(server_of "$TFS_PID")/fd" |
		grep -c -e " -> /proc/[0-9]" -e " -> anon_inode:\[pidfd\]"
}

rss_kib() {
	sed -n "s/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p" "/proc/$(server_of "$TFS_PID")/status"
}

# rss_over max|min: the largest or the smallest of ten samples of the
# resident set, 0.2 s apart. One sample is the heap at one instant, and
# holds whatever contents of big tables the walkers have open then (a
# hundred KiB each); the smallest at the end against the largest after
# the warm-up compares what stays.
rss_over() {
	local i
	for i in $(seq 1 10); do
		rss_kib && sleep 0.2 || return 1
	done | sort -n | if [ "$1" = max ]; then tail -n 1; else head -n 1; fi
}

# sleep_until S: until S s after $start (a $SECONDS), if not already.
sleep_until() {
	local left=$(($1 - (SECONDS - start)))
	[ "$left" -le 0 ] || sleep "$left"
}

# value FILE KEY: KEY's value in a "key value" FILE.
value() {
	sed -n "s/^$2 //p" "$1"
}

# fake_tree DIR: a tree of plain files shaped as a mount, well-formed.
fake_tree() {
	local d=$1 f v
	mkdir -p "$d/groups/0/cpu0" "$d/proc/7/threads/7" "$d/proc/7/threads/8" &&
	printf "version 1\nunits windows\ntsc_hz 3000000000\ntsc_source config\nclk_tck 100\nidle_source proc_stat\ngroup_max_size 64\n" >"$d/info" &&
	ln -s 0 "$d/groups/current" &&
	echo 0 >"$d/groups/0/cpus" &&
	echo "cpu0 12" >"$d/groups/0/idle_cycles" &&
	echo 12 >"$d/groups/0/cpu0/idle_cycles" &&
	echo 0 >"$d/groups/0/cpu0/cpu" &&
	ln -s 7 "$d/proc/self" &&
	printf "%s\n7 7 3 1 0 5 0 a\\\\0407\n7 8 3 1 0 5 9 b\n" \
		"$TABLE_HEADER" >"$d/proc/table" &&
	cp "$d/proc/table" "$d/proc/7/threads.table" &&
	for f in proc/7 proc/7/threads/7 proc/7/threads/8; do
		for v in $TABLE_VALUES; do
			echo 1 >"$d/$f/$v" || return 1
		done &&
		echo "a 7" >"$d/$f/name" &&
		printf "cycles 3\nkernel_time 1\nuser_time 0\ncreation_time 5\nexit_time 0\n" >"$d/$f/times" ||
		return 1
	done
}

test_expect_success 'setup: a daemon that keeps exited tasks' '
	write_config soak.conf exited.keep=$KEEP exited.max_tasks=$MAX_TASKS &&
	mount_timingfs soak.conf &&
	BASE_FDS=$(fd_count) &&
	echo "descriptors after the mount: $BASE_FDS" &&
	cat "$MNT/info" >info &&
	if grep -x "exit_source taskstats" info; then
		test_set_prereq TASKSTATS
	fi
'

test_expect_success 'helper-walk: a well-formed tree passes, a malformed value fails' '
	fake_tree good &&
	"$BIN/helper-walk" -r 1 good >good.out 2>good.err &&
	cat good.out good.err &&
	test "$(value good.out malformed)" = 0 &&
	test "$(value good.out files)" = 30 &&
	test ! -s good.err &&
	fake_tree bad &&
	echo 01 >bad/proc/7/threads/8/user_time &&
	echo "7 8 3 1 0 5" >>bad/proc/7/threads.table &&
	echo "7 8 3 1 0 5 0 a b" >>bad/proc/table &&
	printf "seventeen bytes!!\n" >bad/proc/7/name &&
	test_expect_code 1 "$BIN/helper-walk" -r 1 bad >bad.out 2>bad.err &&
	cat bad.out bad.err &&
	test "$(value bad.out errors)" = 0 &&
	test "$(value bad.out malformed)" = 4 &&
	grep "bad/proc/7/threads/8/user_time: malformed" bad.err &&
	grep "bad/proc/7/threads.table: malformed" bad.err &&
	grep "bad/proc/table: malformed" bad.err &&
	grep "bad/proc/7/name: malformed" bad.err
'

test_expect_success 'helper-walk: an EIO is an error, with its path' '
	fixture_config m2.conf m2 &&
	mkdir m2 &&
	start_timingfs_on M2 "$TRASH/m2" -c m2.conf &&
	test_when_finished "unmount_timingfs_on M2 \"\$TRASH/m2\"" &&
	test_expect_code 1 "$BIN/helper-walk" -r 1 m2 >m2.out 2>m2.err &&
	cat m2.out m2.err &&
	grep "m2/proc/100/threads/102/kernel_time: open: EIO" m2.err &&
	test "$(value m2.out errors)" -gt 0 &&
	grep "^errno EIO " m2.out
'

# A table is as large as the threads it lists, and every worker makes
# and frees them: what the readers of big tables leave behind must not
# stay resident (as it did while glibc kept, in each worker's arena,
# blocks as large as the largest table freed). The 6,000 threads may
# take a while to start on a loaded machine: up to 30 s.
test_expect_success !ASAN 'readers of a big table at once leave no memory behind' '
	{ "$BIN/helper-many" 6000 >many.out & } &&
	many=$! &&
	test_when_finished "kill $many && { wait $many || :; }" &&
	wait_file many.out "" 30 &&
	read -r big ready <many.out &&
	cat "$MNT/proc/$big/threads.table" >big.table &&
	test "$(wc -l <big.table)" = 6001 &&
	before=$(rss_kib) &&
	pids= &&
	for i in 1 2 3 4; do
		{ for k in 1 2; do
			cat "$MNT/proc/$big/threads.table" >/dev/null || exit 1
		done & } &&
		pids="$pids $!" || return 1
	done &&
	for pid in $pids; do
		wait $pid || return 1
	done &&
	after=$(rss_kib) &&
	size=$(($(wc -c <big.table) / 1024)) &&
	echo "RSS $before KiB, $after KiB after 4 readers of a $size KiB table" &&
	test $((after - before)) -le $((4 * size))
'

# Before the first sample every bound the churn can reach is reached: a
# burst of threads takes more thread ids than the table of what was
# learned at fork has slots (16,384, direct-mapped by id), and fills the
# ring of exited tasks; then the warm-up's churn and walks fill the
# engine's descriptors and its tables of recent tasks, and start
# libfuse's workers.
test_expect_success 'setup: a burst of threads fills the tables of exited tasks' '
	"$BIN/helper-exit" threads 17000 </dev/null >burst.out &&
	grep "^exit_" "$MNT/info"
'

test_expect_success 'setup: the churn and the walkers; samples after the warm-up and at the end' '
	start=$SECONDS &&
	{ "$BIN/helper-churn" -t $THREAD_RATE -p $FORK_RATE \
		-s $TEST_SOAK_SECONDS >churn.out 2>churn.err & } &&
	CHURN=$! &&
	kill_at_exit $CHURN &&
	WALKER_PIDS= &&
	for i in $(seq 1 $WALKERS); do
		{ "$BIN/helper-walk" -s $TEST_SOAK_SECONDS "$MNT" \
			>walk$i.out 2>walk$i.err & } &&
		kill_at_exit $! &&
		WALKER_PIDS="$WALKER_PIDS $!" || return 1
	done &&
	wait_file churn.out &&
	sleep_until $WARMUP &&
	WARM_AT=$((SECONDS - start)) &&
	WARM_FDS=$(fd_count) && WARM_RSS=$(rss_over max) &&
	cat "$MNT/info" >info.warm &&
	sleep_until $((TEST_SOAK_SECONDS - 3)) &&
	END_RSS=$(rss_over min) &&
	END_AT=$((SECONDS - start)) &&
	END_FDS=$(fd_count) && END_CACHED=$(cache_count) &&
	cat "$MNT/info" >info.end &&
	echo "after the warm-up, at $WARM_AT s: $WARM_FDS descriptors, $WARM_RSS KiB" &&
	echo "at the end, at $END_AT s: $END_FDS descriptors, $END_RSS KiB" &&
	# A machine that stalled past the soak left nothing to compare.
	test $((END_AT - WARM_AT)) -ge $(((TEST_SOAK_SECONDS - 1 - WARMUP) / 2)) &&
	grep "^exit_" info.warm info.end &&
	i=0 &&
	for pid in $WALKER_PIDS; do
		i=$((i + 1)) &&
		{ wait $pid; echo $? >walk$i.rc; } || return 1
	done &&
	{ wait $CHURN; echo $? >churn.rc; }
'

# Each walker in one line, then what it reported: short enough that a
# failure is read whole in any log.
test_expect_success 'the walkers: no error but ENOENT, every value well-formed' '
	for i in $(seq 1 $WALKERS); do
		echo "walker $i: exit $(cat walk$i.rc): $(tr "\n" " " <walk$i.out)" &&
		sed "s/^/walker $i: /" walk$i.err || return 1
	done &&
	for i in $(seq 1 $WALKERS); do
		test "$(cat walk$i.rc)" = 0 &&
		test "$(value walk$i.out errors)" = 0 &&
		test "$(value walk$i.out malformed)" = 0 &&
		test ! -s walk$i.err || return 1
	done
'

test_expect_success 'the walkers read: files and listings, each, and tables' '
	for i in $(seq 1 $WALKERS); do
		echo "walker $i: $(tr "\n" " " <walk$i.out)" &&
		test "$(value walk$i.out files)" -ge $FILES_FLOOR &&
		test "$(value walk$i.out lists)" -ge $((FILES_FLOOR / 10)) &&
		test "$(value walk$i.out tables)" -ge 2 || return 1
	done
'

test_expect_success TASKSTATS 'exited tasks: the ring full after the warm-up and at the end, and read' '
	test "$(value info.warm exit_retained)" = $MAX_TASKS &&
	test "$(value info.end exit_retained)" = $MAX_TASKS &&
	test "$(value info.end exit_dropped)" -gt "$(value info.warm exit_dropped)" &&
	cat walk*.out | awk "\$1 == \"exited\" { n += \$2 } END { print n; exit !(n >= 100) }"
'

test_expect_success 'the churner made the births it promised, at least half' '
	cat churn.out churn.err &&
	test "$(cat churn.rc)" = 0 &&
	read -r what threads what forks what fork_threads what missed \
		what failed < <(sed -n 2p churn.out) &&
	test "$threads" -ge $((THREAD_RATE * TEST_SOAK_SECONDS / 2)) &&
	test "$forks" -ge $((FORK_RATE * TEST_SOAK_SECONDS / 2)) &&
	test "$fork_threads" -ge $((forks / 2)) &&
	test "$failed" = 0
'

test_expect_success 'the daemon is alive, and still mounted' '
	is_running "$TFS_PID" &&
	is_mounted "$MNT" &&
	grep -x "exit_keep $KEEP" "$MNT/info"
'

# The engine keeps a descriptor per task file read lately, up to
# TASK_FDS, and a pidfd per task asked about, up to IDENT_FDS; a slot
# empties when its task has gone, so the count moves below those bounds
# with the churn. The other descriptors are flat: no more than 10%
# above the larger of the count after the warm-up and the mount's with
# a descriptor in each worker's hands.
test_expect_success 'the descriptors stayed flat' '
	full=$((BASE_FDS + WORKERS)) &&
	bound=$(( (WARM_FDS > full ? WARM_FDS : full) * 11 / 10 )) &&
	echo "after the mount $BASE_FDS, the warm-up $WARM_FDS, the end $END_FDS; bound $bound" &&
	echo "the caches: $END_CACHED at the end, of $((TASK_FDS + IDENT_FDS))" &&
	test "$END_FDS" -le "$bound" &&
	test "$END_CACHED" -le $((TASK_FDS + IDENT_FDS))
'

test_expect_success !ASAN 'the resident memory stayed flat, within 10%' '
	echo "RSS at most $WARM_RSS KiB after the warm-up, at least $END_RSS KiB at the end" &&
	test $((END_RSS * 10)) -le $((WARM_RSS * 11))
'

test_expect_success 'unmounted, the daemon exits 0, and no sanitizer spoke' '
	unmount_timingfs &&
	echo "exit status $TFS_STATUS" &&
	! grep -E -A 20 "runtime error:|Sanitizer" TFS.err &&
	test "$TFS_STATUS" = 0
'

test_done
