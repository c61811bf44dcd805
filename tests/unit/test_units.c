/* test_units.c - parsing human quantities: good values to SI, bad ones to a
 * message that names what was expected and what was found. */
#include "testutil.h"

#include <string.h>

#include "sha256.h"
#include "units.h"

#define YEAR_S (365.25 * 86400.0)
#define MONTH_S (YEAR_S / 12.0)

typedef struct {
	const char *text;
	capsim_dim dim;
	const char *hw;
	double want;
} good_case;

static const good_case good[] = {
	{ "400 Gb/s", CAPSIM_DIM_BYTES_PER_S, NULL, 50e9 },
	{ "400Gbps", CAPSIM_DIM_BYTES_PER_S, NULL, 50e9 },
	{ "200 Gbit/s", CAPSIM_DIM_BYTES_PER_S, NULL, 25e9 },
	{ "3.35 TB/s", CAPSIM_DIM_BYTES_PER_S, NULL, 3.35e12 },
	{ "900 GB/s", CAPSIM_DIM_BYTES_PER_S, NULL, 900e9 },
	{ "1.5 GiB/s", CAPSIM_DIM_BYTES_PER_S, NULL, 1.5 * 1073741824.0 },
	{ "80 GiB", CAPSIM_DIM_BYTES, NULL, 85899345920.0 },
	{ "80 GB", CAPSIM_DIM_BYTES, NULL, 80e9 },
	{ "3.84 TB", CAPSIM_DIM_BYTES, NULL, 3.84e12 },
	{ "8B", CAPSIM_DIM_BYTES, NULL, 8.0 },
	{ "8B", CAPSIM_DIM_COUNT, NULL, 8e9 },
	{ "2T", CAPSIM_DIM_COUNT, NULL, 2e12 },
	{ "16M", CAPSIM_DIM_COUNT, NULL, 16e6 },
	{ "128k", CAPSIM_DIM_COUNT, NULL, 128e3 },
	{ "4096", CAPSIM_DIM_COUNT, NULL, 4096.0 },
	{ "1,048,576", CAPSIM_DIM_COUNT, NULL, 1048576.0 },
	{ "989.4 TFLOP/s", CAPSIM_DIM_FLOP_PER_S, NULL, 989.4e12 },
	{ "1.979 PFLOP/s", CAPSIM_DIM_FLOP_PER_S, NULL, 1.979e15 },
	{ "130 ns", CAPSIM_DIM_SECONDS, NULL, 130e-9 },
	{ "2.5 us", CAPSIM_DIM_SECONDS, NULL, 2.5e-6 },
	{ "3 y", CAPSIM_DIM_SECONDS, NULL, 3 * YEAR_S },
	{ "18 months", CAPSIM_DIM_SECONDS, NULL, 18 * MONTH_S },
	{ "2 h", CAPSIM_DIM_SECONDS, NULL, 7200.0 },
	{ "700 W", CAPSIM_DIM_WATTS, NULL, 700.0 },
	{ "10.2 kW", CAPSIM_DIM_WATTS, NULL, 10200.0 },
	{ "1.5 kWh", CAPSIM_DIM_JOULES, NULL, 5.4e6 },
	{ "$30000", CAPSIM_DIM_USD, NULL, 30000.0 },
	{ "$30k", CAPSIM_DIM_USD, NULL, 30000.0 },
	{ "$1.2M", CAPSIM_DIM_USD, NULL, 1.2e6 },
	{ "$1,200", CAPSIM_DIM_USD, NULL, 1200.0 },
	{ "30000 USD", CAPSIM_DIM_USD, NULL, 30000.0 },
	{ "USD 30000", CAPSIM_DIM_USD, NULL, 30000.0 },
	{ "$2.49/GPU-h", CAPSIM_DIM_USD_PER_S, "GPU", 2.49 / 3600.0 },
	{ "$2.49/h", CAPSIM_DIM_USD_PER_S, "GPU", 2.49 / 3600.0 },
	{ "$100/month", CAPSIM_DIM_USD_PER_S, NULL, 100.0 / MONTH_S },
	{ "$0.09/kWh", CAPSIM_DIM_USD_PER_J, NULL, 0.09 / 3.6e6 },
	{ "$150/kW-month", CAPSIM_DIM_USD_PER_W_S, NULL, 150.0 / (1e3 * MONTH_S) },
	{ "60%", CAPSIM_DIM_RATIO, NULL, 0.6 },
	{ "2:1", CAPSIM_DIM_RATIO, NULL, 2.0 },
	{ "1:1", CAPSIM_DIM_RATIO, NULL, 1.0 },
	{ "1.3", CAPSIM_DIM_RATIO, NULL, 1.3 },
	{ "208 V", CAPSIM_DIM_VOLTS, NULL, 208.0 },
	{ "60 A", CAPSIM_DIM_AMPERES, NULL, 60.0 },
	{ "1980 MHz", CAPSIM_DIM_HERTZ, NULL, 1.98e9 },
	{ "1.5M IOPS", CAPSIM_DIM_OPS_PER_S, NULL, 1.5e6 },
	{ "200k ops/s", CAPSIM_DIM_OPS_PER_S, NULL, 2e5 },
	{ "0.6 m", CAPSIM_DIM_METERS, NULL, 0.6 },
	{ "$0.09/GB", CAPSIM_DIM_USD_PER_BYTE, NULL, 0.09e-9 },
	{ "$90/TB", CAPSIM_DIM_USD_PER_BYTE, NULL, 90e-12 },
	{ "$0.023/GB-month", CAPSIM_DIM_USD_PER_BYTE_S, NULL, 0.023e-9 / 2629800.0 },
	{ "$23/TB-mo", CAPSIM_DIM_USD_PER_BYTE_S, NULL, 23e-12 / 2629800.0 },
	{ "600 mm", CAPSIM_DIM_METERS, NULL, 0.6 },
	{ "2 km", CAPSIM_DIM_METERS, NULL, 2000.0 },
	{ "  12.5 GB/s  ", CAPSIM_DIM_BYTES_PER_S, NULL, 12.5e9 },
	{ "2.385e3 W", CAPSIM_DIM_WATTS, NULL, 2385.0 },
};

