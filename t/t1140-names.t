#!/bin/bash
test_description='Names: proc/PID/name and proc/PID/threads/TID/name are
the task'"'"'s name as the kernel keeps it (comm), and both tables end each
line with it, escaped as /proc/self/mountinfo escapes paths, so that a
line always has eight fields. Threads name themselves with
prctl(PR_SET_NAME): a space, a tab, a newline, a backslash, 15 bytes and
more. An exited thread keeps its name. Read with the task iterator and
with procfs, on two mounts, against the kernel'"'"'s own comm files.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

[ "$(id -u)" = 0 ] || skip_all "not root: the task iterator and taskstats need it"

NL='
'
TAB='	'
# The names the threads take, in order.
NAMES=("a b" "t${TAB}x" 'back\slash' "fifteen-bytes15" "sixteen+ bytes!!"
	"nl${NL}x" " lead" "\\ ${TAB}${NL}")

# escape: stdin as a table writes a name (mountinfo's escapes).
escape() {
	perl -0777 -pe 's/\n\z//; s/([ \t\n\\])/sprintf("\\%03o", ord $1)/ge'
}

# field8 TABLE TID: the last field of TID's line of TABLE.
field8() {
	awk -v t="$2" '$2 == t { print $8 }' "$1"
}

test_expect_success 'setup: a mount reading tasks by the iterator, one by procfs' '
	write_config "$TRASH/it.conf" exited.keep=60 &&
	mount_timingfs "$TRASH/it.conf" &&
	write_config "$TRASH/pf.conf" exited.keep=60 sources.tasks=procfs &&
	mkdir -p "$TRASH/pf" &&
	start_timingfs_on PF "$TRASH/pf" -c "$TRASH/pf.conf" &&
	kill_at_exit "$PF_PID" &&
	grep -x "task_source procfs" "$TRASH/pf/info" &&
	if grep -qx "task_source bpf" "$MNT/info"; then
		test_set_prereq ITER
	fi &&
	if grep -qx "exit_source taskstats" "$MNT/info"; then
		test_set_prereq TASKSTATS
	fi
'

