# test-lib.sh: the shell side of timingfs's tests, in the style of git's
# t/test-lib.sh. A test script (bash) sets test_description, sources
# this file, runs one test_expect_success per test, setup included, and
# ends with test_done; the output is strict TAP, for prove. Scripts run
# from any directory: paths come from $0. After sourcing, the script's
# directory is its trash directory $TRASH.
#
# Tests
#   test_expect_success [PREREQ] 'title' 'body'
#                           the body runs in the script's own shell (so
#                           setup may set variables and start daemons),
#                           as a function (so "return 1" works), in
#                           $TRASH, with its output in $TRASH/test.log,
#                           under a timeout of $TEST_TIMEOUT s. It must
#                           be one &&-chain (chain-lint checks it first);
#                           a loop in it ends its commands with
#                           "|| return 1". PREREQ: see test_have_prereq.
#   test_expect_failure [PREREQ] 'title' 'body'
#                           a known breakage: TAP "# TODO"
#   test_when_finished CMD  run CMD after this test, pass or fail; a
#                           failing CMD fails the test
#   test_done               prints 1..N; exits 1 on failure. First it
#                           runs the function test_before_done if one is
#                           defined: a script that sources another
#                           (t1501 sources t1500) defines it before, so
#                           that its own tests come after the other's
#   skip_all 'why'          prints 1..0 # SKIP why; exits 0
#
# Prerequisites: a test whose prerequisite is missing is skipped with
# the reason, never passed.
#   test_set_prereq NAME    NAME holds
#   test_lazy_prereq NAME 'script'  NAME holds if script succeeds; run
#                           once, on first need, in a directory of its own
#   test_have_prereq P,Q,!R all of them hold (R does not)
#   Predefined lazy: ROOT, FUSE (/dev/fuse and fusermount3), SETPRIV, UNSHARE (PID namespaces work),
#   PYTHON3, BUSYBOX, STRACE, PROMTOOL, MANDOC, SYSTEMD_ANALYZE,
#   SHELLCHECK, SCRIPT (util-linux script), DASH, PERL.
#
# Assertions
#   test_must_fail CMD...   CMD fails by itself: not 0, no signal, found
#   test_expect_code N CMD...  CMD exits N
#   test_cmp EXPECTED ACTUAL   diff -u
#   test_path_is_file / _is_dir / _is_missing PATH
#
# timingfs
#   require_fuse            skip_all without /dev/fuse or fusermount3
#   write_config FILE sect.key=value... a configuration file
#   fixture_config FILE NAME [k=v...]   one for t/fixtures/NAME at 3 GHz
#   start_timingfs ARGS...  run ./timingfs -f ARGS... $MNT in the
#                           background, wait for the mount
#   start_timingfs_on NAME DIR ARGS...  the same for a second daemon on
#                           DIR ($NAME_PID); unmount_timingfs_on NAME DIR
#                           unmounts it ($NAME_STATUS)
#   TEST_DAEMON_NOIOCTL     when set non-empty, start_timingfs and
#                           start_timingfs_on run the daemon under
#                           t/bin/helper-noioctl, as on a kernel without
#                           the nsfs ioctls that translate numbers (before
#                           6.10); the pid is still the daemon's. A daemon
#                           a test runs by "$TIMINGFS" itself is not.
#   TEST_DAEMON_OLDKERNEL   the same with t/bin/helper-oldkernel: as on
#                           a kernel without the mount API and pidfds
#                           (before 5.2)
#   mount_timingfs CONF [ARGS...]       start_timingfs -c CONF ARGS...
#   unmount_timingfs        unmount, reap it: $TFS_STATUS
#   wait_mounted [DIR]      up to 20 s for DIR ($MNT) to be mounted
#   wait_unmounted [DIR]    up to 20 s for it not to be
#   mounts_of DIR           the lines of /proc/self/mounts whose mount
#                           point is DIR (which they write escaped)
#   kill_tree PID [SIGNAL]  signal PID and its descendants
#   kill_at_exit PID        kill_tree PID KILL when the script ends,
#                           however it ends
#   kill_cleanup_pids       do that now (for a script's own cleanup,
#                           before test-lib's); a pid already reaped is
#                           spared (its number may be another's now)
#   wait_pids PID...        wait for each; 1 if any failed
#   wait_file FILE [LINES [SECONDS]]  up to SECONDS (10) s for FILE to
#                           have content (or LINES lines)
#   wait_for SECONDS CMD... up to SECONDS s for CMD to succeed
#   wait_owner PID UID      up to 10 s for PID to be UID's (setpriv)
#   child_of PID            up to 10 s for PID's first child
#   bounded SECONDS CMD...  CMD under timeout(1), ended after SECONDS
#   nums DIR [SKIP]         DIR's numeric entries, one line
#
# Containers made by runc (a busybox-static rootfs, the OCI hook)
#   require_runc            skip_all, saying why, unless runc runs a
#                           container here (and python3 and a static
#                           busybox are there to make its bundle)
#   runc_why                nothing if so, else why not
#   runc_bundle [--no-hook] [--hook-arg ARG]... DIR [CMD...]
#                           a bundle in DIR: rootfs/ of busybox and its
#                           applets, config.json from runc spec running
#                           CMD (sleep 1000), timingfs-oci-hook as its
#                           createRuntime hook, which reaches the
#                           daemon of $TIMINGFS_CONTROL as it is now
#   runc_start NAME DIR     runc run -d of that bundle: $NAME is its
#                           init's host pid, $NAME_ID its container id;
#                           deleted when the script ends, if not before
#   runc_exec NAME CMD...   CMD in the running container, as its root
#   runc_stop NAME          killed (KILL) and deleted; never a failure
#   runc_mountinfo NAME     the mountinfo of its init, as it sees it
#
# Waits. Every wait for something to happen polls for it, up to a bound
# that is a margin for a loaded machine (make check-stress runs the
# suite under stress-ng), never how long the thing takes: 10 s at least
# for what takes milliseconds. A sleep only lets time pass that must
# (a cache timeout), and what follows it assumes no upper bound. A wait
# that gives up says, on one line, what it waited for and how long.
#
# A daemon or helper a test starts in the background is a child of the
# script's shell: wait for it by its pid, never with a bare "wait".
#
# Every script gets a trash directory $TRASH (t/trash.NAME) and a mount
# point $MNT in it, always unmounted on exit, and any daemon it started
# killed. The trash directory is removed when every test passed and kept,
# with its path printed, when one failed.
#
# Options (or the variables): -v, --verbose (TEST_VERBOSE=1) shows every
# test's output, not only that of failures; -i, --immediate stops at the
# first failure; -d, --debug keeps the trash directory; --no-chain-lint
# (TEST_CHAIN_LINT=0); -h, --help prints the description.

