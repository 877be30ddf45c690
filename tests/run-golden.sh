#!/bin/sh
# Golden tests: each tests/golden/NAME.gir starts with a line
#   # RUN: pcc ARGS %s
# (%s = the file itself, 'pcc' = the binary under test).  Its standard
# output must equal tests/golden/NAME.expected (compared with diff -u).
# UPDATE=1 rewrites the expected files (review the diff before committing).
PCC=${1:-./pcc}
case $PCC in /*) ;; *) PCC=$(pwd)/$PCC ;; esac
cd "$(dirname "$0")/golden" || exit 2
pass=0 fail=0
for f in *.gir; do
	run=$(sed -n 's/^# RUN: //p' "$f" | head -n 1)
	[ -n "$run" ] || { echo "FAIL $f: no '# RUN:' line"; fail=$((fail+1)); continue; }
	cmd=$(printf '%s\n' "$run" | sed "s|^pcc |$PCC |; s|%s|$f|g")
	exp=${f%.gir}.expected
	out=$(mktemp)
	sh -c "$cmd" >"$out" 2>/dev/null
	if [ "${UPDATE:-0}" = 1 ]; then cp "$out" "$exp"; fi
	if diff -u "$exp" "$out" >/dev/null 2>&1; then
		pass=$((pass+1))
	else
		echo "FAIL $f: $cmd"
		diff -u "$exp" "$out" | head -n 40
		fail=$((fail+1))
	fi
	rm -f "$out"
done
echo "golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
