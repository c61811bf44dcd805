/* fuzz_launch.c - libFuzzer target for capsim import's launch readers
 * (src/import/launch.h): any bytes as a script (Slurm, shell, Kubernetes),
 * and the same bytes split at NULs and newlines as an argument vector;
 * never a crash, a leak or undefined behaviour. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "launch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	capsim_diags d = { 0 };
	capsim_launch l;
	capsim_launch_script((const char *)data, size, "fuzz.sh", &l, &d);
	capsim_diags_free(&d);
	/* as argv */
	char *buf = malloc(size + 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	char *argv[256];
	int argc = 0;
	for (char *p = buf; argc < 256;) {
		argv[argc++] = p;
		char *e = p;
		while (e < buf + size && *e && *e != '\n')
			e++;
		if (e >= buf + size)
			break;
		*e = '\0';
		p = e + 1;
	}
	capsim_launch_init(&l);
	capsim_launch_argv(argv, argc, "fuzz", &l, &d);
	capsim_diags_free(&d);
	free(buf);
	return 0;
}
