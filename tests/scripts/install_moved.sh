#!/bin/sh
# install_moved.sh CMAKE BUILD_DIR SOURCE_DIR - `cmake --install` to a
# temporary prefix, move the prefix, and run the installed capsim from another
# directory with CAPSIM_DATA unset: it must find the catalog it installed
# (PREFIX/share/capsim, beside its bin/), not the source tree nor a path baked
# in at build time, and the documentation must be installed beside it.
set -u
cmake=$1
build=$2
src=$3

fail() {
	echo "install_moved: FAIL: $*" >&2
	exit 1
}

tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
"$cmake" --install "$build" --prefix "$tmp/first" >"$tmp/install.log" 2>&1 ||
	fail "cmake --install exited $?: $(cat "$tmp/install.log")"
mv "$tmp/first" "$tmp/moved" || fail "cannot move the prefix"
prefix=$tmp/moved
mkdir "$tmp/elsewhere" && cd "$tmp/elsewhere" || fail "cannot make a working directory"
unset CAPSIM_DATA

out=$("$prefix/bin/capsim" run --json 2>"$tmp/err")
rc=$?
[ "$rc" -eq 0 ] || fail "PREFIX/bin/capsim run --json exited $rc: $(cat "$tmp/err")"
case $out in
*'"step_time_s"'*) ;;
*) fail "run --json printed no step_time_s: $out" ;;
esac
# the inputs it read are the installed ones
case $out in
*"\"$prefix/share/capsim/scenarios/default.xml\""*) ;;
*) fail "the default scenario was not read from $prefix/share/capsim: $out" ;;
esac
case $out in
*"\"$src/"*) fail "an input was read from the source tree $src" ;;
esac

# the installed files validate, profiles included
"$prefix/bin/capsim" validate "$prefix"/share/capsim/scenarios/*.xml \
	"$prefix"/share/capsim/hardware/calibrated/*.xml >/dev/null 2>"$tmp/err" ||
	fail "validate of the installed files: $(cat "$tmp/err")"

for f in README.md LICENSE user-guide.md architecture.md; do
	[ -s "$prefix/share/doc/capsim/$f" ] || fail "share/doc/capsim/$f not installed"
done
# the manual page and the completion, as the binary writes them
[ -s "$prefix/share/man/man1/capsim.1" ] || fail "share/man/man1/capsim.1 not installed"
"$prefix/bin/capsim" help --man | cmp -s - "$prefix/share/man/man1/capsim.1" ||
	fail "the installed capsim.1 is not what capsim help --man writes"
for cmd in $("$prefix/bin/capsim" --help | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p'); do
	grep -q "^\\\\fB$cmd\\\\fR\$" "$prefix/share/man/man1/capsim.1" ||
		fail "capsim.1 does not list the command $cmd"
done
[ -s "$prefix/share/bash-completion/completions/capsim" ] ||
	fail "share/bash-completion/completions/capsim not installed"
[ -s "$prefix/share/zsh/site-functions/_capsim" ] || fail "share/zsh/site-functions/_capsim"

# examples by name from the installed catalog; the probes beside it
out=$("$prefix/bin/capsim" run h100-8node-ndr --json --no-intervals 2>"$tmp/err") ||
	fail "run h100-8node-ndr by name: $(cat "$tmp/err")"
case $out in
*"\"$prefix/share/capsim/scenarios/h100-8node-ndr.xml\""*) ;;
*) fail "run by name did not read the installed scenario" ;;
esac
"$prefix/bin/capsim" sweep gpus-and-fabric --plan >/dev/null 2>"$tmp/err" ||
	fail "sweep by name from the installed examples: $(cat "$tmp/err")"
[ "$("$prefix/bin/capsim" calibrate path attn_probe.py)" = \
	"$prefix/share/capsim/calibrate/torch/attn_probe.py" ] ||
	fail "calibrate path attn_probe.py: not the installed probe"
[ -x "$prefix/share/capsim/calibrate/results/refit.sh" ] || fail "refit.sh not installed"
echo "install_moved: ok ($prefix)"
