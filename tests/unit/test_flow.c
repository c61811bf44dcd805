/* test_flow.c - max-min fair sharing: closed-form rates, caps, multiplicity
 * (folding), completion order, component-local re-solves, batching. */
#include "testutil.h"

#include "flow.h"

static void test_two_flows_halve_a_link(void **state)
{
	(void)state;
	capsim_flownet *n = capsim_flownet_create();
	int l = capsim_flownet_add_link(n, 2.385e9, 1);
	int a = capsim_flownet_start(n, &l, 1, 1e9, 1, 0);
	assert_rel(capsim_flownet_rate(n, a), 2.385e9, 1e-12);
	int b = capsim_flownet_start(n, &l, 1, 1e9, 1, 0);
	assert_rel(capsim_flownet_rate(n, a), 2.385e9 / 2, 1e-12);
	assert_rel(capsim_flownet_rate(n, b), 2.385e9 / 2, 1e-12);
	assert_rel(capsim_flownet_link_load(n, l), 2.385e9, 1e-12);
	capsim_flownet_stop(n, a);
	assert_rel(capsim_flownet_rate(n, b), 2.385e9, 1e-12);
	capsim_flownet_destroy(n);
}

/* Three links, four flows; by hand (progressive filling):
 * L1 = 10 carries f1 f2 f3, L2 = 4 carries f3 f4, L3 = 6 carries f1 f4.
 * Fair levels 10/3, 4/2, 6/2: L2 saturates first at 2 (f3 = f4 = 2).
 * Then L1 has 8 left for f1, f2 -> 4; L3 has 4 left for f1 -> 4: both
 * saturate at 4. Rates 4, 4, 2, 2; every link full. */
static void test_textbook_max_min(void **state)
{
	(void)state;
	capsim_flownet *n = capsim_flownet_create();
	int l1 = capsim_flownet_add_link(n, 10, 1);
	int l2 = capsim_flownet_add_link(n, 4, 1);
	int l3 = capsim_flownet_add_link(n, 6, 1);
	int p1[] = { l1, l3 }, p2[] = { l1 }, p3[] = { l1, l2 }, p4[] = { l2, l3 };
	capsim_flownet_hold(n, 1);
	int f1 = capsim_flownet_start(n, p1, 2, 100, 1, 0);
	int f2 = capsim_flownet_start(n, p2, 1, 100, 1, 0);
	int f3 = capsim_flownet_start(n, p3, 2, 100, 1, 0);
	int f4 = capsim_flownet_start(n, p4, 2, 100, 1, 0);
	capsim_flownet_hold(n, 0);
	assert_rel(capsim_flownet_rate(n, f1), 4, 1e-12);
	assert_rel(capsim_flownet_rate(n, f2), 4, 1e-12);
	assert_rel(capsim_flownet_rate(n, f3), 2, 1e-12);
	assert_rel(capsim_flownet_rate(n, f4), 2, 1e-12);
	assert_rel(capsim_flownet_link_load(n, l1), 10, 1e-12);
	assert_rel(capsim_flownet_link_load(n, l2), 4, 1e-12);
	assert_rel(capsim_flownet_link_load(n, l3), 6, 1e-12);
	capsim_flownet_destroy(n);
}

/* A capped flow keeps its cap; the others share what is left. */
static void test_caps(void **state)
{
	(void)state;
	capsim_flownet *n = capsim_flownet_create();
	int l = capsim_flownet_add_link(n, 9, 1);
	int a = capsim_flownet_start(n, &l, 1, 100, 1, 1.5);
	int b = capsim_flownet_start(n, &l, 1, 100, 1, 0);
	int c = capsim_flownet_start(n, &l, 1, 100, 1, 0);
	assert_rel(capsim_flownet_rate(n, a), 1.5, 1e-12);
	assert_rel(capsim_flownet_rate(n, b), 3.75, 1e-12);
	assert_rel(capsim_flownet_rate(n, c), 3.75, 1e-12);
	capsim_flownet_destroy(n);
}

/* Folding: a flow class of multiplicity w over a link class of
 * multiplicity m loads each link with w/m flows. 8 flows folded on 4 links
 * of 10: each link carries 2 flows of 5. One flow of multiplicity 3 next to
 * a single one on a link of 8: four flows of 2. */
