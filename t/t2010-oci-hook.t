#!/bin/bash
# scripts/timingfs-oci-hook, the OCI createRuntime hook, against a real
# daemon and real containers: a "container" is a process made by
# unshare -m -p -f --mount-proc (its own mount and PID namespaces, as a
# runtime makes them before pivot_root), and a bundle is a directory in
# the trash directory with a config.json whose root.path is a rootfs
# there. The hook reads the state a runtime would write on its stdin
# and must attach the daemon's tree at ROOTFS+TARGET inside the
# container's mount namespace alone, pinned to its PID namespace: seen
# from inside, proc/self is the reader as the container numbers it and
# proc/ lists the container's processes alone. A malformed state, a
# process that does not exist or a symbolic link in the rootfs must be
# refused with exit 1 and one line, nothing attached; what timingfsctl
# says and its status are passed through.
test_description='The OCI createRuntime hook timingfs-oci-hook: with a
real daemon and unshare containers, it attaches at the rootfs path of
the bundle (relative, absolute, none, "/") + TARGET inside the
container only, pinned to its PID namespace; malformed states, a missing
process and a symbolic link in the rootfs are refused, nothing attached;
timingfsctl is found as documented and its status passed through.'
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: cannot make containers"
test_have_prereq UNSHARE || skip_all "no PID namespaces (unshare, nsenter)"

HOOK=$SCRIPTS/timingfs-oci-hook
export HOOK

# start_container NAME: a container, its init "sleep 1000" in mount and
# PID namespaces of its own with its own /proc; NAME is set to the
# host's number of its init, NAME_UNSHARE to the unshare process. The
# init is waited for until it runs sleep, so its /proc is mounted.
start_container() {
	local name=$1 pid init i
	unshare -m -p -f --mount-proc sleep 1000 >/dev/null 2>&1 </dev/null &
	pid=$!
	kill_at_exit "$pid"
	init=$(child_of "$pid") || return 1
	for i in $(seq 1 200); do
		[ "$(cat "/proc/$init/comm" 2>/dev/null)" = sleep ] && break
		sleep 0.05
	done
	[ "$(cat "/proc/$init/comm")" = sleep ] || {
		echo "the init $init of container $name does not run sleep" >&2
		return 1
	}
	printf -v "$name" %s "$init"
	printf -v "${name}_UNSHARE" %s "$pid"
}

# stop_container NAME: its init killed (SIGKILL), unshare reaped; for
# test_when_finished, so never a failure.
stop_container() {
	local init=${!1} u=${1}_UNSHARE
	[ -n "$init" ] && kill -9 "$init" 2>/dev/null
	[ -n "${!u}" ] && wait "${!u}" 2>/dev/null
	return 0
}

# json_str STRING: STRING as the inside of a JSON string.
json_str() {
	printf '%s' "$1" | sed 's/[\\"]/\\&/g'
}

# state PID BUNDLE: the state a runtime gives a createRuntime hook, on
# one line.
state() {
	printf '{"ociVersion":"1.0.2","id":"c1","status":"creating","pid":%s,"bundle":"%s"}\n' \
		"$1" "$(json_str "$2")"
}

# pidns_of INIT: the inode of INIT's PID namespace.
pidns_of() {
	stat -L -c %i "/proc/$1/ns/pid"
}

# listed INIT DIR: timingfsctl mounts has a line for INIT's PID
# namespace at DIR, its init INIT.
listed() {
	"$TIMINGFSCTL" mounts >mounts.out || return 1
	cat mounts.out
	D=$2 awk -v ino="$(pidns_of "$1")" -v init="$1" '
		$1 == ino && $2 == ENVIRON["D"] && $3 == "init" && $4 == init {
			found = 1
		}
		END { exit !found }' mounts.out
}

# mounted_in INIT DIR: the mount namespace of INIT has a timingfs mount
# at DIR (its /proc/self/mountinfo writes " " as "\040" and so on).
mounted_in() {
	in_ns "$1" cat /proc/self/mountinfo >mountinfo.out || return 1
	D=$2 awk '
		{
			m = $5
			gsub(/\\040/, " ", m); gsub(/\\011/, "\t", m)
			gsub(/\\012/, "\n", m); gsub(/\\134/, "\\", m)
		}
		m == ENVIRON["D"] && / - fuse\.timingfs / { found = 1 }
		END { exit !found }' mountinfo.out
}

