# bounds.sh - unbounded work: inputs that would make capsim run for minutes
# or grow without end must be refused quickly (exit 2) with the limit that
# refuses them and how to raise it, or finish within a documented bound
# (docs/user-guide.md, "Limits on work"). The hostile inputs are generated
# in the case's directory; every capsim call runs under `timeout 60`, so a
# regression fails (exit 124) instead of hanging.
NS_CASES=""

# slow STATUS TEXT ARGS...: as cap, under timeout 60, and nothing on stdout
# when refused
slow() {
	local want=$1 text=$2
	shift 2
	timeout 60 "$CAPSIM" "$@" >"$OUT" 2>"$ERR"
	local got=$?
	[ "$got" -eq 124 ] && fail "capsim $(short "$@"): still running after 60 s"
	check "$got" "$want" "$text" "capsim $(short "$@")"
	if [ "$want" -ne 0 ] && [ -s "$OUT" ]; then
		fail "capsim $(short "$@"): printed a report although refused"
	fi
	true
}

# ---- the parallelism optimiser --------------------------------------------------------

# 524,288 GPUs (65,536 nodes on 3 tiers of 144-port switches: 64-port ones
# connect at most 8,192): each simulation weighs 32 of --max-simulations;
# refused once the screens have kept 1,563 layouts, before the first
# simulation (it ran 12 minutes)
case_optimize_524k_gpus() {
	slow 2 "raise --max-simulations, to at most" optimize --set cluster.nodes=65536 \
		--set cluster.fabric.tiers=3 --set cluster.fabric.switch.ref=q3400 \
		--set workload.global-batch=65536
	has "--max-simulations: error:" "each weighs 32 on 524288 GPUs" "1563 of the first" \
		"50016 in all, more than --max-simulations 50000"
}

# the space is counted before it is screened
case_optimize_max_layouts() {
	slow 2 "--max-layouts: error:" optimize "$S" --max-layouts 1000
	has "are 39360 to screen, more than --max-layouts 1000" "raise --max-layouts to 39360"
	slow 2 "--max-layouts: expected a count" optimize "$S" --max-layouts 0
	slow 2 "--max-simulations: expected a count" optimize "$S" --max-simulations -5
}

# --exhaustive on 64 nodes simulates every kept layout (20 s and more): the
# limit holds it before it starts
case_optimize_exhaustive_limit() {
	slow 2 "1001 in all, more than --max-simulations 1000" optimize "$S" \
		--set cluster.nodes=64 --exhaustive --max-simulations 1000
	has "raise --max-simulations, to at most"
}

# --progress writes the phases where stderr is no terminal, from the start
case_optimize_progress() {
	local gpt2=$SRC/scenarios/gpt2-124m-1xh200.xml
	slow 0 "optimize " optimize "$gpt2" --top 1 --progress
	has "screening layouts (rules, memory estimate): 0/60" \
		"screening layouts (rules, memory estimate): 60/60" \
		"simulating layouts (at most; the bound stops the search sooner): 0/48" \
		"simulating layouts (at most; the bound stops the search sooner): 48/48"
	slow 0 "optimize " optimize "$gpt2" --top 1
	[ -s "$ERR" ] && fail "progress without --progress where stderr is no terminal: $(head -c 200 "$ERR")"
	true
}

# ---- input XML ---------------------------------------------------------------------------

# attrs N: N attributes, one a word
attrs() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf " x%d=\"1\"", i }'
}

# a scenario with 100,000 unknown attributes on its root: libxml2 costs n^2
case_xml_attributes_100k() {
	{ head -n 5 "$S"; printf '<scenario%s' "$(attrs 100000)"; tail -n +6 "$S" | sed '1s/^<scenario//'; } >a.xml
	grep -q '^<scenario x0="1"' a.xml || fail "the generated scenario is not as meant"
	slow 2 "a.xml:6: error: element: expected at most 256 attributes" validate a.xml
	slow 2 "a.xml:6: error: element: expected at most 256 attributes" run a.xml
	# a model file through --parts
	{ echo '<?xml version="1.0" encoding="UTF-8"?>'; printf '<models%s>\n</models>\n' "$(attrs 100000)"; } >m.xml
	slow 2 "m.xml:2: error: element: expected at most 256 attributes" --parts m.xml validate "$S"
}

# 30,000 elements in a file
case_xml_elements() {
	{ head -n 6 "$S"; awk 'BEGIN { for (i = 0; i < 30000; i++) print "<x/>" }'; tail -n +7 "$S"; } >e.xml
	slow 2 "e.xml:20006: error: file: expected at most 20000 elements" validate e.xml
}