set -u

TEST_NAME=$(basename "$0" .t)
TEST_DIRECTORY=$(cd "$(dirname "$0")" && pwd)
SRC_ROOT=$(cd "$TEST_DIRECTORY/.." && pwd)
FIXTURES=$TEST_DIRECTORY/fixtures
BIN=$TEST_DIRECTORY/bin
TIMINGFS=$SRC_ROOT/timingfs
TIMINGFSCTL=$SRC_ROOT/timingfsctl
# Each script's daemons answer timingfsctl on sockets of their own
# (start_timingfs_on), never on the machine's (/run/timingfs.sock); a
# short path, as a socket's must be (108 bytes).
TIMINGFS_CONTROL=/tmp/timingfs-t.$$.sock
# NAME:DIR of each daemon start_timingfs_on started but start_timingfs's.
TEST_MOUNTS=
TRASH=$TEST_DIRECTORY/trash.$TEST_NAME
MNT=$TRASH/mnt
TEST_TIMEOUT=${TEST_TIMEOUT:-60}
TEST_VERBOSE=${TEST_VERBOSE:-}
TEST_IMMEDIATE=${TEST_IMMEDIATE:-}
TEST_DEBUG=${TEST_DEBUG:-}
TEST_CHAIN_LINT=${TEST_CHAIN_LINT:-1}
TFS_PID=
TFS_STATUS=
# A table's header (proc/table, threads.table): the one place under t/
# that writes it (the C helpers read it from the environment,
# t/lib-table.h). TABLE_VALUES: its numbers, the columns between pid
# and tid and the name, which are also the names of a task's value
# files and the keys of its times file, in that order.
TABLE_HEADER='pid tid cycles kernel_time user_time creation_time exit_time name'
TABLE_VALUES=${TABLE_HEADER#pid tid }
TABLE_VALUES=${TABLE_VALUES% name}
# TABLE_LINE: a line of a table after the header, as an extended regular
# expression (grep -Ex, awk's ~ between ^ and $, Python's re.fullmatch
# with \s for [:space:]; spelled out, as mawk has no {6}): seven integers
# and a name, escaped so that it holds no blank.
TABLE_LINE='[0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+ [^[:space:]]+'
export TEST_DIRECTORY SRC_ROOT FIXTURES BIN TIMINGFS TIMINGFSCTL TRASH MNT
export TABLE_HEADER TABLE_VALUES TABLE_LINE
export TIMINGFS_CONTROL

if [ -z "${test_description:-}" ]; then
	echo "Bail out! $0 sets no test_description"
	exit 1
fi

for test_arg_ in "$@"; do
	case $test_arg_ in
	-v | --verbose) TEST_VERBOSE=1 ;;
	-i | --immediate) TEST_IMMEDIATE=1 ;;
	-d | --debug) TEST_DEBUG=1 ;;
	--no-chain-lint) TEST_CHAIN_LINT=0 ;;
	-h | --help)
		printf '%s\n' "$test_description"
		exit 0
		;;
	*)
		echo "Bail out! unknown option $test_arg_"
		exit 1
		;;
	esac
done

test_count=0
test_failures=0
test_finished_=

# kill_tree PID [SIGNAL]: PID and everything it started, children first
# stopped so that none escapes to init meanwhile.
kill_tree() {
	local pid=$1 sig=${2:-TERM} child
	kill -STOP "$pid" 2>/dev/null
	for child in $(ps -o pid= --ppid "$pid" 2>/dev/null); do
		kill_tree "$child" "$sig"
	done
	kill -"$sig" "$pid" 2>/dev/null
	kill -CONT "$pid" 2>/dev/null
}

# is_running PID: alive, not a zombie waiting to be reaped.
is_running() {
	case $(ps -o stat= -p "$1" 2>/dev/null) in
	"" | Z*) return 1 ;;
	esac
}

# mounts_of DIR: the lines of /proc/self/mounts whose mount point is
# DIR, each as the kernel writes it. It writes a space in a path as
# "\040" (tab, newline and backslash too): to compare, they are decoded,
# backslash last, and DIR comes from the environment, which awk -v would
# unescape.
mounts_of() {
	MOUNTS_OF_DIR=$1 awk '
		{
			m = $2
			gsub(/\\040/, " ", m); gsub(/\\011/, "\t", m)
			gsub(/\\012/, "\n", m); gsub(/\\134/, "\\", m)
			if (m == ENVIRON["MOUNTS_OF_DIR"]) print
		}' /proc/self/mounts
}

# is_mounted DIR: whether DIR is a mount point.
is_mounted() {
	[ -n "$(mounts_of "$1")" ]
}

# test_say_ MESSAGE: MESSAGE on stderr, and in the test's log too when
# stderr goes elsewhere (a caller that keeps a command's stderr in a
# file of its own), so that a failing test shows it. A reader that may
# not write the log (another user) has it on stderr alone.
test_say_() {
	echo "$*" >&2
	[ /proc/self/fd/2 -ef "$TRASH/test.log" ] ||
		echo "$*" 2>/dev/null >>"$TRASH/test.log"
	return 0
}

