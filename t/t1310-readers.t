#!/bin/bash
test_description='Every way a program reads a file gets exactly what
read(2) gets: pread, sendfile(2) to a file and to a pipe, splice(2),
copy_file_range(2) or its refusal, mmap, busybox (cat, cp, head, tail,
wc), Python (shutil.copyfile, os.splice) and GNU (cat, cp, head, tail,
wc, grep, awk, dd); and stat, ls -l, du and find show the exact size of
what is read. The kernel serves sendfile, splice and mmap of a FUSE file
through its page cache up to the size the file reports, so the size is
part of what each reader gets. First on the m2 fixture; then on a copy
of it whose values change length between two opens (1, 12, 17, then 1
digit), each reader reading right after the edit; then on the live
tree, eight readers of the tables of a process of 3,000 threads at once
(10 s), after which the daemon is still small.'
# Each step's readers (thirteen ways, five files, four steps) take most
# of a minute in a sanitized build on a loaded 2-CPU machine: a margin.
TEST_TIMEOUT=${TEST_TIMEOUT:-240}
. "$(dirname "$0")/test-lib.sh"

require_fuse

# How long each of the concurrent readers of the big tables reads, and
# how many threads the big process has.
TABLE_SECONDS=10
MANY_THREADS=3000
# The daemon's resident set after them, at most (KiB).
RSS_MAX_KIB=16384

# A sanitized build (make check-sanitize) keeps freed memory resident
# by design: its RSS is no measure of the daemon's (as in t1950).

# ---- the readers -------------------------------------------------------
#
# rd_NAME FILE EXPECT: one reader of FILE, which must get what the
# regular file EXPECT holds (or its part that the reader asks for);
# 0 when it does. Each opens FILE anew. Their output goes to rd.* in the
# current directory.

# same WHO EXPECT ACTUAL: test_cmp, and which reader differs.
same() {
	test_cmp "$2" "$3" && return 0
	echo "reader '$1': not the expected bytes; got:"
	od -c "$3" | head -n 20
	return 1
}

# size_of EXPECT: its length in bytes.
size_of() {
	local n
	n=$(wc -c <"$1") && echo $((n))
}

rd_read() {
	"$BIN/helper-readers" read "$1" >rd.out && same read "$2" rd.out
}

# The first read of an open at a few offsets, the end and past it.
rd_pread() {
	local size off
	size=$(size_of "$2") || return 1
	for off in 0 1 $((size / 2)) $((size - 1)) "$size" $((size + 7)); do
		[ "$off" -ge 0 ] || continue
		tail -c +$((off + 1)) "$2" | head -c 4096 >rd.exp &&
			"$BIN/helper-io" pread "$1" "$off" 4096 >rd.out &&
			same "pread at $off" rd.exp rd.out || return 1
	done
}

rd_sendfile() {
	"$BIN/helper-readers" sendfile "$1" >rd.out &&
		same "sendfile to a file" "$2" rd.out
}

# Into a pipe: a failure of the reader is written into what is read.
rd_sendfile_pipe() {
	{ "$BIN/helper-readers" sendfile "$1" || echo "FAILED $?"; } |
		cat >rd.out && same "sendfile to a pipe" "$2" rd.out
}

rd_splice() {
	"$BIN/helper-readers" splice "$1" >rd.out && same splice "$2" rd.out
}

# copy_file_range(2) whole, or its refusal and read(2): exact either way.
rd_copy() {
	rm -f rd.out &&
		"$BIN/helper-readers" copy "$1" rd.out 2>rd.err &&
		same copy_file_range "$2" rd.out || return 1
	[ ! -s rd.err ] || grep -qx "refused E[A-Z]*" rd.err || {
		cat rd.err
		return 1
	}
}

# mmap(MAP_SHARED): FUSE refuses it on a direct_io file (every open of
# timingfs is one, so that a read at offset 0 takes a new snapshot) on
# a connection that did not ask for FUSE_DIRECT_IO_ALLOW_MMAP, which
# libfuse 3.14 cannot: ENODEV, and nothing read. MAP_PRIVATE reads.
rd_mmap() {
	test_must_fail "$BIN/helper-readers" mmap "$1" >rd.out 2>rd.err &&
		test ! -s rd.out && grep -q "ENODEV" rd.err || {
		cat rd.err
		return 1
	}
}

