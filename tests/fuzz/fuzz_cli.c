/* fuzz_cli.c - libFuzzer target for the capsim command line itself: any
 * bytes, read as an argument vector, run through capsim_main as `capsim`
 * would, must end with exit status 0, 1, 2 or 3, never a crash, a hang, a
 * leak or undefined behaviour, and must leave the next run unaffected.
 *
 * The input: arguments separated by newlines or NULs (a last empty one is
 * dropped); the first names the command, as argv[1] does. Seeds in
 * cli-seeds/ name each command with good and bad arguments.
 *
 * Where it runs: a private directory made at start (mkdtemp) holding a copy
 * of the catalog (hardware/, models/, scenarios/) and of some test data
 * (nccl-tests/, nccl-tests-bad/, calibrate/ with one recorded GEMM run,
 * profiles/, hf/ configs and launch/ scripts for import), a measurement
 * database of those runs (measurements.db) and a sweep store of the shipped
 * report sweep (results.db, for query and report --db); it
 * is the working directory of each run and CAPSIM_DATA, so inputs name files
 * relatively ("scenarios/default.xml") and outputs land there. After each
 * run every copied file is put back if it was changed and everything else a
 * run left there is removed. So that nothing outside it is written, an input
 * with an absolute path or a ".." is refused (not run). Also refused:
 * `calibrate run` (it runs GPU programs), `sweep` and `optimize` but for
 * their --help (a sweep or a search is thousands of simulations by design;
 * fuzz_sweep takes the sweep file and its constraints), more than MAX_ARGS
 * arguments, and
 * any mention of workload.task-limit or workload.flow-limit: run, scale,
 * collective, verify and report get --set options bounding the work of one input
 * (limits[]) before the input's own arguments. Files written are capped at
 * 64 MiB (RLIMIT_FSIZE).
 *
 * Standard output and error go to /dev/null while a command runs (the
 * sanitizers report on the original standard error). With
 * CAPSIM_FUZZ_CLI_REPEAT=1 each input runs twice and must give the same
 * status and standard output; CAPSIM_FUZZ_CLI_TRACE=1 prints each vector
 * (as getopt left it) and its status. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sanitizer/common_interface_defs.h>

#include "cli.h"
#include "eval.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 48
#define MAX_INPUT 4096
#define MAX_FILE_BYTES (64L << 20)

/* the bounds every simulating command gets (the least the checks allow) */
static char set_opt[] = "--set", task_limit[] = "workload.task-limit=1e4",
	    flow_limit[] = "workload.flow-limit=1e4";
static char *const limits[] = { set_opt, task_limit, set_opt, flow_limit };
#define N_LIMITS (sizeof limits / sizeof limits[0])

static const char *const limited_commands[] = { "run", "scale", "collective", "verify", "report" };

/* a file of the private directory as it was made: put back when changed */
typedef struct data_file {
	char *rel;           /* path relative to the directory */
	unsigned char *bytes;
	size_t len;
	struct stat st;      /* as last written */
} data_file;

typedef struct data_dir {
	data_file *files;
	size_t n_files, cap_files;
	char **dirs;         /* directories made, relative */
	size_t n_dirs, cap_dirs;
} data_dir;

static char work_root[64];
static data_dir data;
static int saved_stdout = -1, saved_stderr = -1, dev_null = -1;
static int start_fd = -1; /* libFuzzer's working directory */
/* CAPSIM_FUZZ_CLI_TRACE=1: each vector run and its status, for looking at
 * what the seeds reach */
static int trace_runs;
/* CAPSIM_FUZZ_CLI_REPEAT=1: each input run twice, which must give the same
 * status and standard output (state one run leaves must not change the
 * next); half as many inputs a second */
static int repeat_runs;
static FILE *first_out, *again_out;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_cli: %s: %s\n", what, strerror(errno));
	abort();
}

/* ---- the private directory ----------------------------------------------- */

