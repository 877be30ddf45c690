#!/bin/sh
# make bench: performance figures.  Prints numbers; never passes or fails
# on a timing.  usage: bench/run.sh BUILD_DIR
#   1. parse + infer/verify + print of synthetic layered training graphs
#      (tools/gengraph) of 10k, 100k and 1M ops: seconds per phase (wall
#      clock, and the process's CPU time), peak RSS and bytes per op; best
#      of RUNS runs (default 3), since a shared machine is noisy.
#   2. the simulator on placed graphs of 100k and 1M ops on 16 devices.
#   3. compile time of -O1 and -O2 at 10k, 100k and 1M ops on 16 devices
#      (the scaling curve; -O2 up to 100k).
#   4. -O1 of a 16-op graph on one machine of 1024 and 4096 GPUs and on
#      1250 machines of 8 (10000 GPUs)
#      (placement must scale to the clusters users plan for).
B=${1:-build}
RUNS=${RUNS:-3}
cd "$(dirname "$0")/.." || exit 2
PCC=$B/pcc GEN=$B/gengraph
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
field() { awk -v k="$1" '$0 ~ "^ +" k " " { sub("^ +" k " +", ""); print $1; exit }' "$2"; }
echo "pcc benchmarks: $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //')"
echo

# best RUN_CMD...: runs the command RUNS times with --time-passes output in
# $t/time; keeps the run with the least wall-clock total in $t/best.
best() {
	bt=
	for r in $(seq "$RUNS"); do
		"$@" 2>"$t/time" </dev/null
		p=$(field 'read\+parse' "$t/time"); v=$(field 'infer\+verify' "$t/time")
		s=$(field simulate "$t/time"); e=$(field emit "$t/time")
		tot=$(echo "$p $v ${s:-0} $e" | awk '{printf "%.6f", $1+$2+$3+$4}')
		if [ -z "$bt" ] || [ "$(echo "$tot $bt" | awk '{print ($1 < $2)}')" = 1 ]; then
			bt=$tot
			cp "$t/time" "$t/best"
		fi
	done
}

echo "## parse + infer/verify + print: pcc -passes= --time-passes G.gir -o OUT (best of $RUNS)"
for n in 10000 100000 1000000; do
	$GEN --ops $n -o "$t/g.gir"
	ops=$(grep -c ' = ' "$t/g.gir")
	mb=$(wc -c < "$t/g.gir" | awk '{printf "%.1f", $1/1e6}')
	best "$PCC" -passes= --time-passes "$t/g.gir" -o "$t/out.gir"
	p=$(field 'read\+parse' "$t/best"); v=$(field 'infer\+verify' "$t/best")
	e=$(field emit "$t/best"); cpu=$(field 'cpu \(user\+sys\)' "$t/best")
	rss=$(field 'peak RSS' "$t/best")
	echo "$ops $p $v $e $cpu $rss $mb" | awk '{
		printf "%8d ops (%5.1f MB): parse %.3f s, infer+verify %.3f s, print %.3f s = %.3f s (cpu %.3f s); peak RSS %.1f MiB = %.0f bytes/op\n",
		       $1, $7, $2, $3, $4, $2+$3+$4, $5, $6, $6*1048576/$1 }'
	[ $n -eq 1000000 ] && cp "$t/best" "$t/1m"
done
echo "$(field 'read\+parse' "$t/1m") $(field 'infer\+verify' "$t/1m") $(field emit "$t/1m") $(field 'peak RSS' "$t/1m")" |
awk '{ s = $1+$2+$3; b = $4*1048576/999992;
       printf "targets at 1M ops: < 2 s (%.3f s: %s), < 1 KiB/op (%.0f bytes: %s)\n",
              s, s < 2 ? "met" : "missed", b, b < 1024 ? "met" : "missed" }'
echo