rd_mmap_private() {
	"$BIN/helper-readers" mmap "$1" private >rd.out 2>rd.err &&
		same "mmap private" "$2" rd.out || {
		cat rd.err
		return 1
	}
}

rd_bb_cat() {
	busybox cat "$1" >rd.out && same "busybox cat" "$2" rd.out
}

rd_bb_cat_pipe() {
	{ busybox cat "$1" || echo "FAILED $?"; } | cat >rd.out &&
		same "busybox cat | cat" "$2" rd.out
}

rd_bb_cp() {
	rm -f rd.out && busybox cp "$1" rd.out && same "busybox cp" "$2" rd.out
}

rd_bb_head_c() {
	head -c 7 "$2" >rd.exp && busybox head -c 7 "$1" >rd.out &&
		same "busybox head -c 7" rd.exp rd.out
}

rd_bb_head_n() {
	head -n 1 "$2" >rd.exp && busybox head -n 1 "$1" >rd.out &&
		same "busybox head -n 1" rd.exp rd.out
}

rd_bb_tail_c() {
	tail -c 7 "$2" >rd.exp && busybox tail -c 7 "$1" >rd.out &&
		same "busybox tail -c 7" rd.exp rd.out
}

rd_bb_tail_n() {
	tail -n 1 "$2" >rd.exp && busybox tail -n 1 "$1" >rd.out &&
		same "busybox tail -n 1" rd.exp rd.out
}

rd_bb_wc() {
	local n
	n=$(busybox wc -c <"$1") && [ "$((n))" = "$(size_of "$2")" ] || {
		echo "reader 'busybox wc -c': $n bytes, not $(size_of "$2")"
		return 1
	}
}

# shutil.copyfile copies with sendfile(2) on Linux.
rd_py_copyfile() {
	rm -f rd.out &&
		python3 "$TRASH/copyfile.py" "$1" rd.out &&
		same "python3 shutil.copyfile" "$2" rd.out
}

# os.splice is Python 3.10's: an older one says so, and reads nothing.
rd_py_splice() {
	local rc=0
	python3 "$TRASH/splice.py" "$1" >rd.out || rc=$?
	if [ "$rc" = 77 ]; then
		echo "python3 has no os.splice: not read with it"
		return 0
	fi
	[ "$rc" = 0 ] && same "python3 os.splice" "$2" rd.out
}

rd_cat() {
	cat "$1" >rd.out && same cat "$2" rd.out
}

rd_cp() {
	rm -f rd.out && cp "$1" rd.out && same cp "$2" rd.out
}

rd_head_c() {
	head -c 7 "$2" >rd.exp && head -c 7 "$1" >rd.out &&
		same "head -c 7" rd.exp rd.out
}

rd_head_n() {
	head -n 1 "$2" >rd.exp && head -n 1 "$1" >rd.out &&
		same "head -n 1" rd.exp rd.out
}

# GNU tail -c of a regular file seeks to st_size - 7 first.
rd_tail_c() {
	tail -c 7 "$2" >rd.exp && tail -c 7 "$1" >rd.out &&
		same "tail -c 7" rd.exp rd.out
}

rd_tail_n() {
	tail -n 1 "$2" >rd.exp && tail -n 1 "$1" >rd.out &&
		same "tail -n 1" rd.exp rd.out
}

rd_wc() {
	local n
	n=$(wc -c <"$1") && [ "$((n))" = "$(size_of "$2")" ] || {
		echo "reader 'wc -c': $n bytes, not $(size_of "$2")"
		return 1
	}
}

rd_grep() {
	grep "" "$1" >rd.out && same "grep" "$2" rd.out
}

rd_awk() {
	awk 1 "$1" >rd.out && same "awk" "$2" rd.out
}

rd_dd() {
	dd if="$1" of=rd.out bs=3 status=none && same "dd bs=3" "$2" rd.out
}

# The size a path walk shows is the length of what is read.
rd_stat() {
	local n
	n=$(stat -c %s "$1") && [ "$n" = "$(size_of "$2")" ] || {
		echo "stat -c %s: $n, not $(size_of "$2")"
		return 1
	}
}

