#!/bin/bash
# Restarts that nobody sees, for the tables (docs/design.md,
# "Restarts"; timingfs(8), ERRORS): four readers of
# proc/table, each in a loop without a pause, one by read(2), two by
# sendfile(2) and one by splice(2), and two readers of value files
# (proc/self/cycles, groups/0/cpu0/idle_cycles) by read(2), all in a
# PID namespace of their own (its table is some 50 lines, read
# thousands of times whatever else runs on the machine), while the
# server is killed (SIGKILL) 30 times, each time once its successor
# serves, then upgraded 10 times (timingfsctl upgrade, to a binary
# built anew and back, as t2201 does). No open, read, sendfile, splice
# or close fails, and every copy is whole: a table is its header once,
# then lines of 7 integers and a name, no thread twice, the last line ending in a
# newline; a value is a number and a newline. Each reader's reads are
# counted and said, with each failure and how long after which restart
# it came (it was written for 2 failed opens, ENOENT or EIO, seen once in
# about 5,600 reads through 30 kills).
#
# No bound of time is asserted (t2200 and t2201 have those): this test
# holds under the sanitizers too.
test_description='The server killed 30 times and upgraded 10 times under
four readers of proc/table (read, sendfile twice, splice) and readers of
value files: no failed open or read, no torn table.'
# 40 restarts on a loaded machine, with six readers in tight loops.
TEST_TIMEOUT=${TEST_TIMEOUT:-180}
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: the daemon mounts itself here"
command -v python3 >/dev/null || skip_all "no python3 (scripts/install-deps installs it)"

. "$TEST_DIRECTORY/lib-restart.sh"

KILLS=30
UPGRADES=10
DIR=$TRASH/readers
READER_PIDS=

trap 'cleanup_restart' EXIT

# The reader: PATH read by WAY (read, sendfile, splice) again and again
# until DIR/stop is there, each time a new open; KIND (table, value)
# says how a copy is checked. Every failed call adds "TIME CALL: ERRNO"
# to DIR/NAME.err, every bad copy "TIME torn: WHY" (the first three are
# kept, DIR/NAME.bad.N); a good copy adds "T0 T1" to DIR/NAME.ok. At
# the end, DIR/NAME.count: "reads R failed F torn T".
cat >"$TRASH/reader.py" <<'PY'
import errno, os, re, sys, time

way, name, path, kind, d = sys.argv[1:6]
HEADER = os.environ["TABLE_HEADER"]
LINE = re.compile(os.environ["TABLE_LINE"].replace("[:space:]", r"\s"))
VALUE = re.compile(r"[0-9]+\n")
stop = d + "/stop"
err = open("%s/%s.err" % (d, name), "a", buffering=1)
ok = open("%s/%s.ok" % (d, name), "a", buffering=1)

def by_read(fd):
    out = []
    while True:
        b = os.read(fd, 1 << 17)
        if not b:
            return b"".join(out)
        out.append(b)

def by_sendfile(fd):
    mem = os.memfd_create("copy")
    try:
        while os.sendfile(mem, fd, None, 1 << 20) > 0:
            pass
        os.lseek(mem, 0, os.SEEK_SET)
        return by_read(mem)
    finally:
        os.close(mem)

def by_splice(fd):
    r, w = os.pipe()
    out = []
    try:
        while True:
            n = os.splice(fd, w, 1 << 16)
            if n == 0:
                return b"".join(out)
            while n > 0:
                b = os.read(r, n)
                out.append(b)
                n -= len(b)
    finally:
        os.close(r)
        os.close(w)

WAYS = {"read": by_read, "sendfile": by_sendfile, "splice": by_splice}