# test_now_us_: the wall clock in microseconds, in $test_now_us_ (no
# process started to ask).
test_now_us_() {
	test_now_us_=${EPOCHREALTIME//[!0-9]/}
}

# test_poll_ SECONDS CMD...: CMD, every 50 ms, until it succeeds, for
# up to SECONDS s of the wall clock; CMD is tried once more when they
# are over. 1, silently, if it never succeeded: for the waits below,
# which say what they waited for.
test_poll_() {
	local secs=$1 end
	shift
	test_now_us_
	end=$((test_now_us_ + secs * 1000000))
	until "$@"; do
		test_now_us_
		[ "$test_now_us_" -lt "$end" ] || return 1
		sleep 0.05
	done
}

# wait_for SECONDS CMD...: up to SECONDS s (a margin for a loaded
# machine, never how long it should take) for CMD to succeed, tried
# every 50 ms. 1 if it never did, and says so: "waited SECONDS s for:
# CMD".
wait_for() {
	test_poll_ "$@" && return 0
	test_say_ "waited $1 s for: ${*:2}"
	return 1
}

# wait_mounted [DIR]: up to 20 s for DIR ($MNT) to be a mount point.
wait_mounted() {
	local dir=${1:-$MNT}
	test_poll_ 20 is_mounted "$dir" && return 0
	test_say_ "waited 20 s for $dir to be mounted; it is not"
	return 1
}

# wait_unmounted [DIR]: up to 20 s for DIR ($MNT) to be no mount point
# (a daemon that unmounts as it exits, or fusermount3's auto_unmount).
wait_unmounted() {
	local dir=${1:-$MNT}
	test_poll_ 20 test_not_ is_mounted "$dir" && return 0
	test_say_ "waited 20 s for $dir to be unmounted; still mounted: $(mounts_of "$dir")"
	return 1
}

# test_not_ CMD...: CMD failed (a negated predicate for wait_for).
test_not_() {
	! "$@"
}

CLEANUP_PIDS=
kill_at_exit() {
	CLEANUP_PIDS="$CLEANUP_PIDS $1"
}

# start_many N OUT: a process of N threads that sleep (helper-many) in
# the background, its pid in $MANY, killed at exit; 0 once it has
# written "PID ready" to the file OUT (up to 30 s).
start_many() {
	{ "$BIN/helper-many" "$1" >"$2" & } &&
	MANY=$! &&
	kill_at_exit "$MANY" &&
	wait_file "$2" "" 30 &&
	test "$(cat "$2")" = "$MANY ready"
}

# children_of PID: the pids of PID's children, on one line, from
# procfs (no process started to ask).
children_of() {
	local c=
	read -r c <"/proc/$1/task/$1/children" 2>/dev/null
	echo "$c"
}

# server_of PID: the server of the timingfs supervisor PID (its child
# named timingfs; fusermount3 may be another child), or nothing.
server_of() {
	pgrep -P "$1" -x timingfs | head -n 1
}

# kill_daemon PID: SIGKILL to the timingfs supervisor PID and its server
# at once (the server stopped first, so that it cannot start a new
# supervisor in between): the only way its mounts are lost.
kill_daemon() {
	local srv
	srv=$(server_of "$1")
	[ -n "$srv" ] && kill -STOP "$srv"
	kill -KILL "$1" $srv
}

# in_ns INIT CMD...: CMD in the PID and mount namespaces of INIT.
in_ns() {
	local init=$1
	shift
	nsenter -t "$init" -p -m "$@"
}

# child_of PID: the (first) child of PID, waiting up to 10 s for it
# (a margin for a loaded machine); says so when none came.
child_of() {
	local c
	test_poll_ 10 test_has_child_ "$1" && { echo "$c"; return 0; }
	test_say_ "waited 10 s for a child of $1: none"
	return 1
}

# test_has_child_ PID: PID has a child, whose pid is left in $c.
test_has_child_() {
	c=$(children_of "$1")
	c=${c%% *}
	[ -n "$c" ]
}

# wait_owner PID UID: up to 10 s for PID to be owned by UID (a setpriv
# that has switched users before it runs the command).
wait_owner() {
	test_poll_ 10 test_owned_by_ "$1" "$2" && return 0
	test_say_ "waited 10 s for $1 to be owned by uid $2; it is by uid $(stat -c %u "/proc/$1" 2>&1)"
	return 1
}

test_owned_by_() {
	[ "$(stat -c %u "/proc/$1" 2>/dev/null)" = "$2" ]
}

# bounded SECONDS CMD...: CMD under timeout(1), which ends it (TERM)
# after SECONDS s: a margin for a loaded machine, for a command that
# should end by itself at once (a daemon that refuses to start). CMD's
# exit status, 124 when it had to be ended, and then it says so.
bounded() {
	local secs=$1 rc
	shift
	timeout "$secs" "$@"
	rc=$?
	[ "$rc" != 124 ] ||
		test_say_ "waited $secs s for $1 to end by itself; timeout ended it: $*"
	return "$rc"
}

# kill_cleanup_pids: what kill_at_exit named, killed and reaped (no
# "Killed" from the shell); a script's own cleanup may call it first.
# Only a pid that is still a child of this shell: one already reaped
# may have been given to another process meanwhile.
kill_cleanup_pids() {
	local pid children
	children=" $(children_of $$) "
	for pid in $CLEANUP_PIDS; do
		case $children in *" $pid "*) ;; *) continue ;; esac
		kill_tree "$pid" KILL
		wait "$pid" 2>/dev/null
	done
	CLEANUP_PIDS=
}

# wait_pids PID...: wait for each of them (children of this shell,
# started in the background); 1 if any of them failed, which it names.
wait_pids() {
	local pid rc=0 st
	for pid in "$@"; do
		wait "$pid"
		st=$?
		[ "$st" = 0 ] || { echo "pid $pid exited $st" && rc=1; }
	done
	return "$rc"
}

