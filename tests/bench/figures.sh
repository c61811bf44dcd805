#!/bin/sh
# figures.sh [BUILD] - every figure docs/performance.md records, measured again
# on this machine, to set beside the page: each command of the page run in
# order as the documents' test runs it (the benchmarks included, built in
# Release into a directory of their own as the page's first lines say), each
# printed under the page's heading with all it printed. BUILD: a build
# directory holding capsim (default build/, the README's). The benchmarks run
# at the lengths the page records: about an hour on a 2-core machine.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
exec sh "$root/tests/scripts/doclines.sh" --long --show "$build" "$root/docs/performance.md"