rd_ls() {
	local n
	n=$(ls -ln "$1" | awk '{ print $5 }') &&
		[ "$n" = "$(size_of "$2")" ] || {
		echo "ls -l: size $n, not $(size_of "$2")"
		return 1
	}
}

rd_du() {
	local n
	du "$1" >/dev/null 2>rd.err && [ ! -s rd.err ] &&
		n=$(du -b "$1" 2>rd.err) && [ ! -s rd.err ] &&
		[ "${n%%$'\t'*}" = "$(size_of "$2")" ] || {
		echo "du: '$n'"
		cat rd.err
		return 1
	}
}

READERS="read pread sendfile sendfile_pipe splice copy mmap mmap_private
bb_cat bb_cat_pipe bb_cp bb_head_c bb_head_n bb_tail_c bb_tail_n bb_wc
py_copyfile py_splice cat cp head_c head_n tail_c tail_n wc grep awk dd
stat ls du"

# readers_give FILE EXPECT: every reader gets EXPECT's bytes.
readers_give() {
	local r
	for r in $READERS; do
		"rd_$r" "$1" "$2" || {
			echo "reader $r of $1 failed"
			return 1
		}
	done
}

# readers_agree FILE: read(2) gets a non-empty content that ends with a
# newline, and every reader gets exactly it.
readers_agree() {
	"$BIN/helper-readers" read "$1" >agree.expect &&
		[ -s agree.expect ] &&
		[ "$(tail -c 1 agree.expect | od -An -tx1)" = " 0a" ] &&
		readers_give "$1" agree.expect
}

# The files of every kind: a value, a key-value snapshot, info, the
# group's list and cpulist, a processor's value, and both tables.
FILES="proc/100/cycles proc/100/times info groups/0/idle_cycles
groups/0/cpus groups/0/cpu0/idle_cycles proc/100/threads.table proc/table"

# ---- the m2 fixture ----------------------------------------------------

# Their absence is a failure, not a skip: scripts/install-deps installs
# them (busybox-static, python3), and the readers need them.
test_expect_success 'busybox and python3 are there' '
	command -v busybox &&
	busybox cat </dev/null &&
	python3 -c "import os, shutil"
'

test_expect_success 'setup: the m2 fixture mounted; the Python readers' '
	fixture_config "$TRASH/m2.conf" m2 &&
	mount_timingfs "$TRASH/m2.conf" &&
	cat >"$TRASH/copyfile.py" <<-\EOF &&
	import shutil, sys
	shutil.copyfile(sys.argv[1], sys.argv[2])
	EOF
	cat >"$TRASH/splice.py" <<-\EOF
	import os, sys
	if not hasattr(os, "splice"):
	    sys.exit(77)
	fd = os.open(sys.argv[1], os.O_RDONLY)
	r, w = os.pipe()
	out = bytearray()
	while True:
	    n = os.splice(fd, w, 65536)
	    if n == 0:
	        break
	    while n > 0:
	        b = os.read(r, n)
	        out += b
	        n -= len(b)
	sys.stdout.buffer.write(out)
	EOF
'

test_expect_success 'read(2) gets the values of the fixture' '
	echo 12000000000 >expect &&
	"$BIN/helper-readers" read "$MNT/proc/100/cycles" >actual &&
	test_cmp expect actual &&
	echo 0-1 >expect &&
	"$BIN/helper-readers" read "$MNT/groups/0/cpus" >actual &&
	test_cmp expect actual &&
	echo 150600000000 >expect &&
	"$BIN/helper-readers" read "$MNT/groups/0/cpu0/idle_cycles" >actual &&
	test_cmp expect actual &&
	printf "cpu0 150600000000\ncpu1 150900000000\n" >expect &&
	"$BIN/helper-readers" read "$MNT/groups/0/idle_cycles" >actual &&
	test_cmp expect actual &&
	cat >expect <<-\EOF &&
	cycles 12000000000
	kernel_time 10000000
	user_time 30000000
	creation_time 133444736500000000
	exit_time 0
	EOF
	"$BIN/helper-readers" read "$MNT/proc/100/times" >actual &&
	test_cmp expect actual &&
	"$BIN/helper-readers" read "$MNT/info" >actual &&
	grep -x "tsc_hz 3000000000" actual &&
	"$BIN/helper-readers" read "$MNT/proc/200/threads.table" >actual &&
	test "$(wc -l <actual)" = 2 &&
	grep "^200 200 " actual
