/* units.c - human quantities to SI; see units.h for the contract. */
#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "check.h"

typedef struct {
	const char *sym;
	double factor; /* SI value of one unit */
} unit;

#define END_UNITS { NULL, 0.0 }

/* Year of 365.25 days (the Julian year); a month is a twelfth of it. */
#define DAY_S 86400.0
#define YEAR_S (365.25 * DAY_S)
#define MONTH_S (YEAR_S / 12.0)

static const unit bytes_units[] = {
	{ "B", 1.0 }, { "byte", 1.0 }, { "bytes", 1.0 },
	{ "kB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 }, { "PB", 1e15 },
	{ "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 },
	{ "TiB", 1099511627776.0 }, { "PiB", 1125899906842624.0 },
	END_UNITS
};

static const unit rate_units[] = {
	{ "B/s", 1.0 }, { "kB/s", 1e3 }, { "MB/s", 1e6 }, { "GB/s", 1e9 },
	{ "TB/s", 1e12 }, { "KiB/s", 1024.0 }, { "MiB/s", 1048576.0 },
	{ "GiB/s", 1073741824.0 }, { "TiB/s", 1099511627776.0 },
	{ "b/s", 0.125 }, { "bit/s", 0.125 }, { "bps", 0.125 },
	{ "kb/s", 125.0 }, { "kbps", 125.0 }, { "Mb/s", 1.25e5 }, { "Mbps", 1.25e5 },
	{ "Gb/s", 1.25e8 }, { "Gbps", 1.25e8 }, { "Gbit/s", 1.25e8 },
	{ "Tb/s", 1.25e11 }, { "Tbps", 1.25e11 }, { "Tbit/s", 1.25e11 },
	END_UNITS
};

static const unit flops_units[] = {
	{ "FLOP/s", 1.0 }, { "GFLOP/s", 1e9 }, { "TFLOP/s", 1e12 },
	{ "PFLOP/s", 1e15 }, { "EFLOP/s", 1e18 },
	{ "FLOPS", 1.0 }, { "GFLOPS", 1e9 }, { "TFLOPS", 1e12 },
	{ "PFLOPS", 1e15 }, { "EFLOPS", 1e18 },
	END_UNITS
};

static const unit time_units[] = {
	{ "ns", 1e-9 }, { "us", 1e-6 }, { "\xc2\xb5s", 1e-6 }, { "ms", 1e-3 },
	{ "s", 1.0 }, { "sec", 1.0 }, { "min", 60.0 },
	{ "h", 3600.0 }, { "hr", 3600.0 }, { "hour", 3600.0 }, { "hours", 3600.0 },
	{ "d", DAY_S }, { "day", DAY_S }, { "days", DAY_S },
	{ "week", 7 * DAY_S }, { "weeks", 7 * DAY_S },
	{ "mo", MONTH_S }, { "month", MONTH_S }, { "months", MONTH_S },
	{ "y", YEAR_S }, { "yr", YEAR_S }, { "year", YEAR_S }, { "years", YEAR_S },
	END_UNITS
};

static const unit power_units[] = {
	{ "W", 1.0 }, { "kW", 1e3 }, { "MW", 1e6 }, END_UNITS
};

static const unit energy_units[] = {
	{ "J", 1.0 }, { "kJ", 1e3 }, { "MJ", 1e6 }, { "GJ", 1e9 },
	{ "Wh", 3600.0 }, { "kWh", 3.6e6 }, { "MWh", 3.6e9 }, { "GWh", 3.6e12 },
	END_UNITS
};

/* power x time, for "$150/kW-month" */
static const unit power_time_units[] = {
	{ "W-s", 1.0 }, { "W-month", MONTH_S }, { "W-mo", MONTH_S }, { "W-y", YEAR_S },
	{ "W-year", YEAR_S }, { "W-h", 3600.0 },
	{ "kW-month", 1e3 * MONTH_S }, { "kW-mo", 1e3 * MONTH_S },
	{ "kW-y", 1e3 * YEAR_S }, { "kW-year", 1e3 * YEAR_S },
	{ "kW-h", 3.6e6 },
	END_UNITS
};

static const unit volt_units[] = { { "V", 1.0 }, { "kV", 1e3 }, END_UNITS };
static const unit amp_units[] = { { "A", 1.0 }, END_UNITS };
static const unit hertz_units[] = {
	{ "Hz", 1.0 }, { "kHz", 1e3 }, { "MHz", 1e6 }, { "GHz", 1e9 }, END_UNITS
};
static const unit meter_units[] = {
	{ "m", 1.0 }, { "cm", 1e-2 }, { "mm", 1e-3 }, { "km", 1e3 }, END_UNITS
};
static const unit ops_units[] = {
	{ "IOPS", 1.0 }, { "ops/s", 1.0 }, { "op/s", 1.0 }, { "/s", 1.0 }, END_UNITS
};

/* count multipliers: B is a billion where a count is expected */
static const unit count_mult[] = {
	{ "k", 1e3 }, { "K", 1e3 }, { "M", 1e6 }, { "B", 1e9 }, { "G", 1e9 },
	{ "T", 1e12 }, END_UNITS
};

static const struct {
	const char *name;
	const char *example;
	const char *json_suffix;
} dim_info[CAPSIM_DIM__COUNT] = {
	[CAPSIM_DIM_COUNT] = { "a count", "2T", "" },
	[CAPSIM_DIM_RATIO] = { "a ratio", "60%", "" },
	[CAPSIM_DIM_BYTES] = { "a size", "80 GiB", "_bytes" },
	[CAPSIM_DIM_BYTES_PER_S] = { "a bandwidth", "400 Gb/s", "_bytes_per_s" },
	[CAPSIM_DIM_FLOP_PER_S] = { "a compute rate", "989.4 TFLOP/s", "_flop_per_s" },
	[CAPSIM_DIM_SECONDS] = { "a time", "130 ns", "_s" },
	[CAPSIM_DIM_WATTS] = { "a power", "700 W", "_w" },
	[CAPSIM_DIM_JOULES] = { "an energy", "1.5 kWh", "_j" },
	[CAPSIM_DIM_USD] = { "an amount of money", "$30k", "_usd" },
	[CAPSIM_DIM_USD_PER_S] = { "a price per time", "$2.49/GPU-h", "_usd_per_s" },
	[CAPSIM_DIM_USD_PER_J] = { "an energy price", "$0.09/kWh", "_usd_per_j" },
	[CAPSIM_DIM_USD_PER_W_S] = { "a price per power and time", "$150/kW-month", "_usd_per_w_s" },
	[CAPSIM_DIM_USD_PER_BYTE] = { "a price per size", "$0.09/GB", "_usd_per_byte" },
	[CAPSIM_DIM_USD_PER_BYTE_S] = { "a price per size and time", "$0.023/GB-month", "_usd_per_byte_s" },
	[CAPSIM_DIM_VOLTS] = { "a voltage", "208 V", "_v" },
	[CAPSIM_DIM_AMPERES] = { "a current", "60 A", "_a" },
	[CAPSIM_DIM_HERTZ] = { "a frequency", "1980 MHz", "_hz" },
	[CAPSIM_DIM_OPS_PER_S] = { "an operation rate", "1.5M IOPS", "_ops_per_s" },
	[CAPSIM_DIM_METERS] = { "a length", "0.6 m", "_m" },
};

const char *capsim_dim_name(capsim_dim dim)
{
	return dim < CAPSIM_DIM__COUNT ? dim_info[dim].name : "?";
}

const char *capsim_dim_example(capsim_dim dim)
{
	return dim < CAPSIM_DIM__COUNT ? dim_info[dim].example : "?";
}

const char *capsim_dim_json_suffix(capsim_dim dim)
{
	return dim < CAPSIM_DIM__COUNT ? dim_info[dim].json_suffix : "";
}

static const char *skip_space(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* Scan a decimal number at p: optional sign, digits with optional ',' thousands
 * groups, optional fraction and exponent. No inf, nan or hex. Returns the end
 * or NULL when no number starts at p. */
static const char *scan_number(const char *p, double *out)
{
	char buf[64];
	size_t n = 0;
	const char *q = p;
	int digits = 0;

	if (*q == '-' || *q == '+')
		buf[n++] = *q++;
	while (isdigit((unsigned char)*q) || *q == ',') {
		if (*q == ',') {
			/* a thousands separator needs exactly three digits after it */
			if (!digits || !isdigit((unsigned char)q[1]) ||
			    !isdigit((unsigned char)q[2]) ||
			    !isdigit((unsigned char)q[3]) ||
			    isdigit((unsigned char)q[4]))
				return NULL;
			q++;
			continue;
		}
		if (n + 1 >= sizeof buf)
			return NULL;
		buf[n++] = *q++;
		digits++;
	}
	if (*q == '.') {
		if (n + 1 >= sizeof buf)
			return NULL;
		buf[n++] = *q++;
		while (isdigit((unsigned char)*q)) {
			if (n + 1 >= sizeof buf)
				return NULL;
			buf[n++] = *q++;
			digits++;
		}
	}
	if (!digits)
		return NULL;
	if ((*q == 'e' || *q == 'E') &&
	    (isdigit((unsigned char)q[1]) ||
	     ((q[1] == '-' || q[1] == '+') && isdigit((unsigned char)q[2])))) {
		/* the exponent's letter and sign: room for both and the NUL */
		if (n + 3 >= sizeof buf)
			return NULL;
		buf[n++] = *q++;
		if (*q == '-' || *q == '+')
			buf[n++] = *q++;
		while (isdigit((unsigned char)*q)) {
			if (n + 1 >= sizeof buf)
				return NULL;
			buf[n++] = *q++;
		}
	}
	buf[n] = '\0';
	*out = strtod(buf, NULL);
	if (!isfinite(*out))
		return NULL;
	return q;
}

/* Copy s without trailing blanks into buf. */
static void trim_copy(const char *s, char *buf, size_t len)
{
	if (!len)
		return;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

static const unit *find_unit(const unit *table, const char *sym)
{
	for (const unit *u = table; u->sym; u++)
		if (strcmp(u->sym, sym) == 0) {
			/* a unit converts by a positive, finite factor */
			CAPSIM_ASSERT(u->factor > 0 && isfinite(u->factor));
			return u;
		}
	return NULL;
}

static void list_units(const unit *table, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (const unit *u = table; u->sym && n + 1 < len; u++) {
		int w = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", u->sym);
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
}

/* Error for an unknown unit: suggests a case-insensitive match, else lists. */
static int unknown_unit(const char *sym, const char *whole, capsim_dim dim,
			const unit *table, char *err, size_t errlen)
{
	const unit *guess = NULL;
	for (const unit *u = table; u->sym; u++)
		if (strcasecmp(u->sym, sym) == 0) {
			guess = u;
			break;
		}
	if (guess) {
		snprintf(err, errlen,
			 "unknown unit '%s' in '%s' for %s; did you mean '%s'? "
			 "(units are case-sensitive: b is a bit, B a byte)",
			 sym, whole, capsim_dim_name(dim), guess->sym);
	} else {
		char known[400];
		list_units(table, known, sizeof known);
		snprintf(err, errlen,
			 "unknown unit '%s' in '%s' for %s (expected one of: %s)",
			 sym, whole, capsim_dim_name(dim), known);
	}
	return -1;
}

static int missing_unit(const char *whole, capsim_dim dim, char *err,
			size_t errlen)
{
	snprintf(err, errlen, "'%s' has no unit; expected %s such as '%s'",
		 whole, capsim_dim_name(dim), capsim_dim_example(dim));
	return -1;
}

/* number followed by a unit from table (blank between optional) */
static int parse_with_table(const char *s, capsim_dim dim, const unit *table,
			    double *out, char *err, size_t errlen)
{
	double v;
	const char *p = scan_number(skip_space(s), &v);
	char sym[64];

	if (!p) {
		snprintf(err, errlen, "expected %s such as '%s', found '%s'",
			 capsim_dim_name(dim), capsim_dim_example(dim), s);
		return -1;
	}
	trim_copy(skip_space(p), sym, sizeof sym);
	if (!sym[0])
		return missing_unit(s, dim, err, errlen);
	const unit *u = find_unit(table, sym);
	if (!u)
		return unknown_unit(sym, s, dim, table, err, errlen);
	*out = v * u->factor;
	return 0;
}

/* number with an optional count multiplier ("2T", "1.5 M"); rest -> *rest */
static int parse_count_prefix(const char *s, double *out, const char **rest)
{
	double v;
	const char *p = scan_number(skip_space(s), &v);
	if (!p)
		return -1;
	const char *q = skip_space(p);
	for (const unit *u = count_mult; u->sym; u++) {
		size_t n = strlen(u->sym);
		if (strncmp(q, u->sym, n) == 0 &&
		    (q[n] == '\0' || q[n] == ' ' || q[n] == '\t')) {
			*out = v * u->factor;
			*rest = skip_space(q + n);
			return 0;
		}
	}
	*out = v;
	*rest = q;
	return 0;
}

static int parse_count(const char *s, double *out, char *err, size_t errlen)
{
	const char *rest;
	char tail[64];
	double v;

	if (parse_count_prefix(s, &v, &rest) < 0) {
		snprintf(err, errlen,
			 "expected a count such as '4096' or '2T', found '%s'", s);
		return -1;
	}
	trim_copy(rest, tail, sizeof tail);
	if (tail[0]) {
		snprintf(err, errlen,
			 "unknown unit '%s' in '%s' for a count (expected a plain "
			 "number or one with k, M, B (billion), G or T)",
			 tail, s);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_ratio(const char *s, double *out, char *err, size_t errlen)
{
	double a, b;
	const char *p = scan_number(skip_space(s), &a);
	char tail[64];

	if (!p)
		goto bad;
	p = skip_space(p);
	if (*p == '%') {
		trim_copy(skip_space(p + 1), tail, sizeof tail);
		if (tail[0])
			goto bad;
		*out = a / 100.0;
		return 0;
	}
	if (*p == ':') {
		p = scan_number(skip_space(p + 1), &b);
		if (!p)
			goto bad;
		trim_copy(skip_space(p), tail, sizeof tail);
		if (tail[0] || b <= 0.0)
			goto bad;
		*out = a / b;
		return 0;
	}
	trim_copy(p, tail, sizeof tail);
	if (tail[0])
		goto bad;
	*out = a;
	return 0;
bad:
	snprintf(err, errlen,
		 "expected a ratio such as '1.3', '60%%' or '2:1', found '%s'", s);
	return -1;
}

/* "$30k", "$1,200", "30000 USD", "USD 30000"; rest -> *rest (after the
 * amount and its multiplier, before any "/...") */
static int parse_money_amount(const char *s, double *out, const char **rest)
{
	const char *p = skip_space(s);
	int prefixed = 0;

	if (*p == '$') {
		p++;
		prefixed = 1;
	} else if (strncmp(p, "USD", 3) == 0) {
		p = skip_space(p + 3);
		prefixed = 1;
	}
	double v;
	const char *q = scan_number(p, &v);
	if (!q)
		return -1;
	/* multiplier directly after the number: $30k, $1.2M, $2B */
	if ((*q == 'k' || *q == 'K') && !isalpha((unsigned char)q[1])) {
		v *= 1e3;
		q++;
	} else if (*q == 'M' && !isalpha((unsigned char)q[1])) {
		v *= 1e6;
		q++;
	} else if (*q == 'B' && !isalpha((unsigned char)q[1])) {
		v *= 1e9;
		q++;
	}
	q = skip_space(q);
	if (!prefixed) {
		if (strncmp(q, "USD", 3) != 0)
			return -2;
		q = skip_space(q + 3);
	}
	*out = v;
	*rest = q;
	return 0;
}

static int parse_money(const char *s, capsim_dim dim, const char *hw,
		       double *out, char *err, size_t errlen)
{
	double v;
	const char *rest;
	char sym[64];
	int rc = parse_money_amount(s, &v, &rest);

	if (rc == -2)
		return missing_unit(s, dim, err, errlen);
	if (rc < 0) {
		snprintf(err, errlen, "expected %s such as '%s', found '%s'",
			 capsim_dim_name(dim), capsim_dim_example(dim), s);
		return -1;
	}
	trim_copy(rest, sym, sizeof sym);
	if (dim == CAPSIM_DIM_USD) {
		if (sym[0]) {
			snprintf(err, errlen,
				 "unexpected '%s' after the amount in '%s'; expected "
				 "an amount of money such as '$30k'",
				 sym, s);
			return -1;
		}
		*out = v;
		return 0;
	}
	if (sym[0] != '/') {
		snprintf(err, errlen, "'%s' has no '/unit'; expected %s such as '%s'",
			 s, capsim_dim_name(dim), capsim_dim_example(dim));
		return -1;
	}
	const char *per = skip_space(sym + 1);
	if (dim == CAPSIM_DIM_USD_PER_BYTE || dim == CAPSIM_DIM_USD_PER_BYTE_S) {
		/* "GB", or "GB-month": a size, then for storage a time */
		char size[32];
		const char *dash = strchr(per, '-');
		size_t n = dash ? (size_t)(dash - per) : strlen(per);
		if ((dim == CAPSIM_DIM_USD_PER_BYTE) != !dash || n >= sizeof size) {
			snprintf(err, errlen, "expected %s such as '%s', found '%s'",
				 capsim_dim_name(dim), capsim_dim_example(dim), s);
			return -1;
		}
		memcpy(size, per, n);
		size[n] = '\0';
		const unit *b = find_unit(bytes_units, size);
		if (!b)
			return unknown_unit(size, s, dim, bytes_units, err, errlen);
		double t = 1.0;
		if (dash) {
			const unit *u = find_unit(time_units, dash + 1);
			if (!u)
				return unknown_unit(dash + 1, s, dim, time_units, err, errlen);
			t = u->factor;
		}
		*out = v / b->factor / t;
		return 0;
	}
	const unit *table = dim == CAPSIM_DIM_USD_PER_S ? time_units :
			    dim == CAPSIM_DIM_USD_PER_J ? energy_units :
							  power_time_units;
	if (dim == CAPSIM_DIM_USD_PER_S) {
		/* optional hardware unit: "GPU-h" */
		const char *dash = strchr(per, '-');
		if (dash) {
			size_t n = (size_t)(dash - per);
			if (!hw || strlen(hw) != n || strncmp(per, hw, n) != 0) {
				snprintf(err, errlen,
					 "'%s' is priced per '%.*s'; expected a price "
					 "per %s-time such as '%s'",
					 s, (int)n, per, hw ? hw : "unit of",
					 hw ? "$2.49/GPU-h" : "$100/month");
				return -1;
			}
			per = dash + 1;
		}
	}
	const unit *u = find_unit(table, per);
	if (!u)
		return unknown_unit(per, s, dim, table, err, errlen);
	*out = v / u->factor;
	return 0;
}

static int parse_ops(const char *s, double *out, char *err, size_t errlen)
{
	const char *rest;
	char sym[64];
	double v;
	if (parse_count_prefix(s, &v, &rest) < 0) {
		snprintf(err, errlen,
			 "expected an operation rate such as '1.5M IOPS', found '%s'",
			 s);
		return -1;
	}
	trim_copy(rest, sym, sizeof sym);
	if (!sym[0])
		return missing_unit(s, CAPSIM_DIM_OPS_PER_S, err, errlen);
	if (!find_unit(ops_units, sym))
		return unknown_unit(sym, s, CAPSIM_DIM_OPS_PER_S, ops_units, err,
				    errlen);
	*out = v;
	return 0;
}

static int parse_dim(const char *s, capsim_dim dim, const char *hw,
		     double *out, char *err, size_t errlen)
{
	switch (dim) {
	case CAPSIM_DIM_COUNT:
		return parse_count(s, out, err, errlen);
	case CAPSIM_DIM_RATIO:
		return parse_ratio(s, out, err, errlen);
	case CAPSIM_DIM_BYTES:
		return parse_with_table(s, dim, bytes_units, out, err, errlen);
	case CAPSIM_DIM_BYTES_PER_S:
		return parse_with_table(s, dim, rate_units, out, err, errlen);
	case CAPSIM_DIM_FLOP_PER_S:
		return parse_with_table(s, dim, flops_units, out, err, errlen);
	case CAPSIM_DIM_SECONDS:
		return parse_with_table(s, dim, time_units, out, err, errlen);
	case CAPSIM_DIM_WATTS:
		return parse_with_table(s, dim, power_units, out, err, errlen);
	case CAPSIM_DIM_JOULES:
		return parse_with_table(s, dim, energy_units, out, err, errlen);
	case CAPSIM_DIM_VOLTS:
		return parse_with_table(s, dim, volt_units, out, err, errlen);
	case CAPSIM_DIM_AMPERES:
		return parse_with_table(s, dim, amp_units, out, err, errlen);
	case CAPSIM_DIM_HERTZ:
		return parse_with_table(s, dim, hertz_units, out, err, errlen);
	case CAPSIM_DIM_OPS_PER_S:
		return parse_ops(s, out, err, errlen);
	case CAPSIM_DIM_METERS:
		return parse_with_table(s, dim, meter_units, out, err, errlen);
	case CAPSIM_DIM_USD:
	case CAPSIM_DIM_USD_PER_S:
	case CAPSIM_DIM_USD_PER_J:
	case CAPSIM_DIM_USD_PER_W_S:
	case CAPSIM_DIM_USD_PER_BYTE:
	case CAPSIM_DIM_USD_PER_BYTE_S:
		return parse_money(s, dim, hw, out, err, errlen);
	case CAPSIM_DIM__COUNT:
		break;
	}
	snprintf(err, errlen, "internal: unknown dimension %d", (int)dim);
	return -1;
}

int capsim_units_parse(const char *s, capsim_dim dim, const char *hw,
		       double *out, char *err, size_t errlen)
{
	if (!s || !*skip_space(s)) {
		snprintf(err, errlen, "empty value; expected %s such as '%s'",
			 capsim_dim_name(dim), capsim_dim_example(dim));
		return -1;
	}
	double v;
	if (parse_dim(s, dim, hw, &v, err, errlen) < 0)
		return -1;
	/* a finite number times its unit ("1e308 PB") or over a tiny divisor
	 * ("1e300:1e-300") can overflow */
	if (!isfinite(v)) {
		snprintf(err, errlen, "'%s' is out of range for %s", s, capsim_dim_name(dim));
		return -1;
	}
	*out = v;
	return 0;
}

/* pick the largest unit of the table whose factor is <= |v| */
static char *format_scaled(double v, const unit *table, char *buf,
			   size_t len)
{
	const unit *best = table;
	for (const unit *u = table; u->sym; u++) {
		CAPSIM_ASSERT(u->factor > 0);
		if (fabs(v) >= u->factor && u->factor >= best->factor)
			best = u;
	}
	snprintf(buf, len, "%.4g %s", v / best->factor, best->sym);
	return buf;
}

/* dollars, in thousands, millions or billions from $10k up */
static char *format_usd(double v, char *buf, size_t len)
{
	if (fabs(v) >= 1e9)
		snprintf(buf, len, "$%.4gB", v / 1e9);
	else if (fabs(v) >= 1e6)
		snprintf(buf, len, "$%.4gM", v / 1e6);
	else if (fabs(v) >= 1e4)
		snprintf(buf, len, "$%.4gk", v / 1e3);
	else
		snprintf(buf, len, "$%.4g", v);
	return buf;
}

/* a count: whole below 10,000, else scaled by count_show without the
 * space ("70B") */
static char *format_count(double v, const unit *count_show, char *buf, size_t len)
{
	char tmp[32];
	if (fabs(v) < 1e4 && v == floor(v)) {
		snprintf(buf, len, "%.0f", v);
		return buf;
	}
	format_scaled(v, count_show, tmp, sizeof tmp);
	/* "70 B" -> "70B" */
	char *sp = strchr(tmp, ' ');
	if (sp)
		memmove(sp, sp + 1, strlen(sp));
	trim_copy(tmp, buf, len);
	return buf;
}

char *capsim_units_format(double v, capsim_dim dim, char *buf, size_t len)
{
	static const unit bytes_dec[] = {
		{ "B", 1.0 }, { "kB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 },
		{ "TB", 1e12 }, { "PB", 1e15 }, END_UNITS
	};
	static const unit rate_dec[] = {
		{ "B/s", 1.0 }, { "kB/s", 1e3 }, { "MB/s", 1e6 }, { "GB/s", 1e9 },
		{ "TB/s", 1e12 }, END_UNITS
	};
	static const unit flops_dec[] = {
		{ "FLOP/s", 1.0 }, { "GFLOP/s", 1e9 }, { "TFLOP/s", 1e12 },
		{ "PFLOP/s", 1e15 }, { "EFLOP/s", 1e18 }, END_UNITS
	};
	static const unit time_show[] = {
		{ "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 }, { "s", 1.0 },
		{ "h", 3600.0 }, { "d", DAY_S }, { "y", YEAR_S }, END_UNITS
	};
	static const unit count_show[] = {
		{ "", 1.0 }, { "k", 1e3 }, { "M", 1e6 }, { "B", 1e9 }, { "T", 1e12 },
		END_UNITS
	};

	switch (dim) {
	case CAPSIM_DIM_BYTES:
		return format_scaled(v, bytes_dec, buf, len);
	case CAPSIM_DIM_BYTES_PER_S:
		return format_scaled(v, rate_dec, buf, len);
	case CAPSIM_DIM_FLOP_PER_S:
		return format_scaled(v, flops_dec, buf, len);
	case CAPSIM_DIM_SECONDS:
		return format_scaled(v, time_show, buf, len);
	case CAPSIM_DIM_WATTS:
		return format_scaled(v, power_units, buf, len);
	case CAPSIM_DIM_JOULES:
		snprintf(buf, len, "%.4g kWh", v / 3.6e6);
		return buf;
	case CAPSIM_DIM_USD:
		return format_usd(v, buf, len);
	case CAPSIM_DIM_USD_PER_S:
		snprintf(buf, len, "$%.4g/h", v * 3600.0);
		return buf;
	case CAPSIM_DIM_USD_PER_J:
		snprintf(buf, len, "$%.4g/kWh", v * 3.6e6);
		return buf;
	case CAPSIM_DIM_USD_PER_W_S:
		snprintf(buf, len, "$%.4g/kW-month", v * 1e3 * MONTH_S);
		return buf;
	case CAPSIM_DIM_USD_PER_BYTE:
		snprintf(buf, len, "$%.4g/GB", v * 1e9);
		return buf;
	case CAPSIM_DIM_USD_PER_BYTE_S:
		snprintf(buf, len, "$%.4g/GB-month", v * 1e9 * MONTH_S);
		return buf;
	case CAPSIM_DIM_VOLTS:
		snprintf(buf, len, "%.4g V", v);
		return buf;
	case CAPSIM_DIM_AMPERES:
		snprintf(buf, len, "%.4g A", v);
		return buf;
	case CAPSIM_DIM_HERTZ:
		snprintf(buf, len, "%.4g MHz", v / 1e6);
		return buf;
	case CAPSIM_DIM_METERS:
		snprintf(buf, len, "%.4g m", v);
		return buf;
	case CAPSIM_DIM_OPS_PER_S: {
		char tmp[32];
		format_scaled(v, count_show, tmp, sizeof tmp);
		trim_copy(tmp, buf, len);
		strncat(buf, " ops/s", len - strlen(buf) - 1);
		return buf;
	}
	case CAPSIM_DIM_RATIO:
		snprintf(buf, len, "%.4g", v);
		return buf;
	case CAPSIM_DIM_COUNT:
	case CAPSIM_DIM__COUNT:
		return format_count(v, count_show, buf, len);
	}
	snprintf(buf, len, "%g", v);
	return buf;
}

int capsim_digits(const char *s, int n)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = 10 * v + (s[i] - '0');
	}
	return v;
}

static int days_in_month(int y, int m)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : days[m - 1];
}

static int real_date(int y, int m, int d)
{
	return y >= CAPSIM_YEAR_MIN && y <= CAPSIM_YEAR_MAX && m >= 1 && m <= 12 && d >= 1 &&
	       d <= days_in_month(y, m);
}

int capsim_day_at(const char *s)
{
	if (strnlen(s, 10) < 10 || s[4] != '-' || s[7] != '-')
		return 0;
	return real_date(capsim_digits(s, 4), capsim_digits(s + 5, 2), capsim_digits(s + 8, 2));
}

int capsim_date_parse(const char *s, char *out, size_t outlen, char *err,
		      size_t errlen)
{
	size_t len = strlen(s);
	int y = capsim_digits(s, 4 < len ? 4 : (int)len), m = 1, d = 1;
	int shaped = (len == 4 || len == 7 || len == 10) && y >= 0;
	if (shaped && len >= 7)
		shaped = s[4] == '-' && (m = capsim_digits(s + 5, 2)) >= 0;
	if (shaped && len == 10)
		shaped = s[7] == '-' && (d = capsim_digits(s + 8, 2)) >= 0;
	if (!shaped) {
		snprintf(err, errlen,
			 "expected a date YYYY, YYYY-MM or YYYY-MM-DD, found '%s'",
			 s);
		return -1;
	}
	if (!real_date(y, m, d)) {
		snprintf(err, errlen, "date '%s' is out of range", s);
		return -1;
	}
	snprintf(out, outlen, "%s", s);
	return 0;
}

int capsim_flag_parse(const char *s)
{
	static const char *yes[] = { "true", "on", "yes" };
	static const char *no[] = { "false", "off", "no" };
	for (size_t i = 0; i < 3; i++) {
		if (strcmp(s, yes[i]) == 0)
			return 1;
		if (strcmp(s, no[i]) == 0)
			return 0;
	}
	return -1;
}
