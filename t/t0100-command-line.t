#!/bin/bash
test_description='The command line: help and version, usage errors
(exit 2), every configuration error named by file, line and key (exit 2,
nothing mounted), a mount point that is not there (exit 1), and the
three ways of naming the configuration, each honoured.'
. "$(dirname "$0")/test-lib.sh"

if [ ! -x "$TIMINGFS" ]; then
	echo "Bail out! no $TIMINGFS: run make first"
	exit 1
fi
VERSION=$(sed -n 's/^VERSION = //p' "$SRC_ROOT/Makefile")
Q="'"

# run_tfs ARGS...: run timingfs in the foreground with $MNT last; its
# exit status in $status, its output in out and err. Bounded (20 s, a
# margin for a loaded machine: it should refuse at once): a daemon that
# mounted after all is unmounted, and fails the test.
run_tfs() {
	status=0
	bounded 20 "$TIMINGFS" -f "$@" "$MNT" >out 2>err || status=$?
	cat err
	if is_mounted "$MNT"; then
		fusermount3 -u "$MNT"
		echo "it mounted"
		return 1
	fi
}

# config_error TEXT LINE MESSAGE: TEXT as the configuration is exit 2
# with "FILE:LINE: MESSAGE", and no mount.
config_error() {
	printf "$1" >bad.conf
	run_tfs -c "$TRASH/bad.conf" &&
	test "$status" = 2 &&
	grep -Fx "timingfs: $TRASH/bad.conf:$2: $3" err
}

test_expect_success '--help: usage and every option, exit 0' '
	"$TIMINGFS" --help >out &&
	grep "^usage: .*timingfs \[options\] MOUNTPOINT" out &&
	grep -e "-c FILE, --config=FILE, -o config=FILE" out &&
	grep -e "/etc/timingfs.conf" out &&
	grep -e "-V, --version" out &&
	grep -e "^ *-f " out && grep -e "^ *-d " out && grep -e "^ *-s " out &&
	"$TIMINGFS" -h >out-h &&
	test_cmp out out-h
'

test_expect_success '--version and -V: the version of the Makefile' '
	test -n "$VERSION" &&
	"$TIMINGFS" --version >out &&
	grep -x "timingfs version $VERSION" out &&
	grep "^libfuse version 3\." out &&
	"$TIMINGFS" -V >out-v &&
	test_cmp out out-v
'

test_expect_success 'no mount point: exit 2' '
	test_expect_code 2 "$TIMINGFS" -f 2>err &&
	cat err &&
	grep "no mount point" err
'

test_expect_success 'three names (a source and two mount points): exit 2' '
	mkdir -p other &&
	run_tfs timingfs other &&
	test "$status" = 2 &&
	grep "one mount point only: other, $MNT" err &&
	grep -F "usage: timingfs [SOURCE] MOUNTPOINT" err
'

test_expect_success 'an unknown option: exit 2' '
	run_tfs --frobnicate &&
	test "$status" = 2 &&
	grep -e "--frobnicate" err
'

test_expect_success 'an unknown mount option: exit 2' '
	run_tfs -o frobnicate &&
	test "$status" = 2 &&
	grep "frobnicate" err
'

test_expect_success 'a configuration file that is not there: exit 2' '
	run_tfs -c "$TRASH/none.conf" &&
	test "$status" = 2 &&
	grep "^timingfs: $TRASH/none.conf: " err
'

test_expect_success 'a configuration that is a directory: exit 2' '
	mkdir -p conf.d &&
	run_tfs -c "$TRASH/conf.d" &&
	test "$status" = 2 &&
	grep "^timingfs: $TRASH/conf.d: " err
'

test_expect_success 'an unknown section: exit 2, file, line and section' '
	config_error "[groups]\nmax_size = 8\n[colours]\n" 3 \
		"[colours]: unknown section"
'

