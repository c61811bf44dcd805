/* fuzz_import.c - libFuzzer target for capsim calibrate import: any bytes,
 * read as a calibrate/ JSON-lines run, must be stored whole or refused with
 * diagnostics, never a crash, a hang, a leak or undefined behaviour. Each
 * input is written to a file and imported into an in-memory database. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "measure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/capsim-fuzz-import-%ld.jsonl", (long)getpid());
	FILE *fp = fopen(path, "wb");
	if (!fp)
		return 0;
	fwrite(data, 1, size, fp);
	fclose(fp);
	capsim_diags d = { 0 };
	capsim_import_stats st;
	capsim_measure_import(path, ":memory:", &st, &d);
	capsim_diags_free(&d);
	remove(path);
	return 0;
}
