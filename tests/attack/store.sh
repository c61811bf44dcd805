# store.sh - the sweep store (capsim sweep --db, capsim query --db): a path
# that is no store file (a device, a FIFO, a directory, a symlink to one of
# them, `-`) is refused before SQLite opens it, and nothing is created
# beside it; a finished store is read on a read-only mount and in a
# directory the reader cannot write, and a reader never leaves a file
# beside the store; a missing sweep is said plainly; a hostile store's
# names stay data in CSV and in the terminal; a sweep on 64 threads counts
# its threads right.
NS_CASES="dev_null_private dev_null_literal symlink_to_device readonly_mount readonly_mount_wal"

# a sweep of three points that all run (a GPT-2 on one H200)
sweepfile() {
	cat >"$1" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<sweep name="store-attack">
  <base scenario="$SRC/scenarios/gpt2-124m-1xh200.xml"/>
  <axis path="cost.utilization" values="0.3, 0.5, 0.7"/>
</sweep>
EOF
}

# mkstore DB [ARGS]: a finished store of that sweep at DB, or fail
mkstore() {
	local db=$1
	shift
	[ -f "$T/sweep.xml" ] || sweepfile "$T/sweep.xml"
	"$CAPSIM" sweep "$T/sweep.xml" --db "$db" --no-progress "$@" >"$OUT" 2>"$ERR" ||
		fail "capsim sweep --db $db: exit $?: $(head -c 300 "$ERR")"
}

need_sqlite() {
	command -v sqlite3 >/dev/null 2>&1 || skip "the sqlite3 command is not installed"
}

# wal DB: put DB in write-ahead-log mode, as another program may leave it
# (sqlite3 removes its -wal when it closes), and check that it is
wal() {
	[ "$(sqlite3 "$1" 'PRAGMA journal_mode=WAL')" = wal ] || fail "$1: not in WAL mode"
	[ "$(od -An -tu1 -j18 -N2 "$1" | tr -s ' ')" = " 2 2" ] || fail "$1: header not WAL"
	[ ! -e "$1-wal" ] || fail "$1-wal left by sqlite3"
}

# capt STATUS TEXT ARGS...: cap, but killed after 30 s (a FIFO opened as a
# database waits for a writer for ever)
capt() {
	local want=$1 text=$2
	shift 2
	timeout 30 "$CAPSIM" "$@" >"$OUT" 2>"$ERR"
	local got=$?
	[ "$got" -ne 124 ] || fail "capsim $(short "$@"): still running after 30 s"
	check "$got" "$want" "$text" "capsim $(short "$@")"
}

# no_sql: the last stderr names no SQL and quotes no SQLite message
no_sql() {
	if grep -qE 'SELECT |SQLite|no such (column|table)|database: ' "$ERR"; then
		fail "stderr speaks SQL: $(head -c 300 "$ERR")"
	fi
}

NOTREG="error: expected a regular file for the store (an SQLite database), found"

# ---- paths that are not a store file ------------------------------------------------

# a null device (c 1 3) on a private tmpfs: refused, no -journal beside it
case_dev_null_private() {
	tmpfs dev 64k
	devnode dev/null 1 3
	sweepfile sweep.xml
	local before
	before=$(tree dev)
	cap 2 "dev/null: $NOTREG a character device" sweep sweep.xml --db dev/null --no-progress
	cap 2 "dev/null: $NOTREG a character device" query --db dev/null --list
	cap 2 "dev/null: $NOTREG a character device" calibrate import "$GEMM" --db dev/null
	same_tree "a device as the store" "$before" "$(tree dev)"
	is_chardev dev/null 1 3 || fail "dev/null is no longer the null device"
}

# the literal /dev/null, on a tmpfs mounted over /dev in the namespace (the
# real /dev is never touched): no /dev/null-journal
case_dev_null_literal() {
	tmpfs /dev 64k
	# not devnode: its 2>/dev/null would make /dev/null a regular file first
	mknod /dev/null c 1 3 2>"$T/.io/mknod" || skip "mknod is not permitted (no CAP_MKNOD)"
	{ printf x >/dev/null; } 2>"$T/.io/mknod" || skip "device nodes cannot be opened here (nodev)"
	sweepfile sweep.xml
	cap 2 "/dev/null: $NOTREG a character device" sweep sweep.xml --db /dev/null --no-progress
	cap 2 "/dev/null: $NOTREG a character device" query --db /dev/null
	[ "$(ls -A /dev)" = null ] || fail "/dev holds more than null: $(ls -A /dev | tr '\n' ' ')"
	is_chardev /dev/null 1 3 || fail "/dev/null is no longer the null device"
}

