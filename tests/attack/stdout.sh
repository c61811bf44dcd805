# stdout.sh - standard output on a full device: every command exits 1 and
# says "capsim: writing standard output: No space left on device" on
# standard error (docs/user-guide.md). The shell opens the real /dev/full
# for reading and writing only; capsim never sees its name, so nothing in
# /dev can change.
NS_CASES=""

need_dev_full() {
	[ -c /dev/full ] || skip "no /dev/full here"
}

# full COMMAND ARGS...: capsim ARGS > /dev/full
full() {
	"$CAPSIM" "$@" >/dev/full 2>"$ERR"
	check $? 1 "capsim: writing standard output: No space left on device" \
		"capsim $(short "$@") > /dev/full"
}

case_run() {
	need_dev_full
	full run "$S"
	full run "$S" --json
	full run "$SMALL" --verbose
}

case_bom() {
	need_dev_full
	full bom "$S"
	full bom "$S" --json
}

case_validate() {
	need_dev_full
	full validate "$S"
	full validate "$S" --json
	full validate --paths "$S"
}

# the resolved scenario on a full standard output is a runtime failure (1),
# not bad input (2)
case_validate_resolved() {
	need_dev_full
	full validate "$S" --resolved
}

case_collective() {
	need_dev_full
	full collective "$SMALL" --op all-reduce --bytes 1GiB
	full collective "$SMALL" --op all-reduce --sweep 8B:8GiB
	full collective "$SMALL" --op all-to-all --bytes 1MiB --json
}

case_catalog() {
	need_dev_full
	full catalog
	full catalog gpus
	full catalog models --json
	full catalog refs
}

# scale flushes each row as it goes; the final message must still name ENOSPC
case_scale() {
	need_dev_full
	full scale "$SMALL" --gpus 16,32,64
	full scale "$SMALL" --gpus 16,32 --json
}

# the trace to standard output (--trace -) on a full device: exit 1, and
# nothing claims success
case_trace_to_stdout() {
	need_dev_full
	"$CAPSIM" run "$S" --trace - >/dev/full 2>"$ERR"
	check $? 1 "cannot write" "capsim run S --trace - > /dev/full"
}

# a smaller report than stdio's buffer: caught at the final flush
case_version_help() {
	need_dev_full
	full --version
	full --help
	full run --help
}
