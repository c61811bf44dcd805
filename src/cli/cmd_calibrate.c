/* cmd_calibrate.c - capsim calibrate import|run|path: calibrate/'s runs into
 * the measurement store (src/store/measure.h), calibrate/'s programs run in
 * turn on the machine to be measured (src/fit/calrun.h), and where a program
 * or probe is; this file parses the options and prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "calrun.h"
#include "catalog.h"
#include "cli.h"
#include "measure.h"
#include "nccl.h"
#include "nccltests.h"
#include "xalloc.h"

enum { I_DB, I_NCCL_TESTS, I_RANKS, I_DATE, I_JSON, I_HELP };
static const capsim_cli_opt import_opts[] = {
	[I_DB] = { "db", 0, "DB.sqlite", "the measurement database (created where absent)" },
	[I_NCCL_TESTS] = { "nccl-tests", 0, NULL, "the files are nccl-tests' *_perf output" },
	[I_RANKS] = { "ranks", 0, "N", "the rank count of a log without rank lines" },
	[I_DATE] = { "date", 0, "YYYY-MM-DD", "the day the log was made (else it is unknown)" },
	[I_JSON] = { "json", 0, NULL,
		     "one JSON object: each file's run id and counts, or its errors" },
	[I_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_calibrate_import_cmd = {
	.name = "calibrate import",
	.usage = "usage: capsim calibrate import FILE.jsonl... --db DB.sqlite [--json]\n"
		 "       capsim calibrate import --nccl-tests LOG... --db DB.sqlite [--ranks N]\n"
		 "                               [--date YYYY-MM-DD] [--json]\n",
	.about = "Store runs of calibrate/'s programs (JSON lines) in an SQLite database,\n"
		 "creating it where absent. Each file goes in whole or not at all; a file\n"
		 "already stored (same SHA-256) is refused; - reads standard input. A\n"
		 "database that another import is writing is waited for (up to 5 minutes);\n"
		 "one that is locked, full, read-only or damaged exits 1, bad input exits 2.\n"
		 "With --nccl-tests the files are the text that nccl-tests' *_perf programs\n"
		 "print: each size's out-of-place and in-place times become nccl rows (algbw\n"
		 "and busbw recomputed from size and time, which nccl-tests prints rounded).\n",
	.opts = import_opts,
	.n_opts = CAPSIM_CLI_N(import_opts),
};

enum { R_BIN_DIR, R_OUT_DIR, R_DB, R_QUICK, R_ONLY, R_NAME, R_TIMEOUT, R_JSON, R_HELP };
static const capsim_cli_opt run_opts_table[] = {
	[R_BIN_DIR] = { "bin-dir", 0, "DIR",
			"where the programs are (default: beside capsim under\n"
			"calibrate/, ../calibrate/ or build/calibrate/, then PATH)" },
	[R_OUT_DIR] = { "out-dir", 0, "DIR",
			"where the JSON lines go (default: .; created if absent)" },
	[R_DB] = { "db", 0, "FILE", "the measurement database" },
	[R_QUICK] = { "quick", 0, NULL, "small sweeps, for a smoke run (about a minute in all)" },
	[R_ONLY] = { "only", 0, "LIST", "some of gemm, pcie, nccl (default: all three)" },
	[R_NAME] = { "name", 0, "NAME", "the files' prefix (default: this host's name)" },
	[R_TIMEOUT] = { "timeout", 0, "TIME",
			"each program's limit, then it is stopped and the run\n"
			"fails (default 1 h: a full sweep takes minutes)" },
	[R_JSON] = { "json", 0, NULL,
		     "print what ran as one JSON object on standard output: each\n"
		     "program, its file, how it ended, its records and what was\n"
		     "imported (the progress stays on standard error)" },
	[R_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_calibrate_run_cmd = {
	.name = "calibrate run",
	.usage = "usage: capsim calibrate run [--bin-dir DIR] [--out-dir DIR] [--db DB.sqlite]\n"
		 "                            [--quick] [--only gemm,pcie,nccl] [--name NAME]\n"
		 "                            [--timeout TIME] [--json]\n",
	.about = "Run capsim-calibrate-gemm, -pcie and -nccl in turn on this machine,\n"
		 "writing NAME-DATE-{gemm,pcie,nccl}.jsonl, then import each into --db.\n",
	.opts = run_opts_table,
	.n_opts = CAPSIM_CLI_N(run_opts_table),
};

enum { P_HELP };
static const capsim_cli_opt path_opts_table[] = {
	[P_HELP] = { "help", 0, NULL, "this text" },
};
const capsim_cli_cmd capsim_cli_calibrate_path_cmd = {
	.name = "calibrate path",
	.usage = "usage: capsim calibrate path NAME\n",
	.about = "Print where calibrate's program or script NAME is: the PyTorch probes\n"
		 "(attn_probe.py, or attn_probe), refit.sh and the README beside the\n"
		 "catalog (the source tree, or share/capsim/calibrate where installed), the\n"
		 "CUDA programs (capsim-calibrate-gemm, -pcie, -nccl) where calibrate run\n"
		 "finds them. So: python3 \"$(capsim calibrate path attn_probe)\" ...\n",
	.opts = path_opts_table,
	.n_opts = CAPSIM_CLI_N(path_opts_table),
};

/* every subcommand's help */
static void usage(FILE *out)
{
	capsim_cli_help(&capsim_cli_calibrate_import_cmd, out);
	fputc('\n', out);
	capsim_cli_help(&capsim_cli_calibrate_run_cmd, out);
	fputc('\n', out);
	capsim_cli_help(&capsim_cli_calibrate_path_cmd, out);
}

