#!/bin/bash
# Hostile containers against the control plane (docs/design.md, "Security":
# "Mounts", mounts it made, and nothing else; the control plane never waits on a
# container). Each container is made by unshare -m -p -f --mount-proc
# and acts as its root would: it replaces the path to its mount with a
# symbolic link to one of its own protections (a read-only /proc/sys, as
# runc mounts it), renames the directories above it, pivots its root,
# and mounts a FUSE file system that never answers on the way. detach,
# the end of its PID namespace and SIGTERM must remove exactly the mount
# attach made, wherever it went, and nothing else; attach and detach
# must answer in time, while the daemon serves, answers timingfsctl and
# obeys signals.
#
# A process of the host that entered only a container's mount namespace
# (HOLD) keeps that namespace, and its /proc/HOLD/mountinfo, readable
# after the container's PID namespace has ended.
test_description='hostile containers: detach, a namespace end and SIGTERM
remove exactly the mount attach made; attach and detach never wait on a
container.'
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot make containers"

HANG=$BIN/helper-hang
declare -a INIT HOLD

cleanup_hostile() {
	kill_cleanup_pids # the containers and their file systems first
	cleanup
}
trap cleanup_hostile EXIT

# The init of a container: it first lazily unmounts its copies of the
# timingfs mounts of other tests running meanwhile.
CONTAINER_INIT='umount -a -l -t fuse.timingfs 2>/dev/null; exec sleep 1000'

# new_container I: container I, its init INIT[I], the holder of its
# mount namespace HOLD[I], and its directory $TRASH/cI.
new_container() {
	local u
	mkdir -p "$TRASH/c$1/run/timingfs" || return 1
	unshare -m -p -f --mount-proc sh -c "$CONTAINER_INIT" &
	u=$!
	kill_at_exit $u
	INIT[$1]=$(child_of $u) || return 1
	nsenter -t "${INIT[$1]}" -m sleep 1000 &
	HOLD[$1]=$!
	kill_at_exit ${HOLD[$1]}
}

# protect I: what runc does to /proc/sys in container I: a read-only
# bind mount of it over itself.
protect() {
	in_ns "${INIT[$1]}" sh -c \
		'mount --bind /proc/sys /proc/sys &&
		mount -o remount,bind,ro /proc/sys /proc/sys' &&
	test "$(mounts_at "$1" /proc/sys)" = 1
}

# mounts_at I DIR: how many mounts container I has at DIR (a mount
# point as its mountinfo shows it).
mounts_at() {
	awk -v dir="$2" '$5 == dir { n++ } END { print n + 0 }' \
		"/proc/${HOLD[$1]}/mountinfo"
}

# timingfs_mounts I: how many fuse.timingfs mounts container I has.
timingfs_mounts() {
	grep -c " - fuse\.timingfs " "/proc/${HOLD[$1]}/mountinfo"
}

# attack I: as container I's root, the path to its mount made a link to
# its read-only /proc/sys, the directory above it renamed away.
attack() {
	in_ns "${INIT[$1]}" sh -c \
		'mv "$1/run" "$1/run.moved" && mkdir "$1/run" &&
		ln -s /proc/sys "$1/run/timingfs"' - "$TRASH/c$1"
}

# attach_c I [DIR]: attach container I at DIR ($TRASH/cI/run/timingfs).
attach_c() {
	"$TIMINGFSCTL" attach "/proc/${INIT[$1]}/ns/pid" \
		"${2:-$TRASH/c$1/run/timingfs}"
}

# intact I: container I kept its read-only /proc/sys and has no
# timingfs mount left; says what it has otherwise.
intact() {
	test "$(mounts_at "$1" /proc/sys)" = 1 &&
	test "$(timingfs_mounts "$1")" = 0 || {
		echo "container $1: $(mounts_at "$1" /proc/sys) mounts on" \
			"/proc/sys (1 before), $(timingfs_mounts "$1")" \
			"fuse.timingfs left:"
		cat "/proc/${HOLD[$1]}/mountinfo"
		return 1
	}
}

# none_left I: container I has no timingfs mount; its mounts otherwise.
none_left() {
	test "$(timingfs_mounts "$1")" = 0 || {
		cat "/proc/${HOLD[$1]}/mountinfo"
		return 1
	}
}

# hang I DIR: a FUSE file system that never answers, mounted at DIR in
# container I by a process of the test (killed at the end).
hang() {
	mkdir -p "$2" || return 1
	in_ns "${INIT[$1]}" "$HANG" "$2" >"$TRASH/hang.$1" &
	kill_at_exit $!
	wait_for 10 \
		grep -q mounted "$TRASH/hang.$1"
}

# hung_attach: in the background, container 5 attached below its file
# system that never answers; its exit status to $TRASH/hung.status, its
# errors to $TRASH/hung.err, its pid in $pending.
hung_attach() {
	{
		bounded 30 "$TIMINGFSCTL" attach "/proc/${INIT[5]}/ns/pid" \
			"$TRASH/c5/hang/timingfs" 2>"$TRASH/hung.err"
		echo $? >"$TRASH/hung.status"
	} &
	pending=$!
}

