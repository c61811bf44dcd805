/* test_schedule.c - pipeline schedules against closed forms (Narayanan et al.
 * SC21 Sec. 2.2: bubbles (p-1)/m and (p-1)/(vm)), p2p delays, a bottleneck
 * stage, per-micro-batch durations and tails against a brute-force reference,
 * Megatron's interleaved order, event counts, determinism and errors. */
#include "catalog.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "scenario.h"
#include "schedule.h"

/* uniform forward and backward per micro-batch, ns: neither 0 nor 1, nor a
 * multiple of each other */
#define TF 2385
#define TB 5171
/* divisible by 2, 3 and 4: interleaved chunks keep integer times */
#define TFV 2388
#define TBV 5172
#define D 731

static const int kinds[3] = { CAPSIM_SCHED_GPIPE, CAPSIM_SCHED_1F1B,
			      CAPSIM_SCHED_1F1B_INTERLEAVED };

/* ---- fixtures ---- */

/* A spec with every (stage, chunk) at tf, tb; arrays owned by the caller. */
static capsim_pipeline_spec uniform(int kind, int p, int m, int v,
				    capsim_time_ns *f, capsim_time_ns *b,
				    capsim_time_ns tf, capsim_time_ns tb,
				    capsim_time_ns d)
{
	for (int x = 0; x < p * v; x++) {
		f[x] = tf;
		b[x] = tb;
	}
	return (capsim_pipeline_spec){ .stages = p, .microbatches = m, .chunks = v,
				       .schedule = kind, .fwd_ns = f, .bwd_ns = b,
				       .p2p_ns = d };
}

/* Simulate; fail on an error. The caller frees r. */
static void simulate(const capsim_pipeline_spec *s, capsim_pipeline_result *r)
{
	int rc = capsim_pipeline_simulate(s, r);
	if (rc != CAPSIM_PIPELINE_OK)
		fail_msg("simulate(kind %d, p %d, m %d, v %d): %s", s->schedule,
			 s->stages, s->microbatches, s->chunks, r->errmsg);
}

static capsim_time_ns makespan(const capsim_pipeline_spec *s)
{
	capsim_pipeline_result r;
	simulate(s, &r);
	capsim_time_ns t = r.makespan_ns;
	capsim_pipeline_result_free(&r);
	return t;
}

#define MAXV 4
#define MAXP 16

/* ---- the brute-force reference ----
 * Orders written from the schedules' definitions, independently of
 * schedule.c; times by sweeping the stages over and over, starting each
 * stage's next task once its input is known: start = max(previous end on the
 * stage, input's end + delay). O(T^2) at worst, fine for small cases. */

typedef struct ref_task {
	int c, i, b;
	capsim_time_ns start, end;
} ref_task;

static void ref_order(int kind, int p, int m, int v, int k, ref_task *o)
{
	int n = 0;
	if (kind == CAPSIM_SCHED_GPIPE) {
		for (int i = 0; i < m; i++)
			o[n++] = (ref_task){ 0, i, 0, -1, -1 };
		for (int i = 0; i < m; i++)
			o[n++] = (ref_task){ 0, i, 1, -1, -1 };
		return;
	}
	if (kind == CAPSIM_SCHED_1F1B) {
		int warm = p - k - 1 < m ? p - k - 1 : m, f = 0, b = 0;
		while (f < warm)
			o[n++] = (ref_task){ 0, f++, 0, -1, -1 };
		while (f < m) {
			o[n++] = (ref_task){ 0, f++, 0, -1, -1 };
			o[n++] = (ref_task){ 0, b++, 1, -1, -1 };
		}
		while (b < m)
			o[n++] = (ref_task){ 0, b++, 1, -1, -1 };
		return;
	}
	/* Megatron-LM's forward_backward_pipelining_with_interleaving, as its
	 * loops read: get_model_chunk_id and get_microbatch_id_in_model_chunk */
	int total = m * v, warm;
	if (m == p) {
		warm = total;
	} else {
		warm = (p - k - 1) * 2 + (v - 1) * p;
		if (warm > total)
			warm = total;
	}
	for (int it = 0; it < total; it++) {
		/* forward iteration it, then (from warm on) backward it - warm */
		int fq = it, bq = it - warm;
		int grp = p * v;
		int fc = (fq % grp) / p, fi = (fq / grp) * p + fq % p;
		o[n++] = (ref_task){ fc, fi, 0, -1, -1 };
		if (bq >= 0) {
			int bc = v - 1 - (bq % grp) / p, bi = (bq / grp) * p + bq % p;
			o[n++] = (ref_task){ bc, bi, 1, -1, -1 };
		}
	}
	for (int bq = total - warm; bq < total; bq++) {
		int grp = p * v;
		int bc = v - 1 - (bq % grp) / p, bi = (bq / grp) * p + bq % p;
		o[n++] = (ref_task){ bc, bi, 1, -1, -1 };
	}
}

static capsim_time_ns ref_dur(const capsim_pipeline_spec *s, int k, int c, int i,
			      int b)
{
	if (s->task_ns)
		return s->task_ns(s->task_ctx, k, c, i, b);
	return b ? s->bwd_ns[k * s->chunks + c] : s->fwd_ns[k * s->chunks + c];
}

static capsim_time_ns ref_link(const capsim_pipeline_spec *s, int k)
{
	return s->p2p_link_ns ? s->p2p_link_ns[k] : s->p2p_ns;
}

