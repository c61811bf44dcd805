/* measure.c - calibrate/'s JSON lines into SQLite; see measure.h. */
#include "measure.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <sqlite3.h>

#include "sha256.h"
#include "xalloc.h"

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS runs("
	" id INTEGER PRIMARY KEY,"
	" sha256 TEXT NOT NULL UNIQUE,"
	" source TEXT NOT NULL,"
	" program TEXT NOT NULL,"
	" date TEXT NOT NULL,"
	" gpu TEXT NOT NULL,"
	" cc TEXT, sms INTEGER, memory_bytes INTEGER, l2_bytes INTEGER,"
	" cuda_driver INTEGER, cuda_runtime INTEGER, cublaslt INTEGER,"
	" imported_at TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS gemm("
	" run_id INTEGER NOT NULL REFERENCES runs(id),"
	" dtype TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,"
	" k INTEGER NOT NULL, shape TEXT, layout TEXT, batch INTEGER,"
	" flop REAL NOT NULL, median_s REAL NOT NULL, flop_per_s REAL NOT NULL,"
	" samples_s TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS gemm_failed("
	" run_id INTEGER NOT NULL REFERENCES runs(id),"
	" dtype TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,"
	" k INTEGER NOT NULL, error TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS gemm_check("
	" run_id INTEGER NOT NULL REFERENCES runs(id),"
	" dtype TEXT NOT NULL, rel_err REAL NOT NULL);"
	"CREATE TABLE IF NOT EXISTS copy_bandwidth("
	" run_id INTEGER NOT NULL REFERENCES runs(id),"
	" bytes INTEGER NOT NULL, moved_bytes INTEGER NOT NULL,"
	" median_s REAL NOT NULL, bytes_per_s REAL NOT NULL, samples_s TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS power_idle("
	" run_id INTEGER NOT NULL REFERENCES runs(id),"
	" power_limit_w REAL NOT NULL, power_w REAL NOT NULL, sm_mhz REAL NOT NULL,"
	" temp_c REAL, throttle_reasons INTEGER);"
	"CREATE TABLE IF NOT EXISTS power_sustained("
	" run_id INTEGER NOT NULL REFERENCES runs(id),"
	" dtype TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,"
	" median_power_w REAL NOT NULL, median_sm_mhz REAL NOT NULL,"
	" median_flop_per_s REAL NOT NULL, readings TEXT NOT NULL,"
	" batch_flop_per_s TEXT NOT NULL);";

/* one import: the file, where we are in it, and the open statement set */
typedef struct importer {
	const char *path;
	long line;
	sqlite3 *db;
	int64_t run;
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

static int get_str(importer *im, json_t *o, const char *key, const char **out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_string(v))
		return bad(im, "%s: expected a string, found %s", key, v ? "another type" : "nothing");
	*out = json_string_value(v);
	return 0;
}

/* a number > 0 (integer or real) */
static int get_pos(importer *im, json_t *o, const char *key, double *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_number(v))
		return bad(im, "%s: expected a number, found %s", key, v ? "another type" : "nothing");
	*out = json_number_value(v);
	if (!(*out > 0) || !isfinite(*out))
		return bad(im, "%s: expected a positive number, found %g", key, *out);
	return 0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* samples_s: positive seconds whose median is median_s; returns the array
 * as JSON text (caller frees) or NULL */
static char *samples_text(importer *im, json_t *o, double median_s)
{
	json_t *a = json_object_get(o, "samples_s");
	size_t n = json_array_size(a);
	if (!json_is_array(a) || n == 0) {
		bad(im, "samples_s: expected an array of seconds, found %s",
		    a ? "an empty or other value" : "nothing");
		return NULL;
	}
	double *v = capsim_xcalloc(n, sizeof *v);
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(a, i);
		v[i] = json_is_number(x) ? json_number_value(x) : -1.0;
		if (!(v[i] > 0) || !isfinite(v[i])) {
			free(v);
			bad(im, "samples_s[%zu]: expected positive seconds", i);
			return NULL;
		}
	}
	qsort(v, n, sizeof *v, cmp_double);
	double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	free(v);
	if (fabs(med - median_s) > 1e-6 * median_s + 1e-12) {
		bad(im, "median_s: %.9g is not the median of samples_s (%.9g)", median_s, med);
		return NULL;
	}
	return json_dumps(a, JSON_COMPACT);
}

