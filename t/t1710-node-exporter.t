#!/bin/bash
# timingfs-exporter's file as Prometheus gets it: through Debian's
# prometheus-node-exporter, its textfile collector pointed at the
# directory the exporter writes to, as timingfs-exporter(1) tells users. Every
# timingfs_* series of the file must come out of node_exporter's
# /metrics with its labels and its value (node_exporter parses the file
# and writes the values anew, 1.506e+11 for 150600000000, so values are
# compared as numbers, labels as sets), its family's type and help, and
# no other timingfs_* series. The values are those the mount shows: on
# the m2 fixture exactly the idle cycles its files hold; on a live mount
# a sleeping process's counters, which stay put. A broken file beside
# it (a line the exporter never writes) makes node_textfile_scrape_error
# 1, so the collector does check what it reads.
test_description='timingfs-exporter through node_exporter'"'"'s textfile
collector: every timingfs_* series of the file on /metrics with its
labels and value, the values those the mount shows (the m2 fixture, a
sleeping process of a live mount), node_textfile_scrape_error 0, and 1
once a broken file lies beside it.'
. "$(dirname "$0")/test-lib.sh"
require_fuse
command -v prometheus-node-exporter >/dev/null 2>&1 ||
	skip_all "no prometheus-node-exporter (scripts/install-deps installs it)"
test_have_prereq PYTHON3 || skip_all "no python3"
# The interpreter python3 runs, named once: a shim in front of it (pyenv)
# that looks for it anew at each run takes seconds on a loaded machine.
PYTHON=$(python3 -c "import sys; print(sys.executable)") ||
	skip_all "python3 does not say where its interpreter is"

EXPORTER=$SCRIPTS/timingfs-exporter
DIR=$TRASH/textfile
PROM=$DIR/timingfs.prom
NE_PID=
NE_URL=