def fault(data):
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return "not text"
    if kind == "value":
        return None if VALUE.fullmatch(text) else "not a number and a newline: %r" % text
    if not text.endswith("\n"):
        return "%d bytes, the last line cut: %r" % (len(text), text[-80:])
    lines = text[:-1].split("\n")
    if lines[0] != HEADER:
        return "line 1 is no header: %r" % lines[0][:80]
    seen = set()
    for n, l in enumerate(lines[1:], 2):
        if not LINE.fullmatch(l):
            return "line %d is not 7 integers and a name: %r" % (n, l[:80])
        k = tuple(l.split(" ", 2)[:2])
        if k in seen:
            return "line %d: thread %s of %s twice" % (n, k[1], k[0])
        seen.add(k)
    return None

reads = failed = torn = 0

def failure(call, e):
    global failed
    failed += 1
    err.write("%.6f %s: %s\n" % (time.time(), call, errno.errorcode.get(e.errno, e.errno)))

while not os.path.exists(stop) and failed < 1000:
    t0 = time.time()
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        failure("open", e)
        continue
    try:
        data = WAYS[way](fd)
    except OSError as e:
        failure(way, e)
        data = None
    try:
        os.close(fd)
    except OSError as e:
        failure("close", e)
        data = None
    if data is None:
        continue
    reads += 1
    why = fault(data)
    if why:
        torn += 1
        err.write("%.6f torn: %s\n" % (time.time(), why))
        if torn <= 3:
            with open("%s/%s.bad.%d" % (d, name, torn), "wb") as f:
                f.write(data)
        continue
    ok.write("%.6f %.6f\n" % (t0, time.time()))
    if kind == "value":
        # A value reader pauses a moment: the tables' readers take the
        # server's time, not it.
        time.sleep(0.002)
with open("%s/%s.count" % (d, name), "w") as f:
    f.write("reads %d failed %d torn %d\n" % (reads, failed, torn))
PY

# The readers' namespace: a process of POP_THREADS threads that wait, so
# that its table spans a few pages, and the six readers; its init ends
# when they have.
POP_THREADS=40
READERS_INIT='python3 -c "
import threading
e = threading.Event()
for _ in range($POP_THREADS - 1):
    threading.Thread(target=e.wait, daemon=True).start()
e.wait()" </dev/null &
pop=$!
set --
for r in table-read:read:table:table table-sendfile1:sendfile:table:table \
	table-sendfile2:sendfile:table:table table-splice:splice:table:table \
	cycles:read:self/cycles:value; do
	IFS=: read -r name way file kind <<<"$r"
	python3 "$TRASH/reader.py" "$way" "$name" "$MNT/proc/$file" "$kind" \
		"$DIR" &
	set -- "$@" $!
done
python3 "$TRASH/reader.py" read idle_cycles "$MNT/groups/0/cpu0/idle_cycles" \
	value "$DIR" &
set -- "$@" $!
wait "$@"
kill $pop'

# table_readers_start: the readers, in a PID namespace of their own, in
# the background, logging in DIR: there proc/table lists the tasks of
# that namespace alone, a table of about 50 lines that each read
# renders in a moment, whatever else runs on the machine (t2200 reads
# tables of 3,000 threads, a few times a second).
table_readers_start() {
	mkdir -p "$DIR" &&
	{ DIR=$DIR POP_THREADS=$POP_THREADS unshare -p -f --kill-child --mount-proc \
		bash -c "$READERS_INIT" & } &&
	kill_at_exit $! &&
	READER_PIDS=$! &&
	READER_NAMES="table-read table-sendfile1 table-sendfile2 table-splice cycles idle_cycles"
}

# when_of LOG TIME: which restart of the restarts LOG came last before
# TIME, and how long before it: "kill K (+MS ms)" or "upgrade K (+MS
# ms)" (an upgrade's new server takes over some 0.4 s after the
# command), or "before the first restart".
when_of() {
	awk -v t="$2" -v kills=$KILLS '$1 <= t { k = NR; at = $1 }
		END {
			if (!k) { print "before the first restart"; exit }
			up = k > kills
			printf("%s %d (+%.0f ms)", up ? "upgrade" : "kill",
				up ? k - kills : k, (t - at) * 1000)
		}' "$1"
}

