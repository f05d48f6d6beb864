#!/bin/bash
# Restarts that nobody sees: the server killed (SIGKILL) again and again
# under readers, each time replaced by its supervisor, and no reader
# sees an error, a torn or truncated content, or a pause over 3 s.
#
# The readers, each a loop of its own until told to stop, each logging
# every good copy ("T0 T1": when its read began and ended) and every
# error or bad copy to files of its own:
#   - value files by cat (proc/self/cycles, a thread's kernel_time of
#     the big process, groups/0/cpu0/idle_cycles): one decimal number
#     and a newline;
#   - proc/table and the threads.table of a process of 3,000 sleeping
#     threads, each by cat (read(2), 128 KiB at a time), dd bs=4096
#     (a read(2) a page: a kill lands between two of them), sendfile
#     (busybox cat where there is one, and helper-readers) and splice
#     (helper-readers): the header, then lines of 7 integers, the last
#     one whole, no thread twice, exactly 3,000 lines of the big
#     process;
#   - inside a container (unshare -m -p -f) the mount is attached to by
#     timingfsctl attach: its proc/1/cycles by cat and its proc/table
#     by dd bs=4096.
# Meanwhile the server is killed 20 times, 0.05-0.5 s apart (random),
# each kill once the last one's successor serves (server_starts moved),
# so that each kill hits a live server. Then: no reader logged an
# error, every reader read a good copy after the last kill, each
# reader's next answer after each kill came within 3 s (from the kill,
# or from the start of its next read if it was pausing between two),
# some kills landed in the middle of a table's read, server_starts is
# 21, the supervisor reaped every server it lost; a SIGTERM to the
# supervisor unmounts both mounts and leaves no process of the daemon.
# All of it twice: with the kernel's FUSE_NOTIFY_RESEND (Linux 6.9),
# then, with a daemon started afresh, with TIMINGFS_TEST_NO_RESEND=1,
# which makes it answer what the dead server had read from its own copy,
# as on older kernels (it says so on stderr: at least once here).
#
# A daemon that stops answering would leave the readers in the kernel
# for good (a request the server had read waits for its answer through
# SIGKILL): each wait here is bounded, says what the supervisor, the
# server's threads and the readers wait in, and the test then aborts
# the mounts' FUSE connections (/sys/fs/fuse/connections), as the
# script's cleanup does, so that the script ends.
test_description='The server killed twenty times under readers of
values and big tables, on the host and in an attached container, with
the kernel resending what the dead server had read, then with the
daemon answering from its own copy: no reader sees an error or a torn
content or waits over 3 s; SIGTERM then unmounts everything.'
# Two rounds of 20 kills on a loaded machine.
TEST_TIMEOUT=${TEST_TIMEOUT:-120}
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot make a container"
test_have_prereq UNSHARE || skip_all "no PID namespaces (unshare)"

THREADS=3000
KILLS=20
KILLS_NO_RESEND=20
# The longest a reader may wait for its next answer after a kill.
MAX_PAUSE=3
PAUSE_VALUE=0.05
PAUSE_TABLE=2
TARGET=$TRASH/target
MNT2=$TRASH/mnt-no-resend
READERS=$BIN/helper-readers
HEADER='pid tid cycles kernel_time user_time creation_time exit_time'
# A container's init first lazily unmounts its copies of the timingfs
# mounts of other tests running meanwhile (as in t2000).
CONTAINER_INIT='umount -a -l -t fuse.timingfs 2>/dev/null; exec sleep 1000'
TFS2_PID=
# The FUSE connections of this script's mounts (their devices' minor
# numbers), to abort when something is stuck.
CONNS=
READER_PIDS=

cleanup_restart() {
	# Readers stuck in a mount that does not answer end only when its
	# connection is aborted; a script that passed has none left.
	abort_conns >/dev/null
	kill_cleanup_pids # readers, the container, the big process
	[ -z "$TFS2_PID" ] || unmount_timingfs_on TFS2 "$MNT2"
	cleanup
}
trap cleanup_restart EXIT

