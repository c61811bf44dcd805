# pipes.sh - inputs and outputs that are pipes, FIFOs and closed descriptors.
#
# What the command line accepts: a scenario, file to validate or run to
# import is a path that fopen reads, so /dev/stdin, /dev/fd/N (a shell's
# <(...)) and a FIFO all work; "-" is not standard input for any input (it
# is refused as a missing file, exit 2). "-" is standard output for
# --trace, --out and --csv.
NS_CASES=""

case_validate_procsub() {
	"$CAPSIM" validate <(cat "$S") >"$OUT" 2>"$ERR"
	check $? 0 ": ok" "capsim validate <(cat S)"
	grep -qF "cluster   32 x dgx-h100 = 256 GPUs" "$OUT" || fail "validate <(cat S): no resolved summary"
}

case_run_dev_stdin() {
	"$CAPSIM" run /dev/stdin <"$S" >"$OUT" 2>"$ERR"
	check $? 0 "step time" "capsim run /dev/stdin < S"
	cat "$S" | "$CAPSIM" run /dev/stdin --json >"$OUT" 2>"$ERR"
	check $? 0 '"step_time_s"' "cat S | capsim run /dev/stdin --json"
	"$CAPSIM" run "$S" --json >plain.json 2>/dev/null
	# the same numbers as from the file (the inputs' names and digests aside)
	grep '"step_time_s"' plain.json >a
	grep '"step_time_s"' "$OUT" >b
	cmp -s a b || fail "run through a pipe gives another step time than from the file"
}

# "-" is not an input name: refused as a file that does not exist
case_run_dash() {
	"$CAPSIM" run - <"$S" >"$OUT" 2>"$ERR"
	check $? 2 "-: error: cannot open: No such file or directory" "capsim run - < S"
}

case_fifo_input() {
	mkfifo in.xml
	(cat "$S" >in.xml &)
	timeout 20 "$CAPSIM" run in.xml >"$OUT" 2>"$ERR"
	check $? 0 "step time" "capsim run FIFO"
	(cat "$S" >in.xml &)
	timeout 20 "$CAPSIM" validate in.xml >"$OUT" 2>"$ERR"
	check $? 0 "in.xml: ok" "capsim validate FIFO"
	# a FIFO whose writer sends nothing: empty input, exit 2, no hang
	(: >in.xml &)
	timeout 20 "$CAPSIM" validate in.xml >"$OUT" 2>"$ERR"
	check $? 2 "in.xml:1: error: Document is empty" "capsim validate EMPTY-FIFO"
}

# --trace into a FIFO: written through (a FIFO is not replaced)
case_fifo_output() {
	mkfifo t.json
	(cat t.json >got.json &)
	timeout 20 "$CAPSIM" run "$S" --trace t.json >"$OUT" 2>"$ERR"
	check $? 0 "step time" "capsim run S --trace FIFO"
	sleep 0.2
	[ -p t.json ] || fail "t.json is no longer a FIFO"
	is_whole_trace got.json || fail "the FIFO's reader did not get a whole trace"
}

case_calibrate_import_pipe() {
	cat "$GEMM" | "$CAPSIM" calibrate import /dev/stdin --db m.sqlite >"$OUT" 2>"$ERR"
	check $? 0 "/dev/stdin: run 1 in m.sqlite: 65 GEMMs" "cat GEMM | capsim calibrate import /dev/stdin"
	# the same bytes again, from the file: refused by their SHA-256
	cap 2 "already imported into m.sqlite as run 1 (same SHA-256)" calibrate import "$GEMM" --db m.sqlite
	# "-" is standard input, and says so
	"$CAPSIM" calibrate import - --db n.sqlite <"$GEMM" >"$OUT" 2>"$ERR"
	check $? 0 "standard input: run 1 in n.sqlite: 65 GEMMs" "capsim calibrate import - < GEMM"
	# an empty one is refused, and no database is created
	"$CAPSIM" calibrate import - --db e.sqlite </dev/null >"$OUT" 2>"$ERR"
	check $? 2 "standard input: error: no 'machine' line" "capsim calibrate import - < /dev/null"
	[ -e e.sqlite ] && fail "calibrate import - < /dev/null created e.sqlite"
	# a FIFO
	mkfifo g.jsonl
	(cat "$SRC/calibrate/results/h200-2026-12-02-gemm-b.jsonl" >g.jsonl &)
	timeout 20 "$CAPSIM" calibrate import g.jsonl --db m.sqlite >"$OUT" 2>"$ERR"
	check $? 0 "g.jsonl: run 2 in m.sqlite" "capsim calibrate import FIFO"
}