# check_attached INIT DIR: the hook's work, seen from everywhere. Inside
# the container: a timingfs mount at DIR, whose proc/self is the reader
# under the container's own number (it execs readlink, so that $$ is
# the reader), and whose proc/ lists what the container's own /proc
# lists: its init (1) and the reader (bash globs, no other process).
# On the host: DIR exists (the hook made it, and the mount namespaces
# share the files) but is no mount. timingfsctl mounts lists it.
check_attached() {
	local init=$1 dir=$2
	mounted_in "$init" "$dir" || {
		echo "no fuse.timingfs mount at $dir in the container:" >&2
		cat mountinfo.out >&2
		return 1
	}
	in_ns "$init" sh -c 'echo $$; exec readlink "$1/proc/self"' sh "$dir" \
		>self.out || return 1
	cat self.out
	{ [ "$(wc -l <self.out)" = 2 ] &&
		[ "$(sed -n 1p self.out)" = "$(sed -n 2p self.out)" ]; } || {
		echo "proc/self in the container is not the reader" >&2
		return 1
	}
	in_ns "$init" bash -c 'nums /proc && nums "$1/proc" && echo $$' bash \
		"$dir" >ls.out || return 1
	cat ls.out
	printf '1\n%s\n' "$(sed -n 3p ls.out)" | sort -n | tr '\n' ' ' >ls.expect
	echo >>ls.expect
	sed -n 1p ls.out >ls.own
	sed -n 2p ls.out >ls.tfs
	test_cmp ls.own ls.tfs && test_cmp ls.expect ls.tfs || return 1
	test_path_is_dir "$dir" || return 1
	[ -z "$(mounts_of "$dir")" ] || {
		echo "$dir is a mount point on the host" >&2
		return 1
	}
	test_path_is_missing "$dir/info" || return 1
	listed "$init" "$dir" || {
		echo "timingfsctl mounts does not list $dir for $init" >&2
		return 1
	}
}

# A realistic config.json (runc spec), root.path relative, and decoys
# the hook must not take for root.path: a string and an annotation that
# look like one, a "root" object nested deeper, "path" of hooks and
# namespaces.
write_runc_config() {
	cat >"$1" <<-\EOF
	{
		"ociVersion": "1.0.2-dev",
		"process": {
			"terminal": false,
			"user": {"uid": 0, "gid": 0},
			"args": ["sh", "-c", "echo \"root\": {\"path\": \"/etc\"} }{"],
			"env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"],
			"cwd": "/",
			"capabilities": {"bounding": ["CAP_AUDIT_WRITE", "CAP_KILL"]},
			"rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
			"noNewPrivileges": true
		},
		"annotations": {"root": "/decoy", "org.example.json": "{\"root\":{\"path\":\"/etc\"}}"},
		"hostname": "runc",
		"hooks": {"createRuntime": [{"path": "/usr/local/bin/timingfs-oci-hook", "args": ["timingfs-oci-hook"]}]},
		"linux": {
			"x-vendor": {"root": {"path": "/nested"}},
			"resources": {"devices": [{"allow": false, "access": "rwm"}]},
			"namespaces": [{"type": "pid"}, {"type": "network"}, {"type": "mount", "path": "/proc/1/ns/mnt"}],
			"maskedPaths": ["/proc/acpi", "/proc/kcore"]
		},
		"root": {"readonly": true, "path": "rootfs"},
		"mounts": [
			{"destination": "/proc", "type": "proc", "source": "proc"},
			{"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]}
		]
	}
	EOF
}

test_expect_success 'setup: the daemon, with no exited tasks kept' '
	write_config "$TRASH/tfs.conf" exited.keep=0 &&
	start_timingfs -c "$TRASH/tfs.conf" &&
	"$TIMINGFSCTL" mounts >out &&
	test_must_fail test -s out
'

test_expect_success 'the hook is POSIX sh, executable, and says what it is' '
	test -x "$HOOK" &&
	sh -n "$HOOK" &&
	sed -n 2p "$HOOK" | grep -i createRuntime &&
	grep -x "set -eu" "$HOOK" &&
	if command -v dash >/dev/null; then dash -n "$HOOK"; fi
'

test_expect_success SHELLCHECK 'shellcheck takes the hook' '
	shellcheck "$HOOK"
'