'

# m2's thread 102 has a stat cut short: the tables of process 100 and
# proc/table cannot be made (t1300), and are tested on a whole copy
# below; process 200's table stands for them here.
for f in $FILES proc/200/threads.table; do
	case $f in proc/table | proc/100/threads.table) continue ;; esac
	F=$f
	test_expect_success "m2: every reader of $f gets what read(2) gets" '
		readers_agree "$MNT/$F"
	'
done

# A table that cannot be made is an error to every reader: never an
# empty content, whatever its size.
test_expect_success 'm2: a table that cannot be made is EIO to every reader' '
	for f in proc/table proc/100/threads.table; do
		test_must_fail "$BIN/helper-readers" read "$MNT/$f" >out 2>err &&
		test ! -s out && grep EIO err &&
		for way in sendfile splice mmap; do
			test_must_fail "$BIN/helper-readers" $way "$MNT/$f" \
				>out 2>err &&
			test ! -s out && grep EIO err || return 1
		done &&
		test_must_fail busybox cat "$MNT/$f" >out 2>err &&
		test ! -s out && grep -i -e "I/O error" -e "Input/output error" err &&
		test_must_fail cat "$MNT/$f" >out 2>err &&
		test ! -s out && grep "Input/output error" err &&
		test_must_fail python3 "$TRASH/copyfile.py" "$MNT/$f" py.out \
			2>err &&
		grep "Input/output error" err || return 1
	done
'

# ---- a copy of m2 whose values change ----------------------------------
#
# Thread 102's stat made whole (the fields of 101's), so that every file
# and both tables can be made. In a captured tree a thread's cycles are
# its schedstat's runtime (ns) x tsc_hz, a process's its stat's
# utime + stime (ticks of 1/100 s) x tsc_hz.

W=$TRASH/w

# set_thread NS [START]: thread 101's runtime (ns), and a new start (in
# ticks after boot) where START is given; set_process UTIME STIME
# [START]: process 100's ticks, and its start. Each file is replaced
# whole, at once.
set_thread() {
	printf "%s 0 1\n" "$1" >"$W/new" &&
		mv "$W/new" "$W/proc/100/task/101/schedstat" || return 1
	[ -z "${2:-}" ] && return 0
	awk -v start="$2" '{ $22 = start; print }' \
		"$W/proc/100/task/101/stat" >"$W/new" &&
		mv "$W/new" "$W/proc/100/task/101/stat"
}

set_process() {
	awk -v u="$1" -v s="$2" -v start="${3:-}" '
		{ $14 = u; $15 = s; if (start != "") $22 = start; print }' \
		"$W/proc/100/stat" >"$W/new" &&
		mv "$W/new" "$W/proc/100/stat"
}

test_expect_success 'setup: a whole copy of m2 mounted instead' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0 &&
	cp -R "$FIXTURES/m2" "$W" &&
	sed "s/^101 /102 /" "$W/proc/100/task/101/stat" \
		>"$W/proc/100/task/102/stat" &&
	write_config "$TRASH/w.conf" "sources.proc=$W/proc" \
		"sources.sys=$W/sys" clock.tsc_hz=3000000000 &&
	mount_timingfs "$TRASH/w.conf" &&
	test "$(cat "$MNT/proc/100/cycles")" = 12000000000 &&
	test "$(cat "$MNT/proc/100/threads/102/cycles")" = 2997 &&
	test "$(grep -c "^100 " "$MNT/proc/table")" = 3
'

for f in $FILES; do
	F=$f
	test_expect_success "every reader of $f gets what read(2) gets" '
		readers_agree "$MNT/$F"
	'
done

