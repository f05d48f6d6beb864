#!/bin/bash
test_description='Soak: the daemon under many readers. Readers of a big
table at once leave no memory resident once they close it.'

. "$(dirname "$0")/test-lib.sh"
require_fuse

# A sanitized build (make check-sanitize): ASan's quarantine keeps freed
# memory resident by design, so the daemon's RSS is no measure of its
# own.
test_lazy_prereq ASAN 'grep -q __asan_init "$TIMINGFS"'

# rss_kib: the daemon's resident set.
rss_kib() {
	sed -n "s/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p" "/proc/$TFS_PID/status"
}

test_expect_success 'setup: a daemon' '
	write_config soak.conf exited.keep=5 &&
	mount_timingfs soak.conf
'

# A table is as large as the threads it lists, and every worker makes
# and frees them: what the readers of big tables leave behind must not
# stay resident (as it did while glibc kept, in each worker's arena,
# blocks as large as the largest table freed).
test_expect_success !ASAN 'readers of a big table at once leave no memory behind' '
	{ "$BIN/helper-many" 6000 >many.out & } &&
	many=$! &&
	test_when_finished "kill $many && { wait $many || :; }" &&
	wait_file many.out &&
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

test_expect_success 'unmounted, the daemon exits 0, and no sanitizer spoke' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0 &&
	! grep -E -A 20 "runtime error:|Sanitizer" TFS.err
'

test_done