test_expect_success 'an unknown key: exit 2, file, line and key' '
	config_error "[groups]\nsize = 8\n" 2 "[groups] size: unknown key"
'

test_expect_success 'values out of range: exit 2, file, line and key' '
	config_error "[groups]\nmax_size = 65\n" 2 \
		"[groups] max_size: 65 is out of range 1..64" &&
	config_error "[groups]\nmax_size = 0\n" 2 \
		"[groups] max_size: 0 is out of range 1..64" &&
	config_error "\n[format]\nunits = metric\n" 3 \
		"[format] units: ${Q}metric${Q} is not windows or unix" &&
	config_error "[clock]\ntsc_hz = 0\n" 2 \
		"[clock] tsc_hz: 0 is out of range 1..1000000000000" &&
	config_error "[sources]\nproc = proc\n" 2 \
		"[sources] proc: ${Q}proc${Q} is not an absolute path"
'

test_expect_success 'a key given twice: exit 2, the second line' '
	config_error "[format]\nunits = unix\nunits = windows\n" 3 \
		"[format] units: given twice"
'

# In each form FILE stands for the file's path, put in whole: the words
# of a form are split, never the path (which may hold a space).
test_expect_success 'every way of naming a bad configuration is read' '
	printf "[groups]\nmax_size = 99\n" >bad.conf &&
	msg="bad.conf:2: [groups] max_size: 99 is out of range 1..64" &&
	for form in "-c FILE" "--config=FILE" "-o config=FILE" \
		"-oro,config=FILE"; do
		read -r -a words <<<"$form" &&
		run_tfs "${words[@]/FILE/"$TRASH/bad.conf"}" &&
		test "$status" = 2 &&
		grep -F "$msg" err || return 1
	done
'

test_expect_success 'a mount point that is not there: exit 1' '
	fixture_config m2.conf m2 &&
	test_expect_code 1 bounded 20 "$TIMINGFS" -f -c "$TRASH/m2.conf" \
		"$TRASH/nowhere" 2>err &&
	cat err &&
	grep "cannot mount on $TRASH/nowhere" err
'

test_expect_success 'a mount point that is a file: exit 1, and nothing mounted' '
	fixture_config m2.conf m2 &&
	: >afile &&
	test_expect_code 1 bounded 20 "$TIMINGFS" -f -c "$TRASH/m2.conf" \
		"$TRASH/afile" 2>err &&
	cat err &&
	grep -x "timingfs: cannot mount on $TRASH/afile: not a directory" err &&
	! mounts_of "$TRASH/afile" | grep .
'

test_expect_success ROOT,UNSHARE 'no /dev/fuse: exit 1, and what to do' '
	fixture_config m2.conf m2 &&
	test_expect_code 1 unshare -m sh -c "mount -t tmpfs none /dev &&
		exec \"$TIMINGFS\" -f -c \"$TRASH/m2.conf\" \"$MNT\"" 2>err &&
	cat err &&
	grep "cannot open /dev/fuse: there is none: load the fuse module" err
'

test_expect_success FUSE 'SOURCE MOUNTPOINT, as mount.fuse3 runs it: mounts' '
	fixture_config m2.conf m2 format.units=unix &&
	start_timingfs timingfs -o "config=$TRASH/m2.conf" &&
	grep -x "units unix" "$MNT/info" &&
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_expect_success FUSE 'each way of naming the configuration is honoured' '
	fixture_config m2.conf m2 format.units=unix &&
	for form in "-c FILE" "--config=FILE" "-o config=FILE"; do
		read -r -a words <<<"$form" &&
		start_timingfs "${words[@]/FILE/"$TRASH/m2.conf"}" &&
		grep -x "units unix" "$MNT/info" &&
		grep -x "tsc_hz 3000000000" "$MNT/info" &&
		test "$(cat "$MNT/proc/100/cycles")" = 12000000000 &&
		unmount_timingfs &&
		test "$TFS_STATUS" = 0 || return 1
	done
'

test_done
