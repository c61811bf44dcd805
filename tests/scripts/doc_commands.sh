#!/bin/sh
# doc_commands.sh CAPSIM DOC... - run every command line that the documents
# show (README.md, docs/*.md), exactly as written, and check its exit status.
#
# Which lines are commands:
#   - Only lines inside fenced code blocks (``` at the start of a line,
#     indented or not). A block is a command block when its label is sh, bash,
#     shell or console, or when it has no label and its first non-blank line
#     starts with "$ ", "capsim ", "build/capsim" or "./build/capsim". Blocks
#     with another label (xml, text) and unlabelled blocks of output are not.
#   - In a command block that has "$ " prompts, the lines after a prompt are
#     the commands and the rest is output. Otherwise every line is a command,
#     except blank lines and lines that start with "#".
#   - A line ending in "\" goes on on the next line, as in the shell. A
#     trailing "# comment" stays; the shell drops it.
# What each must do:
#   - exit 0, unless the last non-blank line above the block's opening fence
#     is "<!-- expect-exit: N -->": then each command of the block must exit N
#     (an example of an error, or of a failed check); a command whose own
#     trailing comment says "exit N" must exit N;
#   - print no sanitizer report.
# Skipped, each named in the output with its rule (nothing is skipped silently):
#   setup     "sh .ci/setup.sh ...": installs packages and builds the project
#   packages  a line running apt-get or sudo
#   build     a line starting "cmake ": configures or builds the project
#             (the test runs the build under test instead)
#   bench     a line naming a path under /tmp/: runs a benchmark or a binary
#             that a skipped cmake line builds there
#   gpu       "capsim calibrate run": needs an NVIDIA GPU and calibrate/'s
#             CUDA programs
#   install   a command under /opt/capsim/: an installed copy (the test
#             cli/install-moved installs one and runs it)
# How they run: in a scratch copy of the repository (everything at its top but
# .git and build directories), so the tree is never written; with CAPSIM_DATA
# the copy; with "capsim" on PATH and build/capsim in the copy both the
# CAPSIM under test (and build/tests/golden_diff $GOLDEN_DIFF, else the one
# in CAPSIM's build directory, for tests/scripts/golden.sh). The commands of one document run in order in one copy
# (a later command may read what an earlier one wrote: calibrate import, fit).
# Exit 0 when every command did as it must, 1 otherwise, 2 for bad usage.
set -u
[ $# -ge 2 ] || { echo "usage: sh tests/scripts/doc_commands.sh CAPSIM DOC..." >&2; exit 2; }
capsim=$1
shift
case "$capsim" in /*) ;; *) capsim=$PWD/$capsim ;; esac
[ -x "$capsim" ] || { echo "doc_commands.sh: $capsim is not an executable" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
limit=""
command -v timeout >/dev/null 2>&1 && limit="timeout 300"

# extract DOC: one record a command, "LINE<tab>EXPECTED-EXIT<tab>COMMAND"
extract() {
	awk '
	BEGIN { marker = 0 }
	function starts_cmd(s) {
		sub(/^[ \t]+/, "", s)
		return s ~ /^(\$ |capsim |build\/capsim|\.\/build\/capsim)/
	}
	function emit_block(   i, s, prompts, cmd, at, first) {
		first = ""
		for (i = 1; i <= n; i++)
			if (body[i] !~ /^[ \t]*$/) { first = body[i]; break }
		if (!(info ~ /^(sh|bash|shell|console)$/ || (info == "" && starts_cmd(first))))
			return
		prompts = 0
		for (i = 1; i <= n; i++)
			if (body[i] ~ /^[ \t]*\$ /) prompts = 1
		cmd = ""
		for (i = 1; i <= n; i++) {
			s = body[i]
			if (cmd == "") {
				if (prompts) {
					if (s !~ /^[ \t]*\$ /) continue
					sub(/^[ \t]*\$ /, "", s)
				} else if (s ~ /^[ \t]*$/ || s ~ /^[ \t]*#/) {
					continue
				}
				at = line[i]
			}
			if (s ~ /\\$/) {
				cmd = cmd substr(s, 1, length(s) - 1)
				continue
			}
			cmd = cmd s
			sub(/^[ \t]+/, "", cmd)
			printf "%d\t%s\t%s\n", at, expect, cmd
			cmd = ""
		}
		if (cmd != "") {
			sub(/^[ \t]+/, "", cmd)
			printf "%d\t%s\t%s\n", at, expect, cmd
		}
	}
	/^[ \t]*```/ {
		if (!inblock) {
			inblock = 1
			info = $0
			sub(/^[ \t]*```/, "", info)
			gsub(/[ \t]/, "", info)
			expect = marker
			n = 0
		} else {
			inblock = 0
			emit_block()
			marker = 0
		}
		next
	}
	inblock { body[++n] = $0; line[n] = NR; next }
	/^[ \t]*$/ { next }
	/^<!-- expect-exit: [0-9]+ -->[ \t]*$/ {
		marker = $0
		sub(/^<!-- expect-exit: /, "", marker)
		sub(/ -->.*/, "", marker)
		next
	}
	{ marker = 0 }
	' "$1"
}

