#!/bin/bash
# The user scripts, scripts/timingtop and scripts/timingfs-exporter: how
# they take options and refuse what is no timingfs mount, then on a real
# mount in each of the two units, with a process whose busy thread must
# come out on top, whose counters must lie between the mount's own read
# before and after, and whose file must be replaced whole. Then as a
# user who may not read every process, and on mounts pinned to a PID
# namespace.
test_description='The user scripts timingtop and timingfs-exporter: their
options, their refusal of what is no timingfs mount, then on a real mount
in each of the two units a busy helper on top, counters between the
mount'"'"'s own reads, a file replaced whole; as nobody under
hidepid=noaccess; on mounts pinned to a PID namespace.'
TEST_OTHER_USERS=1 # nobody runs the exporter: a trash it reaches
. "$(dirname "$0")/test-lib.sh"
require_fuse

TOP=$SCRIPTS/timingtop
EXPORTER=$SCRIPTS/timingfs-exporter
PIN=$TRASH/pin
PIN_PID=
RE=$TRASH/re
RE_PID=

# The pinned mount goes too, after the namespace it is pinned to
# (test-lib's cleanup kills that first), and the second mount a test
# makes of its own: a test unmounts them when it ends, but a timed-out
# one may not have. The trash directory goes only when neither is left.
cleanup_scripts() {
	kill_cleanup_pids
	unmount_timingfs_on PIN "$PIN" >/dev/null 2>&1
	unmount_timingfs_on RE "$RE" >/dev/null 2>&1
	is_mounted "$PIN" || is_mounted "$RE" || cleanup
}
trap cleanup_scripts EXIT

# stop PID: PID and what it started killed and reaped, for
# test_when_finished (so never a failure: it may have ended already).
stop() {
	kill_tree "$1" KILL
	wait "$1" 2>/dev/null
	return 0
}

# A timingfs already on the default mount point would answer for it.
test_lazy_prereq DEFAULT_FREE '! test -e /run/timingfs/info'
# nobody reaches the mount and the exporter through the trash directory
# (made 755 by the first setup test).
test_lazy_prereq NOBODY '
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		test -x "$MNT" -a -r "$EXPORTER"
'
# Pinning a mount to another PID namespace than the daemon's needs the
# kernel to translate numbers between them (Linux 6.10).
test_lazy_prereq PIN_OTHER '
	uname -r | awk -F. "{ exit !(\$1 > 6 || \$1 == 6 && \$2 >= 10) }"
'

test_expect_success 'setup: directories that are no mount' '
	mkdir "$TRASH/notfs" "$PIN" "$RE" &&
	chmod 755 "$TRASH"
'

# ---- both scripts, without a mount ---------------------------------------

test_expect_success DASH 'both scripts are POSIX sh: dash -n takes them' '
	dash -n "$TOP" && dash -n "$EXPORTER"
'

test_expect_success SHELLCHECK 'shellcheck -s sh finds nothing in them' '
	shellcheck -s sh "$TOP" "$EXPORTER"
'

test_expect_success 'both have a manual in the comment that heads them' '
	for script in "$TOP" "$EXPORTER"; do
		sed -n "/^[^#]/q; p" "$script" >header &&
		for section in NAME SYNOPSIS DESCRIPTION OPTIONS EXAMPLES; do
			grep -x "# $section" header ||
				{ echo "$script: no $section"; return 1; }
		done || return 1
	done
'

test_expect_success 'timingtop -h prints the usage and exits 0' '
	"$TOP" -h >out 2>err &&
	cat out &&
	grep "^usage: timingtop " out &&
	grep -- "-m MOUNTPOINT" out && grep -- "-d SECONDS" out &&
	test ! -s err
'

test_expect_success 'timingfs-exporter -h and --help print the usage, exit 0' '
	"$EXPORTER" -h >out 2>err &&
	cat out &&
	grep "^usage: timingfs-exporter " out && grep -- "-o FILE" out &&
	test ! -s err &&
	"$EXPORTER" --help >out2 && test_cmp out out2
'

# bad_usage SCRIPT ARGS...: SCRIPT ARGS exits 2, a message of its own
# on stderr, nothing on stdout.
bad_usage() {
	local script=$1 rc=0 name
	shift
	name=$(basename "$script")
	"$script" "$@" >out 2>err || rc=$?
	echo "$name $*: exit $rc: $(cat err)"
	test "$rc" = 2 && grep "^$name: " err && test ! -s out
}

test_expect_success 'timingtop: bad options exit 2 with a message' '
	bad_usage "$TOP" -m "$MNT" -x &&
	bad_usage "$TOP" -m "$MNT" -d 0 &&
	bad_usage "$TOP" -m "$MNT" -d abc &&
	bad_usage "$TOP" -m "$MNT" -d 1.2.3 &&
	bad_usage "$TOP" -m "$MNT" -n 0 &&
	bad_usage "$TOP" -m "$MNT" -n 1x &&
	bad_usage "$TOP" -m "$MNT" -p x &&
	bad_usage "$TOP" -m "$MNT" -i 0 &&
	bad_usage "$TOP" -m "$MNT" extra &&
	bad_usage "$TOP" -m "$MNT" -J -P &&
	bad_usage "$TOP" -m "$MNT" -J -p 1 &&
	bad_usage "$TOP" -m
'

