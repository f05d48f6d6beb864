#!/bin/sh
# t0020: the fuzz targets' inputs replayed without libFuzzer. For each
# t/fuzz/fuzz-NAME.c, t/bin/replay-NAME (make all) runs the committed
# corpus t/fuzz/corpus/NAME and the inputs of the crashes found so far,
# t/fuzz/regress/NAME, through the target and its invariants: one test
# per target, the replay's own lines after it as comments. make
# check-sanitize runs them under ASan and UBSan.
t=$(dirname "$0")
n=0
for src in "$t"/fuzz/fuzz-*.c; do
	name=${src##*/fuzz-}
	name=${name%.c}
	n=$((n + 1))
	set -- "$t/fuzz/corpus/$name"
	[ -d "$t/fuzz/regress/$name" ] && set -- "$@" "$t/fuzz/regress/$name"
	if out=$("$t/bin/replay-$name" "$@" 2>&1); then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
	fi
	printf '%s\n' "$out" | sed 's/^/#   /'
done
echo "1..$n"
