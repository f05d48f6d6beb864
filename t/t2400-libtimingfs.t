#!/bin/bash
# libtimingfs (src/lib, docs/design.md "libtimingfs"): every function of
# <timingfs.h> and <timingfs/windows.h> against the mount's files, read
# in the host's view, in a PID namespace and on a mount in unix units
# (t/api-check.c); handles that pin a task past its exit and the taking
# of its number by another user's task, a task hidden from the caller
# (hidepid=invisible and noaccess, read by a user of its own)
# (t/api-handles.c); the example program, built by make and, with
# pkg-config alone, against a make install staging tree, its values held
# against cat of the same files.
test_description='libtimingfs: the native and Windows APIs against the
files of a mount, in views, in unix units, with handles that outlive
their tasks, and the example built with pkg-config'
TEST_OTHER_USERS=1 # a reader that may not see root's processes
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot make PID namespaces"
test_have_prereq SETPRIV || skip_all "no setpriv (util-linux)"

NOBODY=$((1510000000 + $$))
UNIX=$TRASH/unix
INV=$TRASH/inv
NOACC=$TRASH/noacc
STAGE=$TRASH/stage
export NOBODY UNIX INV NOACC STAGE

# In a PID namespace LeakSanitizer cannot stop the world: no leak check.
in_new_pidns() {
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		unshare -p -f --mount-proc "$@"
}

# run_tap FILE CMD...: CMD, its output in FILE, exited 0 and passed.
run_tap() {
	local out=$1 rc
	shift
	"$@" >"$out" 2>&1
	rc=$?
	tap_ok "$out" && test "$rc" = 0
}

# tap_ok FILE: FILE is the TAP of a program that passed: its lines shown
# as comments, no "not ok", a plan.
tap_ok() {
	sed "s/^/# /" "$1" &&
	! grep -q "^not ok" "$1" &&
	grep -Eq "^1\.\.[1-9]" "$1"
}

cleanup_lib() {
	kill_cleanup_pids
	unmount_timingfs_on UNIX "$UNIX" >/dev/null 2>&1
	unmount_timingfs_on INV "$INV" >/dev/null 2>&1
	unmount_timingfs_on NOACC "$NOACC" >/dev/null 2>&1
	cleanup
}
trap cleanup_lib EXIT

test_expect_success 'setup: a mount for every reader, one in unix units, two hiding' '
	mkdir -p "$UNIX" "$INV" "$NOACC" &&
	write_config "$TRASH/off.conf" access.hidepid=off &&
	write_config "$TRASH/unix.conf" access.hidepid=off format.units=unix &&
	write_config "$TRASH/inv.conf" access.hidepid=invisible &&
	write_config "$TRASH/noacc.conf" access.hidepid=noaccess &&
	start_timingfs -c "$TRASH/off.conf" -o allow_other &&
	start_timingfs_on UNIX "$UNIX" -c "$TRASH/unix.conf" -o allow_other &&
	start_timingfs_on INV "$INV" -c "$TRASH/inv.conf" -o allow_other &&
	start_timingfs_on NOACC "$NOACC" -c "$TRASH/noacc.conf" -o allow_other &&
	grep -qx "units unix" "$UNIX/info"
'

test_expect_success 'every function against the files, in the host'"'"'s view' '
	run_tap check.host "$BIN/api-check" "$MNT"
'

test_expect_success UNSHARE 'every function against the files, in a PID namespace' '
	run_tap check.ns in_new_pidns "$BIN/api-check" "$MNT" &&
	grep -q "^ok .* proc/1 by number" check.ns
'

test_expect_success 'units = unix: the values still in FILETIME and 100 ns' '
	run_tap check.unix "$BIN/api-check" "$UNIX" &&
	grep -q "tfs_units_unix is info" check.unix
'

test_expect_success UNSHARE 'a handle of an exited task whose number another user took' '
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		run_tap reuse.out bounded 120 "$BIN/api-handles" "$MNT" \
		reuse "$NOBODY" &&
	grep -q "^ok .* thread: the exited task" reuse.out &&
	grep -q "^ok .* process: the exited task" reuse.out
'

test_expect_success 'a task the caller may not see (hidepid=invisible): ERROR_ACCESS_DENIED' '
	{ "$BIN/helper-many" 3 >many.out & } &&
	MANY=$! &&
	kill_at_exit "$MANY" &&
	wait_file many.out &&
	tid=$(ls "/proc/$MANY/task" | grep -vx "$MANY" | head -n 1) &&
	test -n "$tid" &&
	echo "$tid" >many.tid &&
	run_tap denied.out setpriv --reuid=$NOBODY --regid=$NOBODY \
		--clear-groups "$BIN/api-handles" "$INV" denied "$MANY" "$tid" &&
	grep -q "^ok .* -ENOENT or -EACCES (-2)" denied.out
'

test_expect_success 'a task the caller may not enter (hidepid=noaccess): ERROR_ACCESS_DENIED' '
	run_tap noacc.out setpriv --reuid=$NOBODY --regid=$NOBODY \
		--clear-groups "$BIN/api-handles" "$NOACC" denied "$MANY" \
		"$(cat many.tid)" &&
	grep -q "^ok .* -ENOENT or -EACCES (-13)" noacc.out
'

