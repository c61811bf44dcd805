/* calrun.c - calibrate/'s programs found, run in turn under a time limit,
 * their records counted and their files imported into the measurement
 * store. */
#include "calrun.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "clock.h"
#include "xalloc.h"

/* calibrate/'s programs, in the order they run, with the arguments quick
 * adds (small sweeps that finish in seconds on one GPU) */
static const struct {
	const char *kind, *program;
	const char *quick[12];
} programs[CAPSIM_CALRUN__COUNT] = {
	[CAPSIM_CALRUN_GEMM] = { "gemm", "capsim-calibrate-gemm",
				 { "--dtypes", "bf16", "--reps", "5", "--sustain", "1", "--duty",
				   "0.5", "--duty-seconds", "1", NULL } },
	[CAPSIM_CALRUN_PCIE] = { "pcie", "capsim-calibrate-pcie",
				 { "--max-bytes", "16M", "--reps", "5", NULL } },
	[CAPSIM_CALRUN_NCCL] = { "nccl", "capsim-calibrate-nccl",
				 { "--max-bytes", "1M", "--iters", "5", "--warmup", "2",
				   "--samples", "3", NULL } },
};

const char *capsim_calrun_kind_name(int kind)
{
	return kind >= 0 && kind < CAPSIM_CALRUN__COUNT ? programs[kind].kind : NULL;
}

const char *capsim_calrun_program(int kind)
{
	return kind >= 0 && kind < CAPSIM_CALRUN__COUNT ? programs[kind].program : NULL;
}

int capsim_calrun_kind_parse(const char *s, size_t len)
{
	for (int i = 0; i < CAPSIM_CALRUN__COUNT; i++)
		if (len == strlen(programs[i].kind) && !strncmp(s, programs[i].kind, len))
			return i;
	return -1;
}

/* ---- finding the programs ----------------------------------------------- */

/* 1 if dir/name is an executable regular file; its path goes to path (0
 * when the path does not fit) */
static int executable(const char *dir, const char *name, char *path, size_t size)
{
	struct stat sb;
	int n = snprintf(path, size, "%s/%s", *dir ? dir : ".", name);
	if (n < 0 || (size_t)n >= size)
		return 0;
	return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && access(path, X_OK) == 0;
}

/* a, then b, into dst (size bytes); 0, or -1 (dst unchanged) when they do
 * not fit */
static int join(char *dst, size_t size, const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	if (na + nb >= size)
		return -1;
	memmove(dst, a, na);
	memcpy(dst + na, b, nb + 1);
	return 0;
}

/* one place more in the ", "-separated list `looked`, when it fits */
static void looked_add(char *looked, size_t size, const char *place)
{
	size_t len = strlen(looked), n = strlen(place), sep = len ? 2 : 0;
	if (len + sep + n >= size)
		return;
	memcpy(looked + len, ", ", sep);
	memcpy(looked + len + sep, place, n + 1);
}

/* name beside the running program's binary (DIR/calibrate, DIR/../calibrate,
 * DIR/build/calibrate, DIR, and DIR/../libexec/capsim where installed): 1 with its path, or 0 with the places looked
 * in added to `looked` */
