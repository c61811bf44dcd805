/* screen.c - the what-if explorer's screen: a full-screen ncurses view of
 * the knobs (knob.h) and the results, recomputed on a worker thread as a
 * knob changes so that the keys never wait for it; see screen.h. Results
 * are read through the result table (eval.h), never its struct's members. */
#include "screen.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curses.h>
#include <jansson.h>

#include "catalog.h"
#include "eval.h"
#include "knob.h"
#include "optimize.h"
#include "outfile.h"
#include "scenario.h"
#include "xalloc.h"

/* ---- the worker: evaluations and searches off the keys' thread ---------------------- */

#define CURVE 5 /* the scaling curve: the nodes x 1/4, 1/2, 1, 2, 4 */

/* the value of the result key named key in r, or NAN where r has none */
static double val(const capsim_result *r, const char *key)
{
	return capsim_result_get(r, key, NAN);
}

/* whether r has a value of the result key named key */
static int has(const capsim_result *r, const char *key)
{
	const capsim_result_key *k = capsim_result_key_find(key);
	return k && capsim_result_has(r, k);
}

/* the memory a process may use on a GPU of the first node group, from the
 * result table's groups key; NAN without one */
static double capacity_of(const capsim_result *r)
{
	const capsim_result_key *k = capsim_result_key_find("groups");
	if (!k || !k->json || !capsim_result_has(r, k))
		return NAN;
	json_t *g = k->json(r);
	json_t *v = json_object_get(json_array_get(g, 0), "mem_capacity_bytes");
	double bytes = json_is_number(v) ? json_number_value(v) : NAN;
	json_decref(g);
	return bytes;
}

typedef struct {
	int ok;
	char err[512];
	capsim_result r;
	capsim_err_features f;    /* what drives r's error */
	char design[8192];        /* its design apart from its inputs (capsim_ui_design_text) */
	long curve_gpus[CURVE];
	double curve_tps[CURVE];
	int n_curve;
} outcome;

typedef struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const capsim_catalog *cat;
	/* the job: a copy of the scenario; optimise: search its layout instead */
	capsim_scenario *job;
	int job_optimise;
	unsigned long job_gen;
	int busy, quit;
	/* what came back */
	outcome *done;
	unsigned long done_gen;
	int done_optimise;
	capsim_opt_config best;       /* an optimisation's */
	int have_best;
} worker;

static void curve_of(worker *w, const capsim_scenario *s, outcome *o)
{
	static const double f[CURVE] = { 0.25, 0.5, 1, 2, 4 };
	for (int k = 0; k < CURVE; k++) {
		double nodes = s->nodes * f[k], batch = s->global_batch * f[k];
		if (nodes != floor(nodes) || nodes < 1 || batch != floor(batch) || batch < 1)
			continue;
		char nb[32], gb[32];
		snprintf(nb, sizeof nb, "%.0f", nodes);
		snprintf(gb, sizeof gb, "%.0f", batch);
		capsim_set sets[] = { { "cluster.nodes", nb }, { "workload.global-batch", gb },
				      { "reliability.runs", "0" } };
		capsim_scenario *t = capsim_xmalloc(sizeof *t);
		*t = *s;
		capsim_diags d = { 0 };
		capsim_result r;
		capsim_eval_opts eo = { .no_reference = 1 };
		if (capsim_scenario_set_many(t, w->cat, sets, 3, &d) == 0 &&
		    capsim_eval(t, &eo, &r, &d) == 0) {
			o->curve_gpus[o->n_curve] = (long)val(&r, "gpus");
			o->curve_tps[o->n_curve++] = val(&r, "tokens_per_s");
			capsim_result_free(&r);
		}
		capsim_diags_free(&d);
		free(t);
	}
}

