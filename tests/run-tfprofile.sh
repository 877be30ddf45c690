#!/bin/sh
# run-tfprofile.sh PCC — tools/tfprofile on the C tests' MLP
# (tests/ctests/mlp.gir, batch 12) at batches 6 and 12, and this machine as
# a 2-task cluster; deterministic checks only, never a timing:
#   - the profile parses in pcc (--profile) and every op of the graph has
#     an entry with non-negative times; pcc's --print-costs is, op by op,
#     the entry's least-squares line at batch 12 (tests/tfprof/
#     check_profile.py), and differs from the table without the profile;
#   - the cluster YAML parses in pcc, has two one-device machines of the
#     named type and a network, and pcc plans the MLP on it (-O1) with
#     the profile;
#   - two device types: --merge adds a second type's entries to every op
#     (pcc plans with it on a cluster whose task 1 has that type,
#     --task-type), and refuses a profile at other batch sizes.
# Without TensorFlow (tools/tfpython exits 77) the checks count as skipped.
# Prints "tfprofile: N passed, N failed, N skipped".
PCC=${1:-./pcc}
case $PCC in /*) ;; *) PCC=$(pwd)/$PCC ;; esac
cd "$(dirname "$0")/.." || exit 2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
pass=0 fail=0 skip=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL $*"; }
check() { # check NAME CMD...
	name=$1; shift
	if "$@" >"$t/log" 2>&1; then ok
	else ko "$name"; sed 's/^/  | /' "$t/log" | grep -v 'WARNING\|I0000' | head -n 20; fi
}
M=tests/ctests/mlp.gir
ONE=tests/ctests/one-cpu.yaml
tools/tfprofile "$M" -t CPU --batches 6,12 --steps 3 --warmup 1 --pcc "$PCC" \
	-o "$t/prof.yaml" --cluster-out "$t/local.yaml" --max-size-log2 14 --repeat 3 \
	>"$t/out" 2>"$t/err"
rc=$?
if [ $rc -eq 77 ]; then
	echo "SKIPPED tfprofile: $(cat "$t/err")"
	echo "tfprofile: 0 passed, 0 failed, 11 skipped"
	exit 0
fi
check "tfprofile exits 0" test $rc -eq 0 || { grep -v 'WARNING\|I0000' "$t/err" | tail -n 5; }
check "profile parses in pcc" "$PCC" -passes=simplify "$M" --cluster $ONE --profile "$t/prof.yaml" \
	--print-costs="$t/costs.csv" -o /dev/null
check "cost table without the profile" "$PCC" -passes=simplify "$M" --cluster $ONE \
	--print-costs="$t/costs0.csv" -o /dev/null
if tools/tfpython tests/tfprof/check_profile.py "$t/prof.yaml" "$t/costs.csv" "$t/costs0.csv" CPU 12 \
	>"$t/check" 2>&1; then ok; else ko "profile: entries and fits (check_profile.py)"; grep -v 'WARNING\|I0000' "$t/check" | head -n 20; fi
# the step overhead on one input: the MLP's x (f32[12,6], 288 B) carries
# it, its labels (i64[12], 96 B) do not (a plan that put them on two
# devices would pay the overhead in parallel; docs/cost-model.md)
check "the step overhead on the largest Placeholder alone" sh -c "
	grep -q '^# step overhead .*, on the largest Placeholder (x)\$' '$t/prof.yaml' &&
	[ \$(grep -c '# fed: the step overhead' '$t/prof.yaml') -eq 1 ] &&
	grep -q '^  x:  # fed: the step overhead' '$t/prof.yaml'"
# a traced span longer than the untraced step: the ops scaled to it
if tools/tfpython tests/tfprof/check_untraced.py >"$t/check2" 2>&1; then ok
else ko "ops scaled to the untraced step (check_untraced.py)"; grep -v 'WARNING\|I0000' "$t/check2" | head -n 20; fi
check "cluster YAML: 2 machines of type CPU (collectives: blocking), a network with a collective's figures and the dispatch latency" sh -c "
	'$PCC' -passes= '$M' --cluster '$t/local.yaml' -o '$t/c.gir' &&
	[ \$(grep -c '^  machine \"t[01]\" {type = \"CPU\", count = 1' '$t/c.gir') -eq 2 ] &&
	grep -q '^  network {bandwidth = [0-9.]*[KMGT]*B/s, latency = [0-9.]*[mun]*s, collective_bandwidth = [0-9.]*[KMGT]*B/s, collective_latency = [0-9.]*[mun]*s\\(, dispatch_latency = [0-9.]*[mun]*s\\)\\{0,1\\}}\$' '$t/c.gir' &&
	grep -q '^  type \"CPU\" {.*, collectives = \"blocking\"\\(, sends = \"idle\"\\)\\{0,1\\}}' '$t/c.gir' &&
	'$PCC' -O1 '$M' --cluster '$t/local.yaml' --profile '$t/prof.yaml' -o /dev/null"
# the send measurement: its comment gives how much of the receiver's work
# waited for the sender's, and 'sends: idle' is written exactly when it is
# over half (grep -c exits 1 when it counts none: the count, not its
# status, decides)
check "cluster YAML: sends: idle exactly when over half the receiver's work waited" sh -c "
	w=\$(sed -n 's/^# sends: .*, so \\(-\\{0,1\\}[0-9]*\\) % of task 1.s chain came after task 0.s.*/\\1/p' '$t/local.yaml') &&
	[ -n \"\$w\" ] && n=\$(grep -c 'sends: idle}' '$t/local.yaml'; true) &&
	if [ \"\$w\" -gt 50 ]; then [ \$n -eq 1 ]; else [ \$n -eq 0 ]; fi"
# two device types: a profile of another type merged into the first
# (--merge), a cluster whose task 1 has its own type (--task-type)
tools/tfprofile "$M" -t CPUb --batches 6,12 --steps 3 --warmup 1 --pcc "$PCC" --merge "$t/prof.yaml" \
	-o "$t/prof2.yaml" --cluster-out "$t/two.yaml" --task-type 0=CPU --task-type 1=CPUb --max-size-log2 14 --repeat 3 \
	>/dev/null 2>"$t/err2"
check "--merge: every op has a CPU and a CPUb entry; pcc reads it" sh -c "
	n=\$(grep -c '^  [^ #]' '$t/prof.yaml') && [ \$n -gt 0 ] &&
	[ \$(grep -c '^    CPU: \\[' '$t/prof2.yaml') -eq \$n ] &&
	[ \$(grep -c '^    CPUb: \\[' '$t/prof2.yaml') -eq \$n ] &&
	'$PCC' -O1 '$M' --cluster '$t/two.yaml' --profile '$t/prof2.yaml' -o /dev/null"
check "--task-type 0=CPU 1=CPUb: two device types, t1 of type CPUb" sh -c "
	'$PCC' -passes= '$M' --cluster '$t/two.yaml' -o '$t/c2.gir' &&
	grep -q '^  machine \"t0\" {type = \"CPU\", count = 1' '$t/c2.gir' &&
	grep -q '^  machine \"t1\" {type = \"CPUb\", count = 1' '$t/c2.gir'"
check "--merge of a profile at other batch sizes: an error, exit 1" sh -c "
	tools/tfprofile '$M' -t CPUc --batches 6 --steps 1 --warmup 1 --no-overhead --pcc '$PCC' \
		--merge '$t/prof.yaml' -o '$t/prof3.yaml' 2>'$t/err3'; [ \$? -eq 1 ] &&
	grep -q 'tfprofile: error: --merge .*: its batch_sizes: \\[6, 12\\], this run.s batch_sizes: \\[6\\]' '$t/err3' &&
	[ ! -e '$t/prof3.yaml' ]"
echo "tfprofile: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
