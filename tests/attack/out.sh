# out.sh - output paths: --trace, scale --csv, validate --out, fit --out.
#
# The behaviour asserted (src/util/outfile.h):
# - a regular file or a new name is written to a mkstemp temporary beside it
#   and renamed over it: a symlink planted at any guessable temporary name is
#   never followed, nothing else in the directory changes;
# - a symlink given as the target is the user's own and is followed, for
#   every command alike: the regular file it names (or the name it ends at)
#   is replaced whole, the link stays a link;
# - a device is written in place and stays a device;
# - a missing, read-only or non-directory target fails with exit 1 and
#   "PATH: error: cannot write: REASON", leaving the directory as it was.
NS_CASES="readonly_dir_mount trace_dev_full trace_dev_full_reason devnull_outputs literal_dev_paths"

# names a writer might use for its temporary, each planted as a symlink
planted="t.json.tmp t.json.new t.json.part t.json~ .t.json.tmp .t.json.swp t.json.tmp.0
t.json.XXXXXX t.json.1 t.json.bak #t.json#"

case_planted_tmp_symlinks() {
	mkdir w
	echo "the victim: must not change" >victim
	chmod 0600 victim
	local n
	for n in $planted; do ln -s ../victim "w/$n"; done
	ln -s ../created-through-a-link w/t.json.tmp.1   # dangling: must not be created
	local before
	before=$(tree w)
	local vsum
	vsum=$(sha256sum <victim)
	cap 0 "step time" run "$S" --trace w/t.json
	is_whole_trace w/t.json || fail "w/t.json is not a whole trace in a regular file"
	[ "$(sha256sum <victim)" = "$vsum" ] || fail "the victim behind a planted link changed"
	[ "$(stat -c %a victim)" = 600 ] || fail "the victim's mode changed"
	[ -e created-through-a-link ] && fail "a dangling planted link was followed"
	same_tree "run --trace" "$before" "$(tree w | grep -v '^\./t\.json f ')"
	# the same plants against scale --csv and validate --out
	for n in $planted; do ln -s ../victim "w/c${n#t}"; ln -s ../victim "w/r${n#t}"; done
	before=$(tree w)
	cap 0 "" scale "$SMALL" --gpus 16,32 --csv w/c.json
	cap 0 "" validate "$SMALL" --resolved --out w/r.json
	[ -f w/c.json ] && [ ! -L w/c.json ] || fail "scale --csv did not write w/c.json"
	[ -f w/r.json ] && [ ! -L w/r.json ] || fail "validate --out did not write w/r.json"
	[ "$(sha256sum <victim)" = "$vsum" ] || fail "the victim behind a planted link changed"
	same_tree "scale --csv, validate --out" "$before" \
		"$(tree w | grep -v -e '^\./c\.json f ' -e '^\./r\.json f ')"
}

# the user's own symlink is followed by every writer alike: what lands in
# the file behind it is exactly what a plain file gets, its mode is kept,
# the link stays, and no temporary is left on either side
case_target_symlink_to_file() {
	mkdir w other
	cap 0 "" run "$S" --trace plain.json
	cap 0 "" scale "$SMALL" --gpus 16,32 --csv plain.csv
	cap 0 "" validate "$SMALL" --resolved --out plain.xml
	local f
	for f in json csv xml; do
		printf 'an old text, longer than nothing\n' >"other/real.$f"
		chmod 0640 "other/real.$f"
		ln -s "../other/real.$f" "w/link.$f"
	done
	cap 0 "" run "$S" --trace w/link.json
	cap 0 "" scale "$SMALL" --gpus 16,32 --csv w/link.csv
	cap 0 "" validate "$SMALL" --resolved --out w/link.xml
	for f in json csv xml; do
		[ -L "w/link.$f" ] && [ "$(readlink "w/link.$f")" = "../other/real.$f" ] ||
			fail "w/link.$f is no longer the same symlink"
		[ -f "other/real.$f" ] && [ ! -L "other/real.$f" ] || fail "other/real.$f is not a regular file"
		cmp -s "other/real.$f" "plain.$f" ||
			fail "other/real.$f (through the link) differs from plain.$f"
		[ "$(stat -c %a "other/real.$f")" = 640 ] || fail "other/real.$f lost its mode 0640"
	done
	[ "$(ls -A w | wc -l)" -eq 3 ] || fail "w/ holds more than its three links: $(ls -A w)"
	[ "$(ls -A other | wc -l)" -eq 3 ] || fail "other/ holds more than its three files: $(ls -A other)"
	# an absolute link to a relative one: a chain, each read from its directory
	ln -s "$T/w/link.json" chain.json
	cap 0 "" run "$SMALL" --trace chain.json
	[ -L chain.json ] && [ -L w/link.json ] || fail "a link of the chain was replaced"
	cap 0 "" run "$SMALL" --trace small.json
	cmp -s other/real.json small.json || fail "the chain's end did not get the trace"
}

