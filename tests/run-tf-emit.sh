#!/bin/sh
# --emit=tf and --emit=tf-json from the command line:
#  - protobuf: every emitted GraphDef (the example models, the test graphs
#    and plans, under several option sets) goes through
#      protoc --encode=tensorflow.GraphDef  (text -> binary)
#      protoc --decode=tensorflow.GraphDef  (binary -> text)
#    against tests/tf/graphdef.proto (TensorFlow 2.9's GraphDef field
#    structure, restated), and the decoded text must equal pcc's output
#    byte for byte: every field name, number type and enum name exists
#    there, and pcc writes the canonical form protoc writes.  A corrupted
#    file must be rejected (the check bites).
#  - the CLI: errors exit 1 and leave the output alone; tf-json writes its
#    weights beside -o, or in the current directory for -o -.
PCC=${1:-./pcc}
cd "$(dirname "$0")/.." || exit 2
case $PCC in /*) ;; *) PCC=$(pwd)/$PCC ;; esac
pass=0 fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
check() { # check NAME COMMAND...: the command must succeed
	name=$1; shift
	if "$@" >"$t/log" 2>&1; then pass=$((pass+1))
	else echo "FAIL $name"; sed 's/^/  | /' "$t/log" | head -n 20; fail=$((fail+1)); fi
}
P="protoc -Itests/tf --encode=tensorflow.GraphDef tests/tf/graphdef.proto"
D="protoc -Itests/tf --decode=tensorflow.GraphDef tests/tf/graphdef.proto"
C=examples/clusters/hetero-4.yaml

if command -v protoc >/dev/null 2>&1; then
	n=0
	for f in examples/mlp.gir examples/hand-placed.gir examples/models/*.gir \
		 tests/tf/train-plan.gir tests/tf/ops.gir tests/tfjs/*.gir; do
		for opts in "" "--emit-opt=order=both --emit-opt=allreduce=nccl --emit-opt=annotations=drop --emit-opt=output_shapes=true"; do
			n=$((n+1))
			cl="--cluster $C"
			grep -q '^cluster ' "$f" && cl=""   # a plan keeps its own
			# shellcheck disable=SC2086
			check "protoc $f $opts" sh -c "'$PCC' -passes= '$f' $cl --emit=tf $opts 2>/dev/null >'$t/$n.pbtxt' &&
				$P <'$t/$n.pbtxt' >'$t/$n.pb' && $D <'$t/$n.pb' >'$t/$n.back' &&
				cmp '$t/$n.pbtxt' '$t/$n.back'"
		done
	done
	# generated Const content (tensor_content bytes) where it stays small
	for f in tests/tfjs/cnn.gir tests/tfjs/cnn-plan.gir tests/tf/ops.gir; do
		n=$((n+1))
		check "protoc $f weights=generated" sh -c "'$PCC' -passes= '$f' --emit=tf --emit-opt=weights=generated 2>/dev/null >'$t/$n.pbtxt' &&
			grep -q tensor_content '$t/$n.pbtxt' &&
			$P <'$t/$n.pbtxt' >'$t/$n.pb' && $D <'$t/$n.pb' | cmp - '$t/$n.pbtxt'"
	done
	check "protoc rejects an unknown field" sh -c "sed 's/^  op: /  opp: /' '$t/1.pbtxt' | $P >/dev/null 2>&1; [ \$? -ne 0 ]"
	check "protoc rejects a bad enum" sh -c "sed 's/DT_FLOAT/DT_FLOAT32/' '$t/1.pbtxt' | $P >/dev/null 2>&1; [ \$? -ne 0 ]"
	check "protoc rejects a wrong type" sh -c "sed 's/b: false/b: 3/' '$t/1.pbtxt' | $P >/dev/null 2>&1; [ \$? -ne 0 ]"
else
	echo "tf-emit: protoc not found (apt-get install protobuf-compiler): protobuf checks SKIPPED"
fi

# the CLI
M=tests/tfjs/mlp.gir
printf 'gir 1\ncluster "c" {\n  type "G" {flops = 1TFLOPS, memory = 1GiB, mem_bw = 1GB/s}\n  machine "m0" {type = "G", count = 1, bandwidth = 1GB/s, latency = 1us}\n  network {bandwidth = 1GB/s, latency = 1us}\n}\ngraph g {\n  %%a = Placeholder() {@device = "m0/gpu0", @order = 0} : f32[2]\n  %%b = Relu(%%a) {@device = "m0/gpu0", @order = 2} : f32[2]\n  %%c = Relu(%%b) {@device = "m0/gpu0", @order = 1} : f32[2]\n}\n' >"$t/cyc.gir"
printf 'precious\n' >"$t/out.pbtxt"
check "a cycle from @order exits 1" sh -c "'$PCC' -passes= '$t/cyc.gir' --emit=tf -o '$t/out.pbtxt' 2>'$t/err'; [ \$? -eq 1 ]"
check "  and says why, once" sh -c "grep -q \"cyc.gir:9:3: error: @order deadlocks the plan: %b on m0/gpu0\" '$t/err' && [ \$(grep -c error '$t/err') -eq 1 ] && ! grep -q 'cannot write' '$t/err'"
check "  and leaves the output alone" sh -c "[ \"\$(cat '$t/out.pbtxt')\" = precious ]"
# (the plan verifier refuses it at input, whatever the backend's options:
# each device runs its ops in @order, so c would wait for b forever)
check "order=priority: refused too" sh -c "'$PCC' -passes= '$t/cyc.gir' --emit=tf --emit-opt=order=priority 2>/dev/null >/dev/null; [ \$? -eq 1 ]"
check "a bad option value exits 1" sh -c "'$PCC' -passes= $M --emit=tf --emit-opt=order=sometimes 2>'$t/err' >/dev/null; [ \$? -eq 1 ] && grep -q 'expected one of none, control, priority, both' '$t/err'"
check "an unknown option is a usage error" sh -c "'$PCC' -passes= $M --emit=tf --emit-opt=colour=red 2>/dev/null >/dev/null; [ \$? -eq 2 ]"
mkdir "$t/out"
check "tf-json -o DIR/m.json writes DIR/m.weights.bin" sh -c "'$PCC' -passes= $M --emit=tf-json -o '$t/out/m.json' 2>/dev/null &&
	[ -s '$t/out/m.weights.bin' ] && grep -q '\"paths\":\[\"m.weights.bin\"\]' '$t/out/m.json'"
check "  of the size the manifest says" sh -c "[ \$(wc -c <'$t/out/m.weights.bin') -eq $(( (16*32 + 32 + 32*10 + 10) * 4 )) ]"
check "tf-json -o - writes model.weights.bin here, with a note" sh -c "cd '$t' && '$PCC' -passes= '$(pwd)/$M' --emit=tf-json -o - 2>err >stdout.json &&
	[ -s model.weights.bin ] && grep -q \"weights written to 'model.weights.bin'\" err && grep -q '\"format\":\"graph-model\"' stdout.json"
check "weights_file=none writes no weights" sh -c "cd '$t' && rm -f model.weights.bin && '$PCC' -passes= '$(pwd)/$M' --emit=tf-json --emit-opt=weights_file=none >/dev/null 2>&1 && [ ! -e model.weights.bin ]"
# The graph's name never makes the weights path: 'graph x/../../escaped'
# writes nothing outside the working directory.
mkdir -p "$t/jail/a/b"
sed 's/^graph mlp/graph "x\/..\/..\/escaped"/' $M >"$t/jail/esc.gir"
check "tf-json: graph name cannot escape the directory" sh -c "cd '$t/jail/a/b' && '$PCC' -passes= ../../esc.gir --emit=tf-json -o - >m.json 2>/dev/null &&
	[ -s model.weights.bin ] && [ -z \"\$(find '$t' -name '*escaped*')\" ]"
if command -v node >/dev/null 2>&1; then
	check "model.json is JSON" node -e "JSON.parse(require('fs').readFileSync('$t/out/m.json','utf8'))"
fi
check "--help lists tf and tf-json" sh -c "'$PCC' --help | grep -q '^  tf-json'"
echo "tf-emit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
