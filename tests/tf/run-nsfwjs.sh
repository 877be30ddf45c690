#!/bin/sh
# run-nsfwjs.sh PCC — data parallelism on a real third-party TF.js graph
# model: nsfwjs 4.4.0's MobileNetV2 (fetch-nsfwjs.sh), 35 _FusedConv2D and 17
# FusedDepthwiseConv2dNative nodes, planned with -O0 (data parallel) at
# batch 32 on four V100s (examples/clusters/celeritas-4v100.yaml).  Each
# replica must compute its quarter of the batch: every fused convolution
# has 4 replicas whose outputs lead with 8, and no tensor of the plan
# holds the whole batch (a leading 32), so no op is gathered.
set -u
PCC=${1:?usage: run-nsfwjs.sh PCC}
cd "$(dirname "$0")/../.." || exit 2
DIR=$(sh tests/tf/fetch-nsfwjs.sh) || exit 1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL $*"; }
if ! "$PCC" -O0 -v --batch 32 "$DIR/model.json" \
	--cluster examples/clusters/celeritas-4v100.yaml -o "$TMP/p.gir" 2>"$TMP/err"; then
	ko "plan: $(grep -m1 error "$TMP/err")"
else
	ok
	convs=$(grep -c '^  %[^=]*/rep[0-3] = \(_FusedConv2D\|FusedDepthwiseConv2dNative\)(' "$TMP/p.gir")
	quarter=$(grep '^  %[^=]*/rep[0-3] = \(_FusedConv2D\|FusedDepthwiseConv2dNative\)(' "$TMP/p.gir" |
		  grep -c ': f32\[8,')
	whole=$(grep '^  %' "$TMP/p.gir" | grep -c ': [a-z0-9]*\[32,')
	[ "$convs" -eq 208 ] && ok || ko "expected 4 x 52 fused convolution replicas, found $convs"
	[ "$quarter" -eq "$convs" ] && ok || ko "$quarter of $convs fused convolution replicas compute batch/4 (8)"
	[ "$whole" -eq 0 ] && ok || ko "$whole tensors of the plan hold the whole batch"
	grep -q 'cannot be split over the batch' "$TMP/err" &&
		ko "-v: $(grep 'cannot be split' "$TMP/err")" || ok
	echo "nsfwjs MobileNetV2 -O0 on 4 GPUs: $quarter of $convs fused convolution replicas at batch 8 of 32"
fi
echo "nsfwjs: $pass passed, $fail failed"
[ $fail -eq 0 ]
