#!/bin/sh
# doors_golden.sh CAPSIM check|update - the comparisons of `capsim report` and
# `capsim optimize` against tests/golden/doors/, so that a change shows as a diff.
#
# Each case runs twice: with --no-intervals, whose output must be the output
# these commands gave before they knew the error model (byte for byte, but for
# what changes from run to run: the report's "made" time, the optimiser's
# elapsed time, its layouts a second and its threads), into NAME.EXT; and with the
# comparisons on, into NAME-compare.EXT. Cases:
#   optimize    capsim optimize scenarios/h100-8node-ndr.xml --top 5 (text: .txt,
#               --json: .json)
#   report      capsim report scenarios/report/*.xml (report.md: .md, summary.csv:
#               .csv)
# JSON is kept as golden_diff normalises it (the catalog's paths and digests
# ignored, tests/golden/golden_diff.c). Runs from the repository root with
# CAPSIM_DATA (default: that root) as the catalog. check: exit 0 when every file matches, else 1 with the diff;
# update: rewrite the files. 2 for bad usage.
set -u
usage() {
	echo "usage: sh tests/scripts/doors_golden.sh CAPSIM check|update" >&2
	exit 2
}
[ $# -eq 2 ] || usage
capsim=$1
mode=$2
case "$mode" in check | update) ;; *) usage ;; esac
case "$capsim" in /*) ;; *) capsim=$PWD/$capsim ;; esac
[ -x "$capsim" ] || { echo "doors_golden.sh: $capsim is not an executable" >&2; exit 2; }
cd "$(dirname "$0")/../.." || exit 2
CAPSIM_DATA=${CAPSIM_DATA:-$PWD}
export CAPSIM_DATA
golden=tests/golden/doors
diff_bin=${GOLDEN_DIFF:-$(dirname "$capsim")/tests/golden_diff}
case "$diff_bin" in /*) ;; *) diff_bin=$PWD/$diff_bin ;; esac
[ -x "$diff_bin" ] || { echo "doors_golden.sh: no golden_diff at $diff_bin (set GOLDEN_DIFF)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# what changes from run to run, taken out
norm_opt_text() { sed -E 's/; [0-9.]+ s \([0-9]+ layouts\/s\) on [0-9]+ threads?$//'; }
norm_opt_json() {
	sed -E 's/^( *"(elapsed_s|threads)": ).*[0-9](,?)$/\10\3/' >"$tmp/json"
	"$diff_bin" --root "$CAPSIM_DATA" --normalise "$tmp/json"
}
norm_report() { sed -E 's/made [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z/made TIME/'; }

# one file: the output (normalised) against the golden one, or written
one() {
	file=$golden/$1
	if [ "$mode" = update ]; then
		cp "$tmp/out" "$file" && echo "wrote $file"
	elif cmp -s "$tmp/out" "$file"; then
		echo "ok $file"
	else
		echo "FAIL $file differs (sh tests/scripts/doors_golden.sh CAPSIM update rewrites it):"
		diff -u "$file" "$tmp/out" | head -40
		status=1
	fi
}

# run a command; exit status and sanitizer reports checked
run() {
	"$capsim" "$@" >"$tmp/raw" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] || grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$tmp/err"; then
		echo "FAIL capsim $* exited $rc"
		cat "$tmp/err"
		status=1
		return 1
	fi
}

for flag in --no-intervals ""; do
	suffix=
	[ -n "$flag" ] || suffix=-compare
	# shellcheck disable=SC2086 # an empty flag is no argument
	if run optimize scenarios/h100-8node-ndr.xml --top 5 --no-progress $flag; then
		norm_opt_text <"$tmp/raw" >"$tmp/out"
		one "optimize$suffix.txt"
	fi
	# shellcheck disable=SC2086
	if run optimize scenarios/h100-8node-ndr.xml --top 5 --json $flag; then
		norm_opt_json <"$tmp/raw" >"$tmp/out"
		one "optimize$suffix.json"
	fi
	rm -rf "$tmp/rep"
	# shellcheck disable=SC2086
	if run report scenarios/report/h100-rented.xml scenarios/report/h200-owned-ib.xml \
		scenarios/report/h200-owned-roce.xml --out "$tmp/rep" --no-progress $flag; then
		for ext in md csv; do
			f=report.$ext
			[ "$ext" = csv ] && f=summary.csv
			norm_report <"$tmp/rep/$f" >"$tmp/out"
			one "report$suffix.$ext"
		done
	fi
done
exit $status
