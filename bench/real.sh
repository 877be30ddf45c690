#!/bin/sh
# bench/real.sh BUILD_DIR — pcc's simulator against real TensorFlow, side
# by side (make bench-real; docs/bench-real.md).  Figures, never pass/fail.
#
#   1. this machine as a cluster of TASKS (2) local TensorFlow tasks, one
#      intra-op and one inter-op thread each: tools/tfprofile --cluster-out
#      (device throughput, link latency and bandwidth, measured); the
#      network from point-to-point transfers and a collective's ring step
#      from CollectiveReduces (NETWORK=both, the default), or either for
#      everything (NETWORK=transfer, NETWORK=collective);
#   2. per model: its op times on one task at three batch sizes
#      (tools/tfprofile, pcc's --profile YAML);
#   3. per model and plan (PLANS: -O0, -O1, -O2 and mp, a model-parallel
#      plan pcc does not pick, each with --profile and the
#      measured cluster): pcc's simulated step time (--stats-json
#      makespan) and the measured one: tools/tfrun --steps STEPS (20) on
#      the local cluster, the median of the steps after the first (STAT=min:
#      profiles and measurements take the minimum instead, the machine
#      without the other processes' load); a model's plans run in one
#      tfrun, in turns of BLOCK (5) steps, so that they are measured side
#      by side under the same load; the first step of every turn is not
#      timed (tfrun marks it: the caches are the previous plan's)
#      (INTERLEAVE=0: one tfrun per plan, one after another);
#   4. per plan the error (simulated / measured - 1), the measured speedup
#      of -O1 and -O2 over -O0; per model whether the plan pcc ranks
#      fastest is the one measured fastest; the median |error| overall.
#
# The heterogeneous variant (VARIANTS, default "homogeneous heterogeneous"):
# the same with task 1 throttled to THROTTLE (0.5) of one CPU by a cgroup
# CPU quota and profiled as its own device type (HALF, "CPUhalf"): every
# task a process of its own (tfrun/tfprofile --process-per-task), the
# cluster of two types (tfprofile --throttle 1=THROTTLE --task-type
# 1=HALF), each model profiled on a plain task and on a throttled one
# (--merge: one profile, two types), each plan run with task 1 throttled.
# Skipped, saying why, where no cgroup CPU controller is writable here.
# The homogeneous variant runs a process per task too, as a real cluster
# does and as the heterogeneous one must (PROCESS_PER_TASK=0: every task
# in tfrun's own process instead).
#
# Models: MODELS (default "mlp cnn resnet18 transformer"): the C tests'
# MLP and CNN, ResNet-18 on 64x64 images (tests/ctests/resnet18.gir), a
# small Transformer encoder (bench/real_models.py via tools/torch2gir;
# left out when PyTorch is missing).  OUT (build/bench-real) keeps every
# file: profiles, cluster YAML, plans, stats, tfrun logs, table.md.
# Without TensorFlow (tools/tfpython exits 77) it says so and exits 0.
set -u
B=${1:-build}
cd "$(dirname "$0")/.." || exit 2
PCC=$B/pcc
[ -x "$PCC" ] || { echo "bench/real.sh: build $PCC first" >&2; exit 2; }
MODELS=${MODELS:-"mlp cnn resnet18 transformer"}
STEPS=${STEPS:-20}
TASKS=${TASKS:-2}
PLANS=${PLANS:-"O0 O1 O2 mp"}
STAT=${STAT:-median}
INTERLEAVE=${INTERLEAVE:-1}
BLOCK=${BLOCK:-5}
NETWORK=${NETWORK:-both}
VARIANTS=${VARIANTS:-"homogeneous heterogeneous"}
THROTTLE=${THROTTLE:-0.5}
HALF=${HALF:-CPUhalf}
OUT=${OUT:-$B/bench-real}
mkdir -p "$OUT"
TF=tools/tfpython
if ! $TF -c 'import tensorflow' >/dev/null 2>"$OUT/tf.err"; then
	if [ $? -eq 77 ]; then
		echo "bench-real: SKIPPED: $(cat "$OUT/tf.err")"
		exit 0
	fi
fi
quiet() { grep -v '^WARNING: All log\|^I0000\|oneDNN custom operations' || true; }

