/* test_opt_cli.c - an imported model on a shipped scenario whose layout does
 * not suit it, through the capsim command as a user runs it: optimize
 * searches from there, the command it prints to run its best layout gives
 * its numbers when pasted into a shell, run --layout auto runs that layout,
 * and a model that no layout can hold is refused naming why. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

/* Qwen2.5-7B (28 attention heads, 28 layers) on 8 DGX B200s, whose own
 * layout is tp 8 pp 2: tp 8 does not divide 28 heads */
#define HF_CONFIG CAPSIM_SOURCE_DIR "/tests/data/hf/Qwen2.5-7B/config.json"
#define SCENARIO CAPSIM_SOURCE_DIR "/scenarios/dgx-b200-8node.xml"
#define MODEL "qwen2.5-7b"

typedef struct {
	char *out;    /* standard output */
	char *err;    /* standard error */
	int status;
} run_result;

/* a directory whose name the shell must quote: a space and a quote */
static char dir[128], parts[192], errfile[192];
/* the best layout of the user's search (best_once), once searched */
static json_t *best_of_user;

static char *slurp(FILE *f)
{
	size_t cap = 1 << 16, len = 0, n;
	char *s = malloc(cap);
	while ((n = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 >= cap) {
			cap *= 2;
			s = realloc(s, cap);
		}
	}
	s[len] = '\0';
	return s;
}

/* Run a shell command line, capturing its standard output and error. */
static run_result sh(const char *line)
{
	size_t n = strlen(line) + 32;
	char *cmd = malloc(n);
	snprintf(cmd, n, "%s 2>\"$CAPSIM_TEST_ERR\"", line);
	FILE *p = popen(cmd, "r");
	free(cmd);
	assert_non_null(p);
	run_result r = { slurp(p), NULL, -1 };
	int st = pclose(p);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	FILE *e = fopen(errfile, "r");
	assert_non_null(e);
	r.err = slurp(e);
	fclose(e);
	return r;
}

/* "capsim --parts PARTS ARGS" */
static run_result capsim(const char *args)
{
	char line[4096];
	snprintf(line, sizeof line, "'%s' --parts \"$CAPSIM_TEST_PARTS\" %s", CAPSIM_BIN, args);
	return sh(line);
}

static void done(run_result *r)
{
	free(r->out);
	free(r->err);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/capsim opt 'cli' %ld", (long)getpid());
	if (mkdir(dir, 0700) != 0)
		return -1;
	snprintf(parts, sizeof parts, "%s/qwen.xml", dir);
	snprintf(errfile, sizeof errfile, "%s/stderr", dir);
	setenv("CAPSIM_TEST_PARTS", parts, 1);
	setenv("CAPSIM_TEST_ERR", errfile, 1);
	char line[1024];
	snprintf(line, sizeof line, "'%s' import hf '%s' --out \"$CAPSIM_TEST_PARTS\"", CAPSIM_BIN,
		 HF_CONFIG);
	run_result r = sh(line);
	int ok = r.status == 0;
	if (!ok)
		fprintf(stderr, "import failed: %s\n", r.err);
	done(&r);
	return ok ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	remove(parts);
	remove(errfile);
	rmdir(dir);
	json_decref(best_of_user);
	return 0;
}

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	if (!j)
		fail_msg("not JSON (%s): %.300s", e.text, text);
	return j;
}

static double num(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_number(v))
		fail_msg("no number '%s'", key);
	return json_number_value(v);
}

/* a value of run's JSON (10 significant digits) against the optimiser's:
 * equal once the optimiser's is rounded as run prints it */
static void assert_as_printed(double run, double opt, const char *what)
{
	char a[64], b[64];
	snprintf(a, sizeof a, "%.10g", run);
	snprintf(b, sizeof b, "%.10g", opt);
	if (strcmp(a, b) != 0)
		fail_msg("%s: run gives %s, optimize %s", what, a, b);
}

/* the optimiser's best layout of the model (--json --top 1), with extra
 * arguments */
static json_t *best(const char *extra)
{
	char args[1024];
	snprintf(args, sizeof args, "optimize '%s' --set workload.model.ref=" MODEL
		 " --top 1 --json %s", SCENARIO, extra);
	run_result r = capsim(args);
	if (r.status != 0)
		fail_msg("optimize: exit %d: %s", r.status, r.err);
	json_t *j = parse(r.out);
	done(&r);
	json_t *top = json_array_get(json_object_get(j, "top"), 0);
	assert_non_null(top);
	json_incref(top);
	json_decref(j);
	return top;
}

/* the optimiser's best layout with a token budget of the user's, in words the
 * shell must quote: searched once, for every test that needs it (the budget
 * moves the time to train, never the layout) */
#define USER_TOKENS "--set 'workload.tokens=400 G'"
static const json_t *best_once(void)
{
	if (!best_of_user)
		best_of_user = best(USER_TOKENS);
	return best_of_user;
}

/* the layout's --set value at path, as an integer */
static int layout_int(const json_t *top, const char *path)
{
	json_t *v = json_object_get(json_object_get(top, "sets"), path);
	assert_true(json_is_string(v));
	return atoi(json_string_value(v));
}

/* the scenario's own layout does not suit the model: run refuses it */
static void test_layout_does_not_suit(void **state)
{
	(void)state;
	run_result r = capsim("run '" SCENARIO "' --set workload.model.ref=" MODEL);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "tp=8 does not divide 28 attention heads"));
	done(&r);
}

/* optimize searches from there: its best layout divides the heads and the
 * layers, and the command it prints, pasted, gives its step and memory */