# the scratch copy
copy=$tmp/repo
mkdir -p "$copy/build" "$tmp/bin"
for e in "$root"/* "$root"/.ci; do
	n=${e##*/}
	case "$n" in build | build-* | '*') continue ;; esac
	cp -R "$e" "$copy/"
done
ln -s "$capsim" "$copy/build/capsim"
# golden_diff too, where golden.sh looks for it beside build/capsim
gd=${GOLDEN_DIFF:-$(dirname "$capsim")/tests/golden_diff}
if [ -x "$gd" ]; then
	mkdir -p "$copy/build/tests"
	ln -s "$gd" "$copy/build/tests/golden_diff"
fi
ln -s "$capsim" "$tmp/bin/capsim"
PATH=$tmp/bin:$PATH
CAPSIM_DATA=$copy
export PATH CAPSIM_DATA

status=0
tab=$(printf '\t')
for doc in "$@"; do
	case "$doc" in /*) ;; *) doc=$root/$doc ;; esac
	rel=${doc#"$root"/}
	[ -f "$doc" ] || { echo "FAIL $rel: no such file"; status=1; continue; }
	extract "$doc" >"$tmp/cmds"
	total=0
	while IFS="$tab" read -r at want cmd; do
		total=$((total + 1))
		rule=""
		case "$cmd" in
		"sh .ci/setup.sh"*) rule=setup ;;
		*apt-get* | "sudo "*) rule=packages ;;
		"cmake "*) rule=build ;;
		*/tmp/*) rule=bench ;;
		"capsim calibrate run"* | *"/capsim calibrate run"*) rule=gpu ;;
		/opt/capsim/*) rule=install ;;
		esac
		said=$(printf '%s\n' "$cmd" | sed -n 's/.*#.*exit \([0-9][0-9]*\).*/\1/p')
		[ -n "$said" ] && want=$said
		if [ -n "$rule" ]; then
			echo "skip ($rule) $rel:$at: $cmd"
			continue
		fi
		(cd "$copy" && $limit sh -c "$cmd") >"$tmp/out" 2>"$tmp/err" </dev/null
		got=$?
		why=""
		[ "$got" -eq "$want" ] || why="exit $got, expected $want"
		if grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$tmp/err"; then
			why="${why:+$why; }sanitizer report"
		fi
		if [ -z "$why" ]; then
			echo "ok $rel:$at: $cmd"
		else
			echo "FAIL $rel:$at: $cmd: $why"
			echo "--- stderr (last 15 lines):"
			tail -n 15 "$tmp/err"
			echo "--- stdout (last 5 lines):"
			tail -n 5 "$tmp/out"
			echo "---"
			status=1
		fi
	done <"$tmp/cmds"
	[ "$total" -gt 0 ] || echo "$rel: no command lines"
done
exit $status
