#!/bin/sh
# The picture and timeline backends read by the tools that will read them:
# every DOT file parses with Graphviz (small ones are laid out with dot,
# large ones parsed with gc), every Gantt SVG is well-formed XML
# (xmllint), every trace passes tests/trace-check.c (strict JSON, tracks
# named, slices nested as Perfetto requires).  Inputs: the golden viz
# plans, names full of quotes, markup and invalid UTF-8, examples/mlp.gir
# on every example cluster, every model of examples/models, and a
# 100 000-op synthetic plan (the Gantt chart stays small).  Real models
# drawn by fused group (dot detail=groups) and rendered by dot; Gantt
# colours by group.  Also the command line: typed --emit-opt values,
# trace on an unplaced graph, tools/render-dot.sh.
# usage: tests/run-viz.sh BUILD_DIR
B=${1:-build}
cd "$(dirname "$0")/.." || exit 2
PCC=$(pwd)/$B/pcc
CHECK=$(pwd)/$B/trace-check
pass=0 fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
for tool in dot gc xmllint; do
	command -v $tool >/dev/null 2>&1 ||
		{ echo "FAIL $tool is missing: sh tools/setup-debian.sh"; fail=$((fail+1)); }
done
check() { # check NAME COMMAND...: the command must succeed
	name=$1; shift
	if "$@" >"$t/log" 2>&1; then pass=$((pass+1))
	else echo "FAIL $name"; sed 's/^/  | /' "$t/log" | head -n 20; fail=$((fail+1)); fi
}
# dotcheck LABEL INPUT [pcc args]: DOT that Graphviz parses and, when
# small, lays out into valid SVG.
dotcheck() {
	lbl=$1 in=$2; shift 2
	check "$lbl: dot parses" sh -c "'$PCC' $* --emit=dot '$in' -o '$t/g.dot' && gc -n '$t/g.dot'"
	if [ "$(grep -c '^  n[0-9]* \[' "$t/g.dot" 2>/dev/null)" -le 200 ]; then
		check "$lbl: dot lays it out" sh -c "dot -Tsvg '$t/g.dot' -o '$t/g.svg' && xmllint --noout '$t/g.svg'"
	fi
}
# all LABEL INPUT [pcc args]: the three backends on one placed input.
all() {
	dotcheck "$@"
	lbl=$1 in=$2; shift 2
	check "$lbl: gantt is XML" sh -c "'$PCC' $* --emit=gantt-svg '$in' -o '$t/g.gantt.svg' && xmllint --noout '$t/g.gantt.svg'"
	check "$lbl: trace" sh -c "'$PCC' $* --emit=trace '$in' -o '$t/g.json' && '$CHECK' '$t/g.json'"
}

for f in tests/golden/viz-*.gir; do
	case $f in
	*unplaced*) dotcheck "$f" "$f" -passes= ;;
	*) all "$f" "$f" -passes= ;;
	esac
done

# Names: a cluster, machine and @origin with quotes, markup, backslashes,
# a newline, a control character and bytes that are not UTF-8.
printf 'gir 1\ncluster "we\\"ird <&> \\\\ c" {\n  type "G&\\"P<U>" {flops = 10TFLOPS, memory = 16GiB, mem_bw = 900GB/s}\n  machine "m<&\\"\\\\>\\n\377\303(" {type = "G&\\"P<U>", count = 2, bandwidth = 1GB/s, latency = 0s}\n}\ngraph g-1.x/y {\n  %%a-1/b.c = Placeholder() {@cost = 1ms, @origin = "q\\"\\\\<&>\\n\\t\342\234\223\377\376\355\240\200 \001", @device = "m<&\\"\\\\>\\n\377\303(/gpu0", @group = -3} : u8[1000]\n  %%b = Relu(%%a-1/b.c) {@cost = 1ms, @device = "m<&\\"\\\\>\\n\377\303(/gpu1", @group = -3} : u8[1000]\n  %%t = Transfer(%%b) {@origin = "\\"]]>", @device = "m<&\\"\\\\>\\n\377\303(/gpu0"} : u8[1000]\n}\n' >"$t/odd.gir"
all "odd names" "$t/odd.gir" -passes=

