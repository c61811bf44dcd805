/* residuals.h - the rows of capsim's own validation that its error model
 * learns from (hardware/errors/residuals.csv, docs/model.md "Error bands").
 *
 * Every test that scores capsim against a published or measured table calls
 * testutil_residual_record once per scored row with what it predicted, what was
 * measured and the features that drive the error. By default the call checks
 * the row against the committed file: a row missing there, a prediction
 * moved by more than 0.1%, another measurement or other features fail the
 * test, naming the row and the command that regenerates the file. With
 * CAPSIM_RESIDUALS_OUT=FILE set, the call appends the row to FILE instead and
 * checks nothing: tests/scripts/residuals.sh runs the tests so and writes the
 * committed file from their rows. */
#ifndef CAPSIM_TEST_RESIDUALS_H
#define CAPSIM_TEST_RESIDUALS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"

/* the committed file's columns, in order */
#define RESIDUALS_HEADER                                                       \
	"table,row,family,quantity,gpu,gen,stack,host_bound,gpus,profile,in_sample," \
	"predicted,measured"
#define RESIDUALS_REGEN "sh tests/scripts/residuals.sh BUILD_DIR"

/* One scored row. quantity: step, memory, busbw, power or checkpoint; gen:
 * ampere, hopper or blackwell (testutil_gpu_gen); stack: the software and its
 * execution mode (megatron, torch-eager, torch-compiled, torch-graphs,
 * torchtitan, nccl-tests, torch-distributed, torch-save, dcp, async-save);
 * host_bound: 1 where capsim's own prediction has the host stream adding a
 * quarter of the step or more (capsim_result_err_features); profile: datasheet or calibrated; in_sample: 1 where a
 * constant of capsim was fitted on the row (kept, not used for intervals).
 * predicted and measured in the same unit. */
typedef struct testutil_residual {
	const char *table, *row, *family, *quantity, *gpu, *gen, *stack, *profile;
	int host_bound, gpus, in_sample;
	double predicted, measured;
} testutil_residual;

/* The GPU generation of a catalog GPU or node id ("dgx-h100", "h200-sxm"). */
static inline const char *testutil_gpu_gen(const char *id)
{
	if (strstr(id, "a100"))
		return "ampere";
	if (strstr(id, "h100") || strstr(id, "h200"))
		return "hopper";
	if (strstr(id, "b200") || strstr(id, "b300") || strstr(id, "gb200") ||
	    strstr(id, "gb300"))
		return "blackwell";
	fail_msg("residuals: no GPU generation known for '%s'", id);
	return "";
}

/* a field fit for the CSV: no comma, quote or line break, not empty */
static inline void residuals_check_field(const testutil_residual *r, const char *name,
					 const char *v)
{
	if (!v || !*v || strpbrk(v, ",\"\n\r"))
		fail_msg("residual %s/%s: field %s is '%s': expected a text without commas, "
			 "quotes or line breaks", r->table ? r->table : "?",
			 r->row ? r->row : "?", name, v ? v : "(null)");
}

/* r as one CSV line (without its line break) into buf */
static inline void residuals_format(const testutil_residual *r, char *buf, size_t n)
{
	snprintf(buf, n, "%s,%s,%s,%s,%s,%s,%s,%d,%d,%s,%d,%.9g,%.9g", r->table, r->row,
		 r->family, r->quantity, r->gpu, r->gen, r->stack, r->host_bound, r->gpus,
		 r->profile, r->in_sample, r->predicted, r->measured);
}

/* The committed file, read once: its lines split into fields. */
typedef struct residuals_file {
	int loaded;
	size_t n;
	char **line;
	char *(*cell)[13];
} residuals_file;

