#!/bin/sh
# make check: every test suite; one summary line at the end:
#   all: N passed, N failed, N skipped
# (a suite's line is NAME: N passed, N failed[, N skipped]; skips are
# checks that a missing dependency kept from running, never passes).
# usage: tests/run-all.sh BUILD_DIR
B=${1:-build}
cd "$(dirname "$0")/.." || exit 2
total_pass=0 total_fail=0 total_skip=0 status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
run() {
	name=$1; shift
	echo "== $name"
	"$@" 2>&1 | tee "$log"
	rc=$?
	line=$(grep -E '^[a-z-]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	# a suite that skips for a missing dependency says "N skipped"
	s=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9]*\) skipped.*/\1/p')
	[ -n "$s" ] || s=0
	total_skip=$((total_skip+s))
	p=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9]*\) passed.*/\1/p')
	f=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9]*\) failed.*/\1/p')
	[ -n "$p" ] || p=0
	[ -n "$f" ] || f=1
	total_pass=$((total_pass+p)); total_fail=$((total_fail+f))
	[ "$f" -eq 0 ] || status=1
}
# POSIX sh has no pipefail: each runner prints its own summary line,
# which is what run() reads.
run unit sh -c "cd tests && ../$B/unit-tests"
run golden sh tests/run-golden.sh "$B/pcc"
run bad sh tests/run-bad.sh "$B/pcc"
run cli sh tests/run-cli.sh "$B/pcc"
run examples sh tests/run-examples.sh "$B/pcc"
run viz sh tests/run-viz.sh "$B"
run place sh tests/run-place.sh "$B/pcc"
run fuse sh tests/run-fuse.sh "$B/pcc"
run ctests sh tests/run-ctests.sh "$B"
run tf-import sh tests/run-tf.sh "$B/pcc"
run zoo sh tests/run-zoo.sh "$B/pcc" "$B/gengraph"
run tf-emit sh tests/run-tf-emit.sh "$B/pcc"
run tfjs sh tests/run-tfjs.sh "$B/pcc"
run tfops sh tests/run-tfops.sh "$B"
run tfprofile sh tests/run-tfprofile.sh "$B/pcc"
run tfreal sh tests/run-tfreal.sh "$B"
echo
echo "all: $total_pass passed, $total_fail failed, $total_skip skipped"
exit $status