# a closed standard output: exit 1 with a message, never a crash; what is
# written to files is whole and lands where it should, not on descriptor 1
case_closed_stdout() {
	local c
	for c in "run $S" "validate $S" "catalog gpus" "collective $SMALL --op all-reduce --bytes 1GiB"; do
		# shellcheck disable=SC2086
		"$CAPSIM" $c >&- 2>"$ERR"
		check $? 1 "capsim: writing standard output: Bad file descriptor" "capsim $c >&-"
	done
}

# scale flushes row by row; the reason must survive to the final message
case_closed_stdout_scale() {
	"$CAPSIM" scale "$SMALL" --gpus 16,32 >&- 2>"$ERR"
	check $? 1 "capsim: writing standard output: Bad file descriptor" "capsim scale SMALL --gpus 16,32 >&-"
}

case_closed_stdout_files() {
	mkdir w
	"$CAPSIM" run "$S" --trace w/t.json >&- 2>"$ERR"
	check $? 1 "writing standard output" "capsim run S --trace w/t.json >&-"
	is_whole_trace w/t.json || fail "the trace is not whole with standard output closed"
	[ "$(ls -A w)" = t.json ] || fail "left in w/: $(ls -A w)"
	"$CAPSIM" calibrate import "$GEMM" --db w/m.sqlite >&- 2>"$ERR"
	check $? 1 "writing standard output" "capsim calibrate import GEMM --db w/m.sqlite >&-"
	# the database took no report bytes: it still reads and fits
	cap 0 "wrote w/p.xml" fit --db w/m.sqlite --out w/p.xml
	cap 0 "w/p.xml: ok" validate w/p.xml
}

# standard output a pipe whose reader is gone, SIGPIPE ignored: EPIPE, exit 1
case_broken_pipe() {
	(
		trap '' PIPE
		"$CAPSIM" catalog 2>"$ERR" | true
		exit "${PIPESTATUS[0]}"
	)
	check $? 1 "capsim: writing standard output: Broken pipe" "capsim catalog | true (SIGPIPE ignored)"
}

# closed standard input and error: no effect on a run that reads neither
case_closed_stdin_stderr() {
	"$CAPSIM" run "$S" <&- >"$OUT" 2>"$ERR"
	check $? 0 "step time" "capsim run S <&-"
	"$CAPSIM" run "$S" 2>&- >"$OUT"
	local rc=$?
	[ "$rc" -eq 0 ] || fail "capsim run S 2>&-: exit $rc"
	"$CAPSIM" run /nonexistent.xml 2>&- >"$OUT"
	rc=$?
	[ "$rc" -eq 2 ] || fail "capsim run /nonexistent.xml 2>&-: exit $rc, expected 2"
}

# endless inputs: the input caps stop them (8 MiB for XML, 256 MiB for a
# run to import), exit 2, nothing created
case_endless_input() {
	[ -c /dev/zero ] && [ -c /dev/urandom ] || skip "no /dev/zero or /dev/urandom"
	bad_cap() {
		check "$1" 2 "$2" "$3"
	}
	"$CAPSIM" validate /dev/zero >"$OUT" 2>"$ERR"
	bad_cap $? "/dev/zero: error: file is larger than the 8388608-byte cap on input files" "capsim validate /dev/zero"
	"$CAPSIM" run /dev/urandom >"$OUT" 2>"$ERR"
	bad_cap $? "/dev/urandom: error: file is larger than the 8388608-byte cap on input files" "capsim run /dev/urandom"
	"$CAPSIM" calibrate import /dev/zero --db z.sqlite >"$OUT" 2>"$ERR"
	bad_cap $? "/dev/zero: error: larger than 256 MiB" "capsim calibrate import /dev/zero"
	[ -e z.sqlite ] && fail "an endless import created z.sqlite"
	true
}
