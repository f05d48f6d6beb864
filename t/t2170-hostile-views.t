#!/bin/bash
# Hostile tenants, view slots (docs/design.md, "Security": "Seeing"): one
# uid never takes every view, and the views of namespaces that ended go
# with their descriptors.
#
# Under hidepid=invisible, nobody makes 1,100 user and PID namespaces
# of its own (as unshare -Urpf does), each init holding a working
# directory in proc/ of the mount: a view each. It gets at most its
# bound ([limits] reader_views, 64 by default), the rest EAGAIN; and
# meanwhile another uid on the host, another uid in a PID namespace of
# its own, and root in one (with and without a user namespace) still
# read proc/self/cycles. Once the holders are killed, within 30 s the
# server holds no descriptor of their namespaces, and nobody gets as
# many views again. The same holds through 5 kills of the server while
# the holders hold: others read after each, and once the holders are
# gone their views (which a successor found reserved) free again.
# A lowered bound holds, and its refusals are logged once.
TEST_OTHER_USERS=1 # the tenant is nobody: a trash it reaches
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
test_description='Hostile tenants: one uid taking views of 1,100 PID
namespaces gets its bound, others and root still get theirs, and the
views of ended namespaces go with their descriptors, through server
kills.'
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIRECTORY/lib-restart.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot read as other users"
test_have_prereq SETPRIV || skip_all "no setpriv (util-linux)"
test_have_prereq UNSHARE || skip_all "no PID namespaces here"
export MNT TRASH

NOBODY=$(id -u nobody)
# Other users, with no entry in /etc/passwd: a uid is all it takes.
OTHER=54321
HOST_OTHER=54322
FLOOD=1100
# [limits] reader_views by default (timingfs(8)).
UID_VIEWS=64
# Where nobody's namespaces take their views.
FLOOD_DIR=$MNT/proc

# flood NAME: nobody's FLOOD namespaces in the background, holding
# until release; its line in NAME.out, the holders' pids in NAME.pids,
# their namespaces (as the server's descriptors name them) in NAME.ns;
# $FLOOD_PID (setpriv executes the helper: $! is the helper).
flood() {
	: >"$1.pids" && chmod 666 "$1.pids" &&
	{ setpriv --reuid="$NOBODY" --regid="$NOBODY" --clear-groups \
		"$BIN/helper-nsholders" $FLOOD "$FLOOD_DIR" "$TRASH/$1.pids" \
		>"$1.out" 2>"$1.err" & } &&
	FLOOD_PID=$! &&
	kill_at_exit $FLOOD_PID &&
	wait_file "$1.out" 1 120 &&
	cat "$1.out" "$1.err" &&
	while read -r p; do
		readlink "/proc/$p/ns/pid" || return 1
	done <"$1.pids" >"$1.ns" &&
	test "$(wc -l <"$1.ns")" = "$(sed -n "s/^ok \([0-9]*\) .*/\1/p" "$1.out")"
}

# flood_bounded NAME: nobody got its views, no more than its bound,
# and the rest were refused EAGAIN.
flood_bounded() {
	local ok refused
	ok=$(sed -n "s/^ok \([0-9]*\) .*/\1/p" "$1.out") &&
	refused=$(sed -n "s/.* refused \([0-9]*\) .*/\1/p" "$1.out") &&
	test "$ok" -ge 1 && test "$ok" -le $UID_VIEWS &&
	test $((ok + refused)) = $FLOOD &&
	grep -q " errno EAGAIN$" "$1.out"
}

# flood_again NAME: within 30 s, a flood (NAME) in which nobody gets as
# many views as in the first (the slots of the views of namespaces that
# ended free a few seconds after: views_reap()); a flood that gets
# fewer is released, and another made 3 s later (VIEW_IDLE_S: its own
# views, which meanwhile held slots, free by then too).
flood_again() {
	local end
	test_now_us_
	end=$((test_now_us_ + 30000000))
	while :; do
		flood "$1" && flood_bounded "$1" || return 1
		test "$(cat "$1.out")" = "$(cat one.out)" && return 0
		test_now_us_
		if [ "$test_now_us_" -ge "$end" ]; then
			echo "waited 30 s for nobody to get its views again"
			return 1
		fi
		release && sleep 3 || return 1
	done
}