static int find_beside_self(const char *name, char *path, size_t size, char *looked,
			    size_t looked_size)
{
	char self[CAPSIM_CALRUN_PATH_MAX], dir[CAPSIM_CALRUN_PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return 0;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	static const char *const below[] = { "/calibrate", "/../calibrate", "/build/calibrate",
					     "", "/../libexec/capsim" };
	for (size_t i = 0; i < sizeof below / sizeof below[0]; i++) {
		if (join(dir, sizeof dir, self, below[i]) < 0)
			continue;
		looked_add(looked, looked_size, dir);
		if (executable(dir, name, path, size))
			return 1;
	}
	return 0;
}

/* name in a directory of PATH: 1 with its path, or 0; a directory whose
 * name does not fit is passed over */
static int find_in_path(const char *name, char *path, size_t size)
{
	char dir[CAPSIM_CALRUN_PATH_MAX];
	const char *env = getenv("PATH");
	for (const char *p = env ? env : ""; *p;) {
		size_t l = strcspn(p, ":");
		if (l < sizeof dir) {
			memcpy(dir, p, l);
			dir[l] = '\0';
			if (executable(dir, name, path, size))
				return 1;
		}
		p += l + (p[l] == ':');
	}
	return 0;
}

/* Find a program: in bin_dir alone when given; else beside the running
 * program's binary, then in PATH. Returns 1 with its path, or 0 with the
 * places looked in in `looked` (", "-separated). */
static int find_program(const char *bin_dir, const char *name, char *path, size_t size,
			char *looked, size_t looked_size)
{
	looked[0] = '\0';
	if (bin_dir) {
		join(looked, looked_size, bin_dir, " (--bin-dir)");
		return executable(bin_dir, name, path, size);
	}
	if (find_beside_self(name, path, size, looked, looked_size))
		return 1;
	looked_add(looked, looked_size, "PATH");
	return find_in_path(name, path, size);
}

int capsim_calrun_find(const char *name, char *path, size_t size, char *looked,
		       size_t looked_size)
{
	return find_program(NULL, name, path, size, looked, looked_size);
}

/* ---- naming the files ----------------------------------------------------- */

/* the prefix of the output files: name, else the host name, with anything
 * but letters, digits, '.', '_' and '-' made '_' */
static void file_prefix(const char *name, char *out, size_t size)
{
	char host[256] = "machine";
	if (!name && gethostname(host, sizeof host) == 0)
		host[sizeof host - 1] = '\0';
	snprintf(out, size, "%s", name ? name : host);
	for (char *p = out; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
			*p = '_';
	if (!out[0])
		snprintf(out, size, "machine");
}

/* the output directory, made when absent; -1 after a diagnostic */
static int ensure_dir(const char *dir, capsim_diags *d)
{
	struct stat sb;
	if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode))
		return 0;
	if (mkdir(dir, 0777) == 0)
		return 0;
	capsim_diags_add(d, NULL, 0, "--out-dir %s: %s", dir, strerror(errno));
	return -1;
}

/* Find program i and name its file out_dir/prefix-date-kind.jsonl, refusing
 * one that exists; 0, or -1 after a diagnostic. */
static int prepare_one(const capsim_calrun_options *o, int i, const char *prefix,
		       const char *date, capsim_calrun_plan *plan, capsim_diags *d)
{
	char looked[2 * CAPSIM_CALRUN_PATH_MAX];
	if (!find_program(o->bin_dir, programs[i].program, plan->path[i], sizeof plan->path[i],
			  looked, sizeof looked)) {
		capsim_diags_add(d, NULL, 0, "%s not found; looked in %s", programs[i].program,
				 looked);
		return -1;
	}
	int len = snprintf(plan->out[i], sizeof plan->out[i], "%s/%s-%s-%s.jsonl", o->out_dir,
			   prefix, date, programs[i].kind);
	if (len < 0 || (size_t)len >= sizeof plan->out[i]) {
		capsim_diags_add(d, NULL, 0, "--out-dir: expected a path under %zu bytes with the "
				 "file names, found %zu bytes", sizeof plan->out[i],
				 strlen(o->out_dir));
		return -1;
	}
	if (access(plan->out[i], F_OK) == 0) {
		capsim_diags_add(d, NULL, 0, "%s exists; choose another --out-dir or --name",
				 plan->out[i]);
		return -1;
	}
	return 0;
}

int capsim_calrun_prepare(const capsim_calrun_options *o, capsim_calrun_plan *plan,
			  capsim_diags *d)
{
	char prefix[256], date[16];
	if (o->date) {
		snprintf(date, sizeof date, "%s", o->date);
	} else {
		time_t t = time(NULL);
		strftime(date, sizeof date, "%Y-%m-%d", gmtime(&t));
	}
	file_prefix(o->name, prefix, sizeof prefix);
	memset(plan, 0, sizeof *plan);
	for (int i = 0; i < CAPSIM_CALRUN__COUNT; i++) {
		if (!o->want[i])
			continue;
		plan->want[i] = 1;
		plan->n++;
		if (prepare_one(o, i, prefix, date, plan, d) < 0)
			return -1;
	}
	return ensure_dir(o->out_dir, d);
}

/* ---- running them --------------------------------------------------------- */

/* Start path with argv, its output this process's, and wait for it at most
 * timeout_s; s's end, status, signal and err say how it ended. An exec that
 * fails reaches the parent through a pipe closed on exec: the child exits
 * 127 and s->err is exec's errno. */
