/* measure.c - imports into the store: calibrate/'s JSON lines, and the
 * records of a parsed nccl-tests log; see measure.h. */
#include "measure.h"

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
#include "sha256.h"
#include "storeint.h"
#include "xalloc.h"

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
	*out = "";
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
	*out = 0;
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
	*out = 0;
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
	*out = 0;
	if (!json_is_number(v))
		return bad(im, "%s: expected a number, found %s", key, type_name(v));
	*out = json_number_value(v);
	if (!(*out > 0) || !isfinite(*out))
		return bad(im, "%s: expected a positive number, found %g", key, *out);
	return 0;
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
	double med = gsl_stats_median(v, 1, n);
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
	im->run = sqlite3_last_insert_rowid(im->s->db);
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
	bad(im, "dtype: expected one of %s, found '%s'", list, dtype);
	return 0;
}

/* One nccl row, checked whichever way it came (a JSON line or a record):
 * a collective the store holds, a known type and reduction, ranks within
 * the run's, count and bytes that agree with the operation and type, and
 * positive seconds. algbw = bytes / median_s / 1e9 and busbw = algbw x
 * nccl-tests' factor (collective.h) are computed here. */
static int nccl_row(importer *im, const capsim_measure_nccl *r, const char *samples_json)
{
	int coll = store_coll(r->op);
	if (coll < 0)
		return bad(im, "op: expected one of all_reduce, all_gather, reduce_scatter, "
			   "alltoall, broadcast, sendrecv, found '%s'", r->op);
	int size = nccl_type_size(im, r->dtype);
	if (size == 0)
		return -1;
	size_t i = 0;
	while (redops[i] && strcmp(redops[i], r->redop))
		i++;
	if (!redops[i])
		return bad(im, "redop: expected one of sum, prod, max, min, avg, none, found '%s'",
			   r->redop);
	if (r->ranks < 1 || r->ranks > (1 << 24))
		return bad(im, "ranks: expected an integer from 1 to %d, found %lld", 1 << 24,
			   (long long)r->ranks);
	if (r->nodes < 1 || r->nodes > r->ranks)
		return bad(im, "nodes: expected an integer from 1 to %lld, found %lld",
			   (long long)r->ranks, (long long)r->nodes);
	if (r->bytes < 1 || r->count < 1)
		return bad(im, "%s: expected a positive integer, found %lld",
			   r->bytes < 1 ? "bytes" : "count",
			   (long long)(r->bytes < 1 ? r->bytes : r->count));
	if (im->ranks > 0 && r->ranks != im->ranks)
		return bad(im, "ranks: expected the machine line's %lld, found %lld",
			   (long long)im->ranks, (long long)r->ranks);
	int64_t per = per_rank_count(coll) ? r->ranks : 1;
	if (r->count > INT64_MAX / per / size || r->count * per * size != r->bytes)
		return bad(im, "count: %lld is not bytes / (%lld x %d) for %s %s = %lld",
			   (long long)r->count, (long long)per, size, r->op, r->dtype,
			   (long long)(r->bytes / (per * size)));
	if (r->wrong < 0)
		return bad(im, "wrong: expected an integer >= 0, found %lld", (long long)r->wrong);
	if (!(r->median_s > 0) || !isfinite(r->median_s))
		return bad(im, "median_s: expected positive seconds, found %g", r->median_s);
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
	if (get_str(im, o, "op", &r.op) < 0)
		return -1;
	if (store_coll(r.op) < 0)
		return bad(im, "op: expected one of all_reduce, all_gather, reduce_scatter, "
			   "alltoall, broadcast, sendrecv, found '%s'", r.op);
	if (get_str(im, o, "dtype", &r.dtype) < 0 || nccl_type_size(im, r.dtype) == 0 ||
	    get_name(im, o, "redop", redops, &r.redop) < 0 ||
	    get_int(im, o, "ranks", 1, 1 << 24, &r.ranks) < 0 ||
	    get_int(im, o, "nodes", 1, r.ranks, &r.nodes) < 0 ||
	    get_int(im, o, "bytes", 1, INT64_MAX, &r.bytes) < 0 ||
	    get_int(im, o, "count", 1, INT64_MAX, &r.count) < 0 ||
	    get_str(im, o, "algo", &r.algo) < 0 || get_str(im, o, "proto", &r.proto) < 0 ||
	    get_int(im, o, "in_place", 0, 1, &in_place) < 0 ||
	    get_int(im, o, "wrong", 0, INT64_MAX, &r.wrong) < 0 ||
	    get_pos(im, o, "median_s", &r.median_s) < 0 ||
	    get_pos(im, o, "algbw_gb_per_s", &algbw) < 0 ||
	    get_nonneg(im, o, "busbw_gb_per_s", &busbw) < 0)
		return -1;
	r.in_place = (int)in_place;
	int coll = store_coll(r.op);
	if (coll >= 0 && r.ranks > 0) {
		double med = r.median_s, bytes = (double)r.bytes;
		double factor = capsim_busbw_factor((capsim_coll)coll, (int)r.ranks);
		if (fabs(algbw * 1e9 * med - bytes) > 1e-4 * bytes)
			return bad(im, "algbw_gb_per_s: %.6g is not bytes / median_s / 1e9 = %.6g",
				   algbw, bytes / med / 1e9);
		double want = algbw * factor;
		if (fabs(busbw - want) > 0.01 * want + 1e-9)
			return bad(im, "busbw_gb_per_s: %.6g is not algbw x %.4g (%s at %lld ranks) "
				   "= %.6g", busbw, factor, r.op, (long long)r.ranks, want);
	}
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
	double med = gsl_stats_median(v, 1, n);
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
	       s->torch_launch + s->torch_step;
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
	size_t len;
	char *text = slurp(jsonl_path, &len, d);
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
		capsim_diags_add(d, jsonl_path, line, "contains a NUL byte (JSON lines are text)");
		free(text);
		return -1;
	}
	int rc = import_text(text, jsonl_path, jsonl_path, sha, db_path, out, d);
	free(text);
	return rc;
}