static void add_dir(const char *rel)
{
	for (size_t i = 0; i < data.n_dirs; i++)
		if (strcmp(data.dirs[i], rel) == 0)
			return;
	if (data.n_dirs == data.cap_dirs) {
		data.cap_dirs = data.cap_dirs ? 2 * data.cap_dirs : 16;
		data.dirs = realloc(data.dirs, data.cap_dirs * sizeof *data.dirs);
		if (!data.dirs)
			die("realloc");
	}
	data.dirs[data.n_dirs++] = strdup(rel);
	if (mkdir(rel, 0755) < 0 && errno != EEXIST)
		die(rel);
}

static void write_file(data_file *f)
{
	(void)remove(f->rel);
	FILE *fp = fopen(f->rel, "wb");
	if (!fp || fwrite(f->bytes, 1, f->len, fp) != f->len || fclose(fp) != 0)
		die(f->rel);
	if (lstat(f->rel, &f->st) < 0)
		die(f->rel);
}

static unsigned char *read_whole(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		die(path);
	size_t cap = 4096, n = 0;
	unsigned char *buf = malloc(cap);
	for (size_t got; buf && (got = fread(buf + n, 1, cap - n, fp)) > 0;) {
		n += got;
		if (n == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf)
		die("malloc");
	fclose(fp);
	*len = n;
	return buf;
}

/* keep the file at src (absolute) as rel in the private directory */
static void add_file(const char *src, const char *rel)
{
	if (data.n_files == data.cap_files) {
		data.cap_files = data.cap_files ? 2 * data.cap_files : 64;
		data.files = realloc(data.files, data.cap_files * sizeof *data.files);
		if (!data.files)
			die("realloc");
	}
	data_file *f = &data.files[data.n_files++];
	f->rel = strdup(rel);
	f->bytes = read_whole(src, &f->len);
	write_file(f);
}

/* nftw has no user pointer: the tree being copied */
static const char *copy_from;
static const char *copy_to;

static int copy_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	char rel[4096];
	const char *tail = path + strlen(copy_from);
	snprintf(rel, sizeof rel, "%s%s", copy_to, tail);
	if (type == FTW_D)
		add_dir(rel);
	else if (type == FTW_F)
		add_file(path, rel);
	return 0;
}

static void copy_tree(const char *from_rel, const char *to_rel)
{
	char from[4096];
	snprintf(from, sizeof from, "%s/%s", CAPSIM_SOURCE_DIR, from_rel);
	copy_from = from;
	copy_to = to_rel;
	if (nftw(from, copy_entry, 16, FTW_PHYS) != 0)
		die(from);
}

static const data_file *known_file(const char *rel)
{
	for (size_t i = 0; i < data.n_files; i++)
		if (strcmp(data.files[i].rel, rel) == 0)
			return &data.files[i];
	return NULL;
}

static int known_dir(const char *rel)
{
	for (size_t i = 0; i < data.n_dirs; i++)
		if (strcmp(data.dirs[i], rel) == 0)
			return 1;
	return 0;
}

/* anything a run left behind: removed (children first, FTW_DEPTH) */
static int remove_stray(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	if (ftw->level == 0)
		return 0;
	const char *rel = path + 2; /* "./" */
	if (type == FTW_DP) {
		if (!known_dir(rel))
			(void)rmdir(rel);
	} else if (!known_file(rel)) {
		(void)unlink(rel);
	}
	return 0;
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && S_ISREG(a->st_mode);
}

static void restore_data(void)
{
	(void)nftw(".", remove_stray, 16, FTW_DEPTH | FTW_PHYS);
	for (size_t i = 0; i < data.n_dirs; i++)
		if (mkdir(data.dirs[i], 0755) < 0 && errno != EEXIST)
			die(data.dirs[i]);
	for (size_t i = 0; i < data.n_files; i++) {
		struct stat now;
		if (lstat(data.files[i].rel, &now) < 0 || !same_file(&now, &data.files[i].st))
			write_file(&data.files[i]);
	}
}

/* ---- one run ------------------------------------------------------------- */