static int exec(importer *im, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(im->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		capsim_diags_add(im->d, NULL, 0, "database: %s", msg ? msg : "error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* prepare, bind by the format's letters (s text, i integer, d real), step */
static int insert(importer *im, const char *sql, const char *types, ...)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(im->db, sql, -1, &st, NULL) != SQLITE_OK) {
		capsim_diags_add(im->d, NULL, 0, "database: %s", sqlite3_errmsg(im->db));
		return -1;
	}
	va_list ap;
	va_start(ap, types);
	for (int i = 0; types[i]; i++) {
		if (types[i] == 's')
			sqlite3_bind_text(st, i + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
		else if (types[i] == 'i')
			sqlite3_bind_int64(st, i + 1, va_arg(ap, int64_t));
		else
			sqlite3_bind_double(st, i + 1, va_arg(ap, double));
	}
	va_end(ap);
	int rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		capsim_diags_add(im->d, NULL, 0, "database: %s", sqlite3_errmsg(im->db));
		return -1;
	}
	return 0;
}

static int64_t opt_int(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

static int machine(importer *im, json_t *o, const char *sha)
{
	const char *program = NULL, *date = NULL, *gpu = NULL;
	if (get_str(im, o, "program", &program) || get_str(im, o, "date", &date) ||
	    get_str(im, o, "gpu", &gpu))
		return -1;
	json_t *cc = json_object_get(o, "cc");
	char now[32];
	time_t t = time(NULL);
	strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	if (insert(im,
		   "INSERT INTO runs(sha256, source, program, date, gpu, cc, sms, memory_bytes,"
		   " l2_bytes, cuda_driver, cuda_runtime, cublaslt, imported_at)"
		   " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)",
		   "ssssssiiiiiis", sha, im->path, program, date, gpu,
		   json_is_string(cc) ? json_string_value(cc) : "", opt_int(o, "sms"),
		   opt_int(o, "memory_bytes"), opt_int(o, "l2_bytes"), opt_int(o, "cuda_driver"),
		   opt_int(o, "cuda_runtime"), opt_int(o, "cublaslt"), now) < 0)
		return -1;
	im->run = sqlite3_last_insert_rowid(im->db);
	im->st->run_id = im->run;
	return 0;
}

static int gemm(importer *im, json_t *o)
{
	const char *dtype = NULL;
	double m, n, k;
	if (get_str(im, o, "dtype", &dtype) || get_pos(im, o, "m", &m) ||
	    get_pos(im, o, "n", &n) || get_pos(im, o, "k", &k))
		return -1;
	json_t *err = json_object_get(o, "error");
	if (json_is_string(err)) {
		im->st->gemm_failed++;
		return insert(im, "INSERT INTO gemm_failed VALUES(?,?,?,?,?,?)", "isiiis", im->run,
			      dtype, (int64_t)m, (int64_t)n, (int64_t)k, json_string_value(err));
	}
	double flop, med, rate;
	if (get_pos(im, o, "flop", &flop) || get_pos(im, o, "median_s", &med) ||
	    get_pos(im, o, "flop_per_s", &rate))
		return -1;
	if (fabs(flop - 2 * m * n * k) > 1e-5 * flop)
		return bad(im, "flop: %.6g is not 2 m n k = %.6g", flop, 2 * m * n * k);
	if (fabs(rate * med - flop) > 1e-4 * flop)
		return bad(im, "flop_per_s: %.6g is not flop / median_s = %.6g", rate, flop / med);
	char *samples = samples_text(im, o, med);
	if (!samples)
		return -1;
	json_t *shape = json_object_get(o, "shape"), *layout = json_object_get(o, "layout");
	int rc = insert(im, "INSERT INTO gemm VALUES(?,?,?,?,?,?,?,?,?,?,?,?)", "isiiissiddds",
			im->run, dtype, (int64_t)m, (int64_t)n, (int64_t)k,
			json_is_string(shape) ? json_string_value(shape) : "",
			json_is_string(layout) ? json_string_value(layout) : "",
			opt_int(o, "batch"), flop, med, rate, samples);
	free(samples);
	im->st->gemm++;
	return rc;
}

static int copy_bw(importer *im, json_t *o)
{
	double bytes, moved, med, bw;
	if (get_pos(im, o, "bytes", &bytes) || get_pos(im, o, "moved_bytes", &moved) ||
	    get_pos(im, o, "median_s", &med) || get_pos(im, o, "bytes_per_s", &bw))
		return -1;
	if (fabs(bw * med - moved) > 1e-4 * moved)
		return bad(im, "bytes_per_s: %.6g is not moved_bytes / median_s = %.6g", bw,
			   moved / med);
	char *samples = samples_text(im, o, med);
	if (!samples)
		return -1;
	int rc = insert(im, "INSERT INTO copy_bandwidth VALUES(?,?,?,?,?,?)", "iiidds", im->run,
			(int64_t)bytes, (int64_t)moved, med, bw, samples);
	free(samples);
	im->st->copy++;
	return rc;
}

static int check(importer *im, json_t *o)
{
	const char *dtype = NULL;
	json_t *e = json_object_get(o, "rel_err");
	if (get_str(im, o, "dtype", &dtype))
		return -1;
	if (!json_is_number(e) || json_number_value(e) < 0)
		return bad(im, "rel_err: expected a number >= 0");
	im->st->checks++;
	return insert(im, "INSERT INTO gemm_check VALUES(?,?,?)", "isd", im->run, dtype,
		      json_number_value(e));
}

/* one NVML reading: power_w > 0, sm_mhz > 0 */
static int reading(importer *im, json_t *r, double *power, double *mhz)
{
	if (!json_is_object(r))
		return bad(im, "reading: expected an object of power_w, sm_mhz, temp_c");
	return get_pos(im, r, "power_w", power) || get_pos(im, r, "sm_mhz", mhz) ? -1 : 0;
}

static int power_idle(importer *im, json_t *o)
{
	double limit, power, mhz;
	json_t *r = json_object_get(o, "reading");
	if (get_pos(im, o, "power_limit_w", &limit) || reading(im, r, &power, &mhz) < 0)
		return -1;
	im->st->power++;
	return insert(im, "INSERT INTO power_idle VALUES(?,?,?,?,?,?)", "idddii", im->run, limit,
		      power, mhz, opt_int(r, "temp_c"), opt_int(r, "throttle_reasons"));
}

static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* readings under load and each batch's rate; their medians are stored
 * beside the arrays */
static int power_sustained(importer *im, json_t *o)
{
	const char *dtype = NULL;
	double m, n, k;
	if (get_str(im, o, "dtype", &dtype) || get_pos(im, o, "m", &m) ||
	    get_pos(im, o, "n", &n) || get_pos(im, o, "k", &k))
		return -1;
	json_t *rs = json_object_get(o, "readings"), *bs = json_object_get(o, "batch_flop_per_s");
	size_t nr = json_array_size(rs), nb = json_array_size(bs);
	if (!json_is_array(rs) || nr == 0 || !json_is_array(bs) || nb == 0)
		return bad(im, "readings, batch_flop_per_s: expected two non-empty arrays");
	double *pw = capsim_xcalloc(nr, sizeof *pw), *mhz = capsim_xcalloc(nr, sizeof *mhz);
	double *rate = capsim_xcalloc(nb, sizeof *rate);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < nr; i++)
		rc = reading(im, json_array_get(rs, i), &pw[i], &mhz[i]);
	for (size_t i = 0; rc == 0 && i < nb; i++) {
		json_t *x = json_array_get(bs, i);
		rate[i] = json_is_number(x) ? json_number_value(x) : -1.0;
		if (!(rate[i] > 0) || !isfinite(rate[i]))
			rc = bad(im, "batch_flop_per_s[%zu]: expected a positive rate", i);
	}
	if (rc == 0) {
		char *rtext = json_dumps(rs, JSON_COMPACT), *btext = json_dumps(bs, JSON_COMPACT);
		rc = insert(im, "INSERT INTO power_sustained VALUES(?,?,?,?,?,?,?,?,?,?)",
			    "isiiidddss", im->run, dtype, (int64_t)m, (int64_t)n, (int64_t)k,
			    median_of(pw, nr), median_of(mhz, nr), median_of(rate, nb), rtext, btext);
		free(rtext);
		free(btext);
		im->st->power++;
	}
	free(pw);
	free(mhz);
	free(rate);
	return rc;
}

#define KINDS "gemm, gemm-check, hbm-copy, power-idle or power-sustained"

static int one_line(importer *im, const char *text, const char *sha)
{
	json_error_t jerr;
	json_t *o = json_loads(text, 0, &jerr);
	if (!json_is_object(o)) {
		json_decref(o);
		return bad(im, "expected one JSON object a line: %s", o ? "not an object" : jerr.text);
	}
	const char *kind = NULL;
	int rc = get_str(im, o, "kind", &kind);
	if (rc == 0) {
		int first = im->run == 0;
		if (first != !strcmp(kind, "machine"))
			rc = bad(im, "kind: expected %s, found '%s'",
				 first ? "'machine' on the first line" : KINDS,
				 kind);
		else if (first)
			rc = machine(im, o, sha);
		else if (!strcmp(kind, "gemm"))
			rc = gemm(im, o);
		else if (!strcmp(kind, "gemm-check"))
			rc = check(im, o);
		else if (!strcmp(kind, "hbm-copy"))
			rc = copy_bw(im, o);
		else if (!strcmp(kind, "power-idle"))
			rc = power_idle(im, o);
		else if (!strcmp(kind, "power-sustained"))
			rc = power_sustained(im, o);
		else
			rc = bad(im, "kind: expected %s, found '%s'", KINDS, kind);
	}
	json_decref(o);
	return rc;
}

/* the whole file in memory (the runs are small: tens of kilobytes) */
static char *slurp(const char *path, size_t *len, capsim_diags *d)
{
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		capsim_diags_add(d, path, 0, "cannot open: %s", strerror(errno));
		return NULL;
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = capsim_xmalloc(cap + 1);
	size_t got;
	while ((got = fread(buf + n, 1, cap - n, fp)) > 0) {
		n += got;
		if (n == cap) {
			if (cap >= ((size_t)256 << 20)) {
				capsim_diags_add(d, path, 0, "larger than 256 MiB");
				fclose(fp);
				free(buf);
				return NULL;
			}
			cap *= 2;
			buf = capsim_xrealloc(buf, cap + 1);
		}
	}
	int bad = ferror(fp);
	fclose(fp);
	if (bad) {
		capsim_diags_add(d, path, 0, "read error");
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

int capsim_measure_import(const char *jsonl_path, const char *db_path,
			  capsim_import_stats *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	size_t len;
	char *text = slurp(jsonl_path, &len, d);
	if (!text)
		return -1;
	char sha[65];
	capsim_sha256_hex(text, len, sha);
	importer im = { .path = jsonl_path, .st = out, .d = d };
	if (sqlite3_open(db_path, &im.db) != SQLITE_OK) {
		capsim_diags_add(d, db_path, 0, "cannot open the database: %s",
				 im.db ? sqlite3_errmsg(im.db) : "out of memory");
		sqlite3_close(im.db);
		free(text);
		return -1;
	}
	sqlite3_busy_timeout(im.db, 5000);
	int rc = exec(&im, "BEGIN IMMEDIATE") < 0 ? -1 : 0;
	if (rc == 0)
		rc = exec(&im, schema_sql);
	if (rc == 0)
		rc = exec(&im, "PRAGMA user_version = 1");
	if (rc == 0) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(im.db, "SELECT id FROM runs WHERE sha256 = ?", -1, &st,
				       NULL) != SQLITE_OK) {
			rc = -1;
			capsim_diags_add(d, NULL, 0, "database: %s", sqlite3_errmsg(im.db));
		} else {
			sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
			if (sqlite3_step(st) == SQLITE_ROW) {
				capsim_diags_add(d, jsonl_path, 0,
						 "already imported into %s as run %lld (same SHA-256)",
						 db_path, (long long)sqlite3_column_int64(st, 0));
				rc = -1;
			}
			sqlite3_finalize(st);
		}
	}
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
	if (rc == 0 && out->gemm + out->copy == 0) {
		capsim_diags_add(d, jsonl_path, 0, "no measurements after the 'machine' line");
		rc = -1;
	}
	if (rc == 0)
		rc = exec(&im, "COMMIT");
	if (rc != 0) {
		sqlite3_exec(im.db, "ROLLBACK", NULL, NULL, NULL);
		memset(out, 0, sizeof *out);
	}
	sqlite3_close(im.db);
	free(text);
	return rc;
}