test_expect_success 'usage: -h, an unknown option, a bad TARGET' '
	"$HOOK" -h </dev/null >out &&
	grep "^usage: timingfs-oci-hook \[-o OPT\[,OPT\]\] \[TARGET\]" out &&
	test_expect_code 2 "$HOOK" -x </dev/null 2>err &&
	grep "^usage: " err &&
	test_expect_code 2 "$HOOK" run/timingfs </dev/null 2>err &&
	grep -x "timingfs-oci-hook: TARGET must be an absolute path: run/timingfs" err &&
	test_expect_code 2 "$HOOK" /run/../etc </dev/null 2>err &&
	grep "TARGET must have no . or .. component" err &&
	test_expect_code 2 "$HOOK" // </dev/null 2>err &&
	grep "TARGET must not be / itself" err &&
	test_expect_code 2 "$HOOK" /a /b </dev/null 2>err &&
	grep "one TARGET at most" err
'

# ---- a runc bundle: root.path relative, the default target -----------------

test_expect_success 'setup: container C1, a runc bundle with root.path "rootfs"' '
	start_container C1 &&
	mkdir -p "$TRASH/b1/rootfs" &&
	write_runc_config "$TRASH/b1/config.json" &&
	D1=$TRASH/b1/rootfs/run/timingfs &&
	test_path_is_missing "$TRASH/b1/rootfs/run"
'

test_expect_success 'the hook attaches at ROOTFS/run/timingfs: exit 0, no word' '
	state "$C1" "$TRASH/b1" >state1 &&
	cat state1 &&
	"$HOOK" <state1 >out 2>err &&
	cat out err &&
	test_must_fail test -s err &&
	test_path_is_dir "$D1"
'

test_expect_success 'inside C1: a timingfs mount at ROOTFS/run/timingfs' '
	mounted_in "$C1" "$D1"
'

test_expect_success 'inside C1: proc/self is the reader, as C1 numbers it' '
	in_ns "$C1" sh -c "echo \$\$; exec readlink \"\$1/proc/self\"" sh "$D1" >out &&
	cat out &&
	set -- $(cat out) &&
	test "$#" = 2 && test "$1" = "$2" &&
	test "$1" -lt "$C1"
'

test_expect_success 'inside C1: proc/ lists C1 alone, as its own /proc does' '
	in_ns "$C1" bash -c "nums /proc && nums \"\$1/proc\" && echo \$\$" bash "$D1" >out &&
	cat out &&
	me=$(sed -n 3p out) &&
	sed -n 1p out >expect &&
	sed -n 2p out >actual &&
	test_cmp expect actual &&
	echo "1 $me " >exact &&
	test_cmp exact actual
'

test_expect_success 'the host: the directory, but no mount there' '
	test_path_is_dir "$D1" &&
	test -z "$(mounts_of "$D1")" &&
	test_must_fail grep -F " $D1 " /proc/self/mountinfo &&
	test_path_is_missing "$D1/info" &&
	test_must_fail test -e "$D1/proc"
'

test_expect_success 'timingfsctl mounts lists it: C1 pidns, the target, its init' '
	listed "$C1" "$D1"
'

test_expect_success 'the same state again: timingfsctl refuses, its line and status passed through' '
	test_expect_code 1 "$HOOK" <state1 >out 2>err &&
	cat err &&
	test "$(wc -l <err)" = 1 &&
	grep "^timingfsctl: .*already attached" err &&
	listed "$C1" "$D1"
'

# ---- a pretty-printed state, root.path absolute, TARGET and -o ---------------

test_expect_success 'pretty state, absolute root.path, TARGET and -o hidepid=invisible' '
	start_container C2 &&
	test_when_finished "stop_container C2" &&
	mkdir -p "$TRASH/b2" "$TRASH/rootfs2" &&
	printf "{\n  \"ociVersion\" : \"1.0.2\",\n  \"root\" : {\n    \"path\" : \"%s/\"\n  }\n}\n" \
		"$(json_str "$TRASH/rootfs2")" >"$TRASH/b2/config.json" &&
	printf "{\r\n\t\"ociVersion\": \"1.0.2\",\r\n\t\"id\": \"c2\",\n\t\"status\": \"creating\",\n\t\"pid\":\n\t\t%s ,\n\t\"bundle\" :\n  \"%s\"\n,\n\t\"annotations\": {\n\t\t\"io.timingfs\": \"true\"\n\t}\n}\n" \
		"$C2" "$(json_str "$TRASH/b2")" >state2 &&
	cat state2 &&
	"$HOOK" -o hidepid=invisible /srv//tfs/ <state2 2>err &&
	test_must_fail test -s err &&
	check_attached "$C2" "$TRASH/rootfs2/srv/tfs" &&
	in_ns "$C2" cat "$TRASH/rootfs2/srv/tfs/info" >info &&
	grep -x "hidepid invisible" info &&
	test_must_fail grep -x "hidepid invisible" "$MNT/info"
