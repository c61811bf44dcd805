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
	" imported_at TEXT NOT NULL,"
	" nccl INTEGER, ranks INTEGER, nodes INTEGER, launcher TEXT, env TEXT);"
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
	" batch_flop_per_s TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS nccl("
	" run_id INTEGER NOT NULL REFERENCES runs(id),"
	" op TEXT NOT NULL, dtype TEXT NOT NULL, redop TEXT,"
	" ranks INTEGER NOT NULL, nodes INTEGER NOT NULL, bytes INTEGER NOT NULL,"
	" count INTEGER NOT NULL, algo TEXT NOT NULL, proto TEXT NOT NULL,"
	" in_place INTEGER NOT NULL, median_s REAL NOT NULL,"
	" algbw_gb_per_s REAL NOT NULL, busbw_gb_per_s REAL NOT NULL,"
	" wrong INTEGER NOT NULL, samples_s TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS pcie("
	" run_id INTEGER NOT NULL REFERENCES runs(id),"
	" direction TEXT NOT NULL, pinned INTEGER NOT NULL, bytes INTEGER NOT NULL,"
	" median_s REAL NOT NULL, bytes_per_s REAL NOT NULL, samples_s TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS power_duty("
	" run_id INTEGER NOT NULL REFERENCES runs(id),"
	" duty REAL NOT NULL, dtype TEXT NOT NULL, m INTEGER, n INTEGER, k INTEGER,"
	" median_power_w REAL NOT NULL, median_sm_mhz REAL NOT NULL,"
	" achieved_flop_per_s REAL NOT NULL, readings TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS torch_launch("
	" run_id INTEGER NOT NULL REFERENCES runs(id),"
	" op TEXT NOT NULL, elements INTEGER NOT NULL, kernels INTEGER NOT NULL,"
	" host_median_s REAL NOT NULL, total_median_s REAL NOT NULL,"
	" host_samples_s TEXT NOT NULL);"
	"CREATE TABLE IF NOT EXISTS torch_step("
	" run_id INTEGER NOT NULL REFERENCES runs(id),"
	" model TEXT NOT NULL, micro_batch INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" dtype TEXT NOT NULL, mode TEXT NOT NULL, vocab INTEGER,"
	" median_s REAL, tokens_per_s REAL, peak_allocated_bytes INTEGER,"
	" peak_reserved_bytes INTEGER, samples_s TEXT, error TEXT);";

/* version 1 to 2: the machine line's NCCL keys (the new tables come from
 * schema_sql, which creates what is absent) */
static const char upgrade_1_sql[] =
	"ALTER TABLE runs ADD COLUMN nccl INTEGER;"
	"ALTER TABLE runs ADD COLUMN ranks INTEGER;"
	"ALTER TABLE runs ADD COLUMN nodes INTEGER;"
	"ALTER TABLE runs ADD COLUMN launcher TEXT;"
	"ALTER TABLE runs ADD COLUMN env TEXT;";

/* one import: the file, where we are in it, and the open statement set */
typedef struct importer {
	const char *path;
	const char *source; /* what runs.source records: path, or what it was converted from */
	long line;
	sqlite3 *db;
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

static int get_str(importer *im, json_t *o, const char *key, const char **out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_string(v))
		return bad(im, "%s: expected a string, found %s", key, type_name(v));
	*out = json_string_value(v);
	return 0;
}

/* a string that is one of names (a NULL-terminated list) */
static int get_name(importer *im, json_t *o, const char *key, const char *const *names,
		    const char **out)
{
	if (get_str(im, o, key, out) < 0)
		return -1;
	char list[256] = "";
	for (size_t i = 0; names[i]; i++) {
		if (!strcmp(*out, names[i]))
			return 0;
		size_t len = strlen(list);
		snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
	}
	return bad(im, "%s: expected one of %s, found '%s'", key, list, *out);
}

/* an integer in [lo, hi] */
static int get_int(importer *im, json_t *o, const char *key, int64_t lo, int64_t hi,
		   int64_t *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_integer(v))
		return bad(im, "%s: expected an integer, found %s", key, type_name(v));
	*out = (int64_t)json_integer_value(v);
	if (*out < lo || *out > hi)
		return bad(im, "%s: expected an integer from %lld to %lld, found %lld", key,
			   (long long)lo, (long long)hi, (long long)*out);
	return 0;
}