/* Fill o (p x 2vm, by stage and order) and return the makespan. */
static capsim_time_ns reference(const capsim_pipeline_spec *s, ref_task *o)
{
	int p = s->stages, m = s->microbatches, v = s->chunks, vp = v * p;
	int per = 2 * v * m;
	/* end[((k v + c) m + i) 2 + b], -1 while unknown */
	capsim_time_ns *end = malloc(sizeof *end * (size_t)(p * per));
	for (int x = 0; x < p * per; x++)
		end[x] = -1;
	int next[MAXP] = { 0 };
	capsim_time_ns free_at[MAXP] = { 0 };
	for (int k = 0; k < p; k++)
		ref_order(s->schedule, p, m, v, k, o + k * per);
	int progress = 1;
	while (progress) {
		progress = 0;
		for (int k = 0; k < p; k++) {
			while (next[k] < per) {
				ref_task *t = &o[k * per + next[k]];
				int j = t->c * p + k; /* virtual stage */
				capsim_time_ns ready = 0;
				int pk = -1, pc = 0, pb = 0; /* producer */
				capsim_time_ns delay = 0;
				if (!t->b && j > 0) {
					pk = (j - 1) % p, pc = (j - 1) / p, pb = 0;
					delay = pk != k ? ref_link(s, pk) : 0;
				} else if (t->b && j == vp - 1) {
					pk = k, pc = t->c, pb = 0;
				} else if (t->b) {
					pk = (j + 1) % p, pc = (j + 1) / p, pb = 1;
					delay = pk != k ? ref_link(s, k) : 0;
				}
				if (pk >= 0) {
					capsim_time_ns e = end[((pk * v + pc) * m + t->i) * 2 + pb];
					if (e < 0)
						break;
					ready = e + delay;
				}
				t->start = ready > free_at[k] ? ready : free_at[k];
				t->end = t->start + ref_dur(s, k, t->c, t->i, t->b);
				free_at[k] = t->end;
				end[((k * v + t->c) * m + t->i) * 2 + t->b] = t->end;
				next[k]++;
				progress = 1;
			}
		}
	}
	capsim_time_ns ms = 0;
	for (int k = 0; k < p; k++) {
		if (next[k] != per)
			fail_msg("reference deadlocked at stage %d", k);
		capsim_time_ns fin = free_at[k] + (s->tail_ns ? s->tail_ns[k] : 0);
		if (fin > ms)
			ms = fin;
	}
	free(end);
	return ms;
}

/* Every task of the simulation equals the reference's, in order and time. */
static void expect_reference(const capsim_pipeline_spec *s)
{
	int per = 2 * s->chunks * s->microbatches;
	ref_task *o = malloc(sizeof *o * (size_t)(s->stages * per));
	capsim_time_ns want = reference(s, o);
	capsim_pipeline_result r;
	simulate(s, &r);
	assert_int_equal(r.tasks_per_stage, per);
	for (int k = 0; k < s->stages; k++) {
		for (int n = 0; n < per; n++) {
			const capsim_pipeline_task *t = capsim_pipeline_task_at(&r, k, (size_t)n);
			const ref_task *w = &o[k * per + n];
			if (t->stage != k || t->chunk != w->c || t->microbatch != w->i ||
			    t->backward != w->b || t->start_ns != w->start || t->end_ns != w->end)
				fail_msg("kind %d p %d m %d v %d: stage %d task %d is %c%d.%d "
					 "[%lld, %lld], reference %c%d.%d [%lld, %lld]",
					 s->schedule, s->stages, s->microbatches, s->chunks, k, n,
					 t->backward ? 'B' : 'F', t->microbatch, t->chunk,
					 (long long)t->start_ns, (long long)t->end_ns,
					 w->b ? 'B' : 'F', w->i, w->c, (long long)w->start,
					 (long long)w->end);
		}
	}
	assert_int_equal(r.makespan_ns, want);
	capsim_pipeline_result_free(&r);
	free(o);
}

/* ---- closed forms, uniform stages, no p2p delay ---- */

/* GPipe and 1F1B: (m + p - 1)(tf + tb); every stage idles (p - 1)(tf + tb),
 * a bubble fraction (p - 1)/m of the ideal m(tf + tb). */
static void test_gpipe_1f1b_closed_form(void **state)
{
	(void)state;
	static const int pm[][2] = { { 2, 2 }, { 4, 8 }, { 4, 3 }, { 5, 7 },
				     { 8, 32 }, { 16, 64 }, { 3, 1 } };
	capsim_time_ns f[MAXP], b[MAXP];
	for (int x = 0; x < 2; x++) {
		for (size_t c = 0; c < sizeof pm / sizeof pm[0]; c++) {
			int p = pm[c][0], m = pm[c][1];
			capsim_pipeline_spec s = uniform(kinds[x], p, m, 1, f, b, TF, TB, 0);
			capsim_pipeline_result r;
			simulate(&s, &r);
			assert_int_equal(r.makespan_ns, (capsim_time_ns)(m + p - 1) * (TF + TB));
			for (int k = 0; k < p; k++) {
				assert_int_equal(r.stage[k].busy_ns, (capsim_time_ns)m * (TF + TB));
				assert_int_equal(r.stage[k].idle_ns,
						 (capsim_time_ns)(p - 1) * (TF + TB));
				assert_rel((double)r.stage[k].idle_ns / ((double)m * (TF + TB)),
					   (double)(p - 1) / m, 1e-12);
			}
			capsim_pipeline_result_free(&r);
		}
	}
}

