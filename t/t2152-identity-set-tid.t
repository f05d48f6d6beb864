#!/bin/bash
# Identity finer than a tick (docs/design.md, "Names and identities"): a
# task reaped and its number given at once to another with
# clone3(set_tid), at every PID namespace level, within 1 ms, so that
# both start in the same clock tick. Every name of the first (a pread at
# 0 of a kept descriptor, a reopen through /proc/self/fd of an O_PATH
# descriptor, openat on a kept directory, a working directory) gives its
# own final values or ENOENT, never the second's: in 30 of 30 trials,
# for processes and threads, in the daemon's namespace and in nested
# PID namespaces (t/helper-setid.c says how).
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
test_description='A number taken again within a tick: names of the first
task never give the second task'"'"'s values.'
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot choose PIDs (clone3 set_tid)"
SETID=$BIN/helper-setid
"$SETID" / process 0 0 >/dev/null 2>&1
test $? = 77 && skip_all "helper-setid: x86_64 only"

test_expect_success 'setup: mount' '
	write_config "$TRASH/off.conf" access.hidepid=off &&
	mount_timingfs "$TRASH/off.conf" -o allow_other &&
	sed -n "s/^identity_source //p" "$MNT/info" >source &&
	echo "# identity_source $(cat source)" &&
	grep -Ex "pidfs|ticks" source
'

# run MODE DEPTH: 30 trials, every one passed, each gap under 1 ms.
run() {
	# LeakSanitizer cannot stop the world from inside a PID namespace
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		bounded 120 "$SETID" "$MNT" "$1" "$2" 30 >out.$1.$2 2>&1
	ret=$?
	sed "s/^/# /" out.$1.$2
	test $ret = 0
}

test_expect_success 'processes, in the daemon'"'"'s PID namespace' '
	run process 0
'

test_expect_success 'threads, in the daemon'"'"'s PID namespace' '
	run thread 0
'

test_expect_success 'processes, two PID namespaces down (set_tid at 3 levels)' '
	run process 2
'

test_expect_success 'threads, two PID namespaces down (set_tid at 3 levels)' '
	run thread 2
'

test_expect_success 'info says the identity source' '
	case $(uname -r) in
	[0-5].*|6.[0-8].*) want=ticks ;;
	*) want=pidfs ;;
	esac &&
	test "$(cat source)" = $want
'

test_done