/* a number >= 0 (integer or real) */
static int get_nonneg(importer *im, json_t *o, const char *key, double *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_number(v))
		return bad(im, "%s: expected a number, found %s", key, type_name(v));
	*out = json_number_value(v);
	if (!(*out >= 0) || !isfinite(*out))
		return bad(im, "%s: expected a number >= 0, found %g", key, *out);
	return 0;
}

/* a number > 0 (integer or real) */
static int get_pos(importer *im, json_t *o, const char *key, double *out)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_number(v))
		return bad(im, "%s: expected a number, found %s", key, type_name(v));
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
static char *samples_key(importer *im, json_t *o, const char *key, const char *median_key,
			 double median_s)
{
	json_t *a = json_object_get(o, key);
	size_t n = json_array_size(a);
	if (!json_is_array(a) || n == 0) {
		bad(im, "%s: expected an array of seconds, found %s", key,
		    a ? "an empty or other value" : "nothing");
		return NULL;
	}
	double *v = capsim_xcalloc(n, sizeof *v);
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(a, i);
		v[i] = json_is_number(x) ? json_number_value(x) : -1.0;
		if (!(v[i] > 0) || !isfinite(v[i])) {
			free(v);
			bad(im, "%s[%zu]: expected positive seconds", key, i);
			return NULL;
		}
	}
	qsort(v, n, sizeof *v, cmp_double);
	double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	free(v);
	if (fabs(med - median_s) > 1e-6 * median_s + 1e-12) {
		bad(im, "%s: %.9g is not the median of %s (%.9g)", median_key, median_s, key, med);
		return NULL;
	}
	return json_dumps(a, JSON_COMPACT);
}

static char *samples_text(importer *im, json_t *o, double median_s)
{
	return samples_key(im, o, "samples_s", "median_s", median_s);
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

/* prepare, bind by the format's letters (s text, NULL for a NULL pointer;
 * i integer; d real; j a json_t * bound as its integer, or NULL when it is
 * not one), step */
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
				return bad(im, "%s: expected in the machine line of %s, found nothing",
					   keys[i], program);
	int64_t v, ranks = 0, nodes = 0;
	const char *launcher;
	if ((json_object_get(o, "nccl") && get_int(im, o, "nccl", 1, INT32_MAX, &v) < 0) ||
	    (json_object_get(o, "ranks") && get_int(im, o, "ranks", 1, 1 << 24, &ranks) < 0) ||
	    (json_object_get(o, "nodes") && get_int(im, o, "nodes", 1, 1 << 24, &nodes) < 0) ||
	    (json_object_get(o, "launcher") && get_name(im, o, "launcher", launchers, &launcher) < 0))
		return -1;
	if (ranks > 0 && nodes > ranks)
		return bad(im, "nodes: expected at most ranks (%lld), found %lld", (long long)ranks,
			   (long long)nodes);
	json_t *env = json_object_get(o, "env");
	if (env) {
		const char *key;
		json_t *val;
		if (!json_is_object(env))
			return bad(im, "env: expected an object of strings, found %s", type_name(env));
		json_object_foreach(env, key, val)
			if (!json_is_string(val))
				return bad(im, "env.%s: expected a string, found %s", key,
					   type_name(val));
		*env_text = json_dumps(env, JSON_COMPACT | JSON_SORT_KEYS);
	}
	im->ranks = ranks;
	return 0;
}

