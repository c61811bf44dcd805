/* calrun.h - calibrate/'s programs run in turn on the machine to be
 * measured: each found (capsim-calibrate-gemm, -pcie, -nccl), run under a
 * time limit (util/child.h) into a JSON-lines file, its records counted,
 * and the file imported into the measurement store (store/measure.h).
 *
 * Library code: it never prints. The programs write to the process's own
 * standard output and error; what happens at each step goes to the
 * caller's callback, which prints it (capsim calibrate run). */
#ifndef CAPSIM_CALRUN_H
#define CAPSIM_CALRUN_H

#include <stddef.h>

#include "diag.h"
#include "measure.h"

/* calibrate/'s programs, in the order they run. */
typedef enum capsim_calrun_kind {
	CAPSIM_CALRUN_GEMM,
	CAPSIM_CALRUN_PCIE,
	CAPSIM_CALRUN_NCCL,
	CAPSIM_CALRUN__COUNT,
} capsim_calrun_kind;

/* The short name of a kind ("gemm", "pcie", "nccl"), as --only and the
 * output files name it; NULL outside the enum. */
const char *capsim_calrun_kind_name(int kind);

/* The program of a kind ("capsim-calibrate-gemm"); NULL outside the enum. */
const char *capsim_calrun_program(int kind);

/* The kind whose short name is the len bytes at s, or -1 for none. */
int capsim_calrun_kind_parse(const char *s, size_t len);

/* What to run. */
typedef struct capsim_calrun_options {
	const char *bin_dir; /* where the programs are; NULL: searched (capsim_calrun_prepare) */
	const char *out_dir; /* where the JSON lines go, made when absent */
	const char *db;      /* the measurement database; NULL: nothing imported */
	const char *name;    /* the files' prefix; NULL: this host's name */
	const char *date;    /* the files' YYYY-MM-DD; NULL: today, in UTC */
	int quick;           /* small sweeps, for a smoke run */
	double timeout_s;    /* each program's limit (> 0), then it is stopped */
	int want[CAPSIM_CALRUN__COUNT]; /* 1 for each program to run */
} capsim_calrun_options;

enum { CAPSIM_CALRUN_PATH_MAX = 4096 };

/* The runs prepared: each wanted program's path and output file. */
typedef struct capsim_calrun_plan {
	int n; /* the programs to run */
	int want[CAPSIM_CALRUN__COUNT];
	char path[CAPSIM_CALRUN__COUNT][CAPSIM_CALRUN_PATH_MAX];
	char out[CAPSIM_CALRUN__COUNT][CAPSIM_CALRUN_PATH_MAX];
} capsim_calrun_plan;

/* Prepare o's runs into plan, before anything runs: find each wanted
 * program (in o->bin_dir alone when given; else beside the running
 * program's binary, in DIR/calibrate, DIR/../calibrate, DIR/build/calibrate,
 * DIR and DIR/../libexec/capsim (where installed), then in PATH), name its output file
 * OUT_DIR/PREFIX-DATE-KIND.jsonl (the prefix o->name or the host name, with
 * anything but letters, digits, '.', '_' and '-' made '_'), refuse one that
 * exists, and make o->out_dir when absent (plan->n may be 0: nothing is
 * wanted). Returns 0; or -1 with one input diagnostic in d (where
 * "capsim": the message names the program or the option): a program not
 * found (with the places looked in), a path too long, an output file that
 * exists, an output directory that cannot be made. */
int capsim_calrun_prepare(const capsim_calrun_options *o, capsim_calrun_plan *plan,
			  capsim_diags *d);

/* The program name found as capsim_calrun_prepare finds one without
 * --bin-dir: 1 with its path in path (size bytes), or 0 with the places
 * looked in, ", "-separated, in looked. */
int capsim_calrun_find(const char *name, char *path, size_t size, char *looked,
		       size_t looked_size);

/* How a program's run ended. */
typedef enum capsim_calrun_end {
	CAPSIM_CALRUN_EXITED,    /* it exited: status (0: it succeeded) */
	CAPSIM_CALRUN_SIGNALED,  /* it was killed by signal `signal` */
	CAPSIM_CALRUN_TIMED_OUT, /* it ran past the limit and was stopped */
	CAPSIM_CALRUN_NO_FORK,   /* it could not be started: fork failed (err) */
	CAPSIM_CALRUN_LOST,      /* waiting for it failed (err) */
} capsim_calrun_end;

/* What the callback is told, at each step. */
typedef enum capsim_calrun_event {
	CAPSIM_CALRUN_STARTING, /* the program is about to run */
	CAPSIM_CALRUN_FAILED,   /* it failed: the run stops here */
	CAPSIM_CALRUN_DONE,     /* it succeeded: seconds and records are set */
	CAPSIM_CALRUN_IMPORTED, /* its file was imported (only with a database): stats set */
	CAPSIM_CALRUN_REFUSED,  /* its file could not be imported: diags say why; the run stops */
} capsim_calrun_event;

/* One step, as the callback sees it. The strings point into the plan or
 * into static tables. */
typedef struct capsim_calrun_step {
	int kind;             /* capsim_calrun_kind */
	int step, n;          /* the step-th (from 1) of n */
	const char *program;  /* "capsim-calibrate-gemm" */
	const char *path;     /* the program found */
	const char *out;      /* its JSON-lines file */
	const char *db;       /* the database, or NULL */
	/* after the run (FAILED, DONE and later) */
	capsim_calrun_end end;
	int status;           /* EXITED: the exit status (127: it could not be executed) */
	int signal;           /* SIGNALED: the signal */
	int err;              /* NO_FORK, LOST: errno; EXITED with 127: exec's errno, or 0 */
	double seconds;       /* how long it ran (monotonic clock) */
	int out_exists;       /* FAILED: 1 when it left its file (kept, not imported) */
	long records;         /* DONE: the file's records (lines after the machine line); -1
			       * when it cannot be read */
	/* IMPORTED: what was stored; REFUSED: why not */
	capsim_import_stats stats;
	const capsim_diags *diags;
} capsim_calrun_step;

/* Called at each event of each step, in order, with the caller's ctx. */
typedef void (*capsim_calrun_report)(capsim_calrun_event ev, const capsim_calrun_step *s,
				     void *ctx);

/* Run the plan's programs in turn, each with --out FILE (and, with
 * o->quick, the small sweeps' arguments), its standard output and error
 * those of this process (flushed first), for at most o->timeout_s (then
 * SIGTERM, and SIGKILL 10 s later: a collective that hangs must not hang
 * the run); then count the file's records and, with o->db, import the file.
 * report (NULL: none) hears STARTING, then FAILED or DONE, then IMPORTED or
 * REFUSED. The first step that fails or whose file is refused ends the run:
 * the earlier steps' files and imports stay. Returns 0 when every step
 * succeeded, -1 when one failed (the callback was told which). */
int capsim_calrun_run(const capsim_calrun_options *o, const capsim_calrun_plan *plan,
		      capsim_calrun_report report, void *ctx);

#endif