# find -size -1k lists the files that look empty (sizes round up):
# none does. Every file's size is the length read.
test_expect_success 'find and du over proc/100: every size is the length read' '
	find "$MNT/proc/100" -type f >all &&
	test "$(wc -l <all)" = 29 &&
	find "$MNT/proc/100" -size -1k -type f >empty 2>err &&
	cat err empty &&
	test ! -s err &&
	test ! -s empty &&
	find "$MNT/proc/100" -type f -size -2k >small &&
	test_cmp all small &&
	find "$MNT/proc/100" -type f -printf "%s %p\n" >sizes &&
	while read -r size path; do
		test "$size" = "$(wc -c <"$path")" || {
			echo "$path: size $size, $(wc -c <"$path") bytes read" &&
			return 1
		}
	done <sizes &&
	du -a "$MNT/proc/100" >du.out 2>du.err &&
	cat du.err &&
	test ! -s du.err &&
	du -ab "$MNT/proc/100" >du.out 2>du.err &&
	cat du.err &&
	test ! -s du.err &&
	test "$(grep "/proc/100/cycles\$" du.out | cut -f1)" = 12
'

# What thread 101's and process 100's cycles read at each step: 1, 12,
# 17 and again 1 digit (tsc_hz 3 GHz: 3 cycles a ns, 3e7 a tick).
STEP_NS="0 40000000000 10000000000000000 0"
STEP_TICKS="0,0 3000,400 700000000,300000000 0,0"
# A task's counters never go backwards (its times keep the kernel and
# user shares they showed): a step that makes a value smaller makes the
# tasks new ones of the same numbers, as when a PID is used again, each
# time with a start of its own.
NEW_START=6000