static int machine(importer *im, json_t *o, const char *sha)
{
	const char *program = NULL, *date = NULL, *gpu = NULL;
	char *env = NULL;
	if (get_str(im, o, "program", &program) || get_str(im, o, "date", &date) ||
	    get_str(im, o, "gpu", &gpu) || machine_nccl(im, o, program, &env) < 0)
		return -1;
	json_t *cc = json_object_get(o, "cc"), *launcher = json_object_get(o, "launcher");
	char now[32];
	time_t t = time(NULL);
	strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	int rc = insert(im,
			"INSERT INTO runs(sha256, source, program, date, gpu, cc, sms, memory_bytes,"
			" l2_bytes, cuda_driver, cuda_runtime, cublaslt, imported_at, nccl, ranks,"
			" nodes, launcher, env) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			"ssssssiiiiiisjjjss", sha, im->source, program, date, gpu,
			json_is_string(cc) ? json_string_value(cc) : "", opt_int(o, "sms"),
			opt_int(o, "memory_bytes"), opt_int(o, "l2_bytes"),
			opt_int(o, "cuda_driver"), opt_int(o, "cuda_runtime"),
			opt_int(o, "cublaslt"), now, json_object_get(o, "nccl"),
			json_object_get(o, "ranks"), json_object_get(o, "nodes"),
			json_is_string(launcher) ? json_string_value(launcher) : NULL, env);
	free(env);
	if (rc < 0)
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

/* NCCL's data types by nccl-tests' names, with their sizes in bytes */
static const struct {
	const char *name;
	int size;
} nccl_types[] = {
	{ "int8", 1 },	 { "uint8", 1 }, { "int32", 4 },   { "uint32", 4 },
	{ "int64", 8 },	 { "uint64", 8 }, { "half", 2 },   { "float", 4 },
	{ "double", 8 }, { "bfloat16", 2 }, { "f8e4m3", 1 }, { "f8e5m2", 1 },
};

/* The collectives of capsim-calibrate-nccl. per_rank: bytes is count x ranks
 * x the type's size (count is what each rank sends to, or receives from, one
 * peer), else count x size. bus: nccl-tests' bus bandwidth factor, busbw =
 * algbw x bus_num (n - 1) / n, or x 1 when bus_num is 0 (PERFORMANCE.md of
 * NVIDIA/nccl-tests: allreduce 2(n-1)/n, allgather and reducescatter
 * (n-1)/n, alltoall (n-1)/n, broadcast and sendrecv 1). */
static const struct {
	const char *name;
	int per_rank, bus_num;
} nccl_ops[] = {
	{ "all_reduce", 0, 2 },	   { "all_gather", 1, 1 }, { "reduce_scatter", 1, 1 },
	{ "alltoall", 1, 1 },	   { "broadcast", 0, 0 },  { "sendrecv", 0, 0 },
};

/* nccl-tests' bus bandwidth factor of operation i at n ranks */
static double bus_factor(size_t i, int64_t n)
{
	return nccl_ops[i].bus_num ? nccl_ops[i].bus_num * (double)(n - 1) / (double)n : 1.0;
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
	bad(im, "dtype: expected one of %s, found '%s'", list, dtype);
	return 0;
}

/* the sizes of one nccl record: ranks within the run's, count and bytes
 * that agree with the operation and type */
static int nccl_sizes(importer *im, json_t *o, size_t op, const char *dtype, int size,
		      int64_t *ranks, int64_t *nodes, int64_t *bytes, int64_t *count)
{
	if (get_int(im, o, "ranks", 1, 1 << 24, ranks) < 0 ||
	    get_int(im, o, "nodes", 1, *ranks, nodes) < 0 ||
	    get_int(im, o, "bytes", 1, INT64_MAX, bytes) < 0 ||
	    get_int(im, o, "count", 1, INT64_MAX, count) < 0)
		return -1;
	if (im->ranks > 0 && *ranks != im->ranks)
		return bad(im, "ranks: expected the machine line's %lld, found %lld",
			   (long long)im->ranks, (long long)*ranks);
	int64_t per = nccl_ops[op].per_rank ? *ranks : 1;
	if (*count > INT64_MAX / per / size || *count * per * size != *bytes)
		return bad(im, "count: %lld is not bytes / (%lld x %d) for %s %s = %lld",
			   (long long)*count, (long long)per, size, nccl_ops[op].name, dtype,
			   (long long)(*bytes / (per * size)));
	return 0;
}

/* one collective's size and times: algbw = bytes / median_s / 1e9 and busbw
 * = algbw x nccl-tests' factor (within 1 %) */
static int nccl(importer *im, json_t *o)
{
	static const char *const redops[] = { "sum", "prod", "max", "min", "avg", "none", NULL };
	const char *op_name, *dtype, *redop, *algo, *proto;
	int64_t ranks, nodes, bytes, count, in_place, wrong;
	double med = 0, algbw = 0, busbw = 0;
	if (get_str(im, o, "op", &op_name) < 0)
		return -1;
	size_t op = 0;
	while (op < sizeof nccl_ops / sizeof nccl_ops[0] && strcmp(op_name, nccl_ops[op].name))
		op++;
	if (op == sizeof nccl_ops / sizeof nccl_ops[0])
		return bad(im, "op: expected one of all_reduce, all_gather, reduce_scatter, "
			   "alltoall, broadcast, sendrecv, found '%s'", op_name);
	int size = 0;
	if (get_str(im, o, "dtype", &dtype) < 0 || (size = nccl_type_size(im, dtype)) == 0 ||
	    get_name(im, o, "redop", redops, &redop) < 0 ||
	    nccl_sizes(im, o, op, dtype, size, &ranks, &nodes, &bytes, &count) < 0 ||
	    get_str(im, o, "algo", &algo) < 0 || get_str(im, o, "proto", &proto) < 0 ||
	    get_int(im, o, "in_place", 0, 1, &in_place) < 0 ||
	    get_int(im, o, "wrong", 0, INT64_MAX, &wrong) < 0 ||
	    get_pos(im, o, "median_s", &med) < 0 || get_pos(im, o, "algbw_gb_per_s", &algbw) < 0 ||
	    get_nonneg(im, o, "busbw_gb_per_s", &busbw) < 0)
		return -1;
	if (fabs(algbw * 1e9 * med - (double)bytes) > 1e-4 * (double)bytes)
		return bad(im, "algbw_gb_per_s: %.6g is not bytes / median_s / 1e9 = %.6g", algbw,
			   (double)bytes / med / 1e9);
	double want = algbw * bus_factor(op, ranks);
	if (fabs(busbw - want) > 0.01 * want + 1e-9)
		return bad(im, "busbw_gb_per_s: %.6g is not algbw x %.4g (%s at %lld ranks) = %.6g",
			   busbw, bus_factor(op, ranks), op_name, (long long)ranks, want);
	char *samples = samples_text(im, o, med);
	if (!samples)
		return -1;
	int rc = insert(im, "INSERT INTO nccl VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
			"isssiiiissidddis", im->run, op_name, dtype, redop, ranks, nodes, bytes,
			count, algo, proto, in_place, med, algbw, busbw, wrong, samples);
	free(samples);
	im->st->nccl++;
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
	    get_int(im, o, "bytes", 1, INT64_MAX, &bytes) < 0 ||
	    get_pos(im, o, "median_s", &med) < 0 || get_pos(im, o, "bytes_per_s", &bw) < 0)
		return -1;
	if (fabs(bw * med - (double)bytes) > 1e-4 * (double)bytes)
		return bad(im, "bytes_per_s: %.6g is not bytes / median_s = %.6g", bw,
			   (double)bytes / med);
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
	double med = median_of(v, n);
	if (fabs(stated - med) > 1e-6 * fabs(med) + 1e-9)
		return bad(im, "%s: %.9g is not the median of the readings (%.9g)", key, stated, med);
	return 0;
}

