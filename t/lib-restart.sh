# lib-restart.sh: the readers and the looks at a daemon that the tests
# of restarts share (t2200: kills; t2201: upgrades; t2205: both). A script sources
# test-lib.sh, then this file, and runs restart_setup in its first test.
#
# The readers, each a loop of its own until told to stop, each logging
# every good copy ("T0 T1": when its read began and ended) and every
# error or bad copy to files of its own, and pausing between two reads
# without starting a process (on a small machine, the readers' own
# forks would take the CPUs the daemon serves them with):
#   - value files (proc/self/cycles by cat; a thread's kernel_time of
#     the big process and groups/0/cpu0/idle_cycles by the shell's
#     read): one decimal number and a newline;
#   - proc/table and the threads.table of a process of 3,000 sleeping
#     threads, each by cat (read(2), 128 KiB at a time), dd bs=4096
#     (a read(2) a page: a restart lands between two of them), sendfile
#     (busybox cat where there is one, and helper-readers) and splice
#     (helper-readers): the header, then lines of 7 integers and a name, the last
#     one whole, no thread twice, exactly 3,000 lines of the big
#     process;
#   - inside four containers made by unshare -m -p -f, each given the
#     daemon's tree by timingfsctl attach: the first's proc/1/cycles by
#     cat and its proc/table by dd bs=4096, the others' proc/1/cycles by
#     the shell's read;
#   - inside a runc container started with the OCI hook as
#     docs/containers.md tells users (where runc runs containers: it
#     says why not, where not): its proc/1/cycles by busybox cat (sendfile), in a loop of
#     busybox's shell that is the container's init.
# Each copy's wait is checked against MAX_PAUSE. A table read by a tool
# (cat, dd, busybox) is one copy of seconds on a small machine that
# many readers keep busy, so its copy is checked against MAX_COPY only
# (a reader left waiting); the readers by helper-readers (read(2),
# sendfile, splice) log each of their system calls on the file, and it
# is each of those answers that must come within MAX_PAUSE s of a
# restart.
#
# A daemon that stops answering would leave the readers in the kernel
# for good (a request the server had read waits for its answer through
# SIGKILL): each wait here is bounded, says what the supervisor, the
# server's threads and the readers wait in, and the script then aborts
# the mounts' FUSE connections (/sys/fs/fuse/connections), as the
# script's cleanup (cleanup_restart) does, so that the script ends.

THREADS=3000
# The longest a reader may wait for its next answer after a restart.
MAX_PAUSE=3
# The longest a tool's copy of a table may take when a restart came
# while it read: no reader is left waiting.
MAX_COPY=30
CONTAINERS=4
PAUSE_VALUE=0.05
PAUSE_TABLE=2
TARGET=$TRASH/target
READERS=$BIN/helper-readers
# A container's init first lazily unmounts its copies of the timingfs
# mounts of other tests running meanwhile (as in t2000).
CONTAINER_INIT='umount -a -l -t fuse.timingfs 2>/dev/null; exec sleep 1000'
# The FUSE connections of this script's mounts (their devices' minor
# numbers), to abort when something is stuck.
CONNS=
READER_PIDS=

