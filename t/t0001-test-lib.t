#!/bin/bash
test_description='The test library itself, as git tests its own: small
scripts run with it, and what they print and leave behind compared with
what the library promises. A failing test is "not ok", a broken
&&-chain is caught before it runs, a missing prerequisite skips, setup
state carries over, cleanups run, the trash directory stays after a
failure and goes after success, and a test that hangs is stopped.'
. "$(dirname "$0")/test-lib.sh"

# run_sub NAME BODY: a script NAME.t made of BODY between the library
# and test_done, run in its own directory; its output in NAME.out, its
# exit status in NAME.status.
run_sub() {
	mkdir -p "sub" &&
	{
		printf "#!/bin/bash\ntest_description=%s\n" "\"sub-test $1\"" &&
		printf ". %q\n" "$TEST_DIRECTORY/test-lib.sh" &&
		printf "%s\n" "$2" &&
		printf "test_done\n"
	} >"sub/$1.t" &&
	{ TEST_TIMEOUT=${SUB_TIMEOUT:-60} bash "sub/$1.t" >"$1.out" 2>&1; echo $? >"$1.status"; } &&
	cat "$1.out"
}

test_expect_success 'a passing and a failing test: ok, not ok, exit 1' '
	run_sub pass-fail "
test_expect_success \"passes\" \"true\"
test_expect_success \"fails\" \"false\"
" &&
	grep -x "ok 1 - passes" pass-fail.out &&
	grep -x "not ok 2 - fails" pass-fail.out &&
	grep -x "1..2" pass-fail.out &&
	test "$(cat pass-fail.status)" = 1
'

test_expect_success 'the trash directory stays after a failure, with its path' '
	grep -x "# trash directory kept: $TRASH/sub/trash.pass-fail" pass-fail.out &&
	test_path_is_dir sub/trash.pass-fail
'

test_expect_success 'a passing script exits 0 and leaves no trash' '
	run_sub pass "test_expect_success \"passes\" \"true\"" &&
	test "$(cat pass.status)" = 0 &&
	test_path_is_missing sub/trash.pass &&
	! grep "trash directory kept" pass.out
'

test_expect_success 'a broken &&-chain fails before the body runs' '
	run_sub chain "
test_expect_success \"broken\" \"
	true
	touch \\\"\\\$TRASH/ran-after-break\\\" && false
\"
test_expect_success \"whole\" \"true &&
	true\"
test_expect_success \"background breaks\" \"true & X=1 && true\"
test_expect_success \"background in braces\" \"{ true & } && X=\\\$! && true\"
" &&
	grep -x "not ok 3 - background breaks" chain.out &&
	grep -x "ok 4 - background in braces" chain.out &&
	grep -x "not ok 1 - broken" chain.out &&
	grep "broken &&-chain" chain.out &&
	grep -x "ok 2 - whole" chain.out &&
	test_path_is_missing sub/trash.chain/ran-after-break &&
	grep -x "not ok 1 - broken" chain.out
'

test_expect_success 'a failure inside a loop fails the test through return 1' '
	run_sub loop "
test_expect_success \"loop\" \"for i in 1 2; do test \\\$i = 2 || return 1; done\"
" &&
	grep -x "not ok 1 - loop" loop.out
'

test_expect_success 'setup state carries over; the cwd is the trash' '
	run_sub state "
test_expect_success \"setup\" \"X=42 && pwd >where\"
test_expect_success \"later\" \"test \\\"\\\$X\\\" = 42 && test -f \\\"\\\$TRASH/where\\\"\"
test_expect_success \"where\" \"test \\\"\\\$(cat where)\\\" = \\\"\\\$TRASH\\\"\"
" &&
	grep -x "ok 2 - later" state.out &&
	grep -x "ok 3 - where" state.out &&
	test "$(cat state.status)" = 0
'

test_expect_success 'prerequisites: a missing one skips, a present one runs' '
	run_sub prereq "
test_set_prereq HAVE
test_lazy_prereq LAZYNO \"false\"
test_lazy_prereq LAZYYES \"true\"
test_expect_success HAVE \"have\" \"true\"
test_expect_success LAZYNO \"lazy no\" \"false\"
test_expect_success LAZYYES,HAVE \"lazy yes\" \"true\"
test_expect_success !HAVE \"not have\" \"false\"
test_expect_success HAVE \"runs and fails\" \"false\"
" &&
	grep -x "ok 1 - have" prereq.out &&
	grep -x "ok 2 # skip lazy no (missing LAZYNO)" prereq.out &&
	grep -x "ok 3 - lazy yes" prereq.out &&
	grep -x "ok 4 # skip not have (missing !HAVE)" prereq.out &&
	grep -x "not ok 5 - runs and fails" prereq.out