echo "bench-real: pcc's simulator against TensorFlow $($TF -c 'import tensorflow as tf; print(tf.__version__)' 2>/dev/null)"
echo "bench-real: $TASKS local tasks, 1 intra-op and 1 inter-op thread each; $STEPS steps per plan; $STAT; network from $NETWORK; variants: $VARIANTS"
echo "bench-real: load before: $(uptime)"

# A plan's pcc option: O0, O1, O2 the optimisation levels; mp a
# model-parallel plan pcc does not pick itself (METIS's partition of the
# ops over the tasks, place<algo=metis>), so that the ranking compares
# distinct plans and the table has a plan whose work crosses tasks.
pipeline() {
	case $1 in
	O*) echo "-$1" ;;
	mp) echo "-passes=simplify,annotate,place<algo=metis>,comm,order" ;;
	*) echo "-passes=$1" ;;
	esac
}
label() { case $1 in O*) echo "-$1" ;; *) echo "$1" ;; esac; }

model_file() { # model_file NAME: the .gir of a model, made when needed
	case $1 in
	mlp) echo tests/ctests/mlp.gir ;;
	cnn) echo tests/ctests/cnn.gir ;;
	resnet18) echo tests/ctests/resnet18.gir ;;
	transformer)
		f=$OUT/transformer.gir
		if [ ! -s "$f" ]; then
			(cd bench && ../tools/torch2gir real_models:small_transformer --batch 8 \
				-o "../$f") >"$OUT/torch2gir.log" 2>&1 || { rm -f "$f"; return 1; }
		fi
		echo "$f" ;;
	*) [ -f "$1" ] && echo "$1" ;;
	esac
}

# tfprof LOG ARGS...: tools/tfprofile ARGS 2>LOG, once more when it
# fails: TensorFlow's distributed runtime now and then aborts a step of
# a multi-process cluster ("The same RunGraph (Worker) request was
# received twice": gRPC retried a call the task had already taken); a
# profile is a measurement, so it starts over (a training run is not
# retried: its updates may have been applied once already).
tfprof() {
	log=$1; shift
	tools/tfprofile "$@" 2>"$log" && return 0
	echo "bench-real: tools/tfprofile failed ($(quiet <"$log" | tail -n 1 | cut -c1-160)); once more"
	tools/tfprofile "$@" 2>"$log"
}

