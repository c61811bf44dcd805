# args.sh - hostile values at the command line: each must exit 2 with a
# message naming the option (or the --set path) and the value, never run,
# never crash. argv cannot hold a NUL; it can hold 100 kB (one argument may
# be up to 128 KiB on Linux).
NS_CASES=""

BIG=$(head -c 100000 /dev/zero | tr '\0' a)

# bad TEXT ARGS...: exit 2, TEXT in stderr, nothing on stdout
bad() {
	local text=$1
	shift
	cap 2 "$text" "$@"
	[ -s "$OUT" ] && fail "capsim $(short "$@"): printed a report although refused"
	true
}

# every bad --set of one command is reported together, each naming its
# path and value: one run checks many values
case_set_absurd_numbers() {
	local v args=() want=()
	for v in 1e308 -1e308 -0 nan NaN inf -inf infinity 1e-308 4.9e-324 \
		99999999999999999999999 0x10 '' 1e 1e+ - + . 2e9 -1 0; do
		args+=(--set "workload.global-batch=$v")
		want+=("--set workload.global-batch=$v: error: workload.global-batch:")
	done
	for v in 1e308 nan inf -0 0; do
		args+=(--set "cluster.nodes=$v" --set "workload.tokens=$v" --set "cost.utilization=$v")
		want+=("--set cluster.nodes=$v: error: cluster.nodes:"
			"--set workload.tokens=$v: error: workload.tokens:"
			"--set cost.utilization=$v: error: cost.utilization:")
	done
	bad "" run "$SMALL" "${args[@]}"
	has "${want[@]}"
}

case_set_units() {
	local v args=() want=()
	for v in '4 furlongs/s' '4 TB/s/s' '4TB/h' '1e308' '-4 TB/s' 'nan TB/s' 'inf TB/s' \
		'1e308 TB/s' '4 TB/s junk' 'TB/s' '4 tb/s'; do
		# a catalog part's field: one a run (a part's edits are checked after
		# the scenario's own)
		bad "--set cluster.gpu.memory.bandwidth=$v: error: cluster.gpu.memory.bandwidth:" \
			validate "$SMALL" --set "cluster.gpu.memory.bandwidth=$v"
	done
	bad "unknown unit 'furlongs/s'" validate "$SMALL" --set "cluster.gpu.memory.bandwidth=4 furlongs/s"
	for v in '2 fortnights' '1e308 h' '-2 h' '2'; do
		args+=(--set "cost.horizon=$v")
		want+=("--set cost.horizon=$v: error: cost.horizon:")
	done
	args+=(--set workload.dtype=fp7 --set cluster.fabric.sharp=maybe)
	want+=("--set workload.dtype=fp7: error: workload.dtype:"
		"--set cluster.fabric.sharp=maybe: error: cluster.fabric.sharp:")
	bad "" validate "$SMALL" "${args[@]}"
	has "${want[@]}"
}

case_set_huge_strings() {
	bad "error: name: is longer than 63 characters" validate "$SMALL" --set "name=$BIG" \
		--set "workload.model.ref=$BIG" --set "cluster.node.profile=$BIG" \
		--set "cluster.nodes=$BIG" --set "workload.tokens=1$BIG"
	has "error: workload.model.ref: is longer than 63 characters" \
		"error: cluster.node.profile: is longer than 1023 characters" \
		"error: cluster.nodes: expected a count" "error: workload.tokens: "
	bad "error: unknown path 'aaaa" validate "$SMALL" --set "${BIG:0:300}=1"
	bad "error: cluster.gpu.memory.bandwidth: value longer than 127 characters" \
		validate "$SMALL" --set "cluster.gpu.memory.bandwidth=4 $BIG"
	# a message quotes a huge value, but not without bound
	local n
	n=$(wc -c <"$ERR")
	[ "$n" -lt 200000 ] || fail "a 100 kB value made a $n-byte message"
	# many --set options at once: each is reported
	local args=() i
	for i in $(seq 1 100); do args+=(--set "no.such.path$i=1"); done
	bad "unknown path 'no.such.path100'" validate "$SMALL" "${args[@]}"
}