# step I: make step I's edit (1 to 4); its values in $thread_value and
# $process_value, and in the files thread.expect and process.expect.
step() {
	local ns ticks start=
	ns=$(echo $STEP_NS | cut -d" " -f"$1") &&
		ticks=$(echo $STEP_TICKS | cut -d" " -f"$1") || return 1
	case $1 in
	1 | 4)
		NEW_START=$((NEW_START + 1))
		start=$NEW_START
		;;
	esac
	set_thread "$ns" "$start" &&
		set_process "${ticks%,*}" "${ticks#*,}" "$start" &&
		thread_value=$((ns * 3)) &&
		process_value=$(((${ticks%,*} + ${ticks#*,}) * 30000000)) &&
		echo "$thread_value" >thread.expect &&
		echo "$process_value" >process.expect
}

test_expect_success 'the steps make values of 1, 12, 17 and 1 digit' '
	test "$(sed -n "s/^tsc_hz //p" "$MNT/info")" = 3000000000 &&
	for i in 1 2 3 4; do
		step $i &&
		echo "${#thread_value} ${#process_value}" || return 1
	done >lengths &&
	printf "1 1\n12 12\n17 17\n1 1\n" >expect &&
	test_cmp expect lengths
'

# After each edit, at once: every reader of both values, of the times
# and of both tables (whose line of thread 101 changes length) gets the
# new content, exactly.
test_expect_success 'a value whose length changes: every reader right after the edit' '
	for i in 1 2 3 4; do
		step $i &&
		readers_give "$MNT/proc/100/threads/101/cycles" thread.expect &&
		readers_give "$MNT/proc/100/cycles" process.expect &&
		readers_agree "$MNT/proc/100/times" &&
		grep -qx "cycles $process_value" agree.expect &&
		readers_agree "$MNT/proc/100/threads/101/times" &&
		grep -qx "cycles $thread_value" agree.expect &&
		for t in proc/100/threads.table proc/table; do
			readers_agree "$MNT/$t" &&
			test "$(awk "\$2 == 101 { print \$3 }" agree.expect)" = \
				"$thread_value" || return 1
		done ||
		return 1
	done
'

# The same, each reader in turn the first to open the file after the
# edit (the one whose lookup or open meets the new length first). A
# size alone (stat, ls, du) is the kernel's, kept for the attribute
# timeout (FS_TIMEOUT_S, 1 s) since the name was last looked up: those
# readers come after it.
test_expect_success 'a value whose length changes: each reader the first after the edit' '
	for r in $READERS; do
		for i in 1 2 3 4; do
			step $i &&
			case $r in stat | ls | du) sleep 1.1 ;; esac &&
			"rd_$r" "$MNT/proc/100/threads/101/cycles" thread.expect &&
			"rd_$r" "$MNT/proc/100/cycles" process.expect || {
				echo "reader $r, step $i" &&
				return 1
			}
		done || return 1
	done
'

# ---- the live tree: big tables read by many at once --------------------

# table_lists PID N: the mount's threads.table of PID lists N threads;
# how many it listed is left in $n.
table_lists() {
	n=$(grep -c "^$1 " "$MNT/proc/$1/threads.table") && test "$n" = "$2"
}

# The big process says it is ready once its threads run (up to 30 s on
# a loaded machine); its table lists them all within 20 s more.
test_expect_success 'setup: the live tree; a process of 3,000 threads' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0 &&
	write_config "$TRASH/live.conf" exited.keep=0 &&
	mount_timingfs "$TRASH/live.conf" &&
	start_many $MANY_THREADS many.out &&
	{ wait_for 20 table_lists "$MANY" $MANY_THREADS ||
		{ echo "threads.table lists $n threads"; false; }; } &&
	test "$n" = $MANY_THREADS
'

# Each reader reads its table whole again and again and checks each
# copy: the header, lines of 7 integers and a name, no thread twice, and the 3,000
# lines of the big process.
test_expect_success 'eight readers of the big tables at once: every copy whole' '
	pids= &&
	k=0 &&
	for t in "proc/$MANY/threads.table" proc/table; do
		for way in splice splice sendfile sendfile; do
			k=$((k + 1)) &&
			{ "$BIN/helper-readers" tables "$MNT/$t" $TABLE_SECONDS \
				$way $MANY $MANY_THREADS >"tables.$k.out" \
				2>"tables.$k.err" & } &&
			kill_at_exit $! &&
			pids="$pids $!" &&
			echo "$t $way" >"tables.$k.what" || return 1
		done
	done &&
	{ wait_pids $pids >waited || :; } &&
	for f in tables.*.out; do
		echo "$(cat "${f%.out}.what"): $(cat "$f")" &&
		cat "${f%.out}.err" || return 1
	done &&
	cat waited &&
	test ! -s waited &&
	for f in tables.*.out; do
		grep -qx "reads [1-9][0-9]* bad 0" "$f" &&
		test ! -s "${f%.out}.err" || return 1
	done
'

# An open that comes long after its lookup (an O_PATH descriptor opened
# again through /proc/self/fd, an open queued behind a busy daemon)
# meets an inode that other readers looked up meanwhile: it reads the
# content whole, never EIO (the kernel fails I/O on an inode whose
# generation a later reply changed). late.py PATH LINES FIELDS SPLICE:
# LINES below 0 is more than -LINES; SPLICE is splice.py, which reads
# the descriptor again through /proc/PID/fd.
test_expect_success 'a late open of a table and a value, after others read them: whole' '
	cat >"$TRASH/late.py" <<-\EOF &&
	import os, subprocess, sys, time
	path, lines, fields = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
	held = os.open(path, os.O_PATH)
	time.sleep(1.5)
	for i in range(3):
	    subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)
	fd = os.open("/proc/self/fd/%d" % held, os.O_RDONLY)
	by_read = os.read(fd, 1 << 24)
	os.close(fd)
	again = "/proc/%d/fd/%d" % (os.getpid(), held)
	by_splice = subprocess.run(["python3", sys.argv[4], again],
	                           stdout=subprocess.PIPE, check=True).stdout
	for got in (by_read, by_splice):
	    rows = got.decode().splitlines()
	    assert got.endswith(b"\n"), got[-40:]
	    assert len(rows) == lines or lines < 0 and len(rows) > -lines, rows[-3:]
	    assert all(len(r.split()) == fields for r in rows), rows[:3]
	print("whole", len(by_read), len(by_splice))
	EOF
	late() {
		python3 "$TRASH/late.py" "$@" "$TRASH/splice.py"
	} &&
	late "$MNT/proc/$MANY/threads.table" $((MANY_THREADS + 1)) 8 &&
	late "$MNT/proc/table" -$MANY_THREADS 8 &&
	late "$MNT/proc/$MANY/cycles" 1 1 &&
	late "$MNT/proc/$MANY/threads/$MANY/times" 5 2
'

test_expect_success !ASAN 'the daemon is small after them' '
	RSS=$(sed -n "s/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p" "/proc/$(server_of "$TFS_PID")/status") &&
	echo "daemon VmRSS $RSS KiB, at most $RSS_MAX_KIB" &&
	test "$RSS" -le $RSS_MAX_KIB
'
[ -z "${RSS:-}" ] || echo "# daemon VmRSS after the concurrent readers: $RSS KiB"

test_expect_success 'the daemon ends cleanly' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_done
