#!/bin/bash
# Hostile tenants, access (docs/design.md, "Security"): who may see a task
# is decided as procfs decides, side by side with a procfs mounted here
# with the same hidepid= and gid=; a reopen of a file whose number
# another task took is not that task; and no sequence of lookups makes
# the daemon pass over /proc more than once per 10 ms in a view.
#
# The users are this run's own: OWNER (2120000000 + the script's pid)
# and OTHER (2125000000 + it), so that no other script's processes are
# theirs. The targets are a process of OWNER, one of OTHER, one of OWNER
# that is not dumpable (prctl), and a copy of the same helper, setuid
# OTHER, started by OWNER (real uid OWNER, effective and saved OTHER).
# procfs says EPERM where timingfs says EACCES (docs/design.md, "Access:
# hidepid"): the same refusal, compared as one.
test_description='Hostile tenants: access decided as procfs decides,
compared with procfs; a reopened file whose number another task took;
passes over /proc rate-limited per view.'
TEST_OTHER_USERS=1
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot read as other users"
test_have_prereq SETPRIV || skip_all "no setpriv (util-linux)"

OWNER=$((2120000000 + $$))
OTHER=$((2125000000 + $$))
GID=4242
HPROC=$TRASH/hproc
export OWNER OTHER GID HPROC BIN MNT
if ! setpriv --reuid=$OWNER --regid=$OWNER --clear-groups test -x "$MNT"; then
	echo "Bail out! $OWNER cannot reach $MNT (test-lib's TEST_OTHER_USERS)"
	exit 1
fi

trap cleanup_hproc EXIT

as_owner() { setpriv --reuid=$OWNER --regid=$OWNER --clear-groups "$@"; }
as_other() { setpriv --reuid=$OTHER --regid=$OTHER --clear-groups "$@"; }
as_member() { setpriv --reuid=$OWNER --regid=$OWNER --groups=$GID "$@"; }
as_root() { "$@"; }

# look_as WHO DIR FILE PID: what WHO meets of process PID in the proc
# tree DIR: listed or not, then stat and opendir of DIR/PID and a read
# of DIR/PID/FILE (EPERM said as EACCES).
look_as() {
	local who=$1 dir=$2 file=$3 pid=$4 listed=no r
	if $who bash -c "nums \"$dir\"" | tr " " "\n" | grep -qx "$pid"; then
		listed=yes
	fi
	r="listed=$listed"
	r="$r stat=$($who "$BIN/helper-io" errno stat "$dir/$pid")"
	r="$r opendir=$($who "$BIN/helper-io" errno opendir "$dir/$pid")"
	r="$r read=$($who "$BIN/helper-io" errno read "$dir/$pid/$file")"
	echo "$r" | sed "s/EPERM/EACCES/g"
}

# in_table_as WHO PID: yes when PID has lines in proc/table for WHO.
in_table_as() {
	if $1 awk -v p="$2" 'NR > 1 && $1 == p { f = 1 } END { exit !f }' \
		"$MNT/proc/table"; then
		echo yes
	else
		echo no
	fi
}

# matrix MODE: every reader and target, procfs's answer (expect) and
# timingfs's (actual); the table holds a process where procfs lets the
# reader enter its directory.
matrix() {
	local who t pid p
	: >expect && : >actual
	for who in as_owner as_other as_member as_root; do
		for t in T_OWN T_OTHER T_NODUMP T_SETUID; do
			pid=${!t}
			p=$(look_as $who "$HPROC" stat "$pid")
			echo "$1 $who $t: $p" >>expect
			echo "$1 $who $t: $(look_as $who "$MNT/proc" cycles "$pid")" >>actual
			case $p in
			*opendir=OK*) echo "$1 $who $t: table yes" >>expect ;;
			*) echo "$1 $who $t: table no" >>expect ;;
			esac
			echo "$1 $who $t: table $(in_table_as $who "$pid")" >>actual
		done
	done
	test_cmp expect actual
}