# free_port: a port of 127.0.0.1 that no one listened on a moment ago.
free_port() {
	"$PYTHON" -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# ne_settled ADDRESS: node_exporter says it listens on ADDRESS (it says
# so once it has bound it), or it has ended.
ne_settled() {
	grep -qF "msg=\"Listening on\" address=$1" "$TRASH/ne.log" ||
		! is_running "$NE_PID"
}

# start_node_exporter: node_exporter, its textfile collector alone, on
# $DIR, listening on 127.0.0.1 and a free port; its /metrics in $NE_URL.
# Another process may take the port between free_port and the bind:
# then it exits, and another port is tried, three in all.
start_node_exporter() {
	local try port
	for try in 1 2 3; do
		port=$(free_port) || return 1
		prometheus-node-exporter --collector.disable-defaults \
			--collector.textfile \
			--collector.textfile.directory="$DIR" \
			--web.disable-exporter-metrics \
			--web.listen-address="127.0.0.1:$port" \
			>"$TRASH/ne.log" 2>&1 </dev/null &
		NE_PID=$!
		kill_at_exit "$NE_PID"
		wait_for 20 ne_settled "127.0.0.1:$port" || return 1
		if is_running "$NE_PID"; then
			NE_URL=http://127.0.0.1:$port/metrics
			echo "node_exporter (pid $NE_PID) on $NE_URL"
			return 0
		fi
		wait "$NE_PID"
		echo "node_exporter on port $port exited $? (try $try):"
		cat "$TRASH/ne.log"
	done
	return 1
}

# scrape FILE: node_exporter's /metrics in FILE; 1 when it does not
# answer within 10 s (a margin for a loaded machine), which it says.
scrape() {
	"$PYTHON" - "$NE_URL" >"$1" <<-\EOF
	import sys, urllib.request
	try:
	    with urllib.request.urlopen(sys.argv[1], timeout=10) as r:
	        sys.stdout.write(r.read().decode())
	except Exception as e:
	    sys.exit("no answer from %s (within 10 s): %s" % (sys.argv[1], e))
	EOF
}

# same_series TEXTFILE METRICS: every sample of TEXTFILE is in METRICS
# (a /metrics) with the same labels, as a set, and the same value, as a
# number, and METRICS has no other timingfs_* sample; each family of
# TEXTFILE that has samples has its type and help in METRICS too. Says
# what it compared, and every difference.
same_series() {
	"$PYTHON" - "$1" "$2" <<-\EOF
	import re, sys

	SAMPLE = re.compile(
	    r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)$")
	LABEL = re.compile(
	    r'[ \t]*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"[ \t]*(,|$)')
	ESCAPE = {"\\\\": "\\", '\\"': '"', "\\n": "\n"}

	def labels(text, where):
	    found, at = {}, 0
	    while at < len(text):
	        m = LABEL.match(text, at)
	        if not m:
	            sys.exit("%s: cannot parse labels: {%s}" % (where, text))
	        found[m[1]] = re.sub(r"\\.", lambda e: ESCAPE[e[0]], m[2])
	        at = m.end()
	    return frozenset(found.items())

	def parse(path):
	    samples, meta = {}, {}
	    for n, line in enumerate(open(path, encoding="utf-8"), 1):
	        line = line.rstrip("\n")
	        where = "%s:%d" % (path, n)
	        if line.startswith("# HELP ") or line.startswith("# TYPE "):
	            name, text = (line[7:].split(" ", 1) + [""])[:2]
	            meta[(line[2:6], name)] = text
	        elif line and not line.startswith("#"):
	            m = SAMPLE.match(line)
	            if not m:
	                sys.exit("%s: cannot parse: %s" % (where, line))
	            samples[(m[1], labels(m[2] or "", where))] = m[3]
	    return samples, meta

	def show(key):
	    pairs = ('%s="%s"' % label for label in sorted(key[1]))
	    return "%s{%s}" % (key[0], ",".join(pairs))

	file, file_meta = parse(sys.argv[1])
	served, served_meta = parse(sys.argv[2])
	bad = 0
	for key, value in file.items():
	    got = served.get(key)
	    print("%s %s: served %s" % (show(key), value, got))
	    if got is None or float(got) != float(value):
	        bad += 1
	for key in served:
	    if key[0].startswith("timingfs_") and key not in file:
	        print("%s %s: served, not in the file" %
	              (show(key), served[key]))
	        bad += 1
	for name in sorted({key[0] for key in file}):
	    for kind in ("TYPE", "HELP"):
	        want = file_meta.get((kind, name))
	        got = served_meta.get((kind, name))
	        if got != want:
	            print("%s %s: %r in the file, %r served" %
	                  (kind, name, want, got))
	            bad += 1
	print("%d samples of the file, %d differences" % (len(file), bad))
	sys.exit(bad != 0 or not file)
	EOF
}

# sample FILE NAME LABELS: the value of the sample NAME{LABELS} in FILE.
sample() {
	awk -v want="$2{$3}" '$1 == want { print $2; n++ } END { exit n != 1 }' "$1"
}

# stop PID: PID and what it started killed and reaped, for
# test_when_finished (so never a failure: it may have ended already).
stop() {
	kill_tree "$1" KILL
	wait "$1" 2>/dev/null
	return 0
}

# seconds VALUE: VALUE, in 100-ns units, as seconds with 7 decimals.
seconds() {
	local v=$1
	while [ "${#v}" -le 7 ]; do
		v=0$v
	done
	echo "${v%???????}.${v: -7}"
}

# asleep PID: PID is a shell named t1710-sleeper waiting for its sleep,
# so that its counters stay put.
asleep() {
	local pid comm state rest child
	read -r pid comm state rest <"/proc/$1/stat" &&
	test "$comm $state" = "(t1710-sleeper) S" &&
	child=$(children_of "$1") &&
	test -n "$child" &&
	test "$(cat "/proc/${child%% *}/comm")" = sleep
}

test_expect_success 'setup: the m2 fixture mounted' '
	mkdir "$DIR" &&
	fixture_config "$TRASH/m2.conf" m2 &&
	mount_timingfs "$TRASH/m2.conf"
'

test_expect_success 'setup: node_exporter on 127.0.0.1, its textfile collector on the directory' '
	start_node_exporter &&
	scrape m &&
	grep -x "node_textfile_scrape_error 0" m &&
	grep -x "node_scrape_collector_success{collector=\"textfile\"} 1" m &&
	! grep "^timingfs_" m
'

# Process series would come from the fixture only for the numbers of
# this machine's processes: none are asked for.
test_expect_success 'exporter --once: the fixture'"'"'s idle counters, exactly' '
	"$EXPORTER" -m "$MNT" -p "^no such process\$" --once -o "$PROM" 2>err &&
	cat err && test ! -s err &&
	cat "$PROM" &&
	c0=$(cat "$MNT/groups/0/cpu0/idle_cycles") &&
	c1=$(cat "$MNT/groups/0/cpu1/idle_cycles") &&
	test "$c0 $c1" = "150600000000 150900000000" &&
	cat >expect <<-EOF &&
	timingfs_idle_seconds_total{cpu="0",group="0"} 50.200000000
	timingfs_idle_seconds_total{cpu="1",group="0"} 50.300000000
	timingfs_idle_cycles_total{cpu="0",group="0"} $c0
	timingfs_idle_cycles_total{cpu="1",group="0"} $c1
	EOF
	grep -v "^#" "$PROM" >actual &&
	test_cmp expect actual &&
	test "$(grep -c "^# TYPE timingfs_.* counter$" "$PROM")" = 4
'

test_expect_success '/metrics: every series of the file, its labels, its value' '
	scrape m &&
	grep "^timingfs_\|^# [A-Z]* timingfs_" m &&
	same_series "$PROM" m &&
	grep -x "node_textfile_scrape_error 0" m &&
	grep "^node_textfile_mtime_seconds{file=\"$PROM\"} " m
'

# The comparison can fail: a value one cycle off, a label more, a
# series less are each told apart.
test_expect_success 'same_series sees a value, a label, a series that differ' '
	sed "s/ 150600000000\$/ 150600000001/" "$PROM" >value.prom &&
	! cmp -s "$PROM" value.prom &&
	test_must_fail same_series value.prom m &&
	sed "s/group=\"0\"}/group=\"0\",x=\"\"}/" "$PROM" >label.prom &&
	! cmp -s "$PROM" label.prom &&
	test_must_fail same_series label.prom m &&
	grep -v "cpu=\"1\"" "$PROM" >fewer.prom &&
	test_must_fail same_series fewer.prom m
'

# A value that is no number: the whole file is refused, said in the
# log, and the good file is still served as it was.
test_expect_success 'a broken file beside it: node_textfile_scrape_error 1' '
	echo "timingfs_idle_cycles_total{cpu=\"9\",group=\"0\"} many" \
		>"$DIR/broken.prom" &&
	scrape m &&
	grep -x "node_textfile_scrape_error 1" m &&
	same_series "$PROM" m &&
	grep "level=error .*file=broken.prom" ne.log &&
	rm "$DIR/broken.prom" &&
	scrape m &&
	grep -x "node_textfile_scrape_error 0" m
'

# cpulist LIST: the numbers of a kernel cpulist (0-3,8), one a line.
cpulist() {
	echo "$1" | tr , '\n' |
		awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }'
}

