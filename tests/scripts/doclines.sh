#!/bin/sh
# doclines.sh [--long] [--show] BUILD [DOC...] - run every line of every fenced
# ```sh block of the documents (default: README.md and docs/*.md) as a reader
# would, and check it. --show also prints, under each command that ran as
# documented, the heading it sits under and all it printed (with --long, on
# docs/performance.md: every figure the page records, measured again here;
# tests/bench/figures.sh).
#
# BUILD is the build directory whose capsim the documents run as build/capsim
# (the README's build). For each document, in the order its lines appear:
#   - one shell session (sh), started in a copy of the checkout's root: the
#     files git knows of (tracked, and untracked ones it does not ignore), and
#     build/ holding a copy of BUILD's capsim (so that it finds the copy's
#     catalog, as a build inside a checkout does) beside links to the rest of
#     BUILD (build/tests/golden_diff, the benchmarks, cmake --install's
#     scripts). A variable set or a directory entered by one line is seen by
#     the next; HOME and TMPDIR are the test's own, CAPSIM_DATA is unset.
#   - a line ending in "\" goes on on the next line: one command;
#   - a command whose trailing comment ends in "exit N" must exit N; every
#     other command must exit 0; none may print a sanitizer report;
#   - not run, but counted and listed: a command whose trailing comment ends
#     in "needs a GPU" or "needs N nodes" (hardware this test cannot have),
#     and "sh .ci/setup.sh ..." marked "the README's setup: not run by the doc
#     test" (it installs packages and builds; run here it would recurse);
#   - a command whose trailing comment ends in "long: run by ctest -L long"
#     (a build of its own, a benchmark at full length: minutes) runs only
#     with --long (ctest's doc/long, label long); without it, it is listed;
#   - after the last line, nothing in the copy may differ from the checkout's
#     files (a file added, removed or changed outside build/ fails, named).
# A ```bash or ```shell block, or an unlabelled block whose first line is a
# command (capsim, build/capsim, sh, cmake), fails: commands go in ```sh blocks
# and what they print in ```text or ```console blocks.
# A failure names DOCUMENT:LINE, the command, the exit status expected and
# found, and the tail of its output. Exit 0 when every document passes, 1 when
# one fails, 2 for bad usage.
set -u
usage() {
	echo "usage: sh tests/scripts/doclines.sh [--long] [--show] BUILD [DOC...]" >&2
	exit 2
}
long=0 show=0
[ "${1:-}" = --long ] && { long=1; shift; }
[ "${1:-}" = --show ] && { show=1; shift; }
[ $# -ge 1 ] || usage
build=$1
shift
case "$build" in /*) ;; *) build=$PWD/$build ;; esac
[ -x "$build/capsim" ] || { echo "doclines.sh: no capsim in $build" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -gt 0 ] || set -- "$root/README.md" "$root"/docs/*.md
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
limit=""
command -v timeout >/dev/null 2>&1 && limit="timeout ${CAPSIM_DOCLINES_TIMEOUT:-3300}"
tab=$(printf '\t')

# extract DOC DIR: each command into DIR/N (its lines as written), and one
# record a command on stdout: "N<tab>LINE<tab>RULE<tab>WANT" where RULE is run,
# hardware (a GPU or nodes), setup or long (run with --long); bad blocks as "0<tab>LINE<tab>bad<tab>LABEL"
extract() {
	awk -v dir="$2" -v long="$long" '
	function emit(   last, want, rule, m) {
		k++
		printf "%s", cmd > (dir "/" k)
		close(dir "/" k)
		printf "%s\n", heading > (dir "/" k ".head")
		close(dir "/" k ".head")
		last = cmd
		sub(/\n$/, "", last)
		sub(/.*\n/, "", last)
		want = 0
		rule = "run"
		if (match(last, /#.*exit [0-9]+\)?[ \t]*$/)) {
			m = substr(last, RSTART, RLENGTH)
			sub(/.*exit /, "", m)
			sub(/[^0-9].*/, "", m)
			want = m + 0
		}
		if (last ~ /#.*needs (a GPU|[0-9]+ nodes)\)?[ \t]*$/)
			rule = "hardware"
		if (last ~ /#.*long: run by ctest -L long\)?[ \t]*$/)
			rule = long ? "run" : "long"
		if (last ~ /#.*the README.s setup: not run by the doc test\)?[ \t]*$/)
			rule = cmd ~ /^[ \t]*sh \.ci\/setup\.sh/ ? "setup" : "badsetup"
		printf "%d\t%d\t%s\t%d\n", k, at, rule, want
		cmd = ""
	}
	/^[ \t]*```/ {
		if (!inblock) {
			inblock = 1
			info = $0
			sub(/^[ \t]*```/, "", info)
			gsub(/[ \t]/, "", info)
			start = NR
			first = ""
			if (info == "bash" || info == "shell")
				printf "0\t%d\tbad\t%s\n", NR, info
		} else {
			inblock = 0
			if (cmd != "")
				emit()
			if (info == "" && first ~ /^[ \t]*(\$ )?(capsim|build\/capsim|sh|cmake) /)
				printf "0\t%d\tbad\tunlabelled\n", start
		}
		next
	}
	!inblock && /^#+ / { heading = $0 }
	!inblock && /^<!-- expect-exit:/ { printf "0\t%d\tbad\texpect-exit\n", NR }
	!inblock { next }
	first == "" && $0 !~ /^[ \t]*$/ { first = $0 }
	info != "sh" { next }
	cmd == "" && ($0 ~ /^[ \t]*$/ || $0 ~ /^[ \t]*#/) { next }
	{
		if (cmd == "")
			at = NR
		cmd = cmd $0 "\n"
		if ($0 !~ /\\$/)
			emit()
	}
	END { if (cmd != "") emit() }
	' "$1"
}