# uid_line_is PID R E S: the Uid: line of PID begins with R E S.
uid_line_is() {
	awk -v r="$2" -v e="$3" -v s="$4" \
		'$1 == "Uid:" { ok = ($2 == r && $3 == e && $4 == s) } END { exit !ok }' \
		"/proc/$1/status"
}

# owned_by_root PID: procfs owns PID's files by root, as it does once
# the process is not dumpable (asked afresh at each call of wait_for).
owned_by_root() {
	[ "$(stat -c %u "/proc/$1/stat")" = 0 ]
}

test_expect_success 'setup: four targets' '
	mkdir -p "$TRASH/suid" && chmod 755 "$TRASH/suid" &&
	cp "$BIN/helper-acc-sleep" "$TRASH/suid/sleep-other" &&
	chown $OTHER:$OTHER "$TRASH/suid/sleep-other" &&
	chmod 4755 "$TRASH/suid/sleep-other" &&
	{ setpriv --reuid=$OWNER --regid=$OWNER --clear-groups \
		"$BIN/helper-acc-sleep" >/dev/null 2>&1 & } &&
	T_OWN=$! && kill_at_exit $T_OWN &&
	{ setpriv --reuid=$OTHER --regid=$OTHER --clear-groups \
		"$BIN/helper-acc-sleep" >/dev/null 2>&1 & } &&
	T_OTHER=$! && kill_at_exit $T_OTHER &&
	{ setpriv --reuid=$OWNER --regid=$OWNER --clear-groups \
		"$BIN/helper-acc-sleep" nodump >/dev/null 2>&1 & } &&
	T_NODUMP=$! && kill_at_exit $T_NODUMP &&
	{ setpriv --reuid=$OWNER --regid=$OWNER --clear-groups \
		"$TRASH/suid/sleep-other" >/dev/null 2>&1 & } &&
	T_SETUID=$! && kill_at_exit $T_SETUID &&
	wait_for 10 uid_line_is $T_OWN $OWNER $OWNER $OWNER &&
	wait_for 10 uid_line_is $T_OTHER $OTHER $OTHER $OTHER &&
	wait_for 10 uid_line_is $T_SETUID $OWNER $OTHER $OTHER &&
	wait_for 10 uid_line_is $T_NODUMP $OWNER $OWNER $OWNER &&
	wait_for 10 owned_by_root $T_NODUMP &&
	export T_OWN T_OTHER T_NODUMP T_SETUID
'

test_expect_success 'setup: hidepid = invisible, gid, beside procfs' '
	mkdir -p "$HPROC" &&
	mount -t proc -o hidepid=invisible,gid=$GID proc "$HPROC" &&
	write_config "$TRASH/invisible.conf" access.hidepid=invisible \
		access.gid=$GID exited.keep=0 &&
	mount_timingfs "$TRASH/invisible.conf" -o allow_other
'

test_expect_success 'invisible: every reader sees every target as procfs does' '
	matrix invisible
'

test_expect_success 'setup: hidepid = noaccess, gid, beside procfs' '
	umount "$HPROC" &&
	mount -t proc -o hidepid=noaccess,gid=$GID proc "$HPROC" &&
	unmount_timingfs &&
	write_config "$TRASH/noaccess.conf" access.hidepid=noaccess \
		access.gid=$GID exited.keep=0 &&
	mount_timingfs "$TRASH/noaccess.conf" -o allow_other
'

test_expect_success 'noaccess: every reader sees every target as procfs does' '
	matrix noaccess
'

# The reopen attack, in a PID namespace of its own (numbers small and
# taken again at will by ns_last_pid): OWNER holds O_PATH descriptors
# of proc/A/cycles and proc/A of its own process A; A ends; a process
# of root's takes A's number; OWNER reopens both through /proc/self/fd.
test_expect_success UNSHARE,PYTHON3 'setup: hidepid = invisible again' '
	unmount_timingfs &&
	mount_timingfs "$TRASH/invisible.conf" -o allow_other
