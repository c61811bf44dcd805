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
	while IFS=: read -r m deps; do
		printf '%s:' "$m"
		for d in $deps; do echo "$d"; done | sort -u | tr '\n' ' ' | sed 's/ $//; s/^/ /; s/^ $//'
		echo
	done | sort >"$tmp/built"
# the document's block: the lines between "<!-- module-graph -->" and the fence's end
awk '/<!-- module-graph -->/ { on = 1; next }
	on && /^```/ { if (seen) exit; seen = 1; next }
	on && seen && NF { print }' docs/architecture.md |
	while IFS=: read -r m deps; do
		printf '%s:' "$m"
		for d in $deps; do echo "$d"; done | sort -u | tr '\n' ' ' | sed 's/ $//; s/^/ /; s/^ $//'
		echo
	done | sort >"$tmp/stated"
if [ ! -s "$tmp/stated" ]; then
	echo "docs/architecture.md: no module graph block (<!-- module-graph --> and a fenced block)"
	fail=1
elif ! diff -u "$tmp/stated" "$tmp/built" >"$tmp/diff"; then
	echo "docs/architecture.md's module graph (-) differs from CMakeLists.txt's (+):"
	cat "$tmp/diff"
	fail=1
fi

# ---- 2. includes follow the graph ----
# the modules each module reaches (itself included), by closure over the graph
closure() {
	seen=" $1 "
	grew=1
	while [ $grew = 1 ]; do
		grew=0
		for m in $seen; do
			for d in $(awk -F: -v m="$m" '$1 == m { print $2 }' "$tmp/built"); do
				case "$seen" in *" $d "*) ;; *) seen="$seen$d " grew=1 ;; esac
			done
		done
	done
	echo "$seen"
}
# which module a header belongs to: src/M/X.h
for h in src/*/*.h; do
	m=${h#src/}
	echo "$(basename "$h") ${m%%/*}"
done | sort >"$tmp/headers"
for dir in src/*/; do
	m=$(basename "$dir")
	grep -q "^$m:" "$tmp/built" || continue
	reach=$(closure "$m")
	for f in "$dir"*.c "$dir"*.h; do
		[ -f "$f" ] || continue
		sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
			owner=$(awk -v h="$inc" '$1 == h { print $2; exit }' "$tmp/headers")
			[ -n "$owner" ] || continue # generated or not a module's header
			case " $reach " in
			*" $owner "*) ;;
			*) echo "$f: includes $inc of module $owner, which $m does not depend on" ;;
			esac
		done
	done
done >"$tmp/includes"
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
