#!/bin/sh
# conventions.sh CAPSIM BUILD_DIR SOURCE_DIR - the conventions a user of a
# command-line tool expects, through the binary:
#   --json on import (every kind) and report: one JSON object with what the
#     command read and wrote;
#   examples by name: a scenario, a report design and a sweep file named
#     without path or .xml from another directory, ./NAME.xml before the
#     shipped one, a name found nowhere refused with where capsim looked;
#   capsim calibrate path NAME: the probes and scripts, and a program found
#     as calibrate run finds it; calibrate run --json over a stand-in program;
#   the bash completion (BUILD_DIR/capsim.bash, as installed) sourced and
#     called with COMP_WORDS; the zsh one parsed by zsh where zsh is found.
set -u
capsim=$1
build=$2
src=$3

fail() {
	echo "conventions: FAIL: $*" >&2
	exit 1
}

case $capsim in /*) ;; *) capsim=$(pwd)/$capsim ;; esac
build=$(cd "$build" && pwd) || fail "no $build"
src=$(cd "$src" && pwd) || fail "no $src"
tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || fail "cd $tmp"

# jcheck FILE WHAT CHECK...: each CHECK of the JSON object in FILE holds, or
# fail naming it. A CHECK is PATH=TEXT (the value, as JSON for anything but
# a string, is TEXT) or PATH~TEXT (it holds TEXT); PATH is keys and indices
# joined by '.'; one python3 a file
jcheck() {
	file=$1 what=$2
	shift 2
	bad=$(python3 - "$file" "$@" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
for check in sys.argv[2:]:
    path, op, want = re.match(r"([^=~]*)([=~])(.*)", check, re.S).groups()
    v = doc
    try:
        for k in path.split(".") if path else []:
            v = v[int(k)] if isinstance(v, list) else v[k]
    except (KeyError, IndexError, ValueError):
        print(check + ": no " + path)
        continue
    text = v if isinstance(v, str) else json.dumps(v)
    if (op == "=" and text != want) or (op == "~" and want not in text):
        print(check + ": found " + text[:300])
PY
) || fail "$what: $file is not JSON"
	[ -z "$bad" ] || fail "$what: $bad"
}

# ---- --json on import --------------------------------------------------------
"$capsim" import slurm "$src/tests/data/launch/megatron-gpt3-175b.sh" --model gpt3-175b \
	--json >slurm.json 2>slurm.err || fail "import slurm --json exited $?: $(cat slurm.err)"
# without --out, the scenario is written only into the JSON
jcheck slurm.json "import slurm --json" scenario.model=gpt3-175b scenario.file=null \
	'scenario.xml~<scenario' 'not_modelled~--weight-decay 0.1: not modelled' \
	assumed~dgx-h100 inputs~megatron-gpt3-175b.sh
"$capsim" import slurm "$src/tests/data/launch/megatron-gpt3-175b.sh" --model gpt3-175b \
	--json --out imported.xml >out.json 2>/dev/null || fail "import slurm --json --out"
jcheck out.json "import slurm --json --out" scenario.file=imported.xml
"$capsim" validate imported.xml >/dev/null 2>&1 || fail "the imported scenario does not validate"
"$capsim" import cmdline --model llama-3.1-8b --json -- torchrun --nproc_per_node 8 \
	pretrain_gpt.py --tensor-model-parallel-size 2 --seq-length 8192 --micro-batch-size 1 \
	--global-batch-size 64 >cmdline.json 2>cmdline.err ||
	fail "import cmdline --json exited $?: $(cat cmdline.err)"
jcheck cmdline.json "import cmdline --json" scenario.model=llama-3.1-8b 'inputs=[]' \
	'scenario.xml~tp="2"'
"$capsim" import torchtitan "$src/tests/data/launch/real/torchtitan-llama3_8b.toml" --json \
	>titan.json 2>titan.err || fail "import torchtitan --json exited $?: $(cat titan.err)"
jcheck titan.json "import torchtitan --json" 'scenario.xml~<scenario' \
	inputs~torchtitan-llama3_8b.toml
"$capsim" import hf "$src/tests/data/hf/gpt2/config.json" --json >hf.json 2>/dev/null ||
	fail "import hf --json"
jcheck hf.json "import hf --json" model~layers

# ---- --json on report ---------------------------------------------------------
"$capsim" report h200-owned-ib h200-owned-roce --out rep --no-progress \
	--gnuplot-timeout "30 s" --json >rep.json 2>rep.err
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "report --json exited $rc: $(cat rep.err)"
jcheck rep.json "report --json" designs.0.label=h200-owned-ib designs.1.label=h200-owned-roce \
	winner~h200-owned- runner_up~h200-owned- metric=cost_to_train_usd \
	'files~"report.html"' 'files~"report.md"' 'files~"summary.csv"'
python3 -c 'import json, sys
p = json.load(open("rep.json"))["p_winner_below_runner_up"]
sys.exit(not 0.5 <= p <= 1)' || fail "report: the winner's probability is not in [0.5, 1]"
for f in report.html report.md summary.csv; do
	[ -s "rep/$f" ] || fail "report: $f listed, not written"
done

# ---- examples by name ----------------------------------------------------------
"$capsim" run h100-8node-ndr --json --no-intervals >byname.json 2>byname.err ||
	fail "run by name exited $?: $(cat byname.err)"
"$capsim" run "$src/scenarios/h100-8node-ndr.xml" --json --no-intervals >bypath.json ||
	fail "run by path"
step=$(sed -n 's/^ *"step_time_s": \(.*\),$/\1/p' bypath.json)
[ -n "$step" ] || fail "run by path: no step_time_s"
jcheck byname.json "run by name" "step_time_s=$step" "inputs.0.file=$src/scenarios/h100-8node-ndr.xml"
# ./NAME.xml comes before the shipped example of that name
sed 's/nodes="8"/nodes="4"/' "$src/scenarios/h100-8node-ndr.xml" >h100-8node-ndr.xml
"$capsim" run h100-8node-ndr --json --no-intervals >local.json 2>local.err ||
	fail "run of ./NAME.xml exited $?: $(cat local.err)"
jcheck local.json "run by name, ./NAME.xml there" inputs.0.file=h100-8node-ndr.xml
rm h100-8node-ndr.xml
"$capsim" sweep gpus-and-fabric --plan >plan.txt 2>plan.err ||
	fail "sweep by name exited $?: $(cat plan.err)"
"$capsim" run no-such-example 2>miss.err
rc=$?
[ "$rc" -eq 2 ] || fail "an unknown name exited $rc, not 2"
grep -q "no-such-example: .*looked in ./no-such-example, ./no-such-example.xml, " miss.err ||
	fail "an unknown name: where capsim looked is not said: $(cat miss.err)"
grep -q "scenarios/sweeps/no-such-example" miss.err || fail "the sweeps folder not searched"
"$capsim" run h100-8node-nrd 2>typo.err
grep -q "did you mean 'h100-8node-ndr'?" typo.err || fail "a mistyped name: $(cat typo.err)"

# ---- calibrate path and calibrate run --json ------------------------------------
[ "$("$capsim" calibrate path attn_probe)" = "$src/calibrate/torch/attn_probe.py" ] ||
	fail "calibrate path attn_probe"
[ "$("$capsim" calibrate path refit.sh)" = "$src/calibrate/results/refit.sh" ] ||
	fail "calibrate path refit.sh"
"$capsim" calibrate path no-such-probe 2>probe.err
[ $? -eq 2 ] && grep -q 'looked in .*calibrate/torch' probe.err ||
	fail "calibrate path of an unknown name: $(cat probe.err)"
mkdir bin
cat >bin/capsim-calibrate-pcie <<'EOF'
#!/bin/sh
# a stand-in: one machine line and two records in the file after --out
while [ $# -gt 0 ]; do [ "$1" = --out ] && out=$2; shift; done
printf '{"machine":1}\n{"r":1}\n{"r":2}\n' >"$out"
EOF
chmod +x bin/capsim-calibrate-pcie
PATH=$tmp/bin:$PATH "$capsim" calibrate run --only pcie --bin-dir "$tmp/bin" --name box \
	--out-dir runs --json >cal.json 2>cal.err || fail "calibrate run --json: $(cat cal.err)"
jcheck cal.json "calibrate run --json" steps.0.program=capsim-calibrate-pcie steps.0.end=exited \
	steps.0.records=2 "steps.0.out~runs/box-"
# a program found on PATH (the CUDA programs themselves may be built beside capsim)
cp bin/capsim-calibrate-pcie bin/capsim-conventions-stand-in
[ "$(PATH=$tmp/bin:$PATH "$capsim" calibrate path capsim-conventions-stand-in)" = \
	"$tmp/bin/capsim-conventions-stand-in" ] || fail "calibrate path of a program on PATH"

# ---- shell completion ------------------------------------------------------------
[ -s "$build/capsim.bash" ] || fail "$build/capsim.bash not written by the build"
if command -v bash >/dev/null; then
	bash -c '
	. "$1"
	complete -p capsim | grep -q _capsim || exit 11
	COMP_WORDS=(capsim optim); COMP_CWORD=1; _capsim
	[ "${COMPREPLY[*]}" = optimize ] || exit 12
	COMP_WORDS=(capsim run --js); COMP_CWORD=2; _capsim
	[ "${COMPREPLY[*]}" = --json ] || exit 13
	COMP_WORDS=(capsim import tor); COMP_CWORD=2; _capsim
	[ "${COMPREPLY[*]}" = torchtitan ] || exit 14
	COMP_WORDS=(capsim fit errors --res); COMP_CWORD=3; _capsim
	[ "${COMPREPLY[*]}" = --residuals ] || exit 15
	COMP_WORDS=(capsim --parts x.xml sw); COMP_CWORD=3; _capsim
	[ "${COMPREPLY[*]}" = sweep ] || exit 16
	# every option of run --help is offered after "capsim run --"
	COMP_WORDS=(capsim run --); COMP_CWORD=2; _capsim
	for o in $("$2" run --help | sed -n "s/^  \(-., \)\{0,1\} *\(--[a-z-]*\).*/\2/p"); do
		case " ${COMPREPLY[*]} " in *" $o "*) ;; *) echo "missing $o" >&2; exit 17 ;; esac
	done
	' bash "$build/capsim.bash" "$capsim" || fail "bash completion: case $? failed"
fi
[ -s "$build/_capsim" ] || fail "$build/_capsim not written by the build"
if command -v zsh >/dev/null; then
	zsh -n "$build/_capsim" || fail "zsh cannot parse _capsim"
fi
echo "conventions: ok"
