#!/bin/bash
# Access: [access] hidepid and gid, as procfs's hidepid= and gid=, with
# real users. The readers are "nobody", nobody in group 4242
# (supplementary, or as its primary group), and root; the ground truth
# is who owns what in /proc (ps -u) and procfs's own answer for a
# procfs mounted here with hidepid=invisible,gid=4242.
#
# "nobody" is a user of this run's own, 1510000000 + the script's pid,
# not 65534: other scripts (t1100, t1600, t1700), and this one run from
# another checkout, start processes of 65534 on the same machine at any
# moment, and what nobody lists is compared with what it owns.
#
# Readers list directories with bash's own globs (nums), so that no
# short-lived process of theirs but the reader itself ($$) is listed.
test_description='Access: [access] hidepid and gid, as procfs hidepid= and
gid=, read by real users (a user of its own, that user in the exempt
group, root) and compared with /proc and with a procfs mounted with
hidepid=invisible.'
TEST_OTHER_USERS=1 # the readers are another user: a trash they reach
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot read as other users"
test_have_prereq SETPRIV || skip_all "no setpriv (util-linux)"

NOBODY=$((1510000000 + $$))
chmod 755 "$TRASH"
if ! setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups test -x "$MNT"; then
	echo "Bail out! nobody cannot reach $MNT (test-lib's TEST_OTHER_USERS)"
	exit 1
fi
GID=4242
OTHER_GID=4343
HPROC=$TRASH/hproc
export NOBODY GID OTHER_GID HPROC BIN MNT

trap cleanup_hproc EXIT

as_nobody() {
	setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$@"
}

# as_member: nobody, with the exempt group as a supplementary group.
as_member() {
	setpriv --reuid=$NOBODY --regid=$NOBODY --groups=${MEMBER_GID:-$GID} "$@"
}

# as_primary: nobody, with the exempt group as its primary group.
as_primary() {
	setpriv --reuid=$NOBODY --regid=${MEMBER_GID:-$GID} --clear-groups "$@"
}

# errno_as WHO CALL PATH: the errno name of one call made by WHO.
errno_as() {
	local who=$1
	shift
	$who "$BIN/helper-io" errno "$@"
}

# owned_by UID: the processes whose effective owner is UID, sorted, on
# one line, as /proc says.
owned_by() {
	ps -e -o euid=,pid= | awk -v u="$1" '$1 == u { print $2 }' |
		sort -n | tr "\n" " " &&
	echo
}

# table_pids_as WHO: the processes in proc/table as WHO reads it, but
# the reader itself, on one line. The table is read by the reading
# shell, no child of it running meanwhile.
table_pids_as() {
	$1 bash -c '
		pids=() &&
		{
			read -r header &&
			while read -r p rest; do
				[ "$p" = $$ ] || pids+=("$p")
			done
		} <"$MNT/proc/table" &&
		printf "%s\n" "${pids[@]}" | sort -un | tr "\n" " " &&
		echo'
}

# nobody_table_is_its_own: nobody's proc/table holds exactly the
# processes nobody owns (the same before and after it is read).
nobody_table_is_its_own() {
	local before after
	before=$(owned_by $NOBODY) &&
	table_pids_as as_nobody >table &&
	after=$(owned_by $NOBODY) &&
	test "$before" = "$after" &&
	echo "$before" >expect &&
	test_cmp expect table
}

# listed_as WHO DIR: what WHO lists in DIR, without itself, on one line.
listed_as() {
	$1 bash -c "nums_but_me \"$2\""
}

# remount CONF: the daemon on $MNT, now with CONF.
remount() {
	unmount_timingfs &&
	mount_timingfs "$1" -o allow_other
}