case_set_malformed() {
	bad "--set: error: expected PATH=VALUE (e.g. cluster.nodes=16), found 'cluster.nodes'" \
		validate "$SMALL" --set cluster.nodes
	bad "--set: error: expected PATH=VALUE (e.g. cluster.nodes=16), found '=4'" \
		validate "$SMALL" --set =4
	bad "--set cluster.nodes=4=5: error: cluster.nodes:" validate "$SMALL" --set cluster.nodes=4=5
	bad "unknown path 'no.such.path'" run "$SMALL" --set no.such.path=1
	bad "unknown path 'workload.paralelism.tpp'; nearest valid: workload.parallelism.tp" \
		run "$SMALL" --set workload.paralelism.tpp=3
	bad "run: option '--set' requires an argument" run "$SMALL" --set
}

case_unknown_paths() {
	bad "/nonexistent/x.xml: error: cannot open: No such file or directory" run /nonexistent/x.xml
	bad "/nonexistent/x.xml: error: cannot open: No such file or directory" validate /nonexistent/x.xml
	bad "/nonexistent/x.xml: error: cannot open: No such file or directory" \
		collective /nonexistent/x.xml --op all-reduce --bytes 1MiB
	bad "File name too long" run "/tmp/$(printf '%05000d' 0).xml"
	bad "File name too long" run "/tmp/$(printf '%0300d' 0).xml"
	bad "/dev/null:1: error: Document is empty" run /dev/null
	bad "cannot open" calibrate import /nonexistent/x.jsonl --db m.sqlite
	[ -e m.sqlite ] && fail "a missing input created the database m.sqlite"
	bad "cluster.node.profile" run "$SMALL" --set cluster.node.profile=/nonexistent/p.xml
	bad "no.such.kind" catalog no.such.kind
	true
}

# a directory as the scenario: the message should say so
case_scenario_is_dir() {
	mkdir d.xml
	bad "d.xml: error: cannot read: Is a directory" run d.xml
}

case_ranks() {
	local v
	for v in 8abc 0 -1 ' 8' '8 ' +8 1e3 99999999999999999999 '' 8.0 0x8 2147483648; do
		bad "capsim collective: --ranks wants a positive count, found '$v'" \
			collective "$SMALL" --op all-reduce --bytes 1GiB --ranks "$v"
	done
	bad "collective: 100000 ranks, but the cluster has 64 GPUs" \
		collective "$SMALL" --op all-reduce --bytes 1GiB --ranks 100000
}

case_gpus() {
	local v
	for v in 64, ,64 64,,128 , 0 1e3 64abc '' 99999999999999999999 '64 ,128' -64 '64;128' \
		"$(seq -s, 1 65)"; do
		bad "capsim scale: --gpus wants N,N,... (at most 64 positive counts, no empty item), found '$v'" \
			scale "$SMALL" --gpus "$v"
	done
}

case_bytes() {
	local v
	for v in '1 furlong' 1GiBB -1 nan inf 1e308 0 '' 1 '1.5 B' 17TiB '-1 GiB' '0 B' '1e308 B'; do
		bad "capsim collective: --bytes: " collective "$SMALL" --op all-reduce --bytes "$v"
	done
	for v in '8B:' ':8GiB' '8GiB:8B' '8B:8GiB:2' 'nan:inf' '8B-8GiB' ':' '0B:8B' '8B:1PiB'; do
		bad "capsim collective: --sweep" collective "$SMALL" --op all-reduce --sweep "$v"
	done
	bad "capsim collective: unknown --op 'all-sum'" collective "$SMALL" --op all-sum --bytes 1GiB
	bad "capsim collective: unknown --algo 'warp'" \
		collective "$SMALL" --op all-reduce --bytes 1GiB --algo warp
	bad "--proto" collective "$SMALL" --op all-reduce --bytes 1GiB --proto LL256
}

case_trace_limit() {
	local v
	for v in '1 parsec' nan inf 1 1e308 -1MiB '1 B' '1023 B' '2 TiB' '1.5 B' ''; do
		bad "capsim run: --trace-limit: " run "$SMALL" --trace t.json --trace-limit "$v"
	done
	[ -e t.json ] && fail "a refused --trace-limit wrote the trace"
	# a limit below the trace's bound: refused before a byte is written
	bad "more than --trace-limit 1 KiB: raise --trace-limit" run "$S" --trace t.json --trace-limit '1 KiB'
	[ -e t.json ] && fail "a trace over its limit was written"
	true
}

case_tolerance() {
	local v log=$SRC/tests/data/nccl-tests/h100-2node-ring-issue290.log
	for v in nan inf 1e308 100% 1 abc -5% '' '15 furlongs' 2:1; do
		bad "capsim verify: --tolerance" verify "$SRC/scenarios/h100-8node-ndr.xml" \
			--tolerance "$v" --nccl-tests "$log"
	done
}

