#!/bin/sh
# bench/plans.sh BUILD_DIR [OUT_BASE] — the planners side by side (make
# bench-plans): every model of examples/models x every cluster below x
# every planner, planned and simulated by pcc, plus the memory-stress
# cells (bert_base on the small-memory mixes) and -O2's compile time at
# 100k ops on 16 devices.  Writes OUT_BASE.csv and OUT_BASE.md (default
# docs/bench-plans).  Per cell: the simulated iteration time; the
# speedup over the better of dp-best and ddp (the baselines a user would
# really run, issue 10: the headline), and over unbucketed all-GPU dp;
# the ratio to problem_lower_bound_s (a bound of the model on the
# cluster, the same for every plan); the fullest device's peak memory
# (and OOM); the hybrid's estimate error (its strategy simulator against
# the full simulation, O1/O2), and how many pairs of the final candidates
# it estimated it ranks the other way round from the full simulation;
# which candidate -O1/-O2 chose; the compile time (the passes' wall time
# from --time-passes).  Figures, not tests:
# every iteration time is simulated (docs/simulator.md); compile times
# are measured on this machine.
#   MODELS="vgg19 resnet50" CLUSTERS="heterog" PLANNERS="O2 dp" to narrow;
#   WORK=4e7 is -O2's --search-work; STRESS=0 skips the memory-stress
#   cells, BIG=0 the 100k-op timing; MDONLY=1 runs no cell and rewrites
#   OUT_BASE.md from OUT_BASE.csv (with BIG=0, keeping the 100k-op line
#   of the old OUT_BASE.md).
set -u
B=${1:-build}
OUT=${2:-docs/bench-plans}
cd "$(dirname "$0")/.." || exit 2
PCC=$B/pcc
[ -x "$PCC" ] || { echo "bench/plans.sh: build $PCC first" >&2; exit 2; }
MODELS=${MODELS:-"vgg19 resnet50 resnet101 inception_v3 mobilenet_v2 transformer bert_large"}
CLUSTERS=${CLUSTERS:-"tag-testbed tag-cloud heterog hetero-4 leftovers-25g mixed-boxes-10g three-gen-16 fastt-8v100 homo-2gpu"}
PLANNERS=${PLANNERS:-"O2 dp-best ddp dp dp-prop pipeline single adjusting dpos heft dcp mtopo metf metis"}
WORK=${WORK:-4e7}
STRESS=${STRESS:-1}
BIG=${BIG:-1}
MDONLY=${MDONLY:-0}
HETERO="tag-testbed tag-cloud heterog hetero-4 leftovers-25g mixed-boxes-10g three-gen-16 small-mem-2.5g small-mem-1.5g"
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

pipeline() {
	case $1 in
	O1|O2) echo "-$1 -v --search-work=$WORK" ;;
	adjusting|order-place)
		echo "-passes=simplify,annotate,fuse,place<algo=$1>,comm,order" ;;
	*) echo "-passes=simplify,annotate,place<algo=$1>,comm,order" ;;
	esac
}

# json KEY FILE: the first number after "KEY":
json() {
	sed -n "s/.*\"$1\": *\([-0-9.eE+]*\).*/\1/p" "$2" | head -n 1
}

