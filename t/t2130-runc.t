#!/bin/bash
# Real containers: runc starts each from a bundle the test builds (a
# busybox-static rootfs, runc spec's config.json) with timingfs-oci-hook
# as its createRuntime hook, as docs/containers.md tells users. Inside, after
# runc's pivot_root, the mount at /run/timingfs serves the container's
# own processes under its own numbers, and busybox cat (sendfile) reads
# whole files.
#
# Then the container's root, hostile: it cannot unmount, but it can
# rename the directory that holds the mount and put a symbolic link
# where the mount was, to one of its own read-only protections (runc
# mounts /proc/sys read-only over itself). It does so at both paths
# the daemon could follow: /run/timingfs as the container sees it, and
# ROOTFS/run/timingfs, the path the hook gave attach before pivot_root
# (the container makes that path inside its root, a link to /). Then
# detach, the daemon's SIGTERM, and the container's end must each
# remove the timingfs mount attach made, wherever it went, and nothing
# else: the read-only /proc/sys stays.
#
# Last, ten containers in a row leave no mount behind, and the daemon's
# threads, descriptors and memory where they were.
test_description='runc containers started with the OCI hook: their own
view at /run/timingfs; detach, SIGTERM and the end of a container remove
the mount attach made and never the /proc/sys a hostile root put a
link to; ten containers in a row leave nothing behind.'
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot start containers"
require_runc

# proc_sys_mounts PID: how many mounts the mount namespace of PID has
# on /proc/sys (runc's read-only one: 1).
proc_sys_mounts() {
	awk '$5 == "/proc/sys" { n++ } END { print n + 0 }' "/proc/$1/mountinfo"
}

# timingfs_mounts PID: the timingfs mounts of PID's mount namespace,
# a line each (mountinfo's).
timingfs_mounts() {
	grep " - fuse\.timingfs " "/proc/$1/mountinfo"
}

# attached_target INIT: the TARGET that timingfsctl mounts lists for
# the PID namespace of INIT (the hook's ROOTFS/run/timingfs).
attached_target() {
	"$TIMINGFSCTL" mounts |
		awk -v ino="$(stat -L -c %i "/proc/$1/ns/pid")" '$1 == ino { print $2 }'
}

# not_listed INIT: timingfsctl mounts has nothing for INIT's namespace.
not_listed() {
	"$TIMINGFSCTL" mounts >listed.out &&
		! grep -q " init $1 " listed.out
}

# hostile NAME: as the root of container NAME, /run (holding the
# mount) renamed /run.away, /run/timingfs made a link to /proc/sys,
# and ROOTFS (the bundle's rootfs as the host names it), made inside
# the container's root, a link to /: so that either path to the mount
# now leads to /proc/sys. Checks that the link leads there.
hostile() {
	local rootfs=$TRASH/$1/rootfs
	runc_exec "$1" sh -c '
		mv /run /run.away && mkdir /run &&
		ln -s /proc/sys /run/timingfs &&
		mkdir -p "${1%/*}" && ln -s / "$1" &&
		test -e "$1/run/timingfs/kernel/ostype" &&
		test -d /run.away/timingfs/proc' sh "$rootfs"
}

# intact PID BEFORE: the mount namespace of PID still has BEFORE mounts
# on /proc/sys (nothing else was unmounted) and no timingfs mount, live
# or dead (its mount went, wherever it was moved to).
intact() {
	local n
	n=$(proc_sys_mounts "$1")
	echo "mounts on /proc/sys: $n (before: $2)"
	[ "$n" = "$2" ] || {
		echo "the container lost its read-only /proc/sys:" >&2
		grep " /proc" "/proc/$1/mountinfo" >&2
		return 1
	}
	! timingfs_mounts "$1" >&2 || {
		echo "a timingfs mount is left in the container (above)" >&2
		return 1
	}
}

test_expect_success 'setup: the daemon, with no exited tasks kept' '
	write_config "$TRASH/tfs.conf" exited.keep=0 &&
	start_timingfs -c "$TRASH/tfs.conf" -o allow_other &&
	"$TIMINGFSCTL" mounts >out &&
	test_must_fail test -s out
'

test_expect_success 'setup: container C1 started by runc, the hook in its config.json' '
	runc_bundle "$TRASH/C1" &&
	grep -q timingfs-oci-hook "$TRASH/C1/config.json" &&
	runc_start C1 "$TRASH/C1" &&
	test -n "$C1"
'

test_expect_success 'C1: a timingfs mount at /run/timingfs, none on the host' '
	runc_mountinfo C1 >mi &&
	awk "\$5 == \"/run/timingfs\" && / - fuse\\.timingfs /" mi >tfs &&
	cat tfs &&
	test "$(wc -l <tfs)" = 1 &&
	test "$(proc_sys_mounts $C1)" = 1 &&
	test -z "$(mounts_of "$TRASH/C1/rootfs/run/timingfs")" &&
	test "$(attached_target $C1)" = "$TRASH/C1/rootfs/run/timingfs"
