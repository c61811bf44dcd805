#!/bin/bash
# explore_tmux.sh CAPSIM - the what-if explorer driven in tmux as a person
# would (send-keys, capture-pane): the GPU count doubled shows the step time
# and the cost that `capsim run --set cluster.nodes=64` gives; a pinned
# baseline shows the deltas, "within error" where capsim's own error cannot
# tell them from none, never for inputs alone; a value the scenario refuses is refused in
# place; the fabric knob moves InfiniBand NDR to RoCE (transport, NIC and
# switch) in one key press to the step capsim run --set gives, and a knob
# passes over a value the scenario refuses, saying why once; a saved scenario validates and runs to the same numbers; 80x24
# fits, smaller says so, and it comes back; Ctrl-C and SIGTERM leave a sane
# terminal. Exit 77 (skipped) where tmux is not installed.
set -u
CAPSIM=$1
SRC=$(cd "$(dirname "$0")/../.." && pwd)
command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux is not installed"; exit 77; }
T=$(mktemp -d /tmp/capsim-explore-XXXXXX)
# each explorer has a server of its own: a session started on a server that
# is exiting with its last session fails with "server exited unexpectedly"
S="capsim-explore-$$"
trap 'tmux -L "capsim-explore-$$" kill-server 2>/dev/null; tmux -L "capsim-explore-$$-term" kill-server 2>/dev/null; rm -rf "$T"' EXIT
fail=0
tm() { tmux -L "$S" "$@"; }
screen() { tm capture-pane -t x -p; }
# wait until the screen holds TEXT (up to 60 s: sanitizer builds are slow)
until_screen() {
	local i
	for i in $(seq 1 600); do
		screen 2>/dev/null | grep -qF -- "$1" && return 0
		tm has-session -t x 2>/dev/null || {
			echo "FAIL: the tmux session ended while the screen was awaited to show '$1'"
			fail=1
			return 1
		}
		sleep 0.1
	done
	echo "FAIL: the screen never showed '$1'; it shows:"
	screen | sed 's/^/  | /'
	fail=1
	return 1
}
json() { "$CAPSIM" run "$SRC/scenarios/default.xml" "$@" --json; }
num() { sed -n "s/^  \"$1\": \\(.*\\),\$/\\1/p"; }

# the pane's shell: the explorer, then its exit status and the terminal's modes
start() {
	tm new-session -d -s x -x 100 -y 30 \
		"cd '$T' && CAPSIM_DATA='$SRC' LSAN_OPTIONS='suppressions=$SRC/tests/scripts/lsan-ncurses.supp' '$CAPSIM' explore '$SRC/scenarios/default.xml'; echo EXITED \$?; stty -a | tr ' ;' '\n\n' | grep -E '^-?(icanon|echo)\$' | tr '\n' ' '; echo; sleep 60"
}
start
until_screen "cost to train  \$"
base_step=$(json | num step_time_s)
base_cost=$(json | num cost_to_train_usd)
want=$(printf 'step time      %.4f s' "$base_step")
until_screen "$want"

# nodes 32 -> 64, as capsim run --set says
tm send-keys -t x j +
until_screen "cluster.nodes = 64"
j64=$(json --set cluster.nodes=64)
s64=$(echo "$j64" | num step_time_s)
c64=$(echo "$j64" | num cost_to_train_usd)
until_screen "$(printf 'step time      %.4f s' "$s64")"
until_screen "$(printf 'cost to train  $%.0f' "$c64")"

# the baseline at 64 nodes, then back to 32: deltas against it
tm send-keys -t x b -
until_screen "cluster.nodes = 32"
d=$(awk -v a="$base_step" -v b="$s64" 'BEGIN { printf "%+.1f%%", 100 * (a - b) / b }')
until_screen "$(printf 'step time      %.4f s (%s)' "$base_step" "$d")"