/* one import's counts, as a line on stdout */
static void print_stats(const char *path, const char *db, const capsim_import_stats *st)
{
	printf("%s: run %lld in %s: %zu GEMMs (%zu without an algorithm), %zu copy, %zu checks, "
	       "%zu power, %zu power-duty, %zu nccl, %zu pcie, %zu torch-launch, %zu torch-step, "
	       "%zu torch-host, %zu attention (%zu refused by their backend)\n",
	       path, (long long)st->run_id, db, st->gemm, st->gemm_failed, st->copy, st->checks,
	       st->power, st->power_duty, st->nccl, st->pcie, st->torch_launch, st->torch_step,
	       st->torch_host, st->attention, st->attention_refused);
}

/* one import as a JSON object: the run and its counts, or the errors */
static json_t *stats_json(const char *path, const capsim_import_stats *st, const capsim_diags *d,
			  int ok)
{
	json_t *o = json_pack("{s:s, s:b}", "file", path, "imported", ok);
	if (ok) {
		json_object_set_new(o, "run_id", json_integer((json_int_t)st->run_id));
		json_object_set_new(o, "counts", json_pack(
			"{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"gemm", (json_int_t)st->gemm, "gemm_failed", (json_int_t)st->gemm_failed,
			"copy", (json_int_t)st->copy, "checks", (json_int_t)st->checks,
			"power", (json_int_t)st->power, "power_duty", (json_int_t)st->power_duty,
			"nccl", (json_int_t)st->nccl, "pcie", (json_int_t)st->pcie,
			"torch_launch", (json_int_t)st->torch_launch,
			"torch_step", (json_int_t)st->torch_step,
			"torch_host", (json_int_t)st->torch_host,
			"attention", (json_int_t)st->attention,
			"attention_refused", (json_int_t)st->attention_refused));
	} else {
		json_t *errs = json_array();
		for (size_t i = 0; i < d->n; i++)
			json_array_append_new(errs, json_pack("{s:s, s:s}", "where",
							      d->v[i].where ? d->v[i].where : "",
							      "message", d->v[i].msg));
		json_object_set_new(o, "errors", errs);
	}
	return o;
}

/* ---- nccl-tests logs ------------------------------------------------------- */