/* Interleaved 1F1B with v chunks of tf/v, tb/v: (m + (p - 1)/v)(tf + tb),
 * a bubble of (p - 1)/(v m) (Narayanan et al. SC21 Sec. 2.2.2), for m = p
 * (Megatron's all-forwards-first case) and larger multiples of p. */
static void test_interleaved_closed_form(void **state)
{
	(void)state;
	static const int ps[] = { 2, 4, 8 }, ms[] = { 1, 2, 4 };
	capsim_time_ns f[MAXP * MAXV], b[MAXP * MAXV];
	for (size_t a = 0; a < 3; a++) {
		for (int v = 2; v <= MAXV; v++) {
			for (size_t c = 0; c < 3; c++) {
				int p = ps[a], m = ms[c] * p;
				capsim_time_ns tfc = TFV / v, tbc = TBV / v;
				capsim_pipeline_spec s = uniform(CAPSIM_SCHED_1F1B_INTERLEAVED, p,
								 m, v, f, b, tfc, tbc, 0);
				capsim_pipeline_result r;
				simulate(&s, &r);
				/* (m + (p-1)/v)(tf + tb) = (m v + p - 1)(tf/v + tb/v) */
				assert_int_equal(r.makespan_ns,
						 (capsim_time_ns)(m * v + p - 1) * (tfc + tbc));
				assert_rel((double)r.makespan_ns,
					   (m + (double)(p - 1) / v) * (TFV + TBV), 1e-12);
				for (int k = 0; k < p; k++)
					assert_rel((double)r.stage[k].idle_ns /
							   ((double)m * (TFV + TBV)),
						   (double)(p - 1) / ((double)v * m), 1e-12);
				capsim_pipeline_result_free(&r);
			}
		}
	}
}

/* Megatron's interleaved order, by hand for p = 4, v = 2, m = 8 (SC21 Fig. 4):
 * stage 0 warms up with (4 - 0 - 1) 2 + (2 - 1) 4 = 10 forwards: micro-batches
 * 0-3 of chunk 0, 0-3 of chunk 1, 4-5 of chunk 0; then F6.0 B0.1 F7.0 B1.1.
 * The last stage warms up with 4: 0-3 of chunk 0, then F0.1 B0.1. */
static void test_interleaved_order(void **state)
{
	(void)state;
	capsim_time_ns f[8], b[8];
	capsim_pipeline_spec s = uniform(CAPSIM_SCHED_1F1B_INTERLEAVED, 4, 8, 2, f, b,
					 TFV / 2, TBV / 2, 0);
	capsim_pipeline_result r;
	simulate(&s, &r);
	static const int first[][3] = { /* chunk, micro-batch, backward */
		{ 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 }, { 0, 3, 0 }, { 1, 0, 0 }, { 1, 1, 0 },
		{ 1, 2, 0 }, { 1, 3, 0 }, { 0, 4, 0 }, { 0, 5, 0 }, { 0, 6, 0 }, { 1, 0, 1 },
		{ 0, 7, 0 }, { 1, 1, 1 } };
	for (size_t n = 0; n < sizeof first / sizeof first[0]; n++) {
		const capsim_pipeline_task *t = capsim_pipeline_task_at(&r, 0, n);
		assert_int_equal(t->chunk, first[n][0]);
		assert_int_equal(t->microbatch, first[n][1]);
		assert_int_equal(t->backward, first[n][2]);
	}
	static const int last[][3] = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 }, { 0, 3, 0 },
				       { 1, 0, 0 }, { 1, 0, 1 }, { 1, 1, 0 }, { 1, 1, 1 } };
	for (size_t n = 0; n < sizeof last / sizeof last[0]; n++) {
		const capsim_pipeline_task *t = capsim_pipeline_task_at(&r, 3, n);
		assert_int_equal(t->chunk, last[n][0]);
		assert_int_equal(t->microbatch, last[n][1]);
		assert_int_equal(t->backward, last[n][2]);
	}
	/* 1F1B's last stage alternates from the start; its first warms up p - 1 */
	capsim_pipeline_result_free(&r);
	s = uniform(CAPSIM_SCHED_1F1B, 4, 8, 1, f, b, TF, TB, 0);
	simulate(&s, &r);
	assert_int_equal(capsim_pipeline_task_at(&r, 3, 1)->backward, 1);
	assert_int_equal(capsim_pipeline_task_at(&r, 0, 2)->backward, 0);
	assert_int_equal(capsim_pipeline_task_at(&r, 0, 3)->backward, 0);
	assert_int_equal(capsim_pipeline_task_at(&r, 0, 4)->backward, 1);
	capsim_pipeline_result_free(&r);
}