# Processes of nobody's, and one of root's, to look at. setpriv execs
# sleep: the pid of the background job is nobody's process, once
# setpriv has switched users (wait_owner: up to 10 s).
test_expect_success 'setup: two processes of nobody, one of root' '
	{ setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
		sleep 1000 >/dev/null 2>&1 & } &&
	MINE1=$! &&
	kill_at_exit "$MINE1" &&
	{ setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups \
		sleep 1000 >/dev/null 2>&1 & } &&
	MINE2=$! &&
	kill_at_exit "$MINE2" &&
	{ sleep 1000 >/dev/null 2>&1 & } &&
	ROOTS=$! &&
	kill_at_exit "$ROOTS" &&
	wait_owner "$MINE1" "$NOBODY" &&
	wait_owner "$MINE2" "$NOBODY" &&
	export MINE1 MINE2 ROOTS
'

test_expect_success 'the readers are who they should be' '
	test "$(as_nobody id -u)" = "$NOBODY" &&
	test "$(as_nobody id -G)" = "$NOBODY" &&
	test "$(as_member id -G | tr " " "\n" | sort -n | tr "\n" " ")" = "$GID $NOBODY " &&
	test "$(as_primary id -G)" = "$GID" &&
	test "$(stat -c %u /proc/$MINE1)" = "$NOBODY" &&
	test "$(stat -c %u /proc/1)" = 0 &&
	test "$(stat -c %u /proc/$ROOTS)" = 0
'

# ---- off ---------------------------------------------------------------

# Listings are compared with procfs's, so a task that exits is gone at
# once (keep = 0); t1600 keeps them, under the same access rules.
test_expect_success 'setup: hidepid = off' '
	write_config "$TRASH/off.conf" access.hidepid=off exited.keep=0 &&
	remount "$TRASH/off.conf"
'

test_expect_success 'off: info says so' '
	grep -x "hidepid off" "$MNT/info" &&
	grep -x "hidepid_gid none" "$MNT/info"
'

test_expect_success 'off: nobody lists and reads every process' '
	listed_as as_nobody "$MNT/proc" >list &&
	tr " " "\n" <list | grep -x 1 &&
	tr " " "\n" <list | grep -x "$ROOTS" &&
	tr " " "\n" <list | grep -x "$MINE1" &&
	test "$(errno_as as_nobody opendir "$MNT/proc/1")" = OK &&
	test "$(errno_as as_nobody read "$MNT/proc/1/cycles")" = OK &&
	test "$(errno_as as_nobody opendir "$MNT/proc/1/threads")" = OK &&
	as_nobody cat "$MNT/proc/$ROOTS/times" | grep "^cycles [0-9]" &&
	test "$(stat -c %a "$MNT/proc/1")" = 555
'

# ---- noaccess ----------------------------------------------------------

test_expect_success 'setup: hidepid = noaccess, gid = 4242' '
	write_config "$TRASH/noaccess.conf" access.hidepid=noaccess \
		access.gid=$GID exited.keep=0 &&
	remount "$TRASH/noaccess.conf"
'

test_expect_success 'noaccess: info says so' '
	grep -x "hidepid noaccess" "$MNT/info" &&
	grep -x "hidepid_gid $GID" "$MNT/info"
'

test_expect_success 'noaccess: nobody lists every process' '
	listed_as as_nobody "$MNT/proc" >list &&
	cat list &&
	tr " " "\n" <list | grep -x 1 &&
	tr " " "\n" <list | grep -x "$ROOTS" &&
	tr " " "\n" <list | grep -x "$MINE1" &&
	tr " " "\n" <list | grep -x "$MINE2"
'

test_expect_success 'noaccess: nobody cannot enter a process of root: EACCES' '
	test "$(errno_as as_nobody opendir "$MNT/proc/1")" = EACCES &&
	test "$(errno_as as_nobody read "$MNT/proc/1/cycles")" = EACCES &&
	test "$(errno_as as_nobody stat "$MNT/proc/1/cycles")" = EACCES &&
	test "$(errno_as as_nobody read "$MNT/proc/$ROOTS/threads/$ROOTS/cycles")" = EACCES &&
	test_must_fail as_nobody ls "$MNT/proc/1" 2>err &&
	grep "Permission denied" err &&
	test_must_fail as_nobody cat "$MNT/proc/1/cycles" >out 2>err &&
	grep "Permission denied" err &&
	test ! -s out
'

test_expect_success 'noaccess: proc/table holds what nobody may enter' '
	nobody_table_is_its_own &&
	table_pids_as "" >all &&
	tr " " "\n" <all | grep -x 1