# conn_of MOUNTINFO DIR: the FUSE connection of the mount at DIR in
# MOUNTINFO (a /proc/PID/mountinfo): its device's minor number.
conn_of() {
	MOUNTS_OF_DIR=$2 awk '
		{
			m = $5
			gsub(/\\040/, " ", m); gsub(/\\011/, "\t", m)
			gsub(/\\012/, "\n", m); gsub(/\\134/, "\\", m)
			if (m == ENVIRON["MOUNTS_OF_DIR"]) { split($3, d, ":"); c = d[2] }
		}
		END { if (c == "") exit 1; print c }' "$1"
}

# abort_conns: abort this script's FUSE connections that are still
# there: every request waiting in them fails, and their daemons' threads
# and their readers can end.
abort_conns() {
	local c
	for c in $CONNS; do
		[ -e "/sys/fs/fuse/connections/$c/abort" ] || continue
		echo 1 >"/sys/fs/fuse/connections/$c/abort" &&
			echo "aborted the FUSE connection $c"
	done
	return 0
}

# check_value FILE: FILE is one decimal number and a newline; else says
# what it is.
check_value() {
	local content= re=$'^[0-9]+\n$'
	IFS= read -r -d '' content <"$1"
	[[ $content =~ $re ]] && return 0
	printf 'not a number and a newline: %q\n' "$content"
	return 1
}

# check_table PID COUNT MIN FILE: FILE is a whole table: the header,
# then lines of as many integers, the last one ending in a newline, no
# (pid, tid) twice, MIN lines at least, exactly COUNT of them of PID.
# Else says what is wrong.
check_table() {
	[ -s "$4" ] || { echo "empty" && return 1; }
	[ -z "$(tail -c 1 "$4")" ] || {
		echo "$(wc -c <"$4") bytes, the last line cut: $(tail -n 1 "$4")"
		return 1
	}
	awk -v header="$HEADER" -v pid="$1" -v count="$2" -v min="$3" '
		bad { exit 1 }
		NR == 1 {
			if ($0 != header) { print "line 1 is no header: " $0; bad = 1 }
			nf = NF
			next
		}
		NF != nf || $0 !~ /^[0-9]+( [0-9]+)*$/ {
			print "line " NR " is not " nf " integers: " $0
			bad = 1
			next
		}
		($1 " " $2) in seen { print "line " NR ": thread " $2 " twice"; bad = 1 }
		{ seen[$1 " " $2] = 1; mine += $1 == pid }
		END {
			if (bad) exit 1
			if (NR - 1 < min) { print NR - 1 " lines, not " min " at least"; exit 1 }
			if (mine != count) { print mine " lines of " pid ", not " count; exit 1 }
		}' "$4"
}

# reader DIR NAME WAY PAUSE FILE CHECK...: FILE read by WAY (cat, dd,
# busybox, sendfile, splice) again and again, PAUSE s apart, until
# DIR/stop is there, and each copy checked by CHECK... FILE-OF-THE-COPY. A good copy adds "T0 T1"
# (when the read began and ended, $EPOCHREALTIME) to DIR/NAME.ok; a
# failed read (an exit status, or a word on stderr) or a bad copy adds
# a line to DIR/NAME.err, and the first three bad copies are kept.
reader() {
	local dir=$1 name=$2 way=$3 pause=$4 file=$5 t0 t1 rc why n=0 bad=0
	local out=$1/$2.out
	shift 5
	while [ ! -e "$dir/stop" ]; do
		[ "$n" = 0 ] || sleep "$pause"
		n=$((n + 1))
		t0=$EPOCHREALTIME
		case $way in
		cat) cat "$file" ;;
		dd) dd if="$file" bs=4096 status=none ;;
		busybox) busybox cat "$file" ;;
		sendfile | splice) "$READERS" "$way" "$file" ;;
		esac >"$out" 2>"$out.stderr"
		rc=$?
		t1=$EPOCHREALTIME
		if [ "$rc" != 0 ] || [ -s "$out.stderr" ]; then
			echo "$t0 $t1 read $n: exit $rc: $(cat "$out.stderr")" \
				>>"$dir/$name.err"
		elif ! why=$("$@" "$out"); then
			echo "$t0 $t1 read $n: $why" >>"$dir/$name.err"
			bad=$((bad + 1))
			[ "$bad" -gt 3 ] || cp "$out" "$dir/$name.bad.$bad"
		else
			echo "$t0 $t1" >>"$dir/$name.ok"
		fi
	done
}

