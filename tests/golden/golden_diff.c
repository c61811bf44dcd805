/* golden_diff.c - compare a capsim JSON report with its golden file, key by
 * key, or write a report in the normalised form the golden files are kept in.
 *
 *   golden_diff [--root DIR] EXPECTED ACTUAL   exit 0 same, 1 different, 2 error
 *   golden_diff [--root DIR] --normalise FILE  the normalised document on stdout
 *
 * Both documents are normalised before they are compared (normalising is
 * idempotent, so a golden file can be compared with a fresh report). The
 * normalisation is all that is ignored, and it is kept to what differs from
 * one machine or one commit to the next while the model stays the same:
 *   1. "capsim_version" (it holds the git commit): its value becomes
 *      "(ignored)"; the key itself must still be there.
 *   2. A string that begins with DIR/ (--root: the catalog root, whose files
 *      capsim names by absolute path) loses that prefix.
 *   3. "inputs": the first entry is the scenario (cli_json.c puts it first)
 *      and is kept whole, its SHA-256 included. The other entries are catalog
 *      files: their paths are compared, their "sha256" becomes "(ignored)",
 *      since a catalog edit (a new part, a citation) changes every digest
 *      without changing a result, and what it does change shows in the
 *      numbers.
 *
 * Comparison: numbers (integer or real alike) are equal when
 * |a - b| <= 1e-9 x max(|a|, |b|) (capsim prints 10 significant digits, so
 * this allows the last digit's rounding and nothing of the model); strings,
 * booleans and null exactly; arrays element by element; objects key by key,
 * in any order. A missing or an extra key or element is a difference. Every
 * difference is printed on its own line as
 *   key.path[3].name: expected X, found Y
 * with "nothing" for a missing side. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#define REL_TOL 1e-9
#define IGNORED "(ignored)"

static const char *root_dir; /* --root, without a trailing '/'; or NULL */
static long n_diffs;

/* Rule 2: drop root_dir + "/" from the front of every string of j. */
static void strip_root(json_t *j)
{
	size_t i, n = root_dir ? strlen(root_dir) : 0;
	const char *key;
	json_t *v;
	if (n == 0)
		return;
	if (json_is_string(j)) {
		const char *s = json_string_value(j);
		if (strncmp(s, root_dir, n) == 0 && s[n] == '/') {
			char *rest = strdup(s + n + 1);
			json_string_set(j, rest);
			free(rest);
		}
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v)
			strip_root(v);
	} else if (json_is_object(j)) {
		json_object_foreach(j, key, v)
			strip_root(v);
	}
}

/* Rules 1 to 3, in place, on a top-level object (anything else is left). */
static void normalise(json_t *doc)
{
	size_t i;
	json_t *in;
	if (!json_is_object(doc))
		return;
	if (json_object_get(doc, "capsim_version"))
		json_object_set_new(doc, "capsim_version", json_string(IGNORED));
	strip_root(doc);
	json_t *inputs = json_object_get(doc, "inputs");
	json_array_foreach(inputs, i, in) {
		if (i > 0 && json_is_object(in) && json_object_get(in, "sha256"))
			json_object_set_new(in, "sha256", json_string(IGNORED));
	}
}

/* A value as it is printed in a report line: a number in the fewest digits
 * (10 to 17) that read back as the same double, the rest as compact JSON,
 * cut at 160 characters. */
static void show(const json_t *j, char *buf, size_t cap)
{
	if (!j) {
		snprintf(buf, cap, "nothing");
		return;
	}
	if (json_is_number(j)) {
		double v = json_number_value(j);
		for (int digits = 10; digits <= 17; digits++) {
			snprintf(buf, cap, "%.*g", digits, v);
			if (strtod(buf, NULL) == v)
				break;
		}
		return;
	}
	char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
	if (!s) {
		snprintf(buf, cap, "(unprintable)");
		return;
	}
	if (strlen(s) >= cap && cap > 4)
		snprintf(buf, cap, "%.*s...", (int)(cap - 4), s);
	else
		snprintf(buf, cap, "%s", s);
	free(s);
}

static void report(const char *path, const json_t *want, const json_t *got)
{
	char a[168], b[168];
	show(want, a, sizeof a);
	show(got, b, sizeof b);
	printf("%s: expected %s, found %s\n", path[0] ? path : "(document)", a, b);
	n_diffs++;
}

