#!/bin/sh
# Command-line behaviour: exit statuses, atomic output, dumps that read
# back, --stop-after, --verify-each naming the pass, pipelines pinned,
# stdin/stdout, the default cluster note, the annotation table in the docs.
. "$(dirname "$0")/lib.sh"
M=examples/mlp.gir
C=examples/clusters/hetero-4.yaml

check "--version" status 0 "$PCC" --version
check "--help mentions exit status" sh -c "'$PCC' --help | grep -q 'Exit status'"
check "unknown option is usage error" status 2 "$PCC" --frobnicate $M
check "unknown pass is usage error" sh -c "'$PCC' -passes=nosuchpass $M 2>&1 >/dev/null; [ \$? -eq 2 ]"
check "unknown pass option" sh -c "'$PCC' '-passes=simplify<x=1>' $M 2>&1 | grep -q \"has no option 'x'\""
check "missing input is usage error" status 2 "$PCC" -passes=
check "missing file is bad input" status 1 "$PCC" -passes= nonexistent.gir
check "unknown backend" status 2 "$PCC" --emit=nope $M
check "list passes" sh -c "'$PCC' --list-passes | grep -q '^simplify'"

# Pipelines: -O strings are pinned; --print-pipeline output is accepted back.
for lv in 0 1 2; do
	check "-O$lv pipeline pinned" sh -c "[ \"\$('$PCC' -O$lv --print-pipeline)\" = \"\$(sed -n 's/^O$lv: //p' tests/golden/pipelines.txt)\" ]"
	check "-O$lv pipeline reparses" sh -c "p=\$('$PCC' -O$lv --print-pipeline) && '$PCC' \"\$p\" --print-pipeline | grep -qx -- \"\$p\""
done

# Atomic output: a failing run leaves OUTPUT as it was, and no temp files.
printf 'precious\n' >"$t/out.gir"
printf 'gir 1\ngraph g {\n  %%a = Relu(%%nope) : f32[1]\n}\n' >"$t/bad.gir"
check "bad input exits 1" status 1 "$PCC" -passes= "$t/bad.gir" -o "$t/out.gir"
check "output untouched on error" sh -c "[ \"\$(cat '$t/out.gir')\" = precious ]"
check "no temporary left" sh -c "[ \$(ls '$t' | grep -c tmp) -eq 0 ]"
check "error has file:line:col and caret" sh -c "'$PCC' -passes= '$t/bad.gir' 2>&1 | grep -q \"bad.gir:3:.*: error: undefined value '%nope'\" && '$PCC' -passes= '$t/bad.gir' 2>&1 | grep -q '^ *\\^'"
check "good run replaces output" sh -c "'$PCC' -passes= $M --cluster $C -o '$t/out.gir' && grep -q '^graph mlp' '$t/out.gir'"

# stdin and stdout
check "stdin to stdout" sh -c "'$PCC' -passes= - --cluster $C < $M | grep -q '^graph mlp'"
check "default cluster note" sh -c "'$PCC' -passes= $M 2>&1 >/dev/null | grep -q 'using the built-in default'"

# Dumps: one per stage, each reads back to the same bytes.
mkdir "$t/d"
check "dump-after-all" "$PCC" -passes=simplify,annotate --dump-after-all --dump-dir="$t/d" $M --cluster $C -o "$t/final.gir"
check "dump names" sh -c "[ \"\$(ls '$t/d' | tr '\n' ' ')\" = 'mlp.00.parse.gir mlp.01.simplify.gir mlp.02.annotate.gir ' ]"
for f in "$t"/d/*.gir; do
	check "dump $(basename "$f") reads back" sh -c "'$PCC' -passes= '$f' -o '$t/re.gir' && cmp '$f' '$t/re.gir'"
done
check "last dump equals output" cmp "$t/d/mlp.02.annotate.gir" "$t/final.gir"
mkdir "$t/e"
check "dump-after one pass" "$PCC" -passes=simplify,annotate --dump-after=simplify --dump-dir="$t/e" $M --cluster $C -o /dev/null
check "only that dump" sh -c "[ \"\$(ls '$t/e')\" = mlp.01.simplify.gir ]"
check "resume from a dump" sh -c "'$PCC' -passes=annotate '$t/d/mlp.01.simplify.gir' -o '$t/resumed.gir' && cmp '$t/resumed.gir' '$t/final.gir'"
check "stop-after" sh -c "'$PCC' -passes=simplify,annotate --stop-after=simplify $M --cluster $C -o '$t/s.gir' && cmp '$t/s.gir' '$t/d/mlp.01.simplify.gir'"
check "time-passes" sh -c "'$PCC' -passes=simplify,annotate --time-passes $M --cluster $C -o /dev/null 2>&1 | grep -q '^2 *annotate'"

# --verify-each catches a pass that breaks the IR, names it, writes a repro.
mkdir "$t/r"
cp "$t/out.gir" "$t/before.gir"
check "verify-each exit 4" status 4 "$PCC" -passes=simplify,test-break-ir --verify-each --dump-dir="$t/r" $M --cluster $C -o "$t/out.gir"
check "verify-each names the pass" sh -c "'$PCC' -passes=test-break-ir --verify-each --dump-dir='$t/r' $M --cluster $C 2>&1 >/dev/null | grep -q \"invalid IR after pass 'test-break-ir'\""
check "reproducer written" sh -c "head -n 2 '$t/r/mlp.repro.gir' | grep -q 'RUN: .*test-break-ir'"
check "output untouched after internal error" cmp "$t/out.gir" "$t/before.gir"

# Every annotation of ir/annots.def is documented in docs/gir.md.
for k in $(sed -n 's/^ANN([A-Z_]*, *"\(@[a-z_]*\)".*/\1/p' ir/annots.def); do
	check "docs/gir.md documents $k" grep -q "\`$k\`" docs/gir.md
done
# Every pass of passes/passes.def is documented in docs/passes.md.
for p in $(sed -n 's/^PASS("\([a-z-]*\)".*/\1/p' passes/passes.def); do
	check "docs/passes.md documents $p" grep -q "^## $p" docs/passes.md
done

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