# in_container CMD...: CMD in the container's PID and mount namespaces.
in_container() {
	in_ns "$INIT" "$@"
}

# mounted_in_container DIR: DIR is a mount point in the container.
mounted_in_container() {
	in_container bash -c "$(declare -f mounts_of)
		test -n \"\$(mounts_of \"\$1\")\"" - "$1"
}

# start_readers DIR MNT: every reader of the host's mount MNT and of the
# container's at TARGET, in the background, logging in DIR; their pids
# in $READER_PIDS, their names in $READER_NAMES. Each pauses between two
# reads, so that the readers leave the 2 CPUs of a small machine time to
# serve them: a value reader PAUSE_VALUE s, a table reader PAUSE_TABLE
# s (each copy of a table of 3,000 threads costs the daemon 6,000 reads
# of /proc).
start_readers() {
	local dir=$1 mnt=$2 tid sendfile=sendfile
	local table="check_table $MANY $THREADS $THREADS"
	mkdir "$dir" &&
	READER_PIDS= &&
	READER_NAMES= &&
	tid=$(ls "/proc/$MANY/task" | sort -n | tail -n 1) &&
	{ ! test_have_prereq BUSYBOX || sendfile=busybox; } &&
	start_reader "$dir" cycles cat $PAUSE_VALUE \
		"$mnt/proc/self/cycles" check_value &&
	start_reader "$dir" kernel_time cat $PAUSE_VALUE \
		"$mnt/proc/$MANY/threads/$tid/kernel_time" check_value &&
	start_reader "$dir" idle_cycles cat $PAUSE_VALUE \
		"$mnt/groups/0/cpu0/idle_cycles" check_value &&
	for way in cat dd $sendfile splice; do
		start_reader "$dir" "table-$way" $way $PAUSE_TABLE \
			"$mnt/proc/table" $table || return 1
	done &&
	for way in cat dd sendfile splice; do
		start_reader "$dir" "threads-$way" $way $PAUSE_TABLE \
			"$mnt/proc/$MANY/threads.table" $table || return 1
	done &&
	start_reader_in_container "$dir" container-cycles cat $PAUSE_VALUE \
		"$TARGET/proc/1/cycles" check_value &&
	start_reader_in_container "$dir" container-table dd $PAUSE_VALUE \
		"$TARGET/proc/table" check_table 1 1 1
}

# start_reader DIR NAME WAY PAUSE FILE CHECK...: reader in the
# background.
start_reader() {
	{ reader "$@" & } &&
	kill_at_exit $! &&
	READER_PIDS="$READER_PIDS $!" &&
	READER_NAMES="$READER_NAMES $2"
}

# start_reader_in_container DIR NAME WAY PAUSE FILE CHECK...: the
# same, in the container.
start_reader_in_container() {
	{ in_container bash -c "$(declare -f reader check_value check_table)
		$(declare -p HEADER READERS)
		reader \"\$@\"" - "$@" & } &&
	kill_at_exit $! &&
	READER_PIDS="$READER_PIDS $!" &&
	READER_NAMES="$READER_NAMES $2"
}

# has_read_since DIR T: every reader has a good copy whose read began
# after T; the first that has not in $r.
has_read_since() {
	for r in $READER_NAMES; do
		awk -v t="$2" '$1 > t { f = 1 } END { exit !f }' \
			"$1/$r.ok" 2>/dev/null || return 1
	done
}

