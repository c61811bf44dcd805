/* measure.c - imports into the store: calibrate/'s JSON lines, and the
 * records of a parsed nccl-tests log; see measure.h. Every field is checked
 * against its type and bounds before anything is stored (docs/store.md,
 * "Validation"); a refusal reads "FILE:LINE: field 'KEY': expected ...,
 * found ...". */
#include "measure.h"
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_statistics_double.h>
#include <jansson.h>

#include "collective.h"
#include "query.h"
#include "sha256.h"
#include "storeint.h"
#include "xalloc.h"

/* ---- bounds: what one GPU's (or one job's) measurements can be ------------ */

#define SECONDS_MIN 1e-9            /* a measured time: 1 ns ... */
#define SECONDS_MAX 1000.0          /* ... to 1000 s */
#define BYTES_MAX ((int64_t)1 << 50) /* sizes and memory: 1 PiB */
#define DIM_MAX ((int64_t)INT32_MAX) /* GEMM m, n, k; batch, seq, kernels */
#define RANKS_MAX ((int64_t)1 << 24)
#define FLOP_MAX 1e30               /* 2 m n k at DIM_MAX is 2^94 = 2e28 */
#define FLOP_PER_S_MAX 1e18         /* an exaFLOP/s: 500 x an H200's fp8 */
#define BYTES_PER_S_MAX 1e15        /* 1 PB/s: 200 x an H200's HBM */
#define GB_PER_S_MAX 1e6            /* the same in nccl's GB/s */
#define TOKENS_PER_S_MAX 1e12
#define POWER_W_MAX 1e4             /* one GPU's watts */
#define SM_MHZ_MAX 1e4
#define READING_T_MAX 1e6           /* seconds into a phase */
#define REL_ERR_MAX 1e6
#define VERSION_MAX 99999999        /* CUDA's 13000, cuBLASLt's 130100, NCCL's 22803 */
#define SMS_MAX 1024
#define L2_BYTES_MAX ((int64_t)1 << 40)
#define ARRAY_MAX 1000000           /* samples or readings in one record */
#define ENV_MAX 256                 /* NCCL_* settings of one run */
#define SHAPE_MAX 63                /* gemm shape and layout: stored, not read back */
#define LAYOUT_MAX 15

/* the longest text that a query.h row field holds (its size less the NUL) */
#define FIELD_MAX(type, field) (sizeof ((type *)0)->field - 1)

/* what standard input ("-") is called in messages and runs.source */
#define STDIN_NAME "standard input"

/* one import: the file, where we are in it, and the open statement set */
typedef struct importer {
	const char *path;
	const char *source; /* what runs.source records: path, or what it was converted from */
	long line;
	capsim_store *s;
	int64_t run;
	int64_t ranks; /* the machine line's, or 0 */
	capsim_import_stats *st;
	capsim_diags *d;
} importer;

/* a fault at the current line; returns -1 */
__attribute__((format(printf, 2, 3)))
static int bad(importer *im, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	capsim_diags_add(im->d, im->path, im->line, "%s", msg);
	return -1;
}

/* ---- text ------------------------------------------------------------------ */

/* A user's text as a message shows it: quoted, at most 40 bytes (cut at a
 * character boundary, "..." after), control characters and bytes that are
 * not UTF-8 as '?'. A value, so that show(s).s lasts the whole call. */
typedef struct shown {
	char s[64];
} shown;

/* the length of the UTF-8 character at s (1 to 4), or 0 when s does not
 * start a well-formed one (overlong, a surrogate, above U+10FFFF, cut);
 * *cp gets its code point */
static int utf8_char(const unsigned char *s, unsigned *cp)
{
	unsigned c = s[0];
	int n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 :
		(c & 0xF8) == 0xF0 ? 4 : 0;
	if (n == 0)
		return 0;
	unsigned v = n == 1 ? c : c & (0x7F >> n);
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3F);
	}
	static const unsigned least[] = { 0, 0, 0x80, 0x800, 0x10000 };
	if (v < least[n] || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
		return 0;
	*cp = v;
	return n;
}

/* C0 and C1 control characters and DEL */
static int is_control(unsigned cp)
{
	return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F);
}

static shown show(const char *text)
{
	shown out;
	size_t o = 0;
	const unsigned char *s = (const unsigned char *)text;
	out.s[o++] = '\'';
	while (*s) {
		unsigned cp = 0;
		int n = utf8_char(s, &cp);
		if (o + (n ? (size_t)n : 1) > 41) {
			memcpy(out.s + o, "...", 3);
			o += 3;
			break;
		}
		if (n == 0 || is_control(cp))
			out.s[o++] = '?';
		else
			memcpy(out.s + o, s, (size_t)n), o += (size_t)n;
		s += n ? n : 1;
	}
	out.s[o++] = '\'';
	out.s[o] = '\0';
	return out;
}

/* Why text is no field value of at most max bytes (printable UTF-8, not
 * empty): NULL when it is one, else what was found, in why. */
static const char *text_fault(const char *text, size_t max, char *why, size_t size)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t len = strlen(text);
	if (len == 0)
		return "empty text";
	if (len > max) {
		snprintf(why, size, "%zu bytes", len);
		return why;
	}
	for (size_t i = 0; i < len;) {
		unsigned cp = 0;
		int n = utf8_char(s + i, &cp);
		if (n == 0) {
			snprintf(why, size, "a byte that is not UTF-8 (0x%02x) at byte %zu", s[i], i + 1);
			return why;
		}
		if (is_control(cp)) {
			snprintf(why, size, "a control character (U+%04X) at byte %zu", cp, i + 1);
			return why;
		}
		i += (size_t)n;
	}
	return NULL;
}

/* text as the value of key: printable UTF-8 of 1 to max bytes */
static int check_text(importer *im, const char *key, const char *text, size_t max)
{
	char why[96];
	const char *fault = text_fault(text, max, why, sizeof why);
	if (fault)
		return bad(im, "field '%s': expected printable UTF-8 text of 1 to %zu bytes, found %s",
			   key, max, fault);
	return 0;
}

/* an environment variable's name: a letter or '_', then letters, digits
 * and '_', at most max bytes */
static int is_env_name(const char *s, size_t max)
{
	size_t len = strlen(s);
	if (len == 0 || len > max || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') ||
				       (s[0] >= 'a' && s[0] <= 'z')))
		return 0;
	return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == len;
}

/* ---- dates ----------------------------------------------------------------- */

int capsim_measure_is_day(const char *s)
{
	return strlen(s) == 10 && capsim_day_at(s);
}

/* "YYYY-MM-DDTHH:MM:SSZ", UTC, a real time (no leap second) */
static int is_utc_time(const char *s)
{
	if (strlen(s) != 20 || !capsim_day_at(s) || s[10] != 'T' || s[13] != ':' || s[16] != ':' ||
	    s[19] != 'Z')
		return 0;
	int h = capsim_digits(s + 11, 2), mi = capsim_digits(s + 14, 2), sec = capsim_digits(s + 17, 2);
	return h >= 0 && h <= 23 && mi >= 0 && mi <= 59 && sec >= 0 && sec <= 59;
}

/* ---- JSON values ------------------------------------------------------------ */

