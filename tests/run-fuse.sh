#!/bin/sh
# The Celeritas passes end to end (docs/passes.md: fuse, place adjusting /
# order-place): on every example model, simplify,annotate,fuse,place
# passes --verify-each, gives every op a @group and a @device, and its
# output round-trips (print -> parse -> print identical); fuse is
# idempotent; option errors are usage errors; -v reports the figures of
# tests/golden/fuse-small.gir worked out by hand there.
. "$(dirname "$0")/lib.sh"
# every op line of FILE carries KEY
all_have() {
	ops=$(grep -c '^  %' "$1")
	have=$(grep '^  %' "$1" | grep -c "$2")
	[ "$ops" -gt 0 ] && [ "$ops" -eq "$have" ] || { echo "$have of $ops ops have $2"; return 1; }
}
roundtrip() { # roundtrip PIPELINE CLUSTER MODEL
	"$PCC" -passes="$1" --verify-each --cluster "$2" "$3" -o "$t/a.gir" &&
	"$PCC" -passes= "$t/a.gir" -o "$t/b.gir" &&
	cmp "$t/a.gir" "$t/b.gir" &&
	all_have "$t/a.gir" '@group = ' &&
	all_have "$t/a.gir" '@device = '
}
idempotent() { # idempotent CLUSTER MODEL: fusing a fused graph changes nothing
	"$PCC" -passes=simplify,annotate,fuse --cluster "$1" "$2" -o "$t/f.gir" &&
	"$PCC" -passes=fuse "$t/f.gir" -o "$t/g.gir" &&
	cmp "$t/f.gir" "$t/g.gir"
}
for m in examples/models/*.gir; do
	for c in examples/clusters/tag-testbed.yaml examples/clusters/celeritas-4v100.yaml; do
		for a in adjusting order-place; do
			check "$m on $c, place<algo=$a>" roundtrip \
				"simplify,annotate,fuse,place<algo=$a>" "$c" "$m"
		done
	done
	check "$m: fuse is idempotent" idempotent examples/clusters/tag-testbed.yaml "$m"
done
# Unfused: the placers work per op.
check "mlp, adjusting per op" sh -c "'$PCC' -passes='simplify,annotate,place<algo=adjusting>' --verify-each examples/mlp.gir -o '$t/p.gir' 2>/dev/null && ! grep -q '@group' '$t/p.gir' && grep -c '@device' '$t/p.gir' | grep -q 14"
usage() { # usage PIPELINE MESSAGE: exit 2 and the message on stderr
	status 2 "$PCC" -passes="$1" examples/mlp.gir -o /dev/null &&
	grep -q "$2" "$t/err"
}
check "fuse<range=0>" usage 'fuse<range=0>' 'fuse<range=0>: expected an integer in \[1,'
check "fuse<range=2.5>" usage 'fuse<range=2.5>' 'expected an integer'
check "fuse<mem=0>" usage 'fuse<mem=0>' 'fuse<mem=0>: expected a size (bytes, or 25MB, 4MiB) in (0,inf)'
check "fuse<mem=lots>" usage 'fuse<mem=lots>' 'mem=lots>: expected'
check "fuse report, by hand in tests/golden/fuse-small.gir" sh -c \
	"'$PCC' -passes='fuse<range=3>' -v tests/golden/fuse-small.gir -o /dev/null 2>&1 | grep -q '7 nodes -> 3 groups, CCR 0.06044 -> 0.02844'"
check "--list-passes lists fuse" sh -c "'$PCC' --list-passes | grep -q '^ *fuse'"
echo "fuse: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
