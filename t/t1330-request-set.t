#!/bin/bash
# What a walk asks of the daemon, what one reader's access costs it: a
# revalidating LOOKUP answers the node ID the kernel holds, so
# a walk never costs a FORGET and a second LOOKUP of the same name; the
# kernel keeps names where the view allows; a listing answers its
# directories' lookups (READDIRPLUS).
#
# An open loop of 1,000 cats of one thread's cycles, while another reader
# holds the same file open, reads it again from the start and opens it
# again, all the time: the requests the daemon logs (libfuse's debug
# log, -d), on any kernel, show no FORGET and at most 1.05 lookups of a
# name in a thread's directory an open; where the kernel's
# fuse_request_send tracepoint can be read (Linux 6.16 on), the loop's
# requests on this connection show no FORGET and at most 1.05 LOOKUPs
# an open. The same under hidepid=invisible, read by nobody, whose
# every walk looks each name up again: one lookup of the file a walk,
# never a FORGET.
#
# A listing answers the lookups of the directories in it: find -printf
# %n over the threads/ of a process of 200 threads, which stats each
# thread's directory it lists, makes no LOOKUP of them (tracepoint: the
# walk to threads/ and no more).
test_description='A walk never costs a FORGET and a second LOOKUP; an
open loop asks at most 1.05 lookups an open; a listing answers its
directories.'
TEST_OTHER_USERS=1 # a test reads as nobody: a trash it reaches
. "$(dirname "$0")/test-lib.sh"
require_fuse

NOBODY=$(id -u nobody 2>/dev/null) || skip_all "no user nobody"
test_have_prereq SETPRIV || skip_all "no setpriv (util-linux)"
PY=/usr/bin/python3 # not a shim in a home nobody cannot read

# The daemon's debug log (-d): libfuse logs each request as "unique: N,
# opcode: NAME (N), nodeid: ID, ...".
LOG=$TRASH/TFS.err

# log_mark: how many lines the log has now.
log_mark() {
	wc -l <"$LOG"
}

# logged FROM OPCODE: the OPCODE requests logged after line FROM.
logged() {
	tail -n +$(($1 + 1)) "$LOG" | grep -c "^unique: [0-9]*, opcode: $2 "
}

# logged_in_threads FROM: the LOOKUPs logged after line FROM of a name in
# a thread's directory (its node ID's kind, the low byte, K_TID: 8),
# the files of a thread.
logged_in_threads() {
	tail -n +$(($1 + 1)) "$LOG" |
		sed -n "s/^unique: [0-9]*, opcode: LOOKUP ([0-9]*), nodeid: \([0-9]*\),.*/\1/p" |
		while read -r id; do
			echo $((id & 255))
		done | grep -cx 8
}

# The tracepoint, where it can be read: TRACE names a tracefs instance of
# this test's own, filtered on the mount's connection.
TRACE=
trace_start() {
	local minor t=/sys/kernel/tracing
	TRACE=
	[ -d $t/instances ] || mount -t tracefs nodev $t 2>/dev/null ||
		return 0
	[ -d $t/events/fuse/fuse_request_send ] || return 0
	minor=$(mountpoint -d "$MNT" | cut -d: -f2) || return 0
	mkdir "$t/instances/tfs-t1330.$$" 2>/dev/null || return 0
	TRACE=$t/instances/tfs-t1330.$$
	test_when_finished "rmdir $TRACE 2>/dev/null; true"
	echo "connection == $minor" \
		>"$TRACE/events/fuse/fuse_request_send/filter" &&
		echo 1 >"$TRACE/events/fuse/fuse_request_send/enable" &&
		echo >"$TRACE/trace"
}

# trace_stop FILE: the requests since trace_start, by opcode name, into
# FILE ("N FUSE_LOOKUP" lines); nothing where there is no tracepoint.
trace_stop() {
	: >"$1"
	[ -n "$TRACE" ] || return 0
	echo 0 >"$TRACE/events/fuse/fuse_request_send/enable"
	grep -o '(FUSE_[A-Z_]*)' "$TRACE/trace" | tr -d '()' | sort |
		uniq -c >"$1"
	rmdir "$TRACE"
	TRACE=
}

# traced FILE OPCODE: how many OPCODE requests FILE counted (0 if none).
traced() {
	awk -v op="FUSE_$2" '$2 == op { n = $1 } END { print n + 0 }' "$1"
}

# A second reader of FILE, until killed: a descriptor kept open and read
# again from the start, and the file opened again, all the time.
other_reader() {
	"$PY" - "$1" <<'PY' &
import os, sys
f = sys.argv[1]
fd = os.open(f, os.O_RDONLY)
while True:
    os.pread(fd, 4096, 0)
    with open(f) as g:
        g.read()
PY
	OTHER=$!
	kill_at_exit $OTHER
}

# loop_of_cats AS N FILE: N cats of FILE as user AS (root: as is), their
# output checked to be numbers.
loop_of_cats() {
	local as=$1 n=$2 file=$3
	if [ "$as" = root ]; then
		for i in $(seq "$n"); do cat "$file"; done
	else
		setpriv --reuid="$as" --regid="$as" --clear-groups \
			bash -c 'for i in $(seq "$1"); do cat "$2"; done' - \
			"$n" "$file"
	fi >cats.out &&
		test "$(grep -cx '[0-9][0-9]*' cats.out)" = "$n"
}

# within_rate N OPENS MAX: whether N a open, over OPENS opens, is at
# most MAX (a decimal).
within_rate() {
	awk -v n="$1" -v opens="$2" -v max="$3" \
		'BEGIN { exit !(opens > 0 && n / opens <= max) }'
}