# The example graph on every example cluster, every model on one.
P=-O1
for c in examples/clusters/*.yaml; do
	all "mlp on $c" examples/mlp.gir $P --cluster "$c"
done
for m in examples/models/*.gir; do
	all "$m" "$m" $P --best-effort --cluster examples/clusters/hetero-4.yaml
done

# 100 000 ops on 8 GPUs: the Gantt chart merges sub-pixel bars and stays
# under 100 KB.
"$B/gengraph" --ops 100000 --place 8 -o "$t/big.gir"
all "100k-op plan" "$t/big.gir" -passes=annotate
check "100k-op gantt is small" sh -c "'$PCC' -passes= --emit=gantt-svg '$t/big.gir' -o '$t/big.svg' && [ \$(wc -c < '$t/big.svg') -lt 100000 ] && grep -q 'merged rectangles' '$t/big.svg'"

# Command line.
exits() { # exits WANT CMD...: the exit status of CMD must be WANT
	want=$1; shift
	"$@" >/dev/null 2>&1
	[ $? -eq "$want" ]
}
M=examples/mlp.gir
C=examples/clusters/hetero-4.yaml
# A graph of no ops: an empty schedule (under UBSan, qsort of no bars
# was called with a null pointer).
printf 'gir 1\ngraph empty {\n}\n' >"$t/empty.gir"
for e in trace gantt-svg dot; do
	check "empty graph --emit=$e" sh -c "'$PCC' -O1 --emit=$e '$t/empty.gir' -o '$t/empty.$e' && [ -s '$t/empty.$e' ]"
done
check "bool option checked" sh -c "'$PCC' -passes= $M --cluster $C --emit=dot --emit-opt=groups=maybe 2>&1 >/dev/null | grep -q 'groups: expected true or false'"
check "bool option is usage error" exits 2 "$PCC" -passes= $M --cluster $C --emit=dot --emit-opt=legend=1
check "number option checked" exits 2 "$PCC" -passes= $M --cluster $C --emit=gantt-svg --emit-opt=width=wide
check "unknown option" sh -c "'$PCC' -passes= $M --emit=trace --emit-opt=colour=red 2>&1 | grep -q \"backend 'trace' has no option 'colour'\""
check "trace needs a placed graph" sh -c "'$PCC' -passes= $M --cluster $C --emit=trace 2>&1 >/dev/null | grep -q 'is not placed'"
check "trace on unplaced graph exits 1" exits 1 "$PCC" -passes= $M --cluster $C --emit=trace
check "dot on unplaced graph" sh -c "'$PCC' -passes= $M --cluster $C --emit=dot | dot -Tsvg >/dev/null"
check "help lists the backends" sh -c "'$PCC' --help | grep -q 'gantt-svg' && '$PCC' --help | grep -q 'merge-above=5000'"
check "render-dot.sh" sh -c "PCC='$PCC' sh tools/render-dot.sh $M '$t/r.svg' $P --cluster $C && xmllint --noout '$t/r.svg'"
check "render-dot.sh png" sh -c "PCC='$PCC' sh tools/render-dot.sh tests/golden/viz-dot-plan.gir '$t/r.png' -passes= && [ -s '$t/r.png' ]"
check "render-dot.sh refuses large graphs" sh -c "! PCC='$PCC' sh tools/render-dot.sh -n 100 examples/models/resnet50.gir '$t/x.svg' $P --cluster $C --emit-opt=detail=ops 2>'$t/e' && grep -q 'more than 100' '$t/e' && [ ! -e '$t/x.svg' ]"
check "render-dot.sh draws a model by groups" sh -c "PCC='$PCC' sh tools/render-dot.sh examples/models/resnet50.gir '$t/x.svg' $P --cluster $C && xmllint --noout '$t/x.svg'"

# Real models as fused groups (--emit=dot's default above group-above
# ops): one node per fused group, so dot lays them out (Graphviz took
# minutes on ResNet-50's ops).  The node count must be the number of
# distinct @group values of the plan; a plan with more groups than
# max-nodes merges runs of groups on the same devices (Transformer: 131
# groups).  Rendering time is not asserted.
for mc in resnet50:hetero-4 bert_large:hetero-4 transformer:tag-testbed; do
	m=${mc%%:*} cl=examples/clusters/${mc#*:}.yaml
	check "$m plan: dot by groups renders" sh -c "'$PCC' -O1 --best-effort examples/models/$m.gir --cluster $cl -o '$t/$m.gir' 2>/dev/null && '$PCC' -passes= '$t/$m.gir' --emit=dot -o '$t/$m.dot' && dot -Tpng '$t/$m.dot' -o '$t/$m.png' && [ -s '$t/$m.png' ]"
	groups=$(grep -o '@group = -*[0-9]*' "$t/$m.gir" | sort -u | wc -l)
	nodes=$(grep -c '^  g[0-9]* \[' "$t/$m.dot")
	if [ "$groups" -le 60 ]; then
		check "$m: a node per group ($groups)" test "$nodes" -eq "$groups"
	else
		check "$m: runs of groups merged ($nodes nodes for $groups groups)" sh -c "[ $nodes -gt 1 ] && [ $nodes -le 60 ] && grep -q 'label=\"groups [0-9]*' '$t/$m.dot'"
	fi
	check "$m: detail=ops draws ops" sh -c "'$PCC' -passes= '$t/$m.gir' --emit=dot --emit-opt=detail=ops | grep -c '^  n[0-9]* \[' | awk '{exit !(\$1 > 500)}'"
done
check "resnet50: gantt color=group legend has every group" sh -c "'$PCC' -passes= '$t/resnet50.gir' --emit=gantt-svg --emit-opt=color=group -o '$t/rg.svg' && xmllint --noout '$t/rg.svg' && [ \$(grep -o '>group [0-9]*</text>' '$t/rg.svg' | sort -u | wc -l) -eq \$(grep -o '@group = -*[0-9]*' '$t/resnet50.gir' | sort -u | wc -l) ]"
check "gantt color=kind is the default" sh -c "[ \"\$('$PCC' -passes= '$t/resnet50.gir' --emit=gantt-svg | md5sum)\" = \"\$('$PCC' -passes= '$t/resnet50.gir' --emit=gantt-svg --emit-opt=color=kind | md5sum)\" ]"
check "gantt bad color exits 1" exits 1 "$PCC" -passes= "$t/resnet50.gir" --emit=gantt-svg --emit-opt=color=rainbow
check "dot bad detail exits 1" exits 1 "$PCC" -passes= "$t/resnet50.gir" --emit=dot --emit-opt=detail=some
check "dot detail=groups on a hand plan" sh -c "'$PCC' -passes= tests/golden/summary-plan.gir --emit=dot --emit-opt=detail=groups | grep -c '^  g[0-9]* \[' | grep -qx 3"

echo "viz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
