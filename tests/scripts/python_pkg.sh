#!/bin/sh
# python_pkg.sh CMAKE BUILD_DIR SOURCE_DIR [PRELOAD] - the Python package as a
# user installs it: `cmake --install` to a temporary prefix, a venv made with
# --system-site-packages, `pip install --no-build-isolation` of a copy of
# python/ (no network: --no-index), then tests/python/test_capsim.py under
# `python3 -m unittest` and every ```python block of docs/python.md, run in
# order as one program, against the installed library found through
# pkg-config (PKG_CONFIG_LIBDIR the prefix's). PRELOAD: a sanitizer runtime
# the interpreter loads first (a sanitizer build's library needs it).
# Skips (77) only where no python3 has venv, pip, setuptools and wheel.
set -u
cmake=$1
build=$2
src=$3
preload=${4:-}

fail() {
	echo "python_pkg: FAIL: $*" >&2
	exit 1
}

# a python3 with what `pip install --no-build-isolation` needs (Debian:
# python3-venv, python3-pip, python3-setuptools, python3-wheel)
python=""
for p in ${CAPSIM_PYTHON:-} python3 /usr/bin/python3; do
	command -v "$p" >/dev/null 2>&1 || continue
	if "$p" -c 'import venv, ensurepip, setuptools, wheel' 2>/dev/null; then
		python=$p
		break
	fi
done
if [ -z "$python" ]; then
	echo "python_pkg: SKIP: no python3 with venv, pip, setuptools and wheel" \
		"(Debian: python3-venv python3-pip python3-setuptools python3-wheel)"
	exit 77
fi

tmp=$(mktemp -d) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
	fail "cmake --install exited $?: $(cat "$tmp/install.log")"
pc=$(find "$prefix" -name capsim.pc) && [ -n "$pc" ] || fail "no capsim.pc installed"

"$python" -m venv --system-site-packages "$tmp/venv" >"$tmp/venv.log" 2>&1 ||
	fail "$python -m venv exited $?: $(cat "$tmp/venv.log")"
cp -R "$src/python" "$tmp/python" || fail "cannot copy python/"
"$tmp/venv/bin/python" -m pip install --no-index --no-build-isolation "$tmp/python" \
	>"$tmp/pip.log" 2>&1 || fail "pip install exited $?: $(tail -20 "$tmp/pip.log")"

# the installed library alone: found through pkg-config, nothing of the source tree
mkdir "$tmp/work" && cd "$tmp/work" || fail "cannot make a working directory"
unset CAPSIM_DATA CAPSIM_LIBRARY PKG_CONFIG_PATH PYTHONPATH
export PKG_CONFIG_LIBDIR="$(dirname "$pc")"
export CAPSIM_TEST_PREFIX="$prefix" CAPSIM_TEST_SOURCE="$src" CAPSIM_TEST_WORK="$tmp/work"
if [ -n "$preload" ]; then
	# the interpreter's own allocations are not capsim's to check
	export LD_PRELOAD="$preload" ASAN_OPTIONS="detect_leaks=0:abort_on_error=0"
fi
cp "$src/tests/python/test_capsim.py" "$tmp/work/" || fail "cannot copy the test"
"$tmp/venv/bin/python" -m unittest -v test_capsim 2>&1 || fail "python3 -m unittest test_capsim"

# docs/python.md's example, its ```python blocks in order as one program
awk '/^```python$/ { on = 1; next } /^```/ { on = 0 } on' "$src/docs/python.md" >example.py
[ -s example.py ] || fail "docs/python.md has no python block"
"$tmp/venv/bin/python" example.py >example.out 2>&1 ||
	fail "docs/python.md's example exited $?: $(cat example.out)"
echo "python_pkg: ok (unittest and docs/python.md's example, $python)"
