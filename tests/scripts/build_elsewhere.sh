#!/bin/sh
# build_elsewhere.sh CAPSIM LIBRARY SOURCE_DIR - capsim built in a build
# directory outside its source tree (cmake -S SRC -B /elsewhere): copied with
# its library into a directory whose only other file is a CMakeCache.txt
# naming the source tree, and run from another directory with CAPSIM_DATA
# unset, it must find the catalog and the error model there, as one built
# in SRC/build does; without the cache it must not (so the cache is what
# found them).
set -u
capsim=$1
lib=$2
src=$3

fail() {
	echo "build_elsewhere: FAIL: $*" >&2
	exit 1
}

tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/rel" "$tmp/elsewhere" || fail "cannot make directories"
cp "$capsim" "$tmp/rel/capsim" || fail "cannot copy $capsim"
cp "$lib" "$tmp/rel/$(basename "$lib")" || fail "cannot copy $lib"
ln -s "$(basename "$lib")" "$tmp/rel/libcapsim.so.0" 2>/dev/null
printf 'CMAKE_HOME_DIRECTORY:INTERNAL=%s\n' "$src" >"$tmp/rel/CMakeCache.txt"
cd "$tmp/elsewhere" || fail "cannot enter a working directory"
unset CAPSIM_DATA
# the library beside the executable, not the one its run path names
LD_LIBRARY_PATH=$tmp/rel
export LD_LIBRARY_PATH

run() {
	"$tmp/rel/capsim" collective "$src/scenarios/h100-8node-ndr.xml" --op all-reduce \
		--bytes 1GiB >"$tmp/out" 2>"$tmp/err"
}
run || fail "capsim collective exited $? beside a CMakeCache.txt naming $src: $(cat "$tmp/err")"
grep -q "busbw" "$tmp/out" || fail "no bus bandwidth in: $(cat "$tmp/out")"
rm "$tmp/rel/CMakeCache.txt"
if run; then
	fail "capsim collective found its data without the CMakeCache.txt: the test does not test it"
fi
grep -q "error model" "$tmp/err" || fail "without the cache, expected the error model missing: $(cat "$tmp/err")"
echo "ok: a build directory elsewhere finds its source tree's catalog and error model"
