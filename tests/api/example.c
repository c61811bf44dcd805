/* example.c - a program of libcapsim's, built against the installed library
 * alone (cc example.c $(pkg-config --cflags --libs capsim)):
 *
 *   example SCENARIO [PATH=VALUE]... [--json FILE]
 *
 * loads SCENARIO (a file, or a shipped scenario's name), makes each edit as
 * `capsim run --set PATH=VALUE` does, evaluates it with its bands, and prints
 * every key of the result table the result has, one "KEY VALUE" line each
 * (numbers to 17 digits, booleans true or false, texts as they are), each
 * banded key's ends after it (KEY_lo, KEY_hi, KEY_lo95, KEY_hi95); with
 * --json, the whole result as `capsim run --json` prints it into FILE. It
 * checks on the way that a band's end read by its JSON name (KEY_lo) is the
 * band's, that a key the result lacks reads as absent and one the table
 * lacks as a usage error.
 * Exit status: 0, or the failing call's status with its diagnostics on
 * standard error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capsim.h>

/* a band's end read by its JSON name (KEY_lo ...) is the band's: 0, or 1
 * after saying how it differs */
static int check_end(const capsim_res *r, const char *key, const char *end, double want)
{
	char name[160];
	double v;
	snprintf(name, sizeof name, "%s_%s", key, end);
	if (capsim_res_number(r, name, &v) == CAPSIM_OK && v == want)
		return 0;
	fprintf(stderr, "example: %s by name is not the band's end\n", name);
	return 1;
}

/* one key of r on standard output, with its band's ends; 0, or 1 where a
 * call answered otherwise than the header promises */
static int print_key(const capsim_res *r, const char *key)
{
	const char *text;
	double v, lo, hi;
	int kind = capsim_key_kind(key), bad = 0;
	if (kind == CAPSIM_KEY_STRUCTURED)
		return 0;
	if (!capsim_res_has(r, key)) {
		/* a key of the table this result has no value of */
		int st = kind == CAPSIM_KEY_TEXT ? capsim_res_text(r, key, &text) :
						   capsim_res_number(r, key, &v);
		if (st != CAPSIM_E_ABSENT)
			fprintf(stderr, "example: %s is absent, yet reads as %d\n", key, st);
		return st != CAPSIM_E_ABSENT;
	}
	if (kind == CAPSIM_KEY_TEXT && capsim_res_text(r, key, &text) == CAPSIM_OK)
		printf("%s %s\n", key, text);
	else if (kind == CAPSIM_KEY_BOOLEAN && capsim_res_number(r, key, &v) == CAPSIM_OK)
		printf("%s %s\n", key, v != 0 ? "true" : "false");
	else if (capsim_res_number(r, key, &v) == CAPSIM_OK)
		printf("%s %.17g\n", key, v);
	static const int levels[] = { 80, 95 };
	static const char *const ends[][2] = { { "lo", "hi" }, { "lo95", "hi95" } };
	for (int l = 0; l < 2; l++) {
		if (capsim_res_band(r, key, levels[l], &lo, &hi) != CAPSIM_OK)
			continue;
		printf("%s_%s %.17g\n%s_%s %.17g\n", key, ends[l][0], lo, key, ends[l][1], hi);
		bad |= check_end(r, key, ends[l][0], lo) | check_end(r, key, ends[l][1], hi);
	}
	return bad;
}

/* the result's JSON into path */
static int write_json(const capsim_res *r, const char *path)
{
	char *json;
	if (capsim_res_json(r, &json) != CAPSIM_OK)
		return 1;
	FILE *f = fopen(path, "w");
	int bad = !f || fputs(json, f) == EOF;
	if (f && fclose(f) != 0)
		bad = 1;
	capsim_free(json);
	if (bad)
		fprintf(stderr, "example: cannot write %s\n", path);
	return bad;
}

/* each PATH=VALUE argument made as an edit of h; 0, or the status */
static int edit(capsim_scn *h, int argc, char **argv, const char **json)
{
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
			*json = argv[++i];
			continue;
		}
		char *eq = strchr(argv[i], '=');
		if (!eq) {
			fprintf(stderr, "example: expected PATH=VALUE, found '%s'\n", argv[i]);
			return CAPSIM_E_USAGE;
		}
		*eq = '\0';
		int st = capsim_scn_set(h, argv[i], eq + 1);
		if (st != CAPSIM_OK)
			return st;
	}
	return CAPSIM_OK;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: example SCENARIO [PATH=VALUE]... [--json FILE]\n");
		return 2;
	}
	fprintf(stderr, "example: libcapsim %s\n", capsim_library_version(NULL, NULL, NULL));
	capsim_scn *h = capsim_scn_new();
	capsim_res *r = NULL;
	const char *json = NULL;
	int st = capsim_scn_load(h, argv[1]);
	if (st == CAPSIM_OK)
		st = edit(h, argc, argv, &json);
	if (st == CAPSIM_OK)
		st = capsim_scn_evaluate(h, 0, &r);
	if (st != CAPSIM_OK) {
		fprintf(stderr, "%s", capsim_scn_diagnostics(h));
		capsim_scn_free(h);
		return st;
	}
	for (size_t i = 0; i < capsim_key_count(); i++)
		if (print_key(r, capsim_key_name(i)))
			st = 1;
	double v;
	if (capsim_res_number(r, "no_such_key_s", &v) != CAPSIM_E_USAGE ||
	    capsim_key_unit("no_such_key_s") != NULL) {
		fprintf(stderr, "example: a key the table does not have was read\n");
		st = 1;
	}
	if (json && write_json(r, json))
		st = 1;
	capsim_res_free(r);
	capsim_scn_free(h);
	return st;
}