# cleanup_hproc: cleanup, for a script that mounts a procfs of its own
# at $HPROC (t1510, t2120): that procfs goes once the daemon that reads
# it is gone, and before cleanup removes $TRASH, which must not recurse
# into it.
cleanup_hproc() {
	kill_cleanup_pids
	unmount_timingfs >/dev/null 2>&1
	if is_mounted "$HPROC"; then
		umount "$HPROC" 2>/dev/null || umount -l "$HPROC"
	fi
	is_mounted "$HPROC" || cleanup
}

# cleanup: at exit, however the script ends. The trash directory goes
# only when test_done saw every test pass (and not with --debug); a
# failing script keeps it for a look, and says where.
cleanup() {
	local m
	kill_cleanup_pids
	runc_cleanup_
	unmount_timingfs >/dev/null 2>&1
	# The other daemons' mounts, left by a test that failed.
	for m in $TEST_MOUNTS; do
		! is_mounted "${m#*:}" ||
			unmount_timingfs_on "${m%%:*}" "${m#*:}" >/dev/null 2>&1
	done
	rm -f "$TIMINGFS_CONTROL" "${TIMINGFS_CONTROL%.sock}".*.sock
	cd "$TEST_DIRECTORY" || return
	# Never recurse into a mount that could not be undone.
	is_mounted "$MNT" && return
	if [ "$test_finished_" = passed ] && [ -z "$TEST_DEBUG" ]; then
		rm -rf "$TRASH"
	else
		echo "# trash directory kept: $TRASH"
	fi
}

# A script whose tests run things as another user (setpriv) sets
# TEST_OTHER_USERS=1 before it sources this file. Its trash directory is
# then made where every user can reach it, outside the checkout, whose
# path may pass a directory of mode 0700 (root's home): a new directory
# of mode 0755 under TEST_SHARED_ROOT (default /tmp), removed like any
# trash directory. t/bin and scripts/ are copied into it, and BIN and
# SCRIPTS name the copies, so that the other user can run them too.
SCRIPTS=$SRC_ROOT/scripts
if [ -n "${TEST_OTHER_USERS:-}" ]; then
	TRASH=$(mktemp -d "${TEST_SHARED_ROOT:-/tmp}/timingfs-$TEST_NAME.XXXXXX") &&
		chmod 755 "$TRASH" &&
		cp -pR "$BIN" "$TRASH/bin" &&
		cp -pR "$SRC_ROOT/scripts" "$TRASH/scripts" || {
		echo "Bail out! cannot make a trash directory other users reach"
		exit 1
	}
	MNT=$TRASH/mnt
	BIN=$TRASH/bin
	SCRIPTS=$TRASH/scripts
	export TRASH MNT BIN SCRIPTS
	# A sanitized build reads its suppressions as the other user too.
	case ${ASAN_OPTIONS:-} in
	*suppressions=*)
		cp "$TEST_DIRECTORY/asan.supp" "$TRASH/asan.supp" &&
			ASAN_OPTIONS=$(printf '%s' "$ASAN_OPTIONS" |
				sed "s|suppressions='[^']*'|suppressions='$TRASH/asan.supp'|") &&
			export ASAN_OPTIONS || exit 1
		;;
	esac
elif [ -e "$TRASH" ]; then
	fusermount3 -u -z "$MNT" 2>/dev/null
	is_mounted "$MNT" && {
		echo "Bail out! $MNT is still mounted from an earlier run"
		exit 1
	}
	rm -rf "$TRASH"
fi
mkdir -p "$MNT" || exit 1
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$TRASH" || exit 1

skip_all() {
	echo "1..0 # SKIP $*"
	test_finished_=passed
	exit 0
}

require_fuse() {
	[ -c /dev/fuse ] || skip_all "no /dev/fuse"
	command -v fusermount3 >/dev/null 2>&1 || skip_all "no fusermount3"
	if [ ! -x "$TIMINGFS" ]; then
		echo "Bail out! no $TIMINGFS: run make first"
		exit 1
	fi
}

# Prerequisites. test_prereq_set_ holds the names that hold, as
# " A B "; test_prereq_unset_ those that were tried and do not.
test_prereq_set_=" "
test_prereq_unset_=" "
declare -A test_prereq_lazy_

test_set_prereq() {
	test_prereq_set_="$test_prereq_set_$1 "
}

# test_lazy_prereq NAME SCRIPT: NAME holds when SCRIPT, run once on
# first need in a subshell in a directory of its own, succeeds.
test_lazy_prereq() {
	test_prereq_lazy_[$1]=$2
}

# test_have_prereq P[,Q,!R...]: every one holds (R does not). The names
# that do not hold are left in $test_missing_prereq_.
test_have_prereq() {
	local list name negate have ok=0 dir
	IFS=, read -r -a list <<<"$1"
	test_missing_prereq_=
	for name in "${list[@]}"; do
		negate=
		case $name in !*) negate=1 name=${name#!} ;; esac
		case "$test_prereq_set_$test_prereq_unset_" in
		*" $name "*) ;;
		*)
			if [ -n "${test_prereq_lazy_[$name]+set}" ]; then
				dir=$TRASH/prereq.$name
				mkdir -p "$dir"
				if (cd "$dir" && eval "${test_prereq_lazy_[$name]}") \
					>/dev/null 2>&1 </dev/null; then
					test_set_prereq "$name"
				else
					test_prereq_unset_="$test_prereq_unset_$name "
				fi
				rm -rf "$dir"
			else
				echo "Bail out! unknown prerequisite $name"
				exit 1
			fi
			;;
		esac
		have=
		case "$test_prereq_set_" in *" $name "*) have=1 ;; esac
		# It holds when it is set and wanted, or unset and not.
		[ "$have" != "$negate" ] && continue
		test_missing_prereq_="${test_missing_prereq_:+$test_missing_prereq_,}${negate:+!}$name"
		ok=1
	done
	return "$ok"
}

