/* threads.c - libcapsim's separate handles on separate threads at once: four
 * threads each load a shipped scenario, edit it and evaluate it, and each
 * result's JSON must be the one the same calls give on one thread. Run under
 * ThreadSanitizer by .ci/setup.sh (the schema cache, the --set path list and
 * the catalog root are shared by every handle). Exit 0, or 1 after saying
 * which differs or failed. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "capsim.h"

#define THREADS 4

static const char *const scenarios[THREADS] = { "h100-8node-ndr", "default", "h100-8node-ndr",
						 "h100-64node-ndr" };

/* scenario at pipeline depth 2, evaluated: its JSON (capsim_free), or NULL
 * after saying why */
static char *evaluate(const char *scenario)
{
	capsim_scn *h = capsim_scn_new();
	capsim_res *r = NULL;
	char *json = NULL;
	if (capsim_scn_load(h, scenario) != CAPSIM_OK ||
	    capsim_scn_set(h, "workload.parallelism.pp", "2") != CAPSIM_OK ||
	    capsim_scn_evaluate(h, 0, &r) != CAPSIM_OK)
		fprintf(stderr, "threads: %s: %s", scenario, capsim_scn_diagnostics(h));
	else
		capsim_res_json(r, &json);
	capsim_res_free(r);
	capsim_scn_free(h);
	return json;
}

/* thread i's work: scenarios[i] evaluated */
static void *work(void *arg)
{
	return evaluate(scenarios[*(const int *)arg]);
}

int main(void)
{
	pthread_t t[THREADS];
	void *got[THREADS];
	int index[THREADS];
	for (int i = 0; i < THREADS; i++) {
		index[i] = i;
		if (pthread_create(&t[i], NULL, work, &index[i]) != 0) {
			fprintf(stderr, "threads: cannot start a thread\n");
			return 1;
		}
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], &got[i]);
	int bad = 0;
	for (int i = 0; i < THREADS; i++) {
		char *want = evaluate(scenarios[i]);
		if (!want || !got[i] || strcmp(want, got[i]) != 0) {
			fprintf(stderr, "threads: %s on thread %d differs from one thread's\n",
				scenarios[i], i);
			bad = 1;
		}
		capsim_free(want);
		capsim_free(got[i]);
	}
	if (!bad)
		printf("threads: %d scenarios on %d threads, each as on one thread\n", THREADS,
		       THREADS);
	return bad;
}