# cleanup_restart [NAME MNT]...: the script's cleanup, with the mount
# MNT of each daemon NAME (start_timingfs_on) still there unmounted.
cleanup_restart() {
	# Readers stuck in a mount that does not answer end only when its
	# connection is aborted; a script that passed has none left.
	abort_conns >/dev/null
	kill_cleanup_pids # readers, the container, the big process
	while [ $# -ge 2 ]; do
		local pid_var=${1}_PID
		[ -z "${!pid_var}" ] || unmount_timingfs_on "$1" "$2"
		shift 2
	done
	cleanup
}

# restart_setup: CONTAINERS containers, their inits in $INITS (the
# first in $INIT), and a process of $THREADS threads, in $MANY; the
# readers' configuration in $TRASH/restart.conf (tasks = procfs: below);
# whether runc runs containers here in $RUNC_WHY (empty when it does).
restart_setup() {
	local i init
	mkdir -p "$TARGET" &&
	INITS= &&
	for i in $(seq 1 $CONTAINERS); do
		{ unshare -m -p -f --mount-proc sh -c "$CONTAINER_INIT" & } &&
		kill_at_exit $! &&
		init=$(child_of $!) &&
		INITS="${INITS:+$INITS }$init" || return 1
	done &&
	INIT=${INITS%% *} &&
	RUNC_WHY=$(runc_why) &&
	echo "runc: ${RUNC_WHY:-runs containers here}" &&
	start_many $THREADS "$TRASH/many.out" &&
	test "$(ls /proc/$MANY/task | wc -l)" = $THREADS &&
	# Tables read from each thread's files: a kill must land inside
	# some table's read (restarts_under_readers), and a table from one
	# pass of the task iterator is over in a few ms. Restarts under
	# the pass are t2205's (tasks = auto).
	write_config "$TRASH/restart.conf" format.units=windows \
		sources.tasks=procfs
}

# The daemon of the upgrades (t2201, t2205) runs from here; each upgrade
# installs another build here.
DAEMON=$TRASH/sbin/timingfs

# install_daemon FILE: FILE installed at DAEMON as a package manager
# installs a binary: copied beside it, then renamed over it (the
# running file cannot be written).
install_daemon() {
	cp "$1" "$DAEMON.new" && mv -f "$DAEMON.new" "$DAEMON"
}

# upgrade_setup: the versions of the two builds the upgrades go between
# in $VERSION_NOW ($TIMINGFS) and $VERSION_NEXT (t/bin/timingfs-next,
# the daemon as version VERSION+next), which differ; $TIMINGFS
# installed at DAEMON.
upgrade_setup() {
	VERSION_NOW=$("$TIMINGFS" --version |
		sed -n "s/^timingfs version //p") &&
	VERSION_NEXT=$("$BIN/timingfs-next" --version |
		sed -n "s/^timingfs version //p") &&
	test -n "$VERSION_NOW" && test -n "$VERSION_NEXT" &&
	test "$VERSION_NOW" != "$VERSION_NEXT" &&
	mkdir -p "$TRASH/sbin" &&
	install_daemon "$TIMINGFS"
}

# random_pause: sleep a random 0.05-0.5 s.
random_pause() {
	sleep "$(printf 0.%03d $((50 + RANDOM % 451)))"
}

# kill_servers MNT SUP N LOG: N times, after a random 0.05-0.5 s,
# SIGKILL to SUP's server, each time once the last one's successor
# serves (server number K serves before kill K), so that every kill
# hits a live server; a line "TIME PID" for each kill in the file LOG
# (restarts_under_readers).
kill_servers() {
	local mnt=$1 sup=$2 n=$3 log=$4 k
	for k in $(seq 1 "$n"); do
		random_pause &&
		wait_successor "$mnt" "$sup" "$k" &&
		echo "$EPOCHREALTIME $spid" >>"$log" &&
		kill -KILL "$spid" || return 1
	done &&
	wait_successor "$mnt" "$sup" $((n + 1))
}

# upgrade_servers MNT SUP N LOG [FROM]: N upgrades of SUP's server,
# after a random 0.05-0.5 s, each once server number FROM + K - 1 (FROM
# 1 unless given) serves with the version last installed (upgrade_setup
# installs $VERSION_NOW), to the other build (install_daemon, then
# timingfsctl upgrade, which must exit 0); a line "TIME PID" for each
# in the file LOG (restarts_under_readers). Last, server FROM + N
# serves with the version last installed.
upgrade_servers() {
	local mnt=$1 sup=$2 n=$3 log=$4 from=${5:-1} k want=$VERSION_NOW
	for k in $(seq 0 $((n - 1))); do
		random_pause &&
		wait_successor "$mnt" "$sup" $((from + k)) &&
		grep -x "version $want" "$TRASH/info.out" >/dev/null || {
			echo "server $((from + k)): info says" \
				"$(grep "^version" "$TRASH/info.out"), not $want"
			return 1
		}
		if [ "$want" = "$VERSION_NOW" ]; then
			install_daemon "$BIN/timingfs-next" && want=$VERSION_NEXT
		else
			install_daemon "$TIMINGFS" && want=$VERSION_NOW
		fi &&
		echo "$EPOCHREALTIME $spid" >>"$log" &&
		"$TIMINGFSCTL" upgrade >"$TRASH/upgrade.out" 2>&1 || {
			echo "upgrade $((k + 1)): timingfsctl upgrade failed:"
			cat "$TRASH/upgrade.out"
			return 1
		}
	done &&
	wait_successor "$mnt" "$sup" $((from + n)) &&
	grep -x "version $want" "$TRASH/info.out"
}

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
# then lines of seven integers and a name (TABLE_LINE), the last one
# ending in a newline, no (pid, tid) twice, MIN lines at least,
# exactly COUNT of them of PID.
# Else says what is wrong.
check_table() {
	[ -s "$4" ] || { echo "empty" && return 1; }
	[ -z "$(tail -c 1 "$4")" ] || {
		echo "$(wc -c <"$4") bytes, the last line cut: $(tail -n 1 "$4")"
		return 1
	}
	awk -v header="$TABLE_HEADER" -v line="^$TABLE_LINE\$" -v pid="$1" \
		-v count="$2" -v min="$3" '
		bad { exit 1 }
		NR == 1 {
			if ($0 != header) { print "line 1 is no header: " $0; bad = 1 }
			next
		}
		$0 !~ line {
			print "line " NR " is not 7 integers and a name: " $0
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

# reader DIR NAME WAY PAUSE FILE CHECK...: FILE read by WAY again and
# again, PAUSE s apart, until DIR/stop is there, and each copy checked
# by CHECK... FILE-OF-THE-COPY. WAY: a tool (cat, dd bs=4096, busybox
# cat), the shell's read (shell), which starts no process, or
# helper-readers (read, sendfile, splice), which logs each of its
# system calls on FILE to DIR/NAME.answers. A good copy adds "T0 T1"
# (when the read began and ended, $EPOCHREALTIME) to DIR/NAME.ok; a
# failed read (an exit status, or a word on stderr) or a bad copy adds
# a line to DIR/NAME.err, and the first three bad copies are kept.
reader() {
	local dir=$1 name=$2 way=$3 pause=$4 file=$5 t0 t1 rc why n=0 bad=0
	local out=$1/$2.out value nap
	shift 5
	# The pause is a read of a FIFO nobody writes that times out: no
	# process to start, where sleep(1) would cost one at every read.
	mkfifo "$dir/$name.nap" && exec {nap}<>"$dir/$name.nap" || return 1
	while [ ! -e "$dir/stop" ]; do
		[ "$n" = 0 ] || read -r -t "$pause" -u "$nap"
		n=$((n + 1))
		t0=$EPOCHREALTIME
		case $way in
		cat) cat "$file" ;;
		shell) IFS= read -r value <"$file" && echo "$value" ;;
		dd) dd if="$file" bs=4096 status=none ;;
		busybox) busybox cat "$file" ;;
		read | sendfile | splice)
			HELPER_READERS_ANSWERS=$dir/$name.answers \
				"$READERS" "$way" "$file" ;;
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

