#!/bin/sh
# structure.sh SOURCE_DIR - the module structure as docs/architecture.md states it:
#  1. the module graph in docs/architecture.md ("Module graph" block) is the one
#     CMakeLists.txt builds: each capsim_M library's capsim_* link dependencies;
#  2. every #include "X.h" of a module's sources names a header of the module itself
#     or of a module it depends on (through the graph), so the graph is the code's;
#  3. the doors (cli, report, opt, ui, sweep) reach the models only through the
#     evaluation face: no call of a fabric, step, facility, memory, op-model,
#     schedule, loader or cost function.
# Prints each difference; exits 1 when there is one.
set -u
src=${1:?usage: structure.sh SOURCE_DIR}
cd "$src" || exit 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
fail=0

# ---- 1. the graph CMake builds against the one the document states ----
# "M: D1 D2 ..." lines with each module's dependencies sorted and unique, the
# lines sorted
normalise() {
	while IFS=: read -r m deps; do
		printf '%s:' "$m"
		for d in $deps; do echo "$d"; done | sort -u | tr '\n' ' ' | sed 's/ $//; s/^/ /; s/^ $//'
		echo
	done | sort
}
# "M: D1 D2 ..." for each capsim_M library, dependencies sorted
awk '
	/^target_link_libraries\(capsim_[a-z]+ / { on = 1; line = "" }
	on { line = line " " $0 }
	on && /\)/ {
		on = 0
		gsub(/[()]/, " ", line)
		n = split(line, w, /[ \t]+/)
		name = ""; deps = ""
		for (i = 1; i <= n; i++) {
			if (w[i] !~ /^capsim_[a-z]+$/) continue
			m = substr(w[i], 8)
			if (name == "") { name = m; continue }
			deps = deps " " m
		}
		if (name != "") print name ":" deps
	}' CMakeLists.txt |
	normalise >"$tmp/built"
# the document's block: the lines between "<!-- module-graph -->" and the fence's end
awk '/<!-- module-graph -->/ { on = 1; next }
	on && /^```/ { if (seen) exit; seen = 1; next }
	on && seen && NF { print }' docs/architecture.md |
	normalise >"$tmp/stated"
if [ ! -s "$tmp/stated" ]; then
	echo "docs/architecture.md: no module graph block (<!-- module-graph --> and a fenced block)"
	fail=1
elif ! diff -u "$tmp/stated" "$tmp/built" >"$tmp/diff"; then
	echo "docs/architecture.md's module graph (-) differs from CMakeLists.txt's (+):"
	cat "$tmp/diff"
	fail=1
fi

# ---- 2. includes follow the graph ----
# "FILE HEADER" for each #include "HEADER" of a module's sources, checked in one
# pass: a header belongs to the module whose directory holds it; a module
# reaches itself and, through the graph, what it depends on
for h in src/*/*.h; do
	m=${h#src/}
	echo "H $(basename "$h") ${m%%/*}"
done >"$tmp/facts"
sed 's/^\([a-z]*\):\(.*\)$/G \1 \2/' "$tmp/built" >>"$tmp/facts"
grep -H '^#include "' src/*/*.c src/*/*.h | sed 's/^\([^:]*\):#include "\([^"]*\)".*/I \1 \2/' >>"$tmp/facts"
awk '
	$1 == "H" { owner[$2] = $3; next }
	$1 == "G" { mod[$2] = 1; for (i = 3; i <= NF; i++) dep[$2, ++nd[$2]] = $i; next }
	$1 == "I" { n++; file[n] = $2; inc[n] = $3 }
	function reaches(a, b,    i) {
		if (a == b) return 1
		if ((a, b) in memo) return memo[a, b]
		memo[a, b] = 0
		for (i = 1; i <= nd[a]; i++)
			if (reaches(dep[a, i], b)) return memo[a, b] = 1
		return 0
	}
	END {
		for (k = 1; k <= n; k++) {
			split(file[k], part, "/")
			m = part[2]
			o = owner[inc[k]]
			if (!(m in mod) || o == "") continue
			if (!reaches(m, o))
				printf "%s: includes %s of module %s, which %s does not depend on\n", file[k], inc[k], o, m
		}
	}' "$tmp/facts" >"$tmp/includes"
if [ -s "$tmp/includes" ]; then
	cat "$tmp/includes"
	fail=1
fi

# ---- 3. the doors call the face only ----
models='capsim_(fabric|collective|step|power|reliab|memory|layout|cooling|flops|ops|schedule|sched|loader|load|cost|bom)_[a-z0-9_]*\('
names='capsim_collective_algo_(name|parse)\('
for d in cli report opt ui sweep; do
	[ -d "src/$d" ] || continue
	grep -nE "$models" "src/$d"/*.c 2>/dev/null | grep -vE "$names" |
		grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)'
done >"$tmp/doors"
if [ -s "$tmp/doors" ]; then
	echo "a door calls a model, not the evaluation face (eval.h):"
	cat "$tmp/doors"
	fail=1
fi
exit $fail
