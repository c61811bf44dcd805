/* api.c - libcapsim's scenarios, results and the result table; see capsim.h.
 * Every call goes through the same code as the capsim command: the loader
 * and its --set edits (io/scenario.h), the evaluation face (eval.h), the
 * shipped error model (err.h) and the JSON head (head.h). */
#include "capsim.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "api_int.h"
#include "catalog.h"
#include "eval.h"
#include "head.h"
#include "scenario.h"
#include "xalloc.h"

#ifndef CAPSIM_VERSION
#define CAPSIM_VERSION "0.0.0"
#endif
#ifndef CAPSIM_GIT_REV
#define CAPSIM_GIT_REV "unknown"
#endif

struct capsim_scn {
	capsim_catalog *cat;         /* NULL until a load */
	capsim_scenario *s;          /* NULL: no scenario */
	capsim_err_model *errors;    /* the shipped model, loaded on the first banded run */
	char *diag;                  /* the last failure's diagnostics, "" none */
};

struct capsim_res {
	capsim_result r;
	json_t *head;                /* the JSON head of the scenario it was evaluated from */
};

/* ---- the process, once ------------------------------------------------------- */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_process(void)
{
	capsim_init();
}

void capsim_api_init(void)
{
	pthread_once(&init_once, init_process);
}

const char *capsim_api_version(void)
{
	return CAPSIM_VERSION " (git " CAPSIM_GIT_REV ")";
}

const char *capsim_library_version(int *major, int *minor, int *patch)
{
	if (major)
		*major = CAPSIM_VERSION_MAJOR;
	if (minor)
		*minor = CAPSIM_VERSION_MINOR;
	if (patch)
		*patch = CAPSIM_VERSION_PATCH;
	return capsim_api_version();
}

const char *capsim_status_name(int status)
{
	static const char *const names[] = { "ok", "runtime", "input", "usage", "absent" };
	return status >= 0 && status <= CAPSIM_E_ABSENT ? names[status] : NULL;
}

const char *capsim_data_dir(void)
{
	capsim_api_init();
	return capsim_catalog_default_root();
}

void capsim_free(void *p)
{
	free(p);
}

/* ---- diagnostics --------------------------------------------------------------- */

char *capsim_api_diags_text(const capsim_diags *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return capsim_xstrdup("capsim: cannot hold the diagnostics");
	capsim_diags_print(d, f);
	if (fclose(f) != 0 || !text) {
		free(text);
		return capsim_xstrdup("capsim: cannot hold the diagnostics");
	}
	return text;
}

int capsim_api_status(const capsim_diags *d)
{
	return capsim_diags_runtime(d) ? CAPSIM_E_RUNTIME : CAPSIM_E_INPUT;
}

/* h's diagnostics: d's text (status the failure's), or "" (status OK) */
static int keep(capsim_scn *h, const capsim_diags *d, int status)
{
	free(h->diag);
	h->diag = status == CAPSIM_OK ? capsim_xstrdup("") : capsim_api_diags_text(d);
	return status;
}

/* a usage failure of h, in words */
static int usage(capsim_scn *h, const char *what)
{
	free(h->diag);
	h->diag = capsim_xasprintf("capsim: %s\n", what);
	return CAPSIM_E_USAGE;
}

/* ---- scenarios ---------------------------------------------------------------- */

capsim_scn *capsim_scn_new(void)
{
	capsim_api_init();
	capsim_scn *h = calloc(1, sizeof *h);
	if (h && !(h->diag = strdup(""))) {
		free(h);
		h = NULL;
	}
	return h;
}

static void drop_scenario(capsim_scn *h)
{
	free(h->s);
	capsim_catalog_free(h->cat);
	h->s = NULL;
	h->cat = NULL;
}

void capsim_scn_free(capsim_scn *h)
{
	if (!h)
		return;
	drop_scenario(h);
	capsim_err_model_free(h->errors);
	free(h->diag);
	free(h);
}

/* where path is: itself where such a file exists, else for a bare name (no
 * '/') the catalog's scenarios/NAME or NAME.xml where one exists, else path
 * (whose load then says it is missing); NULL: scenarios/default.xml. The
 * caller frees it. */
