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
pass=0 fail=0 skip=0
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
			check "protoc $f $opts" sh -c "'$PCC' -passes= '$f' $cl --emit=tf --emit-opt=custom_ops=keep $opts 2>/dev/null >'$t/$n.pbtxt' &&
				$P <'$t/$n.pbtxt' >'$t/$n.pb' && $D <'$t/$n.pb' >'$t/$n.back' &&
				cmp '$t/$n.pbtxt' '$t/$n.back'"
		done
	done
	# pipelined plans (1F1B @order, micro-batch replicas on one device):
	# the hand-written one, and the pipeline placer's on a CNN
	for fp in "tests/ctests/mlp-pipe.gir comm,order" \
		  "tests/ctests/cnn.gir simplify,annotate,place<algo=pipeline,stages=4,micro=2>,comm,order"; do
		n=$((n+1))
		f=${fp% *} ps=${fp#* }
		check "protoc pipeline $f -passes=$ps" sh -c "'$PCC' '$f' '-passes=$ps' --cluster $C --emit=tf --emit-opt=order=both 2>/dev/null >'$t/$n.pbtxt' &&
			$P <'$t/$n.pbtxt' >'$t/$n.pb' && $D <'$t/$n.pb' | cmp - '$t/$n.pbtxt'"
	done
	# generated Const content (tensor_content bytes) where it stays small
	for f in tests/tfjs/cnn.gir tests/tfjs/cnn-plan.gir tests/tf/ops.gir; do
		n=$((n+1))
		check "protoc $f weights=generated" sh -c "'$PCC' -passes= '$f' --emit=tf --emit-opt=weights=generated 2>/dev/null >'$t/$n.pbtxt' &&
			grep -q tensor_content '$t/$n.pbtxt' &&
			$P <'$t/$n.pbtxt' >'$t/$n.pb' && $D <'$t/$n.pb' | cmp - '$t/$n.pbtxt'"
	done
	# a plan with gradient buckets (place<algo=ddp>: ConcatV2, one
	# collective per bucket, SplitV)
	for f in tests/ctests/cnn.gir examples/models/resnet50.gir; do
		n=$((n+1))
		check "protoc $f ddp (bucketed)" sh -c "'$PCC' -passes='simplify,annotate,place<algo=ddp>,comm,order' '$f' --cluster $C --emit=tf 2>/dev/null >'$t/$n.pbtxt' &&
			grep -q 'bucket[0-9]*/concat' '$t/$n.pbtxt' &&
			$P <'$t/$n.pbtxt' >'$t/$n.pb' && $D <'$t/$n.pb' | cmp - '$t/$n.pbtxt'"
	done
	check "protoc rejects an unknown field" sh -c "sed 's/^  op: /  opp: /' '$t/1.pbtxt' | $P >/dev/null 2>&1; [ \$? -ne 0 ]"
	check "protoc rejects a bad enum" sh -c "sed 's/DT_FLOAT/DT_FLOAT32/' '$t/1.pbtxt' | $P >/dev/null 2>&1; [ \$? -ne 0 ]"
	check "protoc rejects a wrong type" sh -c "sed 's/b: false/b: 3/' '$t/1.pbtxt' | $P >/dev/null 2>&1; [ \$? -ne 0 ]"
else
	echo "tf-emit: protoc not found (apt-get install protobuf-compiler): protobuf checks SKIPPED"
	# as many as the loops above would run
	skip=$(( $(ls examples/mlp.gir examples/hand-placed.gir examples/models/*.gir \
		tests/tf/train-plan.gir tests/tf/ops.gir tests/tfjs/*.gir | wc -l) * 2 + 3 + 3 ))
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
# an op TensorFlow lacks: located error, exit 1, output untouched
printf 'gir 1\ngraph g {\n  %%x = Placeholder() : f32[4]\n  %%y = aten.gelu(%%x) : f32[4]\n}\n' >"$t/aten.gir"
check "an op TensorFlow lacks exits 1" sh -c "'$PCC' -passes= '$t/aten.gir' --emit=tf -o '$t/out.pbtxt' 2>'$t/err'; [ \$? -eq 1 ]"
check "  naming the op and where it is" sh -c "grep -q \"aten.gir:4:3: error: op 'y' (aten.gelu): TensorFlow has no op type 'aten.gelu'\" '$t/err'"
check "  and leaves the output alone" sh -c "[ \"\$(cat '$t/out.pbtxt')\" = precious ]"
check "custom_ops=keep writes it" sh -c "'$PCC' -passes= '$t/aten.gir' --emit=tf --emit-opt=custom_ops=keep 2>/dev/null | grep -q 'op: \"aten.gelu\"'"
# the zoo (examples/models): no op TensorFlow lacks is left (torch2gir
# lowers PyTorch's aten ops to core ops)
for f in examples/models/*.gir; do
	check "$f emits without custom_ops=keep" sh -c "'$PCC' -passes= '$f' --cluster $C --emit=tf >/dev/null 2>'$t/err' && ! grep -q error '$t/err'"
done
# names TensorFlow forbids are mangled, uniquely, the original kept
printf 'gir 1\ngraph g {\n  %%_a = Placeholder() : f32[4]\n  %%pcc_a = Relu(%%_a) : f32[4]\n  %%init = Relu(%%pcc_a) : f32[4]\n  %%-b = Relu(%%init) : f32[4]\n}\n' >"$t/names.gir"
check "names: _a -> pcc_a_1 (pcc_a is taken)" sh -c "'$PCC' -passes= '$t/names.gir' --emit=tf >'$t/names.pbtxt' 2>'$t/err' &&
	grep -q 'name: \"pcc_a_1\"' '$t/names.pbtxt' && grep -q 'input: \"pcc_a_1\"' '$t/names.pbtxt' && grep -q 's: \"_a\"' '$t/names.pbtxt'"
check "names: an op named init -> init_1, init is the NoOp" sh -c "grep -q 'name: \"init_1\"' '$t/names.pbtxt' && grep -A1 'name: \"init\"' '$t/names.pbtxt' | grep -q NoOp"
check "names: -b -> pcc-b" sh -c "grep -q 'name: \"pcc-b\"' '$t/names.pbtxt' && grep -q 'input: \"init_1\"' '$t/names.pbtxt'"
# the init target and save/: every variable, seeded, and nothing orders a variable
check "init: an Assign per variable and its replicas" sh -c "'$PCC' -passes= tests/tfjs/mlp-plan.gir --emit=tf >'$t/plan.pbtxt' 2>/dev/null &&
	[ \$(grep -c 'op: \"VariableV2\"' '$t/plan.pbtxt') -eq \$(awk '/name: \"init\"/{f=1} f&&/^}/{exit} f&&/input: \"\\^/' '$t/plan.pbtxt' | wc -l) ]"
check "no control input on a variable" sh -c "! awk '/^node/{v=0} /op: \"VariableV2\"/{v=1} v&&/input:/{print; bad=1} END{exit !bad}' '$t/plan.pbtxt'"
printf 'gir 1\ngraph g {\n  %%w/p0 = VariableV2() {@origin = "w", @part = [0, 2]} : f32[2,3]\n  %%w/p1 = VariableV2() {@origin = "w", @part = [1, 2]} : f32[1,3]\n}\n' >"$t/part.gir"
check "init: a partition gets a value of its own shape" sh -c "'$PCC' -passes= '$t/part.gir' --emit=tf >'$t/part.pbtxt' 2>/dev/null &&
	grep -q 'name: \"w/p0/Initializer\"' '$t/part.pbtxt' && grep -q 'name: \"w/p1/Initializer\"' '$t/part.pbtxt' &&
	[ \$(grep -c 'op: \"RestoreV2\"' '$t/part.pbtxt') -eq 1 ] && [ \$(grep -c 'name: \"save/Assign' '$t/part.pbtxt') -eq 1 ]"
check "save/ and restore_all" sh -c "grep -q 'name: \"save/SaveV2\"' '$t/plan.pbtxt' && grep -q 'name: \"save/restore_all\"' '$t/plan.pbtxt'"
# StridedSliceGrad: its required T and Index derived from the inputs
printf 'gir 1\ngraph g {\n  %%dy = Placeholder() : f32[2,3]\n  %%sh = Const() {value = [4, 3]} : i64[2]\n  %%g = StridedSliceGrad(%%sh, %%sh, %%sh, %%sh, %%dy) : f32[4,3]\n}\n' >"$t/ssg.gir"
check "StridedSliceGrad gets T and Index" sh -c "'$PCC' -passes= '$t/ssg.gir' --emit=tf 2>/dev/null | awk '/name: \"g\"/{f=1} f' >'$t/ssg.pbtxt' &&
	grep -A2 'key: \"Index\"' '$t/ssg.pbtxt' | grep -q DT_INT64 && grep -A2 'key: \"T\"' '$t/ssg.pbtxt' | grep -q DT_FLOAT"
# A dilated depthwise convolution's backprops: TensorFlow's CPU kernels of
# DepthwiseConv2dNativeBackprop* ignore dilations, so they become the
# grouped Conv2DBackprop* (filter [kh, kw, 1, C*m]); undilated ones stay.
printf 'gir 1\ngraph g {\n  %%x = Placeholder() : f32[2,4,1,9]\n  %%f = Placeholder() : f32[1,3,4,2]\n  %%dy = Placeholder() : f32[2,8,1,9]\n  %%xs = Const() {value = [2, 4, 1, 9]} : i32[4]\n  %%fs = Const() {value = [1, 3, 4, 2]} : i32[4]\n  %%gx = DepthwiseConv2dNativeBackpropInput(%%xs, %%f, %%dy) {strides = [1, 1, 1, 1], padding = "SAME", data_format = "NCHW", dilations = [1, 1, 1, D]} : f32[2,4,1,9]\n  %%gf = DepthwiseConv2dNativeBackpropFilter(%%x, %%fs, %%dy) {strides = [1, 1, 1, 1], padding = "SAME", data_format = "NCHW", dilations = [1, 1, 1, D]} : f32[1,3,4,2]\n}\n' >"$t/dwd.gir"
sed 's/, D]/, 2]/' "$t/dwd.gir" >"$t/dwd2.gir"
sed 's/, D]/, 1]/' "$t/dwd.gir" >"$t/dwd1.gir"
check "dilated depthwise backprops: grouped Conv2DBackprop*" sh -c "'$PCC' -passes= '$t/dwd2.gir' --emit=tf -o '$t/dwd2.pbtxt' 2>/dev/null &&
	! grep -q 'op: \"DepthwiseConv2dNativeBackprop' '$t/dwd2.pbtxt' &&
	awk '/name: \"gx\"/{f=1} f&&/op:/{print; exit}' '$t/dwd2.pbtxt' | grep -q Conv2DBackpropInput &&
	awk '/name: \"gf\"/{f=1} f&&/op:/{print; exit}' '$t/dwd2.pbtxt' | grep -q Reshape &&
	grep -q 'op: \"Conv2DBackpropFilter\"' '$t/dwd2.pbtxt' && \$P <'$t/dwd2.pbtxt' >/dev/null"
check "  undilated ones stay depthwise" sh -c "'$PCC' -passes= '$t/dwd1.gir' --emit=tf 2>/dev/null | grep -c 'op: \"DepthwiseConv2dNativeBackprop' | grep -qx 2"
check "--help lists tf and tf-json" sh -c "'$PCC' --help | grep -q '^  tf-json'"
echo "tf-emit: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
