# lib.sh — sourced by the shell test runners (. "$(dirname "$0")/lib.sh"):
# PCC from $1 (default ./pcc) made absolute, the repository root as the
# working directory, a scratch directory $t removed on exit, the pass and
# fail counters, and the check and status helpers.
PCC=${1:-./pcc}
cd "$(dirname "$0")/.." || exit 2
case $PCC in /*) ;; *) PCC=$(pwd)/$PCC ;; esac
pass=0 fail=0
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
check() { # check NAME COMMAND... : the command must succeed
	name=$1; shift
	if "$@" >"$t/log" 2>&1; then pass=$((pass+1))
	else echo "FAIL $name"; sed 's/^/  | /' "$t/log" | head -n 20; fail=$((fail+1)); fi
}
status() { # status WANT CMD...: exit status must be WANT
	want=$1; shift
	"$@" >"$t/out" 2>"$t/err"; got=$?
	[ "$got" -eq "$want" ] || { echo "exit $got, wanted $want: $*"; cat "$t/err"; return 1; }
}