/* ---- p2p delay d ----
 *
 * GPipe: (m + p - 1)(tf + tb) + 2(p - 1)d. The longest path is the first
 * micro-batch's forwards up the pipeline (p - 1 transfers), the last stage's
 * m forwards and m backwards back to back, and the last micro-batch's
 * backwards down the pipeline (p - 1 transfers); no stage ever waits inside
 * its forward or backward phase once it began, as every later input arrives
 * tf (or tb) after the previous one.
 *
 * 1F1B: the same holds only for m <= 2. By hand, p = 2, m = 2 (stage 0: F0 F1
 * B0 B1; stage 1: F0 B0 F1 B1):
 *   s0 F0 [0, tf]        s0 F1 [tf, 2tf]
 *   s1 F0 [tf + d, 2tf + d]          s1 B0 [2tf + d, 2tf + tb + d]
 *   s1 F1 needs 2tf + d, free at 2tf + tb + d: [2tf + tb + d, 3tf + tb + d]
 *   s1 B1 [3tf + tb + d, 3tf + 2tb + d]
 *   s0 B0 needs s1 B0 + d: [2tf + tb + 2d, 2tf + 2tb + 2d]
 *   s0 B1 needs s1 B1 + d = 3tf + 2tb + 2d, later than s0's 2tf + 2tb + 2d:
 *         [3tf + 2tb + 2d, 3tf + 3tb + 2d]
 * makespan 3(tf + tb) + 2d = (m + p - 1)(tf + tb) + 2(p - 1)d.
 *
 * For more micro-batches the steady state exposes the transfers: stage k runs
 * B(i) then F(i + p - k), and a path can climb from stage 0 to p - 1 with one
 * micro-batch's forwards, come back with its backwards, and continue on stage
 * 0 with the forward p micro-batches later: every p micro-batches add
 * p(tf + tb) of work and 2(p - 1)d of transfers to the longest path. Counting
 * the ends exactly:
 *   (m + p - 1)(tf + tb) + 2d (p - 1 + ceil((m - 2)(p - 1) / p)),  m >= 2;
 * e.g. p = 2, m = 4 gives 5(tf + tb) + 4d (s0: F0 F1 B0 F2 B1 F3 B2 B3; the
 * path F0 s0, F0 s1, B0 s1, B0 s0, F2 s0, F2 s1, B2 s1, F3 s1, B3 s1, B3 s0
 * crosses four times). Checked below for p <= 8, m <= 3p + 1, against the
 * reference for the smaller ones, and for d both well below and above tb. */
static void test_p2p_delay(void **state)
{
	(void)state;
	capsim_time_ns f[MAXP * MAXV], b[MAXP * MAXV];
	/* the hand example, task by task */
	capsim_pipeline_spec s = uniform(CAPSIM_SCHED_1F1B, 2, 2, 1, f, b, TF, TB, D);
	capsim_pipeline_result r;
	simulate(&s, &r);
	const capsim_time_ns want0[4][2] = { { 0, TF }, { TF, 2 * TF },
					     { 2 * TF + TB + 2 * D, 2 * TF + 2 * TB + 2 * D },
					     { 3 * TF + 2 * TB + 2 * D, 3 * TF + 3 * TB + 2 * D } };
	const capsim_time_ns want1[4][2] = { { TF + D, 2 * TF + D },
					     { 2 * TF + D, 2 * TF + TB + D },
					     { 2 * TF + TB + D, 3 * TF + TB + D },
					     { 3 * TF + TB + D, 3 * TF + 2 * TB + D } };
	for (size_t n = 0; n < 4; n++) {
		assert_int_equal(capsim_pipeline_task_at(&r, 0, n)->start_ns, want0[n][0]);
		assert_int_equal(capsim_pipeline_task_at(&r, 0, n)->end_ns, want0[n][1]);
		assert_int_equal(capsim_pipeline_task_at(&r, 1, n)->start_ns, want1[n][0]);
		assert_int_equal(capsim_pipeline_task_at(&r, 1, n)->end_ns, want1[n][1]);
	}
	assert_int_equal(r.makespan_ns, 3 * (TF + TB) + 2 * D);
	capsim_pipeline_result_free(&r);

	for (int p = 1; p <= 8; p++) {
		for (int m = 1; m <= 3 * p + 1; m++) {
			capsim_time_ns base = (capsim_time_ns)(m + p - 1) * (TF + TB);
			s = uniform(CAPSIM_SCHED_GPIPE, p, m, 1, f, b, TF, TB, D);
			assert_int_equal(makespan(&s), base + 2 * (p - 1) * D);
			s.schedule = CAPSIM_SCHED_1F1B;
			int n = m >= 2 ? m - 2 : 0;
			int up = (n * (p - 1) + p - 1) / p; /* ceil(n (p-1) / p) */
			assert_int_equal(makespan(&s), base + 2 * (p - 1 + up) * D);
			if (p <= 4 && m <= 2 * p + 1)
				expect_reference(&s);
		}
	}
	/* A fast link hides nothing either: 1F1B's exposure does not depend on
	 * d's size against tf and tb (d = 3 tb here). */
	s = uniform(CAPSIM_SCHED_1F1B, 4, 9, 1, f, b, TF, TB, 3 * TB);
	assert_int_equal(makespan(&s), 12 * (TF + TB) + 2 * (3 + 6) * 3 * TB);

	/* Interleaved, observed (not derived): with d no longer than a chunk's
	 * forward or backward, Megatron's extra warm-up hides every transfer but
	 * the first micro-batch's way up and the last one's way down:
	 * (m + (p - 1)/v)(tf + tb) + 2(v p - 1)d. Longer transfers show. */
	for (int v = 2; v <= MAXV; v++) {
		for (int m = 4; m <= 16; m += 4) {
			capsim_time_ns tfc = TFV / v, tbc = TBV / v;
			s = uniform(CAPSIM_SCHED_1F1B_INTERLEAVED, 4, m, v, f, b, tfc, tbc, tfc);
			assert_int_equal(makespan(&s), (capsim_time_ns)(m * v + 3) * (tfc + tbc) +
							       2 * (4 * v - 1) * tfc);
			if (m <= 8)
				expect_reference(&s);
			s.p2p_ns = 2 * tbc; /* longer than either: more than 2(vp - 1)d */
			if (m > 4)
				assert_true(makespan(&s) > (capsim_time_ns)(m * v + 3) * (tfc + tbc) +
								   2 * (4 * v - 1) * s.p2p_ns);
			expect_reference(&s);
		}
	}
}

