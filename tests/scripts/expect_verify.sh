#!/bin/sh
# expect_verify.sh CAPSIM - `capsim expect` and `capsim verify --expect` as a
# user runs them: the baselines of scenarios/h100-8node-ndr.xml at 16 ranks
# written as Prometheus rules and as JSON, each read back by verify: the
# Nebius two-node log (tests/data/nccl-tests/) passes (exit 0), nccl-tests
# issue 290's two-node log fails (exit 3) naming each row below its
# threshold by file:line; --out writes a whole file and '-' standard output;
# bad options exit 2 naming the option; an output that cannot be written
# exits 1 and leaves nothing. Exit 0 when all hold, else 1.
set -u
capsim=$1
case "$capsim" in /*) ;; *) capsim=$PWD/$capsim ;; esac
src=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$src" || exit 1
fail=0
ndr=scenarios/h100-8node-ndr.xml
logs=tests/data/nccl-tests
base="$ndr --ranks 16 --sizes 512MiB:8GiB --ops all_reduce"

# check STATUS FILE TEXT...: the last command's status was STATUS and FILE
# holds each TEXT
check() {
	got=$1 want=$2 file=$3
	shift 3
	if [ "$got" != "$want" ]; then
		echo "FAIL: exit $got, expected $want ($file)"
		fail=1
	fi
	for t in "$@"; do
		if ! grep -qF -- "$t" "$file"; then
			echo "FAIL: '$t' not in $file:"
			cat "$file"
			fail=1
		fi
	done
}

# the rules, to a file and to standard output: the same bytes
"$capsim" expect $base --out "$T/rules.yml" >"$T/out" 2>&1
check $? 0 "$T/rules.yml" "groups:" "alert: NcclTestsBusBandwidthLow" \
	"nccl_tests_busbw_gbps{op=\"all_reduce\",ranks=\"16\",bytes=\"8589934592\"} < " \
	"alert: TrainingStepSlow" "DCGM_FI_DEV_POWER_USAGE" "80% band"
"$capsim" expect $base --out - >"$T/stdout.yml"
cmp -s "$T/rules.yml" "$T/stdout.yml" || { echo "FAIL: --out - differs from --out FILE"; fail=1; }
"$capsim" expect $base --format json --threshold 80% >"$T/expect.json"
check $? 0 "$T/expect.json" '"check": "busbw"' '"expected_lo"' '"threshold": 0.8'
"$capsim" expect $base --format nccl-tests >"$T/table.txt"
check $? 0 "$T/table.txt" "# capsim expect: all_reduce on 16 ranks" "threshold" "busbw_lo" \
	"training_step_seconds"

for f in rules.yml expect.json; do
	"$capsim" verify --expect "$T/$f" "$logs/h100-2node-nebius-skypilot.log" --ranks 16 \
		>"$T/pass" 2>&1
	check $? 0 "$T/pass" "PASS: 5 of 5 sizes with a threshold reach it" "result: PASS"
	"$capsim" verify --expect "$T/$f" "$logs/h100-2node-issue290.log" >"$T/fail" 2>&1
	check $? 3 "$T/fail" "FAIL: 5 of 5 sizes below their threshold" \
		"below: $logs/h100-2node-issue290.log:30: all_reduce on 16 ranks at 512 MiB" \
		"below: $logs/h100-2node-issue290.log:34: all_reduce on 16 ranks at 8 GiB" \
		"result: FAIL"
done
"$capsim" verify --expect "$T/expect.json" "$logs/h100-2node-issue290.log" --json >"$T/fail.json"
check $? 3 "$T/fail.json" '"checks_failed": 5' '"pass": false'

# a log none of whose rows has a threshold verifies nothing: exit 3
"$capsim" verify --expect "$T/expect.json" "$logs/h100-1node-issue290.log" >"$T/none" 2>&1
check $? 3 "$T/none" "no row has a threshold"

# bad usage: exit 2, the option named
"$capsim" expect $ndr --threshold 120% >"$T/e" 2>&1
check $? 2 "$T/e" "--threshold: expected a share above 0% and at most 100%, found '120%'"
"$capsim" expect $ndr --format yaml >"$T/e" 2>&1
check $? 2 "$T/e" "--format: expected prom, nccl-tests or json, found 'yaml'"
"$capsim" expect $ndr --ranks 65 >"$T/e" 2>&1
check $? 2 "$T/e" "--ranks" "at most the cluster's 64 GPUs, found 65"
"$capsim" expect $ndr --ops gather >"$T/e" 2>&1
check $? 2 "$T/e" "--ops: expected nccl-tests collectives"
"$capsim" verify --expect "$T/table.txt" "$logs/h100-2node-issue290.log" >"$T/e" 2>&1
check $? 2 "$T/e" "$T/table.txt" "groups: expected Prometheus rule groups"
"$capsim" verify --expect "$T/expect.json" --measurements m.sqlite \
	"$logs/h100-2node-issue290.log" >"$T/e" 2>&1
check $? 2 "$T/e" "--expect wants nccl-tests LOGs (and no --measurements)"

# an output that cannot be written: exit 1, nothing left
mkdir "$T/ro"
chmod 555 "$T/ro"
if [ ! -w "$T/ro" ]; then
	"$capsim" expect $base --out "$T/ro/rules.yml" >"$T/e" 2>&1
	check $? 1 "$T/e" "$T/ro/rules.yml" "cannot write"
	[ -z "$(ls -A "$T/ro")" ] || { echo "FAIL: a file was left in $T/ro"; fail=1; }
fi
chmod 755 "$T/ro"
exit $fail