static char *scenario_path(const char *path)
{
	const char *root = capsim_catalog_default_root();
	struct stat st;
	if (!path)
		return capsim_xasprintf("%s/scenarios/default.xml", root);
	if (stat(path, &st) == 0 || strchr(path, '/'))
		return capsim_xstrdup(path);
	static const char *const ends[] = { "", ".xml" };
	for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
		char *p = capsim_xasprintf("%s/scenarios/%s%s", root, path, ends[i]);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			return p;
		free(p);
	}
	return capsim_xstrdup(path);
}

int capsim_scn_load(capsim_scn *h, const char *path)
{
	if (!h)
		return CAPSIM_E_USAGE;
	drop_scenario(h);
	capsim_diags d = { 0 };
	char *file = scenario_path(path);
	h->cat = capsim_catalog_create();
	h->s = capsim_xcalloc(1, sizeof *h->s);
	int rc = capsim_catalog_load_root(h->cat, capsim_catalog_default_root(), NULL, &d) == 0 &&
			 capsim_scenario_load(file, h->cat, NULL, 0, h->s, &d) == 0 ?
		 CAPSIM_OK :
		 capsim_api_status(&d);
	free(file);
	if (rc != CAPSIM_OK)
		drop_scenario(h);
	keep(h, &d, rc);
	capsim_diags_free(&d);
	return rc;
}

int capsim_scn_set_many(capsim_scn *h, const char *const *paths, const char *const *values,
			size_t n)
{
	if (!h)
		return CAPSIM_E_USAGE;
	if (!h->s)
		return usage(h, "no scenario loaded (capsim_scn_load)");
	if (n && (!paths || !values))
		return usage(h, "capsim_scn_set: no path or no value");
	capsim_set *sets = capsim_xcalloc(n ? n : 1, sizeof *sets);
	for (size_t i = 0; i < n; i++) {
		if (!paths[i] || !values[i]) {
			free(sets);
			return usage(h, "capsim_scn_set: no path or no value");
		}
		sets[i] = (capsim_set){ .path = paths[i], .value = values[i] };
	}
	capsim_diags d = { 0 };
	int rc = capsim_scenario_set_many(h->s, h->cat, sets, n, &d) == 0 ? CAPSIM_OK :
									     capsim_api_status(&d);
	free(sets);
	keep(h, &d, rc);
	capsim_diags_free(&d);
	return rc;
}

int capsim_scn_set(capsim_scn *h, const char *path, const char *value)
{
	return capsim_scn_set_many(h, &path, &value, 1);
}

const char *capsim_scn_diagnostics(const capsim_scn *h)
{
	return h ? h->diag : "capsim: no handle\n";
}

int capsim_scn_xml(capsim_scn *h, char **out)
{
	if (!h || !out)
		return CAPSIM_E_USAGE;
	*out = NULL;
	if (!h->s)
		return usage(h, "no scenario loaded (capsim_scn_load)");
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	int bad = !f || capsim_scenario_write_xml(h->s, f) < 0;
	if (f && fclose(f) != 0)
		bad = 1;
	if (bad) {
		free(*out);
		*out = NULL;
		return usage(h, "cannot write the scenario");
	}
	return keep(h, NULL, CAPSIM_OK);
}

/* ---- evaluation ----------------------------------------------------------------- */

capsim_err_model *capsim_api_err_model(capsim_diags *d)
{
	capsim_diags got = { 0 };
	capsim_err_model *m = capsim_err_model_load_root(capsim_catalog_default_root(), &got);
	/* as the capsim command says it: a catalog without its error model is
	 * bad input, and CAPSIM_NO_INTERVALS does without it */
	for (size_t i = 0; !m && i < got.n; i++)
		capsim_diags_add_at(d, got.v[i].where ? got.v[i].where : "the error model",
				    "the error model: %s (CAPSIM_NO_INTERVALS leaves the bands "
				    "out; capsim fit errors refits the model)", got.v[i].msg);
	capsim_diags_free(&got);
	return m;
}

