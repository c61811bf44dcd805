/* fuzz_conf.c - libFuzzer target for the config files a launch names
 * (src/import/launch_conf.h): any bytes as the NeMo launcher's config of
 * training=f/x, read with libyaml under a launch's overrides (one a
 * reference may name, one a deletion) and, when it reads, written as a
 * scenario; never a crash, a leak, undefined behaviour or unbounded work. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the config root, made once: ROOT/conf/training/f/ */
static const char *root(void)
{
	static char dir[64];
	if (!dir[0]) {
		snprintf(dir, sizeof dir, "/tmp/capsim-fuzz-conf-XXXXXX");
		if (!mkdtemp(dir))
			abort();
		char sub[128];
		snprintf(sub, sizeof sub, "%s/conf", dir);
		mkdir(sub, 0700);
		snprintf(sub, sizeof sub, "%s/conf/training", dir);
		mkdir(sub, 0700);
		snprintf(sub, sizeof sub, "%s/conf/training/f", dir);
		if (mkdir(sub, 0700) < 0)
			abort();
	}
	return dir;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *r = root();
	char path[128];
	snprintf(path, sizeof path, "%s/conf/training/f/x.yaml", r);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	char *argv[] = { "python3", "main.py", "training=f/x", "training.model.hidden_size=64",
			 "~training.model.num_layers", "training.trainer.num_nodes=2" };
	capsim_launch l;
	capsim_launch_init(&l);
	const char *roots[1] = { r };
	l.config_roots = roots;
	l.n_config_roots = 1;
	capsim_diags d = { 0 };
	if (capsim_launch_argv(argv, 6, "fuzz", &l, &d) == 0)
		free(capsim_launch_scenario_text(&l, "fuzzed", "m", "dgx-h100", 8, "fuzz", &d));
	capsim_diags_free(&d);
	return 0;
}
