/* units.h - parse human quantities ("400 Gb/s", "80 GiB", "$2.49/GPU-h") into SI.
 *
 * Every quantity in an input file is parsed by the dimension of the field it
 * fills, so "8B" is eight bytes where a size is expected and "2T" is 2e12 where a
 * count is expected. Values come out in SI: bytes, bytes/s, FLOP/s, seconds,
 * watts, joules, US dollars, dollars per second, dollars per joule, dollars per
 * watt-second, volts, amperes, hertz, operations per second. A missing or
 * unknown unit is an error, never a guess.
 */
#ifndef CAPSIM_UNITS_H
#define CAPSIM_UNITS_H

#include <stddef.h>

typedef enum capsim_dim {
	CAPSIM_DIM_COUNT,          /* plain number, k/M/B/G/T suffixes: "2T" = 2e12 */
	CAPSIM_DIM_RATIO,          /* dimensionless: "1.3", "60%", "2:1" (= 2.0) */
	CAPSIM_DIM_BYTES,          /* "80 GiB", "3.84 TB" */
	CAPSIM_DIM_BYTES_PER_S,    /* "400 Gb/s", "3.35 TB/s", "100 Gbps" */
	CAPSIM_DIM_FLOP_PER_S,     /* "989.4 TFLOP/s" */
	CAPSIM_DIM_SECONDS,        /* "130 ns", "3 y" */
	CAPSIM_DIM_WATTS,          /* "700 W", "10.2 kW" */
	CAPSIM_DIM_JOULES,         /* "1.5 kWh", "3 MJ" */
	CAPSIM_DIM_USD,            /* "$30000", "$30k", "1.2M USD" */
	CAPSIM_DIM_USD_PER_S,      /* "$2.49/GPU-h", "$100/month" */
	CAPSIM_DIM_USD_PER_J,      /* "$0.09/kWh" */
	CAPSIM_DIM_USD_PER_W_S,    /* "$150/kW-month" (dollars per watt per second) */
	CAPSIM_DIM_USD_PER_BYTE,   /* "$0.09/GB" */
	CAPSIM_DIM_USD_PER_BYTE_S, /* "$0.023/GB-month" (dollars per byte per second) */
	CAPSIM_DIM_VOLTS,          /* "208 V" */
	CAPSIM_DIM_AMPERES,        /* "60 A" */
	CAPSIM_DIM_HERTZ,          /* "1980 MHz" */
	CAPSIM_DIM_OPS_PER_S,      /* "1.5M IOPS", "200k ops/s" */
	CAPSIM_DIM_METERS,         /* "0.6 m", "600 mm", "2 km" */
	CAPSIM_DIM__COUNT
} capsim_dim;

/* Parse s as a quantity of dimension dim into *out (SI).
 * hw: for CAPSIM_DIM_USD_PER_S, the hardware unit the rate may name
 * ("GPU" accepts "$2.49/GPU-h" and "$2.49/h"); NULL accepts only a bare time unit.
 * Returns 0, or -1 with a one-line message in err (never longer than errlen-1)
 * that says what was expected and what was found. */
int capsim_units_parse(const char *s, capsim_dim dim, const char *hw,
		       double *out, char *err, size_t errlen);

/* Short human name of a dimension ("a size", "a bandwidth") and an example
 * ("80 GiB"), for messages and documentation. */
const char *capsim_dim_name(capsim_dim dim);
const char *capsim_dim_example(capsim_dim dim);

/* Suffix of a JSON key for a value of this dimension ("_bytes", "_w"), "" for
 * counts and ratios. */
const char *capsim_dim_json_suffix(capsim_dim dim);

/* Format an SI value for people ("80 GiB" stays "85.9 GB"; rates in Gb/s and
 * GB/s): writes at most buflen bytes, returns buf. */
char *capsim_units_format(double v, capsim_dim dim, char *buf, size_t buflen);

/* Dates run from these years (a measurement, a price, a datasheet). */
#define CAPSIM_YEAR_MIN 1990
#define CAPSIM_YEAR_MAX 2100

/* The number of the n decimal digits at s, or -1 when one is not a digit
 * (unlike sscanf's %d, no blanks or signs). */
int capsim_digits(const char *s, int n);

/* 1 when the 10 characters at s are "YYYY-MM-DD", a real day (leap years
 * counted) from CAPSIM_YEAR_MIN to CAPSIM_YEAR_MAX; s may go on after them. */
int capsim_day_at(const char *s);

/* Parse a date "YYYY", "YYYY-MM" or "YYYY-MM-DD"; returns 0 and writes a
 * normalised copy into out, or -1 with a message. */
int capsim_date_parse(const char *s, char *out, size_t outlen, char *err,
		      size_t errlen);

/* "true", "on", "yes" -> 1; "false", "off", "no" -> 0; else -1. */
int capsim_flag_parse(const char *s);

#endif