# open_loop AS: 1,000 cats of a sleeping thread's cycles as AS under the
# other reader; the counts and requests that loop made.
open_loop() {
	local as=$1 from lookups forgets opens
	FILE=$MNT/proc/$SLEEPER/threads/$SLEEPER/cycles
	if [ "$as" = root ]; then
		other_reader "$FILE"
	else
		setpriv --reuid="$as" --regid="$as" --clear-groups \
			"$PY" -c 'import os, sys
f = sys.argv[1]
fd = os.open(f, os.O_RDONLY)
while True:
    os.pread(fd, 4096, 0)
    with open(f) as g:
        g.read()' "$FILE" &
		OTHER=$!
		kill_at_exit $OTHER
	fi
	sleep 0.5 &&
		from=$(log_mark) &&
		trace_start &&
		loop_of_cats "$as" 1000 "$FILE" &&
		trace_stop trace.out &&
		kill $OTHER && wait $OTHER 2>/dev/null
	sleep 0.2 # the last requests logged
	lookups=$(logged_in_threads "$from")
	forgets=$(($(logged "$from" FORGET) + $(logged "$from" BATCH_FORGET)))
	opens=$(logged "$from" OPEN)
	test_say_ "daemon: $lookups lookups in a thread's directory," \
		"$(logged "$from" LOOKUP) in all, $forgets FORGETs, $opens opens"
	test "$forgets" = 0 || {
		echo "$forgets FORGET requests in the loop"
		return 1
	}
	test "$opens" -ge 1000 &&
		within_rate "$lookups" "$opens" 1.05 || {
		echo "$lookups lookups of files for $opens opens"
		return 1
	}
	[ -s trace.out ] || {
		test_say_ "no fuse_request_send tracepoint here: the daemon's log alone"
		return 0
	}
	test_say_ "tracepoint: $(tr -s ' \n' ' ' <trace.out)"
	test "$(($(traced trace.out FORGET) + $(traced trace.out BATCH_FORGET)))" = 0 || {
		echo "FORGET requests in the loop"
		return 1
	}
	test "$(traced trace.out OPEN)" -ge 1000
}

test_expect_success 'setup: a mount, a sleeping process' '
	write_config "$TRASH/default.conf" access.hidepid=off &&
	mount_timingfs "$TRASH/default.conf" -d &&
	{ sleep 1000 >/dev/null 2>&1 & } &&
	SLEEPER=$! &&
	kill_at_exit $SLEEPER &&
	wait_file "$MNT/proc/$SLEEPER/cycles" &&
	test "$(logged 0 LOOKUP)" -ge 1
'

test_expect_success 'an open loop under another reader: no FORGET, a lookup an open at most' '
	open_loop root &&
	if [ -s trace.out ]; then
		within_rate "$(traced trace.out LOOKUP)" \
			"$(traced trace.out OPEN)" 1.05 || {
			echo "$(traced trace.out LOOKUP) LOOKUPs for" \
				"$(traced trace.out OPEN) OPENs"
			return 1
		}
	fi
'

test_expect_success 'a listing answers the lookups of its directories' '
	{ "$BIN/helper-many" 200 >"$TRASH/many" & } &&
	MANY=$! &&
	kill_at_exit "$MANY" &&
	wait_file "$TRASH/many" "" 30 &&
	sleep 1.2 &&
	trace_start &&
	find "$MNT/proc/$MANY/threads" -mindepth 1 -maxdepth 1 \
		-printf "%n %i\n" >found &&
	trace_stop list.out &&
	test "$(wc -l <found)" = 200 &&
	if [ -s list.out ]; then
		test_say_ "find -printf %n over 200 threads: $(tr -s " \n" " " <list.out)" &&
		test "$(traced list.out READDIRPLUS)" -ge 1 &&
		test "$(traced list.out LOOKUP)" -le 5
	fi
'

test_expect_success 'hidepid=invisible, read by nobody: a lookup a walk, never a FORGET' '
	unmount_timingfs &&
	write_config "$TRASH/invisible.conf" access.hidepid=invisible &&
	mount_timingfs "$TRASH/invisible.conf" -o allow_other -d &&
	{ setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
		sleep 1000 >/dev/null 2>&1 & } &&
	SLEEPER=$! &&
	kill_at_exit $SLEEPER &&
	wait_owner $SLEEPER $NOBODY &&
	open_loop $NOBODY
'

# A directory opened while its thread lives is listed whole after the
# thread is gone, as procfs lists it: the listing made at its open,
# without entries (getdents's ENOENT would be the end to glibc).
test_expect_success 'a thread gone after its directory was opened: listed whole' '
	unmount_timingfs &&
	write_config "$TRASH/gone.conf" exited.keep=0 &&
	mount_timingfs "$TRASH/gone.conf" &&
	"$PY" - "$MNT" >gone.out <<-\PY &&
	import os, sys, threading
	mnt = sys.argv[1]
	go = threading.Event()
	tid = []
	def run():
	    tid.append(threading.get_native_id())
	    go.wait()
	t = threading.Thread(target=run)
	t.start()
	while not tid:
	    pass
	fd = os.open("%s/proc/%d/threads/%d" % (mnt, os.getpid(), tid[0]),
	             os.O_RDONLY | os.O_DIRECTORY)
	go.set()
	t.join()
	while os.path.exists("/proc/%d/task/%d" % (os.getpid(), tid[0])):
	    pass
	print(" ".join(sorted(os.listdir(fd))))
	PY
	echo "creation_time cycles exit_time kernel_time name times user_time" >expect &&
	test_cmp expect gone.out
'

test_done
