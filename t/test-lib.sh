# test-lib.sh: the shell side of timingfs's tests, in the style of git's
# t/test-lib.sh. A test script sources it, runs test_expect_success for
# each test and ends with test_done; the output is strict TAP.
#
#   test_expect_success 'title' 'body'   body runs in a subshell with
#                                        set -e, under a timeout
#   test_done                            prints 1..N, exits 1 on failure
#   skip_all 'why'                       prints 1..0 # SKIP why, exits 0
#   require_fuse                         skip_all without /dev/fuse
#   write_config FILE [key=value ...]    a configuration, section.key=v
#   mount_timingfs CONF [ARGS...]        mount at $MNT in the background
#   unmount_timingfs                     and unmount it again
#
# Every script gets a trash directory $TRASH (t/trash.NAME), removed at
# the end, and a mount point $MNT in it that is always unmounted on exit.

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
TFS_PID=

test_count=0
test_failures=0

rm -rf "$TRASH"
mkdir -p "$MNT" || exit 1

cleanup() {
	unmount_timingfs >/dev/null 2>&1
	cd "$TEST_DIRECTORY" && rm -rf "$TRASH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

require_fuse() {
	[ -c /dev/fuse ] || skip_all "no /dev/fuse"
	command -v fusermount3 >/dev/null 2>&1 || skip_all "no fusermount3"
	[ -x "$TIMINGFS" ] || skip_all "no ./timingfs: run make first"
}

test_expect_success() {
	local title=$1 body=$2 pid watchdog rc log=$TRASH/test.log

	test_count=$((test_count + 1))
	(
		set -e
		cd "$TRASH"
		eval "$body"
	) >"$log" 2>&1 &
	pid=$!
	(
		sleep "$TEST_TIMEOUT"
		echo "timed out after $TEST_TIMEOUT s" >>"$log"
		kill -TERM "$pid"
	) >/dev/null 2>&1 &
	watchdog=$!
	wait "$pid"
	rc=$?
	kill "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	if [ "$rc" = 0 ]; then
		echo "ok $test_count - $title"
	else
		test_failures=$((test_failures + 1))
		echo "not ok $test_count - $title"
		sed -e 's/^/#   /' "$log"
		echo "$body" | sed -e 's/^/#	/'
	fi
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

is_mounted() {
	grep -q " $1 fuse" /proc/self/mounts
}

mount_timingfs() {
	local conf=$1 i
	shift
	"$TIMINGFS" -f -c "$conf" "$@" "$MNT" 2>>"$TRASH/daemon.err" &
	TFS_PID=$!
	for i in $(seq 1 100); do
		is_mounted "$MNT" && return 0
		kill -0 "$TFS_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "timingfs did not mount:" >&2
	cat "$TRASH/daemon.err" >&2
	return 1
}

unmount_timingfs() {
	if is_mounted "$MNT"; then
		fusermount3 -u "$MNT" || fusermount3 -u -z "$MNT"
	fi
	if [ -n "$TFS_PID" ]; then
		wait "$TFS_PID"
		TFS_STATUS=$?
		TFS_PID=
	fi
}

# test_cmp EXPECTED ACTUAL: like git's, a diff on failure.
test_cmp() {
	diff -u "$1" "$2"
}