median() { sort -g | awk '{v[NR]=$1} END{if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# row MODEL PLAN RC: the table row, error and ranking lines of one plan
# from its files ($OUT/$V$m.$o.sim, .steps, .pbtxt, .tfrun.log)
row() {
	m=$1 o=$2 rc=$3
	plan=$OUT/$V$m.$o.pbtxt
	sim=$(cat "$OUT/$V$m.$o.sim")
	if [ "$STAT" = min ]; then meas=$(sort -g "$OUT/$V$m.$o.steps" | head -n 1); else meas=$(median <"$OUT/$V$m.$o.steps"); fi
	[ -n "$meas" ] || meas=nan
	mn=$(sort -g "$OUT/$V$m.$o.steps" | head -n 1)
	if [ "$rc" -ne 0 ] || [ "$meas" = nan ]; then
		echo "bench-real: $m $(label "$o"): tfrun failed (exit $rc): $(quiet <"$OUT/$V$m.$o.tfrun.log" | tail -n 1)"
		printf '| %s | %s | %.3f | failed | | | | |\n' "$m" "$(label "$o")" "$(awk -v s="$sim" 'BEGIN{print s * 1000}')" >>"$table"
		return
	fi
	[ -n "$base" ] || { [ "$o" = O0 ] && base=$meas; }
	err=$(awk -v s="$sim" -v t="$meas" 'BEGIN{printf "%+.1f", (s / t - 1) * 100}')
	echo "$err" >>"$OUT/${V}errors.txt"
	echo "$m $(label "$o") $sim $meas" >>"$OUT/${V}ranking.txt"
	sp=$(awk -v b="${base:-0}" -v t="$meas" 'BEGIN{if (b > 0) printf "%.2fx", b / t; else printf "-"}')
	# the plan's GraphDef nodes per task (where the work went)
	per=$(sed -n 's/^ *device: "\/job:[^/]*\/replica:0\/task:\([0-9]*\)\/.*/\1/p' "$plan" |
		awk '{c[$1]++; if ($1 > n) n = $1} END{for (i = 0; i <= n; i++) printf "%s%d", i ? "/" : "", c[i]}')
	printf '| %s | %s | %.3f | %.3f | %s %% | %s | %.3f | %s |\n' "$m" "$(label "$o")" \
		"$(awk -v s="$sim" 'BEGIN{print s * 1000}')" "$(awk -v t="$meas" 'BEGIN{print t * 1000}')" \
		"$err" "$sp" "$(awk -v t="$mn" 'BEGIN{print t * 1000}')" "$per" >>"$table"
}

# variant NAME: one run of the benchmark; V (the file prefix), PPT (the
# process options of tfrun and tfprofile), RUNX (tfrun's throttle),
# CLX (the cluster measurement's), PROF2 (a second profile's options:
# throttled type) set by the caller
variant() {
	echo
	echo "bench-real: $1 variant"
	# 1. the cluster
	C=$OUT/${V}local.yaml
	# shellcheck disable=SC2086
	if ! tfprof "$OUT/${V}cluster.log" --cluster-out "$C" --tasks "$TASKS" --network "$NETWORK" --pcc "$PCC" \
		$PPT $CLX; then
		quiet <"$OUT/${V}cluster.log"; echo "bench-real: $1: measuring the cluster failed"; return
	fi
	quiet <"$OUT/${V}cluster.log"
	table=$OUT/${V}table.md
	{
		echo "| model | plan | simulated ms | measured ms ($STAT) | error | measured speedup over -O0 | measured ms (min) | nodes on task 0/1/... |"
		echo "|---|---|---:|---:|---:|---:|---:|---|"
	} >"$table"
	: >"$OUT/${V}errors.txt"
	: >"$OUT/${V}ranking.txt"
	for m in $MODELS; do
		f=$(model_file "$m") || { echo "bench-real: $m: left out (could not generate it; $OUT/torch2gir.log)"; continue; }
		[ -n "$f" ] || { echo "bench-real: $m: unknown model"; continue; }
		P=$OUT/$V$m.profile.yaml
		# shellcheck disable=SC2086
		if ! tfprof "$OUT/$V$m.profile.log" "$f" -t CPU -o "$P" --pcc "$PCC" --stat "$STAT" $PPT; then
			quiet <"$OUT/$V$m.profile.log" | tail -n 3
			echo "bench-real: $m: profiling failed"; continue
		fi
		quiet <"$OUT/$V$m.profile.log"
		base=
		if [ -n "$PROF2" ]; then
			# shellcheck disable=SC2086
			if ! tfprof "$OUT/$V$m.profile2.log" "$f" -o "$P.2" --pcc "$PCC" --stat "$STAT" $PPT $PROF2 --merge "$P"; then
				quiet <"$OUT/$V$m.profile2.log" | tail -n 3
				echo "bench-real: $m: profiling the throttled task failed"; continue
			fi
			quiet <"$OUT/$V$m.profile2.log"
			mv "$P.2" "$P"
		fi
		# Every plan first, then one tfrun with all of them: their steps
		# interleave on one local cluster (round k starts with plan k mod
		# n), so that a slow minute of the machine falls on every plan
		# alike; the ranking compares plans measured side by side.  When
		# that run fails, each plan runs alone (a failing plan fails alone).
		ok=
		for o in $PLANS; do
			plan=$OUT/$V$m.$o.pbtxt
			rm -f "$OUT/$V$m.$o.steps" "$OUT/$V$m.$o.sim"
			if ! "$PCC" "$(pipeline "$o")" "$f" --cluster "$C" --profile "$P" --stats-json="$OUT/$V$m.$o.json" \
				--emit=tf -o "$plan" 2>"$OUT/$V$m.$o.pcc.log"; then
				echo "bench-real: $m $(label "$o"): pcc failed: $(tail -n 1 "$OUT/$V$m.$o.pcc.log")"; continue
			fi
			sed -n 's/.*"makespan_s": *\([0-9.eE+-]*\).*/\1/p' "$OUT/$V$m.$o.json" | head -n 1 >"$OUT/$V$m.$o.sim"
			ok="$ok $o"
		done
		plans=
		for o in $ok; do plans="$plans $OUT/$V$m.$o.pbtxt"; done
		rc=1
		if [ "$INTERLEAVE" = 1 ] && [ -n "$ok" ]; then
			# shellcheck disable=SC2086
			tools/tfrun $plans --tasks "$TASKS" --steps "$STEPS" --block "$BLOCK" $PPT $RUNX \
				>"$OUT/$V$m.vars" 2>"$OUT/$V$m.tfrun.log"
			rc=$?
		fi
		for o in $ok; do
			plan=$OUT/$V$m.$o.pbtxt
			if [ $rc -eq 0 ]; then
				# "tfrun: PLAN: step K: X s" (one plan: "tfrun: step K: X s");
				# not "... X s (after a switch)"
				awk -v p="tfrun: $plan: " -v one="$(echo $ok | wc -w)" '
					one == 1 && /^tfrun: step [0-9]*: / { sub(/^tfrun: /, ""); print; next }
					index($0, p) == 1 { print substr($0, length(p) + 1) }' "$OUT/$V$m.tfrun.log" |
					sed -n 's/^step \([0-9]*\): \([0-9.eE+-]*\) s$/\1 \2/p' | awk '$1 > 1 {print $2}' >"$OUT/$V$m.$o.steps"
				cp "$OUT/$V$m.tfrun.log" "$OUT/$V$m.$o.tfrun.log"
				prc=0
			else
				# shellcheck disable=SC2086
				tools/tfrun "$plan" --tasks "$TASKS" --steps "$STEPS" $PPT $RUNX >"$OUT/$V$m.$o.vars" 2>"$OUT/$V$m.$o.tfrun.log"
				prc=$?
				sed -n 's/^tfrun: step \([0-9]*\): \([0-9.eE+-]*\) s$/\1 \2/p' "$OUT/$V$m.$o.tfrun.log" |
					awk '$1 > 1 {print $2}' >"$OUT/$V$m.$o.steps"
			fi
			row "$m" "$o" "$prc"
		done
	done
	echo
	cat "$table"
	echo
	if [ -s "$OUT/${V}errors.txt" ]; then
		med=$(awk '{x = $1 + 0; if (x < 0) x = -x; print x}' "$OUT/${V}errors.txt" | median)
		echo "$1: median |error| over $(wc -l <"$OUT/${V}errors.txt") plans: $med % (target: <= 15 %)"
	fi
	# Plans within 1 % of the best simulated time tie (-O1 and -O2 are
	# often the same plan): the ranking holds when the measured fastest is
	# one of them.
	awk '
		{ k[$1] = k[$1] " " $2; sim[$1, $2] = $3; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
		{ if (!($1 in bs) || $3 < bs[$1]) bs[$1] = $3
		  if (!($1 in bm) || $4 < bm[$1]) { bm[$1] = $4; bmp[$1] = $2 } }
		END { for (i = 1; i <= n; i++) { m = order[i]; c = split(k[m], ps, " "); best = ""; hit = 0
			for (j = 1; j <= c; j++) if (sim[m, ps[j]] <= bs[m] * 1.01) {
				best = best (best == "" ? "" : "/") ps[j]; if (ps[j] == bmp[m]) hit = 1 }
			printf "%s: pcc ranks %s fastest (simulated), measured fastest: %s%s\n", m, best, bmp[m],
				hit ? "" : " (a miss)" } }' "$OUT/${V}ranking.txt"
	echo "bench-real: $1: load after: $(uptime)"
}

for v in $VARIANTS; do
	case $v in
	homogeneous)
		V= RUNX= CLX= PROF2=
		PPT=--process-per-task
		[ "${PROCESS_PER_TASK:-1}" = 0 ] && PPT=""
		variant homogeneous ;;
	heterogeneous)
		why=$($TF -c 'import sys; sys.path.insert(0, "tools"); import pcctf
try: pcctf.cpu_cgroup_parent()
except pcctf.PlanError as e: print(e)' 2>/dev/null)
		if [ -n "$why" ]; then
			echo
			echo "bench-real: heterogeneous variant SKIPPED: no CPU quota possible here: $why"
			continue
		fi
		V=het. PPT=--process-per-task RUNX="--throttle 1=$THROTTLE"
		CLX="--throttle 1=$THROTTLE --task-type 1=$HALF" PROF2="-t $HALF --throttle 0=$THROTTLE"
		echo
		echo "bench-real: heterogeneous: task 1 throttled to $THROTTLE CPU (cgroup CPU quota), device type $HALF; every task a process of its own"
		variant heterogeneous ;;
	*) echo "bench-real: unknown variant $v" ;;
	esac
done
echo "bench-real: files in $OUT (profiles, cluster YAML, plans, tfrun logs; het.*: the heterogeneous variant); all times measured except the simulated column"