# descendants PID: PID's descendants, a line each.
descendants() {
	local c
	for c in $(children_of "$1"); do
		echo "$c"
		descendants "$c"
	done
}

# show_stuck SUP: how many requests wait in each FUSE connection, what
# the supervisor SUP, each thread of its children (the server,
# fusermount3) and each reader's processes are doing, with the kernel's
# stack of each that waits in it (D or zombie), and of each reader
# waiting for an answer.
show_stuck() {
	local sup=$1 c t st pid
	for c in $CONNS; do
		[ -e "/sys/fs/fuse/connections/$c/waiting" ] &&
			echo "FUSE connection $c: $(cat "/sys/fs/fuse/connections/$c/waiting") requests waiting"
	done
	echo "the supervisor: $(ps -o pid=,stat=,wchan:32= -p "$sup")"
	for c in $(children_of "$sup"); do
		echo "its child: $(ps -o pid=,stat=,args= -p "$c")"
		for t in /proc/"$c"/task/*; do
			read -r _ _ st _ <"$t/stat" 2>/dev/null || continue
			echo "  thread ${t##*/}: $st, in $(cat "$t/wchan" 2>/dev/null)"
			case $st in D | Z) sed "s/^/    /" "$t/stack" 2>/dev/null ;; esac
		done
	done
	for pid in $READER_PIDS; do
		for c in $(descendants "$pid"); do
			read -r _ _ st _ <"/proc/$c/stat" 2>/dev/null || continue
			case $st in
			D | Z) ;;
			*) grep -q request_wait_answer "/proc/$c/stack" \
				2>/dev/null || continue ;;
			esac
			echo "reader: $(ps -o pid=,stat=,wchan:32=,args= -p "$c")"
			sed "s/^/    /" "/proc/$c/stack" 2>/dev/null
		done
	done
	return 0
}

# stop_readers DIR SUP: the readers told to stop and reaped; up to 20 s
# (a margin for a loaded machine) for them to end by themselves, after
# which one still there is stuck in a mount: what they and the daemon
# of supervisor SUP wait in is said, the connections are aborted, and
# they are killed. 1 then.
stop_readers() {
	local pid rc=0
	[ -n "$READER_PIDS" ] || return 0
	touch "$1/stop"
	if ! test_poll_ 20 readers_ended; then
		echo "readers still there 20 s after they were told to stop:"
		show_stuck "$2"
		abort_conns
		rc=1
	fi
	for pid in $READER_PIDS; do
		kill_tree "$pid" KILL
		wait "$pid" 2>/dev/null
	done
	READER_PIDS=
	return "$rc"
}

readers_ended() {
	local pid
	for pid in $READER_PIDS; do
		! is_running "$pid" || return 1
	done
}

# live_server SUP: the supervisor SUP's server: its child that is a
# timingfs (fusermount3 is the other, for auto_unmount) and no zombie.
live_server() {
	local c comm st
	for c in $(children_of "$1"); do
		read -r comm <"/proc/$c/comm" 2>/dev/null &&
			test "$comm" = timingfs || continue
		read -r _ _ st _ <"/proc/$c/stat" 2>/dev/null &&
			test "$st" != Z && echo "$c"
	done
}

# try_cmd SECONDS OUT CMD...: CMD in the background, its output in OUT,
# waited for up to SECONDS s (a margin for a loaded machine); 0 if it
# ended then and succeeded. One that has not ended waits in a mount that
# does not answer: that is said, HUNG is set, and it is left to the
# cleanup.
try_cmd() {
	local secs=$1 out=$2 pid
	shift 2
	{ "$@" >"$out" 2>&1 & }
	pid=$!
	kill_at_exit "$pid"
	if ! test_poll_ "$secs" test_not_ is_running "$pid"; then
		echo "waited $secs s for $*; it has not ended"
		HUNG=1
		return 1
	fi
	wait "$pid"
}