# mounted_in_container INIT DIR: DIR is a mount point in the container
# of INIT.
mounted_in_container() {
	in_ns "$1" bash -c "$(declare -f mounts_of)
		test -n \"\$(mounts_of \"\$1\")\"" - "$2"
}

# start_readers DIR MNT CONTROL: every reader of the host's mount MNT
# and of the containers' at TARGET, and a runc container whose hook
# reaches the daemon on CONTROL, in the background, logging in DIR;
# their pids in $READER_PIDS, their names in $READER_NAMES. Each pauses
# between two
# reads, so that the readers leave the 2 CPUs of a small machine time to
# serve them: a value reader PAUSE_VALUE s, a table reader PAUSE_TABLE
# s (each copy of a table of 3,000 threads costs the daemon 6,000 reads
# of /proc).
start_readers() {
	local dir=$1 mnt=$2 tid sendfile=sendfile i init
	local table="check_table $MANY $THREADS $THREADS"
	mkdir "$dir" &&
	READER_PIDS= &&
	READER_NAMES= &&
	tid=$(ls "/proc/$MANY/task" | sort -n | tail -n 1) &&
	{ ! test_have_prereq BUSYBOX || sendfile=busybox; } &&
	start_reader "$dir" cycles cat $PAUSE_VALUE \
		"$mnt/proc/self/cycles" check_value &&
	start_reader "$dir" kernel_time shell $PAUSE_VALUE \
		"$mnt/proc/$MANY/threads/$tid/kernel_time" check_value &&
	start_reader "$dir" idle_cycles shell $PAUSE_VALUE \
		"$mnt/groups/0/cpu0/idle_cycles" check_value &&
	for way in cat $sendfile read splice; do
		start_reader "$dir" "table-$way" $way $PAUSE_TABLE \
			"$mnt/proc/table" $table || return 1
	done &&
	for way in dd read sendfile splice; do
		start_reader "$dir" "threads-$way" $way $PAUSE_TABLE \
			"$mnt/proc/$MANY/threads.table" $table || return 1
	done &&
	start_reader_in_container $INIT "$dir" container-cycles cat \
		$PAUSE_VALUE "$TARGET/proc/1/cycles" check_value &&
	start_reader_in_container $INIT "$dir" container-table dd \
		$PAUSE_VALUE "$TARGET/proc/table" check_table 1 1 1 &&
	i=1 &&
	for init in ${INITS#* }; do
		i=$((i + 1)) &&
		start_reader_in_container "$init" "$dir" container$i-cycles \
			shell $PAUSE_VALUE "$TARGET/proc/1/cycles" check_value ||
			return 1
	done &&
	start_runc_reader "$dir" "$3"
}

# The runc container's init: busybox's shell reading its own
# proc/1/cycles by busybox cat (sendfile) at the mount the hook made,
# as reader does, logging to /log (the bundle's DIR) until /log/stop.
RUNC_READER='mkfifo /tmp/nap && exec 3<>/tmp/nap || exit 1
n=0
while [ ! -e /log/stop ]; do
	[ "$n" = 0 ] || read -t "$1" -u 3 x
	n=$((n + 1))
	t0=$EPOCHREALTIME
	cat /run/timingfs/proc/1/cycles >/tmp/out 2>/tmp/err
	rc=$?
	t1=$EPOCHREALTIME
	v=
	if [ "$rc" != 0 ] || [ -s /tmp/err ]; then
		echo "$t0 $t1 read $n: exit $rc: $(cat /tmp/err)" >>/log/$2.err
	elif ! IFS= read -r v </tmp/out ||
		case $v in "" | *[!0-9]*) true ;; *) false ;; esac; then
		echo "$t0 $t1 read $n: not a number: $(cat /tmp/out)" >>/log/$2.err
	else
		echo "$t0 $t1" >>/log/$2.ok
	fi