'

test_expect_success 'an unknown prerequisite is a bail out, not a skip' '
	run_sub unknown "test_expect_success NOSUCH \"x\" \"true\"" &&
	grep -x "Bail out! unknown prerequisite NOSUCH" unknown.out &&
	test "$(cat unknown.status)" = 1
'

test_expect_success 'test_when_finished runs after a failure too, and can fail a test' '
	run_sub finished "
test_expect_success \"fails\" \"test_when_finished \\\"echo one >>\\\\\\\"\\\\\\\$TRASH/log\\\\\\\"\\\" && test_when_finished \\\"echo two >>\\\\\\\"\\\\\\\$TRASH/log\\\\\\\"\\\" && false\"
test_expect_success \"cleanup fails\" \"test_when_finished false && true\"
" &&
	grep -x "not ok 1 - fails" finished.out &&
	grep -x "not ok 2 - cleanup fails" finished.out &&
	printf "two\none\n" >expect &&
	test_cmp expect sub/trash.finished/log
'

test_expect_success 'test_must_fail: a failure passes; success, a signal or no command fail' '
	test_must_fail false &&
	test_must_fail sh -c "exit 3" &&
	! test_must_fail true &&
	! test_must_fail sh -c "kill -9 \$\$" &&
	! test_must_fail no-such-command-here &&
	test_expect_code 3 sh -c "exit 3" &&
	! test_expect_code 3 true
'

test_expect_success 'a test that hangs is stopped at its timeout, and the next runs' '
	SUB_TIMEOUT=1 run_sub hang "
test_expect_success \"hangs\" \"sleep 30\"
test_expect_success \"next\" \"true\"
" &&
	grep -x "not ok 1 - hangs" hang.out &&
	grep "timed out after 1 s, waiting for:" hang.out &&
	grep -E "^#   +[0-9]+ sleep 30$" hang.out &&
	grep -x "ok 2 - next" hang.out
'

test_expect_success 'a wait that gives up says what it waited for, and how long' '
	run_sub waits "
test_expect_success \"wait_for\" \"wait_for 1 test -e never\"
test_expect_success \"wait_file\" \"wait_file never.out 2 1\"
test_expect_success \"bounded, its stderr kept\" \"bounded 1 sleep 10 2>err\"
test_expect_success \"wait_for, at once\" \"wait_for 1 true\"
" &&
	grep -x "#   waited 1 s for: test -e never" waits.out &&
	grep -x "#   waited 1 s for never.out to have 2 lines; there is no such file" waits.out &&
	grep -x "#   waited 1 s for sleep to end by itself; timeout ended it: sleep 10" waits.out &&
	grep -x "ok 4 - wait_for, at once" waits.out &&
	test "$(grep -c "^not ok" waits.out)" = 3
'

test_expect_success 'a body the shell aborts is reported failed, and its cleanup runs' '
	run_sub abort "
test_expect_success \"aborts\" \"test_when_finished \\\"touch \\\\\\\"\\\\\\\$TRASH/cleaned\\\\\\\"\\\" && x=\\\$((1 / 0)) && true\"
test_expect_success \"next\" \"true\"
test_expect_success \"last aborts\" \"x=\\\$((1 / 0)) && true\"
" &&
	grep -x "not ok 1 - aborts # aborted by the shell" abort.out &&
	grep -x "ok 2 - next" abort.out &&
	grep -x "not ok 3 - last aborts # aborted by the shell" abort.out &&
	grep -x "1..3" abort.out &&
	test "$(cat abort.status)" = 1 &&
	test_path_is_file sub/trash.abort/cleaned
'

test_expect_success 'no test_description: a bail out' '
	mkdir -p sub &&
	printf ". %q\ntest_done\n" "$TEST_DIRECTORY/test-lib.sh" >sub/nodesc.t &&
	test_expect_code 1 bash sub/nodesc.t >nodesc.out &&
	grep "sets no test_description" nodesc.out
'

test_done