/* ---- the critical path ---- */

/* Walk a result's critical path: contiguous from 0 to the makespan, and
 * count what is on it. */
static void path_counts(const capsim_pipeline_result *r, int *fwd, int *bwd,
			int *transfers, capsim_time_ns *tail)
{
	capsim_path_segment *seg;
	size_t n = capsim_pipeline_critical_path(r, &seg);
	assert_true(n > 0);
	*fwd = *bwd = *transfers = 0;
	*tail = 0;
	capsim_time_ns t = 0;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(seg[i].start_ns, t);
		assert_true(seg[i].end_ns >= seg[i].start_ns);
		t = seg[i].end_ns;
		if (seg[i].kind == CAPSIM_PATH_COMPUTE) {
			*fwd += seg[i].forwards;
			*bwd += seg[i].backwards;
			if (i > 0)
				assert_int_not_equal(seg[i - 1].kind, CAPSIM_PATH_COMPUTE);
		} else if (seg[i].kind == CAPSIM_PATH_TRANSFER) {
			(*transfers)++;
			assert_int_not_equal(seg[i].stage, seg[i].to_stage);
		} else {
			assert_int_equal(i, n - 1);
			*tail = seg[i].end_ns - seg[i].start_ns;
		}
	}
	assert_int_equal(t, r->makespan_ns);
	free(seg);
}

/* The path through 1F1B and GPipe holds m + p - 1 forwards and as many
 * backwards (the closed form's (m + p - 1)(tf + tb)) and exactly the
 * transfers the makespan exposes: 2(p - 1) for GPipe, 2(p - 1 + up) for
 * 1F1B (test_p2p_delay). tf, tb and d share no common multiple in range, so
 * only the right counts add up to the makespan. */
static void test_critical_path(void **state)
{
	(void)state;
	capsim_time_ns f[MAXP * MAXV], b[MAXP * MAXV];
	for (int p = 1; p <= 8; p++) {
		for (int m = 1; m <= 2 * p + 1; m++) {
			int n = m >= 2 ? m - 2 : 0;
			int up = (n * (p - 1) + p - 1) / p;
			for (int kind = CAPSIM_SCHED_GPIPE; kind <= CAPSIM_SCHED_1F1B; kind++) {
				capsim_pipeline_spec s = uniform(kind, p, m, 1, f, b, TF, TB, D);
				capsim_pipeline_result r;
				simulate(&s, &r);
				int fw, bw, tr;
				capsim_time_ns tail;
				path_counts(&r, &fw, &bw, &tr, &tail);
				assert_int_equal(fw, m + p - 1);
				assert_int_equal(bw, m + p - 1);
				assert_int_equal(tr, kind == CAPSIM_SCHED_GPIPE ? 2 * (p - 1) :
								     2 * (p - 1 + up));
				assert_int_equal(tail, 0);
				capsim_pipeline_result_free(&r);
			}
		}
	}
	/* the hand example of test_p2p_delay: stage 0 F0 F1, over to stage 1,
	 * F0 B0 F1 B1 there... */
	capsim_pipeline_spec s = uniform(CAPSIM_SCHED_1F1B, 2, 2, 1, f, b, TF, TB, D);
	capsim_pipeline_result r;
	simulate(&s, &r);
	capsim_path_segment *seg;
	size_t n = capsim_pipeline_critical_path(&r, &seg);
	assert_int_equal(n, 5);
	assert_int_equal(seg[0].kind, CAPSIM_PATH_COMPUTE);
	assert_int_equal(seg[0].stage, 0);
	assert_int_equal(seg[0].forwards, 1);
	assert_int_equal(seg[1].kind, CAPSIM_PATH_TRANSFER);
	assert_int_equal(seg[1].to_stage, 1);
	assert_int_equal(seg[2].stage, 1);
	assert_int_equal(seg[2].forwards, 2);
	assert_int_equal(seg[2].backwards, 2);
	assert_int_equal(seg[2].first_microbatch, 0);
	assert_int_equal(seg[2].last_microbatch, 1);
	assert_int_equal(seg[3].kind, CAPSIM_PATH_TRANSFER);
	assert_int_equal(seg[4].stage, 0);
	assert_int_equal(seg[4].backwards, 1);
	assert_int_equal(seg[4].end_ns, r.makespan_ns);
	free(seg);
	capsim_pipeline_result_free(&r);

	/* a tail closes the path on the stage that finishes last */
	const capsim_time_ns tails[4] = { 1009, 2003, 3001, 4 * TB + 1013 };
	s = uniform(CAPSIM_SCHED_1F1B, 4, 8, 1, f, b, TF, TB, 0);
	s.tail_ns = tails;
	simulate(&s, &r);
	int fw, bw, tr;
	capsim_time_ns tail;
	path_counts(&r, &fw, &bw, &tr, &tail);
	assert_int_equal(tail, tails[3]);
	capsim_pipeline_result_free(&r);

	/* interleaved: every chunk counted, the path still tiles the step */
	for (int v = 2; v <= MAXV; v++) {
		s = uniform(CAPSIM_SCHED_1F1B_INTERLEAVED, 4, 8, v, f, b, TFV / v, TBV / v,
			    TFV / v);
		simulate(&s, &r);
		path_counts(&r, &fw, &bw, &tr, &tail);
		assert_int_equal((capsim_time_ns)fw * (TFV / v) + (capsim_time_ns)bw * (TBV / v) +
					 (capsim_time_ns)tr * (TFV / v),
				 r.makespan_ns);
		capsim_pipeline_result_free(&r);
	}
}

