#!/bin/bash
test_description='Errors: names that do not exist are ENOENT, every
change is EROFS, a broken source is EIO. Each call is made by helper-io,
which prints the errno name, so that the test sees the exact error and
no shell rewording of it.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

test_expect_success 'setup: the m2 fixture mounted' '
	fixture_config "$TRASH/m2.conf" m2 &&
	mount_timingfs "$TRASH/m2.conf"
'

# errno_of CALL PATH [PATH2]: the errno name of one call.
errno_of() {
	"$BIN/helper-io" errno "$@"
}

test_expect_success 'helper-io tells OK from an errno' '
	test "$(errno_of stat "$MNT/info")" = OK &&
	test "$(errno_of read "$MNT/info")" = OK &&
	test "$(errno_of stat "$MNT/nothing")" = ENOENT
'

test_expect_success 'non-canonical and out-of-range names are ENOENT' '
	for name in proc/0100 proc/+100 proc/-100 proc/100x proc/x100 \
		proc/0 proc/00 proc/1e2 proc/4294967396 proc/268435556 \
		"proc/ 100" "proc/100 " proc/100/threads/0101 \
		proc/100/threads/+101 proc/100/threads/0 \
		groups/1 groups/00 groups/+0 groups/-0 groups/0x0 \
		groups/0/cpu2 groups/0/cpu01 groups/0/cpu groups/0/cpu-1 \
		groups/0/cpu+1 groups/0/CPU1 groups/0/cpu1x groups/0/1 \
		proc/100/nothing proc/100/threads/101/threads proc/Self \
		groups/Current INFO; do
		printf "%s %s\n" "$name" "$(errno_of stat "$MNT/$name")" ||
			return 1
	done >actual &&
	test "$(wc -l <actual)" = 33 &&
	cat actual &&
	! grep -v " ENOENT\$" actual
'

test_expect_success 'a process that is not there, a thread not of it: ENOENT' '
	test "$(errno_of stat "$MNT/proc/999")" = ENOENT &&
	test "$(errno_of stat "$MNT/proc/101")" = ENOENT &&
	test "$(errno_of read "$MNT/proc/101/cycles")" = ENOENT &&
	test "$(errno_of stat "$MNT/proc/100/threads/200")" = ENOENT &&
	test "$(errno_of stat "$MNT/proc/100/threads/999")" = ENOENT &&
	test "$(errno_of stat "$MNT/proc/200/threads/100")" = ENOENT &&
	test "$(errno_of opendir "$MNT/proc/999/threads")" = ENOENT
'

test_expect_success 'below a file: ENOTDIR; a directory read: EISDIR' '
	test "$(errno_of stat "$MNT/info/x")" = ENOTDIR &&
	test "$(errno_of stat "$MNT/proc/100/cycles/x")" = ENOTDIR &&
	test "$(errno_of read "$MNT/proc")" = EISDIR &&
	test "$(errno_of opendir "$MNT/info")" = ENOTDIR
'

test_expect_success 'a broken source is EIO, never a value' '
	test "$(errno_of read "$MNT/proc/100/threads/102/kernel_time")" = EIO &&
	test "$(errno_of read "$MNT/proc/100/threads/102/times")" = EIO &&
	! cat "$MNT/proc/100/threads/102/creation_time" >out 2>err &&
	grep "Input/output error" err &&
	test ! -s out
'

# The links' targets depend on the reader; here the reader is no process
# of the captured tree, so they lead nowhere, and say so.
test_expect_success 'links of a caller the tree does not hold: ENOENT' '
	test "$(errno_of lstat "$MNT/proc/self")" = OK &&
	test "$(errno_of readlink "$MNT/proc/self")" = ENOENT &&
	test "$(errno_of readlink "$MNT/groups/current")" = ENOENT &&
	test "$(errno_of readlink "$MNT/info")" = EINVAL
'

# check_erofs: every change to every kind of node.
check_erofs() {
	local file=$MNT/proc/100/cycles dir=$MNT/proc/100 op path
	for op in write rdwr trunc chmod chown truncate utimes setxattr \
		removexattr unlink; do
		echo "$op file $(errno_of $op "$file")"
	done
	for op in chmod chown utimes setxattr rmdir; do
		echo "$op dir $(errno_of $op "$dir")"
	done
	echo "create $(errno_of create "$dir/new")"
	echo "creat-existing $(errno_of creat "$MNT/info")"
	echo "mkdir $(errno_of mkdir "$dir/new")"
	echo "mknod $(errno_of mknod "$dir/new")"
	echo "symlink $(errno_of symlink "$dir/new")"
	echo "rename $(errno_of rename "$file" "$dir/new")"
	echo "rename-dir $(errno_of rename "$dir" "$MNT/proc/new")"
	echo "link $(errno_of link "$file" "$dir/new")"
	echo "unlink-link $(errno_of unlink "$MNT/proc/self")"
	echo "rmdir-root-child $(errno_of rmdir "$MNT/groups")"
	echo "write-info $(errno_of write "$MNT/info")"
	echo "write-group $(errno_of write "$MNT/groups/0/idle_cycles")"
}

test_expect_success 'every change is EROFS' '
	check_erofs >actual &&
	cat actual &&
	! grep -v " EROFS\$" actual &&
	test "$(wc -l <actual)" = 27
'

test_expect_success 'nothing changed' '
	test "$(cat "$MNT/proc/100/cycles")" = 12000000000 &&
	test "$(stat -c %a "$MNT/proc/100/cycles")" = 444 &&
	ls "$MNT/proc/100" >actual &&
	printf "%s\n" creation_time cycles exit_time kernel_time name threads \
		threads.table times user_time >expect &&
	test_cmp expect actual
'

# Mounted read-write, the kernel passes the changes on: the daemon
# itself refuses them. Only root gets past the permission checks of
# files that are 0444.
test_expect_success ROOT 'mounted rw: the daemon refuses every change, EROFS' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0 &&
	mount_timingfs "$TRASH/m2.conf" -o rw &&
	mounts_of "$MNT" | grep " fuse.timingfs rw," &&
	check_erofs >actual &&
	cat actual &&
	! grep -v " EROFS\$" actual &&
	test "$(wc -l <actual)" = 27
'

test_done
