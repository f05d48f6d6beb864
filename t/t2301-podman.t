#!/bin/bash
# Podman, as users run it: rootful podman (its storage, run root and
# events in the trash directory, cgroupfs, no network), an image of a
# busybox-static rootfs (podman import: nothing is pulled), and the
# package's OCI hook (conf/debian/oci-hooks.d/timingfs.json, its path
# pointed at the checkout's scripts/timingfs-oci-hook and given the
# test's control socket) in the directory --hooks-dir names, as
# docs/containers.md says. Each container gets a mount of its own at
# /run/timingfs, attached by the hook: proc/ lists its own processes and proc/self is
# the reader; busybox cat reads value files and tables whole; a reader
# inside sees no error through 10 server kills and one timingfsctl
# upgrade; a container stopped (podman stop) leaves the daemon's
# threads, descriptors and the host's mounts as they were, and its
# mount gone (timingfsctl mounts). Podman's default ulimits exceed the
# hard limits of some machines (20,000 here): the containers get 1024.
test_description='Podman containers with the package OCI hook in their
hooks directory: a mount each, their own view, busybox reads, 10 kills
and an upgrade under a reader inside with no error, podman stop leaving
the daemon as it was and no mount behind.'
TEST_TIMEOUT=${TEST_TIMEOUT:-240}
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: rootful podman"
command -v podman >/dev/null 2>&1 ||
	skip_all "no podman (scripts/install-deps installs it)"
command -v busybox >/dev/null 2>&1 ||
	skip_all "no busybox (scripts/install-deps installs busybox-static)"
. "$TEST_DIRECTORY/lib-restart.sh"
. "$TEST_DIRECTORY/lib-runtime.sh"

RT=$TRASH/podman
# Its run root and temporary files where their paths stay short (podman
# refuses a run root of more than 50 bytes): removed at the end.
RUN=$(mktemp -d /tmp/timingfs-podman.XXXXXX) || exit 1
# Where the hook mounts the tree, and where the scripts read it.
T=/run/timingfs
export T

podman() {
	command podman --root "$RT/root" --runroot "$RUN/run" \
		--tmpdir "$RUN/tmp" --cgroup-manager cgroupfs \
		--events-backend file "$@"
}

# run_flags: what every container is run with.
RUN_FLAGS="--network none --hooks-dir $RT/hooks -e T=$T
	--ulimit nofile=1024:1024 --ulimit nproc=1024:1024"

# stop_podman: every container removed, then whatever podman left
# mounted under RT or RUN unmounted, and both removed.
stop_podman() {
	if [ -d "$RT/root" ]; then
		podman rm -a -f -t 0 >/dev/null 2>&1
	fi
	runtime_remove
}
trap 'stop_podman; cleanup_restart' EXIT

# in_container CMD...: CMD in a new container of the image, $RT/out at
# /out; the hook mounts the tree at $T.
in_container() {
	podman run --rm $RUN_FLAGS -v "$RT/out:/out" tfs-busybox "$@"
}

# no_mounts: timingfsctl lists no attached mount.
no_mounts() {
	"$TIMINGFSCTL" mounts >mounts.out &&
	! test -s mounts.out
}

# stopped_container: a container reading in a loop, asked through
# podman exec too, then stopped (podman stop) and removed; its mount is
# gone then.
stopped_container() {
	podman run -d --name stopped $RUN_FLAGS tfs-busybox /bin/sh -c \
		"trap \"exit 0\" TERM
		while :; do cat $T/proc/table >/dev/null; sleep 0.1; done" \
		>/dev/null &&
	sleep 0.5 &&
	"$TIMINGFSCTL" mounts | grep -q . &&
	podman exec stopped cat "$T/proc/1/times" >/dev/null &&
	podman stop -t 1 stopped >/dev/null &&
	podman rm stopped >/dev/null &&
	test_poll_ 10 no_mounts
}

# A machine where podman cannot run a container (no cgroups, no
# overlay or other storage, no namespaces) is said in prove's summary,
# with podman's last words.
mkdir -p "$TRASH" && rm -rf "$RT" && runtime_rootfs &&
	mkdir -p "$RT/hooks" "$RUN/tmp" ||
	skip_all "cannot make a rootfs in $RT"
if ! { tar -C "$RT/rootfs" -c . | podman import - tfs-busybox >/dev/null &&
	podman run --rm --network none --ulimit nofile=1024:1024 \
		--ulimit nproc=1024:1024 tfs-busybox sh -c :; } >"$TRASH/try.log" 2>&1; then
	why=$(tail -1 "$TRASH/try.log")
	stop_podman
	skip_all "podman runs no container here: $why"
fi

test_expect_success 'setup: a daemon, the hook in a hooks directory' '
	write_config "$TRASH/podman.conf" exited.keep=0 &&
	start_timingfs -c "$TRASH/podman.conf" &&
	sed -e "s|\"path\": \"/usr/bin/timingfs-oci-hook\"|\"path\": \"$SRC_ROOT/scripts/timingfs-oci-hook\", \"env\": [\"TIMINGFS_CONTROL=$TIMINGFS_CONTROL\", \"TIMINGFSCTL=$TIMINGFSCTL\"]|" \
		"$SRC_ROOT/conf/debian/oci-hooks.d/timingfs.json" \
		>"$RT/hooks/timingfs.json" &&
	grep -F "$SRC_ROOT/scripts/timingfs-oci-hook" "$RT/hooks/timingfs.json" &&
	podman info 2>/dev/null | grep -E -A1 "ociRuntime:|graphDriverName"
'

test_expect_success 'a container sees its own processes, and proc/self is the reader' '
	in_container sh /out/own.sh >own.out &&
	own_view own.out
'

test_expect_success 'proc/1 is its init; busybox cat reads values and tables whole' '
	whole_reads in_container &&
	no_mounts
'

test_expect_success '10 server kills and an upgrade under a reader inside: no error' '
	podman run -d --name reader $RUN_FLAGS -v "$RT/out:/out" \
		tfs-busybox sh /out/reader.sh &&
	kills_under_reader "$MNT" "$TFS_PID" podman wait reader &&
	podman rm reader &&
	test_poll_ 10 no_mounts
'

test_expect_success 'podman stop leaves the daemon threads, descriptors and mounts as they were' '
	flat "$TFS_PID" stopped_container &&
	test "$(podman ps -aq)" = ""
'

test_expect_success 'cleanup: nothing of podman left' '
	stop_podman &&
	! grep -F -e "$RT" -e "$RUN" /proc/self/mountinfo &&
	! pgrep -f "conmon.*$RT" &&
	test ! -e "$RT" && test ! -e "$RUN" &&
	unmount_timingfs && test "$TFS_STATUS" = 0
'

test_done
