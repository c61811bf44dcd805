# lib.sh - helpers of the attack suite, sourced by run.sh (bash).
#
# Every check that fails is printed and makes the case fail, and the case
# goes on, so one run shows every problem; the case's status is $failed when
# it ends (or calls verdict), 77 when it calls skip. Scratch files go under
# $T (the case's own directory); $T/.io holds capsim's stdout and stderr.

failed=0
OUT=$T/.io/out
ERR=$T/.io/err

fail() {
	echo "  FAIL: $*"
	failed=1
}

skip() {
	echo "SKIP $GROUP/$CASE: $*"
	exit 77
}

verdict() {
	exit "$failed"
}

# cap STATUS TEXT ARGS...: run capsim ARGS (stdout to $OUT, stderr to $ERR),
# and check its exit status and that TEXT is in stderr (status 0: in stdout)
cap() {
	local want=$1 text=$2
	shift 2
	"$CAPSIM" "$@" >"$OUT" 2>"$ERR"
	local got=$?
	check "$got" "$want" "$text" "capsim $(short "$@")"
}

# check GOT WANT TEXT WHAT: the status and message of a capsim run whose
# stdout/stderr went to $OUT/$ERR
check() {
	local got=$1 want=$2 text=$3 what=$4 where=$ERR was=$failed
	failed=0
	[ "$want" -eq 0 ] && where=$OUT
	if [ "$got" -ge 128 ]; then
		fail "$what: killed by signal $((got - 128)) (a crash), expected exit $want"
	elif [ "$got" -ne "$want" ]; then
		fail "$what: exit $got, expected $want"
	fi
	if [ -n "$text" ] && ! grep -qF -- "$text" "$where"; then
		fail "$what: $( [ "$where" = "$ERR" ] && echo stderr || echo stdout) lacks '$text'"
	fi
	if grep -qE 'ERROR: AddressSanitizer|runtime error:|LeakSanitizer|SUMMARY: ' "$ERR"; then
		fail "$what: sanitizer report"
	fi
	if [ "$failed" -ne 0 ]; then
		echo "  --- stderr of $what (first lines):"
		head -c 2000 "$ERR" | head -n 12 | cut -c1-300 | sed 's/^/  | /'
	fi
	[ "$was" -eq 0 ] || failed=1
}

# has TEXT...: each TEXT is in the last run's stderr
has() {
	local t
	for t in "$@"; do
		grep -qF -- "$t" "$ERR" || fail "stderr lacks '$t'"
	done
}

# the arguments, long ones cut for the report
short() {
	local a s=""
	for a in "$@"; do
		if [ ${#a} -gt 60 ]; then a="${a:0:40}...(${#a} chars)"; fi
		s="$s $a"
	done
	printf '%s' "${s# }"
}

# tree DIR: every entry below DIR with its type, link target, mode and the
# SHA-256 of a regular file's content: two equal listings mean nothing was
# added, removed, replaced by another kind or changed
tree() {
	(cd "$1" && find . -mindepth 1 -printf '%p|%y|%l|%m\n' | LC_ALL=C sort |
		while IFS='|' read -r p y l m; do
			if [ "$y" = f ]; then
				printf '%s f %s %s\n' "$p" "$m" "$(sha256sum <"$p" | cut -c1-64)"
			else
				printf '%s %s %s %s\n' "$p" "$y" "$l" "$m"
			fi
		done)
}

# same_tree WHAT BEFORE AFTER: two tree listings are equal
same_tree() {
	if [ "$2" != "$3" ]; then
		fail "$1: the directory changed"
		diff <(printf '%s\n' "$2") <(printf '%s\n' "$3") | sed 's/^/  | /'
	fi
}

# is_chardev PATH MAJOR MINOR
is_chardev() {
	[ -c "$1" ] && [ "$(stat -c '%t %T' "$1")" = "$(printf '%x %x' "$2" "$3")" ]
}

# a regular file holding a whole trace: it begins and ends as a trace does
# and, where python3 is installed, parses as JSON with traceEvents
is_whole_trace() {
	[ -f "$1" ] && [ ! -L "$1" ] || return 1
	[ "$(head -c 39 "$1")" = '{"displayTimeUnit":"ms","traceEvents":[' ] || return 1
	[ "$(tail -c 3 "$1" | od -An -c | tr -d ' ')" = ']}\n' ] || return 1
	command -v python3 >/dev/null 2>&1 || return 0
	python3 - "$1" <<'PY' 2>/dev/null
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d.get("traceEvents") else 1)
PY
}

# tmpfs DIR [SIZE]: a private tmpfs at DIR (inside the namespace), or skip
tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o "size=${2:-1m},mode=0755" capsim-attack "$1" 2>/dev/null ||
		skip "cannot mount a tmpfs (no CAP_SYS_ADMIN in this namespace)"
}

# devnode PATH MAJOR MINOR: a character device on the private tmpfs, usable
# (a nodev mount refuses to open it), or skip
devnode() {
	mknod "$1" c "$2" "$3" 2>/dev/null || skip "mknod is not permitted (no CAP_MKNOD)"
	if [ "$3" -eq 3 ]; then
		{ printf x >"$1"; } 2>/dev/null || skip "device nodes cannot be opened here (nodev)"
	else
		{ : <"$1"; } 2>/dev/null || skip "device nodes cannot be opened here (nodev)"
	fi
}

# scenarios: default (a 249 kB trace), small (a 2 kB trace)
S=$SRC/scenarios/default.xml
SMALL=$SRC/scenarios/h100-8node-ndr.xml
GEMM=$SRC/calibrate/results/h200-2026-12-02-gemm.jsonl