test_lazy_prereq ROOT '[ "$(id -u)" = 0 ]'
test_lazy_prereq FUSE '[ -c /dev/fuse ] && command -v fusermount3'
test_lazy_prereq SETPRIV 'command -v setpriv'
test_lazy_prereq UNSHARE '
	command -v unshare && command -v nsenter &&
	unshare -p -f --mount-proc true
'
test_lazy_prereq PYTHON3 'python3 -c 1'
test_lazy_prereq BUSYBOX 'command -v busybox'
test_lazy_prereq STRACE 'command -v strace'
test_lazy_prereq PROMTOOL 'command -v promtool'
test_lazy_prereq MANDOC 'command -v mandoc'
test_lazy_prereq SYSTEMD_ANALYZE 'command -v systemd-analyze'
test_lazy_prereq SHELLCHECK 'command -v shellcheck'
test_lazy_prereq SCRIPT 'script -q -c true /dev/null'
test_lazy_prereq DASH 'command -v dash'
test_lazy_prereq PERL 'command -v perl'
# The daemon built under the sanitizers (make check-sanitize): bounds of
# time and of memory say nothing there.
test_lazy_prereq ASAN 'grep -q __asan_init "$TIMINGFS"'

# test_when_finished CMD...: CMD runs after the test, pass or fail, the
# last registered first; if it fails, so does the test.
test_cleanup_=
test_when_finished() {
	if [ "${BASH_SUBSHELL:-0}" != 0 ]; then
		echo "test_when_finished in a subshell does nothing" >&2
		return 1
	fi
	test_cleanup_="{ $*
} && (exit \"\$test_rc_\"); test_rc_=\$?; $test_cleanup_"
}

# test_must_fail CMD...: CMD ran and failed on its own: not 0, not
# killed by a signal, not "not found" or "cannot run".
test_must_fail() {
	local rc
	"$@"
	rc=$?
	if [ "$rc" = 0 ]; then
		echo "test_must_fail: command succeeded: $*" >&2
		return 1
	elif [ "$rc" -gt 128 ] && [ "$rc" -le 192 ]; then
		echo "test_must_fail: killed by signal $((rc - 128)): $*" >&2
		return 1
	elif [ "$rc" = 126 ] || [ "$rc" = 127 ]; then
		echo "test_must_fail: could not run: $*" >&2
		return 1
	fi
	return 0
}

# test_expect_code N CMD...: CMD exits with N.
test_expect_code() {
	local want=$1 rc
	shift
	"$@"
	rc=$?
	[ "$rc" = "$want" ] && return 0
	echo "test_expect_code: exit $rc, not $want: $*" >&2
	return 1
}

test_path_is_file() {
	[ -f "$1" ] || { echo "no file $1" >&2 && return 1; }
}

test_path_is_dir() {
	[ -d "$1" ] || { echo "no directory $1" >&2 && return 1; }
}

test_path_is_missing() {
	[ ! -e "$1" ] || { echo "$1 exists" >&2 && return 1; }
}

# test_chain_lint_ BODY: 0 when BODY is one &&-chain. As in git: a
# chain is short-circuited by a first link that fails with 117, and only
# a broken link lets a later command run and the status through. So
# that such a command can do no harm, the check runs in a bare shell of
# its own: no PATH, none of the script's functions or variables, $TRASH
# and $MNT a scratch directory, the builtins that act on processes
# stubbed, no file overwritten (noclobber).
test_chain_lint_() {
	local out dir=$TRASH/.chain-lint
	mkdir -p "$dir" || return 1
	out=$(cd "$dir" && env -i PATH=/nonexistent TRASH="$dir" MNT="$dir" \
		HOME="$dir" /bin/bash --noprofile --norc -o noclobber -c '
		kill() { :; } && wait() { :; } && trap() { :; } &&
		ulimit() { :; } && umask() { :; } && cd() { :; }
		(exit 117) && '"$1"'
		echo OK-$? >&3' 3>&1 >/dev/null 2>&1 </dev/null)
	rm -rf "$dir"
	[ "$out" = OK-117 ]
}

# test_eval_ BODY: the body as a function, in this shell.
test_eval_() {
	eval "test_body_() {
$1
}"
	test_body_
}

# test_watchdog_ SECONDS: in the background, kill what the test started
# (the shell's children that were not there before it) after SECONDS,
# and this shell itself if that was not enough; first it logs what the
# test was running, which is what it waited for. test_watchdog_stop_
# ends it.
test_watchdog_() {
	local before self=$$ traps
	before=" $(children_of $$) "
	traps=$(trap -p EXIT INT TERM)
	# A subshell runs its parent's traps for a signal that comes before
	# it has reset them: the watchdog, stopped at once after a quick
	# test, would run the script's cleanup. So it is made without them.
	trap - EXIT INT TERM
	(
		trap 'kill "$sleeper" 2>/dev/null; exit 0' TERM
		sleep "$1" &
		sleeper=$!
		wait "$sleeper" || exit 0
		mine=
		for c in $(children_of "$self"); do
			case $before in *" $c "*) continue ;; esac
			[ "$c" = "$BASHPID" ] || mine="$mine $c"
		done
		{
			if [ -n "$mine" ]; then
				echo "timed out after $1 s, waiting for:"
				for c in $mine; do
					ps -o pid=,args= --ppid "$c" -p "$c"
				done
			else
				echo "timed out after $1 s, in the shell itself"
			fi
		} >>"$TRASH/test.log"
		for c in $mine; do
			kill_tree "$c" TERM
		done
		sleep 5
		kill -TERM "$self"
	) >/dev/null 2>&1 </dev/null &
	test_watchdog_pid_=$!
	eval "$traps"
}

test_watchdog_stop_() {
	[ -n "${test_watchdog_pid_:-}" ] || return 0
	kill -TERM "$test_watchdog_pid_" 2>/dev/null
	wait "$test_watchdog_pid_" 2>/dev/null
	test_watchdog_pid_=
}