'

test_expect_success 'C1: proc/self is the reader, as the container numbers it' '
	runc_exec C1 sh -c "echo \$\$; exec readlink /run/timingfs/proc/self" >out &&
	cat out &&
	test "$(wc -l <out)" = 2 &&
	test "$(sed -n 1p out)" = "$(sed -n 2p out)" &&
	test "$(sed -n 1p out)" -lt "$C1"
'

test_expect_success 'C1: proc/ holds its own processes only, as its /proc' '
	runc_exec C1 sh -c "cd /proc && echo [0-9]* && cd /run/timingfs/proc &&
		echo [0-9]* && echo 1 \$\$" >out &&
	cat out &&
	test "$(sed -n 1p out)" = "$(sed -n 2p out)" &&
	test "$(sed -n 2p out)" = "$(sed -n 3p out)"
'

test_expect_success 'C1: proc/1 is its init, the host sees it as C1' '
	runc_exec C1 cat /run/timingfs/proc/1/creation_time >in &&
	cat "$MNT/proc/$C1/creation_time" >host &&
	test_cmp host in &&
	runc_exec C1 cat /run/timingfs/proc/1/threads/1/creation_time >in1 &&
	test_cmp host in1 &&
	test_must_fail runc_exec C1 cat /run/timingfs/proc/$C1/cycles
'

# cpuacct_of PID: the directory of PID's cgroup on the v1 cpuacct
# hierarchy (none: nothing).
cpuacct_of() {
	local p
	p=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}cpuacct\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' "/proc/$1/cgroup") &&
		[ -n "$p" ] && echo "/sys/fs/cgroup/cpuacct${p%/}"
}

test_lazy_prereq CPUACCT_V1 'grep -qx "jobs v1" "$MNT/info"'

test_expect_success CPUACCT_V1 'C1: jobs/ is its own cgroup, nothing above it' '
	cg=$(cpuacct_of "$C1") && echo "cgroup $cg" &&
	test -d "$cg" && test "$cg" != /sys/fs/cgroup/cpuacct &&
	before=$(cat "$cg/cpuacct.usage") &&
	runc_exec C1 cat /run/timingfs/jobs/times >times &&
	after=$(cat "$cg/cpuacct.usage") &&
	cat times &&
	t=$(awk "\$1 ~ /_time\$/ { s += \$2 } END { print s }" times) &&
	echo "usage $before..$after ns, kernel+user $t" &&
	test "$t" -ge $((before / 100 - 1)) && test "$t" -le $((after / 100)) &&
	runc_exec C1 ls /run/timingfs/jobs >list &&
	printf "%s\n" active_processes cycles kernel_time times user_time >expect &&
	test_cmp expect list &&
	runc_exec C1 readlink /run/timingfs/proc/1/job >link &&
	echo ../../jobs >expect && test_cmp expect link
'

test_expect_success 'C1: busybox cat (sendfile) reads whole files' '
	runc_exec C1 cat /run/timingfs/proc/1/times >times &&
	cat times &&
	printf "%s\n" $TABLE_VALUES >keys &&
	cut -d" " -f1 times >got &&
	test_cmp keys got &&
	test_must_fail grep -v -E "^[a-z_]+ (0|[1-9][0-9]*)$" times &&
	runc_exec C1 sh -c "cat /run/timingfs/proc/table; echo \$\$" >table &&
	cat table &&
	head -n 1 table | grep -x "$TABLE_HEADER" &&
	me=$(tail -n 1 table) &&
	grep -E "^1 1 [0-9]+ " table &&
	grep -E "^$me $me [0-9]+ " table &&
	test "$(wc -l <table)" = 5 &&
	runc_exec C1 cat /run/timingfs/info >info &&
	grep -x "pidns $(stat -L -c %i /proc/$C1/ns/pid)" info
'

test_expect_success 'C1 stopped: its mount goes from timingfsctl mounts' '
	runc_stop C1 &&
	wait_for 10 not_listed "$C1"
'

# ---- the hostile root -------------------------------------------------------

test_expect_success 'detach after the hostile root moved the mount: that mount goes, /proc/sys stays' '
	runc_bundle "$TRASH/C2" &&
	runc_start C2 "$TRASH/C2" &&
	test_when_finished "runc_stop C2" &&
	before=$(proc_sys_mounts $C2) &&
	test "$before" = 1 &&
	target=$(attached_target $C2) &&
	test -n "$target" &&
	hostile C2 &&
	"$TIMINGFSCTL" detach /proc/$C2/ns/pid "$target" &&
	not_listed "$C2" &&
	intact $C2 "$before" &&
	runc_exec C2 cat /proc/self/mountinfo >mi &&
	awk "\$5 == \"/proc/sys\" && \$6 ~ /^ro/" mi | grep .
'