# server_started MNT SUP N: the mount's info, read within 10 s, says
# server_starts N, and server_pid is SUP's live server; what it says
# in $starts and $spid.
server_started() {
	try_cmd 10 "$TRASH/info.out" cat "$1/info" || return 1
	starts=$(sed -n "s/^server_starts //p" "$TRASH/info.out")
	spid=$(sed -n "s/^server_pid //p" "$TRASH/info.out")
	test "$starts" = "$3" && test "$spid" = "$(live_server "$2")"
}

# wait_successor MNT SUP N: up to 10 s (a margin for a loaded machine:
# the supervisor starts a new server at once) for server_started MNT
# SUP N; says what it saw, and what the daemon waits in, if not.
wait_successor() {
	local end
	HUNG=
	test_now_us_
	end=$((test_now_us_ + 10000000))
	until server_started "$@"; do
		test_now_us_
		[ -z "$HUNG" ] && [ "$test_now_us_" -lt "$end" ] || {
			echo "waited 10 s for server $3: info says server_starts" \
				"$starts, server_pid $spid; the supervisor's live" \
				"server: $(live_server "$2")"
			show_stuck "$2"
			return 1
		}
		sleep 0.05
	done
}

# kill_servers MNT SUP N KILLS: N times, after a random 0.05-0.5 s,
# SIGKILL to SUP's server, each time waiting for its successor, so that
# every kill hits a live server; a line "TIME PID" for each kill in the
# file KILLS.
kill_servers() {
	local mnt=$1 sup=$2 n=$3 log=$4 k
	for k in $(seq 1 "$n"); do
		sleep "$(printf 0.%03d $((50 + RANDOM % 451)))" &&
		wait_successor "$mnt" "$sup" "$k" &&
		echo "$EPOCHREALTIME $spid" >>"$log" &&
		kill -KILL "$spid" || return 1
	done &&
	wait_successor "$mnt" "$sup" $((n + 1))
}

# pauses KILLS OK: for each kill in KILLS, how long the reader of OK
# waited for its next answer: from the kill, or from the start of its
# next read if it was not reading then, to the end of the first good
# read that ended after the kill. A line for each kill after which that
# was over MAX_PAUSE s, or no good read ended; then "worst wait W s
# (kill K), K kills inside a read, longest read L s with a kill in it,
# M s without" (the reads without a kill: what the machine's load makes
# of a read); 1 when a wait was over MAX_PAUSE s.
pauses() {
	awk -v max="$MAX_PAUSE" '
		NR == FNR { k[++nk] = $1; next }
		{ t0[++n] = $1; t1[n] = $2 }
		END {
			j = 1
			for (i = 1; i <= nk; i++) {
				while (j <= n && t1[j] <= k[i]) j++
				if (j > n) { print "kill " i ": no good read ended after it"; bad = 1; continue }
				from = t0[j] < k[i] ? k[i] : t0[j]
				d = t1[j] - from
				if (d > worst) { worst = d; wk = i }
				if (d > max) { printf "kill %d: waited %.3f s for the next answer\n", i, d; bad = 1 }
				if (t0[j] < k[i]) inside++
			}
			for (j = 1; j <= n; j++) {
				d = t1[j] - t0[j]
				hit = 0
				for (i = 1; i <= nk; i++) if (k[i] > t0[j] && k[i] < t1[j]) hit = 1
				if (hit && d > with) with = d
				if (!hit && d > without) without = d
			}
			printf "worst wait %.3f s (kill %d), %d kills inside a read, longest read %.3f s with a kill in it, %.3f s without\n", worst, wk, inside, with, without
			exit bad
		}' "$1" "$2"
}