# 2,000 <cluster> elements of 250 unknown attributes each, 4 MB: the first
# 50 unknown names are listed with their nearest paths, the rest counted
case_xml_unknown_names() {
	local a
	a=$(attrs 250)
	{ echo '<?xml version="1.0" encoding="UTF-8"?>'; echo '<scenario name="x">'
	  for i in $(seq 2000); do echo "<cluster$a/>"; done; echo '</scenario>'; } >u.xml
	slow 2 "499950 more unknown attributes or elements (the first 50 are listed)" validate u.xml
	[ "$(grep -c "unknown attribute 'cluster.x" "$ERR")" -eq 50 ] ||
		fail "expected 50 unknown attributes listed, found $(grep -c "unknown attribute" "$ERR")"
}

# ---- nccl-tests logs ---------------------------------------------------------------------

LOG=$SRC/tests/data/nccl-tests/h100-2node-issue290.log

# the log's head (header, rank lines, column header) and its trailer
log_head() { head -n 23 "$LOG"; }
log_tail() { grep -e 'Out of bounds' -e 'Avg bus' "$LOG"; }

# 480,000 rows, 58 MB (each row a collective simulated: it ran past 20 s)
case_nccl_log_58mb() {
	{ log_head
	  awk 'BEGIN { for (i = 1; i <= 480000; i++) printf " 0: %12d %12d     float     sum      -1    215.3   38.96   73.04    N/A    180.0   46.60   87.38    N/A\n", 4 * i, i }'
	  log_tail; } >big.log
	[ "$(stat -c %s big.log)" -gt 50000000 ] || fail "big.log is not as large as meant"
	slow 2 "big.log: error: expected an nccl-tests log of at most 8 MiB" verify "$SMALL" \
		--nccl-tests big.log
	slow 2 "standard input: error: expected an nccl-tests log of at most 8 MiB" verify "$SMALL" \
		--nccl-tests - <big.log
}

# 5,000 rows in 600 kB: refused at the 4,097th
case_nccl_log_rows() {
	{ log_head
	  awk 'BEGIN { for (i = 1; i <= 5000; i++) printf " 0: %d %d float sum -1 215.3 38.96 73.04 N/A 180.0 46.60 87.38 N/A\n", 4 * i, i }'
	  log_tail; } >rows.log
	slow 2 "rows.log:4120: error: rows: expected at most 4096 data rows" verify "$SMALL" \
		--nccl-tests rows.log
}

# 150,000 rank lines, each on a host of its own (6 MB): read in one pass
# (the hosts were a list searched for each line: 1e10 comparisons), then
# refused for having more ranks than the scenario's GPUs
case_nccl_log_rank_lines() {
	{ head -n 1 "$LOG"
	  awk 'BEGIN { for (r = 0; r < 150000; r++) printf "#Rank %d Pid %d on h%d device 0 G\n", r, 1000 + r, r }'
	  tail -n +20 "$LOG"; } >ranks.log
	slow 2 "ranks: expected at most the scenario's 64 GPUs" verify "$SMALL" --nccl-tests ranks.log
	has "found 150000"
}

# ---- micro-batches -----------------------------------------------------------------------

# a global batch of 10^6: 125,000 micro-batches a replica, 5e6 pipeline
# tasks; every path that simulates a step refuses it before it starts
case_global_batch_1e6() {
	local tl="more than workload.task-limit = 2e+06; raise the limit to run it"
	slow 2 "$tl" run "$S" --set workload.global-batch=1000000
	has "one step is 5e+06 pipeline tasks (2 x 125000 micro-batches x pp 4 x 5 chunks"
	slow 2 "$tl" scale "$S" --gpus 256,512 --set workload.global-batch=1000000
	# strong scaling to fewer GPUs gives each replica more micro-batches:
	# every size is checked before the first runs
	slow 2 "$tl" scale "$S" --gpus 256,128 --strong --set workload.global-batch=256000
	has "--gpus 128 ("
	# the optimiser starts from any layout, so the scenario's own being over
	# the limit refuses nothing: the search is bounded by its own limits on
	# work, refused before the first simulation when past them
	slow 2 "more than --max-simulations 10" optimize "$S" --set workload.global-batch=1000000 \
		--max-simulations 10
	# the optimiser's screens: each layout over the limit is dropped, not run
	slow 0 '"top"' optimize "$SMALL" --set workload.global-batch=1000000 --json --top 1
	grep -q "more than workload.task-limit" "$OUT" ||
		fail "optimize: no layout was dropped by the task limit"
	# the sweep: the point is refused (a failed point) and the others run
	cat >s.xml <<-EOF
	<?xml version="1.0" encoding="UTF-8"?>
	<sweep name="big-batch">
	  <base scenario="$S"/>
	  <set path="reliability.runs" value="0"/>
	  <axis path="workload.global-batch" values="512, 1000000"/>
	</sweep>
	EOF
	slow 0 "1 ok, 1 failed" sweep s.xml --db r.sqlite
	slow 0 "workload.task-limit" query --db r.sqlite --failed
}