# example_ok OUT PID: the lines the example printed against cat of the
# files of its process (kept after it exited: the final values bound
# what it printed, and the creation time is the same) and of the idle
# cycles of group 0 read before (idle.before) and after (idle.after).
example_ok() {
	cat "$MNT/proc/$2/times" >final &&
	cat "$MNT/proc/$2/threads/$2/times" >final.thread &&
	cat "$1" &&
	awk -v groups="$(ls -d "$MNT"/groups/[0-9]* | wc -l)" '
		FILENAME == "final" { p[$1] = $2; next }
		FILENAME == "final.thread" { t[$1] = $2; next }
		FILENAME == "idle.before" { lo["idle_" $1] = $2; next }
		FILENAME == "idle.after" { hi["idle_" $1] = $2; next }
		{
			n++
			k = $1; v = $2
			if (k == "groups") { ok = v == groups }
			else if (k ~ /^idle_/) { ok = lo[k] <= v && v <= hi[k] }
			else {
				who = k; sub(/_.*/, "", who)
				key = k; sub(/^[a-z]*_/, "", key)
				f = who == "thread" ? t[key] : p[key]
				if (key == "creation_time") ok = v == f
				else if (key == "exit_time") ok = v == 0
				else ok = v <= f && (key != "cycles" || v > 0)
			}
			if (!ok) { print "bad: " $0 " (file: " f ")"; bad = 1 }
		}
		END { exit bad || n < 12 }
	' final final.thread idle.before idle.after "$1"
}

test_expect_success 'the example, built by make, prints what cat shows' '
	cat "$MNT/groups/0/idle_cycles" >idle.before &&
	TIMINGFS_MOUNT=$MNT sh -c "echo \$\$ >example.pid; exec \"$SRC_ROOT/examples/cycles\"" >example.out &&
	cat "$MNT/groups/0/idle_cycles" >idle.after &&
	example_ok example.out "$(cat example.pid)"
'

test_expect_success 'make install DESTDIR: the library, headers, timingfs.pc, pages' '
	make -s -C "$SRC_ROOT" install-lib DESTDIR="$STAGE" PREFIX=/usr \
		LIBDIR=/usr/lib >install.out 2>&1 &&
	test -f "$STAGE/usr/lib/libtimingfs.so.0.1.0" &&
	test "$(readlink "$STAGE/usr/lib/libtimingfs.so.0")" = libtimingfs.so.0.1.0 &&
	test "$(readlink "$STAGE/usr/lib/libtimingfs.so")" = libtimingfs.so.0 &&
	test -f "$STAGE/usr/include/timingfs.h" &&
	test -f "$STAGE/usr/include/timingfs/windows.h" &&
	test -f "$STAGE/usr/share/man/man3/timingfs.3" &&
	test -f "$STAGE/usr/share/man/man3/timingfs-windows.3" &&
	grep -qx "libdir=/usr/lib" "$STAGE/usr/lib/pkgconfig/timingfs.pc"
'

test_expect_success 'only the API is exported, under the SONAME' '
	readelf -d "$STAGE/usr/lib/libtimingfs.so.0" >dyn &&
	grep -q "Library soname: \[libtimingfs.so.0\]" dyn &&
	nm -D --defined-only "$STAGE/usr/lib/libtimingfs.so.0" |
		awk "{ print \$NF }" | grep -v "^_" | sort >exported &&
	cat exported &&
	! grep -Ev "^(tfs_[a-z_]+|tfs(Query|Get|Open|Close|Set)[A-Za-z]+)$" exported &&
	grep -qx tfsQueryThreadCycleTime exported &&
	grep -qx tfs_open exported
'

test_expect_success 'the example built with pkg-config alone against the staging tree' '
	san= &&
	if grep -q "NEEDED.*lib[a-z]*san" dyn; then
		san="-fsanitize=address,undefined"
	fi &&
	PKG_CONFIG_PATH= PKG_CONFIG_LIBDIR="$STAGE/usr/lib/pkgconfig" \
	PKG_CONFIG_SYSROOT_DIR="$STAGE" \
		pkg-config --cflags --libs timingfs >flags &&
	cat flags &&
	cc $san -o example "$STAGE/usr/share/doc/libtimingfs-dev/examples/cycles.c" \
		$(cat flags) -Wl,-rpath,"$STAGE/usr/lib" &&
	cat "$MNT/groups/0/idle_cycles" >idle.before &&
	TIMINGFS_MOUNT=$MNT sh -c "echo \$\$ >example.pid; exec ./example" >example2.out &&
	cat "$MNT/groups/0/idle_cycles" >idle.after &&
	example_ok example2.out "$(cat example.pid)"
'

test_expect_success 'the Windows header beside a windows.h, names mapped or not, C and C++' '
	inc="-I$STAGE/usr/include" &&
	guard="$TEST_DIRECTORY/winelib-guard.c" &&
	cc -Wall -Wextra -Werror $inc -c -o guard1.o "$guard" &&
	cc -Wall -Wextra -Werror $inc -DTIMINGFS_NO_WINDOWS_NAMES -c \
		-o guard2.o "$guard" &&
	nm guard2.o | grep -q " U QueryThreadCycleTime" &&
	nm guard2.o | grep -q " U tfsQueryThreadCycleTime" &&
	! nm guard1.o | grep -q " U QueryThreadCycleTime" &&
	if command -v c++ >/dev/null; then
		c++ -Wall -Werror $inc -x c++ -c -o guard3.o "$guard" &&
		nm guard3.o | grep -q " U tfsQueryThreadCycleTime"
	fi
'

test_expect_success MANDOC 'the section 3 pages are mandoc -Tlint clean' '
	mandoc -Tlint -W warning "$SRC_ROOT/src/lib/timingfs.3" &&
	mandoc -Tlint -W warning "$SRC_ROOT/src/lib/timingfs-windows.3"
'

test_done
