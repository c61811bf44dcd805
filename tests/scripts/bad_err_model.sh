#!/bin/sh
# bad_err_model.sh CAPSIM - the doors that compare designs (report, optimize)
# with a bad or a missing error model (hardware/errors/model.json under the
# catalog's root, CAPSIM_DATA): each refuses with exit status 2, naming the
# file and what is wrong in it, and writes no report; with --no-intervals each
# runs without the model. Exit 0 when all hold, else 1.
set -u
capsim=$1
case "$capsim" in /*) ;; *) capsim=$PWD/$capsim ;; esac
src=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# a catalog root of its own: the shipped one, its hardware/ a copy to break
mkdir "$T/root"
for f in "$src"/*; do
	[ "$(basename "$f")" = hardware ] || ln -s "$f" "$T/root/$(basename "$f")"
done
cp -R "$src/hardware" "$T/root/hardware"
model=$T/root/hardware/errors/model.json
CAPSIM_DATA=$T/root
export CAPSIM_DATA
fail=0

# expect STATUS TEXT... -- ARGS: capsim ARGS exits STATUS, stderr holds each TEXT
expect() {
	want=$1
	shift
	texts=
	while [ "$1" != -- ]; do
		texts="$texts$1
"
		shift
	done
	shift
	"$capsim" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "FAIL capsim $*: exit $rc, expected $want"
		cat "$T/err"
		fail=1
		return
	fi
	printf '%s' "$texts" | while IFS= read -r t; do
		grep -qF -- "$t" "$T/err" || { echo "FAIL capsim $*: no '$t' in:"; cat "$T/err"; exit 1; }
	done || fail=1
}

sc=$src/scenarios/h100-8node-ndr.xml
reports="$src/scenarios/report/h200-owned-ib.xml $src/scenarios/report/h200-owned-roce.xml"

# a model of another version
sed 's/"version": 1/"version": 7/' "$model" >"$T/m" && cp "$T/m" "$model"
for cmd in "optimize $sc --top 2" "report $reports --out $T/rep --no-progress"; do
	# shellcheck disable=SC2086 # the command's words
	expect 2 "--no-intervals leaves the bands out" "$model: error: the error model: version: expected 1, found 7" \
		-- $cmd
done
[ ! -e "$T/rep" ] || { echo "FAIL report: $T/rep written with a bad error model"; fail=1; }

# not JSON
printf '{"format": "capsim-error-model",\n  "version": \n' >"$model"
# shellcheck disable=SC2086
expect 2 "$model:3:" -- optimize $sc --top 2

# missing
rm "$model"
for cmd in "optimize $sc --top 2" "report $reports --out $T/rep --no-progress"; do
	# shellcheck disable=SC2086
	expect 2 "--no-intervals leaves the bands out" "$model: error: the error model: cannot read" -- $cmd
done

# --no-intervals: no model needed
# shellcheck disable=SC2086
expect 0 -- optimize $sc --top 2 --no-intervals
# shellcheck disable=SC2086
expect 0 -- report $reports --out "$T/rep" --no-progress --no-intervals
[ "$fail" -eq 0 ] && echo "ok: a bad or missing error model is exit 2, naming it; --no-intervals runs"
exit "$fail"