# the checkout's files, into DIR
make_copy() {
	mkdir -p "$1"
	if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$root" && git ls-files -z --cached --others --exclude-standard |
			xargs -0 sh -c 'for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\n" "$f"; done' sh |
			tar --no-recursion -cf - -T -) | (cd "$1" && tar -xf -)
	else
		# not a git checkout (an unpacked archive): everything but builds
		for e in "$root"/* "$root"/.ci; do
			case "${e##*/}" in build | build-* | '*') continue ;; esac
			cp -R "$e" "$1/"
		done
	fi
	mkdir -p "$1/build"
	for e in "$build"/* "$build"/.[!.]*; do
		[ -e "$e" ] || continue
		[ "${e##*/}" = capsim ] && continue
		ln -s "$e" "$1/build/${e##*/}"
	done
	cp "$build/capsim" "$1/build/capsim"
}

# what is in DIR outside build/: every path, and each file's checksum
manifest() {
	(cd "$1" && find . -path ./build -prune -o -print | LC_ALL=C sort &&
		find . -path ./build -prune -o -type f -exec cksum {} + | LC_ALL=C sort)
}

# the session's script: each command in braces (so that what it sets stays),
# its output to out/N, its status to status
session_script() {
	echo 'cd "$DOCLINES_COPY" || exit 125'
	while IFS="$tab" read -r k at rule want; do
		[ "$rule" = run ] || continue
		echo "echo $k >\"\$DOCLINES_OUT/started\"; date +%s.%N >\"\$DOCLINES_OUT/t0\""
		echo "{"
		cat "$tmp/cmd/$k"
		echo "} >\"\$DOCLINES_OUT/$k\" 2>&1 </dev/null"
		echo "echo \"$k \$? \$(date +%s.%N) \$(cat \"\$DOCLINES_OUT/t0\")\" >>\"\$DOCLINES_OUT/status\""
	done <"$tmp/index"
}

# the first line of command N, for messages
show() {
	head -n 1 "$tmp/cmd/$1" | sed 's/^[ \t]*//'
}

# the lines of the index that are not run: refused blocks and markers, and
# the lines listed as not run; counts into failed and skipped
report_unrun() {
	while IFS="$tab" read -r k at rule want; do
		case "$rule" in
		bad)
			if [ "$want" = expect-exit ]; then
				echo "FAIL $rel:$at: <!-- expect-exit --> marks no line: end each line meant to fail with # exit N"
			else
				echo "FAIL $rel:$at: a \`\`\`$want block of commands: commands go in \`\`\`sh blocks, what they print in \`\`\`text"
			fi
			failed=$((failed + 1)) ;;
		badsetup)
			printf '%s\n' "FAIL $rel:$at: $(show "$k"): the setup marker is for sh .ci/setup.sh lines only"
			failed=$((failed + 1)) ;;
		hardware | setup | long)
			printf '%s\n' "not run ($rule) $rel:$at: $(show "$k")"
			skipped=$((skipped + 1)) ;;
		esac
	done <"$tmp/index"
}