test_expect_success 'setup: a daemon started from the installed binary' '
	upgrade_setup &&
	write_config "$TRASH/tables.conf" format.units=windows &&
	TIMINGFS=$DAEMON start_timingfs -c "$TRASH/tables.conf" &&
	server_started "$MNT" $TFS_PID 1 &&
	echo "supervisor $TFS_PID, server $spid" &&
	CONNS=$(conn_of /proc/self/mountinfo "$MNT") &&
	echo "FUSE connection $CONNS"
'

test_expect_success 'setup: four readers of proc/table, two of values, each with a good copy' '
	table_readers_start &&
	{ wait_for 30 has_read_since "$DIR" 0 || {
		echo "no good copy from $r:" && cat "$DIR/$r.err"
		false
	}; }
'

test_expect_success '30 kills of the server under the readers, each successor serving' '
	kill_servers "$MNT" $TFS_PID $KILLS "$DIR/restarts" &&
	echo "server_starts $starts, server_pid $spid"
'

test_expect_success '10 upgrades under the readers, each new server serving' '
	upgrade_servers "$MNT" $TFS_PID $UPGRADES "$DIR/restarts" \
		$((KILLS + 1)) &&
	echo "server_starts $starts, server_pid $spid" &&
	test "$starts" = $((KILLS + UPGRADES + 1))
'

test_expect_success 'the readers stopped, each with a good copy after the last restart' '
	test "$(wc -l <"$DIR/restarts")" = $((KILLS + UPGRADES)) &&
	last=$(tail -n 1 "$DIR/restarts") &&
	last=${last%% *} &&
	{ wait_for 30 has_read_since "$DIR" "$last" || {
		echo "no good copy from $r after the last restart"
		false
	}; } &&
	stop_readers "$DIR" "$TFS_PID" &&
	for r in $READER_NAMES; do
		test -s "$DIR/$r.count" || {
			echo "$r: no count: it did not end by itself"
			return 1
		}
	done
'

# The counts and every failure, for both tests after this one.
report() {
	local r total=0 n
	for r in $READER_NAMES; do
		read -r _ n _ <"$DIR/$r.count" &&
		total=$((total + n)) &&
		echo "$r: $(cat "$DIR/$r.count")" || return 1
	done &&
	echo "all readers: $total reads through $KILLS kills and $UPGRADES upgrades"
}

test_expect_success 'no open, read, sendfile, splice or close failed' '
	report &&
	fail=0 &&
	for r in $READER_NAMES; do
		{ grep -v " torn: " "$DIR/$r.err" >"$DIR/$r.failed" || :; } &&
		if [ -s "$DIR/$r.failed" ]; then
			fail=1 &&
			while read -r t what; do
				echo "$r: $what, after $(when_of "$DIR/restarts" "$t")"
			done <"$DIR/$r.failed"
		fi || return 1
	done &&
	test "$fail" = 0
'

test_expect_success 'no torn copy: each table its header once, lines of 7 integers and a name, a newline at the end' '
	fail=0 &&
	for r in $READER_NAMES; do
		{ grep " torn: " "$DIR/$r.err" >"$DIR/$r.torn" || :; } &&
		if [ -s "$DIR/$r.torn" ]; then
			fail=1 &&
			echo "$r: $(wc -l <"$DIR/$r.torn") torn copies; the first:" &&
			head -n 3 "$DIR/$r.torn"
		fi || return 1
	done &&
	test "$fail" = 0
'

test_expect_success 'the daemon: every server reaped; SIGTERM unmounts, leaves no process' '
	server_started "$MNT" $TFS_PID $((KILLS + UPGRADES + 1)) &&
	reaped_all $TFS_PID &&
	stop_daemon TFS "$MNT"
'

test_done