test_expect_success 'setup: a process of threads that named themselves' '
	mkfifo cmd &&
	{ "$BIN/helper-named" ${#NAMES[@]} "${NAMES[@]}" <cmd >out & } &&
	HELPER=$! &&
	kill_at_exit "$HELPER" &&
	exec 9>cmd &&
	wait_file out 1 &&
	read -r pid TIDS <out &&
	test "$pid" = "$HELPER" &&
	set -- $TIDS &&
	test $# = ${#NAMES[@]}
'

test_expect_success 'a thread'"'"'s name file is its comm, byte for byte' '
	i=0 &&
	for t in $TIDS; do
		for m in "$MNT" "$TRASH/pf"; do
			cmp "/proc/$HELPER/task/$t/comm" \
				"$m/proc/$HELPER/threads/$t/name" ||
			return 1
		done &&
		printf "%s\n" "${NAMES[$i]:0:15}" >want &&
		cmp want "$MNT/proc/$HELPER/threads/$t/name" &&
		i=$((i + 1)) || return 1
	done
'

test_expect_success 'the names as set: 15 bytes kept, the 16th cut by the kernel' '
	set -- $TIDS &&
	test "$(cat "$MNT/proc/$HELPER/threads/$4/name")" = fifteen-bytes15 &&
	test "$(cat "$MNT/proc/$HELPER/threads/$5/name")" = "sixteen+ bytes!" &&
	test "$(cat "$MNT/proc/$HELPER/threads/$1/name")" = "a b"
'

test_expect_success 'a process'"'"'s name is its main thread'"'"'s' '
	cmp "/proc/$HELPER/comm" "$MNT/proc/$HELPER/name" &&
	cmp "/proc/$HELPER/comm" "$TRASH/pf/proc/$HELPER/name" &&
	test "$(cat "$MNT/proc/$HELPER/name")" = helper-named
'

test_expect_success 'both tables: eight fields a line, the name escaped' '
	for m in "$MNT" "$TRASH/pf"; do
		cat "$m/proc/$HELPER/threads.table" >threads.$$ &&
		cat "$m/proc/table" >all.$$ &&
		test "$(head -n 1 threads.$$)" = "$TABLE_HEADER" &&
		test "$(head -n 1 all.$$)" = "$TABLE_HEADER" &&
		test "$(awk "{ print NF }" threads.$$ all.$$ | sort -u)" = 8 &&
		for t in $TIDS; do
			want=$(escape <"/proc/$HELPER/task/$t/comm") &&
			test "$(field8 threads.$$ "$t")" = "$want" &&
			test "$(field8 all.$$ "$t")" = "$want" ||
			{ echo "$m: $t: $(field8 threads.$$ "$t"), want $want"; return 1; }
		done || return 1
	done
'

test_expect_success 'the escapes, spelled out' '
	set -- $TIDS &&
	cat "$MNT/proc/$HELPER/threads.table" >t &&
	test "$(field8 t "$1")" = "a\\040b" &&
	test "$(field8 t "$2")" = "t\\011x" &&
	test "$(field8 t "$3")" = "back\\134slash" &&
	test "$(field8 t "$6")" = "nl\\012x" &&
	test "$(field8 t "$7")" = "\\040lead" &&
	test "$(field8 t "$8")" = "\\134\\040\\011\\012"
'

test_expect_success 'grep finds a thread by its name in a table' '
	grep -c " fifteen-bytes15\$" "$MNT/proc/table" >n &&
	test "$(cat n)" = 1 &&
	grep " fifteen-bytes15\$" "$MNT/proc/table" | awk "{ print \$2 }" >tid &&
	test "$(cat tid)" = "$(echo $TIDS | cut -d " " -f 4)"
'

test_expect_success 'a renamed thread shows its new name at the next read' '
	t=$(echo $TIDS | cut -d " " -f 1) &&
	test "$(cat "$MNT/proc/$HELPER/threads/$t/name")" = "a b" &&
	echo "name $t renamed" >&9 &&
	wait_file out 2 &&
	test "$(sed -n 2p out)" = "named $t" &&
	test "$(cat "$MNT/proc/$HELPER/threads/$t/name")" = renamed &&
	test "$(field8 "$MNT/proc/$HELPER/threads.table" "$t")" = renamed &&
	test "$(field8 "$TRASH/pf/proc/$HELPER/threads.table" "$t")" = renamed
'

test_expect_success TASKSTATS 'an exited thread keeps its name, in its file and the tables' '
	t=$(echo $TIDS | cut -d " " -f 3) &&
	echo "exit $t" >&9 &&
	wait_file out 3 &&
	test "$(sed -n 3p out)" = "exited $t" &&
	test_poll_ 10 test -s "$MNT/proc/$HELPER/threads/$t/exit_time" &&
	test_poll_ 10 eval "test \"\$(cat \"$MNT/proc/$HELPER/threads/$t/exit_time\")\" != 0" &&
	test "$(cat "$MNT/proc/$HELPER/threads/$t/name")" = "back\\slash" &&
	for m in "$MNT" "$TRASH/pf"; do
		awk -v t="$t" "\$2 == t && \$7 != 0 { print \$8 }" \
			"$m/proc/$HELPER/threads.table" >kept &&
		test "$(cat kept)" = "back\\134slash" || return 1
	done
'

test_expect_success TASKSTATS 'an exited process keeps its name' '
	exec 9>&- &&
	kill "$HELPER" &&
	test_expect_code 143 wait "$HELPER" &&
	test_poll_ 10 eval "test \"\$(cat \"$MNT/proc/$HELPER/exit_time\" 2>/dev/null)\" -gt 0" &&
	test "$(cat "$MNT/proc/$HELPER/name")" = helper-named
'

# The helpers end by a signal: the tests' watchdogs, started while the
# shell holds fd 9, hold the fifo open too.
test_expect_success 'setup: 10,000 threads, named with blanks' '
	exec 9>&- &&
	rm -f cmd out &&
	mkfifo cmd &&
	{ "$BIN/helper-named" 10000 "w 1" "x${TAB}2" "y\\3" <cmd >out & } &&
	MANY=$! &&
	kill_at_exit "$MANY" &&
	exec 9>cmd &&
	wait_file out 1 30
'

test_expect_success 'a 10,000-thread threads.table: eight fields on every line' '
	for m in "$MNT" "$TRASH/pf"; do
		cat "$m/proc/$MANY/threads.table" >big &&
		test "$(wc -l <big)" = 10002 &&
		test "$(awk "{ print NF }" big | sort -u)" = 8 &&
		test "$(grep -c " w\\\\0401\$" big)" -ge 3333 &&
		test "$(grep -c " x\\\\0112\$" big)" = 3333 &&
		test "$(grep -c " y\\\\1343\$" big)" = 3333 || return 1
	done &&
	awk "{ print NF }" "$MNT/proc/table" | sort -u >nf &&
	test "$(cat nf)" = 8
'

test_expect_success 'cleanup' '
	exec 9>&- &&
	kill "$MANY" &&
	test_expect_code 143 wait "$MANY" &&
	unmount_timingfs_on PF "$TRASH/pf" &&
	unmount_timingfs
'

test_done
