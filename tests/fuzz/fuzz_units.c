/* fuzz_units.c - libFuzzer target for units parsing alone (units.h): any
 * bytes, read as a quantity of every dimension, a date and a flag, must give
 * a finite value or a one-line message, never a crash or undefined
 * behaviour. Checked on every input:
 *  - a parsed value is finite, and the same bits when parsed again;
 *  - a refusal leaves a message that fits the buffer (also a tiny one);
 *  - a parsed value written by capsim_units_format parses back, with the
 *    same dimension, to within the formatter's 4 significant digits;
 *  - a parsed date is YYYY, YYYY-MM or YYYY-MM-DD and parses again;
 *  - a flag is -1, 0 or 1. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "fuzz_units: %s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                                      \
			abort();                                                       \
		}                                                                      \
	} while (0)

/* a message: NUL-terminated within errlen, and not empty when there is room */
static void check_message(const char *err, size_t errlen)
{
	size_t n = strnlen(err, errlen);
	CHECK(n < errlen);
	CHECK(errlen == 1 || n > 0);
}

/* the formatter's "%.4g" and a unit's factor: well inside 1e-3 */
static int close_enough(double a, double b)
{
	double scale = fmax(fabs(a), fabs(b));
	return fabs(a - b) <= 1e-3 * scale;
}

/* a value the formatter can write without overflowing (it multiplies by at
 * most about 3.2e10, for $/kW-month) nor losing it below the smallest unit */
static int formattable(double v)
{
	return v == 0.0 || (fabs(v) < 1e290 && fabs(v) > 1e-290);
}

static void check_format(double v, capsim_dim dim, const char *hw)
{
	char text[96], err[256];
	capsim_units_format(v, dim, text, sizeof text);
	CHECK(strlen(text) < sizeof text);
	/* a tiny buffer stays terminated and in bounds */
	char tiny[4];
	capsim_units_format(v, dim, tiny, sizeof tiny);
	CHECK(strlen(tiny) < sizeof tiny);
	capsim_units_format(v, dim, tiny, 1);
	CHECK(tiny[0] == '\0');
	if (!formattable(v))
		return;
	double back;
	if (capsim_units_parse(text, dim, hw, &back, err, sizeof err) != 0) {
		fprintf(stderr, "fuzz_units: %.17g as %s formats as '%s', which does not "
			"parse back: %s\n", v, capsim_dim_name(dim), text, err);
		abort();
	}
	if (!close_enough(v, back)) {
		fprintf(stderr, "fuzz_units: %.17g as %s formats as '%s', which parses back "
			"as %.17g\n", v, capsim_dim_name(dim), text, back);
		abort();
	}
}

static void check_dim(const char *s, capsim_dim dim, const char *hw)
{
	char err[256], small[8];
	double v = 0.0, again = 0.0;
	int rc = capsim_units_parse(s, dim, hw, &v, err, sizeof err);
	CHECK(rc == 0 || rc == -1);
	int rc2 = capsim_units_parse(s, dim, hw, &again, small, sizeof small);
	CHECK(rc2 == rc);
	if (rc < 0) {
		check_message(err, sizeof err);
		check_message(small, sizeof small);
		return;
	}
	CHECK(isfinite(v));
	CHECK(memcmp(&v, &again, sizeof v) == 0);
	check_format(v, dim, hw);
}

static int is_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

static void check_date(const char *s)
{
	char out[16], err[128], again[16];
	memset(out, 0, sizeof out);
	if (capsim_date_parse(s, out, sizeof out, err, sizeof err) != 0) {
		check_message(err, sizeof err);
		return;
	}
	size_t n = strlen(out);
	CHECK(n == 4 || n == 7 || n == 10);
	CHECK(is_digits(out, 4));
	CHECK(n < 7 || (out[4] == '-' && is_digits(out + 5, 2)));
	CHECK(n < 10 || (out[7] == '-' && is_digits(out + 8, 2)));
	CHECK(capsim_date_parse(out, again, sizeof again, err, sizeof err) == 0);
	CHECK(strcmp(out, again) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return -1;
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	for (int d = 0; d < CAPSIM_DIM__COUNT; d++) {
		check_dim(s, (capsim_dim)d, NULL);
		if (d == CAPSIM_DIM_USD_PER_S)
			check_dim(s, (capsim_dim)d, "GPU");
		CHECK(capsim_dim_name((capsim_dim)d) != NULL);
		CHECK(capsim_dim_example((capsim_dim)d) != NULL);
		CHECK(capsim_dim_json_suffix((capsim_dim)d) != NULL);
	}
	/* a dimension out of range is refused with a message */
	char err[64];
	double v;
	CHECK(capsim_units_parse(s, CAPSIM_DIM__COUNT, NULL, &v, err, sizeof err) == -1);
	check_message(err, sizeof err);
	check_date(s);
	int f = capsim_flag_parse(s);
	CHECK(f == -1 || f == 0 || f == 1);
	free(s);
	return 0;
}
