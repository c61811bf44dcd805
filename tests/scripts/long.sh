#!/bin/sh
# long.sh COMMAND [ARG...] - a test of the long tier (ctest label long: the
# full-length fuzzing, the benchmarks): runs COMMAND when CAPSIM_LONG=1, else
# exits 77, which ctest reports as skipped, saying how to run it.
if [ "${CAPSIM_LONG:-}" != 1 ]; then
	echo "the long tier: CAPSIM_LONG=1 ctest -L long"
	exit 77
fi
exec "$@"
