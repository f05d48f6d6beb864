#!/bin/bash
# Views: one mount read from several PID namespaces at once. Each reader
# sees the processes of its own namespace under that namespace's
# numbers, and nothing of any other, whatever another reader looked up
# the moment before; -o pidns=FILE pins every reader to one namespace.
# The ground truth is the namespace's own /proc, read by the same reader
# (unshare --mount-proc gives each namespace one), and a task's
# creation_time, which tells two tasks of the same number apart.
#
# Readers in a namespace are bash run by nsenter, and list directories
# with bash's own globs, so that no short-lived process of theirs but
# the reader itself ($$) is in the listings.
#
# The tests that read from a namespace need UNSHARE; the others (info,
# pidns= refused, pinned to the daemon's own namespace) run without it.
test_description='Views: one mount read from several PID namespaces at
once, each reader seeing its own namespace under its own numbers and
nothing of any other; -o pidns=FILE pins every reader to one namespace.'
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot make PID namespaces"

PIN=$TRASH/pin
PIN_PID=
PIN_STATUS=
export PIN

# start_pinned ARGS... / stop_pinned: a second daemon on $PIN; its exit
# status in $PIN_STATUS.
start_pinned() {
	start_timingfs_on PIN "$PIN" "$@"
}

stop_pinned() {
	unmount_timingfs_on PIN "$PIN"
}

# The namespaces die first (test-lib's cleanup kills them), so that no
# copy of a mount in their mount namespaces keeps a daemon alive.
cleanup_views() {
	kill_cleanup_pids
	stop_pinned >/dev/null 2>&1
	cleanup
}
trap cleanup_views EXIT

# The body of a namespace's init: two sleepers, which are 2 and 3 there.
NS_INIT_BODY='sleep 1000 & sleep 1000 & echo ready >"$1"; wait'

# start_ns NAME: a new PID (and mount) namespace, its init a shell with
# two sleepers. Sets NAME_INIT to the host's number of its init.
start_ns() {
	local name=$1 pid init
	unshare -p -f --mount-proc sh -c "$NS_INIT_BODY" sh \
		"$TRASH/$name.ready" >/dev/null 2>&1 </dev/null &
	pid=$!
	kill_at_exit "$pid" &&
	init=$(child_of "$pid") &&
	wait_file "$TRASH/$name.ready" &&
	printf -v "${name}_INIT" %s "$init" &&
	export "${name}_INIT"
}

# ns_tasks_are INIT "LIST": the namespace of INIT holds LIST, as its
# /proc says (but the reader).
ns_tasks_are() {
	test "$(in_ns "$1" bash -c "nums_but_me /proc")" = "$2"
}

# host_of INIT NR: the host's number of the task its namespace (that of
# INIT) numbers NR, from the NSpid lines of the host's /proc.
host_of() {
	local p
	for p in $(ps -o pid= --ppid "$1") "$1"; do
		awk -v nr="$2" '$1 == "NSpid:" && $NF == nr { found = 1 }
			END { exit !found }' "/proc/$p/status" && {
			echo "$p"
			return 0
		}
	done
	return 1
}

# in_pidns INIT CMD...: CMD in the PID namespace of INIT, the host's
# mounts (and /proc). There LeakSanitizer, in a sanitized build of the
# test's helpers, cannot find its own process in /proc: no leak check.
in_pidns() {
	local init=$1
	shift
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		nsenter -t "$init" -p "$@"
}

export BIN MNT TRASH

# The listings here are compared with each namespace's /proc, so a task
# that exits is gone at once (keep = 0); t1600 keeps them, views too.
test_expect_success 'setup: a mount for every reader, a process of the host' '
	mkdir -p "$PIN" "$TRASH/bind" &&
	write_config "$TRASH/empty.conf" exited.keep=0 &&
	start_timingfs -c "$TRASH/empty.conf" -o allow_other &&
	{ sleep 1000 >/dev/null 2>&1 & } &&
	HOSTONLY=$! &&
	kill_at_exit "$HOSTONLY" &&
	export HOSTONLY
'

# No reader of NS1 may read the mount before the next test.
test_expect_success UNSHARE 'setup: namespace NS1' '
	start_ns NS1
'