'

# timingfsctl takes an option attach does not know for bad usage: 2.
test_expect_success '-o with what attach does not take: timingfsctl says so, its 2, nothing attached' '
	start_container C2B &&
	test_when_finished "stop_container C2B" &&
	"$TIMINGFSCTL" mounts >before &&
	state "$C2B" "$TRASH/b1" >state &&
	test_expect_code 2 "$HOOK" -o bogus <state 2>err &&
	cat err &&
	test "$(wc -l <err)" = 1 &&
	grep "^timingfsctl: .*-o bogus" err &&
	"$TIMINGFSCTL" mounts >after &&
	test_cmp before after
'

# ---- no config.json, root.path "/": TARGET as it is --------------------------

test_expect_success 'no config.json in the bundle: TARGET as it is' '
	start_container C3 &&
	test_when_finished "stop_container C3" &&
	mkdir -p "$TRASH/b3" &&
	test_path_is_missing "$TRASH/plain3" &&
	state "$C3" "$TRASH/b3" | "$HOOK" "$TRASH/plain3/tfs" 2>err &&
	test_must_fail test -s err &&
	check_attached "$C3" "$TRASH/plain3/tfs"
'

test_expect_success 'root.path "/" (and a config.json without root): TARGET as it is' '
	start_container C4 &&
	test_when_finished "stop_container C4" &&
	mkdir -p "$TRASH/b4" "$TRASH/b4b" &&
	echo "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/\"}}" >"$TRASH/b4/config.json" &&
	state "$C4" "$TRASH/b4" | "$HOOK" "$TRASH/plain4/tfs" &&
	check_attached "$C4" "$TRASH/plain4/tfs" &&
	echo "{\"ociVersion\":\"1.0.2\",\"process\":{\"cwd\":\"/\"}}" >"$TRASH/b4b/config.json" &&
	state "$C4" "$TRASH/b4b" | "$HOOK" "$TRASH/plain4b/tfs" &&
	check_attached "$C4" "$TRASH/plain4b/tfs"
'

# ---- what a naive reading of the JSON would get wrong ----------------------

# An id with escaped quotes that hold "pid":1 comes first, annotations
# with keys pid and bundle last: the top-level pid and bundle are C5 and
# b5, whichever match a naive reading takes.
test_expect_success 'the state: pid and bundle at the top level, not in annotations or strings' '
	start_container C5 &&
	test_when_finished "stop_container C5" &&
	mkdir -p "$TRASH/b5/rootfs" "$TRASH/decoy/rootfs" &&
	write_runc_config "$TRASH/b5/config.json" &&
	cat >state5 <<-EOF &&
	{"id":"a\"{\"pid\":1,\"bundle\":\"/\"}","ociVersion":"1.0.2","status":"creating",
	"pid":$C5,"bundle":"$(json_str "$TRASH/b5")",
	"annotations":{"pid":"$$","bundle":"$(json_str "$TRASH/decoy")","x":"}{]["}}
	EOF
	cat state5 &&
	"$HOOK" <state5 &&
	check_attached "$C5" "$TRASH/b5/rootfs/run/timingfs" &&
	test_path_is_missing "$TRASH/decoy/rootfs/run"
'

# ---- refused: nothing attached ----------------------------------------------

test_expect_success 'setup: container CM, bundle bm, for the refusals' '
	start_container CM &&
	mkdir -p "$TRASH/bm/rootfs" &&
	write_runc_config "$TRASH/bm/config.json" &&
	BM=$(json_str "$TRASH/bm")
'