/* ---- heterogeneous stages, per-micro-batch times, links, tails ---- */

/* The last stage 1.5x slower (the LM head). Without transfers the slowest
 * stage s sets the pace: sum_{k != s}(tf_k + tb_k) + m(tf_s + tb_s) for GPipe
 * and 1F1B; with transfers and tails every task against the reference. */
static void test_heterogeneous(void **state)
{
	(void)state;
	capsim_time_ns f[MAXP * MAXV], b[MAXP * MAXV], tail[MAXP];
	for (int x = 0; x < 3; x++) {
		for (int p = 2; p <= 5; p++) {
			for (int m = p; m <= 3 * p; m += p) {
				for (int v = 1; v <= (x == 2 ? 3 : 1); v++) {
					capsim_pipeline_spec s = uniform(kinds[x], p, m, v, f, b,
									 TFV / v, TBV / v, 0);
					for (int c = 0; c < v; c++) {
						f[(p - 1) * v + c] = 3 * (TFV / v) / 2;
						b[(p - 1) * v + c] = 3 * (TBV / v) / 2;
					}
					if (x < 2) {
						capsim_time_ns sum = (capsim_time_ns)(p - 1) * (TFV + TBV);
						assert_int_equal(makespan(&s),
								 sum + m * (f[p - 1] + b[p - 1]));
					}
					expect_reference(&s);
					s.p2p_ns = D;
					expect_reference(&s);
					for (int k = 0; k < p; k++)
						tail[k] = 9173 + 1000 * k;
					s.tail_ns = tail;
					expect_reference(&s);
				}
			}
		}
	}
}

/* Per-micro-batch durations from a callback: micro-batch i's sequences are
 * longer by i mod 3 (variable-length packing), backward of chunk c on stage k
 * includes a recomputation of its forward on even stages. */
typedef struct cb_ctx {
	int calls;
	int last_key; /* the callback's documented order: increasing keys */
	int m, v;
	int ordered;
} cb_ctx;

static capsim_time_ns varying(void *ctx, int k, int c, int i, int bwd)
{
	cb_ctx *x = ctx;
	int key = ((k * x->v + c) * x->m + i) * 2 + bwd;
	if (key != x->last_key + 1)
		x->ordered = 0;
	x->last_key = key;
	x->calls++;
	capsim_time_ns f = 1193 + 401 * (i % 3) + 37 * k + 11 * c;
	if (!bwd)
		return f;
	return 2 * f + (k % 2 == 0 ? f : 0);
}

static void test_per_microbatch(void **state)
{
	(void)state;
	for (int x = 0; x < 3; x++) {
		int p = 4, m = 8, v = x == 2 ? 2 : 1;
		cb_ctx c = { .last_key = -1, .m = m, .v = v, .ordered = 1 };
		capsim_pipeline_spec s = { .stages = p, .microbatches = m, .chunks = v,
					   .schedule = kinds[x], .task_ns = varying,
					   .task_ctx = &c, .p2p_ns = D };
		capsim_pipeline_result r;
		simulate(&s, &r);
		assert_int_equal(c.calls, 2 * p * v * m);
		assert_true(c.ordered);
		capsim_pipeline_result_free(&r);
		expect_reference(&s);
	}
}

/* Different links (NVLink inside a node, InfiniBand across): entry k joins
 * stages k and k + 1 mod p; the interleaved wrap uses entry p - 1. */
static void test_links(void **state)
{
	(void)state;
	capsim_time_ns f[MAXP * MAXV], b[MAXP * MAXV];
	const capsim_time_ns links[4] = { 113, 2917, 113, 4211 };
	for (int x = 0; x < 3; x++) {
		int v = x == 2 ? 2 : 1;
		capsim_pipeline_spec s = uniform(kinds[x], 4, 8, v, f, b, TFV / v, TBV / v, 99999);
		s.p2p_link_ns = links; /* overrides p2p_ns */
		expect_reference(&s);
	}
	/* GPipe with one slow link: each way crosses every link once */
	capsim_pipeline_spec s = uniform(CAPSIM_SCHED_GPIPE, 4, 6, 1, f, b, TF, TB, 0);
	s.p2p_link_ns = links;
	assert_int_equal(makespan(&s), 9 * (TF + TB) + 2 * (113 + 2917 + 113));
}

/* p = 1: no pipeline, m(tf + tb) whatever the schedule, no idle time; the
 * chunks of an interleaved single stage follow each other for free. */
static void test_single_stage(void **state)
{
	(void)state;
	capsim_time_ns f[MAXV], b[MAXV];
	for (int x = 0; x < 3; x++) {
		int v = x == 2 ? 3 : 1;
		capsim_pipeline_spec s = uniform(kinds[x], 1, 7, v, f, b, TFV / v, TBV / v, D);
		capsim_pipeline_result r;
		simulate(&s, &r);
		assert_int_equal(r.makespan_ns, 7 * (TFV + TBV));
		assert_int_equal(r.stage[0].idle_ns, 0);
		assert_int_equal(r.stage[0].busy_ns, 7 * (TFV + TBV));
		capsim_pipeline_result_free(&r);
		capsim_time_ns tail = 40961;
		s.tail_ns = &tail;
		assert_int_equal(makespan(&s), 7 * (TFV + TBV) + tail);
	}
}

