#!/bin/bash
test_description='The life of the daemon: how it mounts, serves with bounded
workers, and ends: an unmount or SIGTERM/SIGINT is a clean exit 0, and a
daemon killed outright leaves no mount behind (auto_unmount).'
. "$(dirname "$0")/test-lib.sh"
require_fuse

CONF=$TRASH/m2.conf

# reads_ok: the tree answers.
reads_ok() {
	test "$(cat "$MNT/proc/100/cycles")" = 12000000000
}

# daemon_threads PID: how many threads the daemon has.
daemon_threads() {
	ls "/proc/$1/task" | wc -l
}


# queued_reads N: N readers at once, all their requests queued before
# the daemon serves any: it is stopped until each reader waits for its
# answer, so that the daemon, continued, finds N requests waiting and
# starts workers for them up to its maximum (fast requests, served as
# they come, would need few). Fails if a reader does, or if they are
# not all waiting within 30 s (a margin for a loaded machine: it takes
# milliseconds), and says where they waited instead. Waits for the
# readers only: a bare "wait" would wait for the daemon too.
queued_reads() {
	local i pid pids= waiting=0
	# Read once first. The kernel's INIT is then answered (a mount
	# shows before it is, and a reader before it waits in
	# fuse_get_req; seen on a loaded machine), and every name on the
	# path is in the kernel's cache: each reader then asks the daemon
	# to look it up again, rather than wait in d_alloc_parallel for
	# the first reader's lookup of a new name.
	cat "$MNT/proc/100/times" >/dev/null || return 1
	srv=$(server_of "$TFS_PID")
	test -n "$srv" || return 1
	kill -STOP "$srv" || return 1
	for i in $(seq 1 "$1"); do
		cat "$MNT/proc/100/times" >/dev/null &
		pids="$pids $!"
	done
	test_poll_ 30 all_wait_answer "$1" $pids
	echo "$waiting of $1 readers waited for the daemon"
	[ "$waiting" = "$1" ] || {
		echo "waited 30 s for $1 readers to wait for the stopped daemon; $waiting did"
		echo "where the readers waited instead:"
		for pid in $pids; do
			cat "/proc/$pid/wchan" 2>/dev/null || printf gone
			echo
		done | sort | uniq -c
	}
	kill -CONT "$srv" || return 1
	for pid in $pids; do
		wait "$pid" || return 1
	done
	test "$waiting" = "$1"
}

# all_wait_answer N PID...: each of the N readers PID... waits for the
# daemon's answer (in request_wait_answer); how many do is left in
# $waiting.
all_wait_answer() {
	local n=$1 pid wchan
	shift
	waiting=0
	for pid in "$@"; do
		wchan=
		read -r wchan 2>/dev/null <"/proc/$pid/wchan"
		[ "$wchan" != request_wait_answer ] ||
			waiting=$((waiting + 1))
	done
	[ "$waiting" = "$n" ]
}

# stopped_mount_is_gone: the daemon is gone (by a signal it took, or on
# its own), and so is its mount; the mount point is the empty directory
# again, not a dead mount (where any stat would fail, -e included).
stopped_mount_is_gone() {
	wait_unmounted &&
	ls -A "$MNT" >left &&
	test ! -s left
}

test_expect_success 'setup: the m2 fixture configuration' '
	fixture_config "$CONF" m2 &&
	test_path_is_file "$CONF"
'

test_expect_success 'mounted read-only, as timingfs, with default_permissions' '
	test_when_finished unmount_timingfs &&
	start_timingfs -c "$CONF" &&
	reads_ok &&
	line=$(mounts_of "$MNT") &&
	echo "$line" &&
	set -- $line &&
	test "$1" = timingfs && test "$3" = fuse.timingfs &&
	case ",$4," in *,ro,*) ;; *) false ;; esac &&
	case ",$4," in *,default_permissions,*) ;; *) false ;; esac &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

# unmount_timingfs reaps the daemon, SIGKILL after 20 s: then its
# status is 137, not 0. It unmounts only what is still mounted.
test_expect_success 'fusermount3 -u: the daemon exits 0' '
	test_when_finished unmount_timingfs &&
	start_timingfs -c "$CONF" &&
	fusermount3 -u "$MNT" &&
	! is_mounted "$MNT" &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_expect_success 'SIGTERM: unmounted, exit 0' '
	test_when_finished unmount_timingfs &&
	start_timingfs -c "$CONF" &&
	reads_ok &&
	kill -TERM "$TFS_PID" &&
	stopped_mount_is_gone &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

# A shell without job control starts background commands with SIGINT
# ignored, which libfuse then leaves alone: give it the default back.
test_expect_success 'SIGINT: unmounted, exit 0' '
	test_when_finished unmount_timingfs &&
	{ env --default-signal=INT "$TIMINGFS" -f -c "$CONF" "$MNT" 2>err & } &&
	TFS_PID=$! &&
	wait_mounted &&
	reads_ok &&
	kill -INT "$TFS_PID" &&
	stopped_mount_is_gone &&
	unmount_timingfs &&
	cat err &&
	test "$TFS_STATUS" = 0
'

test_expect_success 'SIGKILL to both processes: auto_unmount takes the mount away' '
	test_when_finished unmount_timingfs &&
	start_timingfs -c "$CONF" &&
	reads_ok &&
	test -n "$(server_of "$TFS_PID")" &&
	kill_daemon "$TFS_PID" &&
	test_expect_code 137 wait "$TFS_PID" &&
	TFS_PID= &&
	stopped_mount_is_gone
'

# fd_of PID TARGET: the descriptor of PID whose link is TARGET.
fd_of() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		if [ "$(readlink "$fd")" = "$2" ]; then
			echo "${fd##*/}"
			return 0
		fi
	done
	return 1
}