# kill_under_readers NAME MNT DIR KILLS: the readers started on MNT and
# in the container, logging in DIR; KILLS kills of the server of NAME's
# daemon; the readers stopped once each has read after the last one.
# Then every bound is checked, and said, reader by reader.
kill_under_readers() {
	local name=$1 mnt=$2 dir=$3 n=$4 sup_var=${1}_PID
	local sup=${!sup_var} after r p fail=0 inside=0
	test_when_finished "stop_readers \"$dir\" $sup" &&
	start_readers "$dir" "$mnt" &&
	# Each reader has read a first good copy before the first kill.
	{ wait_for 30 has_read_since "$dir" 0 || {
		echo "no good copy from $r:" && cat "$dir/$r.err"
		show_stuck "$sup"
		false
	}; } &&
	kill_servers "$mnt" "$sup" "$n" "$dir/kills" &&
	after=$EPOCHREALTIME &&
	{ wait_for 20 has_read_since "$dir" "$after" || {
		echo "no good copy from $r after the last kill"
		show_stuck "$sup"
		false
	}; } &&
	stop_readers "$dir" "$sup" &&
	echo "$n kills; info: server_starts $starts, server_pid $spid" &&
	test "$starts" = $((n + 1)) &&
	for r in $READER_NAMES; do
		p=$(pauses "$dir/kills" "$dir/$r.ok") || fail=1
		echo "$r: $(wc -l <"$dir/$r.ok") good copies, $p"
		case $r in table-* | threads-* | container-table)
			p=${p##*), } &&
			inside=$((inside + ${p%% kills inside*})) ;;
		esac
		if [ -s "$dir/$r.err" ]; then
			echo "$r: $(wc -l <"$dir/$r.err") errors or bad copies:"
			head -n 20 "$dir/$r.err"
			fail=1
		fi
	done &&
	echo "kills that found a table's read under way: $inside" &&
	test "$fail" = 0 &&
	# Some kill landed in the middle of a table's read.
	test "$inside" -gt 0
}

# reaped_all SUP: SUP's children are its server and fusermount3 alone:
# no dead server left unreaped.
reaped_all() {
	local c comm st servers=0
	for c in $(children_of "$1"); do
		read -r _ comm st _ <"/proc/$c/stat" || return 1
		echo "child $c $comm $st"
		test "$st" != Z || return 1
		case $comm in
		"(timingfs)") servers=$((servers + 1)) ;;
		"(fusermount3)") ;;
		*) return 1 ;;
		esac
	done
	test "$servers" = 1
}

# served MNT: a value read from MNT and from TARGET in the container,
# each within 10 s.
served() {
	try_cmd 10 "$TRASH/served.out" cat "$1/proc/self/cycles" &&
	check_value "$TRASH/served.out" &&
	try_cmd 10 "$TRASH/served.out" nsenter -t "$INIT" -p -m \
		cat "$TARGET/proc/1/cycles" &&
	check_value "$TRASH/served.out"
}

# stop_daemon NAME MNT: SIGTERM to the supervisor of NAME: it exits 0
# (up to 20 s, a margin for a loaded machine), with its server and its
# other children, MNT is unmounted and so is TARGET in the container.
stop_daemon() {
	local name=$1 mnt=$2 sup_var=${1}_PID sup pids pid status
	sup=${!sup_var}
	pids="$sup $(children_of "$sup")" &&
	echo "the daemon: $pids" &&
	kill -TERM "$sup" &&
	{ wait_for 20 test_not_ is_running "$sup" ||
		{ show_stuck "$sup"; false; }; } &&
	{ wait "$sup"; status=$?; } &&
	printf -v "$sup_var" %s "" &&
	echo "the supervisor exited $status" &&
	test "$status" = 0 &&
	! is_mounted "$mnt" &&
	! mounted_in_container "$TARGET" &&
	for pid in $pids; do
		{ ! is_running "$pid" && test -z "$(pgrep -P "$pid")"; } || {
			echo "left behind: $(ps -o pid=,args= -p "$pid")" \
				"$(pgrep -a -P "$pid")"
			return 1
		}
	done
}

# attach_container CONTROL MNT: the daemon answering on CONTROL attaches
# its tree at TARGET in the container; the connections of MNT and of
# the attached mount are added to CONNS.
attach_container() {
	local c
	TIMINGFS_CONTROL=$1 "$TIMINGFSCTL" attach /proc/$INIT/ns/pid "$TARGET" &&
	mounted_in_container "$TARGET" &&
	c=$(conn_of /proc/self/mountinfo "$2") &&
	CONNS="$CONNS $c" &&
	c=$(conn_of "/proc/$INIT/mountinfo" "$TARGET") &&
	CONNS="$CONNS $c" &&
	served "$2"
}

