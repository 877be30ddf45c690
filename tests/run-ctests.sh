#!/bin/sh
# The C backend end to end: for every plan of tests/ctests/plans.txt, emit
# C with --emit=c, compile it against the runtime with the flags of
# `pcc --runtime-flags` (-Wall -Wextra -Werror), run one training step,
# and compare with the graph's single-device reference:
#   - the same initial values (--init --values: identical text);
#   - every updated parameter and graph output within TOL (relative above
#     1) of the reference, element by element (--values=NV: at most NV
#     elements of each, evenly spaced, so ResNet-18's 11.7 M parameters
#     print 62 * NV lines, not 11.7 M);
#   - and, for the reference, that the step moves every parameter by more
#     than MOVE somewhere, so that TOL could tell a wrong gradient.
# Then: a small plan with a hand-computed answer, emit-time errors (unsupported op, unplaced op, a deadlocking
# @order), --runtime-flags from the build tree and from `make install`,
# and a distributed plan with the runtime under ThreadSanitizer.
# usage: tests/run-ctests.sh BUILD_DIR [--tsan-only [CC]]
B=${1:-build}
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
PCC=$ROOT/$B/pcc
CC=${CC:-cc}
TOL=1e-4
MOVE=5e-3
NV=4096
CWARN="-std=c11 -Wall -Wextra -Werror -O1"
pass=0 fail=0 skip=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
ok() { pass=$((pass+1)); }
bad() { echo "FAIL $1"; [ -s "$t/log" ] && sed 's/^/  | /' "$t/log" | head -n 25; fail=$((fail+1)); }
check() { # check NAME COMMAND...: the command must succeed
	name=$1; shift
	if "$@" >"$t/log" 2>&1; then ok; else bad "$name"; fi
}

