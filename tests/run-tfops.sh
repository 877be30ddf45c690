#!/bin/sh
# run-tfops.sh BUILD_DIR — holds backend/tfops.def, as pcc parses it
# (BUILD_DIR/tfopdump), against the op registry of the installed
# TensorFlow (tools/tfpython, the pinned 2.21): tests/tf/check_opdefs.py,
# first on a mutated copy of the table (every mutation must be reported),
# then on the table itself.  Without TensorFlow (tools/tfpython exits 77)
# the two checks count as skipped, visibly.
# Prints "tfops: N passed, N failed, N skipped".
B=${1:-build}
cd "$(dirname "$0")/.." || exit 2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
if ! "$B/tfopdump" >"$t/table.json"; then
	echo "FAIL tfopdump"
	echo "tfops: 0 passed, 1 failed, 0 skipped"
	exit 1
fi
pass=0 fail=0 skip=0
for mode in --self-test --check; do
	tools/tfpython tests/tf/check_opdefs.py $mode "$t/table.json" >"$t/out" 2>"$t/err"
	rc=$?
	grep -v '^tfops' "$t/out"
	case $rc in
	0) pass=$((pass + 1)) ;;
	77) skip=$((skip + 1)); echo "SKIPPED check_opdefs.py $mode: $(cat "$t/err")" ;;
	*) fail=$((fail + 1)); echo "FAIL check_opdefs.py $mode (exit $rc)"
	   grep -v '^WARNING\|^I0000' "$t/err" | tail -n 5 | sed 's/^/  | /' ;;
	esac
	grep '^tfops: checked' "$t/out"
done
echo "tfops: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
