#!/bin/sh
# readme_examples.sh CAPSIM SOURCE_DIR - run every command of README.md's
# "Using it" block, as written (build/capsim replaced by CAPSIM), from a
# scratch directory that links the source tree's data folders, and check each
# exit status: 0, or the N of a trailing "exit N" comment.
set -u
capsim=$1
src=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for d in scenarios hardware models tests calibrate; do
	ln -s "$src/$d" "$tmp/$d" || exit 1
done
# the block's lines from "## Using it" to the closing fence, continuations joined
sed -n '/^## Using it/,/^```$/p' "$src/README.md" | sed '1,/^```sh$/d; /^```$/d' |
	awk '{ if (sub(/\\$/, "")) { buf = buf $0; next } print buf $0; buf = "" }' \
		>"$tmp/commands"
[ -s "$tmp/commands" ] || { echo "readme_examples: no commands found" >&2; exit 1; }
cd "$tmp" || exit 1
failed=0
n=0
while IFS= read -r line; do
	case $line in
	build/capsim*) ;;
	*) continue ;;
	esac
	want=$(printf '%s\n' "$line" | sed -n 's/.*#.*exit \([0-9]\).*/\1/p')
	[ -n "$want" ] || want=0
	cmd="'$capsim'${line#build/capsim}"
	sh -c "$cmd" >"$tmp/out" 2>&1 </dev/null
	rc=$?
	n=$((n + 1))
	if [ "$rc" -ne "$want" ]; then
		echo "readme_examples: FAIL (exit $rc, expected $want): $line" >&2
		tail -n 5 "$tmp/out" >&2
		failed=1
	fi
done <"$tmp/commands"
[ "$failed" -eq 0 ] && echo "readme_examples: $n commands ok"
exit "$failed"
