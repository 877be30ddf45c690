#!/bin/sh
# Execution with TensorFlow.js: for each line of tests/tfjs/cases.txt, the
# single-device graph and a distributed plan of it are emitted with
# --emit=tf-json and run by tests/tfjs/run.cjs, which compares outputs to
# 1e-5 and checks the plan's control inputs; tests/tfjs/lowering.cjs
# compares the lowerings of tests/tfjs/lowering.gir with TF.js's kernels
# for the ops lowered.  Needs node and the pinned
# packages (npm ci in tests/tfjs; tools/setup-debian.sh does it).
PCC=${1:-./pcc}
cd "$(dirname "$0")/.." || exit 2
case $PCC in /*) ;; *) PCC=$(pwd)/$PCC ;; esac
if ! command -v node >/dev/null 2>&1 ||
   [ ! -d tests/tfjs/node_modules/@tensorflow/tfjs-converter ]; then
	echo "tfjs: SKIPPED: needs node and 'npm ci' in tests/tfjs (tools/setup-debian.sh)"
	# one check per case and the lowering check
	echo "tfjs: 0 passed, 0 failed, $(( $(grep -v '^#' tests/tfjs/cases.txt | grep -c .) + 1 )) skipped"
	exit 0
fi
pass=0 fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
# result NAME OK: counts the comparison NAME (its files in $t/NAME) as
# passed when OK is 1, else shows what went wrong
result() {
	if [ "$2" = 1 ]; then
		pass=$((pass+1))
		echo "ok $1: $(grep -c '^ok' "$t/$1/log") checks"
	else
		fail=$((fail+1))
		echo "FAIL $1"
		cat "$t/$1/err" "$t/$1/log" 2>/dev/null | grep -v '^ok' | sed 's/^/  | /' | head -n 20
	fi
}
while read -r name single plan; do
	case $name in ''|'#'*) continue ;; esac
	d=$t/$name
	mkdir -p "$d"
	ok=1
	"$PCC" -passes= "$single" --emit=tf-json -o "$d/single.json" 2>"$d/err" || ok=0
	case $plan in
	pcc\ *)
		# shellcheck disable=SC2086
		"$PCC" ${plan#pcc } "$single" --emit=tf-json -o "$d/plan.json" 2>>"$d/err" || ok=0 ;;
	*)
		"$PCC" -passes= "$plan" --emit=tf-json -o "$d/plan.json" 2>>"$d/err" || ok=0 ;;
	esac
	[ $ok = 1 ] && node tests/tfjs/run.cjs "$d/single.json" "$d/plan.json" >"$d/log" 2>&1 || ok=0
	result "$name" $ok
done < tests/tfjs/cases.txt
# the core-op lowerings of TF.js's Prelu and fused ops against TF.js's own
# kernels for them
d=$t/lowering
mkdir -p "$d"
ok=1
"$PCC" -passes= tests/tfjs/lowering.gir --emit=tf-json -o "$d/model.json" 2>"$d/err" &&
	node tests/tfjs/lowering.cjs "$d/model.json" >"$d/log" 2>&1 || ok=0
result lowering $ok
echo "tfjs: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