test_expect_success 'timingfs-exporter: bad options exit 2 with a message' '
	bad_usage "$EXPORTER" -m "$MNT" -o x.prom --bogus &&
	bad_usage "$EXPORTER" -m "$MNT" &&
	bad_usage "$EXPORTER" -m "$MNT" -o x.prom -i 0 &&
	bad_usage "$EXPORTER" -m "$MNT" -o x.prom -i x &&
	bad_usage "$EXPORTER" -m "$MNT" -o x.prom --once -i 1 &&
	bad_usage "$EXPORTER" -m "$MNT" -o x.prom -p "(" &&
	bad_usage "$EXPORTER" -m "$MNT" -o x.prom extra &&
	bad_usage "$EXPORTER" -m "$MNT" -o x.prom -t 0 &&
	bad_usage "$EXPORTER" -m "$MNT" -o x.prom --threads x &&
	bad_usage "$EXPORTER" -m "$MNT" -o x.prom -j ../x &&
	bad_usage "$EXPORTER" -m "$MNT" -o x.prom --job a/./b &&
	bad_usage "$EXPORTER" -m "$MNT" -o x.prom -j "a/.." &&
	bad_usage "$EXPORTER" -m "$MNT" -o x.prom -j &&
	bad_usage "$EXPORTER" -o &&
	test ! -e x.prom
'

# not_timingfs SCRIPT ARGS... : exits 1, says the mount point is none.
not_timingfs() {
	local script=$1 dir=$2 rc=0
	shift 2
	"$script" -m "$dir" "$@" >out 2>err || rc=$?
	echo "exit $rc: $(cat err)"
	test "$rc" = 1 && grep -F "$dir is not a timingfs mount" err &&
	test ! -s out
}

test_expect_success 'timingtop: no timingfs mount, exit 1 and a message' '
	not_timingfs "$TOP" "$TRASH/notfs" -d 0.1 &&
	not_timingfs "$TOP" "$TRASH/nothing" -d 0.1 &&
	not_timingfs "$TOP" "$MNT" -d 0.1
'

test_expect_success 'timingfs-exporter: no timingfs mount, exit 1, no file' '
	not_timingfs "$EXPORTER" "$TRASH/notfs" -o x.prom &&
	not_timingfs "$EXPORTER" "$TRASH/nothing" -o - &&
	test ! -e x.prom && ! ls x.prom.tmp.* 2>/dev/null
'

test_expect_success DEFAULT_FREE 'the default mount point is /run/timingfs' '
	test_expect_code 1 "$TOP" -d 0.1 2>err &&
	grep -F "/run/timingfs is not a timingfs mount" err &&
	test_expect_code 1 "$EXPORTER" -o - 2>err &&
	grep -F "/run/timingfs is not a timingfs mount" err
'

# ---- timingtop on a tree of round six's format --------------------------

# A directory laid out as timingfs of round six lays out its mount (the
# scripts read files alone): tables with a name column, name files,
# jobs/. The tasks are this shell, whose comm is not the names below, so
# that where a name comes from shows. The values stay put: every CPU%
# is 0, and the rows come in PID, then TID order.
test_expect_success 'setup: a tree of round six'"'"'s format' '
	r6=$TRASH/r6 &&
	mkdir -p "$r6/proc/$$/threads/$$" "$r6/jobs/system.slice/a b.scope" &&
	printf "units windows\ntsc_hz 1000000000\npidns caller\n" >"$r6/info" &&
	{
		# the header with its name column, whether test-lib
		# spells it yet or not
		echo "${TABLE_HEADER% name} name" &&
		echo "$$ $$ 1 10 20 1 0 from\\040table" &&
		echo "$$ 99999991 1 30 40 1 0 t\\134two\\011x"
	} >"$r6/proc/table" &&
	echo "from files" >"$r6/proc/$$/name" &&
	echo "thread file" >"$r6/proc/$$/threads/$$/name" &&
	printf "%s\n" "cycles 1" "kernel_time 3" "user_time 1" \
		"active_processes 7" >"$r6/jobs/times" &&
	printf "%s\n" "cycles 1" "kernel_time 2" "user_time 1" \
		"active_processes 2" >"$r6/jobs/system.slice/times" &&
	printf "%s\n" "cycles 1" "kernel_time 2" "user_time 1" \
		"active_processes 0" >"$r6/jobs/system.slice/a b.scope/times"
'

test_expect_success 'timingtop: names from the table'"'"'s name column, unescaped' '
	"$TOP" -m "$r6" -d 0.1 >out 2>err &&
	cat out err && test ! -s err &&
	head -n 1 out | grep -E "^ +PID +TID +NAME +CPU% +KERN% +CYC/S$" &&
	sed -n 2p out | grep -E "^ +$$ +$$ from table +0\.0 +0\.0 +0$" &&
	sed -n 3p out | grep -E "^ +$$ +99999991 t\\\\two\?x +0\.0" &&
	test "$(wc -l <out)" = 3 &&
	"$TOP" -m "$r6" -P -d 0.1 >out &&
	cat out &&
	sed -n 2p out | grep -E "^ +$$ +- from table +0\.0"
'