/* the store's name of a capsim_coll (nccl.h's capsim_coll_perf_names), or
 * NULL for one it does not hold (reduce) */
static const char *store_op(int op)
{
	if (op < 0 || op >= CAPSIM_COLL__COUNT || op == CAPSIM_COLL_REDUCE)
		return NULL;
	return capsim_coll_perf_names[op];
}

/* one size, one placement, as the store's nccl record: nccl-tests gives
 * one averaged time per size and placement, the record's one sample; a
 * #wrong of N/A (validation off) is stored as 0 */
static void nccl_record(const capsim_nccltests_log *log, const char *op,
			const capsim_nccltests_row *r, int in_place, double *sample,
			capsim_measure_nccl *out)
{
	double wrong = in_place ? r->ip_wrong : r->oop_wrong;
	*sample = (in_place ? r->ip_time_us : r->oop_time_us) * 1e-6;
	*out = (capsim_measure_nccl){
		.line = r->line, .op = op, .dtype = r->type,
		.redop = r->redop[0] ? r->redop : "none", .algo = "default", .proto = "default",
		.ranks = log->nranks, .nodes = log->hosts > 0 ? log->hosts : 1,
		.bytes = (int64_t)r->bytes, .count = (int64_t)r->count,
		.wrong = wrong > 0 ? (int64_t)wrong : 0, .in_place = in_place,
		.median_s = *sample, .samples_s = sample, .n_samples = 1,
	};
}

/* Import one nccl-tests log: parse it, and store its rows (each size's
 * out-of-place and in-place times) as one run of a machine made from the
 * log's program, GPU, ranks and hosts, under the SHA-256 of the bytes
 * parsed. */
static int import_log(const char *path, const char *db, int ranks, const char *date,
		      capsim_import_stats *st, capsim_diags *d)
{
	capsim_nccltests_hint hint = { .op = -1, .ranks = ranks };
	capsim_nccltests_log log;
	memset(st, 0, sizeof *st);
	int rc = capsim_nccltests_parse_file(path, &hint, &log, d);
	const char *op = rc == 0 ? store_op(log.op) : NULL;
	if (rc == 0 && !op) {
		capsim_diags_add(d, path, 0, "the store holds all_reduce, all_gather, "
				 "reduce_scatter, alltoall, broadcast and sendrecv, not '%s'",
				 log.op >= 0 ? capsim_coll_names[log.op] : "unknown");
		rc = -1;
	}
	if (rc == 0) {
		capsim_measure_nccl *recs = capsim_xcalloc(2 * log.n_rows + 1, sizeof *recs);
		double *samples = capsim_xcalloc(2 * log.n_rows + 1, sizeof *samples);
		size_t n = 0, empty = 0;
		for (size_t i = 0; i < log.n_rows; i++) {
			/* nccl-tests -b 0 times a 0-byte collective: a launch, no
			 * transfer, and the store keeps sizes from 1 B */
			if (log.rows[i].bytes <= 0) {
				empty++;
				continue;
			}
			for (int in_place = 0; in_place < 2; in_place++, n++)
				nccl_record(&log, op, &log.rows[i], in_place, &samples[n], &recs[n]);
		}
		if (empty && n)
			fprintf(stderr, "%s: note: %zu row%s of 0 bytes not stored (no transfer to "
					"measure)\n", strcmp(path, "-") ? path : "standard input", empty,
				empty == 1 ? "" : "s");
		char program[64];
		snprintf(program, sizeof program, "nccl-tests %.40s",
			 log.program[0] ? log.program : "(program not named)");
		capsim_measure_machine m = {
			.program = program, .date = date ? date : "unknown (nccl-tests log)",
			.gpu = log.device[0] ? log.device : "unknown",
			.launcher = log.processes > 1 ? "mpi" : "single-process",
			.ranks = log.nranks, .nodes = log.hosts > 0 ? log.hosts : 1,
		};
		rc = capsim_measure_import_nccl(path, log.sha256, db, &m, recs, n, st, d);
		free(recs);
		free(samples);
	}
	capsim_nccltests_free(&log);
	return rc;
}

