#!/bin/sh
# make bench: performance figures.  Prints numbers; never passes or fails
# on a timing.  usage: bench/run.sh BUILD_DIR
B=${1:-build}
cd "$(dirname "$0")/.." || exit 2
PCC=$B/pcc GEN=$B/gengraph
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
echo "pcc benchmarks on $(nproc) cores, $(date -u +%Y-%m-%d)"
echo
echo "## parse + verify + print (pcc -passes= --time-passes)"
for n in 10000 100000 1000000; do
	$GEN --ops $n -o "$t/g.gir"
	ops=$(grep -c ' = ' "$t/g.gir")
	size=$(wc -c < "$t/g.gir")
	$PCC -passes= --time-passes "$t/g.gir" -o "$t/out.gir" 2>"$t/time" </dev/null
	parse=$(awk '$1=="read+parse"{print $2}' "$t/time")
	verify=$(awk '$1=="infer+verify"{print $2}' "$t/time")
	emit=$(awk '$1=="emit"{print $2}' "$t/time")
	rss=$(awk '$1=="peak" && $2=="RSS"{print $3}' "$t/time")
	total=$(echo "$parse $verify $emit" | awk '{printf "%.3f", $1+$2+$3}')
	perop=$(echo "$rss $ops" | awk '{printf "%.0f", $1*1048576/$2}')
	echo "$ops ops ($((size/1000000)) MB): parse ${parse}s, infer+verify ${verify}s, print ${emit}s, total ${total}s; peak RSS ${rss} MiB = ${perop} B/op"
done
echo "targets: 1M ops parsed, verified and printed in < 2 s; < 1 KiB per op"
echo
echo "## -O1 (pcc -O1 --time-passes)"
for n in 10000 100000 1000000; do
	$GEN --ops $n -o "$t/g.gir"
	$PCC -O1 --time-passes "$t/g.gir" -o /dev/null 2>"$t/time" </dev/null
	tot=$(awk '$1=="total"{print $2}' "$t/time")
	echo "$n ops: pipeline $(tr '\n' ' ' < /dev/null)${tot}s"
done
echo
echo "## simulate a placed graph (pcc -passes= --stats-json, 16 devices)"
for n in 100000 1000000; do
	$GEN --ops $n --place 16 -o "$t/p.gir"
	$PCC -passes= --time-passes --stats-json="$t/s.json" "$t/p.gir" -o /dev/null 2>"$t/time"
	sim=$(awk '$1=="simulate"{print $2}' "$t/time")
	mk=$(sed -n 's/.*"makespan_s": *\([0-9.e+-]*\).*/\1/p' "$t/s.json")
	echo "$n ops on 16 devices: simulate ${sim}s (simulated makespan ${mk}s)"
done