test_expect_success 'timingtop: without the column, the mount'"'"'s name files' '
	sed -i "1s/ name\$//; 2,\$s/ [^ ]*\$//" "$r6/proc/table" &&
	cat "$r6/proc/table" &&
	"$TOP" -m "$r6" -d 0.1 >out &&
	cat out &&
	head -n 1 out | grep -E "^ +PID +TID +NAME " &&
	sed -n 2p out | grep -E "^ +$$ +$$ thread file +0\.0" &&
	sed -n 3p out | grep -E "^ +$$ +99999991 \? +0\.0" &&
	"$TOP" -m "$r6" -P -d 0.1 >out &&
	cat out &&
	sed -n 2p out | grep -E "^ +$$ +- from files +0\.0" &&
	rm "$r6/proc/$$/name" &&
	"$TOP" -m "$r6" -P -d 0.1 >out &&
	cat out &&
	sed -n 2p out | grep -E "^ +$$ +- $(cat /proc/$$/comm) +0\.0"
'

test_expect_success 'timingtop -J: every job, its processes, its path' '
	"$TOP" -m "$r6" -J -d 0.1 >out 2>err &&
	cat out err && test ! -s err &&
	head -n 1 out | grep -E "^ +CPU% +KERN% +CYC/S +PROCS JOB$" &&
	sed 1d out | sed "s/^ *//; s/  */ /g" >got &&
	cat >expect <<-\EOF &&
	0.0 0.0 0 7 /
	0.0 0.0 0 2 /system.slice
	0.0 0.0 0 0 /system.slice/a b.scope
	EOF
	test_cmp expect got &&
	"$TOP" -m "$r6" -J -n 1 -d 0.1 >out &&
	test "$(wc -l <out)" = 2
'

# first_read_done: timingtop's first read of the jobs lies whole in its
# temporary directory: the header and the three jobs.
first_read_done() {
	local file
	for file in "$TRASH"/toptmp/timingtop.*/a; do
		test "$(wc -l <"$file" 2>/dev/null)" = 4 || return 1
	done
}

# A job made once timingfs's first read is done counts from 0 (a job
# only the second read holds): it grew by its whole times, 2 s of CPU,
# a quarter of it kernel, and 2e9 cycles, over the 5 s between the
# reads (more under load), and comes first.
test_expect_success 'timingtop -J: the job that grew first, its CPU%, KERN%, CYC/S' '
	mkdir "$TRASH/toptmp" &&
	{ TMPDIR=$TRASH/toptmp "$TOP" -m "$r6" -J -d 5 >out 2>err & } &&
	top=$! &&
	test_when_finished "stop $top" &&
	wait_for 20 first_read_done &&
	mkdir "$r6/jobs/new" &&
	printf "%s\n" "cycles 2000000000" "kernel_time 5000000" \
		"user_time 15000000" "active_processes 1" >"$r6/jobs/new/times" &&
	wait "$top" &&
	cat out err &&
	set -- $(sed -n 2p out) &&
	test "$5" = /new && test "$4" = 1 &&
	awk -v cpu="$1" -v kern="$2" -v cyc="$3" "BEGIN {
		d = kern * 4 - cpu; if (d < 0) d = -d
		e = cyc - cpu * 1e7; if (e < 0) e = -e
		exit !(cpu > 4 && cpu <= 40 && d <= 0.5 && e <= 1e7) }" &&
	rm -r "$r6/jobs/new"
'

test_expect_success 'timingtop -J of a mount with no jobs/: exit 1, a message' '
	mv "$r6/jobs" "$r6/nojobs" &&
	test_expect_code 1 "$TOP" -m "$r6" -J -d 0.1 >out 2>err &&
	cat err &&
	grep -F "no jobs in $r6" err && test ! -s out &&
	mv "$r6/nojobs" "$r6/jobs"
'

# ---- on a real mount ----------------------------------------------------

# The busy thread's runtime in ns, from the kernel.
sched_ns() {
	local ns rest
	read -r ns rest <"/proc/$PID/task/$BUSY/schedstat" && echo "$ns"
}

# busy_since NS: the busy thread has run at least NS ns.
busy_since() {
	local ns
	ns=$(sched_ns) && test "$ns" -ge "$1"
}

# Half a second of CPU time first, so that its kernel share shows.
test_expect_success 'setup: a process with a busy and a sleeping thread' '
	{ "$BIN/helper-busy" -k >"$TRASH/pids" & } &&
	HELPER=$! &&
	kill_at_exit "$HELPER" &&
	wait_file "$TRASH/pids" &&
	read -r PID BUSY SLEEPER <"$TRASH/pids" &&
	test -n "$SLEEPER" &&
	wait_for 30 busy_since 500000000
'

# busy_enough CPU% KERN% CYC/S: a thread (or process) that used more
# than a tenth of a processor (it spins, and gets more than half of one
# on an idle machine, a third under make check-stress), its kernel part
# no more than its whole, and cycles per second that are its CPU% of
# tsc_hz, to 1%. The upper bound allows for how exactly a shell can time
# the reads: ±5%.
busy_enough() {
	awk -v cpu="$1" -v kern="$2" -v cyc="$3" -v hz="$HZ" 'BEGIN {
		d = cyc - hz * cpu / 100; if (d < 0) d = -d
		exit !(cpu > 10 && cpu <= 105 && kern >= 0 &&
		       kern <= cpu + 0.1 && d <= hz * 0.01)
	}'
}