static void test_optimize_and_paste(void **state)
{
	(void)state;
	const json_t *top = best_once();
	assert_int_equal(28 % layout_int(top, "workload.parallelism.tp"), 0);
	int chunks = layout_int(top, "workload.parallelism.pp") *
		     layout_int(top, "workload.parallelism.virtual-stages");
	assert_int_equal(28 % chunks, 0);
	const char *cmd = json_string_value(json_object_get(top, "run"));
	assert_non_null(cmd);
	/* capsim, the --parts quoted, run, the scenario, the user's edits, then
	 * the layout's */
	assert_true(strncmp(cmd, "capsim --parts '", 16) == 0);
	const char *user = strstr(cmd, "--set workload.model.ref=" MODEL);
	const char *tokens = strstr(cmd, USER_TOKENS);
	const char *tp = strstr(cmd, "--set workload.parallelism.tp=");
	assert_non_null(user);
	assert_non_null(tokens);
	assert_non_null(tp);
	assert_true(user < tp && tokens < tp);
	assert_null(strstr(cmd, "reliability.runs"));
	/* the line the text output prints is the same command */
	run_result text = capsim("optimize '" SCENARIO "' --set workload.model.ref=" MODEL
				 " --top 1 " USER_TOKENS);
	assert_int_equal(text.status, 0);
	const char *line_at = strstr(text.out, "\nto run it: ");
	assert_non_null(line_at);
	line_at += strlen("\nto run it: ");
	assert_true(strncmp(line_at, cmd, strlen(cmd)) == 0 && line_at[strlen(cmd)] == '\n');
	done(&text);
	/* pasted into a shell, the capsim word being this build */
	char line[8192];
	snprintf(line, sizeof line, "'%s'%s --json", CAPSIM_BIN, cmd + strlen("capsim"));
	run_result r = sh(line);
	if (r.status != 0)
		fail_msg("the pasted command: exit %d: %s", r.status, r.err);
	json_t *run = parse(r.out);
	assert_as_printed(num(run, "step_time_s"), num(top, "step_time_s"), "step_time_s");
	assert_as_printed(num(run, "peak_mem_per_gpu_bytes"), num(top, "peak_mem_per_gpu_bytes"),
			  "peak_mem_per_gpu_bytes");
	assert_as_printed(num(run, "tokens_per_s"), num(top, "tokens_per_s"), "tokens_per_s");
	assert_as_printed(num(run, "time_to_train_s"), num(top, "time_to_train_s"),
			  "time_to_train_s");
	assert_true(json_is_true(json_object_get(run, "fits_in_memory")));
	json_decref(run);
	done(&r);
}

/* run --layout auto runs the optimiser's best and says which on stderr */
static void test_run_layout_auto(void **state)
{
	(void)state;
	const json_t *top = best_once();
	run_result r = capsim("run '" SCENARIO "' --set workload.model.ref=" MODEL
			      " --layout auto --json");
	if (r.status != 0)
		fail_msg("run --layout auto: exit %d: %s", r.status, r.err);
	char want[128];
	snprintf(want, sizeof want, "capsim run: --layout auto: tp %d pp %d",
		 layout_int(top, "workload.parallelism.tp"),
		 layout_int(top, "workload.parallelism.pp"));
	assert_non_null(strstr(r.err, want));
	json_t *run = parse(r.out);
	assert_as_printed(num(run, "step_time_s"), num(top, "step_time_s"), "step_time_s");
	assert_as_printed(num(run, "peak_mem_per_gpu_bytes"), num(top, "peak_mem_per_gpu_bytes"),
			  "peak_mem_per_gpu_bytes");
	assert_int_equal((int)num(run, "dp"), (int)num(top, "dp"));
	assert_true(json_is_true(json_object_get(run, "fits_in_memory")));
	json_decref(run);
	done(&r);
	/* --layout takes auto alone */
	r = capsim("run '" SCENARIO "' --layout best");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "--layout: expected auto, found 'best'"));
	done(&r);
}

/* what no layout can get around is refused naming why: Llama 3.1 405B on
 * one H200 needs terabytes a GPU whatever the layout */
static void test_no_layout_fits(void **state)
{
	(void)state;
	static const char *const cmds[] = {
		"optimize '" CAPSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh200.xml' "
		"--set workload.model.ref=llama-3.1-405b",
		"run '" CAPSIM_SOURCE_DIR "/scenarios/gpt2-124m-1xh200.xml' "
		"--set workload.model.ref=llama-3.1-405b --layout auto",
	};
	for (size_t i = 0; i < 2; i++) {
		run_result r = capsim(cmds[i]);
		assert_int_equal(r.status, 1);
		assert_non_null(strstr(r.err, "no layout of llama-3.1-405b on 1 GPUs fits and runs"));
		assert_non_null(strstr(r.err, "memory: needs "));
		assert_string_equal(r.out, "");
		done(&r);
	}
}

/* a search past a limit on work is refused before its first simulation
 * (exit 2), pointing run to optimize's options: 524,288 GPUs, each
 * simulation weighing 32 (test_optimize's test_huge_cluster_refused) */
static void test_run_past_a_limit(void **state)
{
	(void)state;
	run_result r = capsim("run --set cluster.nodes=65536 --set cluster.fabric.tiers=3 "
			      "--set cluster.fabric.switch.ref=q3400 "
			      "--set workload.global-batch=65536 --layout auto");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "more than --max-simulations 50000"));
	assert_non_null(strstr(r.err, "capsim optimize"));
	assert_string_equal(r.out, "");
	done(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_does_not_suit),
		cmocka_unit_test(test_optimize_and_paste),
		cmocka_unit_test(test_run_layout_auto),
		cmocka_unit_test(test_no_layout_fits),
		cmocka_unit_test(test_run_past_a_limit),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