# test_run_ BODY: 0 when the test passed; its output in $TRASH/test.log.
test_run_() {
	local log=$TRASH/test.log
	test_rc_=0
	if [ "$TEST_CHAIN_LINT" != 0 ] && ! test_chain_lint_ "$1"; then
		echo "broken &&-chain (or a failing first link): chain-lint" >"$log"
		return 1
	fi
	test_cleanup_=:
	cd "$TRASH" || return 1
	test_watchdog_ "$TEST_TIMEOUT"
	# An unset variable in a body is empty, as in git's tests: under
	# set -u it would end the whole script.
	set +u
	: >"$log"
	test_eval_ "$1" >>"$log" 2>&1 </dev/null
	test_rc_=$?
	test_finish_
	return "$test_rc_"
}

# test_finish_: the cleanups of test_when_finished (each updates
# test_rc_), the watchdog stopped, back in $TRASH.
test_finish_() {
	eval "$test_cleanup_" >>"$TRASH/test.log" 2>&1 </dev/null
	test_cleanup_=:
	test_watchdog_stop_
	set -u
	cd "$TRASH" || test_rc_=1
}

# A body that bash aborts (an arithmetic or expansion error) returns to
# the top of the script without a word: the next test, or test_done,
# reports it as failed, after its cleanups.
test_running_=
test_check_aborted_() {
	[ -n "$test_running_" ] || return 0
	test_running_=
	test_rc_=1
	test_finish_
	test_failures=$((test_failures + 1))
	echo "not ok $test_count - $test_title_ # aborted by the shell"
	test_diagnose_ "$test_body_text_"
}

test_diagnose_() {
	sed -e 's/^/#   /' "$TRASH/test.log"
	printf '%s\n' "$1" | sed -e 's/^/#	/'
}

# test_start_ [PREREQ] TITLE BODY: sets test_title_ and test_body_text_;
# 1 when the test is skipped (and says so).
test_start_() {
	test_check_aborted_
	test_count=$((test_count + 1))
	test_prereq_=
	if [ $# = 3 ]; then
		test_prereq_=$1
		shift
	elif [ $# != 2 ]; then
		echo "Bail out! test $test_count: test_expect_* needs [PREREQ] TITLE BODY"
		exit 1
	fi
	test_title_=$1
	test_body_text_=$2
	if [ -n "$test_prereq_" ] && ! test_have_prereq "$test_prereq_"; then
		echo "ok $test_count # skip $test_title_ (missing $test_missing_prereq_)"
		return 1
	fi
	return 0
}

test_expect_success() {
	test_start_ "$@" || return 0
	test_running_=1
	if test_run_ "$test_body_text_"; then
		test_running_=
		echo "ok $test_count - $test_title_"
		[ -z "$TEST_VERBOSE" ] || sed -e 's/^/#   /' "$TRASH/test.log"
	else
		test_running_=
		test_failures=$((test_failures + 1))
		echo "not ok $test_count - $test_title_"
		test_diagnose_ "$test_body_text_"
		if [ -n "$TEST_IMMEDIATE" ]; then
			echo "1..$test_count"
			exit 1
		fi
	fi
}

# A known breakage: reported, not counted as a failure.
test_expect_failure() {
	test_start_ "$@" || return 0
	test_running_=1
	test_run_ "$test_body_text_"
	test_rc_=$?
	test_running_=
	if [ "$test_rc_" = 0 ]; then
		echo "ok $test_count - $test_title_ # TODO known breakage vanished"
	else
		echo "not ok $test_count - $test_title_ # TODO known breakage"
	fi
}

test_done() {
	if declare -F test_before_done >/dev/null; then
		test_before_done
	fi
	test_check_aborted_
	echo "1..$test_count"
	if [ "$test_failures" = 0 ]; then
		test_finished_=passed
		exit 0
	fi
	exit 1
}

# write_config FILE groups.max_size=16 format.units=unix ...
write_config() {
	local file=$1 kv section key
	shift
	: >"$file"
	for kv in "$@"; do
		section=${kv%%.*}
		key=${kv#*.}
		printf '[%s]\n%s\n' "$section" "${key%%=*} = ${key#*=}" >>"$file"
	done
}

# fixture_config FILE NAME [key=value ...]: the fixture's roots, 3 GHz.
fixture_config() {
	local file=$1 name=$2
	shift 2
	write_config "$file" "sources.proc=$FIXTURES/$name/proc" \
		"sources.sys=$FIXTURES/$name/sys" clock.tsc_hz=3000000000 "$@"
}

# start_timingfs ARGS...: ./timingfs -f ARGS... $MNT, in the background;
# returns once it is mounted (up to 20 s, a margin for a loaded machine),
# 1 if it exits first or is not mounted by then (which it says).
start_timingfs() {
	start_timingfs_on TFS "$MNT" "$@"
}

# start_timingfs_on NAME DIR ARGS...: as start_timingfs, for a second
# daemon on DIR: its pid in ${NAME}_PID, its stderr in $TRASH/NAME.err.
# With TEST_DAEMON_NOIOCTL set non-empty, the daemon runs under
# helper-noioctl, which execs it: $! is the daemon all the same; with
# TEST_DAEMON_OLDKERNEL, under helper-oldkernel likewise.
start_timingfs_on() {
	local name=$1 dir=$2 pid status test_started_
	local control=$TIMINGFS_CONTROL
	shift 2
	# The daemon of start_timingfs answers on $TIMINGFS_CONTROL, each
	# other one on a socket of its own: no daemon finds another there.
	[ "$name" = TFS ] || control=${TIMINGFS_CONTROL%.sock}.$name.sock
	: >"$TRASH/$name.err"
	if [ -n "${TEST_DAEMON_NOIOCTL:-}" ]; then
		TIMINGFS_CONTROL=$control "$BIN/helper-noioctl" "$TIMINGFS" \
			-f "$@" "$dir" 2>>"$TRASH/$name.err" &
	elif [ -n "${TEST_DAEMON_OLDKERNEL:-}" ]; then
		TIMINGFS_CONTROL=$control "$BIN/helper-oldkernel" "$TIMINGFS" \
			-f "$@" "$dir" 2>>"$TRASH/$name.err" &
	else
		TIMINGFS_CONTROL=$control "$TIMINGFS" -f "$@" "$dir" \
			2>>"$TRASH/$name.err" &
	fi
	pid=$!
	printf -v "${name}_PID" %s "$pid"
	[ "$name" = TFS ] || TEST_MOUNTS="$TEST_MOUNTS $name:$dir"
	# What the poll saw decides, never a look after it: a mount seen
	# may be gone the moment after (a stale one the daemon clears).
	test_started_=
	test_poll_ 20 test_mounted_or_gone_ "$dir" "$pid"
	case $test_started_ in
	mounted) return 0 ;;
	gone)
		unmount_timingfs_on "$name" "$dir"
		status=${name}_STATUS
		test_say_ "timingfs (pid $pid) exited ${!status} before it mounted on $dir, its stderr:"
		;;
	*)
		test_say_ "waited 20 s for timingfs (pid $pid) to mount on $dir; it has not (ended now), its stderr:"
		kill_tree "$pid" TERM
		unmount_timingfs_on "$name" "$dir"
		;;
	esac
	cat "$TRASH/$name.err" >&2
	return 1
}