static int numbers_equal(double a, double b)
{
	if (a == b)
		return 1;
	return fabs(a - b) <= REL_TOL * fmax(fabs(a), fabs(b));
}

/* path + ".key" or path + "[i]" into a new string (the caller frees it) */
static char *child_key(const char *path, const char *key)
{
	size_t n = strlen(path) + strlen(key) + 2;
	char *p = malloc(n);
	if (!p) {
		fprintf(stderr, "golden_diff: out of memory\n");
		exit(2);
	}
	snprintf(p, n, "%s%s%s", path, path[0] ? "." : "", key);
	return p;
}

static char *child_index(const char *path, size_t i)
{
	size_t n = strlen(path) + 24;
	char *p = malloc(n);
	if (!p) {
		fprintf(stderr, "golden_diff: out of memory\n");
		exit(2);
	}
	snprintf(p, n, "%s[%zu]", path, i);
	return p;
}

/* Compare want (the golden value) with got at path, reporting each difference. */
static void compare(const char *path, json_t *want, json_t *got)
{
	if (json_is_number(want) && json_is_number(got)) {
		if (!numbers_equal(json_number_value(want), json_number_value(got)))
			report(path, want, got);
		return;
	}
	if (json_typeof(want) != json_typeof(got)) {
		report(path, want, got);
		return;
	}
	switch (json_typeof(want)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *v;
		/* the golden keys, in the golden order, then the keys only got has */
		json_object_foreach(want, key, v) {
			char *p = child_key(path, key);
			json_t *g = json_object_get(got, key);
			if (g)
				compare(p, v, g);
			else
				report(p, v, NULL);
			free(p);
		}
		json_object_foreach(got, key, v) {
			if (json_object_get(want, key))
				continue;
			char *p = child_key(path, key);
			report(p, NULL, v);
			free(p);
		}
		return;
	}
	case JSON_ARRAY: {
		size_t nw = json_array_size(want), ng = json_array_size(got);
		for (size_t i = 0; i < nw || i < ng; i++) {
			char *p = child_index(path, i);
			if (i < nw && i < ng)
				compare(p, json_array_get(want, i), json_array_get(got, i));
			else /* json_array_get past the end is NULL: "nothing" */
				report(p, json_array_get(want, i), json_array_get(got, i));
			free(p);
		}
		return;
	}
	case JSON_STRING:
		if (strcmp(json_string_value(want), json_string_value(got)) != 0)
			report(path, want, got);
		return;
	default: /* true, false, null: the same type is the same value */
		return;
	}
}

static json_t *load(const char *file)
{
	json_error_t e;
	json_t *j = json_load_file(file, JSON_REJECT_DUPLICATES, &e);
	if (!j) {
		fprintf(stderr, "golden_diff: %s:%d: %s\n", file, e.line, e.text);
		return NULL;
	}
	normalise(j);
	return j;
}

static int usage(void)
{
	fprintf(stderr, "usage: golden_diff [--root DIR] EXPECTED ACTUAL\n"
			"       golden_diff [--root DIR] --normalise FILE\n");
	return 2;
}

int main(int argc, char **argv)
{
	int i = 1, normalise_only = 0;
	/* options: --root DIR, --normalise */
	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) {
			static char root[4096];
			snprintf(root, sizeof root, "%s", argv[++i]);
			size_t n = strlen(root);
			while (n > 1 && root[n - 1] == '/')
				root[--n] = '\0';
			root_dir = root;
		} else if (strcmp(argv[i], "--normalise") == 0) {
			normalise_only = 1;
		} else {
			return usage();
		}
	}
	if (argc - i != (normalise_only ? 1 : 2))
		return usage();

	if (normalise_only) {
		json_t *j = load(argv[i]);
		if (!j)
			return 2;
		int rc = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER |
						      JSON_REAL_PRECISION(10));
		fputc('\n', stdout);
		json_decref(j);
		return rc == 0 && fflush(stdout) == 0 ? 0 : 2;
	}

	json_t *want = load(argv[i]), *got = want ? load(argv[i + 1]) : NULL;
	if (!want || !got) {
		json_decref(want);
		return 2;
	}
	compare("", want, got);
	json_decref(want);
	json_decref(got);
	if (n_diffs)
		printf("golden_diff: %ld difference%s between %s (expected) and %s (found)\n",
		       n_diffs, n_diffs == 1 ? "" : "s", argv[i], argv[i + 1]);
	return n_diffs ? 1 : 0;
}
