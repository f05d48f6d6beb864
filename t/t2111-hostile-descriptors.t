#!/bin/bash
test_description='Hostile tenants: a daemon out of descriptors answers its
readers with EMFILE, never with an empty proc/ or a missing process; it
gives back the task files it keeps open before it gives up; and once
descriptors are there again it serves as before.'
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot lower the daemon's limit"
command -v prlimit >/dev/null || skip_all "no prlimit (util-linux)"

THREADS=300

# limits: the daemon's soft and hard RLIMIT_NOFILE, on one line.
limits() {
	prlimit --pid "$(server_of "$TFS_PID")" --nofile --noheadings --output SOFT,HARD
}

# nofile SOFT: the daemon's soft RLIMIT_NOFILE, its hard one kept.
nofile() {
	prlimit --pid "$(server_of "$TFS_PID")" --nofile="$1": &&
	limits | grep -q "^ *$1 "
}

# emfile CMD...: CMD fails, saying "Too many open files".
emfile() {
	test_must_fail "$@" 2>emfile.err &&
	cat emfile.err &&
	grep -q "Too many open files" emfile.err
}

test_expect_success 'setup: the live tree, started with a soft limit of 256 descriptors; a process of 300 threads, each read once' '
	write_config live.conf exited.keep=0 &&
	HARD=$(ulimit -Hn) &&
	test "$HARD" = unlimited -o "$HARD" -gt 1024 &&
	ulimit -Sn 256 &&
	mount_timingfs live.conf &&
	ulimit -Sn "$HARD" &&
	start_many $THREADS many.out &&
	wait_for 20 test -e "$MNT/proc/$MANY/threads/$(ls /proc/$MANY/task | sort -n | tail -n 1)" &&
	cat "$MNT"/proc/$MANY/threads/*/cycles >walk &&
	test "$(wc -l <walk)" = $THREADS &&
	ls /proc/$MANY/task | sort -n | tail -n 1 >last_tid
'

test_expect_success 'the daemon raised its soft descriptor limit to the hard one' '
	limits >limits &&
	cat limits &&
	read -r soft hard <limits &&
	test "$soft" = "$hard"
'

# lowest_free: the lowest descriptor number the daemon has free, which
# its next open would take.
lowest_free() {
	ls /proc/$(server_of "$TFS_PID")/fd | sort -n | awk "\$1 != NR - 1 { exit } END { print NR - (\$1 != NR - 1) }"
}

test_expect_success 'its limit at its next descriptor: it gives back the task files it keeps, and lists proc/' '
	held=$(ls /proc/$(server_of "$TFS_PID")/fd | wc -l) &&
	free=$(lowest_free) &&
	echo "daemon holds $held descriptors, its lowest free one $free" &&
	test "$held" -gt 100 &&
	test_when_finished "nofile $HARD" &&
	nofile $free &&
	ls "$MNT/proc" >listed &&
	grep -qx "$MANY" listed &&
	cat "$MNT/proc/$MANY/cycles" >value &&
	test -n "$(cat value)" &&
	after=$(ls /proc/$(server_of "$TFS_PID")/fd | wc -l) &&
	echo "then it held $after" &&
	test "$after" -lt "$held"
'

test_expect_success 'out of descriptors: EMFILE for listings, tables and task files, never empty, never ENOENT' '
	test_when_finished "nofile $HARD" &&
	nofile 3 &&
	emfile ls "$MNT/proc" &&
	emfile ls "$MNT/proc/$MANY/threads" &&
	emfile cat "$MNT/proc/table" &&
	emfile cat "$MNT/proc/$MANY/threads.table" &&
	emfile cat "$MNT/proc/$MANY/threads/$(cat last_tid)/times" &&
	emfile cat "$MNT/proc/$MANY/times" &&
	emfile cat "$MNT/proc/1/cycles" &&
	emfile cat "$MNT/groups/0/idle_cycles"
'

test_expect_success 'descriptors back: served as before' '
	ls "$MNT/proc" >listed &&
	grep -qx "$MANY" listed &&
	grep -qx 1 listed &&
	test "$(grep -c "^$MANY " "$MNT/proc/$MANY/threads.table")" = $THREADS &&
	cat "$MNT/proc/$MANY/threads/$(cat last_tid)/times" >times &&
	grep -q "^cycles [0-9]" times
'

test_expect_success 'the unit raises the limit: LimitNOFILE' '
	grep -q "^LimitNOFILE=[0-9]" "$SRC_ROOT/conf/timingfs.service"
'

test_done