/* Import one argument (a JSON-lines file, or an nccl-tests log when logs);
 * 0, or -1 with the reasons in d. "-" is standard input, which the parser
 * and the store name so, in messages and in runs.source. */
static int import_one(const char *arg, int logs, const char *db, int ranks, const char *date,
		      capsim_import_stats *st, capsim_diags *d)
{
	return logs ? import_log(arg, db, ranks, date, st, d) :
		      capsim_measure_import(arg, db, st, d);
}

/* the exit status of a failed import: 1 when the run failed it (the
 * database locked, the disk full, a file unreadable), 2 when the input did */
static int failure_status(const capsim_diags *d)
{
	return capsim_diags_runtime(d) ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_USAGE;
}

/* of two imports' statuses, the one to exit with: a runtime failure (1)
 * over bad input (2) over success (0) */
static int worse_status(int a, int b)
{
	if (a == CAPSIM_EXIT_FAILURE || b == CAPSIM_EXIT_FAILURE)
		return CAPSIM_EXIT_FAILURE;
	return a != CAPSIM_EXIT_OK ? a : b;
}

static int import(int argc, char **argv)
{
	const char *db = NULL;
	int logs = 0, ranks = 0, as_json = 0;
	const char *date = NULL;
	optind = 1;
	int c;
	while ((c = capsim_cli_next(&capsim_cli_calibrate_import_cmd, argc, argv)) != -1) {
		switch (c) {
		case I_DB: db = optarg; break;
		case I_NCCL_TESTS: logs = 1; break;
		case I_JSON: as_json = 1; break;
		case I_DATE:
			date = optarg;
			if (!capsim_measure_is_day(date)) {
				fprintf(stderr, "capsim calibrate import: --date: expected YYYY-MM-DD, "
						"a real day from 1990 to 2100, found '%s'\n", date);
				return CAPSIM_EXIT_USAGE;
			}
			break;
		case I_RANKS:
			ranks = capsim_cli_count(optarg, 1 << 24);
			if (ranks < 1) {
				fprintf(stderr, "capsim calibrate import: --ranks: expected a positive "
						"integer, found '%s'\n", optarg);
				return CAPSIM_EXIT_USAGE;
			}
			break;
		case I_HELP:
			capsim_cli_help(&capsim_cli_calibrate_import_cmd, stdout);
			return CAPSIM_EXIT_OK;
		default: return CAPSIM_EXIT_USAGE;
		}
	}
	if (!db || optind >= argc) {
		fprintf(stderr, "capsim calibrate import: %s\n",
			!db ? "--db is required" : "no file to import");
		capsim_cli_help(&capsim_cli_calibrate_import_cmd, stderr);
		return CAPSIM_EXIT_USAGE;
	}
	int status = CAPSIM_EXIT_OK;
	json_t *imports = json_array();
	for (int i = optind; i < argc; i++) {
		capsim_diags d = { 0 };
		capsim_import_stats st;
		const char *name = strcmp(argv[i], "-") == 0 ? "standard input" : argv[i];
		int rc = import_one(argv[i], logs, db, ranks, date, &st, &d);
		if (rc < 0) {
			capsim_diags_print(&d, stderr);
			status = worse_status(status, failure_status(&d));
		} else if (!as_json) {
			print_stats(name, db, &st);
		}
		json_array_append_new(imports, stats_json(name, &st, &d, rc == 0));
		capsim_diags_free(&d);
	}
	if (as_json) {
		json_t *o = capsim_cli_json_head(NULL, NULL);
		json_object_set_new(o, "database", json_string(db));
		json_object_set_new(o, "store_schema_version", json_integer(CAPSIM_STORE_SCHEMA));
		json_object_set_new(o, "format", json_string(logs ? "nccl-tests" : "jsonl"));
		json_object_set_new(o, "imports", imports);
		json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(o);
	} else {
		json_decref(imports);
	}
	return status;
}

