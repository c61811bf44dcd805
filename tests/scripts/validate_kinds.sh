#!/bin/sh
# validate_kinds.sh CAPSIM SOURCE_DIR - capsim validate on every kind of file
# capsim reads, one good and one bad of each: the good one "FILE: ok" and
# exit 0 (with --json, its kind), the bad one exit 2 with the file (and its
# line where the reader gives one), the field and what was found; a file of
# no kind capsim reads refused naming the kinds it does.
set -u
capsim=$1
src=$(cd "$2" && pwd) || exit 1

fail() {
	echo "validate_kinds: FAIL: $*" >&2
	exit 1
}

tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# good KIND FILE: exit 0, "FILE: ok", and --json names the kind
good() {
	out=$("$capsim" validate "$2" 2>"$tmp/err") || fail "$1: $2 exited $?: $(cat "$tmp/err")"
	case $out in "$2: ok"*) ;; *) fail "$1: $2: no 'ok': $out" ;; esac
	"$capsim" validate --json "$2" 2>/dev/null | grep -q "\"kind\": \"$1\"" ||
		fail "$1: validate --json does not call $2 a $1"
}

# bad KIND FILE TEXT...: exit 2, and standard error holds each TEXT
bad() {
	kind=$1 file=$2
	shift 2
	"$capsim" validate "$file" >/dev/null 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] || fail "$kind: bad $file exited $rc, not 2: $(cat "$tmp/err")"
	for want in "$@"; do
		grep -qF -- "$want" "$tmp/err" || fail "$kind: bad $file: no '$want' in: $(cat "$tmp/err")"
	done
}

# sweep files: the shipped ones, and an axis over a path that is no field
good sweep "$src/scenarios/sweeps/gpus-and-fabric.xml"
sed -e "s|\.\./report/h200-owned-ib.xml|$src/scenarios/report/h200-owned-ib.xml|" \
	-e 's|cluster.fabric.routing|cluster.fabric.routeing|' \
	"$src/scenarios/sweeps/report-70b.xml" >"$tmp/sweep.xml"
bad sweep "$tmp/sweep.xml" "$tmp/sweep.xml:" "cluster.fabric.routeing"

# Hugging Face config.json (import hf)
good hf-config "$src/tests/data/hf/gpt2/config.json"
bad hf-config "$src/tests/data/hf/bad/missing-ffn.json" "missing-ffn.json" "intermediate_size"

# launch scripts (import slurm): a Slurm script and a Kubernetes Job
good launch "$src/tests/data/launch/slurm-llama3-8b.sh"
good launch "$src/tests/data/launch/k8s-job.yaml"
bad launch "$src/tests/data/launch/bad/not-a-number.sh" "not-a-number.sh:3:" "--num-layers" \
	"found 'twelve'"

# torchtitan job configs (import torchtitan)
good torchtitan "$src/tests/data/launch/real/torchtitan-llama3_8b.toml"
printf '[training]\nseq_len = "long"\n' >"$tmp/job.toml"
bad torchtitan "$tmp/job.toml" "job.toml:2:" "training.seq_len"

# nccl-tests logs (verify, calibrate import --nccl-tests)
good nccl-tests "$src/tests/data/nccl-tests/h100-2node-issue290.log"
bad nccl-tests "$src/tests/data/nccl-tests-bad/h100-1node-rank-twice.log" \
	"h100-1node-rank-twice.log:8:" "rank line" "found rank 3 again"

# measurement JSON lines (calibrate import): checked in a database of their own
good measurements "$src/tests/data/calibrate/pcie.jsonl"
printf '{"kind": "gemm"}\n' >"$tmp/run.jsonl"
bad measurements "$tmp/run.jsonl" "run.jsonl:1:" "field 'kind'" "found 'gemm'"
ls /tmp/capsim-validate-* >/dev/null 2>&1 && fail "measurements: the private database was left"

# the residuals and the error model (fit errors; every banded result)
good residuals "$src/hardware/errors/residuals.csv"
printf 'table,quantity\n' >"$tmp/residuals.csv"
bad residuals "$tmp/residuals.csv" "residuals.csv:1:" "header" "found 'table,quantity'"
good error-model "$src/hardware/errors/model.json"
printf '{"format": "capsim-error-model", "version": 99}\n' >"$tmp/model.json"
bad error-model "$tmp/model.json" "model.json" "version: expected 1, found 99"

# SQLite stores (query, report --db, fit --db): one made by calibrate import
"$capsim" calibrate import "$src/tests/data/calibrate/pcie.jsonl" --db "$tmp/m.sqlite" \
	>/dev/null 2>&1 || fail "calibrate import"
good store "$tmp/m.sqlite"
# past the 8 MiB that capsim reads of a text file: a store is opened, not read whole
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("create table padding (x)")
c.executemany("insert into padding values (?)", [("x" * 1000,)] * 10000)
c.commit()' "$tmp/m.sqlite" || fail "python3 could not grow the store"
[ "$(wc -c <"$tmp/m.sqlite")" -gt 8388608 ] || fail "the grown store is under 8 MiB"
good store "$tmp/m.sqlite"
printf 'SQLite format 3\000and then no database at all, only these words' >"$tmp/bad.sqlite"
bad store "$tmp/bad.sqlite" "bad.sqlite" "not an SQLite file"

# none of capsim's kinds
printf 'a shopping list\n' >"$tmp/list.md"
bad unknown "$tmp/list.md" "list.md:1:" "expected one of the files capsim reads" \
	"found none of them"
echo "validate_kinds: ok"