# test_mounted_or_gone_ DIR PID: DIR is mounted, or PID is no more;
# which of them in $test_started_ (mounted, gone).
test_mounted_or_gone_() {
	if is_mounted "$1"; then
		test_started_=mounted
	elif ! is_running "$2"; then
		test_started_=gone
	else
		return 1
	fi
}

mount_timingfs() {
	local conf=$1
	shift
	start_timingfs -c "$conf" "$@"
}

# unmount_timingfs: unmount $MNT and reap the daemon, bounded: a daemon
# that does not exit within 20 s (a margin for a loaded machine) of the
# unmount is killed, and that is said. Its exit status is left in
# $TFS_STATUS (137 when it was killed).
unmount_timingfs() {
	unmount_timingfs_on TFS "$MNT"
}

# unmount_timingfs_on NAME DIR: as unmount_timingfs, for the daemon of
# start_timingfs_on; its exit status in ${NAME}_STATUS.
unmount_timingfs_on() {
	local name=$1 dir=$2 pid_var=${1}_PID status
	local pid=${!pid_var}
	if is_mounted "$dir"; then
		fusermount3 -u "$dir" 2>/dev/null || fusermount3 -u -z "$dir"
	fi
	[ -n "$pid" ] || return 0
	if ! test_poll_ 20 test_not_ is_running "$pid"; then
		test_say_ "waited 20 s for timingfs (pid $pid) to exit after the unmount of $dir; killed it"
		kill_tree "$pid" KILL
	fi
	wait "$pid"
	status=$?
	printf -v "${name}_STATUS" %s "$status"
	printf -v "$pid_var" %s ""
}

# nums DIR [SKIP]: the numeric entries of DIR but SKIP, sorted, on one
# line. The glob is bash's own, in the calling shell, so that the reader
# itself is the only process of the reader listed.
nums() {
	local e out=()
	shopt -s nullglob
	for e in "$1"/[0-9]*; do
		[ "${e##*/}" != "${2:-}" ] && out+=("${e##*/}")
	done
	shopt -u nullglob
	printf "%s\n" "${out[@]}" | sort -n | tr "\n" " "
	echo
}

# nums_but_me DIR: nums, without the reader itself.
nums_but_me() {
	nums "$1" "$$"
}
export -f nums nums_but_me

# wait_file FILE [LINES [SECONDS]]: up to SECONDS s (10, a margin for a
# loaded machine; more for a helper that has much to make first) for
# FILE to have content, or at least LINES lines (what a helper prints
# once it runs); 1 if it has not, and that is said.
wait_file() {
	local what="content"
	[ -z "${2:-}" ] || what="$2 lines"
	test_poll_ "${3:-10}" test_file_has_ "$1" "${2:-}" && return 0
	if [ -e "$1" ]; then
		test_say_ "waited ${3:-10} s for $1 to have $what; it has $(wc -l <"$1") lines, $(wc -c <"$1") bytes"
	else
		test_say_ "waited ${3:-10} s for $1 to have $what; there is no such file"
	fi
	return 1
}

# test_file_has_ FILE LINES: FILE has content (LINES empty), or LINES
# lines at least.
test_file_has_() {
	local n
	if [ -z "$2" ]; then
		[ -s "$1" ]
	else
		n=$(wc -l 2>/dev/null <"$1") && [ "$n" -ge "$2" ]
	fi
}
# The shells a test starts in other namespaces wait for files too.
export -f wait_file test_file_has_ test_poll_ test_now_us_ test_say_ \
	wait_for test_not_

# test_cmp EXPECTED ACTUAL: like git's, a diff on failure.
test_cmp() {
	diff -u "$1" "$2"
}

# ---- containers made by runc ------------------------------------------------
#
# A script's containers have ids of its own (tfs-PID-NAME) and their
# state under $TRASH/runc (runc --root), so scripts running at once
# never meet; each is deleted when the script ends, however it ends.
RUNC_ROOT=$TRASH/runc
RUNC_STARTED_=

# runc_ NAME ARGS...: runc with this script's state directory.
runc_() {
	runc --root "$RUNC_ROOT" "$@"
}

# require_runc: skip_all with the reason unless a container runs here
# (runc_why).
require_runc() {
	local why
	why=$(runc_why) || exit 1
	[ -z "$why" ] || skip_all "$why"
}

