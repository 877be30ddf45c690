#!/bin/sh
# docs-pictures.sh — the pictures of docs/backends.md, in docs/img/:
#   NAME.dot.svg     --emit=dot rendered by Graphviz
#   NAME.gantt.svg   --emit=gantt-svg, and NAME.gantt.png (rsvg-convert)
#   NAME.trace.json  --emit=trace (open it in https://ui.perfetto.dev)
# for a model compiled by a pipeline on a cluster (NAME = the model's
# base name) and for the hand-placed plan tests/golden/viz-trace.gir
# (NAME = dp-plan).  Run by `make docs-pictures`:
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