/* ---- run ------------------------------------------------------------------ */

/* --only's list into want[]; -1 on a name that is not a program's kind */
static int parse_only(const char *list, int *want)
{
	memset(want, 0, CAPSIM_CALRUN__COUNT * sizeof *want);
	const char *p = list;
	while (*p) {
		size_t len = strcspn(p, ",");
		int kind = capsim_calrun_kind_parse(p, len);
		if (kind < 0) {
			fprintf(stderr, "capsim calibrate run: --only: expected gemm, pcie or nccl, "
					"found '%.*s'\n", (int)len, p);
			return -1;
		}
		want[kind] = 1;
		p += len + (p[len] == ',');
	}
	return 0;
}

/* how a failed program ended, on stderr: first why, when it says more than
 * its exit status, then what it took and what it left */
static void print_failure(const capsim_calrun_step *s, double timeout_s)
{
	switch (s->end) {
	case CAPSIM_CALRUN_NO_FORK:
		fprintf(stderr, "capsim calibrate run: fork: %s\n", strerror(s->err));
		break;
	case CAPSIM_CALRUN_LOST:
		fprintf(stderr, "capsim calibrate run: waitpid: %s\n", strerror(s->err));
		break;
	case CAPSIM_CALRUN_TIMED_OUT:
		fprintf(stderr, "capsim calibrate run: %s did not finish within %g s and was "
			"stopped (--timeout raises the limit)\n", s->path, timeout_s);
		break;
	case CAPSIM_CALRUN_SIGNALED:
		fprintf(stderr, "capsim calibrate run: %s killed by signal %d\n", s->path,
			s->signal);
		break;
	case CAPSIM_CALRUN_EXITED:
		if (s->err)
			fprintf(stderr, "capsim calibrate run: %s: %s\n", s->path, strerror(s->err));
		break;
	}
	if (s->end == CAPSIM_CALRUN_EXITED)
		fprintf(stderr, "capsim calibrate run: %s failed (exit status %d) after %.0f s",
			s->program, s->status, s->seconds);
	else
		fprintf(stderr, "capsim calibrate run: %s failed after %.0f s", s->program,
			s->seconds);
	if (s->out_exists)
		fprintf(stderr, "; what it wrote is in %s, not imported\n", s->out);
	else
		fprintf(stderr, "; it wrote no %s\n", s->out);
}

/* the progress of a run, as capsim_calrun_run reports it: "[i/n] program
 * ..." lines and failures on stderr, each import's counts on stdout */
/* what calibrate run tells as it goes: the time limit, and with --json the
 * steps' objects (else NULL: lines on standard output) */
typedef struct {
	double timeout_s;
	json_t *steps;
} run_tell;

/* how a program's run ended, in a word for JSON */
static const char *end_word(const capsim_calrun_step *s)
{
	switch (s->end) {
	case CAPSIM_CALRUN_EXITED: return s->status == 0 ? "exited" : "failed";
	case CAPSIM_CALRUN_SIGNALED: return "killed";
	case CAPSIM_CALRUN_TIMED_OUT: return "timed out";
	default: return "not run";
	}
}

/* the step's JSON object, made at its first event and updated at each */
static void step_json(capsim_calrun_event ev, const capsim_calrun_step *s, json_t *steps)
{
	if (ev == CAPSIM_CALRUN_STARTING) {
		json_array_append_new(steps, json_pack("{ss ss ss}", "program", s->program,
						       "path", s->path, "out", s->out));
		return;
	}
	json_t *o = json_array_get(steps, json_array_size(steps) - 1);
	if (!o)
		return;
	json_object_set_new(o, "end", json_string(end_word(s)));
	if (ev == CAPSIM_CALRUN_DONE)
		json_object_set_new(o, "records", json_integer(s->records));
	if (ev == CAPSIM_CALRUN_IMPORTED || ev == CAPSIM_CALRUN_REFUSED)
		json_object_set_new(o, "import", stats_json(s->out, &s->stats, s->diags,
							    ev == CAPSIM_CALRUN_IMPORTED));
}

