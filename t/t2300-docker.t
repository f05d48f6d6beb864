#!/bin/bash
# Docker, as users run it: a dockerd of the test's own (its data root,
# exec root, socket and pid file in the trash directory, no network, no
# iptables), an image of a busybox-static rootfs (docker import: nothing
# is pulled), and containers given the host's mount as docs/containers.md
# says:
#     docker run -v /run/timingfs:/timingfs:ro IMAGE ...
# Inside, proc/ lists the container's own processes and proc/self is the
# reader, in its own numbers; busybox cat (sendfile) reads value files
# and tables whole; a reader inside sees no error and no torn table
# through 10 server kills and one timingfsctl upgrade; and containers
# stopped (docker stop) leave the daemon's threads, descriptors and the
# host's mounts as they were (t/lib-runtime.sh). At the end dockerd is
# stopped, and nothing of it is left: no process, no mount, no store.
test_description='Docker containers given the host mount with -v: their
own view, busybox reads, 10 kills and an upgrade under a reader inside
with no error, docker stop leaving the daemon as it was; dockerd and its
store gone at the end.'
TEST_TIMEOUT=${TEST_TIMEOUT:-240}
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot run dockerd"
[ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] ||
	skip_all "no dockerd (scripts/install-deps installs docker.io)"
command -v busybox >/dev/null 2>&1 ||
	skip_all "no busybox (scripts/install-deps installs busybox-static)"
. "$TEST_DIRECTORY/lib-restart.sh"
. "$TEST_DIRECTORY/lib-runtime.sh"

RT=$TRASH/docker
# Its sockets and state where their paths stay short (a socket's at
# most 107 bytes, whatever the checkout's path): removed at the end.
RUN=$(mktemp -d /tmp/timingfs-docker.XXXXXX) || exit 1
# Where docs/containers.md binds the mount, and where the scripts read it.
T=/timingfs
export T

# Debian's client, of dockerd's version, whatever else is in PATH.
docker() {
	/usr/bin/docker -H "unix://$RUN/docker.sock" "$@"
}

# stop_dockerd: every container removed, dockerd stopped (SIGTERM: it
# stops the containerd it started), then whatever it left mounted
# under RT or RUN unmounted, and both removed.
stop_dockerd() {
	local pid i
	if [ -S "$RUN/docker.sock" ]; then
		docker ps -aq | xargs -r /usr/bin/docker \
			-H "unix://$RUN/docker.sock" rm -f >/dev/null 2>&1
	fi
	pid=$(cat "$RUN/docker.pid" 2>/dev/null) || pid=
	if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
		for i in $(seq 150); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
	fi
	runtime_remove
}
trap 'stop_dockerd; cleanup_restart' EXIT

# in_container CMD...: CMD in a new container of the image, the mount
# bound at $T read-only as docs/containers.md says, $RT/out at /out.
in_container() {
	docker run --rm --network none -e T="$T" \
		-v "$MNT:$T:ro" -v "$RT/out:/out" tfs-busybox "$@"
}

# stopped_container: a container reading in a loop, asked through
# docker exec too, then stopped (docker stop) and removed.
stopped_container() {
	docker run -d --name stopped --network none -v "$MNT:$T:ro" \
		tfs-busybox /bin/sh -c \
		"trap \"exit 0\" TERM
		while :; do cat $T/proc/table >/dev/null; sleep 0.1; done" \
		>/dev/null &&
	sleep 0.5 &&
	docker exec stopped cat "$T/proc/1/times" >/dev/null &&
	docker stop -t 1 stopped >/dev/null &&
	docker rm stopped >/dev/null
}

# A machine where dockerd cannot run a container (no cgroups, no
# overlay or other storage, no namespaces) is said in prove's summary,
# with dockerd's or docker's last words.
mkdir -p "$TRASH" && rm -rf "$RT" && runtime_rootfs ||
	skip_all "cannot make a rootfs in $RT"
/usr/sbin/dockerd --data-root "$RT/root" --exec-root "$RUN/exec" \
	-H "unix://$RUN/docker.sock" --pidfile "$RUN/docker.pid" \
	--bridge none --iptables=false --ip-masq=false --ip-forward=false \
	>"$TRASH/dockerd.log" 2>&1 &