# release: the holders of the last flood killed, the helper reaped.
release() {
	kill -TERM "$FLOOD_PID" &&
	wait "$FLOOD_PID"
}

# others_read: every other reader reads proc/self/cycles, a number.
others_read() {
	local who out
	for who in host-other ns-other ns-root userns-root; do
		case $who in
		host-other) out=$(bounded 30 setpriv --clear-groups --reuid=$HOST_OTHER --regid=$HOST_OTHER cat "$MNT/proc/self/cycles" 2>&1) ;;
		ns-other) out=$(bounded 30 setpriv --clear-groups --reuid=$OTHER --regid=$OTHER unshare -Urpf cat "$MNT/proc/self/cycles" 2>&1) ;;
		ns-root) out=$(bounded 30 unshare -pf cat "$MNT/proc/self/cycles" 2>&1) ;;
		userns-root) out=$(bounded 30 unshare -Urpf cat "$MNT/proc/self/cycles" 2>&1) ;;
		esac
		echo "$who: $out"
		case $out in
		'' | *[!0-9]*) return 1 ;;
		esac
	done
}

# server_ns_fds NSFILE: the server's descriptors of the namespaces in
# NSFILE, one a line.
server_ns_fds() {
	local srv
	srv=$(live_server "$TFS_PID")
	test -n "$srv" || return 1
	ls -l "/proc/$srv/fd" | grep -o 'pid:\[[0-9]*\]' |
		grep -Fxf "$1" || :
}

no_ns_fds() {
	test -z "$(server_ns_fds "$1")"
}

# none_held NSFILE: within 30 s the server holds no descriptor of them.
none_held() {
	wait_for 30 no_ns_fds "$1" || {
		echo "the server still holds $(server_ns_fds "$1" | wc -l) of them"
		return 1
	}
}

test_expect_success 'setup: mount, hidepid=invisible' '
	write_config "$TRASH/inv.conf" access.hidepid=invisible &&
	mount_timingfs "$TRASH/inv.conf" -o allow_other &&
	others_read
'

test_expect_success 'nobody in 1,100 namespaces gets its bound, EAGAIN past it; others read' '
	flood one &&
	others_read &&
	flood_bounded one
'

test_expect_success 'the holders gone: their namespaces'"'"' descriptors go' '
	test -s one.ns &&
	test -n "$(server_ns_fds one.ns)" &&
	release &&
	none_held one.ns
'

test_expect_success 'their views free: nobody gets as many again' '
	flood_again two &&
	others_read
'

test_expect_success 'through 5 kills of the server: others read; views of holders gone free' '
	for k in 1 2 3 4 5; do
		wait_successor "$MNT" "$TFS_PID" $k &&
		kill -KILL "$spid" &&
		wait_successor "$MNT" "$TFS_PID" $((k + 1)) &&
		others_read || return 1
	done &&
	release &&
	none_held two.ns &&
	flood_again three &&
	others_read &&
	release &&
	none_held three.ns
'

test_expect_success 'a lowered [limits] reader_views holds; its refusals logged once' '
	write_config "$TRASH/few.conf" access.hidepid=invisible \
		limits.reader_views=8 &&
	mkdir -p "$TRASH/mnt2" &&
	start_timingfs_on TFS2 "$TRASH/mnt2" -c "$TRASH/few.conf" \
		-o allow_other &&
	FLOOD_DIR=$TRASH/mnt2/proc FLOOD=40 UID_VIEWS=8 &&
	flood few &&
	test "$(cat few.out)" = "ok 8 refused 32 errno EAGAIN" &&
	release &&
	test "$(grep -c "views: uid $NOBODY holds 8 views" TFS2.err)" = 1 &&
	unmount_timingfs_on TFS2 "$TRASH/mnt2"
'

test_done