int capsim_scn_evaluate(capsim_scn *h, unsigned flags, capsim_res **out)
{
	if (!h || !out)
		return CAPSIM_E_USAGE;
	*out = NULL;
	if (!h->s)
		return usage(h, "no scenario loaded (capsim_scn_load)");
	capsim_diags d = { 0 };
	int bands = !(flags & CAPSIM_NO_INTERVALS);
	if (bands && !h->errors && !(h->errors = capsim_api_err_model(&d))) {
		int rc = keep(h, &d, capsim_api_status(&d));
		capsim_diags_free(&d);
		return rc;
	}
	capsim_res *r = capsim_xcalloc(1, sizeof *r);
	capsim_eval_opts o = { .errors = bands ? h->errors : NULL };
	if (capsim_eval(h->s, &o, &r->r, &d) < 0) {
		free(r);
		int rc = keep(h, &d, CAPSIM_E_INPUT); /* as capsim run: no I/O, the input refused */
		capsim_diags_free(&d);
		return rc;
	}
	r->head = capsim_api_json_head(h->cat, h->s, capsim_api_version());
	*out = r;
	return keep(h, &d, CAPSIM_OK);
}

void capsim_res_free(capsim_res *r)
{
	if (!r)
		return;
	capsim_result_free(&r->r);
	json_decref(r->head);
	free(r);
}

int capsim_res_json(const capsim_res *r, char **out)
{
	if (!r || !out)
		return CAPSIM_E_USAGE;
	json_t *o = json_deep_copy(r->head);
	capsim_result_json(&r->r, o);
	*out = capsim_api_json_text(o, 10);
	json_decref(o);
	return CAPSIM_OK;
}

char *capsim_api_json_text(json_t *o, int precision)
{
	/* as the capsim command prints it, with its newline */
	char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
					   JSON_REAL_PRECISION(precision));
	if (!text)
		capsim_xmalloc((size_t)-1); /* jansson's only failure: out of memory */
	char *line = capsim_xasprintf("%s\n", text);
	free(text);
	return line;
}

/* ---- the result table ---------------------------------------------------------- */

size_t capsim_key_count(void)
{
	return capsim_result_n_keys;
}

const char *capsim_key_name(size_t i)
{
	return i < capsim_result_n_keys ? capsim_result_keys[i].key : NULL;
}

const char *capsim_key_unit(const char *name)
{
	const capsim_result_key *k = name ? capsim_result_key_find(name) : NULL;
	return k ? k->unit : NULL;
}

const char *capsim_key_description(const char *name)
{
	const capsim_result_key *k = name ? capsim_result_key_find(name) : NULL;
	return k ? k->doc : NULL;
}

int capsim_key_kind(const char *name)
{
	const capsim_result_key *k = name ? capsim_result_key_find(name) : NULL;
	if (!k)
		return -1;
	switch (k->kind) {
	case CAPSIM_RK_REAL: return CAPSIM_KEY_NUMBER;
	case CAPSIM_RK_INT:
	case CAPSIM_RK_LONG: return CAPSIM_KEY_INTEGER;
	case CAPSIM_RK_BOOL: return CAPSIM_KEY_BOOLEAN;
	case CAPSIM_RK_TEXT: return CAPSIM_KEY_TEXT;
	default: return CAPSIM_KEY_STRUCTURED;
	}
}

int capsim_key_banded(const char *name)
{
	const capsim_result_key *k = name ? capsim_result_key_find(name) : NULL;
	return k ? k->band != CAPSIM_BAND_NONE : -1;
}

/* ---- a result's values ------------------------------------------------------------ */

int capsim_res_has(const capsim_res *r, const char *name)
{
	const capsim_result_key *k = r && name ? capsim_result_key_find(name) : NULL;
	return k && capsim_result_has(&r->r, k);
}

/* level 80 or 95 as the error model's (CAPSIM_ERR_80, _95), or -1 */
static int level_of(int percent)
{
	return percent == 80 ? CAPSIM_ERR_80 : percent == 95 ? CAPSIM_ERR_95 : -1;
}

