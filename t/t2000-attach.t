#!/bin/bash
# One daemon, many containers: timingfsctl attach mounts the daemon's
# tree inside a container's own mount namespace, pinned to its PID
# namespace. Twenty containers, each made by unshare -m -p -f
# --mount-proc (a PID and a mount namespace of its own, whose /proc is
# the ground truth), all at the same TARGET path: each sees its own
# mount there, the host none. Then detach, the death of a container,
# the errors (each leaving the daemon and the other mounts be), SIGHUP
# and SIGTERM.
#
# The containers are made before the daemon mounts, so that no copy of
# its own mount lives in their mount namespaces; exited tasks are not
# kept, with the daemon's one exit listener: a container's live
# processes are those whose exit_time is 0.
test_description='timingfsctl attach: twenty containers served by one
daemon, each seeing its own processes in its own mount namespace.'
TEST_OTHER_USERS=1 # a caller that is not root runs timingfsctl from $TRASH
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot make containers"

N=20
TARGET=$TRASH/target
CONF=$TRASH/attach.conf
declare -a INIT UNSHARE

cleanup_attach() {
	kill_cleanup_pids # the containers, before the daemon
	cleanup
}
trap cleanup_attach EXIT

# A container's init: it first lazily unmounts its copies of the
# timingfs mounts of other tests running meanwhile (a copy in another
# mount namespace would keep their daemons from seeing their unmount).
CONTAINER_INIT='umount -a -l -t fuse.timingfs 2>/dev/null; exec sleep 1000'

# mounted_in I DIR: whether DIR is a mount point in container I.
mounted_in() {
	in_container "$1" bash -c "$(declare -f mounts_of)
		test -n \"\$(mounts_of \"\$1\")\"" - "$2"
}

# in_container I CMD...: run CMD in container I's mount and PID
# namespaces.
in_container() {
	local i=$1
	shift
	in_ns "${INIT[$i]}" "$@"
}

# attached_count: the lines of timingfsctl mounts.
attached_count() {
	"$TIMINGFSCTL" mounts | wc -l
}

# wait_attached_count N: up to 10 s (a margin for a loaded machine; the
# daemon learns of a container's end at once, from a pidfd) for
# timingfsctl mounts to list N; says what it saw otherwise.
wait_attached_count() {
	local i n
	for i in $(seq 1 200); do
		n=$(attached_count)
		[ "$n" = "$1" ] && return 0
		sleep 0.05
	done
	echo "waited 10 s for $1 attached mounts; timingfsctl mounts lists $n"
	return 1
}

