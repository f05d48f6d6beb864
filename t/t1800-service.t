#!/bin/bash
# A real service: mount(8) and fstab through mount.fuse3, SIGHUP
# re-reading the configuration, the man page, the systemd unit, and
# make install / uninstall.
. "$(dirname "$0")/test-lib.sh"
require_fuse

# units_of: the units info says.
units_of() {
	sed -n "s/^units //p" "$MNT/info"
}

# The daemon as mount(8) finds it: mount.fuse3 runs "timingfs" from
# mount's own PATH, which starts with /usr/local/sbin. A link there to
# this build for the script's length, unless one is there already.
LINK=/usr/local/sbin/timingfs
if [ "$(id -u)" = 0 ] && [ ! -e "$LINK" ] && [ -d /usr/local/sbin ] &&
	[ -x /sbin/mount.fuse3 ]; then
	ln -s "$TIMINGFS" "$LINK"
	cleanup_link() {
		rm -f "$LINK"
		cleanup
	}
	trap cleanup_link EXIT
	write_config "$TRASH/unix.conf" format.units=unix exited.keep=0

	test_expect_success 'mount -t fuse.timingfs, and umount' '
		mount -t fuse.timingfs timingfs "$MNT" \
			-o "allow_other,config=$TRASH/unix.conf"
		rc=0
		{
			is_mounted "$MNT" &&
			test "$(units_of)" = unix &&
			grep -E "^timingfs $MNT fuse.timingfs .*allow_other" \
				/proc/mounts &&
			test "$($BIN/helper-io errno write "$MNT/info")" = EROFS
		} || rc=1
		umount "$MNT"
		wait_unmounted
		return $rc
	'

	test_expect_success 'the fstab line: mount MOUNTPOINT' '
		echo "timingfs $MNT fuse.timingfs allow_other,nofail,config=$TRASH/unix.conf 0 0" >fstab
		mount -T "$TRASH/fstab" "$MNT"
		rc=0
		{
			test "$(units_of)" = unix &&
			test -r "$MNT/proc/1/cycles"
		} || rc=1
		umount "$MNT"
		wait_unmounted
		return $rc
	'
else
	test_skip 'mount -t fuse.timingfs, and umount' \
		"not root, no mount.fuse3, or $LINK is taken"
	test_skip 'the fstab line: mount MOUNTPOINT' "the same"
fi

write_config "$TRASH/reload.conf" format.units=windows exited.keep=30
mount_timingfs "$TRASH/reload.conf" || exit 1
export -f units_of

# hup: SIGHUP to the daemon, then up to 2 s for the log to say it is done
# with it (a line naming the file), or for info to say UNITS.
hup() {
	local i lines
	lines=$(wc -l <"$TRASH/TFS.err")
	kill -HUP "$TFS_PID"
	for i in $(seq 1 40); do
		[ "$(wc -l <"$TRASH/TFS.err")" -gt "$lines" ] && return 0
		sleep 0.05
	done
	return 1
}

test_expect_success 'SIGHUP with a good file: new units for files opened after' '
	before=$(cat "$MNT/proc/1/creation_time") &&
	exec 3<"$MNT/proc/1/creation_time" &&
	write_config "$TRASH/reload.conf" format.units=unix exited.keep=30 &&
	hup &&
	cat "$TRASH/TFS.err" &&
	test "$(units_of)" = unix &&
	after=$(cat "$MNT/proc/1/creation_time") &&
	held=$(cat <&3) && exec 3<&- &&
	echo "windows $before, unix $after, opened before $held" &&
	test "$held" = "$before" &&
	test $(( (after / 100 + 116444736000000000) )) = "$before" &&
	grep "reload.conf re-read: units unix" "$TRASH/TFS.err"
'

test_expect_success 'a key fixed at mount: logged, and the rest applied' '
	write_config "$TRASH/reload.conf" format.units=windows \
		groups.max_size=1 exited.keep=30 &&
	hup && sleep 0.2 &&
	grep "reload.conf: \[groups\] max_size changed: it takes effect at the next mount" \
		"$TRASH/TFS.err" &&
	test "$(units_of)" = windows &&
	test -d "$MNT/groups/0/cpu1" -o "$(nproc)" = 1