/* A tail (exposed gradient reduction, optimizer step) after each stage's last
 * backward. 1F1B, no delay: stage k's last backward ends at
 * (m + p - 1)(tf + tb) - k tb. */
static void test_tail(void **state)
{
	(void)state;
	int p = 4, m = 8;
	capsim_time_ns f[4], b[4];
	capsim_pipeline_spec s = uniform(CAPSIM_SCHED_1F1B, p, m, 1, f, b, TF, TB, 0);
	const capsim_time_ns tail[4] = { 1009, 2003, 3001, 4 * TB + 1013 };
	s.tail_ns = tail;
	capsim_pipeline_result r;
	simulate(&s, &r);
	capsim_time_ns end0 = (capsim_time_ns)(m + p - 1) * (TF + TB);
	for (int k = 0; k < p; k++) {
		assert_int_equal(r.stage[k].last_end_ns, end0 - k * TB);
		assert_int_equal(r.stage[k].tail_ns, tail[k]);
		assert_int_equal(r.stage[k].finish_ns, end0 - k * TB + tail[k]);
		assert_int_equal(r.stage[k].busy_ns + r.stage[k].tail_ns + r.stage[k].idle_ns,
				 r.makespan_ns);
	}
	/* the last stage's long tail outlasts stage 0's: end0 - 3 tb + 4 tb + 1013 */
	assert_int_equal(r.makespan_ns, end0 + TB + 1013);
	capsim_pipeline_result_free(&r);
}

/* Events: one per task end, one per input arrival (every forward, every
 * backward but the first virtual stage's) and one per stage's tail; the same
 * input twice gives the same bytes. */
static void test_events_determinism(void **state)
{
	(void)state;
	capsim_time_ns f[MAXP * MAXV], b[MAXP * MAXV];
	for (int x = 0; x < 3; x++) {
		int p = 8, m = 16, v = x == 2 ? 3 : 1;
		capsim_pipeline_spec s = uniform(kinds[x], p, m, v, f, b, TFV / v, TBV / v, D);
		f[5] = 7919; /* some irregularity */
		capsim_pipeline_result r1, r2;
		simulate(&s, &r1);
		simulate(&s, &r2);
		uint64_t tasks = 2ull * p * v * m;
		uint64_t arrivals = (uint64_t)m * v * p + (uint64_t)m * (v * p - 1);
		assert_int_equal(r1.events, tasks + arrivals + (uint64_t)p);
		assert_int_equal(r1.events, r2.events);
		assert_int_equal(r1.makespan_ns, r2.makespan_ns);
		assert_memory_equal(r1.tasks, r2.tasks, tasks * sizeof *r1.tasks);
		assert_memory_equal(r1.stage, r2.stage, (size_t)p * sizeof *r1.stage);
		capsim_pipeline_result_free(&r1);
		capsim_pipeline_result_free(&r2);
	}
}

/* ---- errors: each provoked, its code and message checked; nothing kept ---- */

static capsim_time_ns negative(void *ctx, int k, int c, int i, int bwd)
{
	(void)ctx;
	(void)c;
	return k == 1 && i == 2 && bwd ? -5 : 1000;
}

static void expect_error(const capsim_pipeline_spec *s, int code, const char *needle)
{
	capsim_pipeline_result r;
	memset(&r, 0x5a, sizeof r); /* need not be initialised */
	int rc = capsim_pipeline_simulate(s, &r);
	if (rc != code)
		fail_msg("code %d (%s), expected %d; message '%s'", rc,
			 capsim_pipeline_strerror(rc), code, r.errmsg);
	if (!strstr(r.errmsg, needle))
		fail_msg("message '%s' lacks '%s'", r.errmsg, needle);
	assert_null(r.tasks);
	assert_null(r.stage);
	capsim_pipeline_result_free(&r); /* safe on a failed result */
}