case_other_options() {
	bad "run: unrecognized option '--bogus'" run "$SMALL" --bogus
	bad "capsim run: one SCENARIO at most" run "$SMALL" "$SMALL"
	bad "capsim: '$(printf '%0200d' 0)' is not a capsim command" "$(printf '%0200d' 0)"
	bad "--ranks" calibrate import --nccl-tests --ranks 8abc \
		"$SRC/tests/data/nccl-tests/h100-1node-issue290.log" --db m.sqlite
	bad "--date: expected YYYY-MM-DD" calibrate import --nccl-tests --date 2025-1-1 \
		"$SRC/tests/data/nccl-tests/h100-1node-issue290.log" --db m.sqlite
	bad "--db is required" calibrate import "$GEMM"
	bad "--runs" fit --db m.sqlite --out p.xml --runs 1,,2
	[ -e m.sqlite ] && fail "a refused command created m.sqlite"
	true
}

# --date must be a date of the calendar, not only of its shape
case_import_date() {
	local v
	for v in 2025-13-45 2025-00-00 9999-99-99 2025-02-30; do
		bad "--date: expected YYYY-MM-DD" calibrate import --nccl-tests --date "$v" \
			"$SRC/tests/data/nccl-tests/h100-1node-issue290.log" --db "m$v.sqlite"
		[ -e "m$v.sqlite" ] && fail "--date $v was stored in m$v.sqlite"
	done
	true
}

# a 100 kB unknown --set path is refused about as fast as a short one:
# the search for the nearest valid paths must not grow with its length
# (limit: 1 s plus 10 times the short one's time, so the same for every
# build type)
case_set_huge_path() {
	local t0 t1 limit
	t0=$EPOCHREALTIME
	bad "unknown path 'no.such.path'" validate "$SMALL" --set no.such.path=1
	t1=$EPOCHREALTIME
	limit=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", 1 + 10 * (b - a) }')
	timeout "$limit" "$CAPSIM" validate "$SMALL" --set "$BIG=1" >"$OUT" 2>"$ERR"
	local rc=$?
	if [ "$rc" -eq 124 ]; then
		fail "validate --set <100 kB path>=1 took more than $limit s (a short one: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s)"
	else
		check "$rc" 2 "error: unknown path 'aaaa" "capsim validate S --set <100 kB path>=1"
	fi
}

# capsim sweep, optimize and query: each bad option named with its value, exit 2,
# nothing written
case_sweep_args() {
	local sw=$SRC/tests/data/sweep/expand.xml db=$T/r.sqlite
	bad "capsim sweep: expected one sweep file, found 0 arguments" sweep --db "$db"
	bad "capsim sweep: --db FILE is required" sweep "$sw"
	bad "capsim sweep: -j: expected a number of threads from 1 to 1024, found '0'" \
		sweep "$sw" --db "$db" -j 0
	bad "capsim sweep: -j: expected a number of threads from 1 to 1024, found '1e9'" \
		sweep "$sw" --db "$db" -j 1e9
	bad "capsim sweep: --batch: expected points a transaction from 1 to 1000000, found 'x'" \
		sweep "$sw" --db "$db" --batch x
	bad "--resume: no results store here to resume" sweep "$sw" --db "$db" --resume
	bad "error: expected a regular file for the store (an SQLite database), found a directory" \
		sweep "$sw" --db "$T"
	bad "--set cluster.nodes=0: error: cluster.nodes:" sweep "$sw" --db "$db" \
		--set cluster.nodes=0
	[ -e "$db" ] && fail "a refused sweep left $db behind"
	true
}

case_optimize_args() {
	bad "capsim optimize: --metric: expected tokens_per_s, time_to_train_s or " \
		optimize "$SMALL" --metric mfu
	bad "capsim optimize: --top: expected 1 to 1000, found '0'" optimize "$SMALL" --top 0
	bad "capsim optimize: -j: expected 1 to 1024 threads, found '-1'" optimize "$SMALL" -j -1
	bad "capsim optimize: expected at most one scenario, found 2" optimize "$SMALL" "$SMALL"
	bad "--set workload.global-batch=0: error:" optimize "$SMALL" --set workload.global-batch=0
}

case_query_args() {
	bad "capsim query: --db is required" query --best tokens_per_s
	bad "error: cannot open the database: No such file or directory" query --db "$T/none.sqlite"
}

