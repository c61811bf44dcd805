/* fuzz_sweep.c - libFuzzer target for sweep files (src/sweep): any bytes,
 * written as a sweep file at tests/data/sweep/fuzz.xml of a private
 * directory whose scenarios/ links to the shipped one (so the seeds' base
 * scenarios, "../../../scenarios/..." and "../default.xml" from
 * scenarios/sweeps, resolve), loaded against the catalog; when it loads,
 * every point of the first 10,000 is expanded and its constraints tested.
 * Never a crash, a leak or undefined behaviour. A constraint's text alone
 * (the input's first line when it does not start with '<') is parsed and
 * evaluated with every name valued 2 as well. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog.h"
#include "eval.h"
#include "expr.h"
#include "sweep.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static capsim_catalog *cat;
static char root[64], file[256];

/* the private directory goes at exit: the file, the link, the directories */
static void cleanup(void)
{
	char path[256];
	unlink(file);
	static const char *const dirs[] = { "tests/data/sweep", "tests/data", "tests" };
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", root, dirs[i]);
		rmdir(path);
	}
	snprintf(path, sizeof path, "%s/scenarios", root);
	unlink(path);
	rmdir(root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	capsim_init();
	cat = capsim_catalog_create();
	capsim_diags d = { 0 };
	if (capsim_catalog_load_root(cat, CAPSIM_SOURCE_DIR, NULL, &d) < 0)
		abort();
	capsim_diags_free(&d);
	char path[256];
	snprintf(root, sizeof root, "/tmp/capsim-fuzz-sweep-XXXXXX");
	if (!mkdtemp(root))
		abort();
	atexit(cleanup);
	snprintf(path, sizeof path, "%s/scenarios", root);
	if (symlink(CAPSIM_SOURCE_DIR "/scenarios", path) < 0)
		abort();
	snprintf(path, sizeof path, "%s/tests", root);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/tests/data", root);
	mkdir(path, 0700);
	snprintf(path, sizeof path, "%s/tests/data/sweep", root);
	mkdir(path, 0700);
	snprintf(file, sizeof file, "%s/tests/data/sweep/fuzz.xml", root);
	return 0;
}

static int two(void *ctx, const char *name, capsim_expr_value *out, char *err, size_t n)
{
	(void)ctx;
	(void)name;
	(void)err;
	(void)n;
	*out = (capsim_expr_value){ 0, 2.0, NULL };
	return 0;
}

static void constraint_alone(const uint8_t *data, size_t size)
{
	char text[4097];
	size_t n = 0;
	while (n < size && n < sizeof text - 1 && data[n] != '\n')
		n++;
	memcpy(text, data, n);
	text[n] = '\0';
	char err[256];
	capsim_expr *e = capsim_expr_parse(text, err, sizeof err);
	if (e) {
		int truth;
		capsim_expr_eval(e, two, NULL, &truth, err, sizeof err);
		capsim_expr_free(e);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size && data[0] != '<') {
		constraint_alone(data, size);
		return 0;
	}
	FILE *f = fopen(file, "wb");
	if (!f)
		abort();
	if (size)
		fwrite(data, 1, size, f);
	fclose(f);
	capsim_scenario *base = calloc(1, sizeof *base);
	capsim_diags d = { 0 };
	capsim_sweep *sw = capsim_sweep_load(file, cat, NULL, 0, base, &d);
	if (sw) {
		capsim_set sets[CAPSIM_SWEEP_MAX_AXES];
		for (uint64_t i = 0; i < sw->size && i < 10000; i++) {
			capsim_sweep_point(sw, i, sets);
			int error;
			char err[256];
			capsim_sweep_check(sw, i, &error, err, sizeof err);
		}
	}
	capsim_sweep_free(sw);
	capsim_diags_free(&d);
	free(base);
	return 0;
}