done'

# start_runc_reader DIR CONTROL: where runc runs containers ($RUNC_WHY
# empty), a container started from a bundle whose OCI hook reaches the
# daemon on CONTROL, with DIR bound at /log, its init RUNC_READER (the
# reader runc-cycles); its host pid in $RUNC_INIT.
start_runc_reader() {
	local bundle=$1/runc c
	RUNC_INIT=
	[ -z "$RUNC_WHY" ] || return 0
	TIMINGFS_CONTROL=$2 runc_bundle "$bundle" sh -c "$RUNC_READER" - \
		$PAUSE_VALUE runc-cycles &&
	python3 - "$bundle/config.json" "$1" <<-\EOF &&
	import json, sys
	path, log = sys.argv[1], sys.argv[2]
	c = json.load(open(path))
	c["mounts"].append({"destination": "/log", "type": "bind",
	                    "source": log, "options": ["rbind", "rw"]})
	json.dump(c, open(path, "w"), indent=1)
	EOF
	runc_start RUNC_INIT "$bundle" &&
	c=$(conn_of "/proc/$RUNC_INIT/mountinfo" /run/timingfs) &&
	CONNS="$CONNS $c" &&
	READER_PIDS="$READER_PIDS $RUNC_INIT" &&
	READER_NAMES="$READER_NAMES runc-cycles"
}

# start_reader DIR NAME WAY PAUSE FILE CHECK...: reader in the
# background.
start_reader() {
	{ reader "$@" & } &&
	kill_at_exit $! &&
	READER_PIDS="$READER_PIDS $!" &&
	READER_NAMES="$READER_NAMES $2"
}

