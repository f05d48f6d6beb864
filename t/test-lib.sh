# test-lib.sh: the shell side of timingfs's tests, in the style of git's
# t/test-lib.sh. A test script (bash) sources it, runs one
# test_expect_success per test and ends with test_done; the output is
# strict TAP, for prove. Scripts run from any directory: paths come from
# $0.
#
#   test_expect_success 'title' 'body'  body runs in a subshell, in
#                                       $TRASH, as a function (so
#                                       "return 1" works), with set -e,
#                                       under a timeout of $TEST_TIMEOUT s
#   test_expect_failure 'title' 'body'  a known breakage: TAP "# TODO"
#   test_skip 'title' 'why'             a test that cannot run here
#   test_done                           prints 1..N; exits 1 on failure
#   skip_all 'why'                      prints 1..0 # SKIP why; exits 0
#   require_fuse                        skip_all without /dev/fuse or
#                                       fusermount3
#   write_config FILE sect.key=value... a configuration file
#   fixture_config FILE NAME [k=v...]   one for t/fixtures/NAME at 3 GHz
#   start_timingfs ARGS...              run ./timingfs -f ARGS... $MNT in
#                                       the background, wait for the mount
#   start_timingfs_on NAME DIR ARGS...  the same for a second daemon on DIR
#                                       ($NAME_PID); unmount_timingfs_on
#                                       NAME DIR unmounts it ($NAME_STATUS)
#   mount_timingfs CONF [ARGS...]       start_timingfs -c CONF ARGS...
#   unmount_timingfs                    unmount, reap it: $TFS_STATUS
#   wait_mounted [DIR]                  poll until DIR ($MNT) is mounted
#   wait_unmounted [DIR]                poll until it is not
#   kill_tree PID [SIGNAL]              signal PID and its descendants
#   kill_at_exit PID                    kill_tree PID KILL when the script
#                                       ends, however it ends
#   kill_cleanup_pids                   do that now (for a script's own
#                                       cleanup, before test-lib's)
#   wait_file FILE [LINES]              up to 10 s for FILE to have content
#                                       (or LINES lines)
#   test_cmp EXPECTED ACTUAL            diff -u
#   nums DIR [SKIP]                     DIR's numeric entries, one line
#
# Every script gets a trash directory $TRASH (t/trash.NAME, removed at
# the end) and a mount point $MNT in it, always unmounted on exit, and
# any daemon it started killed. TEST_VERBOSE=1 (or -v) shows every
# test's output, not only that of failures.

set -u

TEST_NAME=$(basename "$0" .t)
TEST_DIRECTORY=$(cd "$(dirname "$0")" && pwd)
SRC_ROOT=$(cd "$TEST_DIRECTORY/.." && pwd)
FIXTURES=$TEST_DIRECTORY/fixtures
BIN=$TEST_DIRECTORY/bin
TIMINGFS=$SRC_ROOT/timingfs
TRASH=$TEST_DIRECTORY/trash.$TEST_NAME
MNT=$TRASH/mnt
TEST_TIMEOUT=${TEST_TIMEOUT:-60}
TEST_VERBOSE=${TEST_VERBOSE:-}
TFS_PID=
TFS_STATUS=
export TEST_DIRECTORY SRC_ROOT FIXTURES BIN TIMINGFS TRASH MNT

case "${1:-}" in
-v | --verbose) TEST_VERBOSE=1 ;;
esac

test_count=0
test_failures=0

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

is_mounted() {
	awk -v dir="$1" '$2 == dir { found = 1 } END { exit !found }' \
		/proc/self/mounts
}

# wait_mounted [DIR]: up to 10 s for DIR ($MNT) to be a mount point.
wait_mounted() {
	local dir=${1:-$MNT} i
	for i in $(seq 1 200); do
		is_mounted "$dir" && return 0
		sleep 0.05
	done
	return 1
}

# wait_unmounted [DIR]: up to 5 s for DIR ($MNT) to be no mount point.
wait_unmounted() {
	local dir=${1:-$MNT} i
	for i in $(seq 1 100); do
		is_mounted "$dir" || return 0
		sleep 0.05
	done
	return 1
}

CLEANUP_PIDS=
kill_at_exit() {
	CLEANUP_PIDS="$CLEANUP_PIDS $1"
}

# kill_cleanup_pids: what kill_at_exit named, killed and reaped (no
# "Killed" from the shell); a script's own cleanup may call it first.
kill_cleanup_pids() {
	local pid
	for pid in $CLEANUP_PIDS; do
		kill_tree "$pid" KILL
		wait "$pid" 2>/dev/null
	done
	CLEANUP_PIDS=
}

cleanup() {
	kill_cleanup_pids
	unmount_timingfs >/dev/null 2>&1
	cd "$TEST_DIRECTORY" || return
	# Never recurse into a mount that could not be undone.
	is_mounted "$MNT" || rm -rf "$TRASH"
}

