/* fuzz_toml.c - libFuzzer target for capsim import torchtitan's readers
 * (src/import/toml.h, torchtitan.h): any bytes as a TOML job config, read
 * and, when it reads, written as a scenario; never a crash, a leak or
 * undefined behaviour. */
#include <stdint.h>
#include <stdlib.h>

#include "launch.h"
#include "torchtitan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	capsim_diags d = { 0 };
	capsim_launch l;
	const char *model = NULL;
	if (capsim_torchtitan_read((const char *)data, size, "fuzz.toml", 2, 8, &l, &model,
				   &d) == 0)
		free(capsim_launch_scenario_text(&l, "fuzzed", model ? model : "m", "dgx-h100", 8,
						 "fuzz.toml", &d));
	capsim_diags_free(&d);
	return 0;
}
