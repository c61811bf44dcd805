#!/bin/sh
# memcheck.sh CAPSIM SOURCE_DIR - every shipped scenario's `capsim run`, every
# golden collective case and one `capsim optimize` under Valgrind's memcheck,
# which finds what the sanitizer build does not: a read of memory never
# written (a wrong answer that changes from run to run). Exits 1 on the first
# case with an error, 77 (skipped) where valgrind is not installed.
set -u
capsim=${1:?usage: memcheck.sh CAPSIM SOURCE_DIR}
src=${2:?usage: memcheck.sh CAPSIM SOURCE_DIR}
command -v valgrind >/dev/null 2>&1 || { echo "valgrind is not installed"; exit 77; }
cd "$src" || exit 2
export CAPSIM_DATA="${CAPSIM_DATA:-$src}"
vg() {
	if ! valgrind -q --error-exitcode=9 --track-origins=yes "$capsim" "$@" >/dev/null 2>"$tmp"; then
		echo "FAIL capsim $*:"
		cat "$tmp"
		exit 1
	fi
	echo "ok capsim $*"
}
tmp=$(mktemp) || exit 2
trap 'rm -f "$tmp"' EXIT
for f in scenarios/*.xml; do
	vg run "$f" --no-intervals
done
grep -v '^#' tests/golden/collective.cases | grep . | while read -r name scenario args; do
	# shellcheck disable=SC2086 # the case's arguments, split on blanks
	vg collective "$scenario" $args --no-intervals || exit 1
done || exit 1
vg optimize scenarios/h100-8node-ndr.xml --top 3
