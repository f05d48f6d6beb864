#!/bin/bash
# A real service: mount(8) and fstab through mount.fuse3, SIGHUP
# re-reading the configuration, the man page, the systemd unit, and
# make install / uninstall (libtimingfs's files too).
test_description='timingfs as a service: mount(8) and an fstab line
through mount.fuse3, SIGHUP re-reading the configuration, SIGTERM, the
man page, make install and uninstall, and the systemd unit.'
. "$(dirname "$0")/test-lib.sh"
require_fuse

# units_of: the units info says.
units_of() {
	sed -n "s/^units //p" "$MNT/info"
}
export -f units_of

# The daemon as mount(8) finds it: mount.fuse3 runs "timingfs" from
# mount's own PATH, which has /usr/local/sbin before the system's
# directories. A test links this build there for its own length, unless
# a timingfs is there already (an installed one, another checkout's
# test), and removes its link when it ends, pass or fail.
LINK=/usr/local/sbin/timingfs
test_lazy_prereq MOUNT_HELPER '
	[ "$(id -u)" = 0 ] && [ -d /usr/local/sbin ] &&
	[ -x /sbin/mount.fuse3 ] && [ ! -e "$LINK" ] && [ ! -L "$LINK" ]
'

# systemd-analyze verify --man=yes looks the unit's man page up with man.
test_lazy_prereq MAN 'command -v man'

# link_timingfs: $LINK to this build, removed when the test ends; fails,
# and leaves it, when something else took it meanwhile.
link_timingfs() {
	ln -s "$TIMINGFS" "$LINK" &&
	test_when_finished 'unlink_timingfs'
}

# unlink_timingfs: $LINK removed if it is still ours.
unlink_timingfs() {
	test "$(readlink "$LINK")" != "$TIMINGFS" || rm -f "$LINK"
}

# daemon_exe_of DIR: the timingfs that serves DIR runs this build: one
# found elsewhere on the PATH would not be what this tree tests.
daemon_exe_of() {
	local pid found=
	for pid in $(pgrep -x timingfs); do
		tr "\0" " " <"/proc/$pid/cmdline" | grep -q " $1\( \|$\)" ||
			continue
		found=$(readlink "/proc/$pid/exe") || return 1
	done
	echo "daemon: ${found:-none}" &&
	test "$found" = "$TIMINGFS"
}

# fstab_field TEXT: TEXT as a field of fstab(5), which ends at a space:
# a space, tab or backslash in it written as octal escapes, as
# /proc/mounts writes them.
fstab_field() {
	printf "%s" "$1" | sed -e 's/\\/\\134/g' -e 's/ /\\040/g' -e 's/\t/\\011/g'
}

# umount_mnt: $MNT unmounted, if a test left it mounted by mount(8).
umount_mnt() {
	if is_mounted "$MNT"; then
		umount "$MNT" || return 1
	fi
	wait_unmounted
}

test_expect_success MOUNT_HELPER 'mount -t fuse.timingfs, and umount' '
	write_config "$TRASH/unix.conf" format.units=unix exited.keep=0 &&
	link_timingfs &&
	mount -t fuse.timingfs timingfs "$MNT" \
		-o "allow_other,config=$TRASH/unix.conf" &&
	test_when_finished umount_mnt &&
	is_mounted "$MNT" &&
	daemon_exe_of "$MNT" &&
	test "$(units_of)" = unix &&
	mounts_of "$MNT" | grep -E "^timingfs [^ ]+ fuse.timingfs .*allow_other" &&
	test "$("$BIN/helper-io" errno write "$MNT/info")" = EROFS &&
	umount "$MNT" &&
	wait_unmounted
'

test_expect_success MOUNT_HELPER 'the fstab line: mount MOUNTPOINT' '
	echo "timingfs $(fstab_field "$MNT") fuse.timingfs allow_other,nofail,config=$(fstab_field "$TRASH/unix.conf") 0 0" >fstab &&
	cat fstab &&
	link_timingfs &&
	mount -T "$TRASH/fstab" "$MNT" &&
	test_when_finished umount_mnt &&
	daemon_exe_of "$MNT" &&
	test "$(units_of)" = unix &&
	test -r "$MNT/proc/1/cycles" &&
	umount "$MNT" &&
	wait_unmounted
