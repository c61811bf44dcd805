#!/bin/sh
# doclines_selftest.sh BUILD - the documents' test (doclines.sh) on a document of
# its own, tests/data/doclines/selftest.md: each line it must pass, list or
# catch is in its report, and it exits 1. Exit 0 when the report is as
# expected, 1 otherwise (each missing line named), 2 for bad usage.
set -u
[ $# -eq 1 ] || { echo "usage: sh tests/scripts/doclines_selftest.sh BUILD" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
doc=$here/../data/doclines/selftest.md
out=$(sh "$here/doclines.sh" "$1" "$doc" 2>&1)
rc=$?
status=0
d=tests/data/doclines/selftest.md
# each line of the expected report, as the start of a line of the report
while IFS= read -r want; do
	[ -n "$want" ] || continue
	if ! printf '%s\n' "$out" | grep -qF -- "$want"; then
		echo "missing from the report: $want"
		status=1
	fi
done <<EOF2
ok $d:7 (
ok $d:8 (
ok $d:12 (
ok $d:13 (
FAIL $d:14: false
    exit 1, expected 0; its output
FAIL $d:15: build/capsim validate scenarios/default.xml   # exit 2
    exit 0, expected 2; its output
ok $d:16 (
not run (hardware) $d:18: nvidia-smi
not run (hardware) $d:19: mpirun
not run (long) $d:20: sleep 1000
not run (setup) $d:21: sh .ci/setup.sh test
FAIL $d:22: build/capsim run   # the README's setup: not run by the doc test: the setup marker is for sh .ci/setup.sh lines only
ok $d:23 (
FAIL $d: its commands wrote into the checkout (outside build/):
    ./scenarios/default.xml.new
FAIL $d:26: a \`\`\`bash block
FAIL $d:30: <!-- expect-exit --> marks no line
FAIL $d:35: a \`\`\`unlabelled block
$d: 6 commands ran as documented, 4 not run (listed above), 7 failed
EOF2
if [ "$rc" -ne 1 ]; then
	echo "doclines.sh exited $rc on the self-test document, expected 1"
	status=1
fi
[ "$status" -eq 0 ] || printf '%s\n' "--- its report:" "$out"
exit $status