static void print_step(capsim_calrun_event ev, const capsim_calrun_step *s, void *ctx)
{
	const run_tell *tell = ctx;
	const double *timeout_s = &tell->timeout_s;
	if (tell->steps)
		step_json(ev, s, tell->steps);
	switch (ev) {
	case CAPSIM_CALRUN_STARTING:
		fprintf(stderr, "[%d/%d] %s ...\n", s->step, s->n, s->program);
		break;
	case CAPSIM_CALRUN_FAILED:
		print_failure(s, *timeout_s);
		break;
	case CAPSIM_CALRUN_DONE:
		fprintf(stderr, "[%d/%d] %s ... done in %.0f s, %ld records\n", s->step, s->n,
			s->program, s->seconds, s->records);
		break;
	case CAPSIM_CALRUN_IMPORTED:
		if (!tell->steps)
			print_stats(s->out, s->db, &s->stats);
		break;
	case CAPSIM_CALRUN_REFUSED:
		capsim_diags_print(s->diags, stderr);
		if (!capsim_diags_runtime(s->diags))
			fprintf(stderr, "capsim calibrate run: %s wrote what cannot be imported\n",
				s->program);
		break;
	}
}

/* Find every wanted program and name its output file, refusing files that
 * exist (exit 2); then run them in turn (exit 1 on the first that fails). */
static int run_all(const capsim_calrun_options *o, int json)
{
	static capsim_calrun_plan plan;
	capsim_diags d = { 0 };
	if (capsim_calrun_prepare(o, &plan, &d) < 0) {
		for (size_t i = 0; i < d.n; i++)
			fprintf(stderr, "capsim calibrate run: %s\n", d.v[i].msg);
		capsim_diags_free(&d);
		return CAPSIM_EXIT_USAGE;
	}
	run_tell tell = { .timeout_s = o->timeout_s, .steps = json ? json_array() : NULL };
	int rc = capsim_calrun_run(o, &plan, print_step, &tell);
	if (json) {
		json_t *out = capsim_cli_json_head(NULL, NULL);
		json_object_set_new(out, "db", o->db ? json_string(o->db) : json_null());
		json_object_set_new(out, "steps", tell.steps);
		json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(out);
	}
	return rc < 0 ? CAPSIM_EXIT_FAILURE : CAPSIM_EXIT_OK;
}

static int run(int argc, char **argv)
{
	capsim_calrun_options o = { .out_dir = ".", .timeout_s = 3600.0 };
	int json = 0;
	for (int i = 0; i < CAPSIM_CALRUN__COUNT; i++)
		o.want[i] = 1;
	optind = 1;
	int c;
	while ((c = capsim_cli_next(&capsim_cli_calibrate_run_cmd, argc, argv)) != -1) {
		switch (c) {
		case R_BIN_DIR: o.bin_dir = optarg; break;
		case R_OUT_DIR: o.out_dir = optarg; break;
		case R_DB:
			/* refused before the programs run, as the store would after */
			if (strcmp(optarg, "-") == 0) {
				fprintf(stderr, "capsim calibrate run: --db -: a store cannot be "
					"standard input or output: it is an SQLite file that is read "
					"and written in place; give a file name (./- for a file named "
					"'-')\n");
				return CAPSIM_EXIT_USAGE;
			}
			o.db = optarg;
			break;
		case R_QUICK: o.quick = 1; break;
		case R_JSON: json = 1; break;
		case R_NAME: o.name = optarg; break;
		case R_TIMEOUT:
			if (capsim_cli_quantity("calibrate run", "--timeout", optarg,
						CAPSIM_DIM_SECONDS, 1.0, 7 * 86400.0, 0,
						"a time from 1 s to 7 d (\"2 h\")", &o.timeout_s) < 0)
				return CAPSIM_EXIT_USAGE;
			break;
		case R_ONLY:
			if (parse_only(optarg, o.want) < 0)
				return CAPSIM_EXIT_USAGE;
			break;
		case R_HELP:
			capsim_cli_help(&capsim_cli_calibrate_run_cmd, stdout);
			return CAPSIM_EXIT_OK;
		default: return CAPSIM_EXIT_USAGE;
		}
	}
	int any = 0;
	for (int i = 0; i < CAPSIM_CALRUN__COUNT; i++)
		any |= o.want[i];
	if (optind < argc || !any) {
		fprintf(stderr, "capsim calibrate run: %s\n",
			!any ? "--only names no program" : "unexpected argument");
		capsim_cli_help(&capsim_cli_calibrate_run_cmd, stderr);
		return CAPSIM_EXIT_USAGE;
	}
	return run_all(&o, json);
}

