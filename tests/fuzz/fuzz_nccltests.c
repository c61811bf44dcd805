/* fuzz_nccltests.c - libFuzzer target for the nccl-tests log parser of
 * capsim verify and calibrate import --nccl-tests: any bytes are parsed, or
 * refused with diagnostics, never a crash, a hang, a leak or undefined
 * behaviour. A parsed log's rows must have increasing sizes within a run of
 * one data type and reduction (the parser's rule: nccl-tests prints one such
 * run after another). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nccltests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	capsim_diags d = { 0 };
	capsim_nccltests_hint hint = { .op = -1, .ranks = 0 };
	capsim_nccltests_log log;
	int rc = capsim_nccltests_parse_memory((const char *)data, size, "fuzz.log", &hint, &log, &d);
	if (rc == 0) {
		if (log.n_rows == 0 || log.nranks < 1)
			abort(); /* a log that parses has rows and ranks */
		for (size_t i = 1; i < log.n_rows; i++)
			if (!strcmp(log.rows[i].type, log.rows[i - 1].type) &&
			    !strcmp(log.rows[i].redop, log.rows[i - 1].redop) &&
			    !(log.rows[i].bytes > log.rows[i - 1].bytes))
				abort();
	}
	capsim_nccltests_free(&log);
	capsim_diags_free(&d);
	return 0;
}
