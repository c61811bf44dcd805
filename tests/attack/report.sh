# report.sh - capsim report: names from a shared sweep store are data in
# every language the report writes (gnuplot, Markdown, HTML, SVG, CSV), no
# file of the report's directory is followed or opened where something was
# planted, and gnuplot runs under a time limit.
#
# The behaviour asserted (src/report/report.h, src/util/escape.h):
# - a sweep named with backticks, a newline and system(...), <script>, -->
#   or a bidi override runs nothing and is written escaped;
# - DIR/report.*, DIR/summary.csv and every file of DIR/figures/ replace
#   what is at their name (a symlink, a FIFO) without following or opening
#   it; gnuplot draws in a private directory, so a link planted at any name
#   it might use is never written through; DIR/figures as a link is refused;
# - a gnuplot that never returns is stopped after --gnuplot-timeout (exit 1,
#   the figure named), one that fails leaves its messages in figures/NAME.log.
NS_CASES=""

REPORT_SC=$SRC/scenarios/report/h200-owned-ib.xml
FIGS="scaling breakdown cost power tornado goodput"

# report ARGS...: capsim report of the one shipped design into $T/r, bounded
# in time so that a hang fails the case instead of the suite
report() {
	timeout 120 "$CAPSIM" report "$REPORT_SC" --out "$T/r" --no-progress "$@" >"$OUT" 2>"$ERR"
}

# the victim: a file that must not change, and its checksum
victim() {
	echo "the victim: must not change" >"$T/victim"
	chmod 0600 "$T/victim"
	VSUM=$(sha256sum <"$T/victim")
}

victim_intact() {
	[ "$(sha256sum <"$T/victim")" = "$VSUM" ] || fail "the victim behind a planted link changed ($1)"
	[ "$(stat -c %a "$T/victim")" = 600 ] || fail "the victim's mode changed ($1)"
}

