#!/bin/bash
# A restart of the service under systemd keeps every mount: the daemon
# keeps its descriptors and its state in the service's descriptor store
# (FDSTORE=1), a restart (RestartKillSignal=SIGUSR1) leaves them there,
# and the next start takes them over from LISTEN_FDS. helper-fdstore.py
# plays systemd's side: the notify socket, the store, the restart with
# the kept descriptors from 3 on, and the stop that empties the store.
test_description='systemd restart keeps the mounts: the descriptor store
holds them, the next start takes them over, readers see no error; stop
unmounts.'
. "$(dirname "$0")/test-lib.sh"
require_fuse
test_have_prereq ROOT || skip_all "not root: the daemon mounts itself here"
command -v python3 >/dev/null || skip_all "no python3 (scripts/install-deps installs it)"

CONF=$TRASH/fdstore.conf
STORE=$TRASH/store

cleanup_fdstore() {
	# A stop empties the store: the daemon unmounts and ends.
	[ -z "${HELPER:-}" ] || {
		echo stop >&8
		wait_for 20 grep -q "^stopped" "$STORE/out"
		exec 8>&-
	}
	kill_readers
	cleanup
}
trap cleanup_fdstore EXIT

READERS=
kill_readers() {
	[ -z "$READERS" ] || kill $READERS 2>/dev/null
	[ -z "$READERS" ] || wait $READERS 2>/dev/null
	READERS=
}

# reader NAME CMD...: CMD in a loop until $TRASH/stop exists; an error
# or a content that is not whole goes to NAME.err; the count of
# answers to NAME.n.
reader() {
	local name=$1 n=0 out
	shift
	while [ ! -e "$TRASH/stop" ]; do
		if out=$("$@" 2>&1); then
			case $out in
			*[!0-9]* | "") [ "$name" = value ] &&
				echo "torn: [$out]" >>"$TRASH/$name.err" ;;
			esac
			if [ "$name" = table ]; then
				head=$(printf '%s\n' "$out" | head -n 1)
				[ "$head" = "$TABLE_HEADER" ] ||
					echo "table without its header: [$head]" >>"$TRASH/$name.err"
				printf '%s\n' "$out" | awk 'NF != 8 { bad = 1 } END { exit bad }' ||
					echo "a torn row" >>"$TRASH/$name.err"
			fi
			n=$((n + 1))
		else
			echo "error: $out" >>"$TRASH/$name.err"
		fi
		echo "$n" >"$TRASH/$name.n"
	done
}

answers() {
	cat "$TRASH/$1.n" 2>/dev/null || echo 0
}

# answered NAME MORE: NAME's readers have more than MORE answers now
# (asked afresh at each try of wait_for).
answered() {
	test "$(answers "$1")" -gt "$2"
}

server_starts() {
	sed -n "s/^server_starts //p" "$MNT/info"
}

# starts_are N: server_starts is N now.
starts_are() {
	test "$(server_starts)" = "$1"
}

# restarts_are N: the helper said "restarted 0" N times.
restarts_are() {
	test "$(grep -c "^restarted 0" "$STORE/out")" = "$1"
}

test_expect_success 'setup: the daemon as systemd starts it, its store kept' '
	write_config "$CONF" format.units=windows &&
	mkdir -p "$STORE" "$MNT" &&
	mkfifo "$STORE/in" &&
	{ python3 "$TEST_DIRECTORY/helper-fdstore.py" "$STORE" "$TIMINGFS" \
		-f -c "$CONF" -o allow_other,no_auto_unmount,unmount_stale \
		"$MNT" <"$STORE/in" >"$STORE/out" 2>"$STORE/err" & } &&
	HELPER=$! &&
	kill_at_exit "$HELPER" &&
	exec 8>"$STORE/in" &&
	wait_mounted "$MNT" &&
	starts_are 1 &&
	echo names >&8 &&
	wait_for 10 grep -q "^names .*state" "$STORE/out" &&
	cat "$STORE/out"
'

test_expect_success 'systemctl restart: every reader answered throughout, none sees an error' '
	rm -f "$TRASH"/*.err "$TRASH"/*.n "$TRASH/stop" &&
	{ reader value cat "$MNT/proc/1/cycles" & } &&
	READERS="$READERS $!" &&
	{ reader value cat "$MNT/groups/0/cpu0/idle_cycles" & } &&
	READERS="$READERS $!" &&
	{ reader table cat "$MNT/proc/table" & } &&
	READERS="$READERS $!" &&
	sup=$(cat "$STORE/pid") &&
	wait_for 10 answered value 5 &&
	echo restart >&8 &&
	wait_for 20 grep -q "^restarted" "$STORE/out" &&
	grep "^restarted 0" "$STORE/out" &&
	test "$(cat "$STORE/pid")" != "$sup" &&
	grep "the service restarts: every mount stays" "$STORE/err" &&
	wait_for 10 starts_are 2 &&
	before=$(answers table) &&
	wait_for 10 answered table $((before + 2)) &&
	touch "$TRASH/stop" &&
	wait $READERS &&
	READERS= &&
	echo "value answers $(answers value), table answers $(answers table)" &&
	if cat "$TRASH"/*.err 2>/dev/null; then false; else true; fi &&
	is_mounted "$MNT"
'

test_expect_success 'a second restart, then systemctl stop: unmounted, the daemon gone' '
	echo restart >&8 &&
	wait_for 20 restarts_are 2 &&
	wait_for 10 starts_are 3 &&
	cat "$MNT/proc/1/cycles" &&
	sup=$(cat "$STORE/pid") &&
	echo stop >&8 &&
	wait_for 20 grep -q "^stopped 0" "$STORE/out" &&
	exec 8>&- &&
	HELPER= &&
	! is_mounted "$MNT" &&
	test_not_ is_running "$sup"
'

test_done