# idle_labels FILE: "CPU GROUP CYCLES" of every timingfs_idle_cycles_total
# sample of FILE, sorted.
idle_labels() {
	sed -n 's/^timingfs_idle_cycles_total{cpu="\([0-9]*\)",group="\([0-9]*\)"} \([0-9]*\)$/\1 \2 \3/p' "$1" |
		sort -n
}

# mount_idle: "CPU GROUP CYCLES" of every processor of the mount, its
# Linux number from groups/N/cpuM/cpu, sorted.
mount_idle() {
	local dir group
	for dir in "$MNT"/groups/[0-9]*/cpu[0-9]*; do
		group=${dir%/cpu*} group=${group##*/}
		echo "$(cat "$dir/cpu") $group $(cat "$dir/idle_cycles")" ||
			return 1
	done | sort -n
}

# m96: two groups (the nodes 0-23,48-71 and 24-47,72-95) and CPU 30
# offline, so that M, the position in the group, is the Linux number
# nowhere but at 0-23, and the online CPUs of groups/1/cpus give it
# wrong past the hole: cpu7 of group 1 is CPU 31, not 32.
test_expect_success 'm96: the idle series labelled with the Linux CPU number, and the group' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0 &&
	fixture_config "$TRASH/m96.conf" m96 &&
	mount_timingfs "$TRASH/m96.conf" &&
	"$EXPORTER" -m "$MNT" -p "^no such process\$" -o "$PROM" 2>err &&
	cat err && test ! -s err &&
	idle_labels "$PROM" >labels &&
	mount_idle >expect &&
	test_cmp expect labels &&
	cpulist "$(cat "$FIXTURES/m96/sys/devices/system/cpu/online")" >online &&
	cut -d" " -f1 labels >cpus &&
	test_cmp online cpus &&
	test "$(cat "$MNT/groups/1/cpu7/cpu")" = 31 &&
	c=$(cat "$MNT/groups/1/cpu7/idle_cycles") &&
	grep -x "timingfs_idle_cycles_total{cpu=\"31\",group=\"1\"} $c" "$PROM" &&
	grep -x "timingfs_idle_cycles_total{cpu=\"48\",group=\"0\"} [0-9]*" "$PROM" &&
	! grep "cpu=\"30\"" "$PROM" &&
	scrape m &&
	same_series "$PROM" m &&
	grep -x "node_textfile_scrape_error 0" m
'

test_expect_success 'setup: a live mount, a process asleep under a name of its own' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0 &&
	write_config "$TRASH/live.conf" format.units=windows &&
	mount_timingfs "$TRASH/live.conf" &&
	{ sh -c "printf t1710-sleeper >/proc/self/comm; sleep 1000; :" & } &&
	SLEEPER=$! &&
	kill_at_exit "$SLEEPER" &&
	wait_for 10 asleep "$SLEEPER"
'

# Its counters, read before and after the exporter, stay put: the file
# holds them, and /metrics. The idle counters move: each lies between
# the processor's file read before and after.
test_expect_success 'live: /metrics serves the file; the sleeper'"'"'s series as the mount shows' '
	t=$MNT/proc/$SLEEPER &&
	before=$(cat "$t/cycles" "$t/user_time" "$t/kernel_time") &&
	ls -d "$MNT"/groups/[0-9]*/cpu[0-9]* >cpus &&
	while read -r dir; do
		cat "$dir/idle_cycles" || return 1
	done <cpus >lo &&
	"$EXPORTER" -m "$MNT" -p "^t1710-sleeper\$" --once -o "$PROM" 2>err &&
	while read -r dir; do
		cat "$dir/idle_cycles" || return 1
	done <cpus >hi &&
	cat err "$PROM" && test ! -s err &&
	after=$(cat "$t/cycles" "$t/user_time" "$t/kernel_time") &&
	test "$before" = "$after" &&
	set -- $after &&
	labels="pid=\"$SLEEPER\",name=\"t1710-sleeper\"" &&
	test "$(sample "$PROM" timingfs_process_cycles_total "$labels")" = "$1" &&
	test "$1" -gt 0 &&
	test "$(sample "$PROM" timingfs_process_cpu_seconds_total \
		"$labels,mode=\"user\"")" = "$(seconds "$2")" &&
	test "$(sample "$PROM" timingfs_process_cpu_seconds_total \
		"$labels,mode=\"system\"")" = "$(seconds "$3")" &&
	test "$(grep -c "^timingfs_process_cycles_total{" "$PROM")" = 1 &&
	paste cpus lo hi >bounds &&
	while read -r dir lo hi; do
		group=${dir%/cpu*} group=${group##*/} &&
		cpu=$(cat "$dir/cpu") &&
		c=$(sample "$PROM" timingfs_idle_cycles_total \
			"cpu=\"$cpu\",group=\"$group\"") &&
		echo "cpu $cpu of group $group: $lo <= $c <= $hi" &&
		test "$c" -ge "$lo" && test "$c" -le "$hi" ||
			return 1
	done <bounds &&
	test "$(grep -c "^timingfs_idle_cycles_total{" "$PROM")" = "$(wc -l <cpus)" &&
	scrape m &&
	same_series "$PROM" m &&
	grep -x "node_textfile_scrape_error 0" m
'

test_expect_success 'live: mode="system" and "user", never "kernel"' '
	"$EXPORTER" -m "$MNT" -o "$PROM" 2>err &&
	cat err && test ! -s err &&
	grep -q "^timingfs_process_cpu_seconds_total{.*,mode=\"system\"} " "$PROM" &&
	grep -q "^timingfs_process_cpu_seconds_total{.*,mode=\"user\"} " "$PROM" &&
	! grep "mode=\"kernel\"" "$PROM" &&
	sed -n "s/^timingfs_process_cpu_seconds_total{.*,mode=\"\([a-z]*\)\"} .*/\1/p" \
		"$PROM" | sort -u >modes &&
	printf "system\nuser\n" >expect &&
	test_cmp expect modes &&
	scrape m &&
	same_series "$PROM" m &&
	grep -q "^timingfs_process_cpu_seconds_total{.*mode=\"system\".*} " m &&
	! grep "mode=\"kernel\"" m
'

test_expect_success PROMTOOL 'live: promtool check metrics takes the file' '
	promtool check metrics <"$PROM"
'

# On the machine the labels join node_exporter's: the cpu label of each
# idle series is the Linux CPU number the mount gives its processor, and
# together they are the online CPUs.
test_expect_success 'live: the idle series cpu labels are the Linux CPU numbers' '
	"$EXPORTER" -m "$MNT" -p "^no such process\$" -o "$PROM" &&
	idle_labels "$PROM" >labels &&
	mount_idle >mount &&
	cut -d" " -f1,2 labels >got &&
	cut -d" " -f1,2 mount >expect &&
	test_cmp expect got &&
	cpulist "$(cat /sys/devices/system/cpu/online)" >online &&
	cut -d" " -f1 labels >cpus &&
	test_cmp online cpus &&
	scrape m &&
	grep "^timingfs_idle_seconds_total{" m &&
	same_series "$PROM" m
'

# thread_rows PID: the running threads of PID in proc/table, "PID TID
# KERNEL USER", the busiest first (kernel + user), ties in TID order.
thread_rows() {
	awk -v pid="$1" -v header="$TABLE_HEADER" '
		NR == 1 { if (index($0, header) != 1) exit 1; next }
		$1 == pid && $7 == 0 { print $4 + $5, $1, $2, $4, $5 }
	' "$MNT/proc/table" | sort -k1,1nr -k3,3n | cut -d" " -f2-
}

# thread_samples FILE: "PID TID NAME MODE VALUE" of each thread sample.
thread_samples() {
	sed -n 's/^timingfs_thread_cpu_seconds_total{pid="\([0-9]*\)",tid="\([0-9]*\)",name="\(.*\)",mode="\([a-z]*\)"} \([0-9.]*\)$/\1 \2 \3 \4 \5/p' "$1"
}

# A process of 50 threads asleep: its threads times stay put, so that
# which 10 are the busiest (kernel + user, then TID) is known from the
# table, read before and after the exporter.
test_expect_success 'setup: a process of 50 threads asleep' '
	{ "$BIN/helper-many" 50 >"$TRASH/many" & } &&
	MANY=$! &&
	kill_at_exit "$MANY" &&
	wait_file "$TRASH/many" &&
	grep -x "$MANY ready" "$TRASH/many" &&
	test "$(ls "/proc/$MANY/task" | wc -l)" = 50
'

test_expect_success 'live: -t 10: the 10 busiest threads, busiest first, the cut reported' '
	thread_rows "$MANY" >before &&
	"$EXPORTER" -m "$MNT" -p "^helper-many\$" -t 10 -o "$PROM" 2>err &&
	thread_rows "$MANY" >after &&
	cat err "$PROM" && test ! -s err &&
	test_cmp before after &&
	n=$(wc -l <after) &&
	test "$n" = 50 &&
	head -n 10 after | while read -r pid tid k u; do
		echo "$pid $tid helper-many user $(seconds "$u")" &&
		echo "$pid $tid helper-many system $(seconds "$k")" ||
			return 1
	done >expect &&
	thread_samples "$PROM" >got &&
	test_cmp expect got &&
	test "$(cut -d" " -f2 got | sort -u | wc -l)" = 10 &&
	grep -x "timingfs_threads_cut $((n - 10))" "$PROM" &&
	grep -x "# TYPE timingfs_threads_cut gauge" "$PROM" &&
	grep -x "# TYPE timingfs_thread_cpu_seconds_total counter" "$PROM" &&
	scrape m &&
	same_series "$PROM" m &&
	grep -x "timingfs_threads_cut $((n - 10))" m
'

# Over the whole machine: 10 series still, and at least the 40 other
# threads of the helper cut. Without -t, no thread families at all.
test_expect_success 'live: -t 10 of every process: 10 series, the rest cut; none without -t' '
	"$EXPORTER" -m "$MNT" -t 10 -o "$PROM" &&
	test "$(thread_samples "$PROM" | cut -d" " -f1,2 | sort -u | wc -l)" = 10 &&
	test "$(thread_samples "$PROM" | wc -l)" = 20 &&
	cut=$(sed -n "s/^timingfs_threads_cut //p" "$PROM") &&
	echo "cut $cut" &&
	test "$cut" -ge 40 &&
	"$EXPORTER" -m "$MNT" -o "$PROM" &&
	! grep "timingfs_thread" "$PROM"
'

test_expect_success PROMTOOL 'live: promtool takes the thread families' '
	"$EXPORTER" -m "$MNT" -t 10 -o "$PROM" &&
	promtool check metrics <"$PROM"
'

# named FILE PROCESS THREAD: a process named PROCESS with a second thread
# named THREAD, both asleep, that writes "PID TID" (TID the second
# thread's) to FILE once named. A task may name the threads of its own
# process alone (/proc/PID/task/TID/comm). Run in the background, it
# is that process: $! is its PID.
named() {
	exec "$PYTHON" - "$@" <<-\EOF
	import os, sys, threading
	def name(n):
	    tid = threading.get_native_id()
	    with open("/proc/self/task/%d/comm" % tid, "w") as f:
	        f.write(n)
	    return tid
	named = threading.Event()
	tids = []
	def worker():
	    tids.append(name(sys.argv[3]))
	    named.set()
	    threading.Event().wait()
	name(sys.argv[2])
	threading.Thread(target=worker, daemon=True).start()
	named.wait()
	with open(sys.argv[1] + ".tmp", "w") as f:
	    f.write("%d %d\n" % (os.getpid(), tids[0]))
	os.rename(sys.argv[1] + ".tmp", sys.argv[1])
	threading.Event().wait()
	EOF
}

# Names the format must escape, a space, a double quote and a backslash:
# a process named so, and a thread of it. Before timingfs has names they
# come from /proc/PID/comm (/proc/PID/task/TID/comm), after from its
# name files and the table's name column: the same.
test_expect_success 'live: names with a space, a quote, a backslash: escaped labels' '
	{ named "$TRASH/named" "t1710 \"q\\x" "w \"x\\y" & } &&
	odd=$! &&
	test_when_finished "stop $odd" &&
	wait_file "$TRASH/named" &&
	read -r pid tid <"$TRASH/named" &&
	test "$pid" = "$odd" &&
	od -c "/proc/$odd/comm" &&
	test "$(cat "/proc/$odd/comm")" = "t1710 \"q\\x" &&
	test "$(cat "/proc/$odd/task/$tid/comm")" = "w \"x\\y" &&
	"$EXPORTER" -m "$MNT" -p "^t1710 " -t 100 -o "$PROM" 2>err &&
	cat err "$PROM" && test ! -s err &&
	grep -F "timingfs_process_cycles_total{pid=\"$odd\",name=\"t1710 \\\"q\\\\x\"} " "$PROM" &&
	grep -F "timingfs_thread_cpu_seconds_total{pid=\"$odd\",tid=\"$odd\",name=\"t1710 \\\"q\\\\x\",mode=\"user\"} " "$PROM" &&
	grep -F "timingfs_thread_cpu_seconds_total{pid=\"$odd\",tid=\"$tid\",name=\"w \\\"x\\\\y\",mode=\"system\"} " "$PROM" &&
	grep -x "timingfs_threads_cut 0" "$PROM" &&
	test "$(thread_samples "$PROM" | wc -l)" = 4 &&
	scrape m &&
	same_series "$PROM" m &&
	grep -F "name=\"t1710 \\\"q\\\\x\"" m &&
	grep -F "name=\"w \\\"x\\\\y\"" m
'

# What timingfs of round six adds, names and jobs/, in a tree of its
# format (a directory, not a mount: the exporter reads files alone):
# proc/self/name says the mount has names, so a process's name is its
# proc/PID/name ("from mount" for the sleeper, whose comm is
# t1710-sleeper) and -p matches it; a thread's is the table's name
# column, unescaped (\040 \134 \012 \011) and escaped as labels are; a
# thread that has exited is no series; jobs are read from jobs/PATH/times,
# labelled with their path (/ for jobs/ itself), and one that is not
# there is said and left out.
test_expect_success 'round six: names from the mount, the table'"'"'s name column, jobs' '
	r6=$TRASH/r6 &&
	mkdir -p "$r6/groups/0/cpu0" "$r6/proc/self" "$r6/proc/$SLEEPER" \
		"$r6/jobs/system.slice/a b.scope" "$r6/jobs/x\"y" &&
	printf "units windows\ntsc_hz 1000000000\npidns caller\n" >"$r6/info" &&
	echo 0 >"$r6/groups/0/cpu0/cpu" &&
	echo "cpu0 2000000000" >"$r6/groups/0/idle_cycles" &&
	echo me >"$r6/proc/self/name" &&
	echo "from mount" >"$r6/proc/$SLEEPER/name" &&
	printf "%s\n" "cycles 3000" "kernel_time 20000000" "user_time 5" \
		"creation_time 1" "exit_time 0" >"$r6/proc/$SLEEPER/times" &&
	{
		# the header with its name column, whether test-lib
		# spells it yet or not
		echo "${TABLE_HEADER% name} name" &&
		echo "$SLEEPER $SLEEPER 1 10 20 1 0 a\\040b\\134c\\012d" &&
		echo "$SLEEPER 99999991 1 30 40 1 0 t\\011two\\042" &&
		echo "$SLEEPER 99999992 1 90 90 1 5 gone" &&
		echo "1 1 1 900 900 1 0 init"
	} >"$r6/proc/table" &&
	printf "%s\n" "cycles 1" "kernel_time 30000000" "user_time 10000000" \
		"active_processes 7" >"$r6/jobs/times" &&
	printf "%s\n" "cycles 1" "kernel_time 2" "user_time 1" \
		"active_processes 0" >"$r6/jobs/system.slice/a b.scope/times" &&
	printf "%s\n" "cycles 1" "kernel_time 0" "user_time 123456789" \
		"active_processes 2" >"$r6/jobs/x\"y/times" &&
	"$EXPORTER" -m "$r6" -p "^from mount\$" -t 5 -j / \
		-j "/system.slice/a b.scope/" -j "x\"y" -j no/such \
		-o "$PROM" 2>err &&
	cat err "$PROM" &&
	test "$(cat err)" = "timingfs-exporter: no job /no/such in $r6/jobs, left out" &&
	grep -v "^#" "$PROM" >actual &&
	tab=$(printf "\t") &&
	cat >expect <<-EOF &&
	timingfs_idle_seconds_total{cpu="0",group="0"} 2.000000000
	timingfs_idle_cycles_total{cpu="0",group="0"} 2000000000
	timingfs_process_cpu_seconds_total{pid="$SLEEPER",name="from mount",mode="user"} 0.0000005
	timingfs_process_cpu_seconds_total{pid="$SLEEPER",name="from mount",mode="system"} 2.0000000
	timingfs_process_cycles_total{pid="$SLEEPER",name="from mount"} 3000
	timingfs_thread_cpu_seconds_total{pid="$SLEEPER",tid="99999991",name="t${tab}two\"",mode="user"} 0.0000040
	timingfs_thread_cpu_seconds_total{pid="$SLEEPER",tid="99999991",name="t${tab}two\"",mode="system"} 0.0000030
	timingfs_thread_cpu_seconds_total{pid="$SLEEPER",tid="$SLEEPER",name="a b\\\\c\\nd",mode="user"} 0.0000020
	timingfs_thread_cpu_seconds_total{pid="$SLEEPER",tid="$SLEEPER",name="a b\\\\c\\nd",mode="system"} 0.0000010
	timingfs_threads_cut 0
	timingfs_job_cpu_seconds_total{job="/",mode="user"} 1.0000000
	timingfs_job_cpu_seconds_total{job="/",mode="system"} 3.0000000
	timingfs_job_cpu_seconds_total{job="/system.slice/a b.scope",mode="user"} 0.0000001
	timingfs_job_cpu_seconds_total{job="/system.slice/a b.scope",mode="system"} 0.0000002
	timingfs_job_cpu_seconds_total{job="/x\"y",mode="user"} 12.3456789
	timingfs_job_cpu_seconds_total{job="/x\"y",mode="system"} 0.0000000
	timingfs_job_active_processes{job="/"} 7
	timingfs_job_active_processes{job="/system.slice/a b.scope"} 0
	timingfs_job_active_processes{job="/x\"y"} 2
	EOF
	test_cmp expect actual &&
	grep -x "# TYPE timingfs_job_active_processes gauge" "$PROM" &&
	grep -x "# TYPE timingfs_job_cpu_seconds_total counter" "$PROM" &&
	"$EXPORTER" -m "$r6" -p "^from mount\$" -t 1 -o - >one &&
	grep -x "timingfs_threads_cut 1" one &&
	test "$(grep -c "^timingfs_thread_cpu_seconds_total{.*tid=\"99999991\"" one)" = 2 &&
	test "$(grep -c "^timingfs_thread_cpu_seconds_total{" one)" = 2 &&
	scrape m &&
	same_series "$PROM" m &&
	grep -x "node_textfile_scrape_error 0" m
'

test_expect_success PROMTOOL 'round six: promtool takes the job and thread families' '
	promtool check metrics <"$PROM"
'

test_expect_success 'node_exporter ends on TERM, its port closed; the mount goes' '
	kill -TERM "$NE_PID" &&
	test_expect_code 143 wait "$NE_PID" &&
	test_must_fail scrape m &&
	kill_tree "$SLEEPER" TERM &&
	test_expect_code 143 wait "$SLEEPER" &&
	kill_tree "$MANY" TERM &&
	test_expect_code 143 wait "$MANY" &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_done