static void *work(void *arg)
{
	worker *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->job && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->quit)
			break;
		capsim_scenario *s = w->job;
		int opt = w->job_optimise;
		unsigned long gen = w->job_gen;
		w->job = NULL;
		w->busy = 1;
		pthread_mutex_unlock(&w->mu);

		outcome *o = capsim_xcalloc(1, sizeof *o);
		capsim_diags d = { 0 };
		capsim_opt_config best = { 0 };
		int have_best = 0;
		if (opt) {
			capsim_opt_options oo = { .metric = CAPSIM_OPT_TOKENS_PER_S, .top = 1,
						  .threads = 1 };
			capsim_opt_result res;
			capsim_scenario *t = capsim_xmalloc(sizeof *t);
			*t = *s;
			t->reliability_runs = 0;
			if (capsim_optimize(t, w->cat, &oo, &res, &d) == 0) {
				best = res.top[0].c;
				have_best = 1;
			}
			capsim_opt_result_free(&res);
			free(t);
			o->ok = have_best;
		} else {
			o->ok = capsim_eval(s, NULL, &o->r, &d) == 0;
			if (o->ok) {
				capsim_result_err_features(s, &o->r, &o->f);
				capsim_ui_design_text(s, o->design, sizeof o->design);
				curve_of(w, s, o);
			}
		}
		if (!o->ok)
			snprintf(o->err, sizeof o->err, "%s", d.n ? d.v[0].msg : "failed");
		capsim_diags_free(&d);
		free(s);

		pthread_mutex_lock(&w->mu);
		w->busy = 0;
		if (gen >= w->done_gen) {
			if (w->done && w->done->ok && !w->done_optimise)
				capsim_result_free(&w->done->r);
			free(w->done);
			w->done = o;
			w->done_gen = gen;
			w->done_optimise = opt;
			w->best = best;
			w->have_best = have_best;
		} else {
			if (o->ok && !opt)
				capsim_result_free(&o->r);
			free(o);
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void submit(worker *w, const capsim_scenario *s, int optimise, unsigned long gen)
{
	capsim_scenario *c = capsim_xmalloc(sizeof *c);
	*c = *s;
	pthread_mutex_lock(&w->mu);
	free(w->job);
	w->job = c;
	w->job_optimise = optimise;
	w->job_gen = gen;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* ---- the screen ------------------------------------------------------------------------ */

static volatile sig_atomic_t stop;

/* a process that ends while the screen is up (an allocation that fails
 * exits from anywhere) gives the terminal back first */
static void restore_terminal(void)
{
	if (stdscr && !isendwin())
		endwin();
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

typedef struct {
	capsim_explore x;
	worker w;
	size_t sel, top;
	char msg[512];
	int msg_error;
	outcome *shown;           /* the latest result (owned) */
	unsigned long gen;        /* of the state now */
	unsigned long shown_gen;
	int have_base;            /* the pinned baseline's numbers */
	double base_step, base_tps, base_wall, base_cost;
	capsim_err_features base_f; /* what drives the baseline's error */
	char base_design[8192];   /* the baseline's design apart from its inputs */
	const capsim_err_model *em; /* the error model; NULL: deltas unmarked */
	int spin;
} ui;

/* the wall time to train, goodput counted */
static double wall_of(const capsim_result *r)
{
	double w = val(r, "wall_to_train_s");
	return isfinite(w) ? w : val(r, "time_to_train_s");
}

/* " (+3.2%)" against the baseline, " (+0.4%, within error)" where the
 * change of the result key named key is inside capsim's own error
 * (capsim_ui_within_error; a change of inputs alone is exact) */
static void delta(const ui *u, const char *key, double now, double was, char *buf, size_t n)
{
	buf[0] = '\0';
	if (!u->have_base || !isfinite(now) || !isfinite(was) || was == 0)
		return;
	int within = -1;
	if (u->shown && u->shown->ok) {
		int same = strcmp(u->base_design, u->shown->design) == 0;
		within = capsim_ui_within_error(u->em, key, same, &u->base_f, was, &u->shown->f,
						now);
	}
	snprintf(buf, n, " (%+.1f%%%s)", 100.0 * (now - was) / fabs(was),
		 within > 0 ? ", within error" : "");
}

static void line(int y, int x, int width, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void line(int y, int x, int width, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	mvaddnstr(y, x, buf, width);
}

static void draw_knobs(ui *u, int rows, int width)
{
	size_t n = u->x.knobs->n;
	/* labels 17 wide, wider (to 26) for a group's ("nodes of dgx-b200-2") */
	int lw = 17;
	for (size_t i = 0; i < n; i++) {
		int l = (int)strlen(u->x.knobs->v[i].label);
		if (l > lw)
			lw = l < 26 ? l : 26;
	}
	if (u->sel < u->top)
		u->top = u->sel;
	if (u->sel >= u->top + (size_t)rows)
		u->top = u->sel - (size_t)rows + 1;
	for (int r = 0; r < rows && u->top + (size_t)r < n; r++) {
		size_t i = u->top + (size_t)r;
		const capsim_ui_knob *k = &u->x.knobs->v[i];
		char v[96];
		capsim_ui_knob_text(u->x.s, k, v, sizeof v);
		if (i == u->sel)
			attron(A_REVERSE);
		line(2 + r, 0, width, "%-*.*s %-*.*s", lw, lw, k->label, width - lw - 2,
		     width - lw - 2, v);
		if (i == u->sel)
			attroff(A_REVERSE);
	}
}

/* the step time against the baseline, and its parts as a bar: compute,
 * exposed communication, bubble, the rest; returns the next row */
static int draw_step(const ui *u, const capsim_result *r, int y, int x0, int width)
{
	char d[32];
	double step = val(r, "step_time_s");
	delta(u, "step_time_s", step, u->base_step, d, sizeof d);
	line(y++, x0, width, "step time      %.4f s%s", step, d);
	double comp = val(r, "compute_s");
	double comm = val(r, "exposed_comm_s");
	double bub = val(r, "bubble_s");
	int bw = width - 2;
	int nc = step > 0 ? (int)lround(bw * comp / step) : 0;
	int nm = step > 0 ? (int)lround(bw * (isfinite(comm) ? comm : 0) / step) : 0;
	int nb = step > 0 ? (int)lround(bw * (isfinite(bub) ? bub : 0) / step) : 0;
	char bar[256];
	int k = 0;
	for (int i = 0; i < nc && k < bw; i++)
		bar[k++] = '#';
	for (int i = 0; i < nm && k < bw; i++)
		bar[k++] = '=';
	for (int i = 0; i < nb && k < bw; i++)
		bar[k++] = '.';
	while (k < bw)
		bar[k++] = ' ';
	bar[k] = '\0';
	line(y++, x0, width, "[%s]", bar);
	line(y++, x0, width, " # compute  = exposed comm  . bubble");
	return y;
}

/* throughput, memory, the time and cost to train; returns the next row */
static int draw_job(const ui *u, const capsim_result *r, int y, int x0, int width)
{
	char d[32];
	double tps = val(r, "tokens_per_s");
	delta(u, "tokens_per_s", tps, u->base_tps, d, sizeof d);
	line(y++, x0, width, "tokens/s       %.0f%s", tps, d);
	line(y++, x0, width, "MFU            %.1f%%", 100.0 * val(r, "mfu"));
	const char *verdict = capsim_result_string(r, "memory_verdict");
	line(y++, x0, width, "memory/GPU     %.1f of %.1f GiB %s",
	     val(r, "peak_mem_per_gpu_bytes") / 1073741824.0, capacity_of(r) / 1073741824.0,
	     val(r, "fits_in_memory") == 0 ? "DOES NOT FIT" : verdict ? verdict : "fits");
	double wall = wall_of(r);
	delta(u, "wall_to_train_s", wall, u->base_wall, d, sizeof d);
	line(y++, x0, width, "time to train  %.2f days%s", wall / 86400.0, d);
	if (has(r, "cost_to_train_usd")) {
		double cost = val(r, "cost_to_train_usd");
		delta(u, "cost_to_train_usd", cost, u->base_cost, d, sizeof d);
		line(y++, x0, width, "cost to train  $%.0f%s", cost, d);
	} else {
		line(y++, x0, width, "cost to train  - (no price)");
	}
	const char *unpriced = capsim_result_string(r, "cost_unpriced");
	if (unpriced)
		line(y++, x0, width, "not priced     %s", unpriced);
	return y;
}

/* power, racks, goodput and the money of owning against renting; returns
 * the next row */
static int draw_facility(const capsim_result *r, int y, int x0, int width)
{
	line(y++, x0, width, "power          %.1f kW IT, %.1f kW facility", val(r, "power_it_w") / 1e3,
	     val(r, "power_facility_w") / 1e3);
	if (has(r, "racks"))
		line(y++, x0, width, "racks          %.0f", val(r, "racks"));
	if (val(r, "goodput") > 0)
		line(y++, x0, width, "goodput        %.1f%%", 100.0 * val(r, "goodput"));
	if (has(r, "tco_usd"))
		line(y++, x0, width, "TCO            $%.3fM over the horizon", val(r, "tco_usd") / 1e6);
	if (has(r, "cloud_cost_usd"))
		line(y++, x0, width, "cloud cost     $%.3fM to train", val(r, "cloud_cost_usd") / 1e6);
	if (has(r, "breakeven_utilization") && has(r, "breakeven_months"))
		line(y++, x0, width, "break-even     %.0f%% utilisation, month %.1f",
		     100.0 * val(r, "breakeven_utilization"), val(r, "breakeven_months"));
	else if (has(r, "breakeven_utilization"))
		line(y++, x0, width, "break-even     %.0f%% utilisation%s",
		     100.0 * val(r, "breakeven_utilization"),
		     capsim_result_string(r, "payback") ? ", never paid back" : "");
	return y;
}

/* the scaling curve: tokens/s against GPUs, weak scaling, where it fits */
static void draw_curve(const outcome *o, int y, int x0, int rows, int width)
{
	if (o->n_curve <= 1 || y + 2 + o->n_curve > rows + 2)
		return;
	y++;
	line(y++, x0, width, "tokens/s by GPUs (weak scaling):");
	double top = 0;
	for (int i = 0; i < o->n_curve; i++)
		if (o->curve_tps[i] > top)
			top = o->curve_tps[i];
	for (int i = 0; i < o->n_curve; i++) {
		int len = top > 0 ? (int)lround((width - 20) * o->curve_tps[i] / top) : 0;
		char hb[256];
		int m = 0;
		for (; m < len && m < (int)sizeof hb - 1; m++)
			hb[m] = '#';
		hb[m] = '\0';
		line(y++, x0, width, "%7ld %-*s %.3gM", o->curve_gpus[i], width - 20, hb,
		     o->curve_tps[i] / 1e6);
	}
}

static void draw_results(ui *u, int x0, int rows, int width)
{
	if (!u->shown) {
		line(2, x0, width, "computing ...");
		return;
	}
	if (!u->shown->ok) {
		attron(A_BOLD);
		line(2, x0, width, "no result:");
		attroff(A_BOLD);
		line(3, x0, width, "%.*s", width, u->shown->err);
		return;
	}
	const capsim_result *r = &u->shown->r;
	int y = draw_step(u, r, 2, x0, width);
	y = draw_job(u, r, y, x0, width);
	y = draw_facility(r, y, x0, width);
	draw_curve(u->shown, y, x0, rows, width);
}

static void draw(ui *u, int busy)
{
	erase();
	if (COLS < 80 || LINES < 24) {
		line(0, 0, COLS, "capsim explore: the terminal is %dx%d; it needs 80x24", COLS, LINES);
		refresh();
		return;
	}
	static const char spin[] = "|/-\\";
	attron(A_BOLD);
	line(0, 0, COLS, "capsim explore  %s%s", u->x.s->name, u->have_base ? "  [baseline pinned]" : "");
	attroff(A_BOLD);
	if (busy)
		line(0, COLS - 14, 14, "computing %c", spin[u->spin++ % 4]);
	int left = COLS >= 100 ? 44 : 38, rows = LINES - 4;
	mvhline(1, 0, ACS_HLINE, COLS);
	draw_knobs(u, rows, left);
	mvvline(2, left, ACS_VLINE, rows);
	draw_results(u, left + 2, rows, COLS - left - 3);
	mvhline(LINES - 2, 0, ACS_HLINE, COLS);
	if (u->msg_error)
		attron(A_BOLD);
	line(LINES - 2, 1, COLS - 2, " %s ", u->msg);
	if (u->msg_error)
		attroff(A_BOLD);
	line(LINES - 1, 0, COLS, "j/k move  -/+ change  Enter type  u undo  b baseline  s save  "
	     "o optimise  ? help  q quit");
	refresh();
}

static void say(ui *u, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(ui *u, int error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(u->msg, sizeof u->msg, fmt, ap);
	va_end(ap);
	u->msg_error = error;
}

/* a line typed at the bottom; 0 with buf set, -1 when given up (empty) */
static int prompt(const char *question, const char *initial, char *buf, size_t n)
{
	timeout(-1);
	echo();
	curs_set(1);
	mvhline(LINES - 1, 0, ' ', COLS);
	mvprintw(LINES - 1, 0, "%s", question);
	if (initial && *initial)
		printw("[%s] ", initial);
	refresh();
	char in[256] = "";
	int rc = getnstr(in, (int)sizeof in - 1);
	noecho();
	curs_set(0);
	timeout(100);
	if (rc == ERR)
		return -1;
	if (!in[0] && initial && *initial)
		snprintf(in, sizeof in, "%s", initial);
	if (!in[0])
		return -1;
	snprintf(buf, n, "%s", in);
	return 0;
}

static void change(ui *u, const char *path, const char *value)
{
	char err[512];
	if (capsim_explore_set(&u->x, path, value, err, sizeof err) < 0) {
		say(u, 1, "refused: %s=%s: %s", path, value, err);
		return;
	}
	say(u, 0, "%s = %s", path, value);
	submit(&u->w, u->x.s, 0, ++u->gen);
}

/* knob k one step up (dir > 0) or down: to the nearest value the scenario
 * takes, the values it refuses on the way passed over, the first of them
 * and why said once on the message line */
static void step_knob(ui *u, const capsim_ui_knob *k, int dir)
{
	capsim_ui_step st;
	int rc = capsim_ui_knob_next(u->x.s, u->x.cat, k, dir, &st);
	char skipped[400] = "";
	if (st.skipped == 1)
		snprintf(skipped, sizeof skipped, " (passed over %.100s: %.200s)", st.skipped_value,
			 st.why);
	else if (st.skipped > 1)
		snprintf(skipped, sizeof skipped, " (passed over %d refused, first %.100s: %.200s)",
			 st.skipped, st.skipped_value, st.why);
	if (rc < 0) {
		say(u, 1, "%s: no value %s%s", k->label, dir > 0 ? "above" : "below", skipped);
		return;
	}
	char err[512];
	if (capsim_explore_set_many(&u->x, st.sets, st.n, err, sizeof err) < 0) {
		say(u, 1, "refused: %s=%s: %s", k->path, st.shown, err);
		return;
	}
	if (st.n == 1)
		say(u, 0, "%s = %s%s", st.path[0], st.value[0], skipped);
	else
		say(u, 0, "fabric = %s: transport %s, NIC %s, switch %s%s", st.shown, st.value[0],
		    st.value[1], st.value[2], skipped);
	submit(&u->w, u->x.s, 0, ++u->gen);
}

static void save(ui *u)
{
	char def[256], name[256];
	snprintf(def, sizeof def, "%s-explored.xml", u->x.s->name);
	if (prompt("save the scenario as: ", def, name, sizeof name) < 0) {
		say(u, 0, "not saved");
		return;
	}
	capsim_outfile of;
	capsim_diags d = { 0 };
	int ok = capsim_outfile_open(&of, name, &d) == 0;
	if (ok) {
		if (capsim_scenario_write_xml(u->x.s, of.f) < 0) {
			capsim_outfile_discard(&of);
			ok = 0;
		} else {
			ok = capsim_outfile_close(&of, &d) == 0;
		}
	}
	if (ok)
		say(u, 0, "saved to %s", name);
	else
		say(u, 1, "not saved: %s", d.n ? d.v[0].msg : "a write error");
	capsim_diags_free(&d);
}

static void help_screen(void)
{
	static const char *const text[] = {
		"capsim explore: keys",
		"",
		"  up, down, j, k    move between the knobs",
		"  left, right, -, + change the value: counts halve and double, choices",
		"                    cycle through the catalog (or the field's names)",
		"  Enter             type a value (as capsim run --set takes it: 64, 400 Gb/s)",
		"  u                 undo the last change",
		"  b                 pin the state now as the baseline: changes show deltas,",
		"                    \"within error\" where one is inside capsim's own error",
		"  s                 save the scenario as XML (valid against the schema)",
		"  o                 optimise the layout (capsim optimize); u undoes it",
		"  ?                 this help",
		"  q                 quit",
		"",
		"A value the scenario refuses is refused with its reason, at the bottom.",
		"press a key",
	};
	erase();
	for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
		mvaddnstr(2 + (int)i, 2, text[i], COLS - 4);
	refresh();
	timeout(-1);
	getch();
	timeout(100);
}

static void take_outcome(ui *u)
{
	pthread_mutex_lock(&u->w.mu);
	outcome *o = NULL;
	int opt = 0, have_best = 0;
	capsim_opt_config best;
	if (u->w.done && u->w.done_gen > u->shown_gen) {
		o = u->w.done;
		opt = u->w.done_optimise;
		best = u->w.best;
		have_best = u->w.have_best;
		u->w.done = NULL;
		u->shown_gen = u->w.done_gen;
	}
	pthread_mutex_unlock(&u->w.mu);
	if (!o)
		return;
	if (opt) {
		if (have_best) {
			capsim_set sets[CAPSIM_OPT_MAX_SETS];
			char buf[CAPSIM_OPT_MAX_SETS][32], err[512];
			size_t n = capsim_opt_config_sets(&best, buf, sets);
			if (capsim_explore_set_many(&u->x, sets, n, err, sizeof err) == 0) {
				say(u, 0, "optimised: tp %d pp %d x%d cp %d ep %d zero %d mb %d (u undoes)",
				    best.tp, best.pp, best.virtual_stages, best.cp, best.ep, best.zero,
				    best.micro_batch);
				submit(&u->w, u->x.s, 0, ++u->gen);
			} else {
				say(u, 1, "the best layout does not apply: %s", err);
			}
		} else {
			say(u, 1, "optimise: %s", o->err);
		}
		free(o);
		return;
	}
	if (u->shown) {
		if (u->shown->ok)
			capsim_result_free(&u->shown->r);
		free(u->shown);
	}
	u->shown = o;
}

static int loop(ui *u)
{
	submit(&u->w, u->x.s, 0, ++u->gen);
	for (;;) {
		take_outcome(u);
		pthread_mutex_lock(&u->w.mu);
		int busy = u->w.busy || u->w.job != NULL;
		pthread_mutex_unlock(&u->w.mu);
		draw(u, busy);
		if (stop)
			return 0;
		int c = getch();
		if (c == ERR)
			continue;
		if (u->sel >= u->x.knobs->n)
			u->sel = u->x.knobs->n - 1;
		const capsim_ui_knob *k = &u->x.knobs->v[u->sel];
		char value[128];
		switch (c) {
		case 'q':
			return 0;
		case KEY_UP: case 'k':
			if (u->sel > 0)
				u->sel--;
			break;
		case KEY_DOWN: case 'j':
			if (u->sel + 1 < u->x.knobs->n)
				u->sel++;
			break;
		case KEY_LEFT: case '-': case KEY_RIGHT: case '+': case '=':
			step_knob(u, k, c == KEY_RIGHT || c == '+' || c == '=' ? 1 : -1);
			break;
		case '\n': case KEY_ENTER: {
			char q[160];
			snprintf(q, sizeof q, "%s (%s) = ", k->label, k->path);
			if (prompt(q, NULL, value, sizeof value) == 0)
				change(u, k->path, value);
			break;
		}
		case 'u':
			if (capsim_explore_undo(&u->x) < 0) {
				say(u, 1, "nothing to undo");
			} else {
				say(u, 0, "undone");
				submit(&u->w, u->x.s, 0, ++u->gen);
			}
			break;
		case 'b':
			if (u->shown && u->shown->ok) {
				const capsim_result *r = &u->shown->r;
				u->base_step = val(r, "step_time_s");
				u->base_tps = val(r, "tokens_per_s");
				u->base_wall = wall_of(r);
				u->base_cost = val(r, "cost_to_train_usd");
				u->base_f = u->shown->f;
				memcpy(u->base_design, u->shown->design, sizeof u->base_design);
				u->have_base = 1;
				say(u, 0, "baseline pinned: deltas are against it");
			}
			break;
		case 's':
			save(u);
			break;
		case 'o':
			say(u, 0, "optimising the layout ...");
			submit(&u->w, u->x.s, 1, ++u->gen);
			break;
		case '?':
			help_screen();
			break;
		case KEY_RESIZE:
			break;
		default:
			say(u, 0, "? for the keys");
			break;
		}
	}
}


/* the keys' loop on the screen, the worker beside it; returns 0 when the
 * screen ran, -1 when it could not start */
static int run_screen(ui *u)
{
	pthread_t th;
	int started = pthread_create(&th, NULL, work, &u->w) == 0;
	struct sigaction sa = { 0 }, old_int, old_term;
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	setlocale(LC_ALL, "");
	atexit(restore_terminal);
	int rc = -1;
	if (started && initscr()) {
		cbreak();
		noecho();
		keypad(stdscr, TRUE);
		curs_set(0);
		timeout(100);
		/* a scenario's warnings would write over the screen: a knob's
		 * edit that is refused says why on the message line */
		capsim_scenario_warnings_to(NULL);
		loop(u);
		endwin();
		capsim_scenario_warnings_to(stderr);
		rc = 0;
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (started) {
		pthread_mutex_lock(&u->w.mu);
		u->w.quit = 1;
		pthread_cond_signal(&u->w.cv);
		pthread_mutex_unlock(&u->w.mu);
		pthread_join(th, NULL);
	}
	return rc;
}

static void ui_free(ui *u)
{
	free(u->w.job);
	if (u->w.done) {
		if (u->w.done->ok && !u->w.done_optimise)
			capsim_result_free(&u->w.done->r);
		free(u->w.done);
	}
	if (u->shown) {
		if (u->shown->ok)
			capsim_result_free(&u->shown->r);
		free(u->shown);
	}
	pthread_mutex_destroy(&u->w.mu);
	pthread_cond_destroy(&u->w.cv);
	capsim_explore_free(&u->x);
	free(u);
}

int capsim_ui_explore(const capsim_catalog *cat, capsim_scenario *s, const capsim_err_model *em)
{
	ui *u = capsim_xcalloc(1, sizeof *u);
	u->em = em;
	capsim_explore_init(&u->x, cat, s);
	pthread_mutex_init(&u->w.mu, NULL);
	pthread_cond_init(&u->w.cv, NULL);
	u->w.cat = cat;
	say(u, 0, "? for the keys");
	int rc = run_screen(u);
	ui_free(u);
	if (rc < 0)
		return -1;
	return stop ? 130 : 0;
}