/* GEMMs for a fraction (duty) of each 100 ms window: the NVML readings and
 * their medians, and the rate achieved over the whole phase */
static int power_duty(importer *im, json_t *o)
{
	const char *dtype;
	double duty, m, n, k, pw_med, mhz_med, rate;
	if (get_pos(im, o, "duty", &duty) < 0 || get_str(im, o, "dtype", &dtype) < 0 ||
	    get_pos(im, o, "m", &m) < 0 || get_pos(im, o, "n", &n) < 0 ||
	    get_pos(im, o, "k", &k) < 0 || get_pos(im, o, "median_power_w", &pw_med) < 0 ||
	    get_pos(im, o, "median_sm_mhz", &mhz_med) < 0 ||
	    get_pos(im, o, "achieved_flop_per_s", &rate) < 0)
		return -1;
	if (duty > 1)
		return bad(im, "duty: expected a fraction in (0, 1], found %g", duty);
	json_t *rs = json_object_get(o, "readings");
	size_t nr = json_array_size(rs);
	if (!json_is_array(rs) || nr == 0)
		return bad(im, "readings: expected a non-empty array, found %s",
			   json_is_array(rs) ? "an empty one" : type_name(rs));
	double *pw = capsim_xcalloc(nr, sizeof *pw), *mhz = capsim_xcalloc(nr, sizeof *mhz);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < nr; i++)
		rc = reading(im, json_array_get(rs, i), &pw[i], &mhz[i]);
	if (rc == 0)
		rc = median_matches(im, "median_power_w", pw_med, pw, nr);
	if (rc == 0)
		rc = median_matches(im, "median_sm_mhz", mhz_med, mhz, nr);
	if (rc == 0) {
		char *text = json_dumps(rs, JSON_COMPACT);
		rc = insert(im, "INSERT INTO power_duty VALUES(?,?,?,?,?,?,?,?,?,?)", "idsiiiddds",
			    im->run, duty, dtype, (int64_t)m, (int64_t)n, (int64_t)k, pw_med,
			    mhz_med, rate, text);
		free(text);
		im->st->power_duty++;
	}
	free(pw);
	free(mhz);
	return rc;
}

