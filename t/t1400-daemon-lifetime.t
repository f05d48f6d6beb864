#!/bin/bash
# The daemon's life: how it mounts, serves with bounded workers, and
# ends: an unmount or SIGTERM/SIGINT is a clean exit 0, and a daemon
# killed outright leaves no mount behind (auto_unmount).
. "$(dirname "$0")/test-lib.sh"
require_fuse

fixture_config "$TRASH/m2.conf" m2
export CONF=$TRASH/m2.conf

# reads_ok: the tree answers.
reads_ok() {
	test "$(cat "$MNT/proc/100/cycles")" = 12000000000
}

# daemon_threads PID: how many threads the daemon has.
daemon_threads() {
	ls "/proc/$1/task" | wc -l
}

# parallel_reads N: N readers at once, 50 opens each. Waits for the
# readers only: a bare "wait" would wait for the daemon too.
parallel_reads() {
	local i pids=
	for i in $(seq 1 "$1"); do
		(for j in $(seq 1 50); do cat "$MNT/proc/100/times"; done) \
			>/dev/null &
		pids="$pids $!"
	done
	wait $pids
}

test_expect_success 'mounted read-only, as timingfs, with default_permissions' '
	start_timingfs -c "$CONF" &&
	reads_ok &&
	line=$(awk -v d="$MNT" "\$2 == d" /proc/self/mounts) &&
	echo "$line" &&
	set -- $line &&
	test "$1" = timingfs && test "$3" = fuse.timingfs &&
	case ",$4," in *,ro,*) ;; *) false ;; esac &&
	case ",$4," in *,default_permissions,*) ;; *) false ;; esac &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_expect_success 'fusermount3 -u: the daemon exits 0' '
	start_timingfs -c "$CONF" &&
	fusermount3 -u "$MNT" &&
	status=0 && wait "$TFS_PID" || status=$?
	test "$status" = 0 && ! is_mounted "$MNT"
'

test_expect_success 'SIGTERM: unmounted, exit 0' '
	start_timingfs -c "$CONF" &&
	reads_ok &&
	kill -TERM "$TFS_PID" &&
	status=0 && wait "$TFS_PID" || status=$?
	test "$status" = 0 &&
	! is_mounted "$MNT"
'

# A shell without job control starts background commands with SIGINT
# ignored, which libfuse then leaves alone: give it the default back.
test_expect_success 'SIGINT: unmounted, exit 0' '
	env --default-signal=INT "$TIMINGFS" -f -c "$CONF" "$MNT" 2>err &
	pid=$! &&
	wait_mounted &&
	reads_ok &&
	kill -INT "$pid" &&
	status=0 && wait "$pid" || status=$?
	cat err &&
	test "$status" = 0 &&
	! is_mounted "$MNT"
'

test_expect_success 'SIGKILL: auto_unmount takes the mount away' '
	start_timingfs -c "$CONF" &&
	reads_ok &&
	kill -KILL "$TFS_PID" &&
	{ wait "$TFS_PID" || :; } &&
	wait_unmounted &&
	test ! -e "$MNT/info"
'

test_expect_success 'SIGKILL with -o no_auto_unmount leaves a dead mount' '
	start_timingfs -c "$CONF" -o no_auto_unmount &&
	reads_ok &&
	kill -KILL "$TFS_PID" &&
	{ wait "$TFS_PID" || :; } &&
	is_mounted "$MNT" &&
	test "$($BIN/helper-io errno stat "$MNT/info")" = ENOTCONN &&
	fusermount3 -u "$MNT" &&
	! is_mounted "$MNT"
'

test_expect_success 'mounted again at the same place' '
	start_timingfs -c "$CONF" &&
	reads_ok &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_expect_success 'without -f: in the background, exit 0 once mounted' '
	"$TIMINGFS" -c "$CONF" "$MNT" &&
	is_mounted "$MNT" &&
	reads_ok &&
	fusermount3 -u "$MNT" &&
	! is_mounted "$MNT"
'

# No flush handler: after the first close the kernel stops sending it.
test_expect_success '-d: debug output on stderr, in the foreground' '
	start_timingfs -d -c "$CONF" &&
	reads_ok && reads_ok && reads_ok &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0 &&
	grep "opcode: INIT" "$TRASH/TFS.err" &&
	test "$(grep -c "opcode: OPEN" "$TRASH/TFS.err")" -ge 3 &&
	test "$(grep -c "opcode: FLUSH" "$TRASH/TFS.err")" -le 1
'

test_expect_success '-s: one thread serves everything (and one takes SIGHUP)' '
	start_timingfs -s -c "$CONF" &&
	parallel_reads 8 &&
	reads_ok &&
	threads=$(daemon_threads "$TFS_PID") &&
	unmount_timingfs &&
	echo "$threads threads" &&
	test "$threads" = 2 # and the one that takes SIGHUP
'

test_expect_success 'multi-threaded: at most max_threads workers' '
	start_timingfs -c "$CONF" -o max_threads=3 &&
	parallel_reads 16 &&
	threads=$(daemon_threads "$TFS_PID") &&
	unmount_timingfs &&
	echo "$threads threads" &&
	test "$threads" -le 5 # main, the SIGHUP thread, 3 workers
'

test_expect_success 'multi-threaded by default, 10 workers at most' '
	start_timingfs -c "$CONF" &&
	parallel_reads 32 &&
	threads=$(daemon_threads "$TFS_PID") &&
	unmount_timingfs &&
	echo "$threads threads" &&
	test "$threads" -ge 3 && test "$threads" -le 12
'

test_done