# run the document's session in the copy; its status into sess
run_session() {
	session_script >"$tmp/session.sh"
	# a sanitizer build's library links only with its sanitizers: the
	# documents' `cc` is then the build's compiler with them (DOCLINES_CC)
	if [ -n "${DOCLINES_CC:-}" ]; then
		mkdir -p "$tmp/bin"
		printf '#!/bin/sh\nexec %s "$@"\n' "$DOCLINES_CC" >"$tmp/bin/cc"
		chmod +x "$tmp/bin/cc"
		PATH=$tmp/bin:$PATH
	fi
	(
		unset CAPSIM_DATA GOLDEN_DIFF
		HOME=$tmp/home TMPDIR=$tmp/tmp DOCLINES_COPY=$copy DOCLINES_OUT=$tmp/out
		export HOME TMPDIR DOCLINES_COPY DOCLINES_OUT PATH
		$limit sh "$tmp/session.sh" >"$tmp/session.out" 2>&1 </dev/null
	)
	sess=$?
	: >>"$tmp/out/status"
}

# why command K (wanting status WANT) did not do as documented; "" when it did
verdict() {
	got=$(sed -n "s/^$1 \([0-9]*\) .*/\1/p" "$tmp/out/status")
	why=""
	if [ -z "$got" ]; then
		if [ "$(cat "$tmp/out/started" 2>/dev/null)" = "$1" ]; then
			why="the session stopped here (status $sess$([ "$sess" -eq 124 ] && echo ', timed out'))"
		else
			why="not reached: the session stopped before it"
		fi
		[ -f "$tmp/out/$1" ] || : >"$tmp/out/$1"
		tail -n 5 "$tmp/session.out" >>"$tmp/out/$1"
	elif [ "$got" -ne "$2" ]; then
		why="exit $got, expected $2"
	fi
	if grep -qE 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error:' "$tmp/out/$1"; then
		why="${why:+$why; }sanitizer report"
	fi
	printf '%s' "$why"
}

# each command run: ok with its time, or FAIL with why and its output's tail;
# counts into ran and failed
judge() {
	while IFS="$tab" read -r k at rule want; do
		[ "$rule" = run ] || continue
		why=$(verdict "$k" "$want")
		if [ -z "$why" ]; then
			took=$(awk -v k="$k" '$1 == k { printf "%.1f s", $3 - $4 }' "$tmp/out/status")
			if [ "$show" = 1 ] && ! cmp -s "$tmp/cmd/$k.head" "$tmp/shown.head" 2>/dev/null; then
				printf '\n%s\n' "$(cat "$tmp/cmd/$k.head")"
				cp "$tmp/cmd/$k.head" "$tmp/shown.head"
			fi
			printf '%s\n' "ok $rel:$at ($took): $(show "$k")"
			[ "$show" = 1 ] && sed 's/^/    | /' "$tmp/out/$k"
			ran=$((ran + 1))
		else
			printf '%s\n' "FAIL $rel:$at: $(sed 's/^[ \t]*//' "$tmp/cmd/$k" | tr '\n' ' ')"
			echo "    $why; its output (last 15 lines):"
			tail -n 15 "$tmp/out/$k" | sed 's/^/    | /'
			failed=$((failed + 1))
		fi
	done <"$tmp/index"
}

# nothing written into the copy outside build/; else each path named, one
# failure, and a fresh copy for the next document
check_copy() {
	manifest "$copy" >"$tmp/after"
	cmp -s "$tmp/before" "$tmp/after" && return
	echo "FAIL $rel: its commands wrote into the checkout (outside build/):"
	diff "$tmp/before" "$tmp/after" | sed -n 's/^[<>] //p' | awk '{ print $NF }' |
		LC_ALL=C sort -u | sed 's/^/    /'
	failed=$((failed + 1))
	chmod -R u+w "$copy" 2>/dev/null
	rm -rf "$copy"
	make_copy "$copy"
}

status=0
copy=$tmp/copy
make_copy "$copy"
manifest "$copy" >"$tmp/before"
mkdir -p "$tmp/home" "$tmp/tmp"
for doc in "$@"; do
	[ -f "$doc" ] || { echo "FAIL $doc: no such file"; status=1; continue; }
	doc=$(cd "$(dirname "$doc")" && pwd)/${doc##*/}
	rel=${doc#"$root"/}
	rm -rf "$tmp/cmd" "$tmp/out"
	mkdir -p "$tmp/cmd" "$tmp/out"
	extract "$doc" "$tmp/cmd" >"$tmp/index"
	ran=0 skipped=0 failed=0
	report_unrun
	run_session
	judge
	check_copy
	echo "$rel: $ran commands ran as documented, $skipped not run (listed above), $failed failed"
	[ "$failed" -eq 0 ] || status=1
done
exit $status