# Known since docs/containers.md's "The kernel's cache": before a namespace's
# first request reaches the daemon, a stat of a name the host looked up
# in the last second is answered from the kernel's cache. It must not
# resolve: a task outside the reader's namespace is ENOENT (docs/containers.md,
# "Views: one mount for every namespace").
# While only the host has read, proc/ is kept for one clock tick (src/fuse/fs.h):
# a stat that the kernel answers alone, from its cache, is the reader's
# own once that tick is over. Reads and listings are always (below).
# Then its own init is there for it: the mount is not empty for it.
test_expect_success UNSHARE 'a first reader of a new namespace: a host name the host just used is ENOENT' '
	cat "$MNT/proc/$HOSTONLY/cycles" >/dev/null &&
	sleep 0.02 &&
	r=$(in_ns "$NS1_INIT" "$BIN/helper-io" errno stat "$MNT/proc/$HOSTONLY") &&
	echo "stat from the namespace: $r" &&
	test "$r" = ENOENT &&
	r=$(in_ns "$NS1_INIT" "$BIN/helper-io" errno stat "$MNT/proc/1") &&
	test "$r" = OK
'

test_expect_success 'info says pidns caller' '
	grep -x "pidns caller" "$MNT/info" &&
	test "$(grep -c "^pidns " "$MNT/info")" = 1
'

test_expect_success UNSHARE 'the namespace is as made: init, two sleepers' '
	in_ns "$NS1_INIT" bash -c "nums_but_me /proc" >actual &&
	echo "1 2 3 " >expect &&
	test_cmp expect actual
'

test_expect_success UNSHARE 'proc/self in a namespace is the reader, as it numbers it' '
	in_ns "$NS1_INIT" sh -c "echo \$\$; exec readlink \"\$MNT/proc/self\"" >out &&
	cat out &&
	set -- $(cat out) &&
	test "$#" = 2 && test "$1" = "$2" &&
	test "$1" -lt "$NS1_INIT" &&
	in_ns "$NS1_INIT" sh -c "exec readlink \"\$MNT/proc/self\"" >out2 &&
	in_ns "$NS1_INIT" sh -c "exec readlink /proc/self" >out3 &&
	test "$(cat out2)" -lt "$NS1_INIT" &&
	test "$(cat out3)" -lt "$NS1_INIT"
'

test_expect_success UNSHARE 'proc/ in a namespace lists what its /proc lists' '
	in_ns "$NS1_INIT" bash -c "nums /proc && nums \"\$MNT/proc\" && echo \$\$" >out &&
	cat out &&
	me=$(sed -n 3p out) &&
	sed -n 1p out >expect &&
	sed -n 2p out >actual &&
	test_cmp expect actual &&
	printf "%s\n" 1 2 3 "$me" | sort -n | tr "\n" " " >exact &&
	echo >>exact &&
	test_cmp exact actual
'

test_expect_success UNSHARE 'proc/1/threads in a namespace is its /proc/1/task' '
	in_ns "$NS1_INIT" bash -c "nums /proc/1/task && nums \"\$MNT/proc/1/threads\"" >out &&
	cat out &&
	test "$(sed -n 1p out)" = "1 " &&
	test "$(sed -n 2p out)" = "1 "
'

test_expect_success UNSHARE 'proc/table in a namespace: its processes, its numbers' '
	in_ns "$NS1_INIT" bash -c "
		pids=() &&
		{
			read -r header &&
			while read -r p t rest; do
				[ \$p = \$\$ ] || pids+=(\$p)
			done
		} <\"\$MNT/proc/table\" &&
		printf \"%s\n\" \"\${pids[@]}\" | sort -un | tr \"\n\" \" \" &&
		echo &&
		nums_but_me /proc" >out &&
	cat out &&
	test "$(sed -n 1p out)" = "$(sed -n 2p out)" &&
	test "$(sed -n 1p out)" = "1 2 3 "
'