# cell MODEL CLUSTER: every planner on one model and cluster.
cell() {
	m=$1 c=$2
	f=examples/models/$m.gir
	y=examples/clusters/$c.yaml
	[ -f "$f" ] || { echo "skip $m: no $f" >&2; return; }
	for p in $PLANNERS; do
		rm -f "$t/s.json"
		# shellcheck disable=SC2046
		"$PCC" $(pipeline "$p") --time-passes --best-effort "$f" --cluster "$y" \
			--stats-json="$t/s.json" -o /dev/null 2>"$t/err"
		rc=$?
		if [ $rc -ne 0 ] || [ ! -s "$t/s.json" ]; then
			echo "$m,$c,$p,,,,,,,,,,,exit $rc" >>"$OUT.csv"
			continue
		fi
		it=$(json makespan_s "$t/s.json")
		pb=$(json problem_lower_bound_s "$t/s.json")
		oom=$(sed -n 's/.*"oom": *\(true\|false\).*/\1/p' "$t/s.json")
		# the fullest device: peak over memory
		peak=$(sed -n 's/.*"peak_mem_bytes": *\([0-9]*\), "memory_bytes": *\([0-9]*\).*/\1 \2/p' "$t/s.json" |
			awk 'BEGIN{b=0;f=0} {if ($2 > 0 && $1/$2 > f) {f=$1/$2; b=$1}} END{printf "%.0f %.4f", b, f}')
		ct=$(awk '$1 == "total" {print $2}' "$t/err")
		est=$(sed -n 's/.*estimate error \([-+0-9.]*\)%.*/\1/p' "$t/err" | head -n 1)
		chose=$(sed -n 's/^place<algo=hybrid>:.*; chose \(.*\)$/\1/p' "$t/err" | head -n 1 | tr ',' ';')
		# pairs of judged candidates (both fit, simulated times differ)
		# and those the estimates order the other way
		rank=$(sed -n 's/^  .* \([0-9.e+-]*\) s (simulated; estimated \([0-9.e+-]*\) s)$/\1 \2/p' "$t/err" |
			awk '{s[NR] = $1; e[NR] = $2}
			     END {for (i = 1; i <= NR; i++) for (j = 1; j <= NR; j++)
				  if (s[i] < s[j]) {p++; w += e[i] > e[j]}
				  printf "%d,%d", p, w}')
		echo "$m,$c,$p,$it,BEST,DP,$pb,${peak% *},${peak#* },$oom,$ct,$est,$chose,ok,$rank" >>"$OUT.csv"
	done
	# speedups once the cell's baselines are known: over the better of
	# dp-best and ddp among those that fit, and over dp
	awk -F, -v OFS=, -v m="$m" -v c="$c" '
		NR == FNR { if ($1 == m && $2 == c && $14 == "ok") {
				if ($3 == "dp") dp = $4
				if (($3 == "dp-best" || $3 == "ddp") && $10 == "false" &&
				    (best == "" || $4 < best)) best = $4 }
			    next }
		$1 == m && $2 == c && $5 == "BEST" {
			$5 = (best != "" && $4 > 0) ? sprintf("%.3f", best / $4) : ""
			$6 = (dp != "" && $4 > 0) ? sprintf("%.3f", dp / $4) : ""
			$7 = ($7 > 0) ? sprintf("%.3f", $4 / $7) : ""
		} {print}' "$OUT.csv" "$OUT.csv" >"$t/csv" && mv "$t/csv" "$OUT.csv"
	echo "$m on $c done" >&2
}

big=
if [ "$MDONLY" = 1 ]; then
	big=$(sed -n 's/^- -O2 at 100k ops on 16 devices ([^)]*): \(.*\) (measured; target <= 10 s)$/\1/p' "$OUT.md" 2>/dev/null)
	MODELS= STRESS=0
else
	echo "model,cluster,planner,iteration_s,speedup_vs_best_dp,speedup_vs_dp,ratio_to_problem_bound,peak_mem_bytes,peak_mem_fraction,oom,compile_s,estimate_error_pct,chose,status,rank_pairs,rank_wrong" >"$OUT.csv"
fi
for m in $MODELS; do
	for c in $CLUSTERS; do
		cell "$m" "$c"
	done
done
if [ "$STRESS" = 1 ]; then
	for c in small-mem-2.5g small-mem-1.5g; do
		cell bert_base "$c"
	done
fi
# -O2 at 100k ops on 16 devices: measured compile time (wall and CPU).
if [ "$BIG" = 1 ] && [ -x "$B/gengraph" ]; then
	"$B/gengraph" --ops 100000 -o "$t/g100k.gir" &&
	/usr/bin/time -f "%e %U" -o "$t/time" "$PCC" -O2 --search-work="$WORK" \
		--time-passes "$t/g100k.gir" --cluster examples/clusters/tag-testbed.yaml \
		-o /dev/null 2>"$t/err" &&
	big=$(awk '{printf "%.2f s wall, %.2f s CPU", $1, $2}' "$t/time")
fi

# Markdown: one table per cluster, planners as rows, models as columns
# (iteration time and speedup over the better of dp-best and ddp), then
# the summary figures.
{
	echo "# Planners side by side (simulated)"
	echo
	echo "Generated by \`make bench-plans\` (bench/plans.sh) on $(date -u +%Y-%m-%d)."
	echo "Iteration times are **simulated** by pcc's simulator (docs/simulator.md)"
	echo "for one training step of each model at the batch size in its file."
	echo "\`x best\` is the speedup over the better of \`dp-best\` (dp and dp-prop"
	echo "over machine and device-type subsets) and \`ddp\` (data parallelism"
	echo "with 25 MiB gradient buckets) among those that fit in memory: the"
	echo "baselines a user would really run. The CSV keeps the speedup over"
	echo "unbucketed all-GPU \`dp\` too (\`speedup_vs_dp\`), and the ratio to"
	echo "\`problem_lower_bound_s\`, a lower bound of the model on the cluster"
	echo "that no plan can beat (docs/simulator.md). \`OOM\` marks a plan whose"
	echo "simulated peak memory exceeds a device's. -O2 ran with"
	echo "--search-work=$WORK (deterministic: the same plan on any machine)."
	echo "Compile times are **measured**: wall-clock seconds of the passes on"
	echo "this (shared, loaded) machine. Raw figures: \`$(basename "$OUT").csv\`."
	MODELS=$(cut -d, -f1 "$OUT.csv" | tail -n +2 | grep -v '^bert_base$' | awk '!s[$0]++' | tr '\n' ' ')
	for c in $CLUSTERS small-mem-2.5g small-mem-1.5g; do
		grep -q "^[^,]*,$c," "$OUT.csv" || continue
		echo
		echo "## $c"
		echo
		printf '| planner |'
		for m in $MODELS bert_base; do
			grep -q "^$m,$c," "$OUT.csv" && printf ' %s |' "$m"
		done
		echo
		printf '|---|'
		for m in $MODELS bert_base; do
			grep -q "^$m,$c," "$OUT.csv" && printf -- '---|'
		done
		echo
		for p in $PLANNERS; do
			printf '| %s |' "$p"
			for m in $MODELS bert_base; do
				awk -F, -v m="$m" -v c="$c" -v p="$p" '
					$1 == m && $2 == c && $3 == p {
						if ($14 != "ok") { printf " %s |", $14; exit }
						printf " %.4g s%s%s |", $4, ($5 != "" ? " (" $5 "x best)" : ""),
							($10 == "true" ? " OOM" : "")
					}' "$OUT.csv"
			done
			echo
		done
		printf '| -O2 chose |'
		for m in $MODELS bert_base; do
			awk -F, -v m="$m" -v c="$c" '
				$1 == m && $2 == c && $3 == "O2" { printf " %s |", $13 }' "$OUT.csv"
		done
		echo
	done
	echo
	echo "## Summary"
	echo
	awk -F, -v het="$HETERO" '
		NR == 1 { next }
		$14 == "ok" { k = $1 "," $2; t[k "," $3] = $4; o[k "," $3] = $10
			      cell[k] = 1; pl[$3] = 1; ct[$3] += $11; n[$3]++
			      if ($7 != "") { rb[$3] += $7; nrb[$3]++ }
			      if ($3 == "O2" && $12 != "") { ee += ($12 < 0 ? -$12 : $12); es += $12; ne++ }
			      if ($3 == "O2" && $13 != "") ch[$13]++
			      if ($3 == "O2" && $15 != "") { rp += $15; rw += $16 } }
		END {
			split(het, h, " "); for (i in h) ish[h[i]] = 1
			worse = 0; oomw = 0; cells = 0; lg = 0; nh = 0; lgd = 0; nhd = 0
			for (k in cell) {
				split(k, a, ","); o2 = t[k ",O2"]
				if (o2 == "") continue
				cells++
				# only plans that fit in memory count
				for (p in pl) if (p != "O2" && p != "O1" && t[k "," p] != "" &&
						  o[k "," p] == "false" &&
						  t[k "," p] < o2 * (1 - 1e-9)) {
					worse++; printf "- -O2 slower than %s on %s: %.4g s against %.4g s\n", p, k, o2, t[k "," p]
				}
				if (o[k ",O2"] == "true") for (p in pl)
					if (t[k "," p] != "" && o[k "," p] == "false") {
						oomw++; printf "- -O2 OOM where %s fits on %s\n", p, k; break
					}
				best = ""
				for (p in pl) if ((p == "dp-best" || p == "ddp") && t[k "," p] != "" &&
						  o[k "," p] == "false" && (best == "" || t[k "," p] < best))
					best = t[k "," p]
				if ((a[2] in ish) && best > 0) { lg += log(best / o2); nh++ }
				if ((a[2] in ish) && t[k ",dp"] > 0) { lgd += log(t[k ",dp"] / o2); nhd++ }
			}
			printf "- cells: %d; -O2 slower than some baseline that fits in memory in %d, OOM where a baseline fits in %d\n", cells, worse, oomw
			if (nh) printf "- **geometric-mean speedup of -O2 over the better of dp-best and ddp on the heterogeneous cells: %.3fx** over %d cells (target >= 1.3x)\n", exp(lg / nh), nh
			if (nhd) printf "- geometric-mean speedup of -O2 over unbucketed all-GPU dp on the same cells: %.3fx over %d cells\n", exp(lgd / nhd), nhd
			for (p in pl) if (nrb[p]) printf "- mean ratio to problem_lower_bound_s, %s: %.3f%s\n", p, rb[p] / nrb[p], (p == "O2" ? " (target <= 1.5)" : "")
			if (rp) printf "- the strategy simulator ranks %d of the %d pairs of -O2 final candidates it estimates (both fitting in memory) the other way round from the full simulation (%.1f%%)\n", rw, rp, 100 * rw / rp
			if (ne) printf "- the hybrid estimate error (strategy simulator against full simulation, -O2): mean |error| %.1f%%, mean %+.1f%% over %d cells\n", ee / ne, es / ne, ne
			for (c in ch) printf "- -O2 chose %s in %d cells\n", c, ch[c]
			for (p in pl) printf "- mean compile time %s: %.3f s (measured)\n", p, ct[p] / n[p]
		}' "$OUT.csv" | sort
	[ -n "$big" ] && echo "- -O2 at 100k ops on 16 devices (gengraph --ops 100000, tag-testbed): $big (measured; target <= 10 s)"
} >"$OUT.md"
echo "wrote $OUT.md and $OUT.csv"