# refused NAME MESSAGE: the state in file NAME: exit 1, the line
# "timingfs-oci-hook: MESSAGE" alone on stderr, nothing attached or
# made.
refused() {
	cat "$1"
	"$TIMINGFSCTL" mounts >before || return 1
	test_expect_code 1 "$HOOK" <"$1" >out 2>err || return 1
	cat err
	echo "timingfs-oci-hook: $2" >expect
	test_cmp expect err || return 1
	test_must_fail test -s out || return 1
	"$TIMINGFSCTL" mounts >after || return 1
	test_cmp before after || return 1
	test_path_is_missing "$TRASH/bm/rootfs/run"
}

test_expect_success 'empty input, blanks: refused' '
	: >s.empty &&
	refused s.empty "the state on stdin is empty" &&
	printf "  \n\t\n" >s.blank &&
	refused s.blank "the state on stdin is empty"
'

test_expect_success 'not JSON, not an object: refused' '
	echo "pid $CM bundle $TRASH/bm" >s.text &&
	refused s.text "the state on stdin is not a JSON object" &&
	echo "[{\"ociVersion\":\"1.0.2\",\"pid\":$CM,\"bundle\":\"$BM\"}]" >s.array &&
	refused s.array "the state on stdin is not a JSON object"
'

test_expect_success 'no ociVersion, or not a string: refused' '
	echo "{\"id\":\"c1\",\"status\":\"creating\",\"pid\":$CM,\"bundle\":\"$BM\"}" >s.nover &&
	refused s.nover "the state on stdin has no ociVersion" &&
	echo "{\"ociVersion\":1.0,\"pid\":$CM,\"bundle\":\"$BM\"}" >s.numver &&
	refused s.numver "the state on stdin has an ociVersion that is no string: 1.0"
'

test_expect_success 'no pid (one only in annotations): refused' '
	echo "{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\",\"bundle\":\"$BM\"}" >s.nopid &&
	refused s.nopid "the state on stdin has no pid" &&
	echo "{\"ociVersion\":\"1.0.2\",\"annotations\":{\"pid\":\"$CM\"},\"bundle\":\"$BM\"}" >s.annpid &&
	refused s.annpid "the state on stdin has no pid"
'

test_expect_success 'pid "abc", 0, -1, 1.5, "7": refused' '
	for p in "\"abc\"" 0 -1 1.5 "\"$CM\"" 0$CM; do
		echo "{\"ociVersion\":\"1.0.2\",\"pid\":$p,\"bundle\":\"$BM\"}" >s.pid &&
		refused s.pid "the state on stdin has a pid that is no positive integer: $p" ||
		return 1
	done
'

test_expect_success 'no bundle, not a string, not absolute: refused' '
	echo "{\"ociVersion\":\"1.0.2\",\"id\":\"c1\",\"status\":\"creating\",\"pid\":$CM}" >s.nobundle &&
	refused s.nobundle "the state on stdin has no bundle" &&
	echo "{\"ociVersion\":\"1.0.2\",\"pid\":$CM,\"bundle\":null}" >s.nullbundle &&
	refused s.nullbundle "the state on stdin has a bundle that is no string: null" &&
	echo "{\"ociVersion\":\"1.0.2\",\"pid\":$CM,\"bundle\":\"bm\"}" >s.relbundle &&
	refused s.relbundle "the state on stdin has a bundle that is no absolute path: bm"
'

test_expect_success 'a pid no process has: refused' '
	max=$(cat /proc/sys/kernel/pid_max) &&
	state "$max" "$TRASH/bm" >s.gone &&
	refused s.gone "no process $max (the container'"'"'s, from the state) on this host"
'

# All the refusals were for what was wrong in them alone: the same state
# made right attaches.
test_expect_success 'the state the refusals spoiled, right: attached' '
	test_when_finished "stop_container CM" &&
	state "$CM" "$TRASH/bm" | "$HOOK" &&
	check_attached "$CM" "$TRASH/bm/rootfs/run/timingfs"
'

# Before pivot_root an absolute link in the rootfs resolves against the
# host's root: the hook must make nothing there, and mount nothing.
test_expect_success 'a symbolic link in the rootfs on the way to TARGET: refused' '
	start_container C6 &&
	test_when_finished "stop_container C6" &&
	mkdir -p "$TRASH/b6/rootfs" "$TRASH/outside" &&
	write_runc_config "$TRASH/b6/config.json" &&
	ln -s "$TRASH/outside" "$TRASH/b6/rootfs/run" &&
	"$TIMINGFSCTL" mounts >before &&
	state "$C6" "$TRASH/b6" >state6 &&
	test_expect_code 1 "$HOOK" <state6 2>err &&
	echo "timingfs-oci-hook: $TRASH/b6/rootfs/run is a symbolic link in the container: give a TARGET without one" >expect &&
	test_cmp expect err &&
	test_path_is_missing "$TRASH/outside/timingfs" &&
	"$TIMINGFSCTL" mounts >after &&
	test_cmp before after &&
	"$HOOK" /var/run/timingfs <state6 &&
	check_attached "$C6" "$TRASH/b6/rootfs/var/run/timingfs"
