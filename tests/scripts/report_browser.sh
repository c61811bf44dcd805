#!/bin/sh
# report_browser.sh CAPSIM - the shipped report example (scenarios/report/)
# written by CAPSIM and loaded by headless Chromium (Debian's chromium, which
# .ci/setup.sh installs for the tests): a screenshot and a PDF are made, the
# browser exits 0 and logs no error of the page (a JavaScript or a resource
# error). Exit 77 (skipped, with the reason) where chromium is not installed.
set -u
CAPSIM=$1
SRC=$(cd "$(dirname "$0")/../.." && pwd)
command -v chromium >/dev/null 2>&1 || { echo "SKIP: chromium is not installed"; exit 77; }
T=$(mktemp -d /tmp/capsim-report-browser-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail=0
"$CAPSIM" report "$SRC"/scenarios/report/h100-rented.xml "$SRC"/scenarios/report/h200-owned-ib.xml \
	"$SRC"/scenarios/report/h200-owned-roce.xml --out "$T/r" --no-progress >/dev/null ||
	{ echo "FAIL: capsim report"; exit 1; }
run() {
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--enable-logging=stderr --v=0 --user-data-dir="$T/profile" "$@" \
		"file://$T/r/report.html" >"$T/out" 2>"$T/err"
	st=$?
	[ "$st" -eq 0 ] || { echo "FAIL: chromium $*: exit $st"; sed 's/^/  | /' "$T/err" | tail -5; fail=1; }
	# the page's own errors (console, failed loads); the sandbox's D-Bus
	# complaints are the machine's, not the page's
	if grep -E 'CONSOLE|Uncaught|net::ERR|Failed to load resource' "$T/err"; then
		echo "FAIL: chromium $*: the page logged errors"
		fail=1
	fi
}
run --window-size=1100,1500 --screenshot="$T/shot.png"
run --print-to-pdf="$T/report.pdf" --no-pdf-header-footer
[ -s "$T/shot.png" ] && [ "$(head -c 8 "$T/shot.png" | od -An -c | tr -d ' \n')" = "211PNG\r\n032\n" ] ||
	{ echo "FAIL: no screenshot (a PNG)"; fail=1; }
[ "$(head -c 5 "$T/report.pdf" 2>/dev/null)" = "%PDF-" ] || { echo "FAIL: no PDF"; fail=1; }
# the page tree's root counts every page: the largest /Count
pages=$(grep -ao '/Count [0-9]*' "$T/report.pdf" | awk '$2 > m { m = $2 } END { print m + 0 }')
[ "${pages:-0}" -ge 3 ] || { echo "FAIL: the PDF has ${pages:-0} pages, expected 3 or more"; fail=1; }
[ "$fail" -eq 0 ] && echo "ok: screenshot and a PDF of $pages pages"
exit "$fail"