case_report_args() {
	local sc=$SRC/scenarios/report/h200-owned-ib.xml
	bad "capsim report: --out DIR is required" report "$sc"
	bad "capsim report: expected one or more scenarios, or --db" report --out "$T/r"
	bad "capsim report: --metric: expected cost_to_train_usd" report "$sc" --out "$T/r" --metric mfu
	bad "--budget" report "$sc" --out "$T/r" --budget 'two million'
	bad "--deadline" report "$sc" --out "$T/r" --deadline '5 s'
	bad "capsim report: --sweep and --where go with --db" report "$sc" --out "$T/r" --sweep 1
	bad "capsim report: expected no scenario with --db" report "$sc" --db "$T/x.sqlite" --out "$T/r"
	: >"$T/file"
	bad "--out: not a directory" report "$sc" --out "$T/file"
	[ -e "$T/r" ] && fail "a refused report left $T/r behind"
	true
}

# the optimiser's line to paste ("to run it: capsim run ...") quotes its
# words: a scenario path with a space and a $(...) is one word to the shell,
# and pasting the line runs nothing but capsim
case_optimize_paste_line() {
	mkdir "$T/a dir"
	local sc="$T/a dir/x\$(touch pwned)'q.xml"
	cp "$SRC/scenarios/gpt2-124m-1xh200.xml" "$sc"
	cap 0 "to run it: capsim run" optimize "$sc" --top 1
	local line
	line=$(sed -n 's/^to run it: capsim run //p' "$OUT")
	[ -n "$line" ] || fail "no line to paste"
	# the shell reads the line's words back: the first is the path, whole
	sh -c "printf '%s\n' $line" >"$T/words" || fail "the line does not parse as shell words"
	[ "$(head -n 1 "$T/words")" = "$sc" ] || fail "the path did not come back whole: $(head -n 1 "$T/words")"
	grep -q '^--set$' "$T/words" || fail "no --set word"
	[ -e "$T/pwned" ] && fail "pasting the line ran a command"
	true
}

# a calibrated profile's path is written into the resolved scenario as an
# attribute: a path holding '"', '&' and '<' is escaped, so the file written
# is well-formed and reads back to the same profile
case_resolved_profile_path() {
	local p="$T/a\"b&c<d.xml"
	cp "$SRC/hardware/calibrated/h200-sxm-141gb-2026-12-02.xml" "$p"
	local sc=$SRC/scenarios/gpt2-124m-1xh200.xml
	cap 0 "" validate "$sc" --resolved --set "cluster.node.profile=$p" --out "$T/r.xml"
	grep -qF 'profile="' "$T/r.xml" || fail "no profile attribute written"
	grep -qF '&quot;' "$T/r.xml" || fail "the path's quote is not escaped"
	cap 0 "" validate "$T/r.xml"
	cap 0 "" run "$T/r.xml" --json
	local a b
	a=$(grep -o '"step_time_s": *[0-9.e+-]*' "$OUT")
	cap 0 "" run "$sc" --json --set "cluster.node.profile=$p"
	b=$(grep -o '"step_time_s": *[0-9.e+-]*' "$OUT")
	[ -n "$a" ] && [ "$a" = "$b" ] || fail "the resolved scenario's step ($a) is not the edited one's ($b)"
}

# what a shared nccl-tests log says of its GPUs reaches the terminal shown,
# not sent: a control character is refused by the parser, and a bidi
# override in a device name is shown as \u{202E}, never reordering the line
case_verify_log_names_shown() {
	sed 's/NVIDIA H100 80GB HBM3/NVIDIA \xe2\x80\xaeH100/' \
		"$SRC/tests/data/nccl-tests/h100-1node-issue290.log" >"$T/bidi.log"
	"$CAPSIM" verify "$SRC/scenarios/h100-8node-ndr.xml" --nccl-tests "$T/bidi.log" \
		>"$OUT" 2>"$ERR"
	local st=$?
	[ "$st" -eq 0 ] || [ "$st" -eq 3 ] || fail "capsim verify: exit $st, expected 0 or 3"
	grep -qF 'NVIDIA \u{202E}H100' "$OUT" || fail "the device name is not shown escaped"
	grep -qP '\xe2\x80\xae' "$OUT" "$ERR" && fail "a raw bidi override reached the terminal"
	sed 's/NVIDIA H100 80GB HBM3/NVIDIA \x1b]0;pwned\x07H100/' \
		"$SRC/tests/data/nccl-tests/h100-1node-issue290.log" >"$T/esc.log"
	cap 2 "expected a GPU name of printable text, found a control character (0x1b)" \
		verify "$SRC/scenarios/h100-8node-ndr.xml" --nccl-tests "$T/esc.log"
}
