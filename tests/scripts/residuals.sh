#!/bin/sh
# residuals.sh BUILD_DIR - regenerate hardware/errors/residuals.csv, the rows of
# capsim's own validation that its error model learns from, and then the shipped
# model fitted on them (hardware/errors/model.json, `capsim fit errors`).
#
# Each validation test records its scored rows through tests/unit/residuals.h;
# run with CAPSIM_RESIDUALS_OUT=FILE it appends them to FILE instead of checking
# them against the committed file. This script runs every such test of
# BUILD_DIR so, in the order listed below, checks that no row is recorded twice
# and that each test passed, fits the model on the rows, and only then
# replaces the two files. Runs from the
# repository root with CAPSIM_DATA (default: that root) as the catalog.
# Exit 0 when both files were written, 1 when a test failed or a row repeats
# (nothing replaced), 2 for bad usage.
set -u
[ $# -eq 1 ] || { echo "usage: sh tests/scripts/residuals.sh BUILD_DIR" >&2; exit 2; }
build=$1
case "$build" in /*) ;; *) build=$PWD/$build ;; esac
[ -x "$build/capsim" ] || { echo "residuals.sh: no capsim in $build" >&2; exit 2; }

cd "$(dirname "$0")/../.." || exit 2
CAPSIM_DATA=${CAPSIM_DATA:-$PWD}
export CAPSIM_DATA
unset CAPSIM_TEST_FILTER # every row of every test
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the tests that score capsim against a published or measured table
tests="test_validation test_step test_families test_memory test_checkpoint"
rows=$tmp/rows.csv
: >"$rows"
for t in $tests; do
	bin=$build/tests/$t
	[ -x "$bin" ] || { echo "residuals.sh: no $bin (build it)" >&2; exit 2; }
	if ! CAPSIM_RESIDUALS_OUT=$rows "$bin" >"$tmp/$t.log" 2>&1; then
		tail -n 30 "$tmp/$t.log" >&2
		echo "residuals.sh: $t failed; nothing replaced" >&2
		exit 1
	fi
done
dups=$(cut -d, -f1,2 "$rows" | sort | uniq -d)
if [ -n "$dups" ]; then
	echo "residuals.sh: rows recorded more than once (table,row):" >&2
	echo "$dups" >&2
	exit 1
fi
out=hardware/errors/residuals.csv
{
	echo "# capsim's residuals against its own validation tables, one row a scored row:"
	echo "# written by tests/scripts/residuals.sh from the tests that score them"
	echo "# (docs/validation.md; docs/model.md, \"Error bands\"). Do not edit by hand."
	echo "# predicted and measured in the quantity's unit (step and checkpoint: s;"
	echo "# memory: bytes; busbw: GB/s; power: W); host_bound, in_sample: 1 or 0."
	echo "table,row,family,quantity,gpu,gen,stack,host_bound,gpus,profile,in_sample,predicted,measured"
	cat "$rows"
} >"$tmp/residuals.csv"
# the model fitted first, so that both files are replaced or neither
if ! "$build/capsim" fit errors --residuals "$tmp/residuals.csv" --out "$tmp/model.json" \
	>"$tmp/fit.log" 2>&1; then
	cat "$tmp/fit.log" >&2
	echo "residuals.sh: capsim fit errors failed; nothing replaced" >&2
	exit 1
fi
cp "$tmp/residuals.csv" "$out" && cp "$tmp/model.json" hardware/errors/model.json || exit 1
echo "wrote $out ($(wc -l <"$rows") rows) and hardware/errors/model.json"