# The helper unmounts at its socket's last close only if the mount then
# answers ENOTCONN, once the device's last descriptor was released too;
# a dying process releases its descriptors highest first, so the daemon
# keeps the helper's socket below the device, in both processes (a dead
# mount 7 kills in 1,000 under load otherwise: too rare for the test above
# to show, so the order is checked here).
test_expect_success 'auto_unmount: the helper socket below the device, in both processes' '
	test_when_finished unmount_timingfs &&
	start_timingfs -c "$CONF" &&
	reads_ok &&
	srv=$(server_of "$TFS_PID") &&
	helper=$(pgrep -P "$TFS_PID" -x fusermount3) &&
	peer=$(ss -xpn | awk -v p="pid=$helper," "index(\$0, p) { print \$8 }") &&
	echo "helper $helper, its peer socket $peer" &&
	test -n "$peer" &&
	for pid in "$TFS_PID" "$srv"; do
		sock=$(fd_of "$pid" "socket:[$peer]") &&
		dev=$(fd_of "$pid" /dev/fuse) &&
		echo "pid $pid: the socket $sock, the device $dev" &&
		test "$sock" -lt "$dev" || return 1
	done
'

test_expect_success 'SIGKILL to both with -o no_auto_unmount leaves a dead mount' '
	test_when_finished unmount_timingfs &&
	start_timingfs -c "$CONF" -o no_auto_unmount &&
	reads_ok &&
	test -n "$(server_of "$TFS_PID")" &&
	kill_daemon "$TFS_PID" &&
	test_expect_code 137 wait "$TFS_PID" &&
	TFS_PID= &&
	is_mounted "$MNT" &&
	test "$("$BIN/helper-io" errno stat "$MNT/info")" = ENOTCONN &&
	fusermount3 -u "$MNT" &&
	! is_mounted "$MNT"
'

server_starts() {
	sed -n "s/^server_starts //p" "$MNT/info"
}

# The supervisor dead, the server serves on and starts a new one (its
# child); that one replaces the server when it dies in turn.
test_expect_success 'SIGKILL to the supervisor, then to the server: served throughout' '
	test_when_finished "unmount_timingfs; kill -KILL \$srv \$sup 2>/dev/null; :" &&
	start_timingfs -c "$CONF" &&
	reads_ok &&
	srv=$(server_of "$TFS_PID") &&
	kill -KILL "$TFS_PID" &&
	test_expect_code 137 wait "$TFS_PID" &&
	TFS_PID= &&
	reads_ok &&
	wait_for 10 test -n "$(server_of "$srv")" &&
	sup=$(server_of "$srv") &&
	reads_ok &&
	kill -KILL "$srv" &&
	wait_for 10 test "$(server_starts)" = 2 &&
	reads_ok &&
	is_mounted "$MNT" &&
	kill -TERM "$sup" &&
	wait_for 20 test_not_ is_running "$sup" &&
	! is_mounted "$MNT"
'

test_expect_success 'mounted again at the same place' '
	test_when_finished unmount_timingfs &&
	start_timingfs -c "$CONF" &&
	reads_ok &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_expect_success 'without -f: in the background, exit 0 once mounted' '
	test_when_finished unmount_timingfs &&
	"$TIMINGFS" -c "$CONF" "$MNT" &&
	is_mounted "$MNT" &&
	reads_ok &&
	fusermount3 -u "$MNT" &&
	! is_mounted "$MNT"
'

# No flush handler: after the first close the kernel stops sending it.
test_expect_success '-d: debug output on stderr, in the foreground' '
	test_when_finished unmount_timingfs &&
	start_timingfs -d -c "$CONF" &&
	reads_ok && reads_ok && reads_ok &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0 &&
	grep "opcode: INIT" "$TRASH/TFS.err" &&
	test "$(grep -c "opcode: OPEN" "$TRASH/TFS.err")" -ge 3 &&
	test "$(grep -c "opcode: FLUSH" "$TRASH/TFS.err")" -le 1
'

test_expect_success '-s: one worker serves everything (and the main thread the signals)' '
	test_when_finished unmount_timingfs &&
	start_timingfs -s -c "$CONF" &&
	queued_reads 8 &&
	reads_ok &&
	threads=$(daemon_threads "$(server_of "$TFS_PID")") &&
	unmount_timingfs &&
	echo "$threads threads" &&
	# The worker and the main thread, and the dropper when the readers
	# left extra inodes behind (below).
	test "$threads" -ge 2 && test "$threads" -le 3
'

# Besides the workers, the daemon has its main thread, which takes the
# signals and the control socket (daemon.c), and the dropper, which has the kernel drop names
# from its cache (fs.c): started by the first reader that needs it, as
# many readers of one file at once do (each gets an inode of its own).
test_expect_success 'multi-threaded: at most max_threads workers' '
	test_when_finished unmount_timingfs &&
	start_timingfs -c "$CONF" -o max_threads=3 &&
	queued_reads 32 &&
	reads_ok &&
	threads=$(daemon_threads "$(server_of "$TFS_PID")") &&
	unmount_timingfs &&
	echo "$threads threads" &&
	test "$threads" -le 5 # main, the dropper, 3 workers
'

test_expect_success 'multi-threaded by default, 10 workers at most' '
	test_when_finished unmount_timingfs &&
	start_timingfs -c "$CONF" &&
	queued_reads 32 &&
	reads_ok &&
	threads=$(daemon_threads "$(server_of "$TFS_PID")") &&
	unmount_timingfs &&
	echo "$threads threads" &&
	test "$threads" -ge 3 && test "$threads" -le 12 # main, dropper, 10
'

test_done