# start_reader_in_container INIT DIR NAME WAY PAUSE FILE CHECK...: the
# same, in the container of INIT.
start_reader_in_container() {
	local init=$1
	shift
	{ in_ns "$init" bash -c "$(declare -f reader check_value check_table)
		$(declare -p TABLE_HEADER READERS)
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
	[ -z "${RUNC_INIT:-}" ] || runc_stop RUNC_INIT
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

# pauses RESTARTS OK MAX: for each restart in RESTARTS (lines "TIME
# PID"), how long the reader of OK (lines "T0 T1": its good copies, or
# its answers) waited for its next one: from the restart, or from the
# start of its next read if it was not reading then, to the end of the
# first read that ended after the restart. What a restart adds is
# bounded, not what the machine's load makes of every read: a wait over
# MAX s more than the longest read the restarts left alone (none under
# way from a restart to the end of its next answer) is too long. A line
# for each such wait, or restart after which no read ended; then "worst
# wait W s (restart R), K restarts inside a read, longest read L s with
# a restart in it, M s without, B s left alone"; 1 when a wait was too
# long.
pauses() {
	awk -v max="$3" '
		NR == FNR { k[++nk] = $1; next }
		{ t0[++n] = $1; t1[n] = $2 }
		END {
			j = 1
			for (i = 1; i <= nk; i++) {
				while (j <= n && t1[j] <= k[i]) j++
				if (j > n) { print "restart " i ": no good read ended after it"; bad = 1; continue }
				from = t0[j] < k[i] ? k[i] : t0[j]
				d[i] = t1[j] - from
				e[i] = t1[j]
				if (d[i] > worst) { worst = d[i]; wk = i }
				if (t0[j] < k[i]) inside++
			}
			for (j = 1; j <= n; j++) {
				r = t1[j] - t0[j]
				hit = 0
				near = 0
				for (i = 1; i <= nk; i++) {
					if (k[i] > t0[j] && k[i] < t1[j]) hit = 1
					if (t1[j] > k[i] && t0[j] < e[i]) near = 1
				}
				if (hit && r > with) with = r
				if (!hit && r > without) without = r
				if (!near && r > alone) alone = r
			}
			for (i = 1; i <= nk; i++)
				if (i in d && d[i] > max + alone) {
					printf "restart %d: waited %.3f s for the next answer, over %.1f s more than the %.3f s of a read left alone\n", i, d[i], max, alone
					bad = 1
				}
			printf "worst wait %.3f s (restart %d), %d restarts inside a read, longest read %.3f s with a restart in it, %.3f s without, %.3f s left alone\n", worst, wk, inside, with, without, alone
			exit bad
		}' "$1" "$2"
}

# restarts_under_readers NAME MNT DIR N RESTART: the readers started on
# MNT and in the containers, logging in DIR; then RESTART MNT SUP N LOG,
# which restarts the server of NAME's daemon (supervisor SUP) N times,
# each time adding "TIME PID" to the file LOG (TIME just before it, PID
# the server it ends), and waits for its last successor (server_started
# sets $starts); the readers stopped once each has read after the last
# restart. Then what each reader saw is said, and checked: no error, no
# bad copy, server_starts N + 1, and some restart found a table's read
# under way. A reader's answer later than MAX_PAUSE s after a restart
# (or a tool's copy of a big table later than MAX_COPY s), beyond the
# longest the restarts left alone (pauses), is written to DIR/late,
# for answered_in_time: a bound of time says nothing of a build under
# the sanitizers, where everything takes three times as long.
restarts_under_readers() {
	local name=$1 mnt=$2 dir=$3 n=$4 restart=$5 sup_var=${1}_PID
	local sup=${!sup_var} after r p a max fail=0 inside=0
	test_when_finished "stop_readers \"$dir\" $sup" &&
	start_readers "$dir" "$mnt" "$(control_of "$name")" &&
	# Each reader has read a first good copy before the first restart.
	{ wait_for 30 has_read_since "$dir" 0 || {
		echo "no good copy from $r:" && cat "$dir/$r.err"
		show_stuck "$sup"
		false
	}; } &&
	"$restart" "$mnt" "$sup" "$n" "$dir/restarts" &&
	after=$EPOCHREALTIME &&
	{ wait_for 20 has_read_since "$dir" "$after" || {
		echo "no good copy from $r after the last restart"
		show_stuck "$sup"
		false
	}; } &&
	stop_readers "$dir" "$sup" &&
	echo "$n restarts; info: server_starts $starts, server_pid $spid" &&
	test "$starts" = $((n + 1)) &&
	for r in $READER_NAMES; do
		# A tool's copy of a big table: no reader left waiting.
		case $r in
		table-* | threads-*) max=$MAX_COPY ;;
		*) max=$MAX_PAUSE ;;
		esac
		p=$(pauses "$dir/restarts" "$dir/$r.ok" $max) ||
			echo "$r: copies: $p" >>"$dir/late"
		echo "$r: $(wc -l <"$dir/$r.ok") good copies, $p"
		if [ -e "$dir/$r.answers" ]; then
			a=$(pauses "$dir/restarts" "$dir/$r.answers" \
				$MAX_PAUSE) ||
				echo "$r: answers: $a" >>"$dir/late"
			echo "  answers: $(wc -l <"$dir/$r.answers"), $a"
		fi
		case $r in table-* | threads-* | container-table)
			p=${p##*), } &&
			inside=$((inside + ${p%% restarts inside*})) ;;
		esac
		if [ -s "$dir/$r.err" ]; then
			echo "$r: $(wc -l <"$dir/$r.err") errors or bad copies:"
			head -n 20 "$dir/$r.err"
			fail=1
		fi
	done &&
	echo "restarts that found a table's read under way: $inside" &&
	test "$fail" = 0 &&
	test "$inside" -gt 0
}