'

test_expect_success 'noaccess: nobody reads its own processes' '
	as_nobody cat "$MNT/proc/$MINE1/cycles" >out &&
	grep -E "^[0-9]+$" out &&
	as_nobody ls "$MNT/proc/$MINE2/threads" >threads &&
	echo "$MINE2" >expect &&
	test_cmp expect threads &&
	test "$(errno_as as_nobody read "$MNT/proc/$MINE2/threads/$MINE2/times")" = OK
'

test_expect_success 'noaccess: root reads everything' '
	cat "$MNT/proc/1/cycles" | grep -E "^[0-9]+$" &&
	cat "$MNT/proc/$MINE1/cycles" | grep -E "^[0-9]+$" &&
	ls "$MNT/proc/1" | grep -x threads
'

test_expect_success 'noaccess: a member of the gid enters every process' '
	test "$(errno_as as_member opendir "$MNT/proc/1")" = OK &&
	test "$(errno_as as_member read "$MNT/proc/1/cycles")" = OK &&
	test "$(errno_as as_member read "$MNT/proc/$ROOTS/threads/$ROOTS/times")" = OK &&
	test "$(errno_as as_primary opendir "$MNT/proc/1")" = OK &&
	test "$(errno_as as_primary read "$MNT/proc/1/cycles")" = OK
'

test_expect_success 'noaccess: a process directory is 0550, group the gid' '
	test "$(stat -c "%a %u %g" "$MNT/proc/1")" = "550 0 $GID" &&
	test "$(stat -c "%a %u %g" "$MNT/proc/$ROOTS")" = "550 0 $GID" &&
	test "$(stat -c "%a %u %g" "$MNT/proc/$MINE1")" = "550 $NOBODY $GID"
'

test_expect_success 'setup: hidepid = noaccess, no gid' '
	write_config "$TRASH/noaccess-nogid.conf" access.hidepid=noaccess \
		access.gid=none exited.keep=0 &&
	remount "$TRASH/noaccess-nogid.conf"
'

test_expect_success 'noaccess without gid: info says so' '
	grep -x "hidepid noaccess" "$MNT/info" &&
	grep -x "hidepid_gid none" "$MNT/info"
'

test_expect_success 'noaccess without gid: 0500, the owner group; no member' '
	test "$(stat -c "%a %u %g" "$MNT/proc/1")" = \
		"500 0 $(stat -c %g /proc/1)" &&
	test "$(stat -c "%a %u %g" "$MNT/proc/$MINE1")" = \
		"500 $NOBODY $(stat -c %g /proc/$MINE1)" &&
	test "$(errno_as as_member opendir "$MNT/proc/1")" = EACCES &&
	test "$(errno_as as_nobody opendir "$MNT/proc/1")" = EACCES &&
	test "$(errno_as as_nobody opendir "$MNT/proc/$MINE1")" = OK &&
	test "$(errno_as as_nobody read "$MNT/proc/$MINE1/cycles")" = OK &&
	test "$(errno_as as_member read "$MNT/proc/$MINE1/cycles")" = OK
'

# ---- invisible ---------------------------------------------------------

# No request of nobody before the next test.
test_expect_success 'setup: hidepid = invisible, gid = 4242' '
	write_config "$TRASH/invisible.conf" access.hidepid=invisible \
		access.gid=$GID exited.keep=0 &&
	remount "$TRASH/invisible.conf"
'

# As for a new PID namespace (t1500): nobody first request comes while
# proc/ may be cached for the view of root. Then its own process is
# there for it: the mount does not hide everything.
test_expect_success 'invisible: nobody first request, right after root: ENOENT' '
	stat "$MNT/proc/1" >/dev/null &&
	stat "$MNT/proc/$ROOTS/cycles" >/dev/null &&
	r1=$(errno_as as_nobody stat "$MNT/proc/1") &&
	r2=$(errno_as as_nobody stat "$MNT/proc/$ROOTS/cycles") &&
	echo "nobody: proc/1 $r1, proc/$ROOTS/cycles $r2" &&
	test "$r1 $r2" = "ENOENT ENOENT" &&
	test "$(errno_as as_nobody stat "$MNT/proc/$MINE1/cycles")" = OK
