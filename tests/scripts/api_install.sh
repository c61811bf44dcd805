#!/bin/sh
# api_install.sh CMAKE BUILD_DIR SOURCE_DIR CC [CFLAGS] - libcapsim as a user
# gets it: `cmake --install` to a temporary prefix, tests/api/example.c built
# there with `CC $(pkg-config --cflags --libs capsim)` against that prefix
# alone (PKG_CONFIG_LIBDIR its pkgconfig directory, the source tree out of
# reach), and run on a shipped scenario with two edits. Its numbers must be
# `PREFIX/bin/capsim run SCENARIO --set ... --json`'s: the same keys with the
# same values (every result key the table has and each band end, read
# through capsim_key_name, capsim_res_number, _text and _band), and its
# capsim_res_json byte for byte the command's output (and on a scenario of
# two node groups). The installed library must carry its SONAME, export the
# header's functions in CAPSIM_0 and nothing but capsim_* symbols.
# docs/user-guide.md's C example (its ```c block) is built and run the same
# way.
set -u
cmake=$1
build=$2
src=$3
cc=$4
cflags=${5:-}

fail() {
	echo "api_install: FAIL: $*" >&2
	exit 1
}

tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
	fail "cmake --install exited $?: $(cat "$tmp/install.log")"
pc=$(find "$prefix" -name capsim.pc) && [ -n "$pc" ] || fail "no capsim.pc installed"
[ -f "$prefix/include/capsim.h" ] || fail "include/capsim.h not installed"

# ---- built against the installed prefix alone ----
mkdir "$tmp/user" && cp "$src/tests/api/example.c" "$tmp/user/" && cd "$tmp/user" ||
	fail "cannot make the user's directory"
export PKG_CONFIG_LIBDIR="$(dirname "$pc")"
unset PKG_CONFIG_PATH CAPSIM_DATA
flags=$(pkg-config --cflags --libs capsim) || fail "pkg-config --cflags --libs capsim"
libdir=$(pkg-config --variable=libdir capsim)
# shellcheck disable=SC2086 # the flags are words
"$cc" $cflags -o example example.c $flags 2>"$tmp/cc.log" ||
	fail "$cc example.c $flags: $(cat "$tmp/cc.log")"
case $(readelf -d example) in
*'[libcapsim.so.0]'*) ;;
*) fail "example does not need libcapsim.so.0" ;;
esac

# ---- the library's ABI ----
lib=$libdir/libcapsim.so.0
[ -e "$lib" ] || fail "$lib not installed"
readelf -d "$lib" | grep -q 'SONAME.*\[libcapsim\.so\.0\]' ||
	fail "$lib has no SONAME libcapsim.so.0"
nm -D --defined-only --with-symbol-versions "$lib" >"$tmp/syms" || fail "nm -D $lib"
grep -o '[a-z_]*(' "$prefix/include/capsim.h" | tr -d '(' | grep '^capsim_' | sort -u \
	>"$tmp/header"
sed -n 's/^[0-9a-f]* [A-Z] \(capsim_[a-z_0-9]*\)@@CAPSIM_0$/\1/p' "$tmp/syms" | sort -u \
	>"$tmp/public"
diff -u "$tmp/header" "$tmp/public" >"$tmp/d" ||
	fail "CAPSIM_0 (+) is not the header's functions (-): $(cat "$tmp/d")"
others=$(awk '$NF !~ /^capsim_/ && $NF !~ /^CAPSIM_/' "$tmp/syms")
[ -z "$others" ] || fail "symbols exported beyond capsim_*: $others"

# ---- the same numbers as capsim run --set ... --json ----
scenario=$prefix/share/capsim/scenarios/h100-8node-ndr.xml
set -- workload.parallelism.pp=2 cluster.nodes=16
LD_LIBRARY_PATH=$libdir ./example "$scenario" "$@" --json lib.json >lib.txt 2>"$tmp/err" ||
	fail "example exited $?: $(cat "$tmp/err")"