static void test_good_values(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		double v = -1.0;
		char err[256] = "";
		int rc = capsim_units_parse(good[i].text, good[i].dim, good[i].hw, &v,
					    err, sizeof err);
		if (rc != 0)
			fail_msg("'%s' did not parse: %s", good[i].text, err);
		if (fabs(v - good[i].want) > 1e-12 * fabs(good[i].want))
			fail_msg("'%s' -> %.17g, expected %.17g", good[i].text, v,
				 good[i].want);
	}
}

typedef struct {
	const char *text;
	capsim_dim dim;
	const char *hw;
	const char *msg; /* must appear in the error */
} bad_case;

static const bad_case bad[] = {
	{ "400", CAPSIM_DIM_BYTES_PER_S, NULL, "'400' has no unit; expected a bandwidth such as '400 Gb/s'" },
	{ "80", CAPSIM_DIM_BYTES, NULL, "has no unit" },
	{ "80 gb", CAPSIM_DIM_BYTES, NULL, "did you mean 'GB'?" },
	{ "400 gb/s", CAPSIM_DIM_BYTES_PER_S, NULL, "unknown unit 'gb/s'" },
	{ "12 furlongs", CAPSIM_DIM_SECONDS, NULL, "unknown unit 'furlongs' in '12 furlongs' for a time" },
	{ "", CAPSIM_DIM_WATTS, NULL, "empty value; expected a power" },
	{ "   ", CAPSIM_DIM_WATTS, NULL, "empty value" },
	{ "abc W", CAPSIM_DIM_WATTS, NULL, "expected a power such as '700 W', found 'abc W'" },
	{ "inf W", CAPSIM_DIM_WATTS, NULL, "expected a power" },
	{ "nan W", CAPSIM_DIM_WATTS, NULL, "expected a power" },
	{ "1e999 W", CAPSIM_DIM_WATTS, NULL, "expected a power" },
	{ "0x10 B", CAPSIM_DIM_BYTES, NULL, "unknown unit 'x10 B'" },
	{ "1,00 B", CAPSIM_DIM_BYTES, NULL, "expected a size" },
	{ "700 W W", CAPSIM_DIM_WATTS, NULL, "unknown unit 'W W'" },
	{ "2:0", CAPSIM_DIM_RATIO, NULL, "expected a ratio" },
	{ "60 %%", CAPSIM_DIM_RATIO, NULL, "expected a ratio" },
	{ "2T tokens", CAPSIM_DIM_COUNT, NULL, "unknown unit 'tokens'" },
	{ "5 GB", CAPSIM_DIM_COUNT, NULL, "for a count" },
	{ "30000", CAPSIM_DIM_USD, NULL, "has no unit" },
	{ "$", CAPSIM_DIM_USD, NULL, "expected an amount of money" },
	{ "$30k/h", CAPSIM_DIM_USD, NULL, "unexpected '/h'" },
	{ "$2.49", CAPSIM_DIM_USD_PER_S, "GPU", "has no '/unit'" },
	{ "$2.49/node-h", CAPSIM_DIM_USD_PER_S, "GPU", "priced per 'node'" },
	{ "$2.49/GPU-h", CAPSIM_DIM_USD_PER_S, NULL, "priced per 'GPU'" },
	{ "$2.49/fortnight", CAPSIM_DIM_USD_PER_S, NULL, "unknown unit 'fortnight'" },
	{ "$0.09/kW", CAPSIM_DIM_USD_PER_J, NULL, "unknown unit 'kW'" },
	{ "1980 mhz", CAPSIM_DIM_HERTZ, NULL, "did you mean 'MHz'?" },
	{ "1.5M", CAPSIM_DIM_OPS_PER_S, NULL, "has no unit" },
	{ "3 ft", CAPSIM_DIM_METERS, NULL, "unknown unit 'ft'" },
	{ "$0.09/GB-month", CAPSIM_DIM_USD_PER_BYTE, NULL, "expected a price per size" },
	{ "$0.023/GB", CAPSIM_DIM_USD_PER_BYTE_S, NULL, "expected a price per size and time" },
	{ "$0.09/GX", CAPSIM_DIM_USD_PER_BYTE, NULL, "unknown unit 'GX'" },
	{ "3", CAPSIM_DIM_METERS, NULL, "has no unit" },
};

