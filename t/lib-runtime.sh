# lib-runtime.sh: what the tests of container runtimes share (t2300
# Docker, t2301 Podman): an image's rootfs, the scripts its containers
# run, the reader through server kills and an upgrade, and the server's
# state before and after containers. Sourced after test-lib.sh and
# lib-restart.sh; $RT is the runtime's own directory in the trash, $RUN
# its short one in /tmp.

# runtime_rootfs: a busybox-static rootfs in $RT/rootfs (with the
# directories the mounts go on), and in $RT/out, bound at /out in the
# containers, what they run. own.sh prints the processes its /proc
# lists, those its view ($T/proc) lists, and its pid beside what
# proc/self says, read by itself (exec). reader.sh reads a value file
# and the table until /out/stop, checking each copy (a number; the
# header, then lines of 7 integers and a name): a line of /out/err for each
# failure or bad copy, a line of /out/rounds for each round.
runtime_rootfs() {
	local c
	mkdir -p "$RT/out" "$RT/rootfs/bin" "$RT/rootfs/proc" \
		"$RT/rootfs/tmp" "$RT/rootfs/run" "$RT/rootfs/timingfs" &&
	cp "$(command -v busybox)" "$RT/rootfs/bin/busybox" &&
	for c in sh cat ls grep head readlink sed sleep; do
		ln -s busybox "$RT/rootfs/bin/$c" || return 1
	done &&
	cat >"$RT/out/own.sh" <<-\EOF &&
	sleep 30 &
	echo /proc/[0-9]*
	echo $T/proc/[0-9]*
	sh -c 'echo $$; exec readlink $T/proc/self'
	kill $!
	EOF
	printf 'H="%s"\nL="%s"\n' "$TABLE_HEADER" "$TABLE_LINE" \
		>"$RT/out/reader.sh" &&
	cat >>"$RT/out/reader.sh" <<-\EOF
	while [ ! -e /out/stop ]; do
		v=$(cat $T/proc/1/cycles) || echo "cycles: failed" >>/out/err
		case $v in "" | *[!0-9]*) echo "cycles: [$v]" >>/out/err ;; esac
		if cat $T/proc/table >/tmp/t; then
			[ "$(head -1 /tmp/t)" = "$H" ] &&
				! sed 1d /tmp/t | grep -Evx "$L" ||
				echo "table: torn" >>/out/err
		else
			echo "table: failed" >>/out/err
		fi
		echo r >>/out/rounds
	done
	EOF
}

# runtime_remove: whatever the runtime left mounted under $RT (its
# store) or $RUN (its sockets and run root) unmounted, deepest first,
# and both removed.
runtime_remove() {
	local m
	for m in $(awk -v d="$RT" -v r="$RUN" \
		'index($5, d) == 1 || index($5, r) == 1 { print $5 }' \
		/proc/self/mountinfo | sort -r); do
		umount -l "$m" 2>/dev/null
	done
	rm -rf "$RT" "$RUN"
}

# own_view OUT: OUT, own.sh's output, says the container's /proc and its
# view list the same two processes (sh and its sleep), and proc/self is
# the reader, a number of the container's.
own_view() {
	cat "$1" &&
	sed -n 1p "$1" | sed "s|/proc/||g" >procfs.pids &&
	sed -n 2p "$1" | sed "s|^$T/proc/||; s| $T/proc/| |g" >view.pids &&
	test "$(wc -w <procfs.pids)" = 2 &&
	test_cmp procfs.pids view.pids &&
	test "$(sed -n 3p "$1")" = "$(sed -n 4p "$1")" &&
	test "$(sed -n 3p "$1")" -lt 100
}

# whole_reads: what whole.sh wrote in $RT/out (values: a process's
# cycles, its times, a processor's idle_cycles; table, threads.table):
# each whole, and every table line of the container's numbers, its init
# (1 1) among them.
whole_reads() {
	local t
	cat >"$RT/out/whole.sh" <<-\EOF &&
	ls $T/proc/1/threads; ls /proc/1/task
	cat $T/proc/1/cycles $T/proc/1/times \
		$T/groups/0/cpu0/idle_cycles >/out/values
	cat $T/proc/table >/out/table
	cat $T/proc/1/threads.table >/out/threads.table
	EOF
	"$@" sh /out/whole.sh >whole.out &&
	test "$(sed -n 1p whole.out)" = 1 && test "$(sed -n 2p whole.out)" = 1 &&
	head -1 "$RT/out/values" | grep -Ex "[0-9]+" &&
	sed -n 2,6p "$RT/out/values" | cut -d" " -f1 | tr "\n" " " |
		grep -x "$TABLE_VALUES " &&
	tail -1 "$RT/out/values" | grep -Ex "[0-9]+" &&
	for t in table threads.table; do
		head -1 "$RT/out/$t" |
			grep -x "$TABLE_HEADER" &&
		sed 1d "$RT/out/$t" >lines &&
		grep "^1 1 " lines &&
		! grep -Evx "$TABLE_LINE" lines &&
		awk "\$1 >= 100 || \$2 >= 100 { bad = 1 } END { exit bad }" \
			lines || return 1
	done
}