/* a run stands in the private directory; libFuzzer, between runs, where it
 * was started (its corpus and artifact paths may be relative) */
static void enter_work_root(void)
{
	if (chdir(work_root) < 0)
		die(work_root);
}

static void leave_work_root(void)
{
	if (fchdir(start_fd) < 0)
		die("fchdir");
}

/* standard output to out_fd, standard error to /dev/null */
static void quiet(int out_fd)
{
	fflush(stdout);
	fflush(stderr);
	dup2(out_fd, STDOUT_FILENO);
	dup2(dev_null, STDERR_FILENO);
}

static void loud(void)
{
	fflush(stdout);
	fflush(stderr);
	clearerr(stdout);
	clearerr(stderr);
	dup2(saved_stdout, STDOUT_FILENO);
	dup2(saved_stderr, STDERR_FILENO);
}

static int run_quietly(int argc, char **argv)
{
	quiet(dev_null);
	int status = capsim_main(argc, argv);
	loud();
	return status;
}

/* the run with its standard output in out, emptied first */
static int run_captured(int argc, char **argv, FILE *out)
{
	if (ftruncate(fileno(out), 0) < 0 || fseek(out, 0, SEEK_SET) < 0)
		die("output file");
	quiet(fileno(out));
	int status = capsim_main(argc, argv);
	loud();
	return status;
}

/* 1 when a and b hold the same bytes */
static int same_output(FILE *a, FILE *b)
{
	rewind(a);
	rewind(b);
	char x[8192], y[8192];
	size_t nx, ny;
	do {
		nx = fread(x, 1, sizeof x, a);
		ny = fread(y, 1, sizeof y, b);
		if (nx != ny || memcmp(x, y, nx) != 0)
			return 0;
	} while (nx == sizeof x);
	return 1;
}

/* measurements.db, for fit and verify --measurements: the seed runs of
 * tests/data/calibrate imported as a user would */
static void make_measurements(void)
{
	char a0[] = "capsim", a1[] = "calibrate", a2[] = "import", a3[] = "--db",
	     a4[] = "measurements.db", a5[] = "calibrate/h200-gemm.jsonl",
	     a6[] = "calibrate/gemm-duty.jsonl", a7[] = "calibrate/nccl-8gpu.jsonl",
	     a8[] = "calibrate/pcie.jsonl";
	char *argv[] = { a0, a1, a2, a3, a4, a5, a6, a7, a8, NULL };
	if (run_quietly(9, argv) != CAPSIM_EXIT_OK) {
		errno = 0;
		die("capsim calibrate import of the seed measurements");
	}
	add_file("measurements.db", "measurements.db");
}

/* results.db, for query and report --db: the shipped report sweep run as a
 * user would */
static void make_results(void)
{
	char a0[] = "capsim", a1[] = "sweep", a2[] = "scenarios/sweeps/report-70b.xml",
	     a3[] = "--db", a4[] = "results.db", a5[] = "-j1";
	char *argv[] = { a0, a1, a2, a3, a4, a5, NULL };
	if (run_quietly(6, argv) != CAPSIM_EXIT_OK) {
		errno = 0;
		die("capsim sweep of the seed store");
	}
	add_file("results.db", "results.db");
}

/* libFuzzer writes a crash's input where it stands then, the private
 * directory: an -artifact_prefix that is not absolute is made so, against
 * the directory it was started in (libFuzzer reads its flags after this) */
static void absolute_artifacts(int *argc, char ***argv, const char *start_dir)
{
	static const char flag[] = "-artifact_prefix=";
	char **v = calloc((size_t)*argc + 2, sizeof *v);
	if (!v)
		die("calloc");
	int n = 0, given = 0;
	for (int i = 0; i < *argc; i++) {
		char *a = (*argv)[i];
		if (strncmp(a, flag, sizeof flag - 1) == 0) {
			given = 1;
			const char *val = a + sizeof flag - 1;
			if (*val != '/') {
				size_t len = sizeof flag + strlen(start_dir) + 1 + strlen(val);
				char *abs = malloc(len);
				if (!abs)
					die("malloc");
				snprintf(abs, len, "%s%s/%s", flag, start_dir, val);
				a = abs;
			}
		}
		v[n++] = a;
	}
	if (!given) {
		size_t len = sizeof flag + strlen(start_dir) + 1;
		char *abs = malloc(len);
		if (!abs)
			die("malloc");
		snprintf(abs, len, "%s%s/", flag, start_dir);
		v[n++] = abs;
	}
	v[n] = NULL;
	*argc = n;
	*argv = v;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	(void)(type == FTW_DP ? rmdir(path) : unlink(path));
	return 0;
}

