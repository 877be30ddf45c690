#!/bin/sh
# render-dot.sh — draws a graph or plan with Graphviz: pcc --emit=dot,
# then dot.  The picture's format follows OUTPUT's extension (svg, png,
# pdf).  Extra arguments go to pcc (a pipeline, --cluster, --emit-opt).
#
#   sh tools/render-dot.sh [-n MAX_OPS] INPUT.gir OUTPUT.svg [pcc options...]
#   e.g. sh tools/render-dot.sh examples/mlp.gir mlp.svg \
#            -passes=simplify,annotate,place --cluster examples/clusters/hetero-4.yaml
#
# dot's layout time grows steeply with the graph (minutes at about 1000
# ops), so above MAX_OPS nodes (default 400) it stops and says so.  pcc
# draws a fused plan of more than 150 ops as one node per fused group
# (--emit=dot's detail=auto), which dot lays out in seconds; the Gantt
# chart (--emit=gantt-svg) and the trace (--emit=trace) have no limit.  PCC names the pcc binary (default ./pcc).  Exit status 0,
# 1 when pcc or dot fails or the graph is too large, 2 on bad usage.
max=400
if [ "${1:-}" = "-n" ]; then
	max=$2
	shift 2
fi
[ $# -ge 2 ] || { sed -n 's/^#   sh /usage: sh /p' "$0" | head -n 1 >&2; exit 2; }
in=$1 out=$2
shift 2
PCC=${PCC:-./pcc}
case $out in
*.svg) fmt=svg ;; *.png) fmt=png ;; *.pdf) fmt=pdf ;;
*) echo "render-dot: OUTPUT must end in .svg, .png or .pdf" >&2; exit 2 ;;
esac
command -v dot >/dev/null 2>&1 ||
	{ echo "render-dot: Graphviz's dot is missing (sh tools/setup-debian.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PCC" "$@" --emit=dot "$in" -o "$tmp/g.dot" || exit 1
n=$(grep -c '^  [ng][0-9]* \[' "$tmp/g.dot")
if [ "$n" -gt "$max" ]; then
	echo "render-dot: $n nodes is more than $max; dot would take long (raise -n; fuse the graph and use --emit-opt=detail=groups; or --emit=gantt-svg)" >&2
	exit 1
fi
dot -T"$fmt" "$tmp/g.dot" -o "$tmp/out" || exit 1
mv "$tmp/out" "$out"