static void test_multiplicity(void **state)
{
	(void)state;
	capsim_flownet *n = capsim_flownet_create();
	int l = capsim_flownet_add_link(n, 10, 4);
	int a = capsim_flownet_start(n, &l, 1, 100, 8, 0);
	assert_rel(capsim_flownet_rate(n, a), 5, 1e-12);
	assert_rel(capsim_flownet_link_load(n, l), 10, 1e-12);
	int k = capsim_flownet_add_link(n, 8, 1);
	int b = capsim_flownet_start(n, &k, 1, 100, 3, 0);
	int c = capsim_flownet_start(n, &k, 1, 100, 1, 0);
	assert_rel(capsim_flownet_rate(n, b), 2, 1e-12);
	assert_rel(capsim_flownet_rate(n, c), 2, 1e-12);
	capsim_flownet_destroy(n);
}

/* Sizes 1 and 3 on a link of 2: both at 1 until t = 1, when the first ends;
 * the second then runs at 2 with 2 left, ending at t = 2. */
static void test_completion_order(void **state)
{
	(void)state;
	capsim_flownet *n = capsim_flownet_create();
	int l = capsim_flownet_add_link(n, 2, 1);
	int a = capsim_flownet_start(n, &l, 1, 1, 1, 0);
	int b = capsim_flownet_start(n, &l, 1, 3, 1, 0);
	double dt;
	assert_int_equal(capsim_flownet_next_completion(n, &dt), a);
	assert_rel(dt, 1.0, 1e-12);
	capsim_flownet_advance(n, dt);
	assert_rel(capsim_flownet_remaining(n, b), 2.0, 1e-12);
	capsim_flownet_stop(n, a);
	assert_int_equal(capsim_flownet_next_completion(n, &dt), b);
	assert_rel(dt, 1.0, 1e-12);
	capsim_flownet_advance(n, dt);
	assert_rel(capsim_flownet_link_bytes(n, l), 4.0, 1e-12);
	capsim_flownet_stop(n, b);
	assert_int_equal(capsim_flownet_next_completion(n, &dt), -1);
	assert_int_equal(capsim_flownet_stop(n, b), -1); /* already stopped */
	assert_int_equal(capsim_flownet_active(n), 0);
	capsim_flownet_destroy(n);
}

/* A change re-solves only its component: a flow on a disjoint link visits
 * one flow, whatever else is running. */
static void test_component_locality(void **state)
{
	(void)state;
	capsim_flownet *n = capsim_flownet_create();
	int busy = capsim_flownet_add_link(n, 100, 1);
	capsim_flownet_hold(n, 1);
	for (int i = 0; i < 1000; i++)
		capsim_flownet_start(n, &busy, 1, 10, 1, 0);
	capsim_flownet_hold(n, 0);
	uint64_t v0 = capsim_flownet_solve_visits(n);
	assert_int_equal(v0, 1000); /* one batched solve */
	int quiet = capsim_flownet_add_link(n, 5, 1);
	int f = capsim_flownet_start(n, &quiet, 1, 10, 1, 0);
	assert_int_equal(capsim_flownet_solve_visits(n) - v0, 1);
	assert_rel(capsim_flownet_rate(n, f), 5, 1e-12);
	capsim_flownet_destroy(n);
}

/* Max-min rates are homogeneous: every capacity times k gives every rate
 * times k (a property, on a random network). */
static void test_scaling_capacities(void **state)
{
	(void)state;
	double rates[2][200];
	uint64_t x = 88172645463325252ULL;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t r = x;
		capsim_flownet *n = capsim_flownet_create();
		for (int i = 0; i < 40; i++) {
			r ^= r << 13; r ^= r >> 7; r ^= r << 17;
			capsim_flownet_add_link(n, (1.0 + (double)(r % 1000)) * (pass ? 2.385 : 1.0), 1);
		}
		capsim_flownet_hold(n, 1);
		for (int i = 0; i < 200; i++) {
			int path[4];
			for (int j = 0; j < 4; j++) {
				r ^= r << 13; r ^= r >> 7; r ^= r << 17;
				path[j] = (int)(r % 40);
			}
			/* drop repeats */
			int m = 0, p[4];
			for (int j = 0; j < 4; j++) {
				int dup = 0;
				for (int q = 0; q < m; q++)
					dup |= p[q] == path[j];
				if (!dup)
					p[m++] = path[j];
			}
			capsim_flownet_start(n, p, (size_t)m, 1e6, 1, 0);
		}
		capsim_flownet_hold(n, 0);
		for (int i = 0; i < 200; i++)
			rates[pass][i] = capsim_flownet_rate(n, i);
		capsim_flownet_destroy(n);
	}
	for (int i = 0; i < 200; i++)
		assert_rel(rates[1][i], 2.385 * rates[0][i], 1e-9);
}