/* name as one end of a band (step_time_s_lo ...): its value into *v */
static int band_end(const capsim_res *r, const char *name, double *v)
{
	int end;
	const capsim_result_key *k = capsim_result_end_find(name, &end);
	if (!k)
		return CAPSIM_E_USAGE;
	/* ends: lo, hi at 80%, then lo, hi at 95% */
	double lo, hi;
	int level = end / 2 == 0 ? CAPSIM_ERR_80 : CAPSIM_ERR_95;
	if (!capsim_result_has(&r->r, k) || !capsim_result_band(&r->r, k, level, &lo, &hi))
		return CAPSIM_E_ABSENT;
	*v = end % 2 == 0 ? lo : hi;
	return CAPSIM_OK;
}

int capsim_res_number(const capsim_res *r, const char *name, double *v)
{
	if (!r || !name || !v)
		return CAPSIM_E_USAGE;
	const capsim_result_key *k = capsim_result_key_find(name);
	if (!k)
		return band_end(r, name, v);
	if (k->kind == CAPSIM_RK_TEXT || k->kind == CAPSIM_RK_JSON)
		return CAPSIM_E_USAGE;
	if (!capsim_result_has(&r->r, k))
		return CAPSIM_E_ABSENT;
	*v = capsim_result_number(&r->r, k);
	return CAPSIM_OK;
}

int capsim_res_text(const capsim_res *r, const char *name, const char **v)
{
	if (!r || !name || !v)
		return CAPSIM_E_USAGE;
	const capsim_result_key *k = capsim_result_key_find(name);
	if (!k || k->kind != CAPSIM_RK_TEXT)
		return CAPSIM_E_USAGE;
	if (!capsim_result_has(&r->r, k))
		return CAPSIM_E_ABSENT;
	*v = capsim_result_string(&r->r, name);
	return *v ? CAPSIM_OK : CAPSIM_E_ABSENT;
}

int capsim_res_band(const capsim_res *r, const char *name, int level, double *lo, double *hi)
{
	if (!r || !name || !lo || !hi || level_of(level) < 0)
		return CAPSIM_E_USAGE;
	const capsim_result_key *k = capsim_result_key_find(name);
	if (!k)
		return CAPSIM_E_USAGE;
	if (!capsim_result_has(&r->r, k) || !capsim_result_band(&r->r, k, level_of(level), lo, hi))
		return CAPSIM_E_ABSENT;
	return CAPSIM_OK;
}

/* ---- collectives ------------------------------------------------------------------- */

int capsim_scn_collective(capsim_scn *h, const char *op, double bytes, int ranks, char **out)
{
	if (!h || !out)
		return CAPSIM_E_USAGE;
	*out = NULL;
	if (!h->s)
		return usage(h, "no scenario loaded (capsim_scn_load)");
	capsim_diags d = { 0 };
	int code = op ? capsim_coll_parse(op) : -1;
	if (code < 0)
		capsim_diags_add_at(&d, "op", "expected a collective (all-reduce, "
				    "all-gather, reduce-scatter, broadcast, reduce, all-to-all, "
				    "...), found '%s'", op ? op : "nothing");
	else if (!(bytes >= 1 && bytes <= 17592186044416.0) || bytes != (double)(long long)bytes)
		capsim_diags_add_at(&d, "bytes", "expected a whole number of bytes from 1 B to "
				    "16 TiB, found %g", bytes);
	else if (ranks < 0)
		capsim_diags_add_at(&d, "ranks", "expected 0 (every GPU) or more, found %d", ranks);
	capsim_coll_point p;
	capsim_coll_req req = { .op = (capsim_coll)code, .ranks = ranks, .algo = -1, .proto = -1,
				.fold = -1, .seed = (uint64_t)h->s->seed };
	if (d.n || capsim_eval_collectives(h->s, &req, &bytes, 1, &p, &d) < 0) {
		int rc = keep(h, &d, capsim_api_status(&d));
		capsim_diags_free(&d);
		return rc;
	}
	/* as capsim collective --json --no-intervals prints one size */
	json_t *o = capsim_api_json_head(h->cat, h->s, capsim_api_version());
	json_t *one = capsim_coll_point_json(&p);
	json_object_update(o, one);
	json_decref(one);
	*out = capsim_api_json_text(o, 10);
	json_decref(o);
	return keep(h, &d, CAPSIM_OK);
}
