#!/bin/sh
# function_length.sh ROOT [LIMIT] - no function under ROOT/src is longer than
# LIMIT lines (default 150) unless tests/scripts/function_length.allow names
# it, and every function that list names is still longer (so the list only
# shrinks). A function's length runs from its opening brace at column 0 to its
# closing brace at column 0, both counted; its name is the identifier before
# the first "(" of the lines above the brace. Exits 0, or 1 after a line
# "FILE:LINE: FUNCTION: ..." for each function over the limit and each stale
# entry of the list.
#
# function_length.sh --selftest runs the check on a small tree of its own:
# one function over a limit of 10 lines, one allowed, one stale entry.
set -u

# lengths ROOT: "LENGTH FILE LINE FUNCTION" for every function of ROOT/src
lengths() {
	(cd "$1" && find src -name '*.c' | LC_ALL=C sort | xargs awk '
	FNR == 1 { sig = ""; inbody = 0 }
	inbody {
		if ($0 ~ /^}/) {
			print FNR - start + 1, FILENAME, start, name
			inbody = 0
			sig = ""
		}
		next
	}
	/^{/ {
		if (match(sig, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
			name = substr(sig, RSTART, RLENGTH)
			sub(/[ \t]*\($/, "", name)
			inbody = 1
			start = FNR
		}
		sig = ""
		next
	}
	# a signature ends at a declaration, a directive, a comment or a body
	/^[ \t]*$/ || /;[ \t]*$/ || /^#/ || /\*\/[ \t]*$/ || /^}/ { sig = ""; next }
	{ sig = sig " " $0 }')
}

# check ROOT ALLOW LIMIT
check() {
	root=$1 allow=$2 limit=$3
	tmp=$(mktemp -d) || exit 1
	lengths "$root" >"$tmp/all"
	if ! [ -s "$tmp/all" ]; then
		echo "function_length: no functions found under $root/src" >&2
		rm -rf "$tmp"
		return 1
	fi
	# the allow-list without comments: "FILE FUNCTION"
	sed -e 's/#.*//' -e '/^[ \t]*$/d' "$allow" | awk '{ print $1, $2 }' >"$tmp/allowed"
	awk -v limit="$limit" -v allowed="$tmp/allowed" '
	BEGIN {
		while ((getline line < allowed) > 0) {
			split(line, a, " ")
			ok[a[1] " " a[2]] = 1
		}
	}
	{
		key = $2 " " $4
		seen[key] = $1
		if ($1 > limit && !(key in ok)) {
			printf "%s:%d: %s: %d lines, more than %d: split it into named steps " \
			       "(or allow it, with why, in function_length.allow)\n", $2, $3, $4, $1, limit
			bad = 1
		}
	}
	END {
		for (key in ok) {
			split(key, a, " ")
			if (!(key in seen)) {
				printf "%s: %s: allowed but not found: take it off function_length.allow\n",
				       a[1], a[2]
				bad = 1
			} else if (seen[key] <= limit) {
				printf "%s: %s: %d lines now, within %d: take it off function_length.allow\n",
				       a[1], a[2], seen[key], limit
				bad = 1
			}
		}
		exit bad
	}' "$tmp/all"
	rc=$?
	over=$(awk -v limit="$limit" '$1 > limit' "$tmp/all" | wc -l)
	total=$(wc -l <"$tmp/all")
	echo "function_length: $total functions, $over over $limit lines (allowed: $(wc -l <"$tmp/allowed"))"
	rm -rf "$tmp"
	return $rc
}

# a C function of n lines (braces counted) named name
function_of() {
	printf 'static int\n%s(int a)\n{\n' "$2"
	i=2
	while [ "$i" -lt "$(($1))" ]; do
		echo "	a++;"
		i=$((i + 1))
	done
	printf '}\n\n'
}

selftest() {
	t=$(mktemp -d) || exit 1
	trap 'rm -rf "$t"' EXIT
	mkdir -p "$t/src/m"
	{
		echo "/* comment */"
		function_of 10 fits
		function_of 11 too_long
		function_of 12 allowed_long
		function_of 5 stale_short
		echo "static const int table[] = {"
		echo "	1, 2,"
		echo "};"
	} >"$t/src/m/a.c"
	cat >"$t/allow" <<-EOF
	# why: a table
	src/m/a.c allowed_long   # a switch over every case
	src/m/a.c stale_short    # split since
	src/m/a.c gone           # removed since
	EOF
	out=$(check "$t" "$t/allow" 10)
	rc=$?
	fail=0
	[ "$rc" -eq 1 ] || { echo "selftest: exit $rc, expected 1"; fail=1; }
	for want in \
		"src/m/a.c:17: too_long: 11 lines, more than 10" \
		"src/m/a.c: stale_short: 5 lines now, within 10: take it off" \
		"src/m/a.c: gone: allowed but not found" \
		"function_length: 4 functions, 2 over 10 lines (allowed: 3)"; do
		case "$out" in
		*"$want"*) ;;
		*) echo "selftest: expected '$want' in:"; echo "$out"; fail=1 ;;
		esac
	done
	case "$out" in
	*allowed_long:* | *": fits:"*) echo "selftest: an allowed or short function reported:"
		echo "$out"; fail=1 ;;
	esac
	[ "$fail" -eq 0 ] && echo "function_length: selftest passed"
	return $fail
}

if [ "${1:-}" = --selftest ]; then
	selftest
	exit $?
fi
root=$1
limit=${2:-150}
check "$root" "$root/tests/scripts/function_length.allow" "$limit"
