#!/bin/bash
test_description='Reading: files give their whole content to every
reader, in any chunk size and from any offset, and each open is one
snapshot. Common tools on the tree, and
walks that follow the links terminate.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

CYCLES=$MNT/proc/100/cycles # "12000000000\n"
TIMES=$MNT/proc/100/times

test_expect_success 'setup: the m2 fixture mounted' '
	fixture_config "$TRASH/m2.conf" m2 &&
	mount_timingfs "$TRASH/m2.conf"
'

test_expect_success 'stat gives the length of the content, cat all of it' '
	test "$(stat -c %s "$CYCLES")" = 12 &&
	cat "$CYCLES" >actual &&
	echo 12000000000 >expect &&
	test_cmp expect actual &&
	test "$(wc -c <"$CYCLES")" = 12
'

test_expect_success 'one byte per read: dd bs=1 and read(2) of 1' '
	dd if="$TIMES" bs=1 of=actual 2>/dev/null &&
	cat "$TIMES" >expect &&
	test_cmp expect actual &&
	"$BIN/helper-io" bytewise "$TIMES" >actual &&
	test_cmp expect actual &&
	test "$(wc -c <actual)" -gt 100
'

test_expect_success 'the first read at an offset: pread, tail -c +N' '
	test "$("$BIN/helper-io" pread "$CYCLES" 3 100)" = 00000000 &&
	test "$("$BIN/helper-io" pread "$CYCLES" 0 2)" = 12 &&
	test "$("$BIN/helper-io" pread "$CYCLES" 10 1)" = 0 &&
	"$BIN/helper-io" pread "$CYCLES" 12 10 >at-end &&
	test ! -s at-end &&
	"$BIN/helper-io" pread "$CYCLES" 100000 10 >past-end &&
	test ! -s past-end &&
	cat "$TIMES" | tail -c +15 >expect &&
	tail -c +15 "$TIMES" >actual &&
	test_cmp expect actual &&
	test "$(head -c 4 actual)" = 0000
'

test_expect_success 'head -c, head -n, tail -n, cut, sed, awk' '
	test "$(head -c 5 "$CYCLES")" = 12000 &&
	test "$(head -n 1 "$TIMES")" = "cycles 12000000000" &&
	test "$(tail -n 1 "$TIMES")" = "exit_time 0" &&
	test "$(cut -d" " -f2 "$TIMES" | head -n 2 | tail -n 1)" = 10000000 &&
	test "$(sed -n "s/^user_time //p" "$TIMES")" = 30000000 &&
	test "$(awk "\$1 == \"kernel_time\" { print \$2 }" "$TIMES")" = 10000000
'

test_expect_success 'shell read and arithmetic' '
	read -r cpu <"$MNT/groups/0/cpu1/cpu" &&
	test $((cpu + 1)) = 2 &&
	read -r c <"$CYCLES" &&
	test $((c + 1)) = 12000000001 &&
	x=$(cat "$MNT/proc/100/threads/101/cycles") &&
	test $((x * 2)) = 15000 &&
	while read -r key value; do
		echo "$key=$((value + 0))" || return 1
	done <"$TIMES" >actual &&
	test "$(wc -l <actual)" = 5 &&
	grep -x "kernel_time=10000000" actual
'

test_expect_success 'cp and cmp' '
	cp "$MNT/info" info.copy &&
	cat "$MNT/info" >info.cat &&
	cmp info.copy info.cat &&
	test "$(wc -l <info.copy)" = "$(grep -c . "$MNT/info")" &&
	test "$(wc -l <info.copy)" -ge 11
'

# Python's read() takes st_size, 0 here, as a hint only, and reads on
# to the end of file.
test_expect_success PYTHON3 'a language reader: python3' '
	python3 -c "import sys; sys.stdout.write(open(sys.argv[1]).read())" \
		"$TIMES" >py.out &&
	cat >expect <<-\EOF &&
	cycles 12000000000
	kernel_time 10000000
	user_time 30000000
	creation_time 133444736500000000
	exit_time 0
	EOF
	test_cmp expect py.out