if [ -e "$TRASH" ]; then
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

skip_all() {
	echo "1..0 # SKIP $*"
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

# The body, as a function so that it may "return 1" from a loop.
test_run_() {
	eval "test_body_() {
$1
}"
	set -e
	test_body_
}

# test_run_with_timeout_ BODY: 0 when the body passed; its output in
# $TRASH/test.log.
test_run_with_timeout_() {
	local pid watchdog rc log=$TRASH/test.log
	(cd "$TRASH" && test_run_ "$1") >"$log" 2>&1 </dev/null &
	pid=$!
	(
		sleep "$TEST_TIMEOUT"
		echo "timed out after $TEST_TIMEOUT s" >>"$log"
		kill_tree "$pid" TERM
		sleep 2
		kill_tree "$pid" KILL
	) >/dev/null 2>&1 &
	watchdog=$!
	wait "$pid"
	rc=$?
	kill_tree "$watchdog" KILL
	wait "$watchdog" 2>/dev/null
	return "$rc"
}

test_diagnose_() {
	sed -e 's/^/#   /' "$TRASH/test.log"
	printf '%s\n' "$1" | sed -e 's/^/#	/'
}

test_expect_success() {
	local title=$1 body=$2
	test_count=$((test_count + 1))
	if test_run_with_timeout_ "$body"; then
		echo "ok $test_count - $title"
		[ -z "$TEST_VERBOSE" ] || sed -e 's/^/#   /' "$TRASH/test.log"
	else
		test_failures=$((test_failures + 1))
		echo "not ok $test_count - $title"
		test_diagnose_ "$body"
	fi
}

# A known breakage: reported, not counted as a failure.
test_expect_failure() {
	local title=$1 body=$2
	test_count=$((test_count + 1))
	if test_run_with_timeout_ "$body"; then
		echo "ok $test_count - $title # TODO known breakage vanished"
	else
		echo "not ok $test_count - $title # TODO known breakage"
	fi
}

test_skip() {
	test_count=$((test_count + 1))
	echo "ok $test_count - $1 # SKIP $2"
}

test_done() {
	echo "1..$test_count"
	[ "$test_failures" = 0 ]
	exit $?
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
# returns once it is mounted (up to 10 s), 1 if it exits first.
start_timingfs() {
	start_timingfs_on TFS "$MNT" "$@"
}

# start_timingfs_on NAME DIR ARGS...: as start_timingfs, for a second
# daemon on DIR: its pid in ${NAME}_PID, its stderr in $TRASH/NAME.err.
start_timingfs_on() {
	local name=$1 dir=$2 i pid
	shift 2
	: >"$TRASH/$name.err"
	"$TIMINGFS" -f "$@" "$dir" 2>>"$TRASH/$name.err" &
	pid=$!
	printf -v "${name}_PID" %s "$pid"
	for i in $(seq 1 200); do
		is_mounted "$dir" && return 0
		is_running "$pid" || break
		sleep 0.05
	done
	echo "timingfs did not mount on $dir:" >&2
	cat "$TRASH/$name.err" >&2
	unmount_timingfs_on "$name" "$dir"
	return 1
}

mount_timingfs() {
	local conf=$1
	shift
	start_timingfs -c "$conf" "$@"
}

# unmount_timingfs: unmount $MNT and reap the daemon, bounded: a daemon
# that does not exit within 5 s of the unmount is killed. Its exit
# status is left in $TFS_STATUS.
unmount_timingfs() {
	unmount_timingfs_on TFS "$MNT"
}

# unmount_timingfs_on NAME DIR: as unmount_timingfs, for the daemon of
# start_timingfs_on; its exit status in ${NAME}_STATUS.
unmount_timingfs_on() {
	local name=$1 dir=$2 i pid_var=${1}_PID status
	local pid=${!pid_var}
	if is_mounted "$dir"; then
		fusermount3 -u "$dir" 2>/dev/null || fusermount3 -u -z "$dir"
	fi
	[ -n "$pid" ] || return 0
	for i in $(seq 1 100); do
		is_running "$pid" || break
		sleep 0.05
	done
	is_running "$pid" && kill_tree "$pid" KILL
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

# wait_file FILE [LINES]: up to 10 s for FILE to have content, or at
# least LINES lines (what a helper prints once it runs); 1 if it has not.
wait_file() {
	local i
	for i in $(seq 1 200); do
		if [ -n "${2:-}" ]; then
			[ "$(wc -l <"$1" 2>/dev/null || echo 0)" -ge "$2" ] &&
				return 0
		elif [ -s "$1" ]; then
			return 0
		fi
		sleep 0.05
	done
	echo "no $1" >&2
	return 1
}
export -f wait_file

# test_cmp EXPECTED ACTUAL: like git's, a diff on failure.
test_cmp() {
	diff -u "$1" "$2"
}