# no_drawing_left [DIR...]: no private drawing directory left in DIR/figures
# ($T/r by default)
no_drawing_left() {
	local left
	[ $# -gt 0 ] || set -- "$T/r"
	left=$(for d in "$@"; do find "$d/figures" -name '.drawing-*' 2>/dev/null; done)
	[ -z "$left" ] || fail "a drawing directory was left behind: $left"
}

# a sweep store whose sweep is named by an attacker: a command in backquotes,
# a newline that starts a gnuplot system() call, markup, a comment's end
case_store_names_are_data() {
	command -v sqlite3 >/dev/null 2>&1 || skip "the sqlite3 command is not installed"
	(cd "$SRC" && "$CAPSIM" sweep scenarios/sweeps/report-70b.xml --db "$T/s.db") \
		>"$OUT" 2>"$ERR" || fail "the sweep failed: $(head -c 300 "$ERR")"
	# three names, each within the 50 bytes of a design's label
	local names=(
		"x\`touch $T/pb\`\"'"
		"$(printf '\nsystem("touch %s/ps")' "$T")"
		"$(printf '<script>alert(1)</script>\342\200\256-->|')"
	) k=0 name
	for name in "${names[@]}"; do
		k=$((k + 1))
		sqlite3 "$T/s.db" "UPDATE sweeps SET name = '${name//\'/\'\'}';" ||
			fail "cannot rename the sweep"
		(cd "$SRC" && timeout 120 "$CAPSIM" report --db "$T/s.db" --out "$T/r$k" \
			--no-progress) >"$OUT" 2>"$ERR"
		check $? 0 "report.html" "capsim report --db (a sweep named '$name')"
		local f
		for f in "$T/r$k"/report.md "$T/r$k"/report.html "$T/r$k"/figures/*.svg; do
			grep -q '<script' "$f" && fail "r$k/$(basename "$f") holds raw <script>"
		done
		grep -qP '\xe2\x80\xae' "$T/r$k"/report.* "$T/r$k"/summary.csv "$T/r$k"/figures/*.gp &&
			fail "a raw bidi override was written"
		# the CSV: a header and three records, one line each
		[ "$(wc -l <"$T/r$k/summary.csv")" -eq 4 ] ||
			fail "summary.csv is not 4 lines: a name split a record"
		# every line of a script or data file is capsim's own
		grep -q '^system' "$T/r$k"/figures/*.gp "$T/r$k"/figures/*.dat &&
			fail "the name's newline reached a script"
	done
	[ -e "$T/pb" ] && fail "a command in backquotes ran"
	[ -e "$T/ps" ] && fail "a gnuplot system() call ran"
	grep -qF '&lt;script&gt;' "$T/r3/report.md" || fail "report.md lacks the escaped name"
	grep -qF '\u{202E}' "$T/r3/report.md" || fail "report.md lacks the bidi override made visible"
	grep -qF '\x0asystem' "$T/r2/report.md" || fail "report.md lacks the newline made visible"
	no_drawing_left "$T/r1" "$T/r2" "$T/r3"
}

# links planted at every name the report and gnuplot have used or might use
case_planted_links() {
	victim
	mkdir -p r/figures
	local f n
	for f in $FIGS; do
		for n in "$f.svg.tmp" "$f.png.tmp" "$f.log" "$f.dat" "$f.gp" "$f.svg" "$f.png"; do
			ln -s ../../victim "r/figures/$n"
		done
	done
	ln -s /nonexistent-capsim-dir/created r/figures/gnuplot.log
	for n in report.md report.html summary.csv report.md.tmp; do
		ln -s ../victim "r/$n"
	done
	report
	check $? 0 "report.html" "capsim report (planted links)"
	victim_intact "report"
	for f in $FIGS; do
		for n in "$f.dat" "$f.gp" "$f.svg" "$f.png"; do
			[ -f "r/figures/$n" ] && [ ! -L "r/figures/$n" ] ||
				fail "figures/$n is not a regular file of its own"
		done
	done
	for n in report.md report.html summary.csv; do
		[ -f "r/$n" ] && [ ! -L "r/$n" ] || fail "$n is not a regular file of its own"
	done
	no_drawing_left
}

# DIR/figures a link to elsewhere: refused, nothing written there
case_figures_dir_link() {
	mkdir -p r elsewhere
	ln -s ../elsewhere r/figures
	report
	check $? 1 "not a directory of capsim's own (a symbolic link)" "capsim report (figures a link)"
	[ -z "$(ls -A elsewhere)" ] || fail "something was written through the link: $(ls -A elsewhere)"
}

# a FIFO planted at a report file's name: replaced, never opened (opening a
# FIFO with no reader would block for ever)
case_planted_fifo() {
	mkdir -p r/figures
	mkfifo r/report.md r/figures/cost.dat
	report
	check $? 0 "report.html" "capsim report (planted FIFOs)"
	[ -f r/report.md ] && [ ! -p r/report.md ] || fail "report.md is still a FIFO"
	[ -f r/figures/cost.dat ] || fail "figures/cost.dat is still a FIFO"
}

# fake_gnuplot BODY: a gnuplot first on PATH that runs BODY (sh)
fake_gnuplot() {
	mkdir -p bin
	printf '#!/bin/sh\n%s\n' "$1" >bin/gnuplot
	chmod +x bin/gnuplot
}

# a gnuplot that never returns: stopped after --gnuplot-timeout, exit 1
case_gnuplot_hangs() {
	fake_gnuplot "echo \$\$ >\"$T/pid\"; exec sleep 600"
	PATH=$T/bin:$PATH report --gnuplot-timeout 1s
	check $? 1 "gnuplot did not finish scaling.gp within 1 s" "capsim report (gnuplot hangs)"
	has "--gnuplot-timeout"
	[ -s "$T/pid" ] || fail "the fake gnuplot did not run"
	# the stopped gnuplot is gone, not left running
	kill -0 "$(cat "$T/pid")" 2>/dev/null && fail "the stopped gnuplot still runs"
	no_drawing_left
}

# a gnuplot that fails: its messages kept as figures/NAME.log, exit 1
case_gnuplot_fails() {
	fake_gnuplot 'echo "line 12: all went wrong" >&2; exit 1'
	PATH=$T/bin:$PATH report
	check $? 1 "gnuplot failed on" "capsim report (gnuplot fails)"
	grep -qF "all went wrong" r/figures/scaling.log || fail "figures/scaling.log lacks gnuplot's message"
	no_drawing_left
}

# --gnuplot-timeout is a time in its range
case_gnuplot_timeout_arg() {
	report --gnuplot-timeout 0
	check $? 2 "--gnuplot-timeout" "capsim report --gnuplot-timeout 0"
	report --gnuplot-timeout "5 parsecs"
	check $? 2 "--gnuplot-timeout" "capsim report --gnuplot-timeout '5 parsecs'"
	[ -e r ] && fail "a refused option made the report directory"
	report --gnuplot-timeout "90 s"
	check $? 0 "report.html" "capsim report --gnuplot-timeout '90 s'"
}
