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
 * --json, the whole result as `capsim run --json` prints it into FILE.
 * Exit status: 0, or the failing call's status with its diagnostics on
 * standard error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <capsim.h>

/* one key of r on standard output, with its band's ends */
static void print_key(const capsim_res *r, const char *key)
{
	const char *text;
	double v, lo, hi;
	int kind = capsim_key_kind(key);
	if (kind == CAPSIM_KEY_STRUCTURED || !capsim_res_has(r, key))
		return;
	if (kind == CAPSIM_KEY_TEXT && capsim_res_text(r, key, &text) == CAPSIM_OK)
		printf("%s %s\n", key, text);
	else if (kind == CAPSIM_KEY_BOOLEAN && capsim_res_number(r, key, &v) == CAPSIM_OK)
		printf("%s %s\n", key, v != 0 ? "true" : "false");
	else if (capsim_res_number(r, key, &v) == CAPSIM_OK)
		printf("%s %.17g\n", key, v);
	static const int levels[] = { 80, 95 };
	static const char *const ends[][2] = { { "lo", "hi" }, { "lo95", "hi95" } };
	for (int l = 0; l < 2; l++)
		if (capsim_res_band(r, key, levels[l], &lo, &hi) == CAPSIM_OK)
			printf("%s_%s %.17g\n%s_%s %.17g\n", key, ends[l][0], lo, key, ends[l][1], hi);
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
		print_key(r, capsim_key_name(i));
	if (json && write_json(r, json))
		st = 1;
	capsim_res_free(r);
	capsim_scn_free(h);
	return st;
}
