#!/bin/sh
# golden.sh CAPSIM check|update [CASE...] - capsim's JSON reports against the
# golden files of tests/golden/, so that a change of the model shows as a diff.
#
# CASE is run/NAME (`capsim run scenarios/NAME.xml --json --no-intervals`, one
# for every shipped scenario), collective/NAME (`capsim collective SCENARIO ARGS
# --json --no-intervals`, one for every line of tests/golden/collective.cases)
# or bands/NAME (`capsim run scenarios/NAME.xml` with its prediction intervals,
# --json against tests/golden/bands/NAME.json and the text against NAME.txt
# byte for byte, one for every line of tests/golden/bands.cases). run/ and
# collective/ keep the output from before there were intervals: --no-intervals
# must give it byte for byte. Default: every case.
#   check   compare each case's report with tests/golden/CASE.json through
#           golden_diff (numbers to a relative 1e-9; what it ignores is
#           listed at the top of tests/golden/golden_diff.c); with no CASE,
#           golden files that belong to no case are reported too
#   orphans only that: golden files whose scenario or cases line is gone
#   update  rewrite tests/golden/CASE.json from this binary, normalised. A
#           commit that moves a golden file says why the numbers moved.
# Runs from the repository root with CAPSIM_DATA (default: that root) as the
# catalog. golden_diff is $GOLDEN_DIFF, else tests/golden_diff in CAPSIM's
# build directory. Exit 0 when every case matches (or was written), else 1;
# 2 for bad usage.
set -u
usage() {
	echo "usage: sh tests/scripts/golden.sh CAPSIM check|update|orphans [run/NAME|collective/NAME]..." >&2
	exit 2
}
[ $# -ge 2 ] || usage
capsim=$1
mode=$2
shift 2
case "$mode" in check | update | orphans) ;; *) usage ;; esac
case "$capsim" in /*) ;; *) capsim=$PWD/$capsim ;; esac
[ -x "$capsim" ] || { echo "golden.sh: $capsim is not an executable" >&2; exit 2; }
diff_bin=${GOLDEN_DIFF:-$(dirname "$capsim")/tests/golden_diff}
case "$diff_bin" in /*) ;; *) diff_bin=$PWD/$diff_bin ;; esac
[ -x "$diff_bin" ] || { echo "golden.sh: no golden_diff at $diff_bin (set GOLDEN_DIFF)" >&2; exit 2; }

cd "$(dirname "$0")/../.." || exit 2
CAPSIM_DATA=${CAPSIM_DATA:-$PWD}
export CAPSIM_DATA
golden=tests/golden
cases_file=$golden/collective.cases
bands_file=$golden/bands.cases
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# every case, when none is named
if [ "$mode" = orphans ]; then
	all=1
	set --
elif [ $# -eq 0 ]; then
	all=1
	for f in scenarios/*.xml; do
		n=${f#scenarios/}
		set -- "$@" "run/${n%.xml}"
	done
	for n in $(awk '/^[^#[:space:]]/ { print $1 }' "$cases_file"); do
		set -- "$@" "collective/$n"
	done
	for n in $(awk '/^[^#[:space:]]/ { print $1 }' "$bands_file"); do
		set -- "$@" "bands/$n"
	done
else
	all=0
fi

# bands/NAME's text: `capsim run scenarios/NAME.xml` against
# tests/golden/bands/NAME.txt byte for byte (written under update); 0 or 1
text_case() {
	"$capsim" run "scenarios/$2.xml" >"$tmp/out.txt" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] || grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$tmp/err"; then
		echo "FAIL $1: capsim run scenarios/$2.xml exited $rc"
		cat "$tmp/err"
		return 1
	fi
	if [ "$mode" = update ]; then
		mkdir -p "$golden/bands"
		mv "$tmp/out.txt" "$golden/$1.txt" && echo "wrote $golden/$1.txt"
		return
	fi
	diff -u "$golden/$1.txt" "$tmp/out.txt" && return 0
	echo "FAIL $1: capsim run scenarios/$2.xml differs from $golden/$1.txt"
	return 1
}

status=0
for c in "$@"; do
	name=${c#*/}
	# the command line of the case
	case "$c" in
	run/*)
		[ -f "scenarios/$name.xml" ] || { echo "FAIL $c: no scenarios/$name.xml"; status=1; continue; }
		set -- run "scenarios/$name.xml" --json --no-intervals
		;;
	bands/*)
		awk -v n="$name" '$1 == n { f = 1 } END { exit !f }' "$bands_file" ||
			{ echo "FAIL $c: no line '$name' in $bands_file"; status=1; continue; }
		[ -f "scenarios/$name.xml" ] || { echo "FAIL $c: no scenarios/$name.xml"; status=1; continue; }
		set -- run "scenarios/$name.xml" --json
		;;
	collective/*)
		args=$(awk -v n="$name" '$1 == n { $1 = ""; print; exit }' "$cases_file")
		[ -n "$args" ] || { echo "FAIL $c: no line '$name' in $cases_file"; status=1; continue; }
		# shellcheck disable=SC2086 # ARGS are split on blanks, as the cases file says
		set -- collective $args --json --no-intervals
		;;
	*)
		echo "golden.sh: a case is run/NAME, collective/NAME or bands/NAME, found '$c'" >&2
		exit 2
		;;
	esac
	want=$golden/$c.json
	if [ "${c%%/*}" = bands ] && ! text_case "$c" "$name"; then
		status=1
		continue
	fi
	"$capsim" "$@" >"$tmp/out.json" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 0 ] || grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$tmp/err"; then
		echo "FAIL $c: capsim $* exited $rc"
		cat "$tmp/err"
		status=1
		continue
	fi
	if [ "$mode" = update ]; then
		mkdir -p "$(dirname "$want")"
		if "$diff_bin" --root "$CAPSIM_DATA" --normalise "$tmp/out.json" >"$tmp/norm.json"; then
			mv "$tmp/norm.json" "$want"
			echo "wrote $want"
		else
			status=1
		fi
		continue
	fi
	if [ ! -f "$want" ]; then
		echo "FAIL $c: no golden file $want; write it with"
		echo "  sh tests/scripts/golden.sh $capsim update $c"
		status=1
		continue
	fi
	if "$diff_bin" --root "$CAPSIM_DATA" "$want" "$tmp/out.json"; then
		echo "ok $c"
	else
		echo "FAIL $c: capsim $* differs from $want. If the change is intended,"
		echo "  sh tests/scripts/golden.sh $capsim update $c"
		echo "and say in the commit message why the numbers moved."
		status=1
	fi
done

# golden files that no case writes any more
if [ "$mode" != update ] && [ "$all" -eq 1 ]; then
	for f in "$golden"/run/*.json "$golden"/collective/*.json "$golden"/bands/*.json \
		"$golden"/bands/*.txt; do
		[ -f "$f" ] || continue
		c=${f#"$golden"/}
		c=${c%.json}
		c=${c%.txt}
		name=${c#*/}
		case "$c" in
		run/*) [ -f "scenarios/$name.xml" ] && continue ;;
		collective/*) awk -v n="$name" '$1 == n { f = 1 } END { exit !f }' "$cases_file" && continue ;;
		bands/*) awk -v n="$name" '$1 == n { f = 1 } END { exit !f }' "$bands_file" && continue ;;
		esac
		echo "FAIL $f: belongs to no case (remove it)"
		status=1
	done
fi
exit $status