/* PyTorch eager's host cost per kernel (calibrate/torch/gpt2_step.py):
 * `kernels` tiny kernels issued back to back, the median per kernel of the
 * host's issue time and of the time until they ran */
static int torch_launch(importer *im, json_t *o)
{
	const char *op;
	int64_t elements, kernels;
	double host, total;
	if (get_str(im, o, "op", &op) < 0 || get_int(im, o, "elements", 1, INT64_MAX, &elements) < 0 ||
	    get_int(im, o, "kernels", 1, INT64_MAX, &kernels) < 0 ||
	    get_pos(im, o, "host_median_s", &host) < 0 || get_pos(im, o, "total_median_s", &total) < 0)
		return -1;
	if (total < host * (1 - 1e-9))
		return bad(im, "total_median_s: %.6g is less than host_median_s %.6g: the kernels "
			       "cannot finish before they are issued", total, host);
	char *samples = samples_key(im, o, "host_samples_s", "host_median_s", host);
	if (!samples)
		return -1;
	int rc = insert(im, "INSERT INTO torch_launch VALUES(?,?,?,?,?,?,?)", "isiidds", im->run,
			op, elements, kernels, host, total, samples);
	free(samples);
	im->st->torch_launch++;
	return rc;
}

/* One training-step point of a plain PyTorch loop: its median step and
 * tokens/s (micro_batch x seq / median_s) and peak memory, or the error
 * (out of memory) that stopped it */
static int torch_step(importer *im, json_t *o)
{
	const char *model, *dtype, *mode;
	int64_t mb, seq;
	if (get_str(im, o, "model", &model) < 0 || get_str(im, o, "dtype", &dtype) < 0 ||
	    get_str(im, o, "mode", &mode) < 0 ||
	    get_int(im, o, "micro_batch", 1, INT64_MAX, &mb) < 0 ||
	    get_int(im, o, "seq", 1, INT64_MAX, &seq) < 0)
		return -1;
	json_t *vocab = json_object_get(o, "vocab");
	if (vocab && (!json_is_integer(vocab) || json_integer_value(vocab) < 1))
		return bad(im, "vocab: expected a positive integer, found %s", type_name(vocab));
	json_t *err = json_object_get(o, "error");
	im->st->torch_step++;
	if (json_is_string(err))
		return insert(im, "INSERT INTO torch_step(run_id, model, micro_batch, seq, dtype,"
				  " mode, vocab, error) VALUES(?,?,?,?,?,?,?,?)", "isiissjs", im->run,
			      model, mb, seq, dtype, mode, vocab, json_string_value(err));
	double med, tps;
	int64_t alloc, reserved;
	if (get_pos(im, o, "median_s", &med) < 0 || get_pos(im, o, "tokens_per_s", &tps) < 0 ||
	    get_int(im, o, "peak_allocated_bytes", 0, INT64_MAX, &alloc) < 0 ||
	    get_int(im, o, "peak_reserved_bytes", 0, INT64_MAX, &reserved) < 0)
		return -1;
	double want = (double)mb * (double)seq / med;
	if (fabs(tps - want) > 1e-3 * want)
		return bad(im, "tokens_per_s: %.6g is not micro_batch x seq / median_s = %.6g", tps,
			   want);
	if (reserved < alloc)
		return bad(im, "peak_reserved_bytes: %lld is less than peak_allocated_bytes %lld",
			   (long long)reserved, (long long)alloc);
	char *samples = samples_text(im, o, med);
	if (!samples)
		return -1;
	int rc = insert(im, "INSERT INTO torch_step(run_id, model, micro_batch, seq, dtype, mode,"
			    " vocab, median_s, tokens_per_s, peak_allocated_bytes, peak_reserved_bytes,"
			    " samples_s) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
			"isiissjddiis", im->run, model, mb, seq, dtype, mode, vocab, med, tps, alloc,
			reserved, samples);
	free(samples);
	return rc;
}