echo "## simulate a placed graph: pcc -passes= --stats-json=S.json G.gir (16 devices)"
for n in 100000 1000000; do
	$GEN --ops $n --place 16 -o "$t/p.gir"
	runs=$RUNS
	[ $n -eq 1000000 ] && RUNS=1
	best "$PCC" -passes= --time-passes --stats-json="$t/s.json" "$t/p.gir" -o /dev/null
	RUNS=$runs
	sim=$(field simulate "$t/best")
	mk=$(sed -n 's/.*"makespan_s": *\([0-9.e+-]*\).*/\1/p' "$t/s.json")
	echo "$n $sim $mk" | awk '{ printf "%8d ops on 16 devices: simulate %.3f s (simulated makespan %s s)\n", $1, $2, $3 }'
done
echo

echo "## compile time: pcc -O1 / -O2 --time-passes G.gir, 16 devices (TAG's testbed)"
echo "   the passes' total (CPU); targets at 100k ops: -O1 <= 1 s, -O2 <= 10 s"
C=examples/clusters/tag-testbed.yaml
for n in 10000 100000 1000000; do
	$GEN --ops $n -o "$t/g.gir"
	for o in -O1 -O2; do
		[ $n -eq 1000000 ] && [ $o = -O2 ] && continue
		if timeout 300 "$PCC" $o --time-passes "$t/g.gir" --cluster $C -o /dev/null \
			2>"$t/time" </dev/null; then
			printf '%8d ops %s: ' $n $o
			awk '$1 ~ /^[0-9]+$/ { printf "%s %.3f, ", $2, $3 }
			     $1 == "total" { printf "total %.3f s", $2 }
			     $1 == "cpu" { printf " (cpu %s s)\n", $3 }' "$t/time"
		else
			printf '%8d ops %s: did not finish in 300 s (or failed)\n' $n $o
		fi
	done
done
echo

echo "## many devices: pcc -O1 and -O2 --time-passes on a 16-op graph (measured)"
echo "   one machine of 1024 and 4096 GPUs, 1250 machines of 8, 16 of 4096 (the most a cluster"
echo "   may have); target: 4096 GPUs <= 5 s (issue 11)"
gpus_cluster() { # gpus_cluster MACHINES GPUS_EACH FILE
	{
		printf 'name: gpus-%sx%s\ndevice_types:\n' "$1" "$2"
		printf '  G: {flops: 15.7 TFLOPS, memory: 16 GiB, mem_bw: 900 GB/s}\nmachines:\n'
		i=0
		while [ $i -lt "$1" ]; do
			printf '  - {name: m%s, type: G, count: %s, link: {bandwidth: 150 GB/s, latency: 2 us}}\n' $i "$2"
			i=$((i + 1))
		done
		printf 'network: {bandwidth: 25 GB/s, latency: 10 us}\n'
	} >"$3"
}
$GEN --ops 16 -o "$t/g16.gir"
for mk in 1x1024 1x4096 1250x8 16x4096; do
	gpus_cluster "${mk%x*}" "${mk#*x}" "$t/c.yaml"
	for o in -O1 -O2; do
	w0=$(date +%s.%N)
	if timeout 300 "$PCC" $o --time-passes "$t/g16.gir" --cluster "$t/c.yaml" \
		-o /dev/null 2>"$t/time" </dev/null; then
		w1=$(date +%s.%N)
		printf '%s %4s machines x %4s GPUs: ' $o "${mk%x*}" "${mk#*x}"
		awk -v w="$(echo "$w0 $w1" | awk '{printf "%.3f", $2-$1}')" '
		     $1 ~ /^[0-9]+$/ && ($2 == "fuse" || $2 == "place" || $2 == "order") { printf "%s %.3f, ", $2, $3 }
		     $1 == "total" { printf "passes %.3f s, ", $2 }
		     $1 == "cpu" { printf "cpu %s s, ", $3 }
		     $1 == "peak" { printf "peak RSS %s MiB, wall %s s\n", $3, w }' "$t/time"
	else
		printf '%s %4s machines x %4s GPUs: did not finish in 300 s (or failed)\n' $o "${mk%x*}" "${mk#*x}"
	fi
	done
done