# A distributed plan and the runtime built with -fsanitize=thread, run.
tsan() {
	tcc=${1:-$CC}
	if ! echo 'int main(void){return 0;}' >"$t/probe.c" ||
	   ! $tcc -fsanitize=thread "$t/probe.c" -o "$t/probe" >/dev/null 2>&1 ||
	   ! "$t/probe" >/dev/null 2>&1; then
		echo "SKIP tsan: $tcc cannot build -fsanitize=thread programs here"
		skip=$((skip+9))   # emit, build and run of three plans
		return
	fi
	for plan in mlp-ring cnn-ps sync; do
		check "tsan $plan: emit" "$PCC" -passes= tests/ctests/$plan.gir \
			--cluster examples/clusters/hetero-4.yaml --emit=c -o "$t/tsan-$plan.c"
		check "tsan $plan: build" $tcc $CWARN -Wno-unused-parameter -g \
			-D_POSIX_C_SOURCE=200809L -fsanitize=thread -Ibackend/runtime \
			"$t/tsan-$plan.c" backend/runtime/*.c -o "$t/tsan-$plan" -lpthread -lm
		TSAN_OPTIONS="halt_on_error=1 exitcode=66" "$t/tsan-$plan" \
			>"$t/tsan.out" 2>"$t/log"
		rc=$?
		if [ $rc -eq 0 ] && ! grep -q ThreadSanitizer "$t/log"; then
			ok
			echo "tsan $plan: no data races, no lock-order problems ($(wc -l <"$t/tsan.out") result lines)"
		else
			bad "tsan $plan: exit $rc"
		fi
	done
}

if [ "${2:-}" = "--tsan-only" ]; then
	tsan "${3:-}"
	echo "tsan: $pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
	exit
fi

FLAGS=$("$PCC" --runtime-flags) || { echo "FAIL pcc --runtime-flags"; exit 1; }

# ref VALUES PLAN-VALUES: every element within TOL; prints the largest
# difference.
compare() {
	awk -v tol=$TOL '
	NR == FNR { ref[$1 " " $2] = $3; next }
	{
		k = $1 " " $2
		if (!(k in ref)) { print "not in the reference: " k; bad = 1; next }
		seen[k] = 1
		d = $3 - ref[k]; if (d < 0) d = -d
		s = ref[k]; if (s < 0) s = -s; if (s < 1) s = 1
		if (d > max) max = d
		if (d > tol * s && !($1 in shown)) {
			printf "%s[%s] = %s, reference %s\n", $1, $2, $3, ref[k]
			shown[$1] = 1; bad = 1
		}
	}
	END {
		for (k in ref) if (!(k in seen)) { print "missing: " k; bad = 1 }
		printf "largest difference %g\n", max
		exit bad
	}' "$1" "$2"
}

# moved INIT FINAL: every parameter changes somewhere by more than MOVE.
moved() {
	awk -v move=$MOVE '
	NR == FNR { v0[$1 " " $2] = $3; names[$1] = 1; next }
	($1 " " $2) in v0 { d = $3 - v0[$1 " " $2]; if (d < 0) d = -d
		if (d > m[$1]) m[$1] = d }
	END { for (n in names) { printf "%s moves by up to %g\n", n, m[n]
		if (m[n] <= move) bad = 1 }
	      exit bad }' "$1" "$2"
}

while read -r graph name args; do
	case $graph in ''|\#*) continue ;; esac
	tag="$graph/$name"
	c="$t/$graph-$name.c" x="$t/$graph-$name"
	# shellcheck disable=SC2086
	if ! "$PCC" $args --emit=c -o "$c" >"$t/log" 2>&1; then bad "$tag: emit"; continue; fi
	ok
	# shellcheck disable=SC2086
	if ! $CC $CWARN "$c" $FLAGS -o "$x" >"$t/log" 2>&1; then bad "$tag: compile"; continue; fi
	ok
	if "$x" >"$x.sum" 2>"$t/log" && "$x" --values=$NV >"$x.val" 2>>"$t/log" &&
	   "$x" --init --values=$NV >"$x.init" 2>>"$t/log" && [ ! -s "$t/log" ]; then
		ok
	else
		bad "$tag: run"
		continue
	fi
	echo "$tag:"
	sed 's/^/    /' "$x.sum"
	# The graph's first plan is its reference (ref_GRAPH).
	ref=$(eval "echo \${ref_$graph:-}")
	if [ -z "$ref" ]; then
		eval "ref_$graph=\$x"
		check "$tag: the step moves every parameter by more than $MOVE" moved "$x.init" "$x.val"
		sed 's/^/    /' "$t/log"
		continue
	fi
	check "$tag: same initial values as $graph/single" cmp "$ref.init" "$x.init"
	check "$tag: same parameters and outputs as $graph/single within $TOL" compare "$ref.val" "$x.val"
	sed 's/^/    /' "$t/log"
done <tests/ctests/plans.txt

# ---- dropout masks drawn in slices (issue 10) ---------------------------------
# In a data-parallel plan on N devices, each of BERT's dropout masks is N
# RandomUniform replicas, each of batch/N along dimension 0 with its
# @rng_slice (the plans above train to the one-device numbers with them).
masks_split() { # masks_split N CLUSTER
	"$PCC" -O0 tests/ctests/bert_tiny.gir --cluster "$2" -o "$t/ms.gir" || return 1
	awk -v n="$1" '
	function dim0(s) { match(s, /: f32\[[0-9]+/); return substr(s, RSTART + 6, RLENGTH - 6) + 0 }
	NR == FNR { if ($3 ~ /^RandomUniform\(/) whole[$1] = dim0($0); next }
	$3 ~ /^RandomUniform\(/ {
		match($0, /@origin = "[^"]*"/); o = "%" substr($0, RSTART + 11, RLENGTH - 12)
		if (!(o in whole) || dim0($0) * n != whole[o] || $0 !~ /@rng_slice = \[0, /) {
			print "not a slice of batch/" n ": " $1; bad = 1
		}
		cnt[o]++
	}
	END {
		for (o in whole) { k++; if (cnt[o] != n) { print o ": " cnt[o] + 0 " replicas"; bad = 1 } }
		printf "%d masks, each %d slices\n", k, n
		exit bad || k == 0
	}' tests/ctests/bert_tiny.gir "$t/ms.gir"
}
check "bert_tiny -O0 on 2 devices: every dropout mask drawn in 2 slices" \
	masks_split 2 examples/clusters/homo-2gpu.yaml
check "bert_tiny -O0 on 4 devices: every dropout mask drawn in 4 slices" \
	masks_split 4 examples/clusters/hetero-4.yaml

# ---- a plan with a known answer: implicit channels, a relay, events ----------
sync() {
	"$PCC" -passes= tests/ctests/sync.gir --cluster examples/clusters/hetero-4.yaml \
		--emit=c -o "$t/sync.c" && $CC $CWARN "$t/sync.c" $FLAGS -o "$t/sync" &&
	"$t/sync" | diff -u tests/ctests/sync.expected -
}
check "sync.gir: the answer worked out by hand" sync

# ---- gir's -inf through the C backend: a masked softmax, by hand ----------
masked() {
	"$PCC" '-passes=place<algo=single>,comm' tests/ctests/masked.gir \
		--cluster tests/ctests/one-cpu.yaml --emit=c -o "$t/masked.c" &&
	grep -q -- '-INFINITY' "$t/masked.c" &&
	$CC $CWARN "$t/masked.c" $FLAGS -o "$t/masked" &&
	"$t/masked" | diff -u tests/ctests/masked.expected -
}
check "masked.gir: -inf mask, softmax exactly 0 (by hand)" masked

# ---- one kernel through the C backend against an answer worked out by ----
# hand: tests/ctests/NAME.gir on one device, its results NAME.expected
by_hand() {
	"$PCC" '-passes=place<algo=single>,comm' "tests/ctests/$1.gir" \
		--cluster tests/ctests/one-cpu.yaml --emit=c -o "$t/$1.c" &&
	$CC $CWARN "$t/$1.c" $FLAGS -o "$t/$1" &&
	"$t/$1" | diff -u "tests/ctests/$1.expected" -
}
check "select.gir: SelectV2 broadcasting all three inputs (by hand)" by_hand select
check "roll.gir: Roll along two axes, negative shifts and axes (by hand)" by_hand roll
check "stack.gir: Pack and Unpack, negative axes (by hand)" by_hand stack

# ---- --values=N: N evenly spaced elements, indices floor(k * size / N) ----
# Against --values of mlp's reference (every element): with N = 3, each
# result's lines are its elements floor(k * n / 3), k = 0, 1, 2 (all of them
# when n <= 3); with N at least the size, every element; N = 0 is refused.
values_n() {
	x=$ref_mlp
	"$x" --values >"$t/all" && "$x" --values=3 >"$t/three" &&
	"$x" --values=100000000 | cmp - "$t/all" || return 1
	"$x" --values=0 >/dev/null 2>"$t/err" && return 1
	grep -q -- "--values=N: expected a positive number, not '0'" "$t/err" || return 1
	awk 'NR == FNR { n[$1]++; v[$1 " " $2] = $3; next }
	     { got[$1] = got[$1] " " $2
	       if (v[$1 " " $2] != $3) { print "value differs: " $0; bad = 1 } }
	     END { for (r in n) { m = n[r] < 3 ? n[r] : 3; want = ""
			for (k = 0; k < m; k++) want = want " " int(k * n[r] / m)
			if (got[r] != want) { print r ": indices" got[r] ", want" want; bad = 1 } }
		   exit bad }' "$t/all" "$t/three"
}
check "--values=N prints N evenly spaced elements" values_n

# ---- emit-time errors: a message naming the op, exit 1, no output -----------
C4=examples/clusters/hetero-4.yaml
printf 'precious\n' >"$t/keep.c"
sed 's/%a = Relu(%h)/%a = Softplus(%h)/' tests/ctests/mlp.gir >"$t/unsupported.gir"
check "unsupported op: exit 1" sh -c "'$PCC' -passes=simplify,annotate,place '$t/unsupported.gir' --cluster tests/ctests/one-cpu.yaml --emit=c -o '$t/keep.c' 2>'$t/err'; [ \$? -eq 1 ]"
check "unsupported op: names the op and its type" grep -q "unsupported.gir:.*op %a (Softplus): the C runtime has no kernel for op type 'Softplus'" "$t/err"
check "unsupported op: output untouched" sh -c "[ \"\$(cat '$t/keep.c')\" = precious ]"
check "unplaced op: exit 1 and a hint" sh -c "'$PCC' -passes=simplify,annotate tests/ctests/mlp.gir --cluster $C4 --emit=c 2>&1 >/dev/null | grep -q 'op %h0 (MatMul): has no @device: --emit=c needs a placed plan'"
# Replica 0 of the ring plan updates w1 before reading it: impossible.
awk '/%u_w1\/rep0 =/ { sub(/@device/, "@order = 0, @device") }
     /"v\/gpu0"}/ && !/%u_w1\/rep0 =/ && !/Placeholder|VariableV2|Const\(|Transfer/ { n++; sub(/@device/, "@order = " n ", @device") }
     { print }' tests/ctests/mlp-ring.gir >"$t/deadlock.gir"
check "deadlocking @order: refused" sh -c "'$PCC' -passes= '$t/deadlock.gir' --cluster $C4 --emit=c 2>&1 >/dev/null | grep -q \"@order deadlocks the plan: %[a-z_0-9/]* on v/gpu0\""
check "bad --emit-opt" sh -c "'$PCC' -passes= tests/ctests/mlp-ring.gir --cluster $C4 --emit=c --emit-opt=lr=fast 2>&1 >/dev/null | grep -q \"lr: expected a number, not 'fast'\""
# --emit-opt=lr is the learning rate of gir's short-form SGD (b1): with
# lr 0.5 instead of 0.01, b1 moves 50 times as far (sums: S0 - S = lr * G);
# w1 (written with its own alpha) does not change.
lr_opt() {
	"$PCC" -passes= tests/ctests/mlp-ring.gir --cluster $C4 --emit=c \
		--emit-opt=lr=0.5 -o "$t/lr.c" && $CC $CWARN "$t/lr.c" $FLAGS -o "$t/lr" &&
	"$t/lr" >"$t/lr.sum" && "$t/lr" --init >"$t/lr.init" || return 1
	[ "$(grep '^w1 ' "$t/lr.sum")" = "$(grep '^w1 ' "$t/mlp-ring.sum")" ] || return 1
	s0=$(awk '$1 == "b1" { print $2 }' "$t/lr.init")
	s1=$(awk '$1 == "b1" { print $2 }' "$t/mlp-ring.sum")
	s2=$(awk '$1 == "b1" { print $2 }' "$t/lr.sum")
	awk -v s0="$s0" -v s1="$s1" -v s2="$s2" 'BEGIN {
		g1 = (s0 - s1) / 0.01; g2 = (s0 - s2) / 0.5
		printf "b1: sum %s -> %s (lr 0.01), %s (lr 0.5): gradient sums %g, %g\n", s0, s1, s2, g1, g2
		d = g1 - g2; if (d < 0) d = -d
		exit !(d < 1e-3 * (g1 < 0 ? -g1 : g1) && (g1 > 1 || g1 < -1)) }'
}
check "--emit-opt=lr is the short form's learning rate" lr_opt

# ---- --runtime-flags: the build tree and an installation ------------------
check "--runtime-flags (build tree)" sh -c "'$PCC' --runtime-flags | grep -q -- '-I$ROOT/backend/runtime $ROOT/$B/libpcc_rt.a'"
if make -s --no-print-directory install B="$B" PREFIX="$t/inst" >"$t/log" 2>&1; then
	ok
	check "--runtime-flags (installed)" sh -c "'$t/inst/bin/pcc' --runtime-flags | grep -q -- '-I$t/inst/include/pcc $t/inst/lib/libpcc_rt.a'"
	check "installed pcc: emit, compile, run" sh -c "'$t/inst/bin/pcc' -passes= tests/ctests/mlp-ps.gir --cluster $C4 --emit=c -o '$t/inst.c' && $CC $CWARN '$t/inst.c' \$('$t/inst/bin/pcc' --runtime-flags) -o '$t/inst-plan' && '$t/inst-plan' | cmp - '$t/mlp-ps.sum'"
else
	bad "make install PREFIX=$t/inst"
fi

tsan "$CC"

echo "ctests: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
