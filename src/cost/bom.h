/* bom.h - the bill of materials of a scenario's cluster (capsim bom, and the
 * reports): nodes with their GPUs and NICs, the fabric's switches and cables
 * (by reach class where the facility's floor gives a layout), transceivers,
 * shared storage, racks and branch circuits, each with its catalog price and
 * date where there is one. The priced lines add up to the result's capex. */
#ifndef CAPSIM_BOM_H
#define CAPSIM_BOM_H

#include "cost.h"

typedef struct capsim_bom_line {
	const char *part;   /* "node", "leaf switch", ... */
	char id[CAPSIM_ID_LEN];
	double count;
	double unit_usd;    /* < 0: no price in the catalog; 0: priced elsewhere */
	char date[CAPSIM_DATE_LEN];
	const char *note;   /* static text, or NULL */
} capsim_bom_line;

#define CAPSIM_BOM_MAX (CAPSIM_MAX_GROUPS * 3 + 20)

/* The lines of s's cluster, as the models sized it (in) and the cost model
 * priced it (c), into v[CAPSIM_BOM_MAX]; returns how many. Doors call
 * capsim_result_bom (eval.h), which gives both from a result. */
int capsim_bom_lines(const capsim_scenario *s, const capsim_cost_inputs *in,
		     const capsim_cost *c, capsim_bom_line *v);

#endif
