#!/bin/bash
# Restarts that nobody sees: the server killed (SIGKILL) again and again
# under readers, each time replaced by its supervisor, and no reader
# sees an error, a torn or truncated content, or a pause over 3 s.
#
# The readers, each a loop of its own, until told to stop, each logging
# every good copy ("T0 T1": when its read began and ended) and every
# error or bad copy to files of its own:
#   - value files by cat (proc/self/cycles, a thread's kernel_time of
#     the big process, groups/0/cpu0/idle_cycles): one decimal number
#     and a newline;
#   - proc/table and the threads.table of a process of 3,000 sleeping
#     threads, each by cat (read(2), 128 KiB at a time), dd bs=4096
#     (a read(2) per page: a kill lands between two of them), sendfile
#     (busybox cat where there is one, and helper-readers) and splice
#     (helper-readers): the header, then lines of 7 integers, the last
#     whole, no thread twice, exactly 3,000 lines of the big process;
#   - inside a container (unshare -m -p -f) the mount is attached to by
#     timingfsctl attach: its proc/1/cycles by cat and its proc/table
#     by dd bs=4096.
# Meanwhile the server is killed 20 times, 0.05-0.5 s apart (random),
# each kill after the last one's successor has started (server_starts
# moved), so that each kill hits a live server. Then: no reader logged
# an error, every reader read a good copy after the last kill, each
# reader's next answer after each kill came within 3 s and no read took
# longer, server_starts is 21, the supervisor reaped every server it
# lost; a SIGTERM to the supervisor unmounts both mounts and leaves no
# process of the daemon. All of it twice: with the kernel's
# FUSE_NOTIFY_RESEND (Linux 6.9), then, with a daemon started afresh,
# with TIMINGFS_TEST_NO_RESEND=1, which makes it answer what the dead
# server had read from its own copy, as on older kernels.
test_description='The server killed twenty times under readers of
values and big tables, on the host and in an attached container, with
the kernel resending what the dead server had read, then with the
daemon answering from its own copy: no reader sees an error or a torn
content or waits over 3 s; SIGTERM then unmounts everything.'
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot make a container"
test_have_prereq UNSHARE || skip_all "no PID namespaces (unshare)"

THREADS=3000
KILLS=20
KILLS_NO_RESEND=20
# The longest a reader may wait for its answer, kill or none.
MAX_PAUSE=3
TARGET=$TRASH/target
MNT2=$TRASH/mnt-no-resend
READERS=$BIN/helper-readers
HEADER='pid tid cycles kernel_time user_time creation_time exit_time'
# A container's init first lazily unmounts its copies of the timingfs
# mounts of other tests running meanwhile (as in t2000).
CONTAINER_INIT='umount -a -l -t fuse.timingfs 2>/dev/null; exec sleep 1000'
TFS2_PID=

cleanup_restart() {
	kill_cleanup_pids # readers, the container, the big process
	[ -z "$TFS2_PID" ] || unmount_timingfs_on TFS2 "$MNT2"
	cleanup
}
trap cleanup_restart EXIT

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

