#!/bin/sh
# .ci/setup.sh run|test - on a fresh Debian 12 machine: install the Debian
# packages capsim needs (those missing), configure, build, then either run
# capsim on the default scenario (run) or pass the whole test suite (test).
#
# test: a gcc build with -Werror, a clang-14 ThreadSanitizer build of the
# sweep's threads and its test, then a clang-14 build with AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer in which ctest runs every test,
# the fuzz targets sharing 60 seconds (CAPSIM_FUZZ_SECONDS). The long tier
# (full-length fuzzing, the benchmarks) is not run here: CAPSIM_LONG=1 ctest -L long.
# Each phase's wall time is printed as it ends (docs/performance.md records them).
set -eu
cd "$(dirname "$0")/.."
mode=${1:-run}

pkgs="build-essential cmake pkg-config git libxml2-dev libxml2-utils libgsl-dev
      libsqlite3-dev libjansson-dev libyaml-dev libncurses-dev libcmocka-dev libopenmpi-dev
      openmpi-bin gnuplot-nox"
if [ "$mode" = test ]; then
	# chromium: headless, for the report's browser test (tests/scripts/report_browser.sh);
	# tmux: the explorer's test drives it (tests/scripts/explore_tmux.sh)
	# sqlite3: the attack suite edits stores as an attacker would (tests/attack/)
	# python3-venv, -pip, -setuptools, -wheel: the Python package installed and tested
	# (tests/scripts/python_pkg.sh); zsh: the zsh completion parsed (scripts/conventions.sh)
	pkgs="$pkgs clang-14 libfuzzer-14-dev libclang-rt-14-dev chromium tmux sqlite3
	      python3-venv python3-pip python3-setuptools python3-wheel zsh"
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "capsim: installing Debian packages:$missing"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
fi
jobs=$(nproc 2>/dev/null || echo 2)
start=$(date +%s)
last=$start
# phase NAME: the seconds since the last phase (or the start), and in all
phase() {
	now=$(date +%s)
	echo "capsim: $1: $((now - last)) s (in all $((now - start)) s)"
	last=$now
}

case "$mode" in
run)
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPSIM_TESTS=OFF >/dev/null
	cmake --build build -j "$jobs"
	./build/capsim run scenarios/default.xml
	;;
test)
	# 1. gcc, warnings as errors, no tests
	cmake -S . -B build-gcc -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPSIM_WERROR=ON \
		-DCAPSIM_TESTS=OFF >/dev/null
	cmake --build build-gcc -j "$jobs"
	phase "gcc -Werror build"
	# 2. clang-14 with ThreadSanitizer: the sweep's threads (capsim sweep -j, its
	# signal flag) through unit/test_sweep's threaded and interrupted sweeps and
	# the sweep library's own test (two threads, a stop and a resume); a
	# report stops the run and fails it. Without MPI: Open MPI's own locks are not
	# capsim's to check.
	cmake -S . -B build-tsan -DCMAKE_C_COMPILER=clang-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DCAPSIM_WERROR=ON -DCAPSIM_MPI=OFF -DCMAKE_C_FLAGS=-fsanitize=thread \
		-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >/dev/null
	cmake --build build-tsan -j "$jobs" --target capsim test_sweep test_sweep_run \
		test_api_threads
	phase "ThreadSanitizer build"
	TSAN_OPTIONS=halt_on_error=1 CAPSIM_TEST_FILTER='*thread*,*interrupt*' \
		ctest --test-dir build-tsan -R '^unit/test_sweep$' --output-on-failure
	TSAN_OPTIONS=halt_on_error=1 \
		ctest --test-dir build-tsan -R '^unit/test_sweep_run$' --output-on-failure
	# libcapsim's handles on four threads at once (tests/api/threads.c)
	TSAN_OPTIONS=halt_on_error=1 \
		ctest --test-dir build-tsan -R '^api/threads$' --output-on-failure
	phase "ThreadSanitizer tests"
	# 3. clang-14 with ASan + UBSan (+ libFuzzer): every test under ctest
	# (last, so that the closing summary is the whole suite's)
	cmake -S . -B build-asan -DCMAKE_C_COMPILER=clang-14 -DCMAKE_BUILD_TYPE=Debug \
		-DCAPSIM_SANITIZE=ON -DCAPSIM_WERROR=ON -DCAPSIM_FUZZ=ON \
		-DCAPSIM_FUZZ_SECONDS="${CAPSIM_FUZZ_SECONDS:-60}" >/dev/null
	cmake --build build-asan -j "$jobs"
	phase "ASan+UBSan+libFuzzer build"
	ctest --test-dir build-asan --output-on-failure -j "$jobs"
	phase "ASan+UBSan tests (ctest)"
	;;
*)
	echo "usage: .ci/setup.sh run|test" >&2
	exit 2
	;;
esac