# rounds_over N: the reader has made more than N rounds.
rounds_over() {
	test "$(wc -l <"$RT/out/rounds")" -gt "$1"
}

# kills_under_reader MNT SUP WAIT...: with reader.sh running in a
# container, once it has made a round, 10 SIGKILLs to SUP's server, each
# once its successor serves, 0.1-0.4 s apart, then timingfsctl upgrade;
# then, once the reader made a few more rounds, /out/stop; WAIT... (a
# command that waits for the container's end and prints its status)
# must say 0, and no round failed.
kills_under_reader() {
	local mnt=$1 sup=$2 k rounds status
	shift 2
	test_poll_ 30 test -s "$RT/out/rounds" &&
	for k in $(seq 1 10); do
		wait_successor "$mnt" "$sup" "$k" &&
		sleep 0.$((RANDOM % 4 + 1)) &&
		kill -KILL "$spid" || return 1
	done &&
	wait_successor "$mnt" "$sup" 11 &&
	"$TIMINGFSCTL" upgrade &&
	wait_successor "$mnt" "$sup" 12 &&
	rounds=$(wc -l <"$RT/out/rounds") &&
	echo "$rounds rounds by the last restart" &&
	test_poll_ 30 rounds_over $((rounds + 2)) &&
	touch "$RT/out/stop" &&
	status=$("$@") &&
	echo "the reader exited $status" &&
	test "$status" = 0 &&
	echo "$(wc -l <"$RT/out/rounds") rounds" &&
	{ test ! -e "$RT/out/err" || { cat "$RT/out/err" && false; }; }
}

# server_state SUP: the threads and descriptors of SUP's server, and
# the host's mounts of the connection of $MNT (the mount and any copy
# of it: other timingfs mounts of the machine are not the test's), one
# line. Caches of bounds of their own are counted apart: the task
# files the engine keeps open and the pidfds it asks identities of
# (TASK_FDS each, taskfd.h), and the PID namespaces of the views (a slot each, view.h: a
# container's view keeps its slot, and its namespace, until the slot
# is taken again).
server_state() {
	local srv fds conn
	srv=$(live_server "$1")
	fds=$(ls -l "/proc/$srv/fd" 2>/dev/null)
	conn=$(conn_of /proc/self/mountinfo "$MNT")
	echo "threads $(ls "/proc/$srv/task" | wc -l)" \
		"fds $(printf '%s\n' "$fds" | grep -c -v -e " -> /proc/[0-9]" \
			-e " -> pid:\[" -e " -> anon_inode:\[pidfd\]")" \
		"mounts $(awk -v c="$conn" '$3 ~ ":" c "$" && / - fuse\.timingfs /' \
			/proc/self/mountinfo | wc -l)" \
		"views $(printf '%s\n' "$fds" | grep -c " -> pid:\[")"
}

# flat SUP CMD...: CMD (a container started, read, stopped and removed)
# twice, for the server's workers to grow to what it needs (they grow
# with the requests at once, to a bound, each with its descriptor), then
# three times measured: the server's threads and descriptors as they
# were (a worker more, at most), the host's timingfs mounts the same,
# and a view's namespace more a container at most.
flat() {
	local sup=$1 i threads fds mounts views
	shift
	"$@" && "$@" &&
	set -- $(server_state "$sup") "$@" &&
	echo "before: $1 $2 $3 $4 $5 $6 $7 $8" &&
	threads=$2 fds=$4 mounts=$6 views=$8 &&
	shift 8 &&
	for i in 1 2 3; do
		"$@" || return 1
	done &&
	set -- $(server_state "$sup") &&
	echo "after: $*" &&
	test "$2" -le $((threads + 2)) &&
	test "$4" -le $((fds + 2)) &&
	test "$6" = "$mounts" &&
	test "$8" -le $((views + 3))
}
