#!/bin/bash
# Reading: files of size 0 served with direct_io give their whole
# content to every reader, in any chunk size and from any offset, and
# each open is one snapshot. Common tools on the tree, and walks that
# follow the links terminate.
. "$(dirname "$0")/test-lib.sh"
require_fuse

fixture_config "$TRASH/m2.conf" m2
mount_timingfs "$TRASH/m2.conf" || exit 1

CYCLES=$MNT/proc/100/cycles # "12000000000\n"
TIMES=$MNT/proc/100/times
export CYCLES TIMES

test_expect_success 'cat gives the whole content of a size-0 file' '
	test "$(stat -c %s "$CYCLES")" = 0 &&
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
		echo "$key=$((value + 0))"
	done <"$TIMES" >actual &&
	test "$(wc -l <actual)" = 5 &&
	grep -x "kernel_time=10000000" actual
'

test_expect_success 'cp, cmp, and a language reader' '
	cp "$MNT/info" info.copy &&
	cat "$MNT/info" >info.cat &&
	cmp info.copy info.cat &&
	test "$(wc -l <info.copy)" = "$(grep -c . "$MNT/info")" &&
	test "$(wc -l <info.copy)" -ge 11 &&
	if command -v python3 >/dev/null; then
		python3 -c "import sys; sys.stdout.write(open(sys.argv[1]).read())" \
			"$TIMES" >py.out &&
		cat "$TIMES" >expect &&
		test_cmp expect py.out
	fi
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
	! (cd "$MNT" && grep -r . proc 2>../grep.err) >out &&
	grep -x "proc/100/threads/101/cycles:7500" out &&
	grep -x "proc/200/times:kernel_time 300000" out &&
	grep -x "proc/100/threads/102/cycles:2997" out &&
	test "$(grep -c "threads/102/.*: Input/output error" grep.err)" = 5 &&
	grep "proc/table: Input/output error" grep.err &&
	grep "proc/100/threads.table: Input/output error" grep.err &&
	grep -x "proc/200/threads.table:200 200 .*" out &&
	test "$(grep -c . out)" = 53
'

test_expect_success 'each open is a snapshot; many readers at once agree' '
	for i in 1 2 3 4 5 6 7 8; do
		(
			for j in $(seq 1 40); do
				cat "$TIMES"
			done >"reader.$i"
		) &
	done &&
	wait &&
	cat "$TIMES" >one &&
	for i in 1 2 3 4 5 6 7 8; do
		test "$(sort -u "reader.$i")" = "$(sort -u one)" &&
		test "$(wc -l <"reader.$i")" = 200 || return 1
	done
'

unmount_timingfs

# Walks that follow links need the real /proc: there proc/self and
# groups/current lead somewhere.
write_config "$TRASH/live.conf"
mount_timingfs "$TRASH/live.conf" || exit 1

test_expect_success 'find -L over the whole tree terminates, without a loop' '
	find -L "$MNT" >found 2>find.err || :
	cat find.err &&
	! grep -i "loop" find.err &&
	grep -x "$MNT/proc/self/threads" found &&
	grep -x "$MNT/groups/current/cpus" found &&
	grep -x "$MNT/proc/1/threads/1/times" found
'

test_expect_success 'grep -R over the whole tree terminates' '
	grep -R -c . "$MNT" >counts 2>grep.err || :
	! grep -i "recursive\|loop" grep.err &&
	grep -x "$MNT/groups/current/idle_cycles:$(nproc)" counts &&
	grep -x "$MNT/proc/self/times:5" counts &&
	grep -x "$MNT/info:$(grep -c . "$MNT/info")" counts
'

test_expect_success 'ls -lR and du terminate' '
	ls -lR "$MNT/groups" >/dev/null &&
	du -sL "$MNT/groups" >/dev/null
'

test_done