kill_at_exit $!
if ! test_poll_ 60 docker version >/dev/null 2>&1; then
	why=$(tail -1 "$TRASH/dockerd.log")
	stop_dockerd
	skip_all "dockerd does not start here: $why"
fi
if ! { tar -C "$RT/rootfs" -c . | docker import - tfs-busybox >/dev/null &&
	docker run --rm --network none tfs-busybox sh -c :; } >"$TRASH/try.log" 2>&1; then
	why=$(tail -1 "$TRASH/try.log")
	stop_dockerd
	skip_all "dockerd runs no container here: $why"
fi

test_expect_success 'setup: a daemon; dockerd runs containers of the image' '
	write_config "$TRASH/docker.conf" exited.keep=0 &&
	start_timingfs -c "$TRASH/docker.conf" -o allow_other &&
	docker info 2>/dev/null | grep -E "Server Version|Storage Driver"
'

test_expect_success 'a container sees its own processes, and proc/self is the reader' '
	in_container sh /out/own.sh >own.out &&
	own_view own.out
'

test_expect_success 'proc/1 is its init; busybox cat reads values and tables whole' '
	whole_reads in_container
'

# cpuacct_of PID: the directory of PID's cgroup on the v1 cpuacct
# hierarchy (none: nothing).
cpuacct_of() {
	local p
	p=$(sed -n 's/^[0-9]*:\([^:]*,\)\{0,1\}cpuacct\(,[^:]*\)\{0,1\}:\(.*\)$/\3/p' "/proc/$1/cgroup") &&
		[ -n "$p" ] && echo "/sys/fs/cgroup/cpuacct${p%/}"
}

test_lazy_prereq CPUACCT_V1 'grep -qx "jobs v1" "$MNT/info"'

test_expect_success CPUACCT_V1 'a container'"'"'s jobs/ is its own cgroup, nothing above it' '
	docker run -d --name jobs --network none -v "$MNT:$T:ro" \
		tfs-busybox sleep 1000 >/dev/null &&
	test_when_finished "docker rm -f jobs >/dev/null" &&
	pid=$(docker inspect -f "{{.State.Pid}}" jobs) &&
	cg=$(cpuacct_of "$pid") && echo "cgroup $cg" &&
	test -d "$cg" && test "$cg" != /sys/fs/cgroup/cpuacct &&
	before=$(cat "$cg/cpuacct.usage") &&
	docker exec jobs cat "$T/jobs/times" >times &&
	after=$(cat "$cg/cpuacct.usage") &&
	cat times &&
	t=$(awk "\$1 ~ /_time\$/ { s += \$2 } END { print s }" times) &&
	echo "usage $before..$after ns, kernel+user $t" &&
	test "$t" -ge $((before / 100 - 1)) && test "$t" -le $((after / 100)) &&
	docker exec jobs ls "$T/jobs" >list &&
	printf "%s\n" active_processes cycles kernel_time times user_time >expect &&
	test_cmp expect list &&
	docker exec jobs readlink "$T/proc/1/job" >link &&
	echo ../../jobs >expect && test_cmp expect link
'

test_expect_success '10 server kills and an upgrade under a reader inside: no error' '
	docker run -d --name reader --network none -e T="$T" \
		-v "$MNT:$T:ro" -v "$RT/out:/out" tfs-busybox sh /out/reader.sh &&
	kills_under_reader "$MNT" "$TFS_PID" docker wait reader &&
	docker rm reader
'

test_expect_success 'docker stop leaves the daemon threads, descriptors and mounts as they were' '
	flat "$TFS_PID" stopped_container &&
	test "$(docker ps -aq)" = ""
'

test_expect_success 'cleanup: dockerd stopped, nothing of it left' '
	pid=$(cat "$RUN/docker.pid") &&
	stop_dockerd &&
	! kill -0 "$pid" 2>/dev/null &&
	! pgrep -f "containerd.*$RUN" &&
	! grep -F -e "$RT" -e "$RUN" /proc/self/mountinfo &&
	test ! -e "$RT" && test ! -e "$RUN" &&
	unmount_timingfs && test "$TFS_STATUS" = 0
'

test_done