# answered_in_time DIR: no reader of restarts_under_readers DIR answered
# late; else who did, and how late.
answered_in_time() {
	[ ! -s "$1/late" ] || { cat "$1/late"; return 1; }
}

# control_of NAME: the socket the daemon NAME (start_timingfs_on)
# answers timingfsctl on.
control_of() {
	if [ "$1" = TFS ]; then
		echo "$TIMINGFS_CONTROL"
	else
		echo "${TIMINGFS_CONTROL%.sock}.$1.sock"
	fi
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

# served MNT: a value read from MNT and from TARGET in each container,
# each within 10 s.
served() {
	local init
	try_cmd 10 "$TRASH/served.out" cat "$1/proc/self/cycles" &&
	check_value "$TRASH/served.out" &&
	for init in $INITS; do
		try_cmd 10 "$TRASH/served.out" nsenter -t "$init" -p -m \
			cat "$TARGET/proc/1/cycles" &&
		check_value "$TRASH/served.out" || return 1
	done
}

# stop_daemon NAME MNT: SIGTERM to the supervisor of NAME: it exits 0
# (up to 20 s, a margin for a loaded machine), with its server and its
# other children, MNT is unmounted and so is TARGET in each container.
stop_daemon() {
	local name=$1 mnt=$2 sup_var=${1}_PID sup pids pid status init
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
	for init in $INITS; do
		! mounted_in_container "$init" "$TARGET" || {
			echo "still mounted at $TARGET in the container of $init"
			return 1
		}
	done &&
	for pid in $pids; do
		{ ! is_running "$pid" && test -z "$(pgrep -P "$pid")"; } || {
			echo "left behind: $(ps -o pid=,args= -p "$pid")" \
				"$(pgrep -a -P "$pid")"
			return 1
		}
	done
}

# attach_containers CONTROL MNT: the daemon answering on CONTROL
# attaches its tree at TARGET in each container; the connections of MNT
# and of the attached mounts are added to CONNS.
attach_containers() {
	local c init
	c=$(conn_of /proc/self/mountinfo "$2") &&
	CONNS="$CONNS $c" &&
	for init in $INITS; do
		TIMINGFS_CONTROL=$1 "$TIMINGFSCTL" attach "/proc/$init/ns/pid" \
			"$TARGET" &&
		mounted_in_container "$init" "$TARGET" &&
		c=$(conn_of "/proc/$init/mountinfo" "$TARGET") &&
		CONNS="$CONNS $c" || return 1
	done &&
	served "$2"
}
