/* fuzz_hf.c - libFuzzer target for capsim import hf's reader (src/import/
 * hf.h): any bytes as a config.json, read and, when they read, written as a
 * models file and summed up as JSON (--json's model object); never a crash,
 * a leak or undefined behaviour. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "hf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	capsim_diags d = { 0 };
	capsim_hf_model m;
	if (capsim_hf_read((const char *)data, size, "fuzz.json", &m, &d) == 0) {
		FILE *f = fopen("/dev/null", "w");
		if (f) {
			capsim_hf_write(&m, "fuzzed", "fuzz.json",
					"0000000000000000000000000000000000000000000000000000000000000000",
					f);
			fclose(f);
		}
		json_decref(capsim_hf_json(&m, "fuzzed", 1e9, 1e9));
	}
	capsim_diags_free(&d);
	return 0;
}