test_expect_success 'SIGTERM after the hostile root moved the mount: that mount goes, /proc/sys stays' '
	runc_bundle "$TRASH/C3" &&
	runc_start C3 "$TRASH/C3" &&
	test_when_finished "runc_stop C3" &&
	before=$(proc_sys_mounts $C3) &&
	test "$before" = 1 &&
	hostile C3 &&
	kill -TERM $TFS_PID &&
	wait_for 20 test_not_ is_running $TFS_PID &&
	{ wait $TFS_PID; status=$?; } &&
	TFS_PID= &&
	test "$status" = 0 &&
	intact $C3 "$before"
'

test_expect_success 'setup: the daemon again' '
	start_timingfs -c "$TRASH/tfs.conf" -o allow_other
'

# The mount namespace of a container outlives its PID namespace while a
# process is in it: one from the host (nsenter --mount) keeps it, so
# that its mounts can be counted after the end.
test_expect_success 'the container ends after the hostile root moved the mount: that mount goes, /proc/sys stays' '
	runc_bundle "$TRASH/C4" &&
	runc_start C4 "$TRASH/C4" &&
	test_when_finished "runc_stop C4" &&
	before=$(proc_sys_mounts $C4) &&
	test "$before" = 1 &&
	{ nsenter --mount=/proc/$C4/ns/mnt sleep 1000 >/dev/null 2>&1 & } &&
	holder=$! &&
	kill_at_exit $holder &&
	wait_for 10 test_not_ test /proc/$holder/ns/mnt -ef /proc/$$/ns/mnt &&
	hostile C4 &&
	runc_stop C4 &&
	wait_for 10 not_listed "$C4" &&
	intact $holder "$before"
'

# ---- ten in a row -------------------------------------------------------------

# usage PID: the daemon's threads, descriptors and RSS (kB), one line.
# The descriptors are counted apart from those the engine keeps of
# tasks' /proc files for their next read (/proc/N/status,
# /proc/N/task/N/stat...),
# which it bounds by itself (TASK_FDS, src/engine/taskfd.h) and frees only
# when a slot is taken by another task, and from the pidfds it keeps to
# ask tasks' identities (as many, in a table of their own): those are a
# fourth number, within the two bounds.
usage() {
	local fds
	fds=$(ls -l /proc/$1/fd) &&
	echo "$(ls /proc/$1/task | wc -l)" \
		"$(printf '%s\n' "$fds" | grep -c -v -e " -> /proc/[0-9]" \
			-e " -> anon_inode:\[pidfd\]")" \
		"$(awk "/^VmRSS:/ { print \$2 }" /proc/$1/status)" \
		"$(printf '%s\n' "$fds" | grep -c -e " -> /proc/[0-9]" \
			-e " -> anon_inode:\[pidfd\]")"
}

test_expect_success 'ten containers in a row: no mount left, the daemon flat' '
	runc_bundle "$TRASH/C5" &&
	runc_start C5 "$TRASH/C5" &&
	runc_exec C5 cat /run/timingfs/proc/table >/dev/null &&
	runc_stop C5 &&
	wait_for 10 not_listed "$C5" &&
	set -- $(usage "$(server_of "$TFS_PID")") &&
	echo "before: threads $1, descriptors $2 (and $4 of tasks), RSS $3 kB" &&
	threads=$1 fds=$2 rss=$3 &&
	# The supervisor holds the descriptors of each attached mount while it
	# lasts: no more afterwards.
	sup_fds=$(ls "/proc/$TFS_PID/fd" | wc -l) &&
	for i in $(seq 1 10); do
		runc_start C5 "$TRASH/C5" &&
		runc_exec C5 cat /run/timingfs/proc/table >/dev/null &&
		runc_exec C5 cat /run/timingfs/proc/1/cycles >/dev/null &&
		runc_stop C5 &&
		wait_for 10 not_listed "$C5" || return 1
	done &&
	"$TIMINGFSCTL" mounts >out &&
	test_must_fail test -s out &&
	! grep -F "$TRASH/C" /proc/self/mountinfo &&
	set -- $(usage "$(server_of "$TFS_PID")") &&
	echo "after: threads $1, descriptors $2 (and $4 of tasks), RSS $3 kB" &&
	echo "the supervisor: $sup_fds descriptors, then $(ls "/proc/$TFS_PID/fd" | wc -l)" &&
	test "$(ls "/proc/$TFS_PID/fd" | wc -l)" -le "$sup_fds" &&
	test "$1" -le $((threads + 2)) &&
	test "$2" -le "$fds" &&
	test "$4" -le $((2048 + 2048)) &&
	{ test_have_prereq ASAN || test "$3" -le $((rss + 2048)); } &&
	children=$(children_of "$(server_of "$TFS_PID")") &&
	echo "children of the daemon: ${children:-none}" &&
	# Nothing (a child that mounted or unmounted in a container) is
	# left beside the server.
	for c in $children; do
		ps -o pid=,stat=,args= -p $c
		return 1
	done
'

test_done