# answered_from_copy NAME: how many times NAME's daemon said it answered
# requests from its own copy of what the dead server had read.
answered_from_copy() {
	grep -c "answered [0-9]* requests the last server had read" \
		"$TRASH/$1.err"
}

test_expect_success 'setup: a container, a process of 3,000 threads' '
	mkdir -p "$TARGET" &&
	{ unshare -m -p -f --mount-proc sh -c "$CONTAINER_INIT" & } &&
	kill_at_exit $! &&
	INIT=$(child_of $!) &&
	{ "$BIN/helper-many" $THREADS >many.out & } &&
	MANY=$! &&
	kill_at_exit $MANY &&
	wait_file many.out "" 30 &&
	test "$(cat many.out)" = "$MANY ready" &&
	test "$(ls /proc/$MANY/task | wc -l)" = $THREADS &&
	write_config "$TRASH/restart.conf" format.units=windows
'

test_expect_success 'resend: a daemon (allow_other), attached to the container' '
	start_timingfs -c "$TRASH/restart.conf" -o allow_other &&
	server_started "$MNT" $TFS_PID 1 &&
	echo "supervisor $TFS_PID, server $spid" &&
	attach_container "$TIMINGFS_CONTROL" "$MNT"
'

# Known breakage (issue 25, left open): on this 2-CPU machine, with a
# 3,000-thread table and eight readers, a read of a table takes seconds
# without any kill, so "no pause over 3 s" is not met; and with resend,
# one request in a run of twenty kills is now and then never answered
# (a LOOKUP; /sys/fs/fuse/connections says one waits). Both are
# test_expect_failure until fixed: what else these tests check (no
# error, no torn copy) is in the same run.
test_expect_failure 'resend: 20 kills under readers: no error, no torn table, no pause over 3 s' '
	kill_under_readers TFS "$MNT" "$TRASH/resend" $KILLS &&
	test "$(answered_from_copy TFS)" = 0
'

test_expect_success 'resend: after the kills, both mounts served, every server reaped' '
	served "$MNT" &&
	server_started "$MNT" $TFS_PID $((KILLS + 1)) &&
	reaped_all $TFS_PID
'

test_expect_success 'resend: SIGTERM unmounts everything, leaves no process' '
	stop_daemon TFS "$MNT"
'

test_expect_success 'no resend: a daemon afresh, attached to the container' '
	mkdir -p "$MNT2" &&
	TIMINGFS_TEST_NO_RESEND=1 start_timingfs_on TFS2 "$MNT2" \
		-c "$TRASH/restart.conf" -o allow_other &&
	server_started "$MNT2" $TFS2_PID 1 &&
	echo "supervisor $TFS2_PID, server $spid" &&
	tr "\0" "\n" </proc/$spid/environ | grep -x TIMINGFS_TEST_NO_RESEND=1 &&
	attach_container "${TIMINGFS_CONTROL%.sock}.TFS2.sock" "$MNT2"
'

test_expect_failure 'no resend: 20 kills under readers: no error, no torn table, no pause over 3 s' '
	kill_under_readers TFS2 "$MNT2" "$TRASH/no-resend" $KILLS_NO_RESEND &&
	echo "answered from its own copy after $(answered_from_copy TFS2) kills" &&
	test "$(answered_from_copy TFS2)" -gt 0
'

test_expect_success 'no resend: after the kills, both mounts served, every server reaped' '
	served "$MNT2" &&
	server_started "$MNT2" $TFS2_PID $((KILLS_NO_RESEND + 1)) &&
	reaped_all $TFS2_PID
'

test_expect_success 'no resend: SIGTERM unmounts everything, leaves no process' '
	stop_daemon TFS2 "$MNT2"
'

test_done
