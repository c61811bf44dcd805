/* validate_more.c - capsim validate on the files capsim reads that are not
 * its XML: each kind told from its name and first bytes, then checked by
 * the reader the command that takes it uses, so that validate refuses
 * exactly what that command would. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "err.h"
#include "hf.h"
#include "launch.h"
#include "measure.h"
#include "nccltests.h"
#include "store.h"
#include "torchtitan.h"

/* whether path ends in one of the suffixes (NULL-ended) */
static int ends_in(const char *path, const char *const *suffixes)
{
	size_t n = strlen(path);
	for (; *suffixes; suffixes++) {
		size_t k = strlen(*suffixes);
		if (n >= k && strcmp(path + n - k, *suffixes) == 0)
			return 1;
	}
	return 0;
}

/* whether buf (len bytes) holds word */
static int holds(const char *buf, size_t len, const char *word)
{
	size_t k = strlen(word);
	for (size_t i = 0; i + k <= len; i++)
		if (memcmp(buf + i, word, k) == 0)
			return 1;
	return 0;
}

/* the first non-blank byte of buf, or 0 */
static char first_byte(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r')
			return buf[i];
	return 0;
}

/* the kind of a JSON file: an error model ("format": "capsim-error-model"),
 * else a Hugging Face config */
static const char *json_kind(const char *buf, size_t len)
{
	json_t *j = json_loadb(buf, len, 0, NULL);
	const char *fmt = j ? json_string_value(json_object_get(j, "format")) : NULL;
	const char *kind = fmt && strcmp(fmt, "capsim-error-model") == 0 ? "error-model" :
									  "hf-config";
	json_decref(j);
	return kind;
}

int capsim_cli_is_store(const char *path)
{
	struct stat st;
	char head[16];
	/* stat first: opening a FIFO would take its writer's bytes, or its writer */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int yes = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
		  read(fd, head, sizeof head) == (ssize_t)sizeof head &&
		  memcmp(head, "SQLite format 3", 16) == 0;
	close(fd);
	return yes;
}

int capsim_cli_is_xml(const char *path, const char *buf, size_t len)
{
	char c = first_byte(buf, len);
	return c == '<' || c == 0 || ends_in(path, (const char *const[]){ ".xml", NULL });
}

const char *capsim_cli_other_kind(const char *path, const char *buf, size_t len)
{
	static const char *const script[] = { ".sh", ".bash", ".sbatch", ".slurm", ".yaml", ".yml",
					      NULL };
	static const char *const logs[] = { ".log", ".txt", ".out", NULL };
	if (capsim_cli_is_xml(path, buf, len))
		return NULL; /* capsim's own files, or empty: the XML reader says why */
	if (len >= 16 && memcmp(buf, "SQLite format 3", 16) == 0)
		return "store";
	if (ends_in(path, (const char *const[]){ ".jsonl", NULL }))
		return "measurements";
	if (ends_in(path, (const char *const[]){ ".json", NULL }) || first_byte(buf, len) == '{')
		return json_kind(buf, len);
	if (ends_in(path, (const char *const[]){ ".csv", NULL }))
		return "residuals";
	if (ends_in(path, (const char *const[]){ ".toml", NULL }))
		return "torchtitan";
	if (ends_in(path, script) || (len > 2 && memcmp(buf, "#!", 2) == 0))
		return "launch";
	if (ends_in(path, logs) || holds(buf, len, "nThread"))
		return "nccl-tests";
	return NULL;
}

/* a file that capsim_measure_import takes: imported into a database of its
 * own in a private directory ($TMPDIR, else /tmp), which is then removed */
static int validate_measurements(const char *path, capsim_diags *d)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096], db[4200];
	snprintf(dir, sizeof dir, "%s/capsim-validate-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		capsim_diags_add_runtime(d, path, "cannot make a private directory to check it in");
		return -1;
	}
	snprintf(db, sizeof db, "%s/check.sqlite", dir);
	capsim_import_stats st;
	int rc = capsim_measure_import(path, db, &st, d);
	static const char *const side[] = { "", "-journal", "-wal", "-shm" };
	for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
		char f[4300];
		snprintf(f, sizeof f, "%s%s", db, side[i]);
		unlink(f);
	}
	rmdir(dir);
	return rc;
}

/* a results or measurement store, opened read-only as query and fit open it */
static int validate_store(const char *path, capsim_diags *d)
{
	capsim_store *st = NULL;
	capsim_diags why = { 0 };
	if (capsim_store_open(path, CAPSIM_STORE_READ, &st, &why) < 0) {
		/* what query or fit would fail on at run time is bad input here */
		for (size_t i = 0; i < why.n; i++)
			capsim_diags_add_at(d, why.v[i].where ? why.v[i].where : path, "%s",
					    why.v[i].msg);
		capsim_diags_free(&why);
		return -1;
	}
	int v = capsim_store_version(st);
	capsim_store_close(st);
	if (v < 1 || v > CAPSIM_STORE_SCHEMA) {
		capsim_diags_add(d, path, 0, "schema version: expected 1 to %d, found %d",
				 CAPSIM_STORE_SCHEMA, v);
		return -1;
	}
	return 0;
}

/* a launch script, read as capsim import slurm reads it (no --env) */
static int validate_launch(const char *path, const char *buf, size_t len, capsim_diags *d)
{
	capsim_launch *l = calloc(1, sizeof *l);
	if (!l)
		return -1;
	capsim_launch_inputs in = { 0 };
	int rc = capsim_launch_script_with(buf, len, path, &in, l, d);
	free(l);
	return rc;
}

/* a torchtitan config, read as capsim import torchtitan reads it (1 node of
 * 8 GPUs, its default) */
static int validate_torchtitan(const char *path, const char *buf, size_t len, capsim_diags *d)
{
	capsim_launch *l = calloc(1, sizeof *l);
	if (!l)
		return -1;
	const char *model = NULL;
	int rc = capsim_torchtitan_read(buf, len, path, 1, 8, l, &model, d);
	free(l);
	return rc;
}

int capsim_cli_validate_other(const char *kind, const char *path, const char *buf, size_t len,
			      capsim_diags *d)
{
	if (strcmp(kind, "hf-config") == 0) {
		capsim_hf_model m;
		return capsim_hf_read(buf, len, path, &m, d);
	}
	if (strcmp(kind, "error-model") == 0) {
		capsim_err_model *m = capsim_err_model_load(path, d);
		capsim_err_model_free(m);
		return m ? 0 : -1;
	}
	if (strcmp(kind, "residuals") == 0) {
		capsim_err_rows rows;
		int rc = capsim_err_rows_load(path, &rows, d);
		if (rc == 0)
			capsim_err_rows_free(&rows);
		return rc;
	}
	if (strcmp(kind, "nccl-tests") == 0) {
		capsim_nccltests_log log;
		capsim_nccltests_hint hint = { .op = -1 };
		int rc = capsim_nccltests_parse_memory(buf, len, path, &hint, &log, d);
		capsim_nccltests_free(&log);
		return rc;
	}
	if (strcmp(kind, "measurements") == 0)
		return validate_measurements(path, d);
	if (strcmp(kind, "store") == 0)
		return validate_store(path, d);
	if (strcmp(kind, "launch") == 0)
		return validate_launch(path, buf, len, d);
	if (strcmp(kind, "torchtitan") == 0)
		return validate_torchtitan(path, buf, len, d);
	capsim_diags_add(d, path, 0, "no check for files of kind '%s'", kind);
	return -1;
}