'

test_expect_success 'a rootfs that is not there, a TARGET through a file: refused' '
	start_container C7 &&
	test_when_finished "stop_container C7" &&
	mkdir -p "$TRASH/b7" "$TRASH/b7b/rootfs" &&
	write_runc_config "$TRASH/b7/config.json" &&
	state "$C7" "$TRASH/b7" >state7 &&
	test_expect_code 1 "$HOOK" <state7 2>err &&
	echo "timingfs-oci-hook: no directory $TRASH/b7/rootfs (the rootfs) in the mount namespace of the container" >expect &&
	test_cmp expect err &&
	test_path_is_missing "$TRASH/b7/rootfs" &&
	write_runc_config "$TRASH/b7b/config.json" &&
	: >"$TRASH/b7b/rootfs/file" &&
	state "$C7" "$TRASH/b7b" >state7b &&
	test_expect_code 1 "$HOOK" /file/tfs <state7b 2>err &&
	echo "timingfs-oci-hook: $TRASH/b7b/rootfs/file is no directory in the container" >expect &&
	test_cmp expect err
'

# ---- timingfsctl: which one, its status ------------------------------------

# A copy of the hook with the real timingfsctl next to it, one alone;
# in PATH first, a timingfsctl that only fails with 3.
test_expect_success 'timingfsctl: $TIMINGFSCTL, else next to the hook, else PATH; its status' '
	mkdir -p inst lone decoy &&
	cp "$HOOK" inst/ && cp "$TIMINGFSCTL" inst/ && cp "$HOOK" lone/ &&
	printf "#!/bin/sh\necho \"timingfsctl: the decoy in PATH\" >&2\nexit 3\n" >decoy/timingfsctl &&
	chmod +x decoy/timingfsctl &&
	start_container C8 &&
	test_when_finished "stop_container C8" &&
	mkdir -p "$TRASH/b8" &&
	state "$C8" "$TRASH/b8" >state8 &&
	PATH=$TRASH/decoy:$PATH test_expect_code 3 env -u TIMINGFSCTL "$TRASH/lone/timingfs-oci-hook" "$TRASH/t8/a" <state8 2>err &&
	grep -x "timingfsctl: the decoy in PATH" err &&
	PATH=$TRASH/decoy:$PATH env -u TIMINGFSCTL "$TRASH/inst/timingfs-oci-hook" "$TRASH/t8/b" <state8 &&
	check_attached "$C8" "$TRASH/t8/b" &&
	PATH=$TRASH/decoy:$PATH "$TRASH/lone/timingfs-oci-hook" "$TRASH/t8/c" <state8 &&
	check_attached "$C8" "$TRASH/t8/c"
'

test_expect_success 'no daemon answering: timingfsctl says so, exit 1' '
	start_container C9 &&
	test_when_finished "stop_container C9" &&
	mkdir -p "$TRASH/b9" &&
	state "$C9" "$TRASH/b9" |
	TIMINGFS_CONTROL=$TRASH/no.sock test_expect_code 1 "$HOOK" "$TRASH/t9" 2>err &&
	cat err &&
	test "$(wc -l <err)" = 1 &&
	grep "^timingfsctl: " err &&
	test -z "$(in_ns "$C9" cat /proc/self/mountinfo | grep -F " $TRASH/t9 ")"
'

# ---- the end of a container --------------------------------------------------

test_expect_success 'C1 killed: its mount goes from timingfsctl mounts' '
	listed "$C1" "$D1" &&
	ino=$(pidns_of "$C1") &&
	stop_container C1 &&
	for i in $(seq 1 100); do
		"$TIMINGFSCTL" mounts >out || return 1
		grep -q "^$ino " out || break
		sleep 0.05
	done &&
	cat out &&
	test_must_fail grep "^$ino " out
'

test_done