'

test_expect_success 'invisible: info says so' '
	grep -x "hidepid invisible" "$MNT/info" &&
	grep -x "hidepid_gid $GID" "$MNT/info"
'

test_expect_success 'invisible: nobody lists exactly its own processes' '
	before=$(owned_by $NOBODY) &&
	listed_as as_nobody "$MNT/proc" >list &&
	after=$(owned_by $NOBODY) &&
	echo "nobody owns $before, then $after; lists $(cat list)" &&
	test "$before" = "$after" &&
	echo "$before" >expect &&
	test_cmp expect list &&
	tr " " "\n" <list | grep -x "$MINE1" &&
	tr " " "\n" <list | grep -x "$MINE2"
'

test_expect_success 'invisible: proc/table holds nobody processes alone' '
	nobody_table_is_its_own &&
	table_pids_as as_member >member &&
	tr " " "\n" <member | grep -x 1
'

test_expect_success 'invisible: processes of root do not exist for nobody' '
	for i in $(seq 1 10); do
		stat "$MNT/proc/1" >/dev/null &&
		cat "$MNT/proc/1/cycles" >/dev/null &&
		ls "$MNT/proc/$ROOTS/threads" >/dev/null &&
		r="$(errno_as as_nobody stat "$MNT/proc/1")" &&
		r="$r $(errno_as as_nobody read "$MNT/proc/1/cycles")" &&
		r="$r $(errno_as as_nobody opendir "$MNT/proc/$ROOTS/threads")" &&
		r="$r $(errno_as as_nobody stat "$MNT/proc/$ROOTS/threads/$ROOTS")" &&
		echo "$i: $r" &&
		test "$r" = "ENOENT ENOENT ENOENT ENOENT" || return 1
	done &&
	test_must_fail as_nobody cat "$MNT/proc/1/cycles" 2>err &&
	grep "No such file or directory" err &&
	! as_nobody ls "$MNT/proc" | grep -x 1 &&
	test "$(errno_as as_nobody read "$MNT/proc/$MINE1/cycles")" = OK
'

