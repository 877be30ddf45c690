#!/bin/sh
# Every example graph parses, verifies, and round-trips byte-identically
# (print -> parse -> print), also after annotation; every example cluster
# loads.
PCC=${1:-./pcc}
cd "$(dirname "$0")/.." || exit 2
case $PCC in /*) ;; *) PCC=$(pwd)/$PCC ;; esac
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass+1)); }
ko() { echo "FAIL $*"; fail=$((fail+1)); }
for f in $(find examples -name '*.gir' | sort); do
	for p in "" "simplify,annotate"; do
		if "$PCC" -passes=$p --verify-each "$f" -o "$tmp/a.gir" 2>"$tmp/err" &&
		   "$PCC" -passes= "$tmp/a.gir" -o "$tmp/b.gir" 2>>"$tmp/err" &&
		   cmp -s "$tmp/a.gir" "$tmp/b.gir"; then ok
		else ko "$f (-passes=$p): round trip"; head -n 5 "$tmp/err"; fi
	done
done
# The optimising pipelines on every example, the IR verified after every
# pass, and their plans read back byte-identically (models that fit no
# plan on this cluster are placed --best-effort).
for f in $(find examples -name '*.gir' | sort); do
	c="--cluster examples/clusters/hetero-4.yaml"
	grep -q '^cluster ' "$f" && c=    # it brings its own
	for o in -O1 -O2; do
		if "$PCC" $o --search-work=1e6 --best-effort --verify-each "$f" \
		       $c -o "$tmp/a.gir" 2>"$tmp/err" &&
		   "$PCC" -passes= "$tmp/a.gir" -o "$tmp/b.gir" 2>>"$tmp/err" &&
		   cmp -s "$tmp/a.gir" "$tmp/b.gir"; then ok
		else ko "$f ($o): plan verified and read back"; head -n 5 "$tmp/err"; fi
	done
done
for f in $(find examples -name '*.yaml' -path '*clusters*' | sort); do
	g=examples/mlp.gir
	if "$PCC" -passes= --cluster "$f" "$g" -o "$tmp/c.gir" 2>"$tmp/err" &&
	   "$PCC" -passes= "$tmp/c.gir" -o "$tmp/d.gir" 2>>"$tmp/err" &&
	   cmp -s "$tmp/c.gir" "$tmp/d.gir"; then ok
	else ko "$f: cluster load / round trip"; head -n 5 "$tmp/err"; fi
done
echo "examples: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