'

# hup: SIGHUP to the daemon, then up to 10 s (a margin for a loaded
# machine) for the log to end the re-read: with the units it took, or
# why it kept the configuration in use. Lines about keys fixed at mount
# come before that last one.
hup() {
	local lines
	lines=$(wc -l <"$TRASH/TFS.err") &&
	kill -HUP "$TFS_PID" &&
	test_poll_ 10 reread_logged "$lines" && return 0
	echo "waited 10 s for the daemon to log the end of a re-read after SIGHUP; its log after line $lines:" >&2
	tail -n "+$((lines + 1))" "$TRASH/TFS.err" >&2
	return 1
}

# reread_logged LINES: the log, after its first LINES lines, ends a
# re-read.
reread_logged() {
	tail -n "+$(($1 + 1))" "$TRASH/TFS.err" |
		grep -q "re-read: units \|(SIGHUP: the configuration in use stays)\|SIGHUP: no configuration file"
}

test_expect_success 'setup: a mount with a configuration file' '
	write_config "$TRASH/reload.conf" format.units=windows exited.keep=30 &&
	mount_timingfs "$TRASH/reload.conf" &&
	if grep -x "exit_source taskstats" "$MNT/info"; then
		test_set_prereq EXITS_KEPT
	fi
'

test_expect_success 'SIGHUP with a good file: new units for files opened after' '
	before=$(cat "$MNT/proc/1/creation_time") &&
	exec 3<"$MNT/proc/1/creation_time" &&
	test_when_finished "exec 3<&-" &&
	write_config "$TRASH/reload.conf" format.units=unix exited.keep=30 &&
	hup &&
	cat "$TRASH/TFS.err" &&
	test "$(units_of)" = unix &&
	after=$(cat "$MNT/proc/1/creation_time") &&
	held=$(cat <&3) &&
	echo "windows $before, unix $after, opened before $held" &&
	test "$held" = "$before" &&
	test $(( (after / 100 + 116444736000000000) )) = "$before" &&
	grep "reload.conf re-read: units unix" "$TRASH/TFS.err"
'

test_expect_success 'a key fixed at mount: logged, and the rest applied' '
	write_config "$TRASH/reload.conf" format.units=windows \
		groups.max_size=1 exited.keep=30 &&
	hup &&
	grep "reload.conf: \[groups\] max_size changed: it takes effect at the next mount" \
		"$TRASH/TFS.err" &&
	test "$(units_of)" = windows &&
	test -d "$MNT/groups/0/cpu1" -o "$(nproc)" = 1
'

test_expect_success 'SIGHUP with a bad file: logged by line and key, old kept' '
	printf "[format]\nunits = parsecs\n" >"$TRASH/reload.conf" &&
	hup &&
	grep -F "reload.conf:2: [format] units: '"'"'parsecs'"'"' is not windows or unix (SIGHUP: the configuration in use stays)" \
		"$TRASH/TFS.err" &&
	test "$(units_of)" = windows &&
	is_mounted "$MNT" &&
	test -r "$MNT/proc/1/cycles"
'

test_expect_success EXITS_KEPT 'SIGHUP: exit_keep follows the file' '
	grep -x "exit_keep 30" "$MNT/info" &&
	write_config "$TRASH/reload.conf" exited.keep=7 &&
	hup &&
	grep -x "exit_keep 7" "$MNT/info"
'

test_expect_success 'SIGTERM after reloads: unmounted, exit 0' '
	kill -TERM "$TFS_PID" &&
	wait_unmounted
'

test_expect_success 'the daemon exited 0' '
	unmount_timingfs &&
	test "$TFS_STATUS" = 0
'

test_expect_success MANDOC 'the man page: mandoc -T lint finds nothing' '
	test -s "$SRC_ROOT/timingfs.8" &&
	{
		mandoc -T lint -W warning "$SRC_ROOT/timingfs.8" >lint 2>&1 ||
			{ cat lint; return 1; }
	} &&
	cat lint &&
	! grep . lint &&
	mandoc -T utf8 "$SRC_ROOT/timingfs.8" >page.raw &&
	sed "s/.\x08//g" page.raw >page &&
	grep -q "SIGHUP" page && grep -q "exit_source" page &&
	grep -q "fuse.timingfs" page