/* name as a script of ROOT/calibrate (torch/, results/, calibrate/ itself;
 * a probe's ".py" may be left off) into path: 1, or 0 with where it looked
 * added to looked */
static int find_script(const char *name, char *path, size_t size, char *looked, size_t n)
{
	static const char *const dirs[] = { "calibrate/torch", "calibrate/results", "calibrate" };
	static const char *const ends[] = { "", ".py" };
	const char *root = capsim_catalog_default_root();
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		size_t used = strlen(looked);
		snprintf(looked + used, n - used, "%s%s/%s", used ? ", " : "", root, dirs[i]);
		for (size_t e = 0; e < sizeof ends / sizeof ends[0]; e++) {
			struct stat st;
			int w = snprintf(path, size, "%s/%s/%s%s", root, dirs[i], name, ends[e]);
			if (w > 0 && (size_t)w < size && stat(path, &st) == 0 && S_ISREG(st.st_mode))
				return 1;
		}
	}
	return 0;
}

/* capsim calibrate path NAME */
static int path_of(int argc, char **argv)
{
	optind = 1;
	int c;
	while ((c = capsim_cli_next(&capsim_cli_calibrate_path_cmd, argc, argv)) != -1) {
		if (c != P_HELP)
			return CAPSIM_EXIT_USAGE;
		capsim_cli_help(&capsim_cli_calibrate_path_cmd, stdout);
		return CAPSIM_EXIT_OK;
	}
	if (optind != argc - 1 || !argv[optind][0] || strchr(argv[optind], '/')) {
		fprintf(stderr, "capsim calibrate path: expected one program or script name "
			"(attn_probe.py, capsim-calibrate-gemm), found %d arguments\n", argc - optind);
		return CAPSIM_EXIT_USAGE;
	}
	const char *name = argv[optind];
	char path[CAPSIM_CALRUN_PATH_MAX], looked[4 * CAPSIM_CALRUN_PATH_MAX] = "";
	char looked_prog[2 * CAPSIM_CALRUN_PATH_MAX];
	if (find_script(name, path, sizeof path, looked, sizeof looked) ||
	    capsim_calrun_find(name, path, sizeof path, looked_prog, sizeof looked_prog)) {
		printf("%s\n", path);
		return CAPSIM_EXIT_OK;
	}
	fprintf(stderr, "capsim calibrate path: %s: no such program or script; looked in %s, %s\n",
		name, looked, looked_prog);
	return CAPSIM_EXIT_USAGE;
}

int capsim_cmd_calibrate(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CAPSIM_EXIT_USAGE : CAPSIM_EXIT_OK;
	}
	if (!strcmp(argv[1], "import"))
		return import(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "path"))
		return path_of(argc - 1, argv + 1);
	static const char *const subs[] = { "import", "run", "path" };
	const char *near = capsim_cli_nearest(argv[1], subs, sizeof subs / sizeof subs[0]);
	fprintf(stderr, "capsim calibrate: no subcommand '%s'; %s%s%s\n", argv[1],
		near ? "did you mean '" : "see 'capsim calibrate --help'", near ? near : "",
		near ? "'?" : "");
	return CAPSIM_EXIT_USAGE;
}
