#!/bin/sh
# store_errors.sh CAPSIM SOURCE_DIR - the store's failures that need a file
# system of their own, each given one in a private mount namespace
# (unshare -m; as root): a database on a read-only mount, and a file system
# that fills up during an import. Each exits 1 with a message naming the
# database; a full disk leaves no database that the import created. Exits
# 77 (skipped) where unshare -m cannot mount a tmpfs.
#
# store_errors.sh CAPSIM SOURCE_DIR inside TMP is the part run inside the
# namespace.
set -u
capsim=$1
src=$2
results=$src/calibrate/results/h200-2026-12-02

fail() {
	echo "store_errors: FAIL: $*" >&2
	exit 1
}

# expect STATUS NEEDLE CMD...: CMD exits STATUS and its stderr holds NEEDLE
expect() {
	want=$1 needle=$2
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq "$want" ] || fail "$* exited $rc, expected $want: $(cat "$tmp/err")"
	[ -z "$needle" ] || grep -qF -- "$needle" "$tmp/err" ||
		fail "$*: expected '$needle' in: $(cat "$tmp/err")"
}

inside() {
	tmp=$1
	# read-only: a bind mount of ro/ remounted read-only
	mount --bind "$tmp/ro" "$tmp/ro" && mount -o remount,bind,ro "$tmp/ro" ||
		fail "cannot mount $tmp/ro read-only"
	expect 1 "$tmp/ro/m.sqlite: error: read-only" \
		"$capsim" calibrate import "$results-pcie.jsonl" --db "$tmp/ro/m.sqlite"
	expect 1 "$tmp/ro/new.sqlite: error: cannot open the database: read-only" \
		"$capsim" calibrate import "$results-pcie.jsonl" --db "$tmp/ro/new.sqlite"
	# reading needs no writing
	expect 0 "" "$capsim" fit --db "$tmp/ro/m.sqlite" --out "$tmp/profile.xml"

	# full: a 256 KiB tmpfs holding the run of pcie, then filled to its last
	# 32 KiB, too few for the run of gemm-b
	mount -t tmpfs -o size=256k tmpfs "$tmp/full" || fail "cannot mount a tmpfs"
	expect 0 "" "$capsim" calibrate import "$results-pcie.jsonl" --db "$tmp/full/m.sqlite"
	cp "$tmp/full/m.sqlite" "$tmp/before.sqlite"
	avail=$(df -k "$tmp/full" | awk 'NR == 2 { print $4 }')
	dd if=/dev/zero of="$tmp/full/filler" bs=1k count=$((avail - 32)) 2>/dev/null ||
		fail "cannot fill $tmp/full"
	expect 1 "$tmp/full/new.sqlite: error: disk full" \
		"$capsim" calibrate import "$results-gemm-b.jsonl" --db "$tmp/full/new.sqlite"
	for f in "$tmp/full/new.sqlite" "$tmp/full/new.sqlite-journal"; do
		[ ! -e "$f" ] || fail "a full disk left $f behind"
	done
	# a database that was there stays, as it was
	expect 1 "$tmp/full/m.sqlite: error: disk full" \
		"$capsim" calibrate import "$results-gemm-b.jsonl" --db "$tmp/full/m.sqlite"
	cmp -s "$tmp/full/m.sqlite" "$tmp/before.sqlite" || fail "a full disk changed m.sqlite"
	[ ! -e "$tmp/full/m.sqlite-journal" ] || fail "a full disk left m.sqlite-journal behind"
	exit 0
}

if [ "${3:-}" = inside ]; then
	inside "$4"
fi

tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
if ! unshare -m sh -c "mount -t tmpfs -o size=64k tmpfs '$tmp'" 2>/dev/null; then
	echo "store_errors: skipped: unshare -m cannot mount here (not root?)"
	exit 77
fi
mkdir "$tmp/ro" "$tmp/full" || fail "mkdir"
expect 0 "" "$capsim" calibrate import "$results-gemm.jsonl" --db "$tmp/ro/m.sqlite"
unshare -m sh "$0" "$capsim" "$src" inside "$tmp" || exit 1