# a link to a name that does not exist yet: the name it ends at is created,
# whole; a link to itself is refused (ELOOP) and nothing is created
case_target_symlink_dangling() {
	mkdir w
	ln -s new.json w/t.json
	cap 0 "" run "$S" --trace w/t.json
	[ -L w/t.json ] || fail "w/t.json is no longer a symlink"
	is_whole_trace w/new.json || fail "w/new.json (the link's target) is not a whole trace"
	ln -s loop.json w/loop.json
	local before
	before=$(tree w)
	cap 1 "w/loop.json: error: cannot write: Too many levels of symbolic links" \
		run "$S" --trace w/loop.json
	same_tree "a symlink loop" "$before" "$(tree w)"
}

case_missing_dir() {
	mkdir w
	echo keep >w/other
	local before
	before=$(tree w)
	cap 1 "w/nodir/t.json: error: cannot write: No such file or directory" \
		run "$S" --trace w/nodir/t.json
	cap 1 "w/nodir/c.csv: error: cannot write: No such file or directory" \
		scale "$SMALL" --gpus 16 --csv w/nodir/c.csv
	cap 1 "w/nodir/r.xml: error: cannot write: No such file or directory" \
		validate "$SMALL" --resolved --out w/nodir/r.xml
	cap 1 "w/other/t.json: error: cannot write: Not a directory" \
		run "$S" --trace w/other/t.json
	same_tree "a missing directory" "$before" "$(tree w)"
}

# root ignores permission bits: a read-only tmpfs in the namespace
case_readonly_dir_mount() {
	tmpfs rw 1m
	echo "the old trace" >rw/t.json
	mkdir w
	# a read-only bind of it (works in a user namespace too, where a
	# remount of the tmpfs itself is refused)
	{ mount --bind rw w && mount -o remount,bind,ro w; } 2>/dev/null ||
		skip "cannot bind-mount a directory read-only"
	local before
	before=$(tree w)
	cap 1 "w/t.json: error: cannot write: Read-only file system" run "$S" --trace w/t.json
	cap 1 "w/new.json: error: cannot write: Read-only file system" run "$S" --trace w/new.json
	cap 1 "w/c.csv: error: cannot write: Read-only file system" \
		scale "$SMALL" --gpus 16 --csv w/c.csv
	same_tree "a read-only directory" "$before" "$(tree w)"
}

# not root: a directory without write permission
case_readonly_dir_chmod() {
	[ "$(id -u)" -eq 0 ] && skip "root ignores permission bits (readonly_dir_mount covers it)"
	mkdir w
	echo "the old trace" >w/t.json
	chmod 0555 w
	local before
	before=$(tree w)
	cap 1 "w/t.json: error: cannot write: Permission denied" run "$S" --trace w/t.json
	same_tree "a read-only directory" "$before" "$(tree w)"
	chmod 0755 w
}

case_target_is_dir() {
	mkdir -p w/d
	echo keep >w/d/inside
	local before
	before=$(tree w)
	cap 1 "w/d: error: cannot write: Is a directory" run "$S" --trace w/d
	cap 1 "w/d: error: cannot write: Is a directory" scale "$SMALL" --gpus 16 --csv w/d
	cap 1 "w/d: error: cannot write: Is a directory" validate "$SMALL" --resolved --out w/d
	ln -s d w/dlink
	before=$(tree w)
	cap 1 "w/dlink: error: cannot write: Is a directory" run "$S" --trace w/dlink
	same_tree "a directory as the target" "$before" "$(tree w)"
}

case_long_path() {
	local long
	long=w/$(printf '%05000d' 0)
	mkdir w
	cap 1 "cannot write: File name too long" run "$SMALL" --trace "$long"
	long=w/$(printf '%0300d' 0)
	cap 1 "cannot write: File name too long" run "$SMALL" --trace "$long"
	[ -z "$(ls -A w)" ] || fail "something was created: $(ls -A w)"
}

