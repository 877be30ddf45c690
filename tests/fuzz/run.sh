#!/bin/sh
# run.sh BUILD_DIR SECONDS [TARGET...] — runs each libFuzzer target for
# SECONDS on a scratch copy of its seed corpus (tests/fuzz/corpus-NAME/
# stays as committed), with ASan + UBSan, leak detection, a per-input
# timeout and a memory limit.  A finding is kept as
# BUILD_DIR/fuzz-artifacts/TARGET-crash-... and makes the script fail.
# Prints "fuzz: N passed, N failed".
B=${1:?usage: run.sh BUILD_DIR SECONDS [TARGET...]}
T=${2:-30}
shift 2 2>/dev/null || shift $#
cd "$(dirname "$0")/../.." || exit 2
[ $# -gt 0 ] || set -- gir cluster
art=$B/fuzz-artifacts
mkdir -p "$art"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pcc-fuzz.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0 fail=0
for t in "$@"; do
	bin=$B/fuzz-$t
	mkdir -p "$tmp/$t"
	dict=
	[ -f "tests/fuzz/$t.dict" ] && dict=-dict=tests/fuzz/$t.dict
	echo "fuzz-$t: ${T}s"
	# -timeout: an input slower than 10 s is a hang; -rss_limit_mb: a
	# memory blow-up; -max_len: big enough for many statements.
	"$bin" -max_total_time="$T" -timeout=10 -rss_limit_mb=2048 \
	    -max_len=8192 -print_final_stats=1 -artifact_prefix="$art/$t-" \
	    $dict "$tmp/$t" "tests/fuzz/corpus-$t" >"$tmp/$t.log" 2>&1
	rc=$?
	grep -E '^(Done [0-9]+ runs|stat::(new_units_added|slowest_unit_time_sec|peak_rss_mb))' \
	    "$tmp/$t.log" | sed 's/^/  /'
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL fuzz-$t (exit $rc); artifacts in $art/"
		grep -E -A 30 'ERROR|runtime error|SUMMARY|Test unit written' \
		    "$tmp/$t.log" | head -n 60
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ $fail -eq 0 ]