'

cat >"$TRASH/reopen.py" <<'PY'
import os, sys
pid = sys.argv[1]
mnt = os.environ["MNT"]
f = os.open("%s/proc/%s/cycles" % (mnt, pid), os.O_PATH)
d = os.open("%s/proc/%s" % (mnt, pid), os.O_PATH)
def reopen():
    out = []
    try:
        with open("/proc/self/fd/%d" % f) as h:
            out.append("file:" + h.read().strip())
    except OSError as e:
        out.append("file:" + __import__("errno").errorcode[e.errno])
    try:
        out.append("dir:" + ",".join(sorted(os.listdir("/proc/self/fd/%d" % d))))
    except OSError as e:
        out.append("dir:" + __import__("errno").errorcode[e.errno])
    return " ".join(out)
print("before " + reopen(), flush=True)
sys.stdin.readline()
print("after " + reopen(), flush=True)
PY

test_expect_success UNSHARE,PYTHON3 'a reopen of a number another task took: ENOENT, never its data' '
	mkfifo "$TRASH/go" && chmod 666 "$TRASH/go" &&
	bounded 60 unshare -p -f --mount-proc bash -c "
		{ setpriv --reuid=\$OWNER --regid=\$OWNER --clear-groups \
			\"\$BIN/helper-acc-sleep\" & } ; a=\$!
		wait_for 10 grep -q \"^Uid:.*\$OWNER\" /proc/\$a/status || exit 1
		{ setpriv --reuid=\$OWNER --regid=\$OWNER --clear-groups \
			/usr/bin/python3 \"\$TRASH/reopen.py\" \$a <\"\$TRASH/go\" >\"\$TRASH/reopen.out\" & } ; r=\$!
		exec 9>\"\$TRASH/go\"
		wait_file \"\$TRASH/reopen.out\" 1 || exit 1
		kill \$a; wait \$a
		echo \$((a - 1)) >/proc/sys/kernel/ns_last_pid
		{ \"\$BIN/helper-acc-sleep\" & } ; b=\$!
		echo \"A \$a B \$b\" >\"\$TRASH/reopen.pids\"
		echo go >&9
		wait \$r
		kill \$b
	" &&
	cat reopen.pids reopen.out &&
	read -r _ a _ b <reopen.pids &&
	test "$a" = "$b" &&
	grep "^before file:[0-9][0-9]* dir:.*cycles" reopen.out &&
	grep -x "after file:ENOENT dir:ENOENT" reopen.out
'

# Lookups of two absent numbers in turn, from a PID namespace, for 2 s:
# passes over /proc (info's pidns_scans, every pass the daemon made) at
# most one per 10 ms, however fast the lookups came. On the ioctl way
# there are none at all. (strace would count them too, but slows the
# daemon down to a lookup per 10 ms by itself.)
scans_now() {
	awk '$1 == "pidns_scans" { print $2 }' "$MNT/info"
}

test_expect_success UNSHARE 'absent numbers in turn: a pass over /proc per 10 ms at most' '
	before=$(scans_now) &&
	test -n "$before" &&
	bounded 60 unshare -p -f --mount-proc bash -c "
		start=\${EPOCHREALTIME/./}
		end=\$((start + 2000000)) n=0
		while [ \${EPOCHREALTIME/./} -lt \$end ]; do
			[ ! -e \$MNT/proc/4000000 ] || exit 1
			[ ! -e \$MNT/proc/4000001 ] || exit 1
			n=\$((n + 2))
		done
		echo \$n \$(( (\${EPOCHREALTIME/./} - start) / 1000 ))" >scan.out &&
	after=$(scans_now) &&
	read -r lookups ms <scan.out &&
	scans=$((after - before)) &&
	echo "$lookups lookups in $ms ms: $scans passes over /proc" &&
	test "$scans" -le $((ms / 10 + 2))
'

test_done
