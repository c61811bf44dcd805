#!/bin/sh
# refit.sh [CAPSIM] - rebuild the measurement store from the measured H200's runs of
# 2026-12-02 and refit hardware/calibrated/h200-sxm-141gb-2026-12-02.xml from it.
# Run from the repository root; CAPSIM defaults to build/capsim. The NCCL runs
# are one rank: imported, and refused as bandwidth data by the fit (a note says
# so). The gpt2-step-a, -b, -compile and -pad50304 files are validation data
# (docs/validation.md), not calibration inputs: only -c carries the
# torch-launch record that the fit reads. The host stream's costs come from
# the torch-step records of -c and of 2026-12-04's host_probe.py steps, and
# the eager block kernels from its torch-host records (-host.jsonl).
set -eu
capsim=${1:-build/capsim}
db=build/h200-2026-12-02.sqlite
rm -f "$db"
for f in gemm power gemm-b gemm-c power-b pcie nccl-1gpu nccl-1gpu-mpi gpt2-step-c; do
	"$capsim" calibrate import "calibrate/results/h200-2026-12-02-$f.jsonl" --db "$db"
done
for f in host host-steps; do
	"$capsim" calibrate import "calibrate/results/h200-2026-12-04-$f.jsonl" --db "$db"
done
"$capsim" fit --db "$db" --name h200-sxm-141gb-2026-12-02 \
	--out hardware/calibrated/h200-sxm-141gb-2026-12-02.xml --force
