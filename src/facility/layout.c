/* layout.c - the floor layout and cables by reach; see layout.h and
 * docs/model.md ("Cables by reach"). */
#include "layout.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

const char *const capsim_cable_class_names[CAPSIM_CABLE__COUNT] = {
	"dac", "acc", "multimode", "singlemode", "singlemode-2km",
};

/* NVIDIA LinkX 100G-PAM4 (NDR, 400GbE, 800G twin-port) product line: passive
 * copper up to 3 m, linear active copper to 5 m, multimode optics 50 m,
 * single-mode DR4 500 m and FR4 2 km (bib: nv-linkx-pam4) */
const double capsim_cable_reach_m[CAPSIM_CABLE__COUNT] = { 3.0, 5.0, 50.0, 500.0, 2000.0 };

capsim_cable_class capsim_cable_class_of(double length_m)
{
	for (int c = 0; c < CAPSIM_CABLE__COUNT - 1; c++)
		if (length_m <= capsim_cable_reach_m[c])
			return (capsim_cable_class)c;
	return CAPSIM_CABLE_SMF_2KM;
}

/* a cable inside one rack runs at most the rack's height: 42 units of
 * 44.45 mm (EIA-310) are 1.87 m, taken as 2 m */
static const double in_rack_m = 2.0;

typedef struct {
	double x, y;
} spot;

static spot rack_spot(const capsim_facility *fa, int k)
{
	int w = fa->racks_per_row;
	return (spot){ (k % w) * fa->rack_pitch_m, (double)(k / w) * fa->row_pitch_m };
}

static double run_m(spot a, spot b, double slack)
{
	return fabs(a.x - b.x) + fabs(a.y - b.y) + slack;
}

static void add(capsim_layout *out, int tier, double len, long n)
{
	if (n <= 0)
		return;
	capsim_cable_class c = capsim_cable_class_of(len);
	out->cables[tier][c] += n;
	out->total[c] += n;
	if (c >= CAPSIM_CABLE_MMF)
		out->optical_ends += 2 * n;
	if (len > out->longest_m[tier])
		out->longest_m[tier] = len;
}

int capsim_layout_rack_of(const capsim_power *p, int n)
{
	int first = 0, rack = 0, g = 0;
	while (g + 1 < p->n_groups && n >= first + p->group[g].nodes) {
		first += p->group[g].nodes;
		rack += p->group[g].racks;
		g++;
	}
	return rack + (n - first) / p->group[g].nodes_per_rack;
}

void capsim_layout_estimate(const capsim_scenario *s, const capsim_fabric *f,
			    const capsim_power *pw, capsim_layout *out)
{
	memset(out, 0, sizeof *out);
	const capsim_facility *fa = &s->facility;
	capsim_fabric_shape sh;
	capsim_fabric_get_shape(f, &sh);
	if (!sh.tiers || !pw->has_racks || pw->n_groups < 1 || sh.slots < 1 || !s->has_facility ||
	    fa->racks_per_row < 1 || !(fa->rack_pitch_m > 0) || !(fa->row_pitch_m > 0))
		return;
	for (int g = 0; g < pw->n_groups; g++)
		if (pw->group[g].nodes_per_rack < 1)
			return;
	out->has_layout = 1;
	/* the whole floor: every node position, each group's in racks of its own */
	int racks = capsim_layout_rack_of(pw, sh.slots - 1) + 1;
	out->node_racks = racks;
	out->rows = (racks + fa->racks_per_row - 1) / fa->racks_per_row;
	spot hall = { 0, 0 };
	for (int k = 0; k < racks; k++) {
		spot p = rack_spot(fa, k);
		hall.x += p.x / racks;
		hall.y += p.y / racks;
	}
	/* each leaf group: top of rack where its nodes share one, else the
	 * middle of their racks */
	int groups = sh.leaves_per_plane;
	spot *at = capsim_xmalloc((size_t)groups * sizeof *at);
	int *tor = capsim_xcalloc((size_t)groups, sizeof *tor);
	for (int g = 0; g < groups; g++) {
		int first = g * sh.per_leaf;
		int last = first + sh.per_leaf < sh.slots ? first + sh.per_leaf - 1 : sh.slots - 1;
		int ra = capsim_layout_rack_of(pw, first), rb = capsim_layout_rack_of(pw, last);
		tor[g] = ra == rb;
		at[g] = (spot){ 0, 0 };
		for (int k = ra; k <= rb; k++) {
			spot p = rack_spot(fa, k);
			at[g].x += p.x / (rb - ra + 1);
			at[g].y += p.y / (rb - ra + 1);
		}
	}
	int rails = capsim_fabric_rails(f);
	for (int n = 0; n < s->nodes && n < sh.slots; n++) {
		int g = n / sh.per_leaf;
		spot node = rack_spot(fa, capsim_layout_rack_of(pw, n));
		double len = tor[g] ? in_rack_m : run_m(node, at[g], fa->slack_m);
		add(out, 0, len, rails);
	}
	long *cables = capsim_xmalloc((size_t)(groups ? groups : 1) * sizeof *cables);
	capsim_fabric_leaf_cables(f, cables, groups);
	if (sh.tiers == 2) {
		for (int g = 0; g < groups; g++)
			add(out, 1, run_m(at[g], hall, fa->slack_m), cables[g]);
	} else if (sh.tiers == 3) {
		/* a pod sits amid its leaf groups; with cores, each of its
		 * aggregation switches' links down climbs once to the core */
		int pods = (groups + sh.pod_leaves - 1) / sh.pod_leaves;
		for (int p = 0; p < pods; p++) {
			int g0 = p * sh.pod_leaves;
			int g1 = g0 + sh.pod_leaves < groups ? g0 + sh.pod_leaves : groups;
			spot pod = { 0, 0 };
			for (int g = g0; g < g1; g++) {
				pod.x += at[g].x / (g1 - g0);
				pod.y += at[g].y / (g1 - g0);
			}
			long up = 0;
			for (int g = g0; g < g1; g++) {
				long n = cables[g];
				add(out, 1, run_m(at[g], pod, fa->slack_m), n);
				up += n;
			}
			if (sh.cores > 0)
				add(out, 2, run_m(pod, hall, fa->slack_m), up);
		}
	}
	free(cables);
	free(at);
	free(tor);
}
