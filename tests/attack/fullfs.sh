# fullfs.sh - a file system that fills up mid-write: a 64 KiB tmpfs in a
# private mount namespace. A write that does not fit exits 1 and names the
# target; no partial file is left at the target, no temporary beside it,
# and an existing target (or the file behind a symlink) keeps its content.
NS_CASES="trace_new trace_existing trace_symlink trace_reason csv_full validate_out_full fit_out_full"

# fill DIR: fill the tmpfs at DIR to the last byte (a file named .filler)
fill() {
	dd if=/dev/zero of="$1/.filler" bs=4k 2>/dev/null
	dd if=/dev/zero of="$1/.filler2" bs=1 2>/dev/null
	true
}

# the default scenario's trace is 249 kB: it cannot fit in 64 KiB
case_trace_new() {
	tmpfs w 64k
	cap 1 "w/t.json: error: cannot write" run "$S" --trace w/t.json
	[ -z "$(ls -A w)" ] || fail "left behind on the full file system: $(ls -A w)"
}

case_trace_existing() {
	tmpfs w 64k
	echo '{"the old trace": true}' >w/t.json
	chmod 0640 w/t.json
	local before
	before=$(tree w)
	cap 1 "w/t.json: error: cannot write" run "$S" --trace w/t.json
	same_tree "a trace that does not fit" "$before" "$(tree w)"
}

# the symlink is followed, and the file behind it is replaced whole or not
# at all, like a file named directly
case_trace_symlink() {
	tmpfs w 64k
	echo '{"the old trace": true}' >w/real.json
	ln -s real.json w/t.json
	local before
	before=$(tree w)
	cap 1 "w/t.json: error: cannot write" run "$S" --trace w/t.json
	same_tree "a trace through a symlink that does not fit" "$before" "$(tree w)"
}

# the message should say why
case_trace_reason() {
	tmpfs w 64k
	cap 1 "w/t.json: error: cannot write" run "$S" --trace w/t.json
	grep -qF "No space left on device" "$ERR" ||
		fail "no 'No space left on device' in: $(head -c 300 "$ERR")"
}

# scale --csv into a file system with no byte left: the old CSV is kept
case_csv_full() {
	tmpfs w 64k
	cap 0 "" scale "$SMALL" --gpus 16 --csv w/c.csv
	fill w
	local before
	before=$(tree w)
	cap 1 "w/c.csv: error: cannot write: No space left on device" \
		scale "$SMALL" --gpus 16,32,64 --csv w/c.csv
	same_tree "scale --csv on a full file system" "$before" "$(tree w)"
}

case_validate_out_full() {
	tmpfs w 64k
	echo '<!-- the old resolved scenario -->' >w/r.xml
	fill w
	local before
	before=$(tree w)
	# the write fails as the XML is written, or at the close when it fits
	# in stdio's buffer: either way the file is named and the old one kept
	cap 1 "w/r.xml: error: cannot write" \
		validate "$SMALL" --resolved --out w/r.xml
	same_tree "validate --out on a full file system" "$before" "$(tree w)"
}

# fit --out, new and --force: the profile is written whole or not at all
case_fit_out_full() {
	cap 0 "" calibrate import "$GEMM" --db m.sqlite
	tmpfs w 64k
	echo '<!-- the old profile -->' >w/p.xml
	fill w
	local before
	before=$(tree w)
	cap 1 "w/p.xml" fit --db m.sqlite --out w/p.xml --force
	cap 1 "w/new.xml" fit --db m.sqlite --out w/new.xml
	same_tree "fit --out on a full file system" "$before" "$(tree w)"
}