# reader DIR NAME WAY FILE CHECK...: FILE read by WAY (cat, dd, busybox,
# sendfile, splice) again and again, until DIR/stop is there, and each
# copy checked by CHECK... FILE-OF-THE-COPY. A good copy adds "T0 T1"
# (when the read began and ended, $EPOCHREALTIME) to DIR/NAME.ok; a
# failed read (an exit status, or a word on stderr) or a bad copy adds
# a line to DIR/NAME.err, and the first three bad copies are kept.
reader() {
	local dir=$1 name=$2 way=$3 file=$4 t0 t1 rc why n=0 bad=0
	local out=$1/$2.out
	shift 4
	while [ ! -e "$dir/stop" ]; do
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
# in $READER_PIDS, their names in $READER_NAMES.
start_readers() {
	local dir=$1 mnt=$2 tid sendfile=sendfile
	local table="check_table $MANY $THREADS $THREADS"
	mkdir "$dir" &&
	READER_PIDS= &&
	READER_NAMES= &&
	tid=$(ls "/proc/$MANY/task" | sort -n | tail -n 1) &&
	{ ! test_have_prereq BUSYBOX || sendfile=busybox; } &&
	start_reader "$dir" cycles cat "$mnt/proc/self/cycles" check_value &&
	start_reader "$dir" kernel_time cat \
		"$mnt/proc/$MANY/threads/$tid/kernel_time" check_value &&
	start_reader "$dir" idle_cycles cat "$mnt/groups/0/cpu0/idle_cycles" \
		check_value &&
	for way in cat dd $sendfile splice; do
		start_reader "$dir" "table-$way" $way "$mnt/proc/table" $table ||
		return 1
	done &&
	for way in cat dd sendfile splice; do
		start_reader "$dir" "threads-$way" $way \
			"$mnt/proc/$MANY/threads.table" $table || return 1
	done &&
	start_reader_in_container "$dir" container-cycles cat \
		"$TARGET/proc/1/cycles" check_value &&
	start_reader_in_container "$dir" container-table dd \
		"$TARGET/proc/table" check_table 1 1 1
}

# start_reader DIR NAME WAY FILE CHECK...: reader in the background.
start_reader() {
	{ reader "$@" & } &&
	kill_at_exit $! &&
	READER_PIDS="$READER_PIDS $!" &&
	READER_NAMES="$READER_NAMES $2"
}

# start_reader_in_container DIR NAME WAY FILE CHECK...: the same, in
# the container.
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

# stop_readers DIR: the readers told to stop and reaped; up to 20 s (a
# margin for a loaded machine) for them to end by themselves, after
# which one still there is a reader stuck in the mount: what it waits
# in is said, and it is killed.
stop_readers() {
	local pid rc=0
	touch "$1/stop" &&
	test_poll_ 20 readers_ended
	for pid in $READER_PIDS; do
		is_running "$pid" || continue
		echo "a reader is still there 20 s after it was told to stop:"
		ps -o pid=,stat=,wchan:32=,args= --ppid "$pid" -p "$pid"
		cat "/proc/$(children_of "$pid" | cut -d" " -f1)/stack" 2>/dev/null
		kill_tree "$pid" KILL
		rc=1
	done
	for pid in $READER_PIDS; do
		wait "$pid" 2>/dev/null
	done
	return "$rc"
}

readers_ended() {
	local pid
	for pid in $READER_PIDS; do
		! is_running "$pid" || return 1
	done
}

# server_of SUP: the supervisor SUP's server: its child that is a
# timingfs (fusermount3 is the other, for auto_unmount) and no zombie.
server_of() {
	local c comm st
	for c in $(children_of "$1"); do
		read -r comm <"/proc/$c/comm" 2>/dev/null &&
			test "$comm" = timingfs || continue
		read -r _ _ st _ <"/proc/$c/stat" 2>/dev/null &&
			test "$st" != Z && echo "$c"
	done
}

# server_started MNT SUP N: the mount's info says server_starts N, and
# server_pid is SUP's server; what it says in $starts and $spid.
server_started() {
	starts=$(sed -n "s/^server_starts //p" "$1/info") &&
	spid=$(sed -n "s/^server_pid //p" "$1/info") &&
	test "$starts" = "$3" &&
	test "$spid" = "$(server_of "$2")"
}

# kill_servers MNT SUP N KILLS: N times, after a random 0.05-0.5 s,
# SIGKILL to SUP's server, each time waiting (up to 10 s, a margin for
# a loaded machine: the supervisor starts a new one at once) for its
# successor, so that every kill hits a live server; a line "TIME PID"
# for each kill in the file KILLS.
kill_servers() {
	local mnt=$1 sup=$2 n=$3 log=$4 k
	for k in $(seq 1 "$n"); do
		sleep "$(printf 0.%03d $((50 + RANDOM % 451)))" &&
		server_started "$mnt" "$sup" "$k" &&
		echo "$EPOCHREALTIME $spid" >>"$log" &&
		kill -KILL "$spid" &&
		{ wait_for 10 server_started "$mnt" "$sup" $((k + 1)) || {
			echo "kill $k: info says server_starts $starts," \
				"server_pid $spid; the supervisor's server:" \
				"$(server_of "$sup")"
			false
		}; } || return 1
	done
}

# pauses KILLS OK: for each kill in KILLS, how long the reader of OK
# waited for its next answer (the end of its first good read ending
# after the kill), and how long its longest read took; a line for each
# over MAX_PAUSE s, and a kill after which no good read ended. Prints
# "worst next answer W s, longest read L s, K kills inside a read"; 1
# when a bound is broken.
pauses() {
	awk -v max="$MAX_PAUSE" '
		NR == FNR { k[++nk] = $1; next }
		{ t0[++n] = $1; t1[n] = $2 }
		END {
			j = 1
			for (i = 1; i <= nk; i++) {
				while (j <= n && t1[j] <= k[i]) j++
				if (j > n) { print "kill " i ": no good read ended after it"; bad = 1; continue }
				d = t1[j] - k[i]
				if (d > worst) worst = d
				if (d > max) { printf "kill %d: next answer %.3f s after it\n", i, d; bad = 1 }
				if (t0[j] < k[i]) inside++
			}
			for (j = 1; j <= n; j++) {
				d = t1[j] - t0[j]
				if (d > longest) longest = d
				if (d > max) { printf "read %d took %.3f s\n", j, d; bad = 1 }
			}
			printf "worst next answer %.3f s, longest read %.3f s, %d kills inside a read\n", worst, longest, inside
			exit bad
		}' "$1" "$2"
}

# kill_under_readers NAME MNT DIR KILLS CONTROL: the readers started on
# MNT and in the container, logging in DIR; KILLS kills of the server of
# NAME's daemon; the readers stopped once each has read after the last
# one. Then every bound is checked, and said, reader by reader.
kill_under_readers() {
	local name=$1 mnt=$2 dir=$3 n=$4 sup_var=${1}_PID
	local sup=${!sup_var} after r p fail=0 inside=0
	start_readers "$dir" "$mnt" &&
	# Each reader has read a first good copy before the first kill.
	{ wait_for 30 has_read_since "$dir" 0 ||
		{ echo "no good copy from $r:" && cat "$dir/$r.err"; false; }; } &&
	kill_servers "$mnt" "$sup" "$n" "$dir/kills" &&
	after=$EPOCHREALTIME &&
	{ wait_for 20 has_read_since "$dir" "$after" ||
		{ echo "no good copy from $r after the last kill"; false; }; } &&
	stop_readers "$dir" &&
	echo "$n kills; info: server_starts $starts, server_pid $spid" &&
	test "$starts" = $((n + 1)) &&
	for r in $READER_NAMES; do
		p=$(pauses "$dir/kills" "$dir/$r.ok") || fail=1
		echo "$r: $(wc -l <"$dir/$r.ok") good copies, $p"
		case $r in table-* | threads-* | container-table)
			p=${p##*longest read } &&
			p=${p#*, } &&
			inside=$((inside + ${p%% *})) ;;
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
		{ ps -o pid=,stat=,wchan:32=,args= -p "$sup" --ppid "$sup"; false; }; } &&
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
	"$TIMINGFSCTL" attach /proc/$INIT/ns/pid "$TARGET" &&
	mounted_in_container "$TARGET" &&
	in_container cat "$TARGET/proc/1/cycles"
'

test_expect_success 'resend: 20 kills under readers: no error, no torn table, no pause over 3 s' '
	kill_under_readers TFS "$MNT" "$TRASH/resend" $KILLS &&
	test "$(answered_from_copy TFS)" = 0
'

test_expect_success 'resend: after the kills, both mounts served, every server reaped' '
	bounded 10 cat "$MNT/proc/self/cycles" &&
	bounded 10 in_container cat "$TARGET/proc/1/cycles" &&
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
	TIMINGFS_CONTROL=${TIMINGFS_CONTROL%.sock}.TFS2.sock \
		"$TIMINGFSCTL" attach /proc/$INIT/ns/pid "$TARGET" &&
	mounted_in_container "$TARGET" &&
	in_container cat "$TARGET/proc/1/cycles"
'

test_expect_success 'no resend: 20 kills under readers: no error, no torn table, no pause over 3 s' '
	kill_under_readers TFS2 "$MNT2" "$TRASH/no-resend" $KILLS_NO_RESEND &&
	echo "answered from its own copy after $(answered_from_copy TFS2) kills" &&
	test "$(answered_from_copy TFS2)" -gt 0
'

test_expect_success 'no resend: after the kills, both mounts served, every server reaped' '
	bounded 10 cat "$MNT2/proc/self/cycles" &&
	bounded 10 in_container cat "$TARGET/proc/1/cycles" &&
	server_started "$MNT2" $TFS2_PID $((KILLS_NO_RESEND + 1)) &&
	reaped_all $TFS2_PID
'

test_expect_success 'no resend: SIGTERM unmounts everything, leaves no process' '
	stop_daemon TFS2 "$MNT2"
'

test_done