# listener_sockets PID: how many generic netlink sockets (taskstats'
# family) the process holds.
listener_sockets() {
	local inodes
	inodes=$(ls -l "/proc/$1/fd" 2>/dev/null |
		sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p' | tr "\n" " ")
	awk -v inodes=" $inodes " '
		NR > 1 && $2 == 16 && index(inodes, " " $NF " ") { n++ }
		END { print n + 0 }' /proc/net/netlink
}

test_expect_success 'setup: twenty containers, then the daemon' '
	mkdir -p "$TARGET" &&
	for i in $(seq 1 $N); do
		unshare -m -p -f --mount-proc sh -c "$CONTAINER_INIT" &
		UNSHARE[$i]=$! &&
		kill_at_exit ${UNSHARE[$i]} || return 1
	done &&
	for i in $(seq 1 $N); do
		INIT[$i]=$(child_of ${UNSHARE[$i]}) || return 1
	done &&
	write_config "$CONF" format.units=windows &&
	start_timingfs -c "$CONF" &&
	grep -q "^exit_source taskstats" "$MNT/info" &&
	listener_sockets "$(server_of "$TFS_PID")" >"$TRASH/listeners" &&
	test "$(cat "$TRASH/listeners")" -ge 1
'

test_expect_success 'attach each container at the same TARGET' '
	for i in $(seq 1 $N); do
		"$TIMINGFSCTL" attach /proc/${INIT[$i]}/ns/pid "$TARGET" ||
		return 1
	done &&
	test "$(attached_count)" = $N
'

test_expect_success 'timingfsctl mounts names each PID namespace and TARGET' '
	"$TIMINGFSCTL" mounts >"$TRASH/mounts" &&
	for i in $(seq 1 $N); do
		ns=$(stat -L -c %i /proc/${INIT[$i]}/ns/pid) &&
		grep -q "^$ns $(printf %s "$TARGET" | sed "s/ /\\\\\\\\040/g") init ${INIT[$i]} " \
			"$TRASH/mounts" || {
			echo "no line for $ns (init ${INIT[$i]}):"
			cat "$TRASH/mounts"
			return 1
		}
	done
'

test_expect_success 'the host mount namespace has no mount at TARGET' '
	! is_mounted "$TARGET"
'

test_expect_success 'in each container: its own mount at TARGET' '
	for i in $(seq 1 $N); do
		mounted_in $i "$TARGET" || return 1
	done
'

test_expect_success 'in each container: proc/self is the reader, as its /proc says' '
	for i in $(seq 1 $N); do
		in_container $i sh -c "echo \$\$; exec readlink \"\$1/proc/self\"" \
			- "$TARGET" >out &&
		in_container $i sh -c "echo \$\$; exec readlink /proc/self" >procfs &&
		test "$(sed -n 1p out)" = "$(sed -n 2p out)" &&
		test "$(sed -n 1p procfs)" = "$(sed -n 2p procfs)" || {
			echo "container $i: timingfs $(cat out), /proc $(cat procfs)"
			return 1
		}
	done
'

# live_nums DIR: the numeric entries of DIR/proc whose process is alive
# (exit_time 0: an exited one is kept for [exited] keep seconds), but
# the reader's; as nums_but_me, without a process of its own.
live_nums() {
	local n e out=() all=()
	nums_but_me "$1/proc" >"$2"
	read -r -a all <"$2"
	for n in "${all[@]}"; do
		read -r e <"$1/proc/$n/exit_time" && [ "$e" = 0 ] && out+=("$n")
	done
	echo "${out[*]} "
}

test_expect_success 'in each container: proc/ lists its processes only' '
	for i in $(seq 1 $N); do
		in_container $i bash -c "$(declare -f live_nums)
			nums_but_me /proc && live_nums \"\$1\" /tmp/list.\$\$ &&
			rm -f /tmp/list.\$\$" - "$TARGET" >out &&
		test "$(sed -n 1p out)" = "$(sed -n 2p out)" &&
		test "$(sed -n 1p out)" = "1 " || {
			echo "container $i: /proc, then timingfs:"
			cat out
			return 1
		}
	done
'

test_expect_success 'in each container: proc/1 is its init' '
	for i in $(seq 1 $N); do
		host=$(cat "$MNT/proc/${INIT[$i]}/threads/${INIT[$i]}/creation_time") &&
		inside=$(in_container $i cat "$TARGET/proc/1/threads/1/creation_time") &&
		test -n "$host" && test "$host" = "$inside" || {
			echo "container $i: host sees $host, inside $inside"
			return 1
		}
	done
'

test_expect_success 'twenty attached: one exit listener, bounded threads and memory' '
	readers= &&
	for i in $(seq 1 $N); do
		in_container $i sh -c "cat \"\$1\"/proc/1/threads/1/cycles \
			\"\$1\"/proc/table >/dev/null" - "$TARGET" &
		readers="$readers $!"
	done &&
	wait_pids $readers &&
	threads=$(ls /proc/$(server_of "$TFS_PID")/task | wc -l) &&
	rss=$(awk "/^VmRSS:/ { print \$2 }" /proc/$(server_of "$TFS_PID")/status) &&
	echo "# threads $threads, RSS $rss kB, listener sockets $(listener_sockets "$(server_of "$TFS_PID")")" &&
	test "$(listener_sockets "$(server_of "$TFS_PID")")" = "$(cat "$TRASH/listeners")" &&
	# 10 workers at most (max_threads), the main thread, the exit
	# listener, the watchdog of the workers and the thread that drops names
	# (started by the first exit of a task whose name the kernel
	# holds): 14, mounts or none.
	test "$threads" -le 14 &&
	# A sanitized build keeps shadow memory and freed blocks aside.
	{ test_have_prereq ASAN || test "$rss" -le 16384; }
'

test_expect_success 'the daemon own mount goes on meanwhile' '
	grep -q "^units windows" "$MNT/info" &&
	test -r "$MNT/proc/$$/threads/$$/cycles"
'

test_expect_success 'errors exit 1 with one line; the daemon and mounts go on' '
	test_expect_code 1 env TIMINGFS_CONTROL=$TRASH/none \
		"$TIMINGFSCTL" mounts 2>err &&
	grep -q "no timingfs daemon is running" err &&
	test_expect_code 1 "$TIMINGFSCTL" attach /proc/${INIT[1]}/ns/net \
		"$TARGET" 2>err &&
	grep -q "not a PID namespace" err &&
	test_expect_code 1 "$TIMINGFSCTL" attach /proc/${INIT[1]}/ns/pid \
		"$TARGET/nonexistent" 2>err &&
	grep -q "No such file or directory in that mount namespace" err &&
	: >"$TRASH/file" &&
	test_expect_code 1 "$TIMINGFSCTL" attach /proc/${INIT[1]}/ns/pid \
		"$TRASH/file" 2>err &&
	grep -q "not a directory in that mount namespace" err &&
	test_expect_code 1 "$TIMINGFSCTL" attach /proc/${INIT[1]}/ns/pid \
		"$TARGET" 2>err &&
	grep -q "already attached" err &&
	test_expect_code 1 "$TIMINGFSCTL" detach /proc/$$/ns/pid "$TARGET" \
		2>err &&
	grep -q "nothing attached there" err &&
	test $(wc -l <err) = 1 &&
	test "$(attached_count)" = $N &&
	is_running $TFS_PID
'

test_expect_success 'a caller that is not root is refused' '
	cp "$TIMINGFSCTL" "$TRASH/timingfsctl" &&
	test_expect_code 1 setpriv --reuid=nobody --regid=nogroup \
		--clear-groups "$TRASH/timingfsctl" attach \
		/proc/${INIT[1]}/ns/pid /tmp 2>err &&
	grep -q "only root may" err &&
	test_expect_code 1 setpriv --reuid=nobody --regid=nogroup \
		--clear-groups "$TRASH/timingfsctl" mounts 2>err &&
	grep -q "only root may" err &&
	test "$(attached_count)" = $N
'

test_expect_success 'bad usage exits 2' '
	test_expect_code 2 "$TIMINGFSCTL" 2>/dev/null &&
	test_expect_code 2 "$TIMINGFSCTL" bogus 2>/dev/null &&
	test_expect_code 2 "$TIMINGFSCTL" attach /proc/${INIT[1]}/ns/pid \
		2>/dev/null &&
	test_expect_code 2 "$TIMINGFSCTL" attach /proc/${INIT[1]}/ns/pid \
		relative/target 2>/dev/null &&
	test_expect_code 2 "$TIMINGFSCTL" attach -o hidepid=bogus \
		/proc/${INIT[2]}/ns/pid /tmp 2>err &&
	grep -q "not an option of attach" err &&
	test_expect_code 2 "$TIMINGFSCTL" mounts extra 2>/dev/null &&
	test "$(attached_count)" = $N
'

test_expect_success 'detach removes one mount, in its namespace' '
	"$TIMINGFSCTL" detach /proc/${INIT[1]}/ns/pid "$TARGET" &&
	test "$(attached_count)" = $((N - 1)) &&
	! mounted_in 1 "$TARGET" &&
	mounted_in 2 "$TARGET"
'

test_expect_success 'a container whose processes are all gone loses its mount' '
	start=$(date +%s%N) &&
	kill -KILL ${INIT[2]} &&
	{ wait ${UNSHARE[2]} 2>/dev/null || :; } &&
	wait_attached_count $((N - 2)) &&
	echo "# gone from timingfsctl mounts $((($(date +%s%N) - start) / 1000000)) ms after the kill" &&
	! grep -q "init ${INIT[2]} " <("$TIMINGFSCTL" mounts) &&
	is_running $TFS_PID &&
	in_container 3 test -r "$TARGET/proc/1/threads/1/cycles"
'

test_expect_success 'SIGHUP re-reads the configuration for every mount' '
	write_config "$CONF" format.units=unix &&
	kill -HUP $TFS_PID &&
	for i in $(seq 1 100); do
		grep -q "^units unix" "$MNT/info" && break
		sleep 0.1
	done &&
	grep -q "^units unix" "$MNT/info" &&
	for i in $(seq 3 $N); do
		in_container $i grep -q "^units unix" "$TARGET/info" ||
		return 1
	done
'

test_expect_success 'SIGTERM unmounts every mount, and the daemon exits 0' '
	kill -TERM $TFS_PID &&
	for i in $(seq 1 200); do
		is_running $TFS_PID || break
		sleep 0.05
	done &&
	! is_running $TFS_PID &&
	{ wait $TFS_PID; status=$?; } &&
	TFS_PID= &&
	test "$status" = 0 &&
	! is_mounted "$MNT" &&
	for i in $(seq 3 $N); do
		! mounted_in $i "$TARGET" || return 1
	done &&
	test_path_is_missing "$TIMINGFS_CONTROL"
'

test_done