# The cat and the ls must fail: their messages are the output, checked
# below, and the reader goes on.
test_expect_success UNSHARE 'a host process is no process of the namespace' '
	test "$HOSTONLY" -ge 100 &&
	cat "$MNT/proc/$HOSTONLY/cycles" >/dev/null &&
	in_ns "$NS1_INIT" bash -c "
		\"\$BIN/helper-io\" errno stat \"\$MNT/proc/\$HOSTONLY\" &&
		\"\$BIN/helper-io\" errno read \"\$MNT/proc/\$HOSTONLY/cycles\" &&
		\"\$BIN/helper-io\" errno opendir \"\$MNT/proc/\$HOSTONLY\" &&
		\"\$BIN/helper-io\" errno stat \"\$MNT/proc/\$HOSTONLY/threads/\$HOSTONLY\" &&
		{ cat \"\$MNT/proc/\$HOSTONLY/cycles\" 2>&1 && echo cat-read || :; } &&
		{ ls \"\$MNT/proc/\$HOSTONLY\" 2>&1 && echo ls-listed || :; } &&
		{ ls \"\$MNT/proc\" | grep -x \$HOSTONLY || :; } &&
		nums \"\$MNT/proc\"" >out &&
	cat out &&
	printf "%s\n" ENOENT ENOENT ENOENT ENOENT >expect &&
	head -n 4 out >actual &&
	test_cmp expect actual &&
	sed -n 5p out | grep "No such file or directory" &&
	sed -n 6p out | grep "No such file or directory" &&
	! grep -x -e cat-read -e ls-listed -e "$HOSTONLY" out &&
	test "$(wc -l <out)" = 7 &&
	sed -n 7p out | tr " " "\n" | grep -x 1 &&
	! sed -n 7p out | tr " " "\n" | grep -x "$HOSTONLY"
'

test_expect_success UNSHARE 'a host name the host just read is ENOENT in the namespace' '
	for i in $(seq 1 10); do
		cat "$MNT/proc/$HOSTONLY/cycles" >/dev/null &&
		stat "$MNT/proc/$HOSTONLY" >/dev/null &&
		sleep 0.02 &&
		r1=$(in_ns "$NS1_INIT" "$BIN/helper-io" errno stat "$MNT/proc/$HOSTONLY") &&
		cat "$MNT/proc/$HOSTONLY/cycles" >/dev/null &&
		r2=$(in_ns "$NS1_INIT" "$BIN/helper-io" errno read "$MNT/proc/$HOSTONLY/cycles") &&
		ls "$MNT/proc/$HOSTONLY" >/dev/null &&
		r3=$(in_ns "$NS1_INIT" "$BIN/helper-io" errno opendir "$MNT/proc/$HOSTONLY") &&
		echo "$i: $r1 $r2 $r3" &&
		test "$r1 $r2 $r3" = "ENOENT ENOENT ENOENT" || return 1
	done &&
	r=$(in_ns "$NS1_INIT" "$BIN/helper-io" errno read "$MNT/proc/1/cycles") &&
	test "$r" = OK
'

test_expect_success UNSHARE 'proc/1 from the host and from the namespace, alternately' '
	NS_INIT_CT=$(cat "$MNT/proc/$NS1_INIT/creation_time") &&
	HOST_INIT_CT=$(cat "$MNT/proc/1/creation_time") &&
	echo "host init $HOST_INIT_CT, namespace init $NS_INIT_CT" &&
	test "$HOST_INIT_CT" != "$NS_INIT_CT" &&
	for i in $(seq 1 10); do
		h=$(cat "$MNT/proc/1/creation_time") &&
		n=$(in_ns "$NS1_INIT" cat "$MNT/proc/1/creation_time") &&
		n2=$(in_pidns "$NS1_INIT" cat "$MNT/proc/1/creation_time") &&
		h2=$(cat "$MNT/proc/$NS1_INIT/creation_time") &&
		echo "$i: host proc/1 $h, namespace proc/1 $n $n2, host proc/$NS1_INIT $h2" &&
		test "$h" = "$HOST_INIT_CT" && test "$n" = "$NS_INIT_CT" &&
		test "$n2" = "$NS_INIT_CT" && test "$h2" = "$NS_INIT_CT" ||
		return 1
	done
'

test_expect_success UNSHARE 'every file of proc/1 is the namespace init, read from there' '
	h=$(cat "$MNT/proc/$NS1_INIT/times") &&
	n=$(in_ns "$NS1_INIT" cat "$MNT/proc/1/times") &&
	echo "$h" | grep -x "creation_time $(cat "$MNT/proc/$NS1_INIT/creation_time")" &&
	echo "$n" | grep -x "creation_time $(cat "$MNT/proc/$NS1_INIT/creation_time")" &&
	s=$(host_of "$NS1_INIT" 2) &&
	test "$(in_ns "$NS1_INIT" cat "$MNT/proc/2/creation_time")" = \
		"$(cat "$MNT/proc/$s/creation_time")" &&
	test "$(in_ns "$NS1_INIT" cat "$MNT/proc/1/threads/1/creation_time")" = \
		"$(cat "$MNT/proc/$NS1_INIT/threads/$NS1_INIT/creation_time")"
'

# The reader kills its helper when it exits, however it exits.
test_expect_success UNSHARE 'threads in a namespace, by the numbers it gives them' '
	in_ns "$NS1_INIT" bash -c "
		{ \"\$BIN/helper-busy\" -k >\"\$TRASH/busy.pids\" & } &&
		trap \"kill \$!\" EXIT &&
		wait_file \"\$TRASH/busy.pids\" &&
		cat \"\$TRASH/busy.pids\" &&
		read -r p b s <\"\$TRASH/busy.pids\" &&
		nums /proc/\$p/task &&
		nums \"\$MNT/proc/\$p/threads\" &&
		\"\$BIN/helper-io\" errno stat \"\$MNT/proc/\$p/threads/\$b\" &&
		\"\$BIN/helper-io\" errno stat \"\$MNT/proc/\$b\"" >out &&
	cat out &&
	set -- $(sed -n 1p out) &&
	test "$#" = 3 && test "$1" -lt "$NS1_INIT" &&
	echo "$*" | tr " " "\n" | sort -n | tr "\n" " " >expect &&
	echo >>expect &&
	sed -n 2p out >task &&
	sed -n 3p out >threads &&
	test_cmp expect task &&
	test_cmp expect threads &&
	test "$(sed -n 4,5p out | tr "\n" " ")" = "OK ENOENT "
'

# Namespace B inside A (NS1): A sees B's processes under A's numbers; B
# sees only its own, under its numbers. B is not killed at exit by pid:
# it dies with A, being inside A, and it is gone (and its nsenter
# reaped, its pid free for another process) before the end.
test_expect_success UNSHARE 'setup: namespace B, inside A' '
	{ nsenter -t "$NS1_INIT" -p -m unshare -p -f --mount-proc \
		sh -c "$NS_INIT_BODY" sh "$TRASH/B.ready" \
		>/dev/null 2>&1 </dev/null & } &&
	B_NSENTER=$! &&
	B_UNSHARE=$(child_of "$B_NSENTER") &&
	B_INIT=$(child_of "$B_UNSHARE") &&
	wait_file "$TRASH/B.ready" &&
	export B_INIT &&
	grep NSpid "/proc/$B_INIT/status" | grep "[[:space:]]1$"
'

test_expect_success UNSHARE 'nested: B is init and two sleepers' '
	in_ns "$B_INIT" bash -c "nums_but_me /proc && nums_but_me \"\$MNT/proc\"" >out &&
	cat out &&
	printf "1 2 3 \n1 2 3 \n" >expect &&
	test_cmp expect out
'

test_expect_success UNSHARE 'nested: a reader in A lists B under A numbers' '
	in_ns "$NS1_INIT" bash -c "
		nums /proc && nums \"\$MNT/proc\" &&
		for f in /proc/[0-9]*/status; do
			while read -r k a b; do
				if [ \"\$k\" = NSpid: ] && [ \"\$b\" = 1 ]; then
					echo \"\$a\"
				fi
			done <\$f || exit 1
		done" >out &&
	cat out &&
	test "$(sed -n 1p out)" = "$(sed -n 2p out)" &&
	test "$(sed -n 3,\$p out | wc -l)" = 1 &&
	b=$(sed -n 3p out) &&
	sed -n 2p out | tr " " "\n" | grep -x "$b" &&
	test "$(wc -w <<<"$(sed -n 2p out)")" -ge 8 &&
	a_ct=$(in_ns "$NS1_INIT" cat "$MNT/proc/$b/creation_time") &&
	b_ct=$(in_ns "$B_INIT" cat "$MNT/proc/1/creation_time") &&
	h_ct=$(cat "$MNT/proc/$B_INIT/creation_time") &&
	a1_ct=$(in_ns "$NS1_INIT" cat "$MNT/proc/1/creation_time") &&
	echo "B init: from A $a_ct, from B $b_ct, from the host $h_ct; A init $a1_ct" &&
	test "$a_ct" = "$b_ct" && test "$h_ct" = "$b_ct" && test "$a1_ct" != "$b_ct"
'

test_expect_success UNSHARE 'nested: B sees nothing of A, A nothing of the host' '
	in_ns "$B_INIT" bash -c "
		set -o pipefail &&
		for n in \$(seq 4 40); do
			[ -e /proc/\$n ] ||
			\"\$BIN/helper-io\" errno stat \"\$MNT/proc/\$n\" || exit 1
		done | sort | uniq -c" >out &&
	cat out &&
	test "$(wc -l <out)" = 1 && grep " ENOENT$" out &&
	r=$(in_ns "$NS1_INIT" "$BIN/helper-io" errno stat "$MNT/proc/$HOSTONLY") &&
	test "$r" = ENOENT &&
	r=$(in_ns "$B_INIT" "$BIN/helper-io" errno stat "$MNT/proc/$HOSTONLY") &&
	test "$r" = ENOENT &&
	r=$(in_ns "$B_INIT" "$BIN/helper-io" errno stat "$MNT/proc/3") &&
	test "$r" = OK &&
	r=$(in_ns "$NS1_INIT" "$BIN/helper-io" errno stat "$MNT/proc/3") &&
	test "$r" = OK
'

# B goes, whole: nsenter stops itself when its child is stopped, so it
# is killed too, and its unshare is reaped by A init (up to 10 s).
test_expect_success UNSHARE 'setup: B gone, A is as made again' '
	{ kill_tree "$B_NSENTER" KILL || :; } &&
	{ wait "$B_NSENTER" 2>/dev/null || :; } &&
	{
		wait_for 10 ns_tasks_are "$NS1_INIT" "1 2 3 " || {
			echo "A holds: $(in_ns "$NS1_INIT" bash -c "nums_but_me /proc")"
			false
		}
	} &&
	ns_tasks_are "$NS1_INIT" "1 2 3 "
'

# A container's view of the host's mount: a bind mount in a mount
# namespace of its own, read from a PID namespace of its own. The last
# command is a builtin, so that bash, the init there, execs no reader.
test_expect_success UNSHARE 'a bind mount in a private mount namespace: its own view' '
	unshare -m -p -f --mount-proc bash -c "
		mount --bind \"\$MNT\" \"\$TRASH/bind\" &&
		{ sleep 1000 & } &&
		nums /proc &&
		nums \"\$TRASH/bind/proc\" &&
		echo \$! &&
		sh -c \"echo \\\$\\\$; exec readlink \\\"\$TRASH/bind/proc/self\\\"\" &&
		true" >out &&
	cat out &&
	s=$(sed -n 3p out) &&
	printf "1 $s \n1 $s \n" >expect &&
	sed -n 1,2p out >actual &&
	test_cmp expect actual &&
	test "$(sed -n 4p out)" = "$(sed -n 5p out)" &&
	test "$(sed -n 4p out)" -gt "$s" &&
	! is_mounted "$TRASH/bind"
'

# The kernel's dentry cache: readers of the host, of NS1 and of NS2 at
# once, for 2 s, on the same names. Each checks that proc/1 and proc/2
# are its own namespace's (by creation_time) and that the others' tasks
# do not exist, with bash's own reads and stats: no process is started
# inside the loop.
test_expect_success UNSHARE 'setup: namespace NS2' '
	start_ns NS2
'

# race_reader SECONDS CT1 CT2 ABSENT...: loop, print "ok N" or what
# went wrong (and fail).
race_reader() {
	local end c n=0 a secs=$1 ct1=$2 ct2=$3
	shift 3
	end=$((${EPOCHREALTIME/./} + secs * 1000000))
	while [ "${EPOCHREALTIME/./}" -lt "$end" ]; do
		n=$((n + 1))
		read -r c <"$MNT/proc/1/creation_time"
		[ "$c" = "$ct1" ] || { echo "read $n: proc/1 is $c"; return 1; }
		[ -d "$MNT/proc/2" ] || { echo "read $n: no proc/2"; return 1; }
		read -r c <"$MNT/proc/2/creation_time"
		[ "$c" = "$ct2" ] || { echo "read $n: proc/2 is $c"; return 1; }
		for a in "$@"; do
			[ ! -e "$MNT/proc/$a" ] ||
				{ echo "read $n: proc/$a is there"; return 1; }
			[ ! -e "$MNT/proc/$a/cycles" ] ||
				{ echo "read $n: proc/$a/cycles is there"; return 1; }
		done
	done
	echo "ok $n"
}
export -f race_reader

test_expect_success UNSHARE 'three namespaces at once on the same names: never the other one' '
	h1=$(cat "$MNT/proc/1/creation_time") &&
	h2=$(cat "$MNT/proc/2/creation_time") &&
	a1=$(cat "$MNT/proc/$NS1_INIT/creation_time") &&
	a2=$(cat "$MNT/proc/$(host_of "$NS1_INIT" 2)/creation_time") &&
	b1=$(cat "$MNT/proc/$NS2_INIT/creation_time") &&
	b2=$(cat "$MNT/proc/$(host_of "$NS2_INIT" 2)/creation_time") &&
	echo "host $h1 $h2, NS1 $a1 $a2, NS2 $b1 $b2" &&
	test "$(printf "%s\n" "$h1" "$a1" "$b1" | sort -u | wc -l)" = 3 &&
	test "$(printf "%s\n" "$h2" "$a2" "$b2" | sort -u | wc -l)" = 3 &&
	{ race_reader 2 "$h1" "$h2" >host.out & } &&
	p0=$! &&
	{ in_pidns "$NS1_INIT" bash -c "race_reader 2 $a1 $a2 $HOSTONLY $NS2_INIT" >ns1.out & } &&
	p1=$! &&
	{ in_pidns "$NS2_INIT" bash -c "race_reader 2 $b1 $b2 $HOSTONLY $NS1_INIT" >ns2.out & } &&
	p2=$! &&
	{ wait_pids "$p0" "$p1" "$p2"; rc=$?; } &&
	cat host.out ns1.out ns2.out &&
	test "$rc" = 0 &&
	for f in host.out ns1.out ns2.out; do
		n=$(sed -n "s/^ok //p" $f) &&
		test "$n" -gt 50 || return 1
	done
'

test_expect_success UNSHARE 'proc/self from three namespaces at once' '
	pids= &&
	for i in $(seq 1 20); do
		{ sh -c "echo \$\$; exec readlink \"$MNT/proc/self\"" >h.$i & } &&
		pids="$pids $!" &&
		{ in_pidns "$NS1_INIT" sh -c "echo \$\$; exec readlink \"$MNT/proc/self\"" >a.$i & } &&
		pids="$pids $!" &&
		{ in_pidns "$NS2_INIT" sh -c "echo \$\$; exec readlink \"$MNT/proc/self\"" >b.$i & } &&
		pids="$pids $!" || return 1
	done &&
	wait_pids $pids &&
	test "$(ls h.* a.* b.* | wc -l)" = 60 &&
	for f in h.* a.* b.*; do
		set -- $(cat $f) &&
		test "$#" = 2 && test "$1" = "$2" ||
		{ echo "$f: $*"; return 1; }
	done
'

# Pinned to NS1: every reader sees NS1.
test_expect_success UNSHARE 'setup: a second mount, pinned to NS1' '
	start_pinned -c "$TRASH/empty.conf" \
		-o allow_other,pidns=/proc/$NS1_INIT/ns/pid
'

test_expect_success UNSHARE 'pinned: info says pidns and the namespace inode' '
	ino=$(stat -L -c %i "/proc/$NS1_INIT/ns/pid") &&
	grep -x "pidns $ino" "$PIN/info" &&
	test "$ino" != "$(stat -L -c %i /proc/self/ns/pid)" &&
	! grep -x "pidns caller" "$PIN/info"
'

test_expect_success UNSHARE 'pinned: the host reads the namespace, as it numbers it' '
	ls "$PIN/proc" | grep -E "^[0-9]+$" | sort -n | tr "\n" " " >actual &&
	echo >>actual &&
	in_ns "$NS1_INIT" bash -c "nums_but_me /proc" >expect &&
	test_cmp expect actual &&
	echo "1 2 3 " >exact &&
	test_cmp exact actual &&
	test "$(cat "$PIN/proc/1/creation_time")" = \
		"$(cat "$MNT/proc/$NS1_INIT/creation_time")" &&
	test "$(cat "$PIN/proc/2/creation_time")" = \
		"$(cat "$MNT/proc/$(host_of "$NS1_INIT" 2)/creation_time")" &&
	ls "$PIN/proc/1/threads" >threads &&
	echo 1 >expect &&
	test_cmp expect threads
'

test_expect_success UNSHARE 'pinned: the host reader is nowhere in it' '
	test_path_is_dir "$PIN/proc/1" &&
	test "$("$BIN/helper-io" errno readlink "$PIN/proc/self")" = ENOENT &&
	test "$("$BIN/helper-io" errno stat "$PIN/proc/$HOSTONLY")" = ENOENT &&
	test "$("$BIN/helper-io" errno stat "$PIN/proc/$NS1_INIT")" = ENOENT &&
	! ls "$PIN/proc" | grep -x "$HOSTONLY"
'

test_expect_success UNSHARE 'pinned: readers of NS2 and NS1 see NS1 too' '
	b=$(in_pidns "$NS2_INIT" cat "$PIN/proc/1/creation_time") &&
	test "$b" = "$(cat "$MNT/proc/$NS1_INIT/creation_time")" &&
	r=$(in_pidns "$NS2_INIT" "$BIN/helper-io" errno readlink "$PIN/proc/self") &&
	test "$r" = ENOENT &&
	in_pidns "$NS1_INIT" sh -c "echo \$\$; exec readlink \"$PIN/proc/self\"" >out &&
	set -- $(cat out) &&
	test "$#" = 2 && test "$1" = "$2"
'

test_expect_success UNSHARE 'pinned: unmounted, the daemon exits 0' '
	PIN_STATUS= &&
	stop_pinned &&
	test "$PIN_STATUS" = 0
'

test_expect_success 'pidns= that is no PID namespace: exit 2, naming pidns=' '
	mkdir bad &&
	echo x >regular &&
	test_when_finished "fusermount3 -u -z \"\$TRASH/bad\" 2>/dev/null || :" &&
	for f in "$TRASH/regular" "$TRASH/missing" /proc/self/ns/net; do
		status=0 &&
		{ bounded 20 "$TIMINGFS" -f -c "$TRASH/empty.conf" \
			-o pidns="$f" "$TRASH/bad" 2>err || status=$?; } &&
		echo "pidns=$f: exit $status: $(cat err)" &&
		test "$status" = 2 &&
		grep -F "pidns=$f" err || return 1
	done
'

# Pinned to the daemon's own namespace: as the default, for the host.
test_expect_success 'setup: a second mount, pinned to the daemon own namespace' '
	start_pinned -c "$TRASH/empty.conf" -o allow_other,pidns=/proc/$$/ns/pid
'

test_expect_success 'pidns= of the daemon own namespace: the host view' '
	grep -x "pidns $(stat -L -c %i /proc/$$/ns/pid)" "$PIN/info" &&
	out=$(sh -c "echo \$\$; exec readlink \"$PIN/proc/self\"") &&
	set -- $out &&
	test "$#" = 2 && test "$1" = "$2" &&
	test "$(cat "$PIN/proc/1/creation_time")" = \
		"$(cat "$MNT/proc/1/creation_time")" &&
	ls "$PIN/proc" | grep -x "$HOSTONLY" &&
	ls "$PIN/proc/$$/threads" >actual &&
	ls /proc/$$/task >expect &&
	test_cmp expect actual
'

test_expect_success UNSHARE 'pidns= of the daemon own namespace: a namespace reader sees the host' '
	ls "$PIN/proc" | grep -x "$NS1_INIT" &&
	c=$(in_pidns "$NS1_INIT" cat "$PIN/proc/1/creation_time") &&
	test "$c" = "$(cat "$MNT/proc/1/creation_time")" &&
	c=$(in_pidns "$NS1_INIT" cat "$PIN/proc/$NS1_INIT/creation_time") &&
	test "$c" = "$(in_ns "$NS1_INIT" cat "$MNT/proc/1/creation_time")" &&
	r=$(in_pidns "$NS1_INIT" "$BIN/helper-io" errno stat "$PIN/proc/$HOSTONLY") &&
	test "$r" = OK
'

test_expect_success 'pidns= own: unmounted, the daemon exits 0' '
	PIN_STATUS= &&
	stop_pinned &&
	test "$PIN_STATUS" = 0
'

test_done
