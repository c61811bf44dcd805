/* layout.h - the cluster on the floor and its cables by reach: node racks
 * in rows, each leaf group's switches in the nodes' own rack (top of rack)
 * where its nodes fit in one, else in a network rack at the middle of their
 * racks; spines (two tiers) at the middle of the hall, or aggregation
 * switches at the middle of their pod and cores at the middle of the hall
 * (three tiers). Each cable runs along the racks and rows (Manhattan) plus
 * the facility's slack, and falls in the shortest reach class that covers
 * it: passive copper, active copper, multimode optics, single-mode optics
 * (500 m, 2 km). A cable inside one rack is 2 m. Equations, sources and what is assumed: docs/model.md
 * ("Cables by reach"). Metres. */
#ifndef CAPSIM_LAYOUT_H
#define CAPSIM_LAYOUT_H

#include "fabric.h"
#include "power.h"
#include "spec.h"

typedef enum {
	CAPSIM_CABLE_DAC,      /* passive copper, up to 3 m */
	CAPSIM_CABLE_ACC,      /* active copper, up to 5 m */
	CAPSIM_CABLE_MMF,      /* multimode optics (SR4/SR8), up to 50 m */
	CAPSIM_CABLE_SMF,      /* single-mode optics (DR4), up to 500 m */
	CAPSIM_CABLE_SMF_2KM,  /* single-mode optics (FR4), up to 2 km and beyond */
	CAPSIM_CABLE__COUNT
} capsim_cable_class;

extern const char *const capsim_cable_class_names[CAPSIM_CABLE__COUNT];
extern const double capsim_cable_reach_m[CAPSIM_CABLE__COUNT];

/* the tiers of cables: node-leaf, leaf-spine (or leaf-aggregation),
 * spine-core (aggregation-core) */
#define CAPSIM_CABLE_TIERS 3

typedef struct capsim_layout {
	int has_layout;            /* a facility with racks and a layout */
	int node_racks, rows;
	long cables[CAPSIM_CABLE_TIERS][CAPSIM_CABLE__COUNT];
	long total[CAPSIM_CABLE__COUNT]; /* every tier's */
	double longest_m[CAPSIM_CABLE_TIERS];
	long optical_ends;         /* transceiver ports: two an optical cable */
} capsim_layout;

/* The class of a cable of length_m. */
capsim_cable_class capsim_cable_class_of(double length_m);

/* The rack (0-based) of node position n in rank order under p's racks
 * (capsim_power_estimate): each group's nodes in racks of their own kind,
 * p's nodes_per_rack of them a rack, so that a rack-scale group's rack holds
 * one whole NVLink domain; positions past the last node (the empty slots of
 * a scattered placement) in racks of the last group's kind after them. */
int capsim_layout_rack_of(const capsim_power *p, int n);

/* Lay out s's nodes on fabric f, each node group's in racks of its own as
 * pw's racks hold them (capsim_power_estimate), in rank order. Fills *out
 * (has_layout 0 without a fabric, racks or the facility's layout). */
void capsim_layout_estimate(const capsim_scenario *s, const capsim_fabric *f,
			    const capsim_power *pw, capsim_layout *out);

#endif
