# res.sh - resource bounds: running out of memory is a runtime failure
# (exit 1, "capsim: out of memory (N bytes)" on standard error; xalloc.h),
# never an abort or a sanitizer report, and leaves no output temporary
# behind (an existing output file keeps its content).
#
# The job: `scale --csv` of a step of 262144 sequences (1.3 M pipeline
# tasks, about 160 MB), whose CSV temporary is open while it runs.
# - oom_ulimit: under `ulimit -v 100000` (100 MB of address space). That
#   needs a build without AddressSanitizer, which reserves terabytes of
#   address space at start: the binary under test if it is one, else
#   $CAPSIM_ATTACK_PLAIN, else build-gcc/ (CI's gcc build), build/ or
#   build-plain/ of the source tree; skipped when none is there or it is
#   older than the sources.
# - oom_asan: the ASan build with ASAN_OPTIONS allocator_may_return_null=1
#   and max_allocation_size_mb=4, so that its malloc returns NULL as libc's
#   does; skipped for a build without ASan.
NS_CASES=""

is_asan() {
	grep -q __asan_init "$1" 2>/dev/null
}

# oom BINARY: the big job must run out of memory cleanly
oom() {
	local bin=$1
	mkdir w
	printf 'the old csv\n' >w/c.csv
	local before
	before=$(tree w)
	timeout 60 "$bin" scale "$S" --gpus 256 --csv w/c.csv \
		--set workload.global-batch=262144 >"$OUT" 2>"$ERR"
	check $? 1 "capsim: out of memory (" "capsim scale S --gpus 256 --csv w/c.csv (262144 sequences)"
	grep -q "Aborted\|core dumped" "$ERR" && fail "an abort"
	[ -s "$OUT" ] && fail "a half-printed report reached standard output: $(head -c 200 "$OUT")"
	same_tree "out of memory while the CSV was being written" "$before" "$(tree w)"
}

case_oom_ulimit() {
	local bin="" c
	if ! is_asan "$CAPSIM"; then
		bin=$CAPSIM
	else
		for c in "${CAPSIM_ATTACK_PLAIN:-}" "$SRC/build-gcc/capsim" "$SRC/build/capsim" \
			"$SRC/build-plain/capsim"; do
			if [ -n "$c" ] && [ -x "$c" ] && ! is_asan "$c"; then
				bin=$c
				break
			fi
		done
	fi
	[ -n "$bin" ] || skip "no build without AddressSanitizer (ulimit -v cannot bound an ASan binary)"
	if [ -n "$(find "$SRC/src" -newer "$bin" -name '*.[ch]' | head -n 1)" ]; then
		skip "$bin is older than the sources"
	fi
	echo "  using $bin under ulimit -v 100000"
	( ulimit -v 100000 || skip "ulimit -v is refused"; oom "$bin"; exit "$failed" ) || failed=1
}

case_oom_asan() {
	is_asan "$CAPSIM" || skip "$CAPSIM is not built with AddressSanitizer (oom_ulimit covers it)"
	ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=4:detect_leaks=0 oom "$CAPSIM"
}

# the limits on work refuse a job before it runs, with exit 2 (not an
# attempt that runs out of memory); past the flow limit a collective is
# not simulated but routed and counted, its pairs sampled past 64 routes a
# flow of the limit (4.2 M pairs, 64,000 routes), which the result says
case_limits_refuse() {
	cap 2 "workload.task-limit" run "$S" --set workload.global-batch=1048576
	cap 0 "the all-to-all's pairs are sampled" collective "$S" --set cluster.nodes=256 \
		--op all-to-all --bytes 1GiB --ranks 2048 --no-fold --set workload.flow-limit=1000
}
