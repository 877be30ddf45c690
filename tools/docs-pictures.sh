#!/bin/sh
# docs-pictures.sh — the pictures of docs/backends.md, in docs/img/:
#   NAME.dot.svg     --emit=dot rendered by Graphviz
#   NAME.gantt.svg   --emit=gantt-svg, and NAME.gantt.png (rsvg-convert)
#   NAME.trace.json  --emit=trace (open it in https://ui.perfetto.dev)
# for a model compiled by a pipeline on a cluster (NAME = the model's
# base name) and for the hand-placed plan tests/golden/viz-trace.gir
# (NAME = dp-plan); and a real model by fused group: ResNet-50 -O1 on
# hetero-4 as resnet50.groups.png (--emit=dot, detail=groups),
# resnet50.groups.gantt.png (--emit=gantt-svg, color=group; the SVG,
# 0.5 MB, is not kept) and
# resnet50.summary.md (--emit=summary, format=md).  Run by
# `make docs-pictures`:
#   sh tools/docs-pictures.sh PCC MODEL.gir CLUSTER.yaml PIPELINE
set -e
[ $# -eq 4 ] || { echo "usage: sh tools/docs-pictures.sh PCC MODEL.gir CLUSTER.yaml PIPELINE" >&2; exit 2; }
PCC=$1 model=$2 cluster=$3 pipeline=$4
case $PCC in /*) ;; *) PCC=$(pwd)/$PCC ;; esac
cd "$(dirname "$0")/.."
for tool in dot rsvg-convert; do
	command -v $tool >/dev/null 2>&1 ||
		{ echo "docs-pictures: $tool is missing (sh tools/setup-debian.sh)" >&2; exit 1; }
done
mkdir -p docs/img
draw() { # draw NAME INPUT PCC-ARGS...
	name=$1 in=$2
	shift 2
	PCC=$PCC sh tools/render-dot.sh "$in" "docs/img/$name.dot.svg" "$@"
	"$PCC" "$@" --emit=gantt-svg "$in" -o "docs/img/$name.gantt.svg"
	rsvg-convert -b white "docs/img/$name.gantt.svg" -o "docs/img/$name.gantt.png"
	"$PCC" "$@" --emit=trace "$in" -o "docs/img/$name.trace.json"
	echo "docs/img/$name.{dot.svg,gantt.svg,gantt.png,trace.json}"
}
# $pipeline is one word (-O2, -passes=a,b): left unquoted on purpose so
# that an empty one vanishes.
draw "$(basename "$model" .gir)" "$model" $pipeline --cluster "$cluster"
draw dp-plan tests/golden/viz-trace.gir -passes=
# A real model, drawn by fused group.
r50=docs/img/resnet50
"$PCC" -O1 examples/models/resnet50.gir --cluster examples/clusters/hetero-4.yaml -o "$r50.plan.gir.tmp"
"$PCC" -passes= "$r50.plan.gir.tmp" --emit=dot --emit-opt=detail=groups -o "$r50.groups.dot.tmp"
dot -Tpng "$r50.groups.dot.tmp" -o "$r50.groups.png"
"$PCC" -passes= "$r50.plan.gir.tmp" --emit=gantt-svg --emit-opt=color=group,width=1400 -o "$r50.groups.gantt.svg.tmp"
rsvg-convert -b white "$r50.groups.gantt.svg.tmp" -o "$r50.groups.gantt.png"
"$PCC" -passes= "$r50.plan.gir.tmp" --emit=summary --emit-opt=format=md -o "$r50.summary.md"
rm -f "$r50.plan.gir.tmp" "$r50.groups.dot.tmp" "$r50.groups.gantt.svg.tmp"
echo "$r50.{groups.png,groups.gantt.png,summary.md}"