'

# The Makefile, as most do, puts DESTDIR and PREFIX in its commands
# unquoted, and the unit's ExecStart= would split a path at a space:
# make install writes under a new directory of /tmp, whose path has
# none, whatever the checkout's.
#
# install_into DIR: make install with DESTDIR=DIR, as a package would,
# DIR removed when the test ends. DIR is a link to that directory of
# /tmp, $DEST, the DESTDIR make is given.
install_into() {
	DEST=$(mktemp -d /tmp/timingfs-dest.XXXXXX) &&
	test_when_finished "rm -rf \"$1\" \"$DEST\"" &&
	ln -s "$DEST" "$1" &&
	make -s -C "$SRC_ROOT" install DESTDIR="$DEST" PREFIX=/usr \
		SYSCONFDIR=/etc >/dev/null
}

test_expect_success 'make install DESTDIR=...: each file in its place' '
	install_into "$TRASH/dest" &&
	(cd dest && find . -type f | sort) >installed &&
	cat installed &&
	cat >expect <<-EOF &&
	./etc/timingfs.conf
	./usr/bin/timingfs
	./usr/bin/timingfs-exporter
	./usr/bin/timingfs-oci-hook
	./usr/bin/timingfsctl
	./usr/bin/timingtop
	./usr/include/timingfs.h
	./usr/include/timingfs/windows.h
	./usr/lib/libtimingfs.so.0.1.0
	./usr/lib/pkgconfig/timingfs.pc
	./usr/lib/systemd/system/timingfs.service
	./usr/share/doc/libtimingfs-dev/examples/cycles.c
	./usr/share/man/man1/timingfs-exporter.1
	./usr/share/man/man1/timingtop.1
	./usr/share/man/man3/timingfs-windows.3
	./usr/share/man/man3/timingfs.3
	./usr/share/man/man8/timingfs.8
	EOF
	test_cmp expect installed &&
	grep -x "ExecStart=/usr/bin/timingfs -f -o allow_other,no_auto_unmount,unmount_stale /run/timingfs" \
		dest/usr/lib/systemd/system/timingfs.service &&
	test -x dest/usr/bin/timingtop
'

test_expect_success 'make install keeps a configuration that is there' '
	install_into "$TRASH/dest" &&
	echo "; mine" >>dest/etc/timingfs.conf &&
	make -s -C "$SRC_ROOT" install DESTDIR="$DEST" PREFIX=/usr \
		>/dev/null &&
	tail -n 1 dest/etc/timingfs.conf | grep -x "; mine"
'

test_expect_success 'make uninstall: everything but the configuration' '
	install_into "$TRASH/dest" &&
	test_path_is_file dest/usr/bin/timingfs &&
	make -s -C "$SRC_ROOT" uninstall DESTDIR="$DEST" PREFIX=/usr \
		>/dev/null &&
	(cd dest && find . -type f) >left &&
	echo ./etc/timingfs.conf >expect &&
	test_cmp expect left
'

# verify_unit MAN: systemd-analyze verify --man=MAN on the unit of an
# install under a new directory of /tmp (see install_into), removed when
# the test ends.
verify_unit() {
	local prefix
	prefix=$(mktemp -d /tmp/timingfs-prefix.XXXXXX) &&
	test_when_finished "rm -rf \"$prefix\"" &&
	make -s -C "$SRC_ROOT" install PREFIX="$prefix" \
		SYSCONFDIR="$prefix/etc" >/dev/null &&
	{
		MANPATH=$prefix/share/man systemd-analyze verify \
			--man="$1" "$prefix/lib/systemd/system/timingfs.service" \
			>verify 2>&1 ||
			{ cat verify; return 1; }
	} &&
	cat verify &&
	! grep . verify
}

test_expect_success SYSTEMD_ANALYZE 'systemd-analyze verify: the installed unit' '
	verify_unit no
'

test_expect_success SYSTEMD_ANALYZE,MAN 'systemd-analyze verify: its man page is found' '
	verify_unit yes
'

test_done