# a symlink to a device: followed, and refused for what it ends at
case_symlink_to_device() {
	tmpfs dev 64k
	devnode dev/null 1 3
	mkdir w
	ln -s "$T/dev/null" w/db
	sweepfile sweep.xml
	local before_w before_dev
	before_w=$(tree w)
	before_dev=$(tree dev)
	cap 2 "w/db: $NOTREG a character device" sweep sweep.xml --db w/db --no-progress
	cap 2 "w/db: $NOTREG a character device" query --db w/db
	same_tree "a symlink to a device" "$before_w" "$(tree w)"
	same_tree "the device behind it" "$before_dev" "$(tree dev)"
}

# a FIFO: refused before anything opens it (SQLite would wait on it)
case_fifo() {
	mkdir w
	mkfifo w/fifo || skip "mkfifo failed"
	sweepfile sweep.xml
	local before
	before=$(tree w)
	capt 2 "w/fifo: $NOTREG a FIFO (named pipe)" sweep sweep.xml --db w/fifo --no-progress
	capt 2 "w/fifo: $NOTREG a FIFO (named pipe)" query --db w/fifo --list
	same_tree "a FIFO as the store" "$before" "$(tree w)"
}

# a directory, with and without a trailing slash, and a symlink to one
case_directory() {
	mkdir -p w/d
	echo keep >w/d/inside
	ln -s d w/dlink
	sweepfile sweep.xml
	local before
	before=$(tree w)
	cap 2 "w/d: $NOTREG a directory" sweep sweep.xml --db w/d --no-progress
	cap 2 "w/d/: $NOTREG a directory" sweep sweep.xml --db w/d/ --no-progress
	cap 2 "w/dlink: $NOTREG a directory" sweep sweep.xml --db w/dlink --no-progress
	cap 2 "w/d: $NOTREG a directory" query --db w/d --list
	same_tree "a directory as the store" "$before" "$(tree w)"
}

# `-` is no store: standard output cannot hold an SQLite file
case_dash() {
	sweepfile sweep.xml
	local msg="--db -: error: a store cannot be standard input or output"
	cap 2 "$msg" sweep sweep.xml --db - --no-progress
	has "./- for a file named '-'"
	cap 2 "$msg" query --db - --list
	cap 2 "$msg" calibrate import "$GEMM" --db -
	[ ! -e ./- ] || fail "a file named '-' was made"
	[ ! -s "$OUT" ] || fail "standard output got bytes"
}

# SQLite's journal planted as a symlink beside a store: refused, the file it
# points to unchanged
case_planted_journal() {
	mkdir w
	mkstore w/st.sqlite
	echo "the victim" >w/victim
	ln -s victim w/st.sqlite-journal
	local before
	before=$(tree w)
	cap 2 "w/st.sqlite-journal: error: expected SQLite's journal file of the store to be a regular file, found a symbolic link" \
		sweep sweep.xml --db w/st.sqlite --no-progress
	same_tree "a planted journal" "$before" "$(tree w)"
}

# ---- readers: read-only, creating nothing ---------------------------------------------

# query_ok DB: the queries a reader runs, each exit 0 with the sweep
query_ok() {
	cap 0 "sweep 1 'store-attack'" query --db "$1"
	cap 0 "3 points" query --db "$1" --best tokens_per_s
	cap 0 "store-attack" query --db "$1" --list
	cap 0 '"name": "store-attack"' query --db "$1" --list --json
	cap 0 'point_index,status' query --db "$1" --csv -
}