# runc_why: nothing when a container runs here: runc, python3 and a
# static busybox are there, and a bundle without the hook runs "true"
# (runc needs cgroups it can use); else why not, in a line. 1 when the
# probe's bundle cannot be made.
runc_why() {
	local out
	command -v runc >/dev/null 2>&1 || {
		echo "no runc (scripts/install-deps installs it)"
		return 0
	}
	command -v python3 >/dev/null 2>&1 || { echo "no python3"; return 0; }
	command -v busybox >/dev/null 2>&1 || {
		echo "no busybox (busybox-static)"
		return 0
	}
	# A dynamic busybox would find no C library in the rootfs.
	LC_ALL=C ldd "$(command -v busybox)" 2>&1 | grep -q 'not a dynamic' || {
		echo "busybox is not static (busybox-static)"
		return 0
	}
	runc_bundle --no-hook "$TRASH/runc-probe" true >&2 || return 1
	out=$(runc_ run --bundle "$TRASH/runc-probe" "tfs-$$-probe" \
		</dev/null 2>&1) || {
		runc_ delete -f "tfs-$$-probe" >/dev/null 2>&1
		echo "runc cannot run a container here: $(printf '%s' "$out" |
			tail -n 1)"
	}
	rm -rf "$TRASH/runc-probe"
}

# runc_bundle [--no-hook] [--hook-arg ARG]... DIR [CMD...]: a bundle in
# DIR (made): rootfs/ holds /bin/busybox and a link to it for each of
# its applets, and the directories a runtime mounts over or a test
# uses (/proc /sys /dev /run /tmp); config.json is runc spec's with
# CMD (default "sleep 1000") as the process, no terminal, a writable
# root, and, unless --no-hook, the hook in hooks.createRuntime as the
# docs/containers.md tells users, with its args (its name first, then each ARG)
# and the environment that finds this script's timingfsctl and the
# daemon answering on $TIMINGFS_CONTROL now.
runc_bundle() {
	local hook=1 hook_args=() dir
	while [ $# -gt 0 ]; do
		case $1 in
		--no-hook) hook= ;;
		--hook-arg) hook_args+=("$2") && shift ;;
		*) break ;;
		esac
		shift
	done
	dir=$1
	shift
	[ $# -gt 0 ] || set -- sleep 1000
	mkdir -p "$dir/rootfs/bin" || return 1
	cp "$(command -v busybox)" "$dir/rootfs/bin/busybox" || return 1
	rm -f "$dir/config.json"
	(cd "$dir" && runc spec) || return 1
	busybox --list >"$dir/applets" || return 1
	# The here-document loses its leading tabs: Python's blocks are
	# indented with spaces after them.
	RUNC_HOOK=${hook:+$SCRIPTS/timingfs-oci-hook} python3 - "$dir" \
		"${#hook_args[@]}" "${hook_args[@]}" "$@" <<-\EOF
	import json, os, sys
	d, n = sys.argv[1], int(sys.argv[2])
	hook_args, args = sys.argv[3:3 + n], sys.argv[3 + n:]
	root = os.path.join(d, "rootfs")
	for sub in ("proc", "sys", "dev", "run", "tmp", "etc"):
	    os.makedirs(os.path.join(root, sub), exist_ok=True)
	for a in open(os.path.join(d, "applets")).read().split():
	    link = os.path.join(root, "bin", a)
	    if a != "busybox" and not os.path.lexists(link):
	        os.symlink("busybox", link)
	path = os.path.join(d, "config.json")
	c = json.load(open(path))
	c["process"]["terminal"] = False
	c["process"]["args"] = args
	c["root"]["readonly"] = False
	hook = os.environ.get("RUNC_HOOK")
	if hook:
	    env = ["PATH=" + os.environ["PATH"]]
	    for k in ("TIMINGFS_CONTROL", "TIMINGFSCTL"):
	        env.append(k + "=" + os.environ[k])
	    c["hooks"] = {"createRuntime": [{
	        "path": hook,
	        "args": ["timingfs-oci-hook"] + hook_args,
	        "env": env}]}
	json.dump(c, open(path, "w"), indent=1)
	EOF
}

# runc_start NAME DIR: the container of bundle DIR started detached
# (its hooks have run when runc returns); its init's pid on the host in
# $NAME, its id in ${NAME}_ID. 1, with runc's words, if it did not
# start.
runc_start() {
	local name=$1 dir=$2 id="tfs-$$-$1" pid
	RUNC_STARTED_="$RUNC_STARTED_ $id"
	runc_ run -d --bundle "$dir" "$id" </dev/null >"$dir/runc.out" 2>&1 || {
		test_say_ "runc run -d $id failed: $(cat "$dir/runc.out")"
		return 1
	}
	pid=$(runc_ state "$id" | sed -n 's/^ *"pid": *\([0-9]*\),*$/\1/p')
	[ -n "$pid" ] && [ "$pid" != 0 ] || {
		test_say_ "runc state $id gives no pid: $(runc_ state "$id" 2>&1)"
		return 1
	}
	printf -v "$name" %s "$pid"
	printf -v "${name}_ID" %s "$id"
}

# runc_exec NAME CMD...: CMD in container NAME, as its root; CMD's
# exit status.
runc_exec() {
	local id=${1}_ID
	shift
	runc_ exec "${!id}" "$@" </dev/null
}

# runc_stop NAME: container NAME killed and deleted (runc delete -f
# waits for its processes to die); for test_when_finished, never a
# failure.
runc_stop() {
	local id=${1}_ID
	[ -n "${!id:-}" ] || return 0
	runc_ kill "${!id}" KILL >/dev/null 2>&1
	runc_ delete -f "${!id}" >/dev/null 2>&1
	return 0
}

# runc_mountinfo NAME: /proc/PID/mountinfo of NAME's init: the mounts
# of the container's mount namespace, paths as its root sees them.
runc_mountinfo() {
	cat "/proc/${!1}/mountinfo"
}

# runc_cleanup_: every container this script started, deleted.
runc_cleanup_() {
	local id
	for id in $RUNC_STARTED_; do
		runc_ delete -f "$id" >/dev/null 2>&1
	done
	RUNC_STARTED_=
}