# clears FILE: how many times FILE clears the screen (ESC [ H ESC [ 2 J).
clears() {
	grep -o "$(printf "\033\\[H\033\\[2J")" "$1" | wc -l
}

# at_least N COMMAND...: COMMAND prints a number >= N.
at_least() {
	local n
	n=$("${@:2}") && test "$n" -ge "$1"
}

# whole_prom FILE: FILE, read once (into copy, for a look), holds what
# the exporter writes whole: four families, the last sample a process's
# cycles, the helper among them. Read by the shell itself: a reader
# that runs a few programs for each read would take minutes under load.
whole_prom() {
	local lines line types=0 helper=
	mapfile -t lines <"$1" || return 1
	printf "%s\n" "${lines[@]}" >copy
	for line in "${lines[@]}"; do
		case $line in
		"# TYPE "*) types=$((types + 1)) ;;
		*"pid=\"$PID\""*) helper=1 ;;
		esac
	done
	test "$types" = 4 && test -n "$helper" &&
	case ${lines[-1]} in
	"timingfs_process_cycles_total{"*) ;;
	*) false ;;
	esac
}

# sample FILE NAME LABELS: the value of the sample NAME{LABELS} in FILE.
sample() {
	awk -v want="$2{$3}" '$1 == want { print $2; n++ } END { exit n != 1 }' "$1"
}

