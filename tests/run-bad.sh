#!/bin/sh
# run-bad.sh PCC — the expected-error corpora: tests/bad/*.gir and
# tests/bad-cluster/*.yaml.
#
# Each file starts with one or more lines
#     # ERROR: LINE:COL: MESSAGE-SUBSTRING
# For each file, `PCC -passes= FILE -o OUT` (for a cluster,
# `PCC -passes= --cluster FILE examples/mlp.gir -o OUT`) must exit with
# status 1, print every expected "FILE:LINE:COL: error: ...MESSAGE..." on
# stderr and a caret line, and leave a pre-existing OUT untouched.
# Prints "N passed, N failed"; exits non-zero on any failure.

PCC=${1:?usage: run-bad.sh PCC}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pcc-bad.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM

pass=0
fail=0
# check FILE CMD...: CMD (which writes "$tmp/out.gir") must fail as FILE's
# '# ERROR:' lines say and leave the output as it was.
check() {
	f=$1
	shift
	name=${f##*/}
	out="$tmp/out.gir"
	printf 'untouched: %s\n' "$name" > "$out"
	cp "$out" "$tmp/out.orig"
	"$@" > "$tmp/stdout" 2> "$tmp/stderr"
	rc=$?
	why=
	[ "$rc" -eq 1 ] || why="exit status $rc, expected 1"
	nexp=0
	# one expectation per '# ERROR:' line
	grep '^# ERROR: ' "$f" | sed 's/^# ERROR: //' > "$tmp/expected"
	while IFS= read -r e; do
		nexp=$((nexp + 1))
		lc=${e%%: *}
		msg=${e#*: }
		if ! grep -F -- "$f:$lc: error: " "$tmp/stderr" |
		     grep -F -q -- "$msg"; then
			why="${why:+$why; }missing '$f:$lc: error: ...$msg'"
		fi
	done < "$tmp/expected"
	[ "$nexp" -gt 0 ] || why="${why:+$why; }no '# ERROR:' line"
	grep -q '^ *\^$' "$tmp/stderr" || why="${why:+$why; }no caret line"
	cmp -s "$out" "$tmp/out.orig" || why="${why:+$why; }output file was modified"
	if [ -z "$why" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		printf 'FAIL %s: %s\n' "$name" "$why"
		sed 's/^/    | /' "$tmp/stderr" | head -20
	fi
}
for f in "$here"/bad/*.gir; do
	[ -e "$f" ] || continue
	check "$f" "$PCC" -passes= "$f" -o "$tmp/out.gir"
done
# The cluster corpus (the CUnit suite checks the reader's exact errors;
# this checks what a user of the command line sees).
for f in "$here"/bad-cluster/*.yaml; do
	[ -e "$f" ] || continue
	check "$f" "$PCC" -passes= --cluster "$f" "$here/../examples/mlp.gir" \
	    -o "$tmp/out.gir"
done
printf 'bad: %d passed, %d failed\n' "$pass" "$fail"
[ "$fail" -eq 0 ]