sets=""
for e in "$@"; do sets="$sets --set $e"; done
# shellcheck disable=SC2086 # --set PATH=VALUE pairs
"$prefix/bin/capsim" run "$scenario" $sets --json >cli.json 2>"$tmp/err" ||
	fail "capsim run exited $?: $(cat "$tmp/err")"
cmp -s cli.json lib.json || fail "capsim_res_json differs from capsim run --json: \
$(diff cli.json lib.json | head -20)"
# a scenario of two node groups (the head's per-group profiles), byte for byte too
mixed=$prefix/share/capsim/scenarios/mixed-h100-h200.xml
LD_LIBRARY_PATH=$libdir ./example "$mixed" --json mixed-lib.json >/dev/null 2>"$tmp/err" ||
	fail "example on mixed-h100-h200 exited $?: $(cat "$tmp/err")"
"$prefix/bin/capsim" run "$mixed" --json >mixed-cli.json 2>"$tmp/err" ||
	fail "capsim run mixed-h100-h200 exited $?: $(cat "$tmp/err")"
cmp -s mixed-cli.json mixed-lib.json || fail "mixed-h100-h200: capsim_res_json differs: \
$(diff mixed-cli.json mixed-lib.json | head -20)"
# the command's top-level scalars, less the head, as KEY VALUE lines
sed -n 's/^  "\([a-z0-9_]*\)": \(.*[^[{]\),\{0,1\}$/\1 \2/p' cli.json | sed 's/,$//' |
	grep -vE '^(schema_version|capsim_version|hardware_profile|calibrated_profile|seed) ' \
	>cli.txt
[ "$(wc -l <cli.txt)" -gt 100 ] || fail "capsim run --json gave $(wc -l <cli.txt) scalar keys"
awk '
	function num(s) { return s == "true" ? 1 : s == "false" ? 0 : s + 0 }
	function differ(a, b) { print $1 ": the library " a ", capsim run " b; bad = 1 }
	# the value: the rest of the line after the key
	{ v = substr($0, length($1) + 2) }
	NR == FNR { want[$1] = v; n++; next }
	{
		got[$1] = 1
		if (!($1 in want)) { differ("has it", "not"); next }
		w = want[$1]
		if (w ~ /^"/) {
			w = substr(w, 2, length(w) - 2)
			if (w != v)
				differ("\"" v "\"", "\"" w "\"")
			next
		}
		d = num(v) - num(w)
		m = num(w) < 0 ? -num(w) : num(w)
		if ((d < 0 ? -d : d) > 1e-9 * m)
			differ(v, w)
	}
	END {
		for (k in want)
			if (!(k in got)) { print k ": capsim run has it, the library not"; bad = 1 }
		print n " keys compared"
		exit bad
	}' cli.txt lib.txt >cmp.txt || fail "$(cat cmp.txt)"
# ---- docs/user-guide.md's C example, as written ----
awk '/^```c$/ { on = 1; next } /^```/ { on = 0 } on' "$src/docs/user-guide.md" >step.c
[ -s step.c ] || fail "docs/user-guide.md has no c block"
# shellcheck disable=SC2086
"$cc" $cflags -o step step.c $flags 2>"$tmp/cc.log" || fail "the guide's step.c: $(cat "$tmp/cc.log")"
LD_LIBRARY_PATH=$libdir ./step >step.txt 2>"$tmp/err" || fail "step.c exited $?: $(cat "$tmp/err")"
awk '$1 == "step" && $2 == "time" && $4 == "s" {
	split(substr($6, 1, length($6) - 1), b, "-")
	ok = b[1] + 0 < $3 + 0 && $3 + 0 < b[2] + 0 }
	END { exit !ok }' step.txt || fail "step.c printed: $(cat step.txt)"
echo "api_install: ok ($(tail -1 cmp.txt), $(wc -l <"$tmp/public") functions in CAPSIM_0)"
