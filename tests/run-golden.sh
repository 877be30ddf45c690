#!/bin/sh
# Golden tests: each tests/golden/NAME.gir starts with a line
#   # RUN: pcc ARGS %s
# (%s = the file itself, 'pcc' = the binary under test), and may declare
#   # EXIT: N
# the exit status it must have (default 0).  Its standard output must
# equal tests/golden/NAME.expected, and its standard error
# tests/golden/NAME.stderr (no such file: nothing on stderr), compared
# with diff -u; the exit status must be the declared one.
# UPDATE=1 rewrites the expected files (review the diff before
# committing), but refuses to record a run whose exit status is not the
# declared one, or that exits 0 and prints nothing: a misspelt pass name
# must not become an expected empty output that passes for ever.
PCC=${1:-./pcc}
case $PCC in /*) ;; *) PCC=$(pwd)/$PCC ;; esac
cd "$(dirname "$0")/golden" || exit 2
pass=0 fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
for f in *.gir; do
	run=$(sed -n 's/^# RUN: //p' "$f" | head -n 1)
	[ -n "$run" ] || { echo "FAIL $f: no '# RUN:' line"; fail=$((fail+1)); continue; }
	want=$(sed -n 's/^# EXIT: *\([0-9]*\) *$/\1/p' "$f" | head -n 1)
	want=${want:-0}
	cmd=$(printf '%s\n' "$run" | sed "s|^pcc |$PCC |; s|%s|$f|g")
	exp=${f%.gir}.expected
	experr=${f%.gir}.stderr
	sh -c "$cmd" >"$out" 2>"$err"
	got=$?
	if [ "${UPDATE:-0}" = 1 ]; then
		if [ "$got" -ne "$want" ]; then
			echo "FAIL $f: not recorded: exit $got, expected $want (a '# EXIT: N' line declares another)"
			sed 's/^/  | /' "$err" | head -n 10
			fail=$((fail+1))
			continue
		fi
		if [ "$got" -eq 0 ] && [ ! -s "$out" ]; then
			echo "FAIL $f: not recorded: exit 0 and no output"
			fail=$((fail+1))
			continue
		fi
		cp "$out" "$exp"
		if [ -s "$err" ]; then cp "$err" "$experr"; else rm -f "$experr"; fi
	fi
	why=
	[ "$got" -eq "$want" ] || why="exit $got, expected $want"
	diff -u "$exp" "$out" >/dev/null 2>&1 || why="${why:+$why; }stdout differs"
	if [ -f "$experr" ]; then
		diff -u "$experr" "$err" >/dev/null 2>&1 || why="${why:+$why; }stderr differs"
	elif [ -s "$err" ]; then
		why="${why:+$why; }unexpected stderr"
	fi
	if [ -z "$why" ]; then
		pass=$((pass+1))
	else
		echo "FAIL $f: $why: $cmd"
		diff -u "$exp" "$out" | head -n 40
		if [ -f "$experr" ]; then diff -u "$experr" "$err" | head -n 20
		else sed 's/^/  | /' "$err" | head -n 20; fi
		fail=$((fail+1))
	fi
done
echo "golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