/* what a JSON value is, for messages */
static const char *type_name(const json_t *v)
{
	if (!v)
		return "nothing";
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a real number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* a string of printable UTF-8, 1 to max bytes; absent, "" when optional */
static int get_text_opt(importer *im, json_t *o, const char *key, size_t max, int required,
			const char **out)
{
	json_t *v = json_object_get(o, key);
	*out = "";
	if (!v && !required)
		return 0;
	if (!json_is_string(v))
		return bad(im, "field '%s': expected a string, found %s", key, type_name(v));
	*out = json_string_value(v);
	return check_text(im, key, *out, max);
}

static int get_text(importer *im, json_t *o, const char *key, size_t max, const char **out)
{
	return get_text_opt(im, o, key, max, 1, out);
}

/* a string, whatever it holds (compared with a list of names next) */
static int get_str_any(importer *im, json_t *o, const char *key, const char **out)
{
	json_t *v = json_object_get(o, key);
	*out = "";
	if (!json_is_string(v))
		return bad(im, "field '%s': expected a string, found %s", key, type_name(v));
	*out = json_string_value(v);
	return 0;
}

/* a string that is one of names (a NULL-terminated list) */
static int get_name(importer *im, json_t *o, const char *key, const char *const *names,
		    const char **out)
{
	if (get_str_any(im, o, key, out) < 0)
		return -1;
	char list[256] = "";
	for (size_t i = 0; names[i]; i++) {
		if (!strcmp(*out, names[i]))
			return 0;
		size_t len = strlen(list);
		snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
	}
	return bad(im, "field '%s': expected one of %s, found %s", key, list, show(*out).s);
}

/* an integer in [lo, hi]; absent, 0 when optional */
static int get_int_opt(importer *im, json_t *o, const char *key, int64_t lo, int64_t hi,
		       int required, int64_t *out)
{
	json_t *v = json_object_get(o, key);
	*out = 0;
	if (!v && !required)
		return 0;
	if (!json_is_integer(v))
		return bad(im, "field '%s': expected an integer, found %s", key, type_name(v));
	*out = (int64_t)json_integer_value(v);
	if (*out < lo || *out > hi) {
		int64_t found = *out;
		*out = 0;
		return bad(im, "field '%s': expected an integer from %lld to %lld, found %lld", key,
			   (long long)lo, (long long)hi, (long long)found);
	}
	return 0;
}

static int get_int(importer *im, json_t *o, const char *key, int64_t lo, int64_t hi,
		   int64_t *out)
{
	return get_int_opt(im, o, key, lo, hi, 1, out);
}

/* a value (integer or real) in [lo, hi], or in (lo, hi] with lo_open */
static int check_number(importer *im, const char *key, json_t *v, double lo, int lo_open,
			double hi, double *out)
{
	*out = 0;
	if (!json_is_number(v))
		return bad(im, "field '%s': expected a number, found %s", key, type_name(v));
	double x = json_number_value(v);
	if (!(lo_open ? x > lo : x >= lo) || !(x <= hi)) {
		if (lo_open)
			return bad(im, "field '%s': expected a number above %g and at most %g, "
				   "found %g", key, lo, hi, x);
		return bad(im, "field '%s': expected a number from %g to %g, found %g", key, lo, hi, x);
	}
	*out = x;
	return 0;
}

static int get_number(importer *im, json_t *o, const char *key, double lo, int lo_open,
		      double hi, double *out)
{
	return check_number(im, key, json_object_get(o, key), lo, lo_open, hi, out);
}

/* a measured time: SECONDS_MIN to SECONDS_MAX */
static int get_seconds(importer *im, json_t *o, const char *key, double *out)
{
	return get_number(im, o, key, SECONDS_MIN, 0, SECONDS_MAX, out);
}

/* a quantity above 0 and at most hi (a rate, watts, a frequency) */
static int get_positive(importer *im, json_t *o, const char *key, double hi, double *out)
{
	return get_number(im, o, key, 0, 1, hi, out);
}

/* GEMM dimensions m, n, k: integers from 1 to DIM_MAX */
static int get_mnk(importer *im, json_t *o, int64_t mnk[3])
{
	if (get_int(im, o, "m", 1, DIM_MAX, &mnk[0]) < 0 ||
	    get_int(im, o, "n", 1, DIM_MAX, &mnk[1]) < 0 ||
	    get_int(im, o, "k", 1, DIM_MAX, &mnk[2]) < 0)
		return -1;
	return 0;
}

/* a non-empty array of at most ARRAY_MAX values */
static int get_array(importer *im, json_t *o, const char *key, json_t **out)
{
	json_t *a = json_object_get(o, key);
	*out = a;
	if (!json_is_array(a) || json_array_size(a) == 0)
		return bad(im, "field '%s': expected a non-empty array, found %s", key,
			   json_is_array(a) ? "an empty one" : type_name(a));
	if (json_array_size(a) > ARRAY_MAX)
		return bad(im, "field '%s': expected at most %d values, found %zu", key, ARRAY_MAX,
			   json_array_size(a));
	return 0;
}

/* samples_s: seconds whose median is median_s; returns the array as JSON
 * text (caller frees) or NULL */
static char *samples_key(importer *im, json_t *o, const char *key, const char *median_key,
			 double median_s)
{
	json_t *a;
	if (get_array(im, o, key, &a) < 0)
		return NULL;
	size_t n = json_array_size(a);
	double *v = capsim_xcalloc(n, sizeof *v);
	for (size_t i = 0; i < n; i++) {
		char name[64];
		snprintf(name, sizeof name, "%s[%zu]", key, i);
		if (check_number(im, name, json_array_get(a, i), SECONDS_MIN, 0, SECONDS_MAX,
				 &v[i]) < 0) {
			free(v);
			return NULL;
		}
	}
	double med = gsl_stats_median(v, 1, n);
	free(v);
	if (fabs(med - median_s) > 1e-6 * median_s + 1e-12) {
		bad(im, "field '%s': expected the median of %s (%.9g), found %.9g", median_key, key,
		    med, median_s);
		return NULL;
	}
	return json_dumps(a, JSON_COMPACT);
}

static char *samples_text(importer *im, json_t *o, double median_s)
{
	return samples_key(im, o, "samples_s", "median_s", median_s);
}
/* prepare, bind by the format's letters (s text, NULL for a NULL pointer;
 * i integer; n integer, NULL when <= 0; d real; j a json_t * bound as its
 * integer, or NULL when it is not one), step */
static int insert(importer *im, const char *sql, const char *types, ...)
{
	sqlite3_stmt *st = capsim_store__prepare(im->s, sql, im->d);
	if (!st)
		return -1;
	va_list ap;
	va_start(ap, types);
	for (int i = 0; types[i]; i++) {
		if (types[i] == 's')
			sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
		else if (types[i] == 'i')
			sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
		else if (types[i] == 'n') {
			int64_t v = va_arg(ap, int64_t);
			if (v > 0)
				sqlite3_bind_int64(st, i + 1, v);
			else
				sqlite3_bind_null(st, i + 1);
		}
		else if (types[i] == 'r') {
			double v = va_arg(ap, double);
			if (v >= 0)
				sqlite3_bind_double(st, i + 1, v);
			else
				sqlite3_bind_null(st, i + 1);
		}
		else if (types[i] == 'j') {
			json_t *v = va_arg(ap, json_t *);
			if (json_is_integer(v))
				sqlite3_bind_int64(st, i + 1, (int64_t)json_integer_value(v));
			else
				sqlite3_bind_null(st, i + 1);
		}
		else
			sqlite3_bind_double(st, i + 1, va_arg(ap, double));
	}
	va_end(ap);
	int rc = capsim_store__step(im->s, st, im->d);
	sqlite3_finalize(st);
	return rc == 0 ? 0 : -1;
}

/* ---- the machine line -------------------------------------------------------- */

/* env: an object of at most ENV_MAX settings, each a well-formed variable
 * name (NCCL_ALGO) and printable text or nothing (NCCL_X=); *text gets it
 * as JSON (caller frees) */
static int machine_env(importer *im, json_t *env, char **text)
{
	const char *key;
	json_t *val;
	if (!json_is_object(env))
		return bad(im, "field 'env': expected an object of strings, found %s", type_name(env));
	if (json_object_size(env) > ENV_MAX)
		return bad(im, "field 'env': expected at most %d settings, found %zu", ENV_MAX,
			   json_object_size(env));
	json_object_foreach(env, key, val) {
		char name[96];
		if (!is_env_name(key, FIELD_MAX(capsim_store_env, name)))
			return bad(im, "field 'env': expected variable names (a letter or '_', then "
				   "letters, digits or '_', at most %zu bytes), found %s",
				   FIELD_MAX(capsim_store_env, name), show(key).s);
		snprintf(name, sizeof name, "env.%s", key);
		if (!json_is_string(val))
			return bad(im, "field '%s': expected a string, found %s", name, type_name(val));
		const char *setting = json_string_value(val);
		if (setting[0] && /* a variable may be set to nothing */
		    check_text(im, name, setting, FIELD_MAX(capsim_store_env, value)) < 0)
			return -1;
	}
	*text = json_dumps(env, JSON_COMPACT | JSON_SORT_KEYS);
	return 0;
}

/* The machine line's keys from capsim-calibrate-nccl (nccl, ranks, nodes,
 * launcher, env): checked where present, required from that program. Sets
 * *env_text to the env object as JSON text (caller frees), or NULL. */
static int machine_nccl(importer *im, json_t *o, const char *program, char **env_text)
{
	static const char *const launchers[] = { "single-process", "mpi", NULL };
	static const char *const keys[] = { "nccl", "ranks", "nodes", "launcher", "env" };
	*env_text = NULL;
	if (!strcmp(program, "capsim-calibrate-nccl"))
		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
			if (!json_object_get(o, keys[i]))
				return bad(im, "field '%s': expected in the machine line of %s, found "
					   "nothing", keys[i], program);
	int64_t v, ranks = 0, nodes = 0;
	const char *launcher;
	if (get_int_opt(im, o, "nccl", 1, VERSION_MAX, 0, &v) < 0 ||
	    get_int_opt(im, o, "ranks", 1, RANKS_MAX, 0, &ranks) < 0 ||
	    get_int_opt(im, o, "nodes", 1, RANKS_MAX, 0, &nodes) < 0 ||
	    (json_object_get(o, "launcher") && get_name(im, o, "launcher", launchers, &launcher) < 0))
		return -1;
	if (ranks > 0 && nodes > ranks)
		return bad(im, "field 'nodes': expected at most ranks (%lld), found %lld",
			   (long long)ranks, (long long)nodes);
	json_t *env = json_object_get(o, "env");
	if (env && machine_env(im, env, env_text) < 0)
		return -1;
	im->ranks = ranks;
	return 0;
}

/* what the machine line says of the GPU and its software, as runs keeps it */
typedef struct machine_line {
	const char *program, *date, *gpu, *cc;
	int64_t sms, memory_bytes, l2_bytes, cuda_driver, cuda_runtime, cublaslt;
} machine_line;

/* a compute capability: "9.0", "10.0" (one or two digits each side) */
static int is_cc(const char *s)
{
	size_t major = strspn(s, "0123456789");
	size_t minor = s[major] == '.' ? strspn(s + major + 1, "0123456789") : 0;
	return major >= 1 && major <= 2 && minor >= 1 && minor <= 2 && s[major + 1 + minor] == '\0';
}

static int machine_fields(importer *im, json_t *o, machine_line *m)
{
	memset(m, 0, sizeof *m);
	if (get_text(im, o, "program", FIELD_MAX(capsim_store_run, program), &m->program) < 0 ||
	    get_text(im, o, "date", FIELD_MAX(capsim_store_run, date), &m->date) < 0)
		return -1;
	if (!is_utc_time(m->date))
		return bad(im, "field 'date': expected a UTC time YYYY-MM-DDTHH:MM:SSZ from %d to %d, "
			   "found %s", CAPSIM_YEAR_MIN, CAPSIM_YEAR_MAX, show(m->date).s);
	if (get_text(im, o, "gpu", FIELD_MAX(capsim_store_run, gpu), &m->gpu) < 0 ||
	    get_text_opt(im, o, "cc", FIELD_MAX(capsim_store_run, cc), 0, &m->cc) < 0)
		return -1;
	if (m->cc[0] && !is_cc(m->cc))
		return bad(im, "field 'cc': expected a compute capability MAJOR.MINOR (9.0), found %s",
			   show(m->cc).s);
	if (get_int_opt(im, o, "sms", 1, SMS_MAX, 0, &m->sms) < 0 ||
	    get_int_opt(im, o, "memory_bytes", 1, BYTES_MAX, 0, &m->memory_bytes) < 0 ||
	    get_int_opt(im, o, "l2_bytes", 1, L2_BYTES_MAX, 0, &m->l2_bytes) < 0 ||
	    get_int_opt(im, o, "cuda_driver", 1, VERSION_MAX, 0, &m->cuda_driver) < 0 ||
	    get_int_opt(im, o, "cuda_runtime", 1, VERSION_MAX, 0, &m->cuda_runtime) < 0 ||
	    get_int_opt(im, o, "cublaslt", 1, VERSION_MAX, 0, &m->cublaslt) < 0)
		return -1;
	return 0;
}

/* now, as runs.imported_at keeps it */
static void utc_now(char now[32])
{
	time_t t = time(NULL);
	struct tm tm;
	strftime(now, 32, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
}

static int machine(importer *im, json_t *o, const char *sha)
{
	machine_line m;
	char *env = NULL;
	if (machine_fields(im, o, &m) < 0 || machine_nccl(im, o, m.program, &env) < 0)
		return -1;
	json_t *launcher = json_object_get(o, "launcher");
	char now[32];
	utc_now(now);
	int rc = insert(im,
			"INSERT INTO runs(sha256, source, program, date, gpu, cc, sms, memory_bytes,"
			" l2_bytes, cuda_driver, cuda_runtime, cublaslt, imported_at, nccl, ranks,"
			" nodes, launcher, env) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			"ssssssiiiiiisjjjss", sha, im->source, m.program, m.date, m.gpu, m.cc, m.sms,
			m.memory_bytes, m.l2_bytes, m.cuda_driver, m.cuda_runtime, m.cublaslt, now,
			json_object_get(o, "nccl"), json_object_get(o, "ranks"),
			json_object_get(o, "nodes"),
			json_is_string(launcher) ? json_string_value(launcher) : NULL, env);
	free(env);
	if (rc < 0)
		return -1;
	im->run = sqlite3_last_insert_rowid(im->s->db);
	im->st->run_id = im->run;
	return 0;
}

/* ---- GEMMs, copies, checks and power ------------------------------------------- */

#define DTYPE_MAX FIELD_MAX(capsim_store_gemm, dtype)

static int gemm(importer *im, json_t *o)
{
	const char *dtype = NULL;
	int64_t mnk[3];
	if (get_text(im, o, "dtype", DTYPE_MAX, &dtype) < 0 || get_mnk(im, o, mnk) < 0)
		return -1;
	json_t *err = json_object_get(o, "error");
	if (err) {
		const char *why;
		if (get_text(im, o, "error", FIELD_MAX(capsim_store_torch_step, error), &why) < 0)
			return -1;
		im->st->gemm_failed++;
		return insert(im, "INSERT INTO gemm_failed VALUES(?,?,?,?,?,?)", "isiiis", im->run,
			      dtype, mnk[0], mnk[1], mnk[2], why);
	}
	double flop, med, rate;
	const char *shape, *layout;
	int64_t batch;
	if (get_positive(im, o, "flop", FLOP_MAX, &flop) < 0 ||
	    get_seconds(im, o, "median_s", &med) < 0 ||
	    get_positive(im, o, "flop_per_s", FLOP_PER_S_MAX, &rate) < 0 ||
	    get_text_opt(im, o, "shape", SHAPE_MAX, 0, &shape) < 0 ||
	    get_text_opt(im, o, "layout", LAYOUT_MAX, 0, &layout) < 0 ||
	    get_int_opt(im, o, "batch", 1, DIM_MAX, 0, &batch) < 0)
		return -1;
	double want = 2.0 * (double)mnk[0] * (double)mnk[1] * (double)mnk[2];
	if (fabs(flop - want) > 1e-5 * flop)
		return bad(im, "field 'flop': expected 2 m n k = %.6g, found %.6g", want, flop);
	if (fabs(rate * med - flop) > 1e-4 * flop)
		return bad(im, "field 'flop_per_s': expected flop / median_s = %.6g, found %.6g",
			   flop / med, rate);
	char *samples = samples_text(im, o, med);
	if (!samples)
		return -1;
	int rc = insert(im, "INSERT INTO gemm VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", "isiiissiddds",
			im->run, dtype, mnk[0], mnk[1], mnk[2], shape, layout, batch, flop, med, rate,
			samples);
	free(samples);
	im->st->gemm++;
	return rc;
}

static int copy_bw(importer *im, json_t *o)
{
	int64_t bytes, moved;
	double med, bw;
	if (get_int(im, o, "bytes", 1, BYTES_MAX, &bytes) < 0 ||
	    get_int(im, o, "moved_bytes", 1, BYTES_MAX, &moved) < 0 ||
	    get_seconds(im, o, "median_s", &med) < 0 ||
	    get_positive(im, o, "bytes_per_s", BYTES_PER_S_MAX, &bw) < 0)
		return -1;
	if (fabs(bw * med - (double)moved) > 1e-4 * (double)moved)
		return bad(im, "field 'bytes_per_s': expected moved_bytes / median_s = %.6g, found %.6g",
			   (double)moved / med, bw);
	char *samples = samples_text(im, o, med);
	if (!samples)
		return -1;
	int rc = insert(im, "INSERT INTO copy_bandwidth VALUES(?,?,?,?,?,?)", "iiidds", im->run,
			bytes, moved, med, bw, samples);
	free(samples);
	im->st->copy++;
	return rc;
}

static int check(importer *im, json_t *o)
{
	const char *dtype = NULL;
	double err;
	if (get_text(im, o, "dtype", DTYPE_MAX, &dtype) < 0 ||
	    get_number(im, o, "rel_err", 0, 0, REL_ERR_MAX, &err) < 0)
		return -1;
	im->st->checks++;
	return insert(im, "INSERT INTO gemm_check VALUES(?,?,?)", "isd", im->run, dtype, err);
}

/* one NVML reading: power_w and sm_mhz above 0; t_s, temp_c and
 * throttle_reasons checked where present */
typedef struct nvml_reading {
	double power_w, sm_mhz;
	int64_t temp_c, throttle_reasons;
} nvml_reading;

static int reading(importer *im, json_t *r, const char *key, nvml_reading *out)
{
	double t;
	memset(out, 0, sizeof *out);
	if (!json_is_object(r))
		return bad(im, "field '%s': expected an object of power_w, sm_mhz, temp_c, found %s",
			   key, type_name(r));
	if (get_positive(im, r, "power_w", POWER_W_MAX, &out->power_w) < 0 ||
	    get_positive(im, r, "sm_mhz", SM_MHZ_MAX, &out->sm_mhz) < 0 ||
	    (json_object_get(r, "t_s") && get_number(im, r, "t_s", 0, 0, READING_T_MAX, &t) < 0) ||
	    get_int_opt(im, r, "temp_c", -100, 200, 0, &out->temp_c) < 0 ||
	    get_int_opt(im, r, "throttle_reasons", 0, INT64_MAX, 0, &out->throttle_reasons) < 0)
		return -1;
	return 0;
}

/* the readings array of o: its power and clock values (caller frees) */
static int readings(importer *im, json_t *o, json_t **rs, double **pw, double **mhz)
{
	*pw = *mhz = NULL;
	if (get_array(im, o, "readings", rs) < 0)
		return -1;
	size_t n = json_array_size(*rs);
	*pw = capsim_xcalloc(n, sizeof **pw);
	*mhz = capsim_xcalloc(n, sizeof **mhz);
	for (size_t i = 0; i < n; i++) {
		nvml_reading r;
		char key[48];
		snprintf(key, sizeof key, "readings[%zu]", i);
		if (reading(im, json_array_get(*rs, i), key, &r) < 0)
			return -1;
		(*pw)[i] = r.power_w;
		(*mhz)[i] = r.sm_mhz;
	}
	return 0;
}

static int power_idle(importer *im, json_t *o)
{
	double limit;
	nvml_reading r;
	if (get_positive(im, o, "power_limit_w", POWER_W_MAX, &limit) < 0 ||
	    reading(im, json_object_get(o, "reading"), "reading", &r) < 0)
		return -1;
	im->st->power++;
	return insert(im, "INSERT INTO power_idle VALUES(?,?,?,?,?,?)", "idddii", im->run, limit,
		      r.power_w, r.sm_mhz, r.temp_c, r.throttle_reasons);
}

/* readings under load and each batch's rate; their medians are stored
 * beside the arrays */
static int power_sustained(importer *im, json_t *o)
{
	const char *dtype = NULL;
	int64_t mnk[3];
	json_t *rs, *bs;
	double *pw = NULL, *mhz = NULL, *rate = NULL;
	int rc = 0;
	if (get_text(im, o, "dtype", DTYPE_MAX, &dtype) < 0 || get_mnk(im, o, mnk) < 0 ||
	    readings(im, o, &rs, &pw, &mhz) < 0 || get_array(im, o, "batch_flop_per_s", &bs) < 0)
		rc = -1;
	size_t nr = rc == 0 ? json_array_size(rs) : 0, nb = rc == 0 ? json_array_size(bs) : 0;
	if (rc == 0)
		rate = capsim_xcalloc(nb, sizeof *rate);
	for (size_t i = 0; rc == 0 && i < nb; i++) {
		char key[48];
		snprintf(key, sizeof key, "batch_flop_per_s[%zu]", i);
		rc = check_number(im, key, json_array_get(bs, i), 0, 1, FLOP_PER_S_MAX, &rate[i]);
	}
	if (rc == 0) {
		char *rtext = json_dumps(rs, JSON_COMPACT), *btext = json_dumps(bs, JSON_COMPACT);
		rc = insert(im, "INSERT INTO power_sustained VALUES(?,?,?,?,?,?,?,?,?,?)",
			    "isiiidddss", im->run, dtype, mnk[0], mnk[1], mnk[2],
			    gsl_stats_median(pw, 1, nr), gsl_stats_median(mhz, 1, nr),
			    gsl_stats_median(rate, 1, nb), rtext, btext);
		free(rtext);
		free(btext);
		im->st->power++;
	}
	free(pw);
	free(mhz);
	free(rate);
	return rc;
}

/* NCCL's data types by nccl-tests' names, with their sizes in bytes */
static const struct {
	const char *name;
	int size;
} nccl_types[] = {
	{ "int8", 1 },	 { "uint8", 1 }, { "int32", 4 },   { "uint32", 4 },
	{ "int64", 8 },	 { "uint64", 8 }, { "half", 2 },   { "float", 4 },
	{ "double", 8 }, { "bfloat16", 2 }, { "f8e4m3", 1 }, { "f8e5m2", 1 },
};

/* NCCL's reductions by nccl-tests' names; none for the ops without one */
static const char *const redops[] = { "sum", "prod", "max", "min", "avg", "none", NULL };

/* The collective of a store name (nccl-tests' names, nccl.h's
 * capsim_coll_perf_names) the store holds: every one but reduce, which
 * capsim-calibrate-nccl does not run; -1 for another. */
static int store_coll(const char *name)
{
	for (int c = 0; c < CAPSIM_COLL__COUNT; c++)
		if (c != CAPSIM_COLL_REDUCE && !strcmp(name, capsim_coll_perf_names[c]))
			return c;
	return -1;
}

/* bytes is count x ranks x the type's size for the collectives whose count
 * is what each rank sends to, or receives from, one peer; else count x size */
static int per_rank_count(int coll)
{
	return coll == CAPSIM_COLL_ALLGATHER || coll == CAPSIM_COLL_REDUCESCATTER ||
	       coll == CAPSIM_COLL_ALLTOALL;
}

/* the size of a named NCCL type, or 0 after a fault */
static int nccl_type_size(importer *im, const char *dtype)
{
	char list[256] = "";
	for (size_t i = 0; i < sizeof nccl_types / sizeof nccl_types[0]; i++) {
		if (!strcmp(dtype, nccl_types[i].name))
			return nccl_types[i].size;
		size_t len = strlen(list);
		snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", nccl_types[i].name);
	}
	bad(im, "field 'dtype': expected one of %s, found %s", list, show(dtype).s);
	return 0;
}

#define COLL_NAMES "all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv"

/* One nccl row, checked whichever way it came (a JSON line or a record):
 * a collective the store holds, a known type and reduction, algo and proto
 * short printable names, ranks within the run's, count and bytes that agree
 * with the operation and type and are at most BYTES_MAX, a #wrong of 0 to
 * the count, and seconds from SECONDS_MIN to SECONDS_MAX. algbw = bytes / median_s / 1e9 and busbw = algbw x
 * nccl-tests' factor (collective.h) are computed here. */
static int nccl_row(importer *im, const capsim_measure_nccl *r, const char *samples_json)
{
	int coll = store_coll(r->op);
	if (coll < 0)
		return bad(im, "field 'op': expected one of " COLL_NAMES ", found %s", show(r->op).s);
	int size = nccl_type_size(im, r->dtype);
	if (size == 0)
		return -1;
	size_t i = 0;
	while (redops[i] && strcmp(redops[i], r->redop))
		i++;
	if (!redops[i])
		return bad(im, "field 'redop': expected one of sum, prod, max, min, avg, none, found %s",
			   show(r->redop).s);
	if (check_text(im, "algo", r->algo, FIELD_MAX(capsim_store_nccl, algo)) < 0 ||
	    check_text(im, "proto", r->proto, FIELD_MAX(capsim_store_nccl, proto)) < 0)
		return -1;
	if (r->ranks < 1 || r->ranks > RANKS_MAX)
		return bad(im, "field 'ranks': expected an integer from 1 to %lld, found %lld",
			   (long long)RANKS_MAX, (long long)r->ranks);
	if (r->nodes < 1 || r->nodes > r->ranks)
		return bad(im, "field 'nodes': expected an integer from 1 to %lld, found %lld",
			   (long long)r->ranks, (long long)r->nodes);
	if (r->bytes < 1 || r->bytes > BYTES_MAX || r->count < 1 || r->count > BYTES_MAX)
		return bad(im, "field '%s': expected an integer from 1 to %lld, found %lld",
			   r->bytes < 1 || r->bytes > BYTES_MAX ? "bytes" : "count",
			   (long long)BYTES_MAX,
			   (long long)(r->bytes < 1 || r->bytes > BYTES_MAX ? r->bytes : r->count));
	if (im->ranks > 0 && r->ranks != im->ranks)
		return bad(im, "field 'ranks': expected the machine line's %lld, found %lld",
			   (long long)im->ranks, (long long)r->ranks);
	int64_t per = per_rank_count(coll) ? r->ranks : 1;
	if (r->count > INT64_MAX / per / size || r->count * per * size != r->bytes)
		return bad(im, "field 'count': expected bytes / (%lld x %d) for %s %s = %lld, "
			   "found %lld", (long long)per, size, r->op, r->dtype,
			   (long long)(r->bytes / (per * size)), (long long)r->count);
	if (r->wrong < 0 || r->wrong > BYTES_MAX)
		return bad(im, "field 'wrong': expected an integer from 0 to %lld, found %lld",
			   (long long)BYTES_MAX, (long long)r->wrong);
	if (!(r->median_s >= SECONDS_MIN && r->median_s <= SECONDS_MAX))
		return bad(im, "field 'median_s': expected a number from %g to %g, found %g",
			   SECONDS_MIN, SECONDS_MAX, r->median_s);
	double algbw = (double)r->bytes / r->median_s / 1e9;
	double busbw = algbw * capsim_busbw_factor((capsim_coll)coll, (int)r->ranks);
	int rc = insert(im, "INSERT INTO nccl VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			"isssiiiissidddis", im->run, r->op, r->dtype, r->redop, r->ranks, r->nodes,
			r->bytes, r->count, r->algo, r->proto, (int64_t)(r->in_place != 0),
			r->median_s, algbw, busbw, r->wrong, samples_json);
	im->st->nccl++;
	return rc;
}

/* one collective's JSON line: its stated algbw and busbw must be what
 * nccl_row computes from size and time (busbw within 1 %) */
static int nccl(importer *im, json_t *o)
{
	capsim_measure_nccl r = { .line = im->line };
	int64_t in_place;
	double algbw, busbw;
	/* in the order a reader checks a line: what it is, then its sizes */
	if (get_str_any(im, o, "op", &r.op) < 0)
		return -1;
	if (store_coll(r.op) < 0)
		return bad(im, "field 'op': expected one of " COLL_NAMES ", found %s", show(r.op).s);
	if (get_str_any(im, o, "dtype", &r.dtype) < 0 || nccl_type_size(im, r.dtype) == 0 ||
	    get_name(im, o, "redop", redops, &r.redop) < 0 ||
	    get_int(im, o, "ranks", 1, RANKS_MAX, &r.ranks) < 0 ||
	    get_int(im, o, "nodes", 1, r.ranks, &r.nodes) < 0 ||
	    get_int(im, o, "bytes", 1, BYTES_MAX, &r.bytes) < 0 ||
	    get_int(im, o, "count", 1, BYTES_MAX, &r.count) < 0 ||
	    get_text(im, o, "algo", FIELD_MAX(capsim_store_nccl, algo), &r.algo) < 0 ||
	    get_text(im, o, "proto", FIELD_MAX(capsim_store_nccl, proto), &r.proto) < 0 ||
	    get_int(im, o, "in_place", 0, 1, &in_place) < 0 ||
	    get_int(im, o, "wrong", 0, BYTES_MAX, &r.wrong) < 0 ||
	    get_seconds(im, o, "median_s", &r.median_s) < 0 ||
	    get_positive(im, o, "algbw_gb_per_s", GB_PER_S_MAX, &algbw) < 0 ||
	    get_number(im, o, "busbw_gb_per_s", 0, 0, GB_PER_S_MAX, &busbw) < 0)
		return -1;
	r.in_place = (int)in_place;
	int coll = store_coll(r.op);
	double med = r.median_s, bytes = (double)r.bytes;
	double factor = capsim_busbw_factor((capsim_coll)coll, (int)r.ranks);
	if (fabs(algbw * 1e9 * med - bytes) > 1e-4 * bytes)
		return bad(im, "field 'algbw_gb_per_s': expected bytes / median_s / 1e9 = %.6g, "
			   "found %.6g", bytes / med / 1e9, algbw);
	double want = algbw * factor;
	if (fabs(busbw - want) > 0.01 * want + 1e-9)
		return bad(im, "field 'busbw_gb_per_s': expected algbw x %.4g (%s at %lld ranks) = "
			   "%.6g, found %.6g", factor, r.op, (long long)r.ranks, want, busbw);
	char *samples = samples_text(im, o, r.median_s);
	if (!samples)
		return -1;
	int rc = nccl_row(im, &r, samples);
	free(samples);
	return rc;
}

/* one host-device copy size: bytes_per_s = bytes / median_s */
static int pcie(importer *im, json_t *o)
{
	static const char *const directions[] = { "h2d", "d2h", NULL };
	const char *dir;
	int64_t pinned, bytes;
	double med, bw;
	if (get_name(im, o, "direction", directions, &dir) < 0 ||
	    get_int(im, o, "pinned", 0, 1, &pinned) < 0 ||
	    get_int(im, o, "bytes", 1, BYTES_MAX, &bytes) < 0 ||
	    get_seconds(im, o, "median_s", &med) < 0 ||
	    get_positive(im, o, "bytes_per_s", BYTES_PER_S_MAX, &bw) < 0)
		return -1;
	if (fabs(bw * med - (double)bytes) > 1e-4 * (double)bytes)
		return bad(im, "field 'bytes_per_s': expected bytes / median_s = %.6g, found %.6g",
			   (double)bytes / med, bw);
	char *samples = samples_text(im, o, med);
	if (!samples)
		return -1;
	int rc = insert(im, "INSERT INTO pcie VALUES(?,?,?,?,?,?,?)", "isiidds", im->run, dir,
			pinned, bytes, med, bw, samples);
	free(samples);
	im->st->pcie++;
	return rc;
}

/* a stated median that must be the median of the readings' values */
static int median_matches(importer *im, const char *key, double stated, double *v, size_t n)
{
	double med = gsl_stats_median(v, 1, n);
	if (fabs(stated - med) > 1e-6 * fabs(med) + 1e-9)
		return bad(im, "field '%s': expected the median of the readings (%.9g), found %.9g",
			   key, med, stated);
	return 0;
}

/* GEMMs for a fraction (duty) of each 100 ms window: the NVML readings and
 * their medians, and the rate achieved over the whole phase */
static int power_duty(importer *im, json_t *o)
{
	const char *dtype;
	int64_t mnk[3];
	double duty, pw_med, mhz_med, rate;
	if (get_number(im, o, "duty", 0, 1, 1, &duty) < 0 ||
	    get_text(im, o, "dtype", DTYPE_MAX, &dtype) < 0 || get_mnk(im, o, mnk) < 0 ||
	    get_positive(im, o, "median_power_w", POWER_W_MAX, &pw_med) < 0 ||
	    get_positive(im, o, "median_sm_mhz", SM_MHZ_MAX, &mhz_med) < 0 ||
	    get_positive(im, o, "achieved_flop_per_s", FLOP_PER_S_MAX, &rate) < 0)
		return -1;
	json_t *rs;
	double *pw, *mhz;
	int rc = readings(im, o, &rs, &pw, &mhz);
	size_t nr = json_array_size(rs);
	if (rc == 0)
		rc = median_matches(im, "median_power_w", pw_med, pw, nr);
	if (rc == 0)
		rc = median_matches(im, "median_sm_mhz", mhz_med, mhz, nr);
	if (rc == 0) {
		char *text = json_dumps(rs, JSON_COMPACT);
		rc = insert(im, "INSERT INTO power_duty VALUES(?,?,?,?,?,?,?,?,?,?)", "idsiiiddds",
			    im->run, duty, dtype, mnk[0], mnk[1], mnk[2], pw_med, mhz_med, rate, text);
		free(text);
		im->st->power_duty++;
	}
	free(pw);
	free(mhz);
	return rc;
}

/* ---- PyTorch (calibrate/torch/gpt2_step.py) ------------------------------------ */

/* PyTorch eager's host cost per kernel: `kernels` tiny kernels issued back
 * to back, the median per kernel of the host's issue time and of the time
 * until they ran */
static int torch_launch(importer *im, json_t *o)
{
	const char *op;
	int64_t elements, kernels;
	double host, total;
	if (get_text(im, o, "op", FIELD_MAX(capsim_store_torch_launch, op), &op) < 0 ||
	    get_int(im, o, "elements", 1, BYTES_MAX, &elements) < 0 ||
	    get_int(im, o, "kernels", 1, DIM_MAX, &kernels) < 0 ||
	    get_seconds(im, o, "host_median_s", &host) < 0 ||
	    get_seconds(im, o, "total_median_s", &total) < 0)
		return -1;
	if (total < host * (1 - 1e-9))
		return bad(im, "field 'total_median_s': expected at least host_median_s %.6g (the "
			   "kernels cannot finish before they are issued), found %.6g", host, total);
	char *samples = samples_key(im, o, "host_samples_s", "host_median_s", host);
	if (!samples)
		return -1;
	int rc = insert(im, "INSERT INTO torch_launch VALUES(?,?,?,?,?,?,?)", "isiidds", im->run,
			op, elements, kernels, host, total, samples);
	free(samples);
	im->st->torch_launch++;
	return rc;
}

/* what names a torch-step point: its model, dtype, mode and sizes */
typedef struct torch_point {
	const char *model, *dtype, *mode;
	int64_t micro_batch, seq, vocab;
} torch_point;

static int torch_point_fields(importer *im, json_t *o, torch_point *p)
{
	if (get_text(im, o, "model", FIELD_MAX(capsim_store_torch_step, model), &p->model) < 0 ||
	    get_text(im, o, "dtype", FIELD_MAX(capsim_store_torch_step, dtype), &p->dtype) < 0 ||
	    get_text(im, o, "mode", FIELD_MAX(capsim_store_torch_step, mode), &p->mode) < 0 ||
	    get_int(im, o, "micro_batch", 1, DIM_MAX, &p->micro_batch) < 0 ||
	    get_int(im, o, "seq", 1, DIM_MAX, &p->seq) < 0 ||
	    get_int_opt(im, o, "vocab", 1, DIM_MAX, 0, &p->vocab) < 0)
		return -1;
	return 0;
}

/* The host's view of a step, where the record has it (docs/model.md, "The
 * host stream"): issue_median_s, the host's time to issue the step, and one
 * profiled step's kernels and their summed durations, at the top level
 * (host_probe.py) or under "profile" (gpt2_step.py). Absent: -1, 0, -1. */
static int torch_step_host(importer *im, json_t *o, double *issue, int64_t *kernels,
			   double *kernel_s)
{
	if (json_object_get(o, "issue_median_s") &&
	    get_seconds(im, o, "issue_median_s", issue) < 0)
		return -1;
	json_t *prof = json_object_get(o, "profile");
	json_t *from = json_object_get(o, "kernels") ? o :
		       json_is_object(prof) && !json_object_get(prof, "error") ? prof : NULL;
	if (!from || !json_object_get(from, "kernels"))
		return 0;
	if (get_int(im, from, "kernels", 1, DIM_MAX, kernels) < 0 ||
	    get_seconds(im, from, "kernel_s", kernel_s) < 0)
		return -1;
	return 0;
}

/* One training-step point of a plain PyTorch loop: its median step and
 * tokens/s (micro_batch x seq / median_s) and peak memory, or the error
 * (out of memory) that stopped it */
static int torch_step(importer *im, json_t *o)
{
	torch_point p;
	if (torch_point_fields(im, o, &p) < 0)
		return -1;
	json_t *vocab = json_object_get(o, "vocab");
	if (json_object_get(o, "error")) {
		const char *err;
		if (get_text(im, o, "error", FIELD_MAX(capsim_store_torch_step, error), &err) < 0)
			return -1;
		im->st->torch_step++;
		return insert(im, "INSERT INTO torch_step(run_id, model, micro_batch, seq, dtype,"
				  " mode, vocab, error) VALUES(?,?,?,?,?,?,?,?)", "isiissjs", im->run,
			      p.model, p.micro_batch, p.seq, p.dtype, p.mode, vocab, err);
	}
	double med, tps = 0.0;
	int64_t alloc, reserved = -1;
	if (get_seconds(im, o, "median_s", &med) < 0 ||
	    get_int(im, o, "peak_allocated_bytes", 0, BYTES_MAX, &alloc) < 0)
		return -1;
	double want = (double)p.micro_batch * (double)p.seq / med;
	/* tokens_per_s and peak_reserved_bytes: gpt2_step.py writes them,
	 * host_probe.py did not at first; where present they must agree */
	if (json_object_get(o, "tokens_per_s")) {
		if (get_positive(im, o, "tokens_per_s", TOKENS_PER_S_MAX, &tps) < 0)
			return -1;
		if (fabs(tps - want) > 1e-3 * want)
			return bad(im, "field 'tokens_per_s': expected micro_batch x seq / median_s = "
				   "%.6g, found %.6g", want, tps);
	}
	tps = want;
	if (json_object_get(o, "peak_reserved_bytes")) {
		if (get_int(im, o, "peak_reserved_bytes", 0, BYTES_MAX, &reserved) < 0)
			return -1;
		if (reserved < alloc)
			return bad(im, "field 'peak_reserved_bytes': expected at least "
				   "peak_allocated_bytes %lld, found %lld", (long long)alloc,
				   (long long)reserved);
	}
	double issue = -1.0, kernel_s = -1.0;
	int64_t kernels = 0;
	if (torch_step_host(im, o, &issue, &kernels, &kernel_s) < 0)
		return -1;
	char *samples = samples_text(im, o, med);
	if (!samples)
		return -1;
	int rc = insert(im, "INSERT INTO torch_step(run_id, model, micro_batch, seq, dtype, mode,"
			    " vocab, median_s, tokens_per_s, peak_allocated_bytes, peak_reserved_bytes,"
			    " samples_s, issue_median_s, kernels, kernel_s)"
			    " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			"isiissjddinsrnr", im->run, p.model, p.micro_batch, p.seq, p.dtype, p.mode,
			vocab, med, tps, alloc, reserved, samples,
			issue, kernels, kernel_s);
	free(samples);
	im->st->torch_step++;
	return rc;
}

/* One block count of calibrate/torch/host_probe.py: a decoder of `layers`
 * blocks at a tiny size, the kernels that its forward, backward and
 * optimizer step launch and the host's time to issue each (eager,
 * compile); or, replayed from a CUDA graph, the graph's kernels, their
 * summed durations and the replay's host and GPU time */
static int torch_host(importer *im, json_t *o)
{
	const char *arch, *mode;
	int64_t layers, seq, mb;
	if (get_text(im, o, "arch", 16, &arch) < 0 || get_text(im, o, "mode", 32, &mode) < 0 ||
	    get_int(im, o, "layers", 1, DIM_MAX, &layers) < 0)
		return -1;
	if (json_object_get(o, "error")) {
		const char *err;
		if (get_text(im, o, "error", FIELD_MAX(capsim_store_torch_step, error), &err) < 0)
			return -1;
		im->st->torch_host++;
		return insert(im, "INSERT INTO torch_host(run_id, arch, mode, layers, error)"
				  " VALUES(?,?,?,?,?)", "issis", im->run, arch, mode, layers, err);
	}
	if (get_int(im, o, "seq", 1, DIM_MAX, &seq) < 0 ||
	    get_int(im, o, "micro_batch", 1, DIM_MAX, &mb) < 0)
		return -1;
	int rc;
	if (!strcmp(mode, "graphs")) {
		int64_t kernels;
		double ks, host, gpu;
		if (get_int(im, o, "kernels", 1, DIM_MAX, &kernels) < 0 ||
		    get_seconds(im, o, "kernel_s", &ks) < 0 ||
		    get_seconds(im, o, "replay_host_s", &host) < 0 ||
		    get_seconds(im, o, "replay_gpu_s", &gpu) < 0)
			return -1;
		rc = insert(im, "INSERT INTO torch_host(run_id, arch, mode, layers, seq, micro_batch,"
				" kernels, kernel_s, replay_host_s, replay_gpu_s)"
				" VALUES(?,?,?,?,?,?,?,?,?,?)", "issiiiiddd", im->run, arch, mode,
			    layers, seq, mb, kernels, ks, host, gpu);
	} else {
		int64_t kf, kb, ko;
		double hf, hb, ho;
		if (get_int(im, o, "kernels_fwd", 1, DIM_MAX, &kf) < 0 ||
		    get_int(im, o, "kernels_bwd", 1, DIM_MAX, &kb) < 0 ||
		    get_int(im, o, "kernels_opt", 0, DIM_MAX, &ko) < 0 ||
		    get_seconds(im, o, "host_fwd_s", &hf) < 0 ||
		    get_seconds(im, o, "host_bwd_s", &hb) < 0 ||
		    get_seconds(im, o, "host_opt_s", &ho) < 0)
			return -1;
		rc = insert(im, "INSERT INTO torch_host(run_id, arch, mode, layers, seq, micro_batch,"
				" kernels_fwd, kernels_bwd, kernels_opt, host_fwd_s, host_bwd_s,"
				" host_opt_s) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", "issiiiiiiddd",
			    im->run, arch, mode, layers, seq, mb, kf, kb, ko, hf, hb, ho);
	}
	im->st->torch_host++;
	return rc;
}

/* ---- fused attention (calibrate/torch/attn_probe.py) ----------------------------- */

/* PyTorch SDPA's backends, as attn_probe.py names them */
static const char *const attn_backends[] = { "flash", "cudnn", "efficient", "default", NULL };

/* a JSON boolean, as 0 or 1 */
static int get_bool(importer *im, json_t *o, const char *key, int *out)
{
	json_t *v = json_object_get(o, key);
	*out = 0;
	if (!json_is_boolean(v))
		return bad(im, "field '%s': expected true or false, found %s", key, type_name(v));
	*out = json_is_true(v);
	return 0;
}

/* what names an attention point: backend, shape and mask */
typedef struct attn_shape {
	const char *backend, *dtype;
	int64_t batch, seq, heads, kv_heads, head_dim;
	int causal;
} attn_shape;

/* kernels: the names of the GPU kernels one call ran, as JSON text (caller
 * frees); absent: NULL */
static int attn_kernels(importer *im, json_t *o, char **text)
{
	*text = NULL;
	json_t *a = json_object_get(o, "kernels");
	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > 64)
		return bad(im, "field 'kernels': expected an array of at most 64 names, found %s",
			   json_is_array(a) ? "more" : type_name(a));
	for (size_t i = 0; i < json_array_size(a); i++) {
		char key[32];
		snprintf(key, sizeof key, "kernels[%zu]", i);
		json_t *v = json_array_get(a, i);
		if (!json_is_string(v))
			return bad(im, "field '%s': expected a string, found %s", key, type_name(v));
		if (check_text(im, key, json_string_value(v), 255) < 0)
			return -1;
	}
	*text = json_dumps(a, JSON_COMPACT);
	return 0;
}

/* one pass's time and rate: rate = flop / median_s (1e-4), and the median
 * of its samples where the record has them */
static int attn_pass(importer *im, json_t *o, const char *pass, double flop, double *med,
		     double *rate)
{
	char k_med[32], k_rate[32], k_samples[32];
	snprintf(k_med, sizeof k_med, "%s_median_s", pass);
	snprintf(k_rate, sizeof k_rate, "%s_flop_per_s", pass);
	snprintf(k_samples, sizeof k_samples, "%s_samples_s", pass);
	if (get_seconds(im, o, k_med, med) < 0 ||
	    get_positive(im, o, k_rate, FLOP_PER_S_MAX, rate) < 0)
		return -1;
	if (fabs(*rate * *med - flop) > 1e-4 * flop)
		return bad(im, "field '%s': expected flop_%s / %s = %.6g, found %.6g", k_rate, pass,
			   k_med, flop / *med, *rate);
	if (!json_object_get(o, k_samples))
		return 0;
	char *samples = samples_key(im, o, k_samples, k_med, *med);
	int ok = samples != NULL;
	free(samples);
	return ok ? 0 : -1;
}

/* flop_fwd = 4 b s^2 heads d, halved when causal; flop_bwd = 2.5 x that */
static int attn_flops(importer *im, json_t *o, const attn_shape *a, double *fwd, double *bwd)
{
	if (get_positive(im, o, "flop_fwd", FLOP_MAX, fwd) < 0 ||
	    get_positive(im, o, "flop_bwd", FLOP_MAX, bwd) < 0)
		return -1;
	double want = 4.0 * (double)a->batch * (double)a->seq * (double)a->seq *
		      (double)a->heads * (double)a->head_dim * (a->causal ? 0.5 : 1.0);
	if (fabs(*fwd - want) > 1e-6 * want)
		return bad(im, "field 'flop_fwd': expected 4 batch seq^2 heads head_dim%s = %.6g, "
			   "found %.6g", a->causal ? " / 2 (causal)" : "", want, *fwd);
	if (fabs(*bwd - 2.5 * *fwd) > 1e-6 * *fwd)
		return bad(im, "field 'flop_bwd': expected 2.5 x flop_fwd = %.6g, found %.6g",
			   2.5 * *fwd, *bwd);
	return 0;
}

/* A backend that refused a shape: what it was asked and why (kv_heads 0:
 * as many as the query heads) */
static int attention_refused(importer *im, json_t *o, const attn_shape *a)
{
	const char *err;
	int64_t kv;
	if (get_int_opt(im, o, "kv_heads", 0, DIM_MAX, 0, &kv) < 0 ||
	    get_text(im, o, "error", FIELD_MAX(capsim_store_torch_step, error), &err) < 0)
		return -1;
	im->st->attention_refused++;
	return insert(im, "INSERT INTO attention(run_id, backend, seq, kv_heads, head_dim, causal,"
			  " error) VALUES(?,?,?,?,?,?,?)", "isiniis", im->run, a->backend, a->seq,
		      kv, a->head_dim, (int64_t)a->causal, err);
}

/* One shape of attn_probe.py: forward and backward medians and rates, the
 * FLOPs as FlashAttention's benchmarks count them; or the backend's error */
static int attention(importer *im, json_t *o)
{
	attn_shape a = { 0 };
	if (get_name(im, o, "backend", attn_backends, &a.backend) < 0 ||
	    get_int(im, o, "seq", 1, DIM_MAX, &a.seq) < 0 ||
	    get_int(im, o, "head_dim", 1, 4096, &a.head_dim) < 0 ||
	    get_bool(im, o, "causal", &a.causal) < 0)
		return -1;
	if (json_object_get(o, "error"))
		return attention_refused(im, o, &a);
	double flop_f, flop_b, med_f, med_b, rate_f, rate_b;
	char *kernels = NULL;
	if (get_text(im, o, "dtype", DTYPE_MAX, &a.dtype) < 0 ||
	    get_int(im, o, "batch", 1, DIM_MAX, &a.batch) < 0 ||
	    get_int(im, o, "heads", 1, DIM_MAX, &a.heads) < 0 ||
	    get_int(im, o, "kv_heads", 1, a.heads, &a.kv_heads) < 0)
		return -1;
	if (a.heads % a.kv_heads != 0)
		return bad(im, "field 'kv_heads': expected a divisor of heads (%lld), found %lld",
			   (long long)a.heads, (long long)a.kv_heads);
	if (attn_flops(im, o, &a, &flop_f, &flop_b) < 0 ||
	    attn_pass(im, o, "fwd", flop_f, &med_f, &rate_f) < 0 ||
	    attn_pass(im, o, "bwd", flop_b, &med_b, &rate_b) < 0 ||
	    attn_kernels(im, o, &kernels) < 0)
		return -1;
	int rc = insert(im, "INSERT INTO attention(run_id, backend, dtype, batch, seq, heads,"
			    " kv_heads, head_dim, causal, flop_fwd, flop_bwd, fwd_median_s,"
			    " bwd_median_s, fwd_flop_per_s, bwd_flop_per_s, kernels)"
			    " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", "issiiiiiiddddddss",
			im->run, a.backend, a.dtype, a.batch, a.seq, a.heads, a.kv_heads, a.head_dim,
			(int64_t)a.causal, flop_f, flop_b, med_f, med_b, rate_f, rate_b, kernels);
	free(kernels);
	im->st->attention++;
	return rc;
}

#define KINDS "gemm, gemm-check, hbm-copy, power-idle, power-sustained, power-duty, nccl, " \
	"pcie, torch-launch, torch-step, torch-host or attention"

/* A line that is no JSON object: jansson's reason, with a repeated key
 * (refused by JSON_REJECT_DUPLICATES: else the last would win) named as the
 * field it is. */
static int not_an_object(importer *im, const json_t *o, const json_error_t *jerr)
{
	static const char dup[] = "duplicate object key near '\"";
	if (o)
		return bad(im, "expected one JSON object a line, found %s", type_name(o));
	if (!strncmp(jerr->text, dup, sizeof dup - 1)) {
		char key[JSON_ERROR_TEXT_LENGTH];
		snprintf(key, sizeof key, "%s", jerr->text + sizeof dup - 1);
		size_t len = strlen(key);
		if (len >= 2 && !strcmp(key + len - 2, "\"'"))
			key[len - 2] = '\0';
		return bad(im, "field %s: expected each key once in an object, found it again at "
			   "column %d", show(key).s, jerr->column);
	}
	return bad(im, "expected one JSON object a line, found %s (column %d)", show(jerr->text).s,
		   jerr->column);
}

static int one_record(importer *im, json_t *o, const char *kind)
{
	static const struct {
		const char *kind;
		int (*read)(importer *, json_t *);
	} kinds[] = {
		{ "gemm", gemm }, { "gemm-check", check }, { "hbm-copy", copy_bw },
		{ "power-idle", power_idle }, { "power-sustained", power_sustained },
		{ "power-duty", power_duty }, { "nccl", nccl }, { "pcie", pcie },
		{ "torch-launch", torch_launch }, { "torch-step", torch_step },
		{ "torch-host", torch_host }, { "attention", attention },
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (!strcmp(kind, kinds[i].kind))
			return kinds[i].read(im, o);
	return bad(im, "field 'kind': expected " KINDS ", found %s", show(kind).s);
}

static int one_line(importer *im, const char *text, const char *sha)
{
	json_error_t jerr;
	json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(o)) {
		int rc = not_an_object(im, o, &jerr);
		json_decref(o);
		return rc;
	}
	const char *kind = NULL;
	int rc = get_str_any(im, o, "kind", &kind);
	if (rc == 0) {
		int first = im->run == 0;
		if (first != !strcmp(kind, "machine"))
			rc = bad(im, "field 'kind': expected %s, found %s",
				 first ? "'machine' on the first line" : KINDS, show(kind).s);
		else
			rc = first ? machine(im, o, sha) : one_record(im, o, kind);
	}
	json_decref(o);
	return rc;
}

/* the whole file in memory (the runs are small: tens of kilobytes); path
 * "-" is standard input; messages name name */
static char *slurp(const char *path, const char *name, size_t *len, capsim_diags *d)
{
	int is_stdin = !strcmp(path, "-");
	FILE *fp = is_stdin ? stdin : fopen(path, "rb");
	if (!fp) {
		capsim_diags_add(d, name, 0, "cannot open: %s", strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = capsim_xmalloc(cap + 1);
	size_t got;
	errno = 0;
	while ((got = fread(buf + n, 1, cap - n, fp)) > 0) {
		n += got;
		if (n == cap) {
			if (cap >= ((size_t)256 << 20)) {
				capsim_diags_add(d, name, 0, "larger than 256 MiB");
				if (!is_stdin)
					fclose(fp);
				free(buf);
				return NULL;
			}
			cap *= 2;
			buf = capsim_xrealloc(buf, cap + 1);
		}
	}
	int bad = ferror(fp) ? (errno ? errno : EIO) : 0;
	if (!is_stdin)
		fclose(fp);
	if (bad) {
		capsim_diags_add(d, name, 0, "cannot read: %s", strerror(bad));
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Refuse a run whose SHA-256 is stored already: 0, or -1 after a message
 * naming source. */
static int not_stored(importer *im, const char *sha, const char *db_path)
{
	sqlite3_stmt *st = capsim_store__prepare(im->s, "SELECT id FROM runs WHERE sha256 = ?", im->d);
	if (!st)
		return -1;
	sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
	int rc = capsim_store__step(im->s, st, im->d);
	if (rc == 1)
		capsim_diags_add(im->d, im->source, 0, "already imported into %s as run %lld (same SHA-256)",
				 db_path, (long long)sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
	return rc == 0 ? 0 : -1;
}

static size_t measurements(const capsim_import_stats *s)
{
	return s->gemm + s->gemm_failed + s->copy + s->power + s->power_duty + s->nccl + s->pcie +
	       s->torch_launch + s->torch_step + s->torch_host + s->attention +
	       s->attention_refused;
}

/* Import text (the JSON lines at jsonl_path; modified) as one run whose
 * identity is sha and whose source is source. */
static int import_text(char *text, const char *jsonl_path, const char *source,
		       const char *sha, const char *db_path, capsim_import_stats *out,
		       capsim_diags *d)
{
	importer im = { .path = jsonl_path, .source = source, .st = out, .d = d };
	if (capsim_store__begin_write(db_path, &im.s, d) < 0)
		return -1;
	int rc = not_stored(&im, sha, db_path);
	for (char *p = text; rc == 0 && *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		im.line++;
		if (p[strspn(p, " \t\r")] != '\0')
			rc = one_line(&im, p, sha);
		if (!nl)
			break;
		p = nl + 1;
	}
	if (rc == 0 && im.run == 0) {
		capsim_diags_add(d, jsonl_path, 0, "no 'machine' line: not a calibrate run");
		rc = -1;
	}
	if (rc == 0 && measurements(out) == 0) {
		capsim_diags_add(d, jsonl_path, 0, "no measurements after the 'machine' line");
		rc = -1;
	}
	rc = capsim_store__end_write(im.s, rc, d);
	if (rc != 0)
		memset(out, 0, sizeof *out);
	return rc;
}

int capsim_measure_import(const char *jsonl_path, const char *db_path,
			  capsim_import_stats *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	const char *name = !strcmp(jsonl_path, "-") ? STDIN_NAME : jsonl_path;
	size_t len;
	char *text = slurp(jsonl_path, name, &len, d);
	if (!text)
		return -1;
	char sha[65];
	capsim_sha256_hex(text, len, sha);
	/* a NUL would end the text early: refuse the file at its line, before
	 * anything (its digest included) is stored */
	const char *nul = memchr(text, '\0', len);
	if (nul) {
		long line = 1;
		for (const char *c = text; c < nul; c++)
			line += *c == '\n';
		capsim_diags_add(d, name, line, "contains a NUL byte (JSON lines are text)");
		free(text);
		return -1;
	}
	int rc = import_text(text, name, name, sha, db_path, out, d);
	free(text);
	return rc;
}

/* a record-level machine's date: a real day (YYYY-MM-DD) or UTC time, or
 * words saying it is unknown ("unknown (nccl-tests log)") */
static int machine_rec_date(importer *im, const char *date)
{
	if (check_text(im, "date", date, FIELD_MAX(capsim_store_run, date)) < 0)
		return -1;
	if (capsim_measure_is_day(date) || is_utc_time(date) || !strncmp(date, "unknown", 7))
		return 0;
	return bad(im, "field 'date': expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ from %d to %d, "
		   "or 'unknown ...', found %s", CAPSIM_YEAR_MIN, CAPSIM_YEAR_MAX, show(date).s);
}

/* the machine of a record-level import as a runs row */
static int machine_rec(importer *im, const capsim_measure_machine *m, const char *sha)
{
	static const char *const launchers[] = { "single-process", "mpi", NULL };
	size_t i = 0;
	while (m->launcher && launchers[i] && strcmp(launchers[i], m->launcher))
		i++;
	if (m->launcher && !launchers[i])
		return bad(im, "field 'launcher': expected single-process or mpi, found %s",
			   show(m->launcher).s);
	if (!m->program || !m->gpu || !m->date)
		return bad(im, "field '%s': expected text, found nothing",
			   !m->program ? "program" : !m->gpu ? "gpu" : "date");
	if (check_text(im, "program", m->program, FIELD_MAX(capsim_store_run, program)) < 0 ||
	    check_text(im, "gpu", m->gpu, FIELD_MAX(capsim_store_run, gpu)) < 0 ||
	    machine_rec_date(im, m->date) < 0)
		return -1;
	if (m->ranks < 0 || m->ranks > RANKS_MAX)
		return bad(im, "field 'ranks': expected an integer from 0 (unknown) to %lld, found %lld",
			   (long long)RANKS_MAX, (long long)m->ranks);
	if (m->nodes < 0 || (m->ranks > 0 && m->nodes > m->ranks) || (!m->ranks && m->nodes > RANKS_MAX))
		return bad(im, "field 'nodes': expected from 1 to the ranks (%lld), found %lld",
			   (long long)m->ranks, (long long)m->nodes);
	char now[32];
	utc_now(now);
	if (insert(im, "INSERT INTO runs(sha256, source, program, date, gpu, cc, imported_at, ranks,"
		       " nodes, launcher) VALUES(?,?,?,?,?,?,?,?,?,?)", "sssssssnns", sha, im->source,
		   m->program, m->date, m->gpu, "", now, m->ranks, m->nodes, m->launcher) < 0)
		return -1;
	im->run = sqlite3_last_insert_rowid(im->s->db);
	im->st->run_id = im->run;
	im->ranks = m->ranks;
	return 0;
}

/* a record's samples as the JSON text the store keeps (caller frees); NULL
 * after a fault */
static char *rec_samples(importer *im, const capsim_measure_nccl *r)
{
	if (r->n_samples == 0 || r->n_samples > ARRAY_MAX || !r->samples_s)
		return bad(im, "field 'samples_s': expected 1 to %d seconds, found %zu", ARRAY_MAX,
			   r->samples_s ? r->n_samples : 0), NULL;
	for (size_t i = 0; i < r->n_samples; i++)
		if (!(r->samples_s[i] >= SECONDS_MIN && r->samples_s[i] <= SECONDS_MAX))
			return bad(im, "field 'samples_s[%zu]': expected a number from %g to %g, "
				   "found %g", i, SECONDS_MIN, SECONDS_MAX, r->samples_s[i]), NULL;
	double *v = capsim_xcalloc(r->n_samples, sizeof *v);
	json_t *a = json_array();
	for (size_t i = 0; i < r->n_samples; i++) {
		v[i] = r->samples_s[i];
		json_array_append_new(a, json_real(v[i]));
	}
	double med = gsl_stats_median(v, 1, r->n_samples);
	free(v);
	char *text = NULL;
	if (fabs(med - r->median_s) > 1e-6 * r->median_s + 1e-12)
		bad(im, "field 'median_s': expected the median of samples_s (%.9g), found %.9g", med,
		    r->median_s);
	else
		text = json_dumps(a, JSON_COMPACT | JSON_REAL_PRECISION(17));
	json_decref(a);
	return text;
}

int capsim_measure_import_nccl(const char *source, const char *sha256, const char *db_path,
			       const capsim_measure_machine *m, const capsim_measure_nccl *recs,
			       size_t n, capsim_import_stats *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	source = !strcmp(source, "-") ? STDIN_NAME : source;
	importer im = { .path = source, .source = source, .st = out, .d = d };
	if (n == 0) {
		capsim_diags_add(d, source, 0, "no measurements to import");
		return -1;
	}
	if (!sha256 || strlen(sha256) != 64 || strspn(sha256, "0123456789abcdef") != 64) {
		capsim_diags_add(d, source, 0, "SHA-256: expected 64 lowercase hex digits, found %s",
				 show(sha256 ? sha256 : "").s);
		return -1;
	}
	if (capsim_store__begin_write(db_path, &im.s, d) < 0)
		return -1;
	int rc = not_stored(&im, sha256, db_path);
	if (rc == 0)
		rc = machine_rec(&im, m, sha256);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		im.line = recs[i].line;
		char *samples = rec_samples(&im, &recs[i]);
		rc = samples ? nccl_row(&im, &recs[i], samples) : -1;
		free(samples);
	}
	rc = capsim_store__end_write(im.s, rc, d);
	if (rc != 0)
		memset(out, 0, sizeof *out);
	return rc;
}