static inline residuals_file *residuals_committed(void)
{
	static residuals_file rf;
	if (rf.loaded)
		return &rf;
	const char *path = CAPSIM_SOURCE_DIR "/hardware/errors/residuals.csv";
	FILE *f = fopen(path, "r");
	if (!f)
		fail_msg("%s: cannot open; regenerate it: %s", path, RESIDUALS_REGEN);
	char buf[1024];
	size_t cap = 0;
	while (fgets(buf, sizeof buf, f)) {
		if (buf[0] == '#' || buf[0] == '\n' || strncmp(buf, "table,", 6) == 0)
			continue;
		if (rf.n == cap) {
			cap = cap ? 2 * cap : 256;
			rf.line = realloc(rf.line, cap * sizeof *rf.line);
			rf.cell = realloc(rf.cell, cap * sizeof *rf.cell);
			assert_non_null(rf.line);
			assert_non_null(rf.cell);
		}
		rf.line[rf.n] = strdup(buf);
		if (csv_split(rf.line[rf.n], rf.cell[rf.n], 13) != 13)
			fail_msg("%s: line '%s': expected 13 fields", path, buf);
		rf.n++;
	}
	fclose(f);
	rf.loaded = 1;
	return &rf;
}

/* the committed row's fields that must equal r's, as one text */
static inline void residuals_features(char *const *c, char *buf, size_t n)
{
	snprintf(buf, n, "%s,%s,%s,%s,%s,%s,%s,%s,%s", c[2], c[3], c[4], c[5], c[6], c[7],
		 c[8], c[9], c[10]);
}

/* Record one scored row (see the top of this file). */
static inline void testutil_residual_record(const testutil_residual *r)
{
	const char *names[] = { "table", "row", "family", "quantity", "gpu", "gen", "stack",
				"profile" };
	const char *vals[] = { r->table, r->row, r->family, r->quantity, r->gpu, r->gen,
			       r->stack, r->profile };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		residuals_check_field(r, names[i], vals[i]);
	if (!(r->predicted > 0 && r->measured > 0 && isfinite(r->predicted) &&
	      isfinite(r->measured)))
		fail_msg("residual %s/%s: predicted %g, measured %g: expected both above 0",
			 r->table, r->row, r->predicted, r->measured);
	char line[1024];
	residuals_format(r, line, sizeof line);
	const char *out = getenv("CAPSIM_RESIDUALS_OUT");
	if (out && *out) {
		FILE *f = fopen(out, "a");
		if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0)
			fail_msg("%s: cannot append", out);
		return;
	}
	residuals_file *rf = residuals_committed();
	for (size_t i = 0; i < rf->n; i++) {
		char *const *c = rf->cell[i];
		if (strcmp(c[0], r->table) != 0 || strcmp(c[1], r->row) != 0)
			continue;
		char mine[1024], want[1024], *f[13];
		char copy[1024];
		snprintf(copy, sizeof copy, "%s", line);
		csv_split(copy, f, 13);
		residuals_features(f, mine, sizeof mine);
		residuals_features(c, want, sizeof want);
		double pred = strtod(c[11], NULL), meas = strtod(c[12], NULL);
		if (strcmp(mine, want) != 0)
			fail_msg("residual %s/%s: features %s, the committed file holds %s; "
				 "regenerate it: %s", r->table, r->row, mine, want, RESIDUALS_REGEN);
		if (fabs(r->measured - meas) > 1e-6 * meas)
			fail_msg("residual %s/%s: measured %.9g, the committed file holds %.9g; "
				 "regenerate it: %s", r->table, r->row, r->measured, meas,
				 RESIDUALS_REGEN);
		if (fabs(r->predicted - pred) > 1e-3 * pred)
			fail_msg("residual %s/%s: predicted %.9g, the committed file holds %.9g "
				 "(%+.2f%%, more than 0.1%%); if the model's change is meant, "
				 "regenerate it: %s", r->table, r->row, r->predicted, pred,
				 100 * (r->predicted / pred - 1), RESIDUALS_REGEN);
		return;
	}
	fail_msg("residual %s/%s: no such row in hardware/errors/residuals.csv; regenerate "
		 "it: %s", r->table, r->row, RESIDUALS_REGEN);
}

#endif