/* the machine of a record-level import as a runs row */
static int machine_rec(importer *im, const capsim_measure_machine *m, const char *sha)
{
	static const char *const launchers[] = { "single-process", "mpi", NULL };
	size_t i = 0;
	while (m->launcher && launchers[i] && strcmp(launchers[i], m->launcher))
		i++;
	if (m->launcher && !launchers[i])
		return bad(im, "launcher: expected single-process or mpi, found '%s'", m->launcher);
	if (!m->program || !m->program[0] || !m->gpu || !m->date)
		return bad(im, "machine: expected a program, a date and a GPU name, found %s missing",
			   !m->program || !m->program[0] ? "the program" : !m->gpu ? "the GPU" : "the date");
	if (m->ranks < 0 || m->nodes < 0 || (m->ranks > 0 && m->nodes > m->ranks))
		return bad(im, "nodes: expected from 1 to the ranks (%lld), found %lld",
			   (long long)m->ranks, (long long)m->nodes);
	char now[32];
	time_t t = time(NULL);
	struct tm tm;
	strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
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
	if (r->n_samples == 0)
		return bad(im, "samples_s: expected one or more seconds, found none"), NULL;
	json_t *a = json_array();
	double *v = capsim_xcalloc(r->n_samples, sizeof *v);
	for (size_t i = 0; i < r->n_samples; i++) {
		v[i] = r->samples_s[i];
		json_array_append_new(a, json_real(v[i]));
		if (!(v[i] > 0) || !isfinite(v[i])) {
			bad(im, "samples_s[%zu]: expected positive seconds, found %g", i, v[i]);
			json_decref(a);
			free(v);
			return NULL;
		}
	}
	double med = gsl_stats_median(v, 1, r->n_samples);
	free(v);
	char *text = NULL;
	if (fabs(med - r->median_s) > 1e-6 * r->median_s + 1e-12)
		bad(im, "median_s: %.9g is not the median of samples_s (%.9g)", r->median_s, med);
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
	importer im = { .path = source, .source = source, .st = out, .d = d };
	if (n == 0) {
		capsim_diags_add(d, source, 0, "no measurements to import");
		return -1;
	}
	if (!sha256 || strlen(sha256) != 64 || strspn(sha256, "0123456789abcdef") != 64) {
		capsim_diags_add(d, source, 0, "SHA-256: expected 64 lowercase hex digits, found '%s'",
				 sha256 ? sha256 : "");
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