static void remove_work_root(void)
{
	(void)nftw(work_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int env_flag(const char *name)
{
	const char *v = getenv(name);
	return v && *v && strcmp(v, "0") != 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char start_dir[4096];
	if (!getcwd(start_dir, sizeof start_dir))
		die("getcwd");
	absolute_artifacts(argc, argv, start_dir);
	start_fd = open(".", O_RDONLY | O_DIRECTORY);
	snprintf(work_root, sizeof work_root, "/tmp/capsim-fuzz-cli-XXXXXX");
	if (start_fd < 0 || !mkdtemp(work_root) || chdir(work_root) < 0)
		die("private directory");
	atexit(remove_work_root);
	copy_tree("hardware", "hardware");
	copy_tree("models", "models");
	copy_tree("scenarios", "scenarios");
	copy_tree("tests/data/nccl-tests", "nccl-tests");
	copy_tree("tests/data/nccl-tests-bad", "nccl-tests-bad");
	copy_tree("tests/data/calibrate", "calibrate");
	/* GEMMs and a copy, for verify --measurements and fit */
	add_file(CAPSIM_SOURCE_DIR "/calibrate/results/h200-2026-12-02-gemm.jsonl",
		 "calibrate/h200-gemm.jsonl");
	copy_tree("tests/data/profiles", "profiles");
	/* configs and launch scripts, good and bad, for import */
	copy_tree("tests/data/hf", "hf");
	copy_tree("tests/data/launch", "launch");
	if (setenv("CAPSIM_DATA", work_root, 1) < 0)
		die("setenv");
	struct rlimit fsize = { MAX_FILE_BYTES, MAX_FILE_BYTES };
	if (setrlimit(RLIMIT_FSIZE, &fsize) < 0)
		die("setrlimit");
	signal(SIGXFSZ, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	dev_null = open("/dev/null", O_WRONLY);
	saved_stdout = dup(STDOUT_FILENO);
	saved_stderr = dup(STDERR_FILENO);
	if (dev_null < 0 || saved_stdout < 0 || saved_stderr < 0)
		die("standard output");
	__sanitizer_set_report_fd((void *)(intptr_t)saved_stderr);
	capsim_init();
	make_measurements();
	make_results();
	fprintf(stderr, "fuzz_cli: running in %s (%zu files)\n", work_root, data.n_files);
	leave_work_root();
	trace_runs = env_flag("CAPSIM_FUZZ_CLI_TRACE");
	repeat_runs = env_flag("CAPSIM_FUZZ_CLI_REPEAT");
	if (repeat_runs && (!(first_out = tmpfile()) || !(again_out = tmpfile())))
		die("tmpfile");
	return 0;
}

/* ---- the input as an argument vector ------------------------------------- */

typedef struct arg_vector {
	char *buf;            /* the input, separators turned to NULs */
	char *v[MAX_ARGS + N_LIMITS + 2];
	int n;
} arg_vector;

/* an argument that could name a file outside the private directory: a path
 * starting with '/' as a whole, after '=' (--out=/x), or after a short
 * option (-o/x, -jo/x); or one going up with ".." */
static int escapes(const char *a)
{
	if (a[0] == '/' || strstr(a, "..") || strstr(a, "=/"))
		return 1;
	return a[0] == '-' && a[1] != '-' && strchr(a, '/');
}

/* an argument the input may not give */
static int refused_arg(const char *a)
{
	return escapes(a) || strstr(a, "task-limit") || strstr(a, "flow-limit");
}

static int is_limited(const char *cmd)
{
	for (size_t i = 0; i < sizeof limited_commands / sizeof limited_commands[0]; i++)
		if (strcmp(cmd, limited_commands[i]) == 0)
			return 1;
	return 0;
}

static int push_arg(arg_vector *av, char *a)
{
	if (av->n == MAX_ARGS + 1 || refused_arg(a))
		return -1;
	av->v[av->n++] = a;
	if (av->n == 2 && is_limited(a))
		for (size_t i = 0; i < N_LIMITS; i++)
			av->v[av->n++] = limits[i];
	return 0;
}

/* split the input at newlines and NULs ("run\n--json\n" is capsim run
 * --json); -1 when it is refused */
static int split_args(const uint8_t *data_in, size_t size, arg_vector *av)
{
	static char arg0[] = "capsim";
	av->n = 0;
	av->v[av->n++] = arg0;
	av->buf = malloc(size + 1);
	if (!av->buf)
		return -1;
	memcpy(av->buf, data_in, size);
	av->buf[size] = '\0';
	char *start = av->buf;
	for (size_t i = 0; i < size; i++) {
		if (av->buf[i] != '\n' && av->buf[i] != '\0')
			continue;
		av->buf[i] = '\0';
		if (push_arg(av, start) < 0)
			return -1;
		start = av->buf + i + 1;
	}
	if (start < av->buf + size && push_arg(av, start) < 0)
		return -1;
	av->v[av->n] = NULL;
	if (av->n > 2 && strcmp(av->v[1], "calibrate") == 0 && strcmp(av->v[2], "run") == 0)
		return -1;
	if (av->n > 1 && (strcmp(av->v[1], "sweep") == 0 || strcmp(av->v[1], "optimize") == 0)) {
		int help = 0;
		for (int i = 2; i < av->n; i++)
			help |= strcmp(av->v[i], "--help") == 0;
		if (!help)
			return -1;
	}
	return 0;
}

static void print_run(const arg_vector *av, int status)
{
	for (int i = 1; i < av->n; i++)
		fprintf(stderr, "%s'%s'", i > 1 ? " " : "", av->v[i]);
	fprintf(stderr, " -> %d\n", status);
}

static void check_status(int status)
{
	if (status < CAPSIM_EXIT_OK || status > CAPSIM_EXIT_ACCEPTANCE) {
		fprintf(stderr, "fuzz_cli: exit status %d, expected 0 to 3\n", status);
		abort();
	}
}

/* the input twice, from two vectors split afresh (getopt permutes a
 * vector; collective --sweep writes into its argument) */
static void run_twice(const uint8_t *data_in, size_t size)
{
	arg_vector av[2];
	int status[2];
	FILE *out[2] = { first_out, again_out };
	for (int k = 0; k < 2; k++) {
		if (split_args(data_in, size, &av[k]) < 0)
			die("split");
		enter_work_root();
		status[k] = run_captured(av[k].n, av[k].v, out[k]);
		restore_data();
		leave_work_root();
		check_status(status[k]);
		free(av[k].buf);
	}
	if (status[0] != status[1] || !same_output(first_out, again_out)) {
		fprintf(stderr, "fuzz_cli: the same input ran twice gave status %d, then %d%s\n",
			status[0], status[1],
			same_output(first_out, again_out) ? "" : ", and other output");
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data_in, size_t size)
{
	if (size > MAX_INPUT)
		return -1;
	arg_vector av;
	if (split_args(data_in, size, &av) < 0) {
		free(av.buf);
		return -1;
	}
	if (repeat_runs) {
		free(av.buf);
		run_twice(data_in, size);
		return 0;
	}
	enter_work_root();
	int status = run_quietly(av.n, av.v);
	restore_data();
	leave_work_root();
	if (trace_runs)
		print_run(&av, status);
	check_status(status);
	free(av.buf);
	return 0;
}