for UNITS in windows unix; do
	if [ "$UNITS" = windows ]; then
		# Exited tasks kept (60 s, the default) where the daemon may
		# listen: an exited process still in proc/.
		CONF="format.units=windows"
		PER_S=10000000 DIGITS=7
	else
		# Exited tasks gone at once: processes that vanish between
		# the exporter's listing and its reads.
		CONF="format.units=unix exited.keep=0"
		PER_S=1000000000 DIGITS=9
	fi

	test_expect_success "setup: $UNITS: mount" '
		write_config "$TRASH/$UNITS.conf" $CONF &&
		mount_timingfs "$TRASH/$UNITS.conf" &&
		HZ=$(sed -n "s/^tsc_hz //p" "$MNT/info") &&
		EXIT_SOURCE=$(sed -n "s/^exit_source //p" "$MNT/info") &&
		echo "tsc_hz $HZ, exit_source $EXIT_SOURCE" &&
		if [ "$EXIT_SOURCE" = taskstats ]; then
			test_set_prereq EXITS_KEPT
		fi
	'

	test_expect_success "$UNITS: the mount says units $UNITS" '
		grep -x "units $UNITS" "$MNT/info" && test "$HZ" -gt 1000000
	'

	# Other busy tasks of the machine (make check-stress) may come
	# first: the busy thread is looked for among the busiest, and the
	# rows must come busiest first.
	test_expect_success "$UNITS: timingtop -n 1: one row, the busiest" '
		"$TOP" -m "$MNT" -n 1 -d 0.5 >out 2>err &&
		cat out err &&
		test ! -s err &&
		test "$(wc -l <out)" = 2 &&
		head -n 1 out | grep -E "^ +PID +TID +NAME +CPU% +KERN% +CYC/S$" &&
		set -- $(sed -n 2p out) &&
		test "$#" = 6 &&
		busy_enough "$4" "$5" "$6"
	'

	test_expect_success "$UNITS: timingtop -n 50: the busy thread among the busiest" '
		"$TOP" -m "$MNT" -n 50 -d 0.5 >out 2>err &&
		cat out err &&
		test ! -s err &&
		test "$(wc -l <out)" -le 51 &&
		awk "NR > 2 && \$4 > last + 0.05 { exit 1 } { last = \$4 }" out &&
		set -- $(awk -v p="$PID" -v t="$BUSY" "\$1 == p && \$2 == t" out) &&
		test "$#" = 6 &&
		test "$3" = helper-busy &&
		busy_enough "$4" "$5" "$6"
	'

	test_expect_success "$UNITS: timingtop -P: the helper process among the busiest" '
		"$TOP" -m "$MNT" -P -n 50 -d 0.5 >out 2>err &&
		cat out err &&
		test ! -s err &&
		test "$(wc -l <out)" -le 51 &&
		awk "NR > 2 && \$4 > last + 0.05 { exit 1 } { last = \$4 }" out &&
		set -- $(awk -v p="$PID" "\$1 == p" out) &&
		test "$1" = "$PID" && test "$2" = - && test "$3" = helper-busy &&
		busy_enough "$4" "$5" "$6" &&
		test "$(sed 1d out | cut -c1-16 | sort | uniq -d)" = "" &&
		test "$(awk "NR > 1 { print \$2 }" out | sort -u)" = -
	'

	test_expect_success "$UNITS: timingtop -p PID: its threads alone" '
		"$TOP" -m "$MNT" -p "$PID" -d 0.5 >out 2>err &&
		cat out err &&
		test ! -s err &&
		test "$(awk "NR > 1 { print \$1 }" out | sort -u)" = "$PID" &&
		awk "NR > 1 { print \$2 }" out | sort -n >tids &&
		ls "/proc/$PID/task" | sort -n >expect &&
		test_cmp expect tids &&
		set -- $(sed -n 2p out) &&
		test "$2" = "$BUSY" && busy_enough "$4" "$5" "$6" &&
		set -- $(sed -n 3p out) &&
		awk -v cpu="$4" "BEGIN { exit !(cpu < 5) }"
	'

	test_expect_success "$UNITS: timingtop -P -p PID: one line, the process" '
		"$TOP" -m "$MNT" -P -p "$PID" -n 5 -d 0.3 >out &&
		cat out &&
		test "$(wc -l <out)" = 2 &&
		set -- $(sed -n 2p out) &&
		test "$1 $2 $3" = "$PID - helper-busy"
	'

	# jobs/ comes with timingfs of round six where a hierarchy
	# accounts the CPU: then the report lists its jobs, / among them
	# with the processes of the machine; else timingtop says there is
	# none.
	test_expect_success "$UNITS: timingtop -J: the mount's jobs, or that it has none" '
		if [ -d "$MNT/jobs" ]; then
			"$TOP" -m "$MNT" -J -n 1000 -d 0.3 >out 2>err &&
			cat out err && test ! -s err &&
			head -n 1 out | grep -E "^ +CPU% +KERN% +CYC/S +PROCS JOB$" &&
			set -- $(awk "\$5 == \"/\" && NF == 5" out) &&
			test "$#" = 5 && test "$4" -gt 1
		else
			test_expect_code 1 "$TOP" -m "$MNT" -J -d 0.1 >out 2>err &&
			cat err &&
			grep -F "no jobs in $MNT" err && test ! -s out
		fi
	'

	test_expect_success "$UNITS: timingtop -p of no process: exit 1, a message" '
		test_expect_code 1 "$TOP" -m "$MNT" -p 999999999 -d 0.1 >out 2>err &&
		grep -F "no process 999999999" err && test ! -s out
	'

	test_expect_success "$UNITS: timingtop -i 2 in batch: two reports" '
		"$TOP" -m "$MNT" -n 2 -d 0.2 -i 2 >out &&
		cat -A out &&
		test "$(wc -l <out)" = 7 &&
		test "$(grep -c "^ *PID " out)" = 2 &&
		test -z "$(sed -n 4p out)" &&
		! grep -q "$(printf "\033")" out
	'

	# script(1) gives it a terminal: the screen cleared before each
	# report, a title; -b or a pipe, neither.
	test_expect_success SCRIPT "$UNITS: timingtop on a terminal: cleared, titled" '
		script -q -e -c "\"$TOP\" -m \"$MNT\" -n 2 -d 0.2 -i 2" \
			/dev/null >tty </dev/null &&
		cat -A tty &&
		test "$(clears tty)" = 2 &&
		test "$(grep -c "timingtop  $MNT  [0-9:]*  every 0.2 s" tty)" = 2 &&
		script -q -e -c "\"$TOP\" -b -m \"$MNT\" -n 2 -d 0.2" \
			/dev/null >tty3 </dev/null &&
		cat -A tty3 &&
		test "$(clears tty3)" = 0 &&
		test "$(grep -c "PID" tty3)" = 1
	'

	# Without -i, reports follow each other until a signal: three are
	# awaited, however slow the machine, then it is stopped.
	test_expect_success SCRIPT "$UNITS: timingtop on a terminal goes on until stopped" '
		{ script -q -c "\"$TOP\" -m \"$MNT\" -n 1 -d 0.1" /dev/null \
			>tty2 </dev/null & } &&
		term=$! &&
		test_when_finished "stop $term" &&
		wait_for 25 at_least 3 clears tty2 &&
		is_running "$term" &&
		echo "$(clears tty2) reports"
	'

	test_expect_success "$UNITS: exporter --once -o FILE writes it, and only it" '
		"$EXPORTER" -m "$MNT" --once -o "$UNITS.prom" 2>err &&
		cat err && test ! -s err &&
		test -s "$UNITS.prom" &&
		! ls "$UNITS.prom".tmp.* 2>/dev/null &&
		head -n 20 "$UNITS.prom" &&
		for f in idle_seconds idle_cycles process_cpu_seconds process_cycles; do
			grep -x "# TYPE timingfs_${f}_total counter" "$UNITS.prom" &&
			grep "^# HELP timingfs_${f}_total [A-Z]" "$UNITS.prom" ||
				return 1
		done
	'

	test_expect_success PROMTOOL "$UNITS: promtool check metrics takes the file" '
		promtool check metrics <"$UNITS.prom"
	'

	# Each idle counter lies between the processor's file read before
	# and after, and its seconds are its cycles / tsc_hz.
	test_expect_success "$UNITS: exporter: an idle counter per online processor" '
		ls -d "$MNT"/groups/[0-9]*/cpu[0-9]* >cpus &&
		test "$(wc -l <cpus)" -ge "$(nproc)" &&
		while read -r dir; do
			cat "$dir/idle_cycles" || return 1
		done <cpus >before &&
		"$EXPORTER" -m "$MNT" -o - >m &&
		while read -r dir; do
			cat "$dir/idle_cycles" || return 1
		done <cpus >after &&
		test "$(grep -c "^timingfs_idle_seconds_total{" m)" = "$(wc -l <cpus)" &&
		test "$(grep -c "^timingfs_idle_cycles_total{" m)" = "$(wc -l <cpus)" &&
		paste cpus before after >bounds &&
		while read -r dir lo hi; do
			group=${dir%/cpu*} group=${group##*/} &&
			cpu=$(cat "$dir/cpu") &&
			labels="cpu=\"$cpu\",group=\"$group\"" &&
			c=$(sample m timingfs_idle_cycles_total "$labels") &&
			s=$(sample m timingfs_idle_seconds_total "$labels") &&
			echo "$labels: $lo <= $c <= $hi, $s s" &&
			test "$c" -ge "$lo" && test "$c" -le "$hi" &&
			awk -v c="$c" -v s="$s" -v hz="$HZ" "BEGIN {
				d = s - c / hz; exit !(d < 1e-6 && d > -1e-6) }" ||
				return 1
		done <bounds
	'

	# Its cycles lie between the process's own file read before and
	# after; user + kernel seconds are those cycles as time, to a unit
	# of each, and have the units' exact number of decimals.
	test_expect_success "$UNITS: exporter: the helper, its comm, its counters" '
		lo=$(cat "$MNT/proc/$PID/cycles") &&
		"$EXPORTER" -m "$MNT" -o - >m &&
		hi=$(cat "$MNT/proc/$PID/cycles") &&
		grep "pid=\"$PID\"" m &&
		labels="pid=\"$PID\",name=\"helper-busy\"" &&
		c=$(sample m timingfs_process_cycles_total "$labels") &&
		u=$(sample m timingfs_process_cpu_seconds_total "$labels,mode=\"user\"") &&
		k=$(sample m timingfs_process_cpu_seconds_total "$labels,mode=\"system\"") &&
		echo "$lo <= $c <= $hi; user $u kernel $k" &&
		test "$c" -ge "$lo" && test "$c" -le "$hi" &&
		echo "$u" | grep -E "^[0-9]+\.[0-9]{$DIGITS}$" &&
		echo "$k" | grep -E "^[0-9]+\.[0-9]{$DIGITS}$" &&
		awk -v c="$c" -v u="$u" -v k="$k" -v hz="$HZ" -v per_s="$PER_S" "
			BEGIN { d = (u + k) * hz - c; if (d < 0) d = -d
				exit !(u + k > 0.5 && d <= 3 * hz / per_s + 1) }"
	'

	test_expect_success "$UNITS: exporter -p helper-busy: those processes alone" '
		"$EXPORTER" -m "$MNT" -p helper-busy -o - >m &&
		grep "pid=\"$PID\",name=\"helper-busy\"" m &&
		grep -o "name=\"[^\"]*\"" m | sort -u >names &&
		echo "name=\"helper-busy\"" >expect &&
		test_cmp expect names &&
		test "$(grep -c "^timingfs_idle_cycles_total{" m)" -ge "$(nproc)" &&
		"$EXPORTER" -m "$MNT" -p "^no such name$" -o - >none &&
		! grep -q "^timingfs_process" none &&
		test "$(grep -c "^# TYPE timingfs_process" none)" = 2
	'

	test_expect_success PROMTOOL "$UNITS: promtool takes a file of no process" '
		promtool check metrics <none
	'

	# FILE is renamed over, never written in place: a new inode, none
	# of the old content, no temporary file left.
	test_expect_success "$UNITS: exporter replaces FILE whole, leaves no FILE.tmp.*" '
		echo "old_junk_total 1" >replaced.prom &&
		inode=$(stat -c %i replaced.prom) &&
		"$EXPORTER" -m "$MNT" --once -o replaced.prom &&
		! grep old_junk replaced.prom &&
		test "$(stat -c %i replaced.prom)" != "$inode" &&
		test "$(grep -c "^# TYPE " replaced.prom)" = 4 &&
		! ls replaced.prom.tmp.* 2>/dev/null
	'

	# A reader that reads FILE over and over while -i rewrites it every
	# 50 ms sees it whole each time: four families, the last sample last.
	# It reads 100 times at least, and on until a rewrite was seen, for
	# up to 30 s (a margin for a loaded machine, within the exporter's
	# timeout of 60). A rewrite is a new inode (first.prom keeps the
	# first one, and its number, from reuse). TERM goes to the exporter
	# alone (timeout --foreground), as kill(1) would send it, and it
	# leaves no temporary file.
	test_expect_success "$UNITS: exporter -i: a reader never sees a partial file" '
		{ timeout --foreground 60 "$EXPORTER" -m "$MNT" -i 0.05 \
			-o loop.prom 2>loop.err & } &&
		loop=$! &&
		test_when_finished "stop $loop" &&
		wait_for 10 test -s loop.prom &&
		ln -f loop.prom first.prom &&
		rewrites=0 i=0 &&
		end=$((${EPOCHREALTIME/./} + 30000000)) &&
		while [ "$i" -lt 100 ] || [ "$rewrites" = 0 ]; do
			[ "${EPOCHREALTIME/./}" -lt "$end" ] || {
				echo "waited 30 s for the exporter to rewrite loop.prom: $i reads, none after a rewrite"
				break
			}
			i=$((i + 1)) &&
			whole_prom loop.prom ||
				{ echo "read $i:"; cat copy; return 1; }
			[ loop.prom -ef first.prom ] ||
				rewrites=$((rewrites + 1))
			sleep 0.01
		done &&
		kill -TERM $loop && test_expect_code 143 wait $loop &&
		echo "$rewrites of $i reads came after a rewrite" &&
		test "$rewrites" -gt 0 &&
		cat loop.err && test ! -s loop.err &&
		! ls loop.prom.tmp.* 2>/dev/null
	'

	if [ "$UNITS" = windows ]; then
		# Names the exposition format must escape, and one the kernel
		# cut inside a UTF-8 character (14 bytes and a 2-byte é).
		test_expect_success "$UNITS: exporter escapes label values, keeps them UTF-8" '
			{ sh -c "printf \"q\\\"b\\\\\\\\c\\nd\" >/proc/self/comm
				sleep 30; :" & } &&
			odd=$! &&
			test_when_finished "stop $odd" &&
			{ sh -c "printf \"abcdefghijklmn\\303\\251\" >/proc/self/comm
				sleep 30; :" & } &&
			cut=$! &&
			test_when_finished "stop $cut" &&
			wait_for 10 grep -q "^q" /proc/$odd/comm &&
			wait_for 10 grep -q "^abc" /proc/$cut/comm &&
			od -c /proc/$odd/comm && od -c /proc/$cut/comm &&
			"$EXPORTER" -m "$MNT" -p "^(q|abcdefghijklmn)" -o odd.prom &&
			cat odd.prom &&
			grep -F "timingfs_process_cycles_total{pid=\"$odd\",name=\"q\\\"b\\\\c\\nd\"} " odd.prom &&
			grep -F "timingfs_process_cycles_total{pid=\"$cut\",name=\"abcdefghijklmn?\"} " odd.prom
		'

		test_expect_success PROMTOOL "$UNITS: promtool takes the escaped labels" '
			promtool check metrics <odd.prom
		'

		# A process that exits is kept in the mount's proc/ with its
		# exit_time, no longer in /proc. The exporter lists /proc, but
		# a process that exits between that listing and the read of
		# its times is read as kept: no series for it either. Short
		# processes without end make that happen in every round,
		# where they come last and their names are gone: such a series
		# would name a comm of "?".
		test_expect_success EXITS_KEPT "$UNITS: exporter: an exited process kept in proc/ has no series" '
			{ sleep 30 & } &&
			p=$! &&
			test_when_finished "stop $p" &&
			"$EXPORTER" -m "$MNT" -o - >alive &&
			grep "^timingfs_process_cycles_total{pid=\"$p\",name=\"sleep\"} " alive &&
			kill $p && test_expect_code 143 wait $p &&
			test -d "$MNT/proc/$p" &&
			test "$(sed -n "s/^exit_time //p" "$MNT/proc/$p/times")" != 0 &&
			"$EXPORTER" -m "$MNT" -o - >gone &&
			! grep "pid=\"$p\"" gone &&
			{ timeout 60 sh -c "while :; do /bin/true; done" & } &&
			spawner=$! &&
			test_when_finished "stop $spawner" &&
			for i in $(seq 1 10); do
				"$EXPORTER" -m "$MNT" -o - >m 2>err &&
				test ! -s err &&
				! grep "name=\"?\"" m ||
					{ cat err; return 1; }
			done
		'

		# -i reads info again each round: a mount that comes back with
		# other units has its seconds in those, without a restart, and
		# the rounds between, when there is no mount, say so.
		test_expect_success "$UNITS: exporter -i follows the units of a new mount" '
			helper="^timingfs_process_cpu_seconds_total{pid=\"$PID\",name=\"helper-busy\",mode=\"user\"}" &&
			write_config re-unix.conf format.units=unix &&
			start_timingfs_on RE "$RE" -c "$TRASH/$UNITS.conf" &&
			test_when_finished "unmount_timingfs_on RE \"\$RE\"" &&
			{ timeout --foreground 60 "$EXPORTER" -m "$RE" -i 0.1 \
				-o re.prom 2>re.err & } &&
			loop=$! &&
			test_when_finished "stop $loop" &&
			wait_for 10 grep -sqE "$helper [0-9]+\.[0-9]{7}$" re.prom &&
			unmount_timingfs_on RE "$RE" &&
			wait_for 10 grep -qF "$RE is not a timingfs mount" re.err &&
			start_timingfs_on RE "$RE" -c "$TRASH/re-unix.conf" &&
			wait_for 10 grep -qE "$helper [0-9]+\.[0-9]{9}$" re.prom &&
			cat re.err
		'
	else
		# keep = 0: a process that ends is ENOENT at once. Hundreds a
		# second end while the exporter lists and reads: skipped,
		# never an error.
		test_expect_success "$UNITS: exporter: processes that vanish are skipped silently" '
			{ timeout 60 sh -c "while :; do /bin/true; done" & } &&
			spawner=$! &&
			test_when_finished "stop $spawner" &&
			for i in $(seq 1 10); do
				"$EXPORTER" -m "$MNT" -o - >m 2>err &&
				test ! -s err ||
					{ cat err; return 1; }
			done &&
			grep "pid=\"$PID\"" m
		'

		# The mount goes in the middle of -i: rounds fail, said on
		# stderr, and FILE stays the last whole one. Once a round has
		# failed, every later one does: FILE is final then, and stays
		# so through another failed round. The unmount is tried until
		# no round holds a file of the mount open (EBUSY).
		test_expect_success "$UNITS: exporter -i: a failed round leaves FILE as it was" '
			{ timeout --foreground 60 "$EXPORTER" -m "$MNT" -i 0.1 \
				-o kept.prom 2>kept.err & } &&
			loop=$! &&
			test_when_finished "stop $loop" &&
			wait_for 10 test -s kept.prom &&
			wait_for 10 fusermount3 -u "$MNT" &&
			wait_for 10 grep -qF "kept.prom not written" kept.err &&
			cp kept.prom last &&
			wait_for 10 at_least 2 grep -cF "kept.prom not written" kept.err &&
			kill -TERM $loop && test_expect_code 143 wait $loop &&
			cat kept.err &&
			grep -F "$MNT is not a timingfs mount" kept.err &&
			test_cmp last kept.prom &&
			test "$(grep -c "^# TYPE " kept.prom)" = 4 &&
			! ls kept.prom.tmp.* 2>/dev/null
		'
	fi

	test_expect_success "$UNITS: unmounted, the daemon exits 0" '
		unmount_timingfs &&
		test "$TFS_STATUS" = 0
	'
done

# ---- hidepid=noaccess: what the reader may not read is left out -----------

test_expect_success ROOT,SETPRIV,NOBODY 'setup: noaccess: a mount others may read' '
	write_config "$TRASH/noaccess.conf" access.hidepid=noaccess \
		exited.keep=0 &&
	mount_timingfs "$TRASH/noaccess.conf" -o allow_other
'

# is_nobodys_sleep PID: PID runs sleep as nobody (setpriv has changed
# its user and executed it).
is_nobodys_sleep() {
	test "$(cat "/proc/$1/comm")" = sleep &&
	test "$(stat -c %u "/proc/$1")" = 65534
}

# Every process is listed, but nobody may read root's: EACCES, left out
# like a process that is gone.
test_expect_success ROOT,SETPRIV,NOBODY 'noaccess: exporter as nobody: its own processes, no error' '
	{ setpriv --reuid=65534 --regid=65534 --clear-groups sleep 30 & } &&
	mine=$! &&
	test_when_finished "stop $mine" &&
	wait_for 10 is_nobodys_sleep $mine &&
	grep -x "hidepid noaccess" "$MNT/info" &&
	test -d "$MNT/proc/$PID" &&
	{
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$EXPORTER" -m "$MNT" -o - >m 2>err ||
			{ cat err; return 1; }
	} &&
	cat err &&
	test ! -s err &&
	grep "^timingfs_process_cycles_total{pid=\"$mine\",name=\"sleep\"} " m &&
	! grep "pid=\"$PID\"" m && ! grep "pid=\"1\"" m &&
	test "$(grep -c "^timingfs_idle_cycles_total{" m)" -ge "$(nproc)"
'

test_expect_success ROOT,SETPRIV,NOBODY 'noaccess: unmounted, the daemon exits 0' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

# ---- a mount pinned to a PID namespace ------------------------------------

# The scripts name processes from /proc, so the mount must number them
# as /proc does: pinned to the reader's own namespace it does, pinned to
# another it does not (there, 1 is that namespace's init): the exporter
# refuses it, and timingtop names its tasks "?", or as the tables' name
# column does where the mount has one.
test_expect_success 'pinned: to our namespace, accepted; to another, no names (ours)' '
	start_timingfs_on PIN "$PIN" -o pidns=/proc/$$/ns/pid &&
	test_when_finished "unmount_timingfs_on PIN \"\$PIN\"" &&
	grep -x "pidns $(stat -L -c %i /proc/self/ns/pid)" "$PIN/info" &&
	"$EXPORTER" -m "$PIN" -o - >m &&
	grep "^timingfs_process_cycles_total{pid=\"1\",name=\"$(cat /proc/1/comm)\"} " m &&
	"$TOP" -m "$PIN" -P -p 1 -d 0.2 >out &&
	cat out &&
	test "$(awk "NR == 2 { print \$1, \$3 }" out)" = \
		"1 $(cat /proc/1/comm)"
'

# Its init: unshare forks it, and it says when it runs.
test_expect_success UNSHARE,PIN_OTHER 'setup: a PID namespace of its own' '
	{ unshare -p -f --mount-proc sh -c "echo ready >\"\$1\"; exec sleep 1000" \
		sh "$TRASH/ns.ready" & } &&
	NS=$! &&
	kill_at_exit "$NS" &&
	wait_file "$TRASH/ns.ready" &&
	NS_INIT=$(ps -o pid= --ppid "$NS" | tr -d " ") &&
	test -n "$NS_INIT"
'

test_expect_success UNSHARE,PIN_OTHER 'pinned: to our namespace, accepted; to another, no names (another)' '
	start_timingfs_on PIN "$PIN" -o pidns=/proc/$NS_INIT/ns/pid &&
	test_when_finished "unmount_timingfs_on PIN \"\$PIN\"" &&
	grep -x "pidns $(stat -L -c %i /proc/$NS_INIT/ns/pid)" "$PIN/info" &&
	test_expect_code 1 "$EXPORTER" -m "$PIN" -o x.prom 2>err &&
	cat err &&
	grep -F "$PIN numbers the processes of PID namespace" err &&
	test ! -e x.prom &&
	"$TOP" -m "$PIN" -n 1 -d 0.2 >out &&
	cat out &&
	if head -n 1 "$PIN/proc/table" | grep -q " name\$"; then
		expect="1 1 $(cat /proc/$NS_INIT/comm)"
	else
		expect="1 1 ?"
	fi &&
	test "$(awk "NR == 2 { print \$1, \$2, \$3 }" out)" = "$expect"
'

test_done
