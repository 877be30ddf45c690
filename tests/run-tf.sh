#!/bin/sh
# run-tf.sh PCC — the TensorFlow importers from the command line:
#   - bad inputs (tests/tf/bad/FILE with FILE.expect, one expected stderr
#     substring per line): exit 1, a clear message, output untouched, no
#     crash;
#   - good inputs: a GraphDef (tests/tf/mlp.pbtxt) and a TF.js model
#     (tests/tf/tiny/model.json) import with --batch bound, print as gir
#     that reads back to the same bytes, and plan on a cluster;
#   - device fields become @device pins on the cluster (or not, with
#     --ignore-devices); a GPU the cluster lacks is an error;
#   - --batch / --input-shape usage errors exit 2.
# Prints "tf: N passed, N failed".
PCC=${1:-./pcc}
case $PCC in /*) ;; *) PCC=$(pwd)/$PCC ;; esac
cd "$(dirname "$0")" || exit 2
pass=0 fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL $*"; }
check() { # check NAME CMD...: the command must succeed
	name=$1; shift
	if "$@" >"$t/log" 2>&1; then ok
	else ko "$name"; sed 's/^/  | /' "$t/log" | head -n 20; fi
}

for f in tf/bad/*; do
	case $f in *.expect) continue ;; esac
	name=${f##*/}
	printf 'untouched\n' >"$t/out.gir"
	(cd tf/bad && "$PCC" -passes= "$name" -o "$t/out.gir") >/dev/null 2>"$t/err"
	rc=$?
	why=
	[ $rc -eq 1 ] || why="exit $rc, expected 1"
	while IFS= read -r e; do
		grep -F -q -- "$e" "$t/err" || why="${why:+$why; }missing '$e'"
	done <"$f.expect"
	grep -q 'AddressSanitizer\|runtime error' "$t/err" && why="${why:+$why; }sanitizer report"
	[ "$(cat "$t/out.gir")" = untouched ] || why="${why:+$why; }output modified"
	if [ -z "$why" ]; then ok; else ko "tf/bad/$name: $why"; sed 's/^/  | /' "$t/err" | head -n 5; fi
done

C=../examples/clusters/tag-testbed.yaml
# A GraphDef: -1 bound to --batch, @batch_dim, {batch = 32}; dumps read back.
check "mlp.pbtxt imports" "$PCC" -passes= --batch 32 tf/mlp.pbtxt --cluster $C -o "$t/mlp.gir"
check "batch bound" grep -q '^graph mlp {batch = 32}' "$t/mlp.gir"
check "batch_dim" grep -q '%x = Placeholder() {.*@batch_dim = 0.*} : f32\[32,784\]' "$t/mlp.gir"
check "mlp dump reads back" sh -c "'$PCC' -passes= '$t/mlp.gir' -o '$t/mlp2.gir' && cmp '$t/mlp.gir' '$t/mlp2.gir'"
# A carriage return inside a quoted name (libFuzzer's fuzz-pbtxt found
# it): gir prints it as \r, so the dump reads back (a raw CR ends the line
# since gir accepts CR line ends).
printf 'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "shape" value { shape { dim { size: 2 } } } } attr { key: "a\rb" value { b: false } } }\n' >"$t/cr.pbtxt"
check "a CR in an attr name reads back" sh -c "'$PCC' -passes= '$t/cr.pbtxt' -o '$t/cr.gir' 2>/dev/null && grep -q 'a\\\\rb' '$t/cr.gir' && '$PCC' -passes= '$t/cr.gir' -o '$t/cr2.gir' 2>/dev/null && cmp '$t/cr.gir' '$t/cr2.gir'"
check "device pinned (task 0 GPU 0)" grep -q '%dense/MatMul = MatMul.*@device = "m0/gpu0"' "$t/mlp.gir"
check "colocation group" grep -q '%dense/Relu = .*@colocate = "dense/MatMul"' "$t/mlp.gir"
check "--ignore-devices" sh -c "'$PCC' -passes= --ignore-devices tf/mlp.pbtxt --cluster $C | grep -vq '@device'"
check "mlp plans" "$PCC" -passes=simplify,annotate,place --verify-each --batch 8 tf/mlp.pbtxt --cluster $C -o "$t/plan.gir"
check "stdin, sniffed" sh -c "'$PCC' -passes= --batch 4 - --cluster $C < tf/mlp.pbtxt | grep -q '{batch = 4}'"
# TF.js: weights read for small constants, quantized and float16.
check "tiny model.json imports" "$PCC" -passes= --batch 5 tf/tiny/model.json --cluster $C -o "$t/tiny.gir"
check "tiny dump reads back" sh -c "'$PCC' -passes= '$t/tiny.gir' -o '$t/tiny2.gir' && cmp '$t/tiny.gir' '$t/tiny2.gir'"
check "tiny types" grep -q '%dense/MatMul = MatMul.* : f32\[5,2\]' "$t/tiny.gir"
check "tiny plans" "$PCC" -passes=simplify,annotate,place --verify-each tf/tiny/model.json --cluster $C -o /dev/null
# A GPU the cluster lacks: the 2-GPU box has no task 3.
sed 's|task:0/device:GPU:0|task:3/device:GPU:0|' tf/mlp.pbtxt >"$t/far.pbtxt"
check "missing GPU is an error" sh -c "'$PCC' -passes= '$t/far.pbtxt' --cluster ../examples/clusters/homo-2gpu.yaml 2>&1 >/dev/null | grep -q \"node 'dense/MatMul': device '/job:worker/replica:0/task:3/device:GPU:0' (task 3, GPU 0) is not in cluster\"; [ \$? -eq 0 ]"
check "missing GPU exits 1" sh -c "'$PCC' -passes= '$t/far.pbtxt' --cluster ../examples/clusters/homo-2gpu.yaml >/dev/null 2>&1; [ \$? -eq 1 ]"
# An attribute named like a pcc annotation is dropped with a warning.
printf 'node { name: "x" op: "NoOp" attr { key: "@device" value { s: "m0/gpu0" } } }\n' >"$t/at.pbtxt"
check "@ attributes dropped" sh -c "'$PCC' -passes= '$t/at.pbtxt' --cluster $C 2>'$t/w' | grep -vq '@device' && grep -q \"attribute '@device' dropped\" '$t/w'"
# Usage errors.
for a in --batch=0 --batch=x --batch=1.5 --input-shape=x --input-shape==1 --input-shape=x=1,,2; do
	check "$a is a usage error" sh -c "'$PCC' -passes= $a tf/mlp.pbtxt >/dev/null 2>&1; [ \$? -eq 2 ]"
done
check "--input-shape" sh -c "'$PCC' -passes= --input-shape=x=16,784 tf/mlp.pbtxt | grep -q 'f32\[16,784\]'"
echo "tf-import: $pass passed, $fail failed"
[ $fail -eq 0 ]