static void test_bad_values(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		double v = 12345.0;
		char err[512] = "";
		int rc = capsim_units_parse(bad[i].text, bad[i].dim, bad[i].hw, &v,
					    err, sizeof err);
		if (rc != -1)
			fail_msg("'%s' parsed as %.17g; expected an error", bad[i].text, v);
		if (!strstr(err, bad[i].msg))
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].text, err,
				 bad[i].msg);
		if (v != 12345.0)
			fail_msg("'%s': output written on error", bad[i].text);
	}
}

/* Long mantissas with an exponent: every length up to the buffer's and past
 * it is either read exactly or refused, never written past the end (ASan
 * watches; a 63-digit mantissa with "e+1" once wrote one byte too many). */
static void test_long_mantissa(void **state)
{
	(void)state;
	for (int len = 1; len <= 70; len++) {
		char s[96], err[256];
		memset(s, '1', (size_t)len);
		snprintf(s + len, sizeof s - (size_t)len, "e+1 B");
		double v = 0;
		int rc = capsim_units_parse(s, CAPSIM_DIM_BYTES, NULL, &v, err, sizeof err);
		if (len <= 60) {
			assert_int_equal(rc, 0);
			assert_true(fabs(v / (strtod(s, NULL)) - 1.0) < 1e-15);
		} else if (rc == 0) {
			fail_msg("a %d-digit mantissa parsed", len);
		}
	}
}

static void test_error_never_overflows(void **state)
{
	(void)state;
	char err[16];
	memset(err, 'x', sizeof err);
	double v;
	assert_int_equal(capsim_units_parse("12 furlongs", CAPSIM_DIM_SECONDS,
					    NULL, &v, err, sizeof err), -1);
	assert_int_equal(strlen(err), sizeof err - 1);
}

/* a finite number times a large unit, or over a tiny one, overflows: refused,
 * never infinity (found by fuzz_units) */
static void test_overflow_refused(void **state)
{
	(void)state;
	char err[256];
	double v = 0;
	assert_int_equal(capsim_units_parse("1e308 PB", CAPSIM_DIM_BYTES, NULL, &v, err, sizeof err), -1);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(capsim_units_parse("1e300:1e-300", CAPSIM_DIM_RATIO, NULL, &v, err, sizeof err), -1);
	assert_int_equal(capsim_units_parse("$1e300/ns", CAPSIM_DIM_USD_PER_S, NULL, &v, err, sizeof err), -1);
	assert_int_equal(capsim_units_parse("1e308T", CAPSIM_DIM_COUNT, NULL, &v, err, sizeof err), -1);
	assert_int_equal(capsim_units_parse("1e290 PB", CAPSIM_DIM_BYTES, NULL, &v, err, sizeof err), 0);
}