/* Simultaneous changes give the same rates whatever order they are made in
 * (starting 60 flows forwards or backwards). */
static void test_order_independence(void **state)
{
	(void)state;
	double rates[2][60];
	for (int pass = 0; pass < 2; pass++) {
		capsim_flownet *n = capsim_flownet_create();
		for (int i = 0; i < 12; i++)
			capsim_flownet_add_link(n, 1.0 + i * 0.37, 1);
		int ids[60];
		for (int k = 0; k < 60; k++) {
			int i = pass ? 59 - k : k;
			int path[3] = { i % 12, (i * 5 + 1) % 12, (i * 7 + 3) % 12 };
			int m = path[0] == path[1] || path[1] == path[2] || path[0] == path[2] ? 1 : 3;
			ids[i] = capsim_flownet_start(n, path, (size_t)m, 1e3, 1, (i % 4) ? 0 : 0.05 * i);
		}
		for (int i = 0; i < 60; i++)
			rates[pass][i] = capsim_flownet_rate(n, ids[i]);
		capsim_flownet_destroy(n);
	}
	for (int i = 0; i < 60; i++)
		assert_rel(rates[1][i], rates[0][i], 1e-12);
}

/* Ranges of links cost nothing until a flow crosses them: the textbook case
 * of test_textbook_max_min, its links spread over a range of 10^6 (and one
 * link apart, with its own capacity), gives the same rates, makes records
 * for the 3 links used only, and an untouched link reads its range's
 * capacity and no load. Ties still go by id: two flows that finish
 * together finish in id order. */
static void test_lazy_link_ranges(void **state)
{
	(void)state;
	capsim_flownet *n = capsim_flownet_create();
	int base = capsim_flownet_add_links(n, 1000000, 10, 1);
	int l2 = capsim_flownet_add_link(n, 4, 1);
	int more = capsim_flownet_add_links(n, 1000000, 6, 1);
	assert_int_equal(capsim_flownet_n_links(n), 2000001);
	assert_int_equal(capsim_flownet_links_in_use(n), 0);
	int L1 = base + 777777, L3 = more + 31;
	int p1[] = { L1, L3 }, p2[] = { L1 }, p3[] = { L1, l2 }, p4[] = { l2, L3 };
	capsim_flownet_hold(n, 1);
	int f1 = capsim_flownet_start(n, p1, 2, 1e9, 1, 0);
	int f2 = capsim_flownet_start(n, p2, 1, 1e9, 1, 0);
	int f3 = capsim_flownet_start(n, p3, 2, 1e9, 1, 0);
	int f4 = capsim_flownet_start(n, p4, 2, 1e9, 1, 0);
	capsim_flownet_hold(n, 0);
	assert_rel(capsim_flownet_rate(n, f1), 4, 1e-12);
	assert_rel(capsim_flownet_rate(n, f2), 4, 1e-12);
	assert_rel(capsim_flownet_rate(n, f3), 2, 1e-12);
	assert_rel(capsim_flownet_rate(n, f4), 2, 1e-12);
	assert_int_equal(capsim_flownet_links_in_use(n), 3);
	assert_rel(capsim_flownet_link_cap(n, base + 5), 10, 1e-15);
	assert_rel(capsim_flownet_link_cap(n, more + 999999), 6, 1e-15);
	assert_true(capsim_flownet_link_load(n, base + 5) == 0.0);
	assert_true(capsim_flownet_link_bytes(n, more + 7) == 0.0);
	assert_int_equal(capsim_flownet_link_flows(n, base + 5), 0);
	assert_int_equal(capsim_flownet_link_flows(n, L1), 3);
	double dt;
	/* f1 and f2 finish first, together: the lower id goes first */
	assert_int_equal(capsim_flownet_next_completion(n, &dt), f1);
	assert_rel(dt, 1e9 / 4, 1e-12);
	capsim_flownet_destroy(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_flows_halve_a_link),
		cmocka_unit_test(test_textbook_max_min),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_multiplicity),
		cmocka_unit_test(test_completion_order),
		cmocka_unit_test(test_component_locality),
		cmocka_unit_test(test_scaling_capacities),
		cmocka_unit_test(test_order_independence),
		cmocka_unit_test(test_lazy_link_ranges),
	};
	return testutil_run_group_name("flow", tests, NULL, NULL);
}