# ro_bind DIR: DIR bind-mounted read-only on itself, or skip
ro_bind() {
	{ mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"; } 2>/dev/null ||
		skip "cannot bind-mount a directory read-only"
	touch "$1/probe" 2>/dev/null && fail "$1 is still writable"
}

# a finished store (as capsim sweep leaves it) on a read-only mount
case_readonly_mount() {
	mkdir w
	mkstore w/st.sqlite
	ro_bind w
	local before
	before=$(tree w)
	query_ok w/st.sqlite
	same_tree "a query on a read-only mount" "$before" "$(tree w)"
}

# a store another program left in write-ahead-log mode, on a read-only
# mount (SQLite alone would need a -shm beside it: "unable to open")
case_readonly_mount_wal() {
	need_sqlite
	mkdir w
	mkstore w/st.sqlite
	wal w/st.sqlite
	ro_bind w
	local before
	before=$(tree w)
	query_ok w/st.sqlite
	same_tree "a query of a WAL store on a read-only mount" "$before" "$(tree w)"
}

# a directory the reader cannot write (as another user where this is root:
# root ignores permission bits)
case_readonly_dir_chmod() {
	need_sqlite
	mkdir w
	mkstore w/st.sqlite
	wal w/st.sqlite
	local as=()
	if [ "$(id -u)" -eq 0 ]; then
		command -v setpriv >/dev/null 2>&1 || skip "root, and no setpriv to run as another user"
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		chmod 0755 "$T"
		chmod 0644 w/st.sqlite
		chmod 0777 .io
		"${as[@]}" test -r "$CAPSIM" -a -x "$CAPSIM" -a -r "$S" ||
			skip "user 65534 cannot run $CAPSIM here"
	fi
	chmod 0555 w
	local before
	before=$(tree w)
	"${as[@]}" "$CAPSIM" query --db w/st.sqlite >"$OUT" 2>"$ERR"
	check $? 0 "sweep 1 'store-attack'" "capsim query in a read-only directory"
	"${as[@]}" "$CAPSIM" query --db w/st.sqlite --list --json >"$OUT" 2>"$ERR"
	check $? 0 '"name": "store-attack"' "capsim query --list in a read-only directory"
	same_tree "a query in a read-only directory" "$before" "$(tree w)"
	chmod 0755 w
}

# in a writable directory too, a reader leaves no -wal, -shm or -journal
case_reader_creates_nothing() {
	need_sqlite
	mkdir w v
	mkstore w/st.sqlite
	cp w/st.sqlite v/rollback.sqlite
	wal w/st.sqlite
	local before
	before=$(tree w)
	query_ok w/st.sqlite
	same_tree "a query of a WAL store" "$before" "$(tree w)"
	before=$(tree v)
	query_ok v/rollback.sqlite
	same_tree "a query of a rollback-journal store" "$before" "$(tree v)"
}

# ---- what a query says ------------------------------------------------------------------

# a sweep the store lacks: said plainly, the sweeps it has listed (the
# latest ten), exit 2, no SQL
case_missing_sweep() {
	need_sqlite
	mkdir w
	mkstore w/st.sqlite
	cap 2 "w/st.sqlite: error: the store has no sweep named 'X'; it has 1 sweep: 1 'store-attack'" \
		query --db w/st.sqlite --sweep X
	no_sql
	cap 2 "the store has no sweep named '42' (nor one of id 42)" query --db w/st.sqlite --sweep 42
	no_sql
	cap 2 "the store has no sweep named 'a' OR 1=1 --'" query --db w/st.sqlite --sweep "a' OR 1=1 --"
	no_sql
	# twelve sweeps: the latest ten, and a word for the rest
	sqlite3 w/st.sqlite "WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM n
		WHERE i < 12) INSERT INTO sweeps(name, capsim_version, created_at,
		base_scenario_sha256) SELECT 'sweep-' || i, 'x', 'y', 'z' FROM n"
	cap 2 "it has 12 sweeps: 12 'sweep-12', 11 'sweep-11'," query --db w/st.sqlite --sweep X
	has "3 'sweep-3', ... (capsim query --list shows them all)"
	grep -qF "'sweep-2'" "$ERR" && fail "more than ten sweeps listed"
	no_sql
	# a store whose table lacks a column a read needs: said in words
	sqlite3 w/st.sqlite "ALTER TABLE sweeps DROP COLUMN created_at" ||
		skip "this sqlite3 cannot drop a column"
	cap 2 "w/st.sqlite: error: not a capsim store of sweep results: its table 'sweeps' has no column 'created_at'" \
		query --db w/st.sqlite --sweep X
	no_sql
}