'

test_expect_success 'grep -r . over groups: every value, exactly' '
	(cd "$MNT" && grep -r . groups | sort) >actual &&
	cat >expect <<-\EOF &&
	groups/0/cpu0/cpu:0
	groups/0/cpu0/idle_cycles:150600000000
	groups/0/cpu1/cpu:1
	groups/0/cpu1/idle_cycles:150900000000
	groups/0/cpus:0-1
	groups/0/idle_cycles:cpu0 150600000000
	groups/0/idle_cycles:cpu1 150900000000
	EOF
	test_cmp expect actual
'

test_expect_success 'grep -r over proc: the values of every task' '
	(cd "$MNT" && test_expect_code 2 grep -r . proc 2>"$TRASH/grep.err") >out &&
	grep -x "proc/100/threads/101/cycles:7500" out &&
	grep -x "proc/200/times:kernel_time 300000" out &&
	grep -x "proc/100/threads/102/cycles:2997" out &&
	test "$(grep -c "threads/102/.*: Input/output error" grep.err)" = 6 &&
	grep "proc/table: Input/output error" grep.err &&
	grep "proc/100/threads.table: Input/output error" grep.err &&
	grep -x "proc/200/threads.table:200 200 .*" out &&
	test "$(grep -c . out)" = 58
'

test_expect_success 'each open is a snapshot; many readers at once agree' '
	pids= &&
	for i in 1 2 3 4 5 6 7 8; do
		{
			for j in $(seq 1 40); do
				cat "$TIMES" || exit 1
			done >"reader.$i" &
		} &&
		pids="$pids $!" || return 1
	done &&
	for pid in $pids; do
		wait "$pid" || return 1
	done &&
	cat "$TIMES" >one &&
	for i in 1 2 3 4 5 6 7 8; do
		test "$(sort -u "reader.$i")" = "$(sort -u one)" &&
		test "$(wc -l <"reader.$i")" = 200 || return 1
	done
'

# Walks that follow links need the real /proc: there proc/self and
# groups/current lead somewhere.
test_expect_success 'setup: the live tree mounted instead' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0 &&
	write_config "$TRASH/live.conf" &&
	mount_timingfs "$TRASH/live.conf"
'

# On the live tree, tasks end during a walk: an error (exit 1) is no
# failure, a signal is.
test_expect_success 'find -L over the whole tree terminates, without a loop' '
	{ find -L "$MNT" >found 2>find.err; rc=$?; } &&
	cat find.err &&
	echo "find exited $rc" &&
	test "$rc" -le 1 &&
	! grep -i "loop" find.err &&
	grep -x "$MNT/proc/self/threads" found &&
	grep -x "$MNT/groups/current/cpus" found &&
	grep -x "$MNT/proc/1/threads/1/times" found
'

test_expect_success 'grep -R over the whole tree terminates' '
	{ grep -R -c . "$MNT" >counts 2>grep.err; rc=$?; } &&
	echo "grep exited $rc" &&
	test "$rc" -le 2 &&
	! grep -i "recursive\|loop" grep.err &&
	grep -x "$MNT/groups/current/idle_cycles:$(nproc)" counts &&
	grep -x "$MNT/proc/self/times:5" counts &&
	grep -x "$MNT/info:$(grep -c . "$MNT/info")" counts
'

test_expect_success 'ls -lR and du terminate, without a warning' '
	ls -lR "$MNT/groups" >ls.out 2>ls.err &&
	cat ls.err &&
	test ! -s ls.err &&
	grep -x "$MNT/groups/0/cpu0:" ls.out &&
	grep " current -> [0-9][0-9]*$" ls.out &&
	du -sL "$MNT/groups" >du.out 2>du.err &&
	cat du.err &&
	test ! -s du.err
'

test_done