static void spawn(const char *path, char *const *argv, double timeout_s, capsim_calrun_step *s)
{
	int fd[2];
	fflush(stdout);
	fflush(stderr);
	if (pipe(fd) < 0 || fcntl(fd[1], F_SETFD, FD_CLOEXEC) < 0) {
		s->end = CAPSIM_CALRUN_NO_FORK;
		s->err = errno;
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		s->end = CAPSIM_CALRUN_NO_FORK;
		s->err = errno;
		close(fd[0]);
		close(fd[1]);
		return;
	}
	if (pid == 0) {
		close(fd[0]);
		execv(path, argv);
		int e = errno;
		ssize_t w = write(fd[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	close(fd[1]);
	int exec_err = 0;
	ssize_t r;
	while ((r = read(fd[0], &exec_err, sizeof exec_err)) < 0 && errno == EINTR)
		;
	close(fd[0]);
	if (r != (ssize_t)sizeof exec_err)
		exec_err = 0;
	int st = 0;
	switch (capsim_child_wait(pid, timeout_s, 10.0, 0, &st)) {
	case CAPSIM_CHILD_LOST:
		s->end = CAPSIM_CALRUN_LOST;
		s->err = errno;
		return;
	case CAPSIM_CHILD_TIMED_OUT:
		s->end = CAPSIM_CALRUN_TIMED_OUT;
		return;
	case CAPSIM_CHILD_EXITED:
		break;
	}
	if (WIFSIGNALED(st)) {
		s->end = CAPSIM_CALRUN_SIGNALED;
		s->signal = WTERMSIG(st);
		return;
	}
	s->end = CAPSIM_CALRUN_EXITED;
	s->status = WEXITSTATUS(st);
	s->err = s->status == 127 ? exec_err : 0;
}

/* the records of a JSON-lines file: its non-blank lines after the first
 * (the machine line); -1 when it cannot be read */
static long count_records(const char *path)
{
	FILE *fp = fopen(path, "r");
	if (!fp)
		return -1;
	long lines = 0;
	int c, blank = 1;
	while ((c = getc(fp)) != EOF) {
		if (c == '\n') {
			lines += !blank;
			blank = 1;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			blank = 0;
		}
	}
	lines += !blank;
	fclose(fp);
	return lines > 0 ? lines - 1 : 0;
}

/* Run s's program into s->out, with --quick's arguments when quick; 0 when
 * it exited 0, else -1; s says how it ended and how long it took. */
static int run_program(capsim_calrun_step *s, int quick, double timeout_s)
{
	char *argv[32]; /* copies: execv wants them writable */
	int a = 0;
	argv[a++] = capsim_xstrdup(s->path);
	argv[a++] = capsim_xstrdup("--out");
	argv[a++] = capsim_xstrdup(s->out);
	for (int q = 0; quick && programs[s->kind].quick[q]; q++)
		argv[a++] = capsim_xstrdup(programs[s->kind].quick[q]);
	argv[a] = NULL;
	double t0 = capsim_now_s();
	spawn(s->path, argv, timeout_s, s);
	s->seconds = capsim_now_s() - t0;
	for (int q = 0; q < a; q++)
		free(argv[q]);
	return s->end == CAPSIM_CALRUN_EXITED && s->status == 0 ? 0 : -1;
}

#define TELL(ev, s) \
	do { \
		if (report) \
			report((ev), (s), ctx); \
	} while (0)

/* One step: run, count, import; 0, or -1 when it failed or was refused */
static int run_step(const capsim_calrun_options *o, capsim_calrun_step *s,
		    capsim_calrun_report report, void *ctx)
{
	TELL(CAPSIM_CALRUN_STARTING, s);
	if (run_program(s, o->quick, o->timeout_s) < 0) {
		s->out_exists = access(s->out, F_OK) == 0;
		TELL(CAPSIM_CALRUN_FAILED, s);
		return -1;
	}
	s->records = count_records(s->out);
	TELL(CAPSIM_CALRUN_DONE, s);
	if (!o->db)
		return 0;
	capsim_diags d = { 0 };
	int rc = capsim_measure_import(s->out, o->db, &s->stats, &d);
	s->diags = &d;
	TELL(rc < 0 ? CAPSIM_CALRUN_REFUSED : CAPSIM_CALRUN_IMPORTED, s);
	s->diags = NULL;
	capsim_diags_free(&d);
	return rc < 0 ? -1 : 0;
}

int capsim_calrun_run(const capsim_calrun_options *o, const capsim_calrun_plan *plan,
		      capsim_calrun_report report, void *ctx)
{
	for (int i = 0, step = 0; i < CAPSIM_CALRUN__COUNT; i++) {
		if (!plan->want[i])
			continue;
		capsim_calrun_step s = {
			.kind = i, .step = ++step, .n = plan->n, .program = programs[i].program,
			.path = plan->path[i], .out = plan->out[i], .db = o->db,
		};
		if (run_step(o, &s, report, ctx) < 0)
			return -1;
	}
	return 0;
}