# a hostile sweep name and parameter value in CSV: each one quoted field,
# never a formula, a newline inside the quotes
case_hostile_csv() {
	need_sqlite
	mkdir w
	mkstore w/st.sqlite
	sqlite3 w/st.sqlite "UPDATE sweeps SET name = '=HYPERLINK(\"http://x\")' || char(10) || 'next';
		UPDATE point_params SET value = '@SUM(1)' WHERE point_id = (SELECT id FROM points WHERE point_index = 0)"
	cap 0 "" query --db w/st.sqlite --list --csv -
	grep -qF "1,\"'=HYPERLINK(\"\"http://x\"\")\\x0anext\"," "$OUT" ||
		fail "the name is not one quoted text field: $(head -c 300 "$OUT")"
	grep -q '^=' "$OUT" && fail "a line of the CSV starts with '='"
	[ "$(wc -l <"$OUT")" -eq 2 ] || fail "the CSV of one sweep is not two lines"
	cap 0 "" query --db w/st.sqlite --csv -
	grep -qF "0,ok,\"'@SUM(1)\"," "$OUT" || fail "the parameter is not a quoted text: $(head -c 300 "$OUT")"
	grep -q ',@SUM' "$OUT" && fail "the parameter is a bare formula"
	if command -v python3 >/dev/null 2>&1; then
		cap 0 "" query --db w/st.sqlite --list --csv -
		python3 - "$OUT" <<'PY' || fail "the CSV does not read back as one sweep of its name"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) == 2, rows
assert rows[1][1] == "'=HYPERLINK(\"http://x\")\\x0anext", rows[1]
PY
	fi
}

# control characters and a right-to-left override in names: shown
# escaped in the terminal's table, the list and an error
case_hostile_table() {
	need_sqlite
	mkdir w
	mkstore w/st.sqlite
	sqlite3 w/st.sqlite "UPDATE sweeps SET name = 'ok' || char(27) || '[2J' || char(8238) || 'gpj.exe';
		UPDATE point_params SET value = char(27) || ']0;owned' || char(7)
		WHERE point_id = (SELECT id FROM points WHERE point_index = 0)"
	local esc rlo
	esc=$(printf '\033')
	rlo=$(printf '\342\200\256')
	for args in "" "--list"; do
		# shellcheck disable=SC2086
		cap 0 "" query --db w/st.sqlite $args
		grep -qF "$esc" "$OUT" && fail "query $args: an escape byte reached the terminal"
		grep -qF "$rlo" "$OUT" && fail "query $args: a right-to-left override reached the terminal"
		grep -qF 'ok\x1b[2J\u{202E}gpj.exe' "$OUT" || fail "query $args: the name is not shown escaped: $(head -c 300 "$OUT")"
	done
	cap 0 "" query --db w/st.sqlite
	grep -qF '\x1b]0;owned\x07' "$OUT" || fail "the parameter is not shown escaped"
	cap 2 "'ok\x1b[2J\u{202E}gpj.exe'" query --db w/st.sqlite --sweep X
	grep -qF "$esc" "$ERR" && fail "an escape byte reached stderr"
	# JSON: the exact name, as JSON escapes (ASCII only)
	cap 0 '"name": "ok\u001B[2J\u202Egpj.exe"' query --db w/st.sqlite --list --json
	grep -qF "$esc" "$OUT" && fail "an escape byte in the JSON"
	grep -qF "$rlo" "$OUT" && fail "a right-to-left override in the JSON"
}

# ---- threads ------------------------------------------------------------------------------

# 64 threads for three points: every thread is counted as started (the count
# is not read back after some have ended), and no warning is printed
case_threads_64() {
	mkdir w
	local i
	for i in 1 2 3 4; do
		mkstore "w/st$i.sqlite" -j 64
		grep -q 'threads started' "$ERR" && fail "-j 64: $(head -c 300 "$ERR")"
		grep -qF "evaluated: 3 ok, 0 failed" "$OUT" || fail "-j 64: $(head -c 300 "$OUT")"
	done
}