# --trace onto a full device: a private /dev/full-like node (c 1 7) on a
# tmpfs of the namespace, never the real /dev
case_trace_dev_full() {
	tmpfs dev 64k
	devnode dev/full 1 7
	local before
	before=$(tree dev)
	cap 1 "dev/full: error: cannot write" run "$S" --trace dev/full
	is_chardev dev/full 1 7 || fail "dev/full is no longer the character device 1,7"
	same_tree "--trace onto a full device" "$before" "$(tree dev)"
}

# the same, asserting the reason (ENOSPC) is named
case_trace_dev_full_reason() {
	tmpfs dev 64k
	devnode dev/full 1 7
	cap 1 "dev/full: error: cannot write" run "$S" --trace dev/full
	grep -qF "No space left on device" "$ERR" ||
		fail "the message does not say why: no 'No space left on device' in: $(head -c 300 "$ERR")"
}

# every writer onto a null device (c 1 3): exit 0, and it stays a device
case_devnull_outputs() {
	tmpfs dev 64k
	devnode dev/null 1 3
	cap 0 "" calibrate import "$GEMM" --db m.sqlite
	local before
	before=$(tree dev)
	cap 0 "step time" run "$S" --trace dev/null
	cap 0 "" scale "$SMALL" --gpus 16,32 --csv dev/null
	cap 0 "" validate "$SMALL" --resolved --out dev/null
	cap 0 "wrote dev/null" fit --db m.sqlite --out dev/null --force
	cap 2 "dev/null exists; give --force" fit --db m.sqlite --out dev/null
	is_chardev dev/null 1 3 || fail "dev/null is no longer the character device 1,3"
	same_tree "writers onto a null device" "$before" "$(tree dev)"
}

# the literal names /dev/full and /dev/null: in the namespace, private nodes
# are bind-mounted over them (the real /dev is never written: a bind mount
# of this namespace only, gone with it)
case_literal_dev_paths() {
	tmpfs dev 64k
	devnode dev/full 1 7
	devnode dev/null 1 3
	{ mount --bind dev/full /dev/full && mount --bind dev/null /dev/null; } 2>/dev/null ||
		skip "cannot bind-mount over /dev/full and /dev/null"
	cap 0 "" calibrate import "$GEMM" --db m.sqlite
	cap 1 "/dev/full: error: cannot write" run "$S" --trace /dev/full
	cap 0 "" scale "$SMALL" --gpus 16,32 --csv /dev/null
	cap 0 "wrote /dev/null" fit --db m.sqlite --out /dev/null --force
	cap 0 "step time" run "$S" --trace /dev/null
	is_chardev /dev/full 1 7 || fail "/dev/full is no longer the character device 1,7"
	is_chardev /dev/null 1 3 || fail "/dev/null is no longer the character device 1,3"
	is_chardev dev/full 1 7 && is_chardev dev/null 1 3 || fail "a private node was replaced"
	[ "$(ls -A dev | wc -l)" -eq 2 ] || fail "left in dev/: $(ls -A dev)"
}

# "-" is standard output; "./-" is a file of that name
case_dash_names() {
	cap 0 '"traceEvents"' run "$SMALL" --trace -
	is_whole_trace ./- && fail "--trace - wrote a file named -"
	cap 0 "step time" run "$SMALL" --trace ./-
	is_whole_trace ./- || fail "--trace ./- did not write the file ./-"
}

# four writers of one target at once: it ends as one of their whole
# outputs, never a mix, and no temporary is left
case_concurrent_writers() {
	mkdir w
	local i sc=("$S" "$SMALL" "$SRC/scenarios/h100-256-lustre.xml" "$SRC/scenarios/nvswitch-pod-128.xml")
	for i in 0 1 2 3; do
		"$CAPSIM" run "${sc[$i]}" --trace "one$i.json" >/dev/null 2>&1 || fail "run ${sc[$i]} failed"
	done
	for i in 0 1 2 3; do
		"$CAPSIM" run "${sc[$i]}" --trace w/t.json >/dev/null 2>"$ERR.$i" &
	done
	wait
	local same=0
	for i in 0 1 2 3; do cmp -s w/t.json "one$i.json" && same=1; done
	[ "$same" -eq 1 ] || fail "w/t.json is none of the four traces whole"
	[ "$(ls -A w)" = t.json ] || fail "left in w/: $(ls -A w)"
}
