/* sweep.h - a sweep file (capsim sweep FILE): a base scenario, edits made to
 * every point, axes over --set paths and constraints; and its expansion into
 * points, each the base scenario with one value of every axis.
 *
 * The points are numbered 0 .. size - 1 in the order of nested loops over
 * the dimensions in file order, the first outermost. A dimension is one axis
 * or a <zip> group, whose axes advance together (combine="zip" makes every
 * axis one group). A point's index is its place in that expansion, so it
 * does not move when a constraint is added or a sweep is resumed.
 *
 * Constraints are read before a point runs: names in a test are --set paths,
 * valued by the point's axis value where an axis has the path, else by the
 * base scenario (with the sweep's edits). A point some test finds false is
 * dropped, counted under that constraint. */
#ifndef CAPSIM_SWEEP_H
#define CAPSIM_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "catalog.h"
#include "diag.h"
#include "scenario.h"

#define CAPSIM_SWEEP_MAX_AXES 32        /* axes of one sweep: more is an error naming the number */
#define CAPSIM_SWEEP_MAX_VALUES 100000  /* values of one axis */
#define CAPSIM_SWEEP_MAX_POINTS 100000000ull /* points of one sweep, before constraints */

struct capsim_expr;

typedef struct capsim_sweep_axis {
	char *path;
	char **values;                 /* as the --set values: "64", "400 Gb/s", "h100-sxm" */
	capsim_path_value *parsed;     /* each value as the path's field reads it */
	size_t n;
	int dim;                       /* its dimension */
	long line;
} capsim_sweep_axis;

typedef struct capsim_sweep_constraint {
	struct capsim_expr *test;
	char *text, *reason;           /* reason: the test itself where none is given */
	long line;
	/* the base scenario's value of each name the test reads that no axis
	 * sets; axis[i] >= 0 where axis i sets name i */
	size_t n_names;
	int *axis;
	capsim_path_value *base;
} capsim_sweep_constraint;

typedef struct capsim_sweep {
	char name[CAPSIM_ID_LEN];
	char file[CAPSIM_PATH_LEN];
	char sha256[65];               /* of the sweep file's bytes */
	char base_file[CAPSIM_PATH_LEN]; /* the base scenario, as found */
	capsim_set *sets;              /* <set> edits, made to the base scenario */
	size_t n_sets;
	capsim_sweep_axis axes[CAPSIM_SWEEP_MAX_AXES];
	size_t n_axes;
	size_t dim_len[CAPSIM_SWEEP_MAX_AXES]; /* each dimension's values */
	size_t n_dims;
	uint64_t size;                 /* points before constraints: the product of dim_len */
	capsim_sweep_constraint *constraints;
	size_t n_constraints;
	char **owned;                  /* the strings sets point into */
	size_t n_owned;
} capsim_sweep;

/* Read and check the sweep file at path: schema, axis paths and every value
 * against its field, ranges and catalog choices expanded, constraints parsed
 * with their names checked. The base scenario is found beside the sweep file
 * (a relative path is the sweep file's directory's), loaded against cat with
 * the command line's sets after the file's own, and returned in *base (the
 * caller's, zeroed first). Returns the sweep (capsim_sweep_free) or NULL
 * after adding every problem to d. */
capsim_sweep *capsim_sweep_load(const char *path, const capsim_catalog *cat,
				const capsim_set *cli_sets, size_t n_cli_sets,
				capsim_scenario *base, capsim_diags *d);

void capsim_sweep_free(capsim_sweep *sw);

/* Point index's value of every axis, in axis order, into out[n_axes]
 * (path and value point into sw). index < sw->size. */
void capsim_sweep_point(const capsim_sweep *sw, uint64_t index, capsim_set *out);

/* Whether point index runs: -1 when it does, else the index of the first
 * constraint whose test is false. A test that cannot be evaluated (a text
 * compared with a number) drops the point too, with its message in err
 * and *error set. */
long capsim_sweep_check(const capsim_sweep *sw, uint64_t index, int *error, char *err,
			size_t errlen);

#endif