#define KINDS "gemm, gemm-check, hbm-copy, power-idle, power-sustained, power-duty, nccl, " \
	"pcie, torch-launch or torch-step"

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
		else if (!strcmp(kind, "power-duty"))
			rc = power_duty(im, o);
		else if (!strcmp(kind, "nccl"))
			rc = nccl(im, o);
		else if (!strcmp(kind, "pcie"))
			rc = pcie(im, o);
		else if (!strcmp(kind, "torch-launch"))
			rc = torch_launch(im, o);
		else if (!strcmp(kind, "torch-step"))
			rc = torch_step(im, o);
		else
			rc = bad(im, "kind: expected %s, found '%s'", KINDS, kind);
	}
	json_decref(o);
	return rc;
}

/* one integer from a query (a PRAGMA or a count), or -1 */
static int64_t query_int(importer *im, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;
	if (sqlite3_prepare_v2(im->db, sql, -1, &st, NULL) != SQLITE_OK) {
		capsim_diags_add(im->d, NULL, 0, "database: %s", sqlite3_errmsg(im->db));
		return -1;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	else
		capsim_diags_add(im->d, NULL, 0, "database: %s", sqlite3_errmsg(im->db));
	sqlite3_finalize(st);
	return v;
}

/* The tables at CAPSIM_MEASURE_SCHEMA, inside the import's transaction: a
 * new database gets them all; an older one gains the tables it lacks (version
 * 3: torch_launch, torch_step) and, from version 1, runs' new columns. A
 * newer database is refused. */
static int schema(importer *im, const char *db_path)
{
	int64_t version = query_int(im, "PRAGMA user_version");
	if (version < 0)
		return -1;
	if (version > CAPSIM_MEASURE_SCHEMA) {
		capsim_diags_add(im->d, db_path, 0,
				 "schema version %lld is newer than this capsim's %d: "
				 "import with a newer capsim", (long long)version,
				 CAPSIM_MEASURE_SCHEMA);
		return -1;
	}
	if (exec(im, schema_sql) < 0)
		return -1;
	int64_t has = query_int(im, "SELECT count(*) FROM pragma_table_info('runs')"
				    " WHERE name = 'launcher'");
	if (has < 0 || (has == 0 && exec(im, upgrade_1_sql) < 0))
		return -1;
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", CAPSIM_MEASURE_SCHEMA);
	return exec(im, sql);
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

/* Import text (len bytes of the JSON lines at jsonl_path; modified) as one
 * run whose identity is sha and whose source is source. */
static int import_text(char *text, const char *jsonl_path, const char *source,
		       const char *sha, const char *db_path, capsim_import_stats *out,
		       capsim_diags *d)
{
	importer im = { .path = jsonl_path, .source = source, .st = out, .d = d };
	if (sqlite3_open(db_path, &im.db) != SQLITE_OK) {
		capsim_diags_add(d, db_path, 0, "cannot open the database: %s",
				 im.db ? sqlite3_errmsg(im.db) : "out of memory");
		sqlite3_close(im.db);
		return -1;
	}
	sqlite3_busy_timeout(im.db, 5000);
	int rc = exec(&im, "BEGIN IMMEDIATE") < 0 ? -1 : 0;
	if (rc == 0)
		rc = schema(&im, db_path);
	if (rc == 0) {
		sqlite3_stmt *st;
		if (sqlite3_prepare_v2(im.db, "SELECT id FROM runs WHERE sha256 = ?", -1, &st,
				       NULL) != SQLITE_OK) {
			rc = -1;
			capsim_diags_add(d, NULL, 0, "database: %s", sqlite3_errmsg(im.db));
		} else {
			sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
			if (sqlite3_step(st) == SQLITE_ROW) {
				capsim_diags_add(d, source, 0,
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
	if (rc == 0 && out->gemm + out->gemm_failed + out->copy + out->power + out->power_duty +
			       out->nccl + out->pcie + out->torch_launch + out->torch_step == 0) {
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
	return rc;
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
	int rc = import_text(text, jsonl_path, jsonl_path, sha, db_path, out, d);
	free(text);
	return rc;
}

int capsim_measure_import_converted(const char *jsonl_path, const char *source_path,
				    const char *db_path, capsim_import_stats *out,
				    capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	size_t len, slen;
	char *src = slurp(source_path, &slen, d);
	if (!src)
		return -1;
	char sha[65];
	capsim_sha256_hex(src, slen, sha);
	free(src);
	char *text = slurp(jsonl_path, &len, d);
	if (!text)
		return -1;
	int rc = import_text(text, jsonl_path, source_path, sha, db_path, out, d);
	free(text);
	return rc;
}