'

test_expect_success 'SIGHUP with a bad file: logged by line and key, old kept' '
	write_config "$TRASH/reload.conf" format.units=unix &&
	printf "[format]\nunits = parsecs\n" >"$TRASH/reload.conf" &&
	hup &&
	grep -F "reload.conf:2: [format] units: '"'"'parsecs'"'"' is not windows or unix (SIGHUP: the configuration in use stays)" \
		"$TRASH/TFS.err" &&
	test "$(units_of)" = windows &&
	is_mounted "$MNT" &&
	test -r "$MNT/proc/1/cycles"
'

test_expect_success 'SIGHUP: exit_keep follows the file' '
	write_config "$TRASH/reload.conf" exited.keep=7 &&
	hup && sleep 0.2 &&
	grep -x "exit_keep 7" "$MNT/info" ||
	grep -x "exit_source none" "$MNT/info"
'

test_expect_success 'SIGTERM after reloads: unmounted, exit 0' '
	kill -TERM "$TFS_PID" &&
	wait_unmounted
'
unmount_timingfs
test_expect_success 'the daemon exited 0' '
	test "$TFS_STATUS" = 0
'

test_expect_success 'the man page: mandoc -T lint finds nothing' '
	command -v mandoc >/dev/null &&
	test -s "$SRC_ROOT/timingfs.8" &&
	mandoc -T lint -W warning "$SRC_ROOT/timingfs.8" >lint 2>&1 || :
	cat lint &&
	! grep . lint &&
	mandoc -T utf8 "$SRC_ROOT/timingfs.8" | sed "s/.\x08//g" >page &&
	grep -q "SIGHUP" page && grep -q "exit_source" page &&
	grep -q "fuse.timingfs" page
'

test_expect_success 'make install DESTDIR=...: each file in its place' '
	make -s -C "$SRC_ROOT" install DESTDIR="$TRASH/dest" PREFIX=/usr \
		SYSCONFDIR=/etc >/dev/null &&
	(cd dest && find . -type f | sort) >installed &&
	cat installed &&
	cat >expect <<-EOF &&
	./etc/timingfs.conf
	./usr/bin/timingfs
	./usr/bin/timingfs-exporter
	./usr/bin/timingtop
	./usr/lib/systemd/system/timingfs.service
	./usr/share/man/man8/timingfs.8
	EOF
	test_cmp expect installed &&
	grep -x "ExecStart=/usr/bin/timingfs -f -o allow_other /run/timingfs" \
		dest/usr/lib/systemd/system/timingfs.service &&
	test -x dest/usr/bin/timingtop
'

test_expect_success 'make install keeps a configuration that is there' '
	echo "; mine" >>dest/etc/timingfs.conf &&
	make -s -C "$SRC_ROOT" install DESTDIR="$TRASH/dest" PREFIX=/usr \
		>/dev/null &&
	tail -n 1 dest/etc/timingfs.conf | grep -x "; mine"
'

test_expect_success 'make uninstall: everything but the configuration' '
	make -s -C "$SRC_ROOT" uninstall DESTDIR="$TRASH/dest" PREFIX=/usr \
		>/dev/null &&
	(cd dest && find . -type f) >left &&
	echo ./etc/timingfs.conf >expect &&
	test_cmp expect left
'

if command -v systemd-analyze >/dev/null 2>&1; then
	test_expect_success 'systemd-analyze verify: the installed unit' '
		make -s -C "$SRC_ROOT" install PREFIX="$TRASH/prefix" \
			SYSCONFDIR="$TRASH/prefix/etc" >/dev/null &&
		unit=$TRASH/prefix/lib/systemd/system/timingfs.service &&
		man=--man=yes &&
		command -v man >/dev/null || man=--man=no
		MANPATH=$TRASH/prefix/share/man systemd-analyze verify $man \
			"$unit" >verify 2>&1 || { cat verify; return 1; }
		cat verify &&
		! grep . verify
	'
else
	test_skip 'systemd-analyze verify: the installed unit' \
		'no systemd-analyze (Debian package systemd)'
fi

test_done