# daemon_children: whether the daemon has a child process but the
# fusermount3 that unmounts its own mount at its end (it says which).
daemon_children() {
	ps -o pid=,stat=,wchan:32=,args= --ppid "$(server_of "$TFS_PID")" |
		grep -v " fusermount3 "
}

# ns_listed I: whether timingfsctl mounts lists container I.
ns_listed() {
	"$TIMINGFSCTL" mounts | grep -q " init ${INIT[$1]} "
}

test_expect_success 'setup: seven containers, then the daemon' '
	for i in 1 2 3 4 5 6 7; do
		new_container $i || return 1
	done &&
	start_timingfs
'

test_expect_success 'detach after the path became a link to /proc/sys' '
	protect 1 &&
	attach_c 1 &&
	test "$(timingfs_mounts 1)" = 1 &&
	attack 1 &&
	"$TIMINGFSCTL" detach "/proc/${INIT[1]}/ns/pid" \
		"$TRASH/c1/run/timingfs" &&
	intact 1 &&
	! ns_listed 1
'

test_expect_success 'the end of a container whose path became a link' '
	protect 2 &&
	attach_c 2 &&
	attack 2 &&
	kill -KILL "${INIT[2]}" &&
	wait_for 10 test_not_ ns_listed 2 &&
	intact 2
'

test_expect_success 'detach after the container pivoted its root' '
	R=$TRASH/c3/root &&
	mkdir -p "$R/run/timingfs" "$R/old" &&
	in_ns "${INIT[3]}" mount --bind "$R" "$R" &&
	attach_c 3 "$R/run/timingfs" &&
	in_ns "${INIT[3]}" sh -c "cd \"\$1\" && exec pivot_root . old" - "$R" &&
	awk "\$5 == \"/run/timingfs\"" "/proc/${HOLD[3]}/mountinfo" |
		grep -q " - fuse\.timingfs " &&
	"$TIMINGFSCTL" detach "/proc/${INIT[3]}/ns/pid" "$R/run/timingfs" &&
	none_left 3
'

test_expect_success 'detach leaves alone a mount stacked on it, and what is below' '
	attach_c 7 &&
	in_ns "${INIT[7]}" mount -t tmpfs stacked "$TRASH/c7/run/timingfs" &&
	test_must_fail "$TIMINGFSCTL" detach "/proc/${INIT[7]}/ns/pid" \
		"$TRASH/c7/run/timingfs" 2>err &&
	grep -q "mounted on it" err &&
	grep -c " - tmpfs stacked " "/proc/${HOLD[7]}/mountinfo" >count &&
	test "$(cat count)" = 1 &&
	! ns_listed 7
'

test_expect_success 'attach refuses a link on the way, and makes nothing' '
	ln -s /proc/sys "$TRASH/c6/link" &&
	test_must_fail attach_c 6 "$TRASH/c6/link" 2>err &&
	grep -q "symbolic link" err &&
	test "$(wc -l <err)" = 1 &&
	test "$(timingfs_mounts 6)" = 0
'

test_expect_success 'detach under a file system that never answers' '
	attach_c 6 &&
	hang 6 "$TRASH/c6/run" &&
	bounded 20 "$TIMINGFSCTL" detach "/proc/${INIT[6]}/ns/pid" \
		"$TRASH/c6/run/timingfs" &&
	test "$(timingfs_mounts 6)" = 0
'

test_expect_success 'attach under a file system that never answers: exit 1 in time' '
	hang 5 "$TRASH/c5/hang" &&
	hung_attach &&
	# Meanwhile the daemon answers, serves and attaches others.
	sleep 1 &&
	bounded 5 "$TIMINGFSCTL" mounts >/dev/null &&
	bounded 5 cat "$MNT/info" >/dev/null &&
	bounded 5 "$TIMINGFSCTL" attach "/proc/${INIT[4]}/ns/pid" \
		"$TRASH/c4/run/timingfs" &&
	wait $pending &&
	test "$(cat "$TRASH/hung.status")" = 1 &&
	grep -q "timed out" "$TRASH/hung.err" &&
	test "$(wc -l <"$TRASH/hung.err")" = 1 &&
	! ns_listed 5 &&
	wait_for 10 test_not_ daemon_children
'

test_expect_success 'SIGTERM, an attach hanging: exactly the mounts made go' '
	protect 4 &&
	attack 4 &&
	hung_attach &&
	sleep 1 &&
	kill -TERM $TFS_PID &&
	wait_for 20 test_not_ is_running $TFS_PID &&
	{ wait $TFS_PID; status=$?; } &&
	TFS_PID= &&
	test "$status" = 0 &&
	wait $pending &&
	test "$(cat "$TRASH/hung.status")" = 1 &&
	intact 4 &&
	test "$(timingfs_mounts 5)" = 0
'

test_done