static void test_errors(void **state)
{
	(void)state;
	capsim_time_ns f[MAXP * MAXV], b[MAXP * MAXV];
	capsim_pipeline_spec s = uniform(CAPSIM_SCHED_1F1B_INTERLEAVED, 4, 6, 2, f, b, TF, TB, 0);
	expect_error(&s, CAPSIM_PIPELINE_EDIVIDE,
		     "interleaved schedule needs micro-batches (6) to be a multiple of stages (4)");
	s = uniform(CAPSIM_SCHED_1F1B, 0, 6, 1, f, b, TF, TB, 0);
	expect_error(&s, CAPSIM_PIPELINE_EINVAL, "0 stages");
	s = uniform(CAPSIM_SCHED_1F1B, 3, 0, 1, f, b, TF, TB, 0);
	expect_error(&s, CAPSIM_PIPELINE_EINVAL, "0 micro-batches");
	s = uniform(CAPSIM_SCHED_1F1B, 3, 6, 0, f, b, TF, TB, 0);
	expect_error(&s, CAPSIM_PIPELINE_EINVAL, "0 chunks");
	s = uniform(CAPSIM_SCHED_GPIPE, 3, 6, 2, f, b, TF, TB, 0);
	expect_error(&s, CAPSIM_PIPELINE_EINVAL, "need the interleaved schedule");
	s = uniform(CAPSIM_SCHED_1F1B, 3, 6, 1, f, b, TF, TB, 0);
	s.schedule = 7;
	expect_error(&s, CAPSIM_PIPELINE_EINVAL, "unknown schedule 7");
	s = uniform(CAPSIM_SCHED_1F1B, 3, 6, 1, f, b, TF, TB, -3);
	expect_error(&s, CAPSIM_PIPELINE_EINVAL, "p2p time -3 ns");
	s = uniform(CAPSIM_SCHED_1F1B, 3, 6, 1, f, b, TF, TB, 0);
	const capsim_time_ns links[3] = { 5, -8, 5 };
	s.p2p_link_ns = links;
	expect_error(&s, CAPSIM_PIPELINE_EINVAL, "link 1, -8 ns");
	s.p2p_link_ns = NULL;
	const capsim_time_ns tails[3] = { 5, 5, -9 };
	s.tail_ns = tails;
	expect_error(&s, CAPSIM_PIPELINE_EINVAL, "tail of stage 2, -9 ns");
	s.tail_ns = NULL;
	b[1] = -2;
	expect_error(&s, CAPSIM_PIPELINE_EINVAL, "backward of stage 1, chunk 0, micro-batch 0: -2 ns");
	s.bwd_ns = NULL;
	expect_error(&s, CAPSIM_PIPELINE_EINVAL, "no durations");
	s.task_ns = negative;
	expect_error(&s, CAPSIM_PIPELINE_EINVAL, "backward of stage 1, chunk 0, micro-batch 2: -5 ns");
	/* too many tasks; a step too long for int64 ns */
	s = uniform(CAPSIM_SCHED_1F1B, 3, 1 << 29, 1, f, b, TF, TB, 0);
	expect_error(&s, CAPSIM_PIPELINE_ERANGE, "tasks is more than");
	s = uniform(CAPSIM_SCHED_1F1B, 3, 6, 1, f, b, CAPSIM_TIME_NEVER / 8, TB, 0);
	expect_error(&s, CAPSIM_PIPELINE_ERANGE, "a step could exceed");
	expect_error(NULL, CAPSIM_PIPELINE_EINVAL, "no input");

	assert_string_equal(capsim_pipeline_strerror(CAPSIM_PIPELINE_OK), "success");
	assert_string_equal(capsim_pipeline_strerror(CAPSIM_PIPELINE_EDIVIDE),
			    "micro-batches not a multiple of stages");
	assert_string_equal(capsim_pipeline_strerror(-99), "unknown error");
	/* a success leaves no message */
	s = uniform(CAPSIM_SCHED_1F1B, 3, 6, 1, f, b, TF, TB, 0);
	capsim_pipeline_result r;
	simulate(&s, &r);
	assert_string_equal(r.errmsg, "");
	capsim_pipeline_result_free(&r);
}

/* workload.task-limit: a global batch of 10^6 on the default scenario (125,000
 * micro-batches a replica, 5e6 tasks) is refused by the scenario's checks
 * before any step runs, with its estimate, and the scenario is left as it
 * was; a limit at the estimate runs and one below refuses; and a step's
 * work, the engine's events, stays within a fixed multiple of that estimate
 * (a task ends and its output arrives: 2 events; the schedule runs with its
 * transfers and again without them: 2 runs), so the limit bounds it */
static void test_task_limit(void **state)
{
	(void)state;
	capsim_catalog *cat = testutil_shipped_catalog();
	assert_non_null(cat);
	capsim_scenario *s = calloc(1, sizeof *s);
	capsim_diags d = { 0 };
	assert_int_equal(capsim_scenario_load(CAPSIM_SOURCE_DIR "/scenarios/default.xml", cat,
					      NULL, 0, s, &d), 0);
	assert_int_equal(capsim_scenario_set(s, cat, "workload.global-batch", "1000000", &d), -1);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].where, "--set workload.global-batch=1000000");
	assert_non_null(strstr(d.v[0].msg, "one step is 5e+06 pipeline tasks (2 x 125000 "
					   "micro-batches x pp 4 x 5 chunks x 1 replicas "
					   "simulated), more than workload.task-limit = 2e+06"));
	assert_true(s->global_batch == 512);
	capsim_diags_free(&d);

	/* 2 x 64 micro-batches x pp 4 x 5 chunks */
	double tasks = 2.0 * 64 * 4 * 5;
	assert_int_equal(capsim_scenario_set(s, cat, "workload.task-limit", "2559", &d), -1);
	assert_non_null(strstr(d.v[0].msg, "one step is 2.56e+03 pipeline tasks"));
	capsim_diags_free(&d);
	assert_int_equal(capsim_scenario_set(s, cat, "workload.task-limit", "2560", &d), 0);
	capsim_eval_opts eo = { .no_reference = 1 };
	capsim_result r;
	assert_int_equal(capsim_eval(s, &eo, &r, &d), 0);
	assert_int_equal(r.step.microbatches, 64);
	assert_true(r.step.events > 2 * tasks);
	assert_true(r.step.events <= 2 * 2 * tasks + 2 * 4 * 2);
	capsim_result_free(&r);
	free(s);
	capsim_catalog_free(cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpipe_1f1b_closed_form),
		cmocka_unit_test(test_interleaved_closed_form),
		cmocka_unit_test(test_interleaved_order),
		cmocka_unit_test(test_p2p_delay),
		cmocka_unit_test(test_critical_path),
		cmocka_unit_test(test_heterogeneous),
		cmocka_unit_test(test_per_microbatch),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_single_stage),
		cmocka_unit_test(test_tail),
		cmocka_unit_test(test_events_determinism),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_task_limit),
	};
	return testutil_run_group(tests, NULL, NULL);
}