static void test_format_reads_back(void **state)
{
	(void)state;
	char buf[64];
	double v;
	char err[256];
	assert_string_equal(capsim_units_format(80e9, CAPSIM_DIM_BYTES, buf, sizeof buf), "80 GB");
	assert_int_equal(capsim_units_parse(buf, CAPSIM_DIM_BYTES, NULL, &v, err, sizeof err), 0);
	assert_rel(v, 80e9, 1e-12);
	assert_string_equal(capsim_units_format(989.4e12, CAPSIM_DIM_FLOP_PER_S, buf, sizeof buf), "989.4 TFLOP/s");
	assert_string_equal(capsim_units_format(130e-9, CAPSIM_DIM_SECONDS, buf, sizeof buf), "130 ns");
	assert_string_equal(capsim_units_format(10200.0, CAPSIM_DIM_WATTS, buf, sizeof buf), "10.2 kW");
	assert_string_equal(capsim_units_format(2.49 / 3600.0, CAPSIM_DIM_USD_PER_S, buf, sizeof buf), "$2.49/h");
	assert_string_equal(capsim_units_format(70e9, CAPSIM_DIM_COUNT, buf, sizeof buf), "70B");
	assert_string_equal(capsim_units_format(4096, CAPSIM_DIM_COUNT, buf, sizeof buf), "4096");
	assert_string_equal(capsim_units_format(515e3, CAPSIM_DIM_USD, buf, sizeof buf), "$515k");
	assert_int_equal(capsim_units_parse(buf, CAPSIM_DIM_USD, NULL, &v, err, sizeof err), 0);
	assert_rel(v, 515e3, 1e-12);
	assert_string_equal(capsim_units_format(5.576e6, CAPSIM_DIM_USD, buf, sizeof buf), "$5.576M");
	assert_string_equal(capsim_units_format(2385.0, CAPSIM_DIM_USD, buf, sizeof buf), "$2385");
}

static void test_dates_and_flags(void **state)
{
	(void)state;
	char out[16], err[128];
	assert_int_equal(capsim_date_parse("2024", out, sizeof out, err, sizeof err), 0);
	assert_int_equal(capsim_date_parse("2024-06", out, sizeof out, err, sizeof err), 0);
	assert_int_equal(capsim_date_parse("2024-06-15", out, sizeof out, err, sizeof err), 0);
	assert_string_equal(out, "2024-06-15");
	assert_int_equal(capsim_date_parse("2024-13", out, sizeof out, err, sizeof err), -1);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(capsim_date_parse("June 2024", out, sizeof out, err, sizeof err), -1);
	assert_non_null(strstr(err, "expected a date YYYY"));
	assert_int_equal(capsim_date_parse("2024-6", out, sizeof out, err, sizeof err), -1);
	/* digits only where digits go (found by fuzz_units) */
	assert_int_equal(capsim_date_parse("2024- 6-15", out, sizeof out, err, sizeof err), -1);
	assert_int_equal(capsim_date_parse("2024-+6-15", out, sizeof out, err, sizeof err), -1);
	assert_int_equal(capsim_date_parse(" 202", out, sizeof out, err, sizeof err), -1);
	/* days of the month */
	assert_int_equal(capsim_date_parse("2024-02-29", out, sizeof out, err, sizeof err), 0);
	assert_int_equal(capsim_date_parse("2023-02-29", out, sizeof out, err, sizeof err), -1);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(capsim_date_parse("2024-04-31", out, sizeof out, err, sizeof err), -1);
	assert_int_equal(capsim_flag_parse("on"), 1);
	assert_int_equal(capsim_flag_parse("false"), 0);
	assert_int_equal(capsim_flag_parse("On"), -1);
	assert_int_equal(capsim_flag_parse("1"), -1);
}

/* FIPS 180-4 examples (NIST CSRC "SHA-256" example values) */
static void test_sha256(void **state)
{
	(void)state;
	char hex[65];
	capsim_sha256_hex("abc", 3, hex);
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	capsim_sha256_hex("", 0, hex);
	assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	capsim_sha256_hex(two, strlen(two), hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	/* fed in odd pieces, the same */
	capsim_sha256 c;
	capsim_sha256_init(&c);
	for (size_t i = 0; i < strlen(two); i += 7)
		capsim_sha256_update(&c, two + i, strlen(two) - i < 7 ? strlen(two) - i : 7);
	capsim_sha256_final_hex(&c, hex);
	assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_values),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_long_mantissa),
		cmocka_unit_test(test_error_never_overflows),
		cmocka_unit_test(test_overflow_refused),
		cmocka_unit_test(test_format_reads_back),
		cmocka_unit_test(test_dates_and_flags),
		cmocka_unit_test(test_sha256),
	};
	return testutil_run_group_name("units", tests, NULL, NULL);
}