# Two readers for 2 s: each prints "ok N" or what went wrong (and fails).
test_expect_success 'invisible: nobody and root at once on the same names' '
	{ as_nobody bash -c "
		end=\$((\${EPOCHREALTIME/./} + 2000000)) n=0
		while [ \${EPOCHREALTIME/./} -lt \$end ]; do
			n=\$((n + 1))
			[ ! -e \$MNT/proc/1 ] || { echo \"read \$n: proc/1\"; exit 1; }
			[ ! -e \$MNT/proc/$ROOTS/cycles ] ||
				{ echo \"read \$n: proc/$ROOTS/cycles\"; exit 1; }
			read -r c <\$MNT/proc/$MINE1/cycles ||
				{ echo \"read \$n: proc/$MINE1\"; exit 1; }
		done
		echo ok \$n" >nobody.out & } &&
	nobody_pid=$! &&
	{ bash -c "
		end=\$((\${EPOCHREALTIME/./} + 2000000)) n=0
		while [ \${EPOCHREALTIME/./} -lt \$end ]; do
			n=\$((n + 1))
			[ -e \$MNT/proc/1 ] || { echo \"read \$n: no proc/1\"; exit 1; }
			read -r c <\$MNT/proc/$ROOTS/cycles ||
				{ echo \"read \$n: no proc/$ROOTS\"; exit 1; }
			read -r c <\$MNT/proc/$MINE1/cycles ||
				{ echo \"read \$n: no proc/$MINE1\"; exit 1; }
		done
		echo ok \$n" >root.out & } &&
	root_pid=$! &&
	{ wait_pids "$nobody_pid" "$root_pid"; rc=$?; } &&
	cat nobody.out root.out &&
	test "$rc" = 0 &&
	test "$(sed -n "s/^ok //p" nobody.out)" -gt 50 &&
	test "$(sed -n "s/^ok //p" root.out)" -gt 50
'

test_expect_success 'invisible: nobody reads its own processes' '
	as_nobody cat "$MNT/proc/$MINE1/times" >times &&
	grep "^cycles [0-9]" times &&
	grep -x "exit_time 0" times &&
	test "$(as_nobody ls "$MNT/proc/$MINE2/threads")" = "$MINE2" &&
	out=$(as_nobody sh -c "echo \$\$; exec readlink \"$MNT/proc/self\"") &&
	set -- $out &&
	test "$#" = 2 && test "$1" = "$2"
'

test_expect_success 'invisible: root sees everything' '
	ls "$MNT/proc" >list &&
	grep -x 1 list && grep -x "$ROOTS" list &&
	grep -x "$MINE1" list && grep -x "$MINE2" list &&
	cat "$MNT/proc/1/cycles" | grep -E "^[0-9]+$"
'

# MEMBER_GID is set for one call alone (bash: for a function, for the
# time of the call): the later tests are members of 4242 again.
test_expect_success 'invisible: a member of the gid sees everything' '
	listed_as as_member "$MNT/proc" >list &&
	cat list &&
	tr " " "\n" <list | grep -x 1 &&
	tr " " "\n" <list | grep -x "$ROOTS" &&
	tr " " "\n" <list | grep -x "$MINE1" &&
	test "$(errno_as as_member read "$MNT/proc/1/cycles")" = OK &&
	test "$(errno_as as_member stat "$MNT/proc/$ROOTS/threads/$ROOTS")" = OK &&
	test "$(errno_as as_primary read "$MNT/proc/1/cycles")" = OK &&
	listed_as as_primary "$MNT/proc" | tr " " "\n" | grep -x "$ROOTS" &&
	test "$(MEMBER_GID=$OTHER_GID errno_as as_member stat "$MNT/proc/1")" = ENOENT
'

# ---- auto --------------------------------------------------------------

# proc_super_options: those of the /proc this script sees.
proc_super_options() {
	awk '$5 == "/proc" { print $NF }' /proc/self/mountinfo
}

# PROC_NO_HIDEPID: /proc is mounted without hidepid=.
test_lazy_prereq PROC_NO_HIDEPID '
	opts=$(proc_super_options) &&
	test -n "$opts" &&
	case ",$opts," in *,hidepid=*) false ;; esac
'

# HIDEPID_PROCFS: a procfs with hidepid=invisible,gid= can be mounted.
test_lazy_prereq HIDEPID_PROCFS '
	mkdir p &&
	mount -t proc -o hidepid=invisible,gid=$GID proc p &&
	{ umount p || umount -l p; }
'

test_expect_success 'setup: hidepid = auto, on /proc' '
	write_config "$TRASH/auto.conf" exited.keep=0 &&
	remount "$TRASH/auto.conf"
'

test_expect_success PROC_NO_HIDEPID 'auto, /proc without hidepid=: off' '
	grep -x "hidepid off" "$MNT/info" &&
	grep -x "hidepid_gid none" "$MNT/info" &&
	test "$(errno_as as_nobody read "$MNT/proc/1/cycles")" = OK
'

# A procfs of our own, as procfs hides: the daemon reads it (as a
# captured tree) and hides what it hides.
test_expect_success HIDEPID_PROCFS 'setup: a procfs with hidepid=invisible,gid=4242; hidepid = auto on it' '
	mkdir -p "$HPROC" &&
	mount -t proc -o hidepid=invisible,gid=$GID proc "$HPROC" &&
	write_config "$TRASH/auto-hproc.conf" "sources.proc=$HPROC" \
		exited.keep=0 &&
	remount "$TRASH/auto-hproc.conf"
'

test_expect_success HIDEPID_PROCFS 'auto, a procfs with hidepid=invisible,gid: info says so' '
	awk -v d="$HPROC" "\$5 == d" /proc/self/mountinfo | grep "hidepid=invisible" &&
	grep -x "hidepid invisible" "$MNT/info" &&
	grep -x "hidepid_gid $GID" "$MNT/info"
'

test_expect_success HIDEPID_PROCFS 'auto: nobody lists what that procfs lists it' '
	as_nobody bash -c "nums_but_me \$HPROC && nums_but_me \$MNT/proc" >out &&
	cat out &&
	sed -n 1p out >expect &&
	sed -n 2p out >actual &&
	test_cmp expect actual &&
	owned_by $NOBODY >owned &&
	test_cmp owned actual &&
	tr " " "\n" <actual | grep -x "$MINE1" &&
	test "$(errno_as as_nobody stat "$MNT/proc/$ROOTS")" = ENOENT &&
	test "$(errno_as as_nobody stat "$HPROC/$ROOTS")" = ENOENT &&
	test "$(errno_as as_nobody read "$MNT/proc/$MINE1/cycles")" = OK
'

# What that procfs hides from the daemon (here it hides init even from
# root), the daemon cannot show: root lists what it lists.
# Root sees the whole machine, whose other processes come and go: the
# mount's list, taken between two of that procfs's, must hold every
# process in both of those, and anything else it holds must have gone
# since (so not pid 1, which that procfs hides but /proc shows).
agrees_with_procfs() {
	local n p
	bash -c "nums_but_me \$HPROC && nums_but_me \$MNT/proc && nums_but_me \$HPROC" >out &&
	for n in 1 2 3; do
		sed -n ${n}p out | tr " " "\n" | sed "/^$/d" | sort >list.$n ||
			return 1
	done &&
	comm -12 list.1 list.3 >stable &&
	sort -u list.1 list.3 >seen &&
	comm -23 stable list.2 >missing &&
	comm -23 list.2 seen >extra &&
	for p in $(cat extra); do
		{ test ! -e "/proc/$p" || echo "$p" >>missing; } || return 1
	done &&
	{ test ! -s missing || { echo "differs: $(cat missing)" && false; }; }
}

# Other processes of the machine come and go meanwhile: up to ten tries.
test_expect_success HIDEPID_PROCFS 'auto: root lists what that procfs lists root' '
	for i in 1 2 3 4 5 6 7 8 9 10; do
		agrees_with_procfs && break
	done &&
	agrees_with_procfs &&
	grep -x "$ROOTS" list.2 &&
	grep -x "$MINE1" list.2
'

test_expect_success HIDEPID_PROCFS 'auto: a member of the gid sees every process' '
	test "$(errno_as as_member stat "$HPROC/$ROOTS")" = OK &&
	test "$(errno_as as_member stat "$MNT/proc/$ROOTS")" = OK &&
	test "$(errno_as as_member read "$MNT/proc/$ROOTS/cycles")" = OK &&
	listed_as as_member "$MNT/proc" >list &&
	tr " " "\n" <list | grep -x "$ROOTS" &&
	tr " " "\n" <list | grep -x "$MINE1" &&
	cat "$MNT/proc/$ROOTS/cycles" | grep -E "^[0-9]+$"
'

test_expect_success HIDEPID_PROCFS 'setup: hidepid = auto on that procfs, gid = 4343' '
	write_config "$TRASH/auto-gid.conf" "sources.proc=$HPROC" \
		access.gid=$OTHER_GID exited.keep=0 &&
	remount "$TRASH/auto-gid.conf"
'

test_expect_success HIDEPID_PROCFS 'auto with a gid of its own: that gid wins' '
	grep -x "hidepid invisible" "$MNT/info" &&
	grep -x "hidepid_gid $OTHER_GID" "$MNT/info" &&
	test "$(errno_as as_member stat "$MNT/proc/$ROOTS")" = ENOENT &&
	test "$(MEMBER_GID=$OTHER_GID errno_as as_member stat "$MNT/proc/$ROOTS")" = OK &&
	test "$(MEMBER_GID=$OTHER_GID errno_as as_member read "$MNT/proc/$ROOTS/cycles")" = OK &&
	test "$(errno_as as_nobody stat "$MNT/proc/$ROOTS")" = ENOENT &&
	test "$(errno_as as_nobody read "$MNT/proc/$MINE1/cycles")" = OK
'

test_expect_success 'unmounted, the daemon exits 0' '
	TFS_STATUS= &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_done
