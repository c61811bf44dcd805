/* fuzz_expect.c - libFuzzer target for capsim verify --expect's readers of
 * monitoring baselines (capsim expect's JSON and Prometheus rules, YAML read
 * with libyaml): any bytes are read, or refused with diagnostics, never a
 * crash, a hang, a leak or undefined behaviour. Baselines that are read have
 * at least one row, each of a known check with a threshold that is a finite
 * number at least 0, and a collective's row an op, ranks from 1 and a size. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "expect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	capsim_diags d = { 0 };
	capsim_expect e;
	int rc = capsim_expect_read_memory((const char *)data, size, "fuzz.yml", &e, &d);
	if (rc == 0 && e.n == 0)
		abort();
	for (size_t i = 0; rc == 0 && i < e.n; i++) {
		const capsim_expect_row *r = &e.rows[i];
		if (r->kind < 0 || r->kind >= CAPSIM_EXPECT__KINDS || !isfinite(r->threshold) ||
		    r->threshold < 0)
			abort();
		if (r->kind == CAPSIM_EXPECT_BUSBW &&
		    (r->op < 0 || r->op >= CAPSIM_COLL__COUNT || r->ranks < 1 || !(r->bytes >= 0)))
			abort();
	}
	if (rc != 0 && d.n == 0)
		abort(); /* a refusal says why */
	capsim_expect_free(&e);
	capsim_diags_free(&d);
	return 0;
}