# against the model's own error: the baseline pinned at 32 nodes; utilisation
# 5 points lower moves the cost by an input alone (exact, unmarked); the
# micro-batch doubled moves the step by less than its comparison's band
tm send-keys -t x b
until_screen "baseline pinned"
tm send-keys -t x j j j j j j j j j j j j j j j j j j j j j j j -
until_screen "cost.utilization = 0.65"
until_screen "$(printf 'step time      %.4f s (+0.0%%)' "$base_step")"
screen | grep -q "within error" && { echo "FAIL: a change of utilisation alone is marked within error"; fail=1; }
tm send-keys -t x k k k k k k k k k k +
until_screen "workload.micro-batch = 2"
until_screen ", within error)"
tm send-keys -t x u u k k k k k k k k k k k k k
until_screen "$(printf 'step time      %.4f s (+0.0%%)' "$base_step")"
until_screen "utilisation       70%"

# a value the scenario refuses: refused in place, the state kept
tm send-keys -t x Enter
until_screen "nodes (cluster.nodes) ="
tm send-keys -t x 0 Enter
until_screen "refused: cluster.nodes=0"
until_screen "$want"

# the fabric knob: InfiniBand NDR to RoCE in one key press, transport, NIC
# and switch together, the step time as capsim run --set of the three says
tm send-keys -t x j j
until_screen "fabric            InfiniBand NDR"
tm send-keys -t x -
until_screen "fabric = RoCE 200GbE: transport roce, NIC cx7-200gbe, switch sn5600"
jr=$(json --set cluster.fabric.transport=roce --set cluster.nic.ref=cx7-200gbe \
	--set cluster.fabric.switch.ref=sn5600)
sr=$(echo "$jr" | num step_time_s)
[ "$sr" != "$base_step" ] || { echo "FAIL: RoCE 200GbE leaves the step at $sr s"; fail=1; }
until_screen "$(printf 'step time      %.4f s' "$sr")"
until_screen "fabric            RoCE 200GbE"
tm send-keys -t x + +
until_screen "fabric = RoCE 400GbE: transport roce, NIC cx7-400gbe, switch sn5600"
s400=$(json --set cluster.fabric.transport=roce --set cluster.nic.ref=cx7-400gbe \
	--set cluster.fabric.switch.ref=sn5600 | num step_time_s)
until_screen "$(printf 'step time      %.4f s' "$s400")"
tm send-keys -t x u u u
until_screen "fabric            InfiniBand NDR"
until_screen "$want"
# the transport alone: roce is refused under the QM9700, passed over and
# said once; tcp, which either switch carries, is taken
tm send-keys -t x j +
until_screen "cluster.fabric.transport = tcp (passed over roce: fabric: switch 'qm9700' does not"
tm send-keys -t x u k k k
until_screen "$want"

# save, validate, run: the same step
tm send-keys -t x s
until_screen "save the scenario as:"
tm send-keys -t x "$T/saved.xml" Enter
until_screen "saved to $T/saved.xml"
"$CAPSIM" validate "$T/saved.xml" >/dev/null 2>&1 || { echo "FAIL: the saved scenario does not validate"; fail=1; }
saved=$("$CAPSIM" run "$T/saved.xml" --json | num step_time_s)
[ "$saved" = "$base_step" ] || { echo "FAIL: the saved scenario runs to $saved s, expected $base_step"; fail=1; }

# 80x24 fits; 70x20 says what it needs; back to 100x30
tm resize-window -t x -x 80 -y 24
until_screen "$want"
tm resize-window -t x -x 70 -y 20
until_screen "it needs 80x24"
tm resize-window -t x -x 100 -y 30
until_screen "$want"

# Ctrl-C: exit 130, the terminal canonical and echoing again
tm send-keys -t x C-c
until_screen "EXITED 130"
until_screen "icanon echo"
tm kill-server

# SIGTERM likewise
S="capsim-explore-$$-term"
start
until_screen "$want"
# the explorer is the child of this pane's shell, not any explorer running
pid=$(pgrep -P "$(tm display-message -p -t x '#{pane_pid}')" -f "explore" | head -1)
[ -n "$pid" ] && kill -TERM "$pid"
until_screen "EXITED 130"
until_screen "icanon echo"
[ "$fail" -eq 0 ] && echo "ok: nodes, baseline, fabric, a refused value passed over, refusal, save, resize, Ctrl-C and SIGTERM"
exit "$fail"
