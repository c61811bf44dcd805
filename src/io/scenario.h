/* scenario.h - loading a scenario: what a planner writes (scenarios/NAME.xml),
 * resolved against the catalog into a capsim_scenario with every part copied
 * in and every override applied, checked for consistency.
 *
 * Overrides: an element that names a catalog part by ref may carry the part's
 * own children and attributes, which replace the catalog values; --set
 * PATH=VALUE does the same from the command line, with PATH the element path
 * below <scenario> and the attribute, joined by dots
 * ("cluster.fabric.transport", "cluster.gpu.memory.bandwidth"). */
#ifndef CAPSIM_SCENARIO_H
#define CAPSIM_SCENARIO_H

#include <stdio.h>

#include "catalog.h"
#include "diag.h"
#include "spec.h"

typedef struct capsim_set {
	const char *path;  /* borrowed */
	const char *value; /* borrowed */
} capsim_set;

/* Split "PATH=VALUE" (arg is borrowed and must outlive the set: the '=' is
 * not modified; path and value point into buf, which the caller provides and
 * which must hold strlen(arg)+1 bytes). Returns 0 or -1 after adding to d. */
int capsim_set_parse(const char *arg, char *buf, capsim_set *out,
		     capsim_diags *d);

/* Load path into *out (zeroed first). sets are applied in order after the
 * file is read. Returns 0, or -1 after adding every problem to d; *out is
 * then unspecified. */
int capsim_scenario_load(const char *path, const capsim_catalog *cat,
			 const capsim_set *sets, size_t n_sets,
			 capsim_scenario *out, capsim_diags *d);

/* The same for a file's text in memory; name is used in messages. */
int capsim_scenario_load_memory(const char *buf, size_t len, const char *name,
				const capsim_catalog *cat,
				const capsim_set *sets, size_t n_sets,
				capsim_scenario *out, capsim_diags *d);

/* capsim_scenario_load, but the layout (tp, pp, cp, ep, dp, virtual and end stages,
 * schedule, micro-batch) is not held to the parallelism rules: what a search
 * over layouts starts from, which checks each layout it tries (capsim
 * optimize, capsim run --layout auto). Everything else is checked as a load
 * does. The scenario must not be run as it is: dp is 0 where tp x pp x cp
 * does not divide the GPUs. */
int capsim_scenario_load_any_layout(const char *path, const capsim_catalog *cat,
				    const capsim_set *sets, size_t n_sets, capsim_scenario *out,
				    capsim_diags *d);

/* Edit a loaded scenario: apply PATH=VALUE through the field table (a
 * scenario field, a part's ref, or a part's field as an override), resolve
 * catalog references again where the edit touches a part, derive dp and
 * rails, and check the whole as a load does. No file is read (except a
 * calibrated profile an edit names). cat NULL: the catalog s was resolved
 * from (s->catalog), which must still be alive. An error the edit causes names the
 * edit ("--set PATH=VALUE"), not a line of the file. Returns 0, or -1 after
 * adding every problem to d, leaving *s as it was. */
int capsim_scenario_set(capsim_scenario *s, const capsim_catalog *cat, const char *path,
			const char *value, capsim_diags *d);

/* The same for several edits at once, checked together after the last: a
 * change of nodes and global batch that is only consistent as a pair. */
int capsim_scenario_set_many(capsim_scenario *s, const capsim_catalog *cat,
			     const capsim_set *sets, size_t n, capsim_diags *d);

/* The parallelism rules of the whole check alone, on s as it stands (its dp
 * included): 0, or -1 after adding the reasons to d. For the optimiser,
 * which sets the parallelism fields of a scratch copy directly and checks
 * many candidates before any is edited for real. */
int capsim_scenario_check_parallelism(const capsim_scenario *s, capsim_diags *d);

/* ---- changes that are not a user's edit -------------------------------------
 * Every change of a scenario is made here in io: by capsim_scenario_set and
 * set_many (a user's edit: re-resolved, checked, remembered for messages),
 * or by one of the functions below, each for one door's private copy where
 * an edit cannot say the change or costs too much. The models, which never
 * reach io, make their private views with spec.h's capsim_scenario_as_group
 * and capsim_scenario_dp_plane. */

/* A layout of the job's parallelism: what the optimiser chooses. */
typedef struct capsim_scenario_layout {
	int tp, pp, cp, ep, dp, virtual_stages, first_stage_layers, last_stage_layers;
	int zero, micro_batch, recompute, tp_comm_overlap, ep_overlap;
} capsim_scenario_layout;

/* Put layout l on scratch, the optimiser's private copy on which it screens
 * up to hundreds of thousands of layouts: the fields written as they are,
 * the schedule 1F1B (interleaved with virtual stages above 1), sequence
 * parallelism on with TP above 1. Nothing is re-resolved, checked or
 * remembered (an edit of the same fields costs about a screen's whole time,
 * docs/performance.md); capsim_scenario_check_parallelism checks the
 * result, and a layout the optimiser keeps reaches a user's scenario through
 * capsim_scenario_set_many. */
void capsim_scenario_screen_layout(capsim_scenario *scratch, const capsim_scenario_layout *l);

/* Forget s's own end-stage layers and data-parallel degree (as if the file
 * gave neither), so that a search over layouts may choose them: no edit can
 * say "not given". The scenario stays consistent: dp is the search's. */
void capsim_scenario_free_layout(capsim_scenario *s);

/* s as one replica of a larger job that keeps its share of the optimizer
 * step: one optimizer state sharded over gpus ranks (the larger job's data x
 * context ranks) rather than s's own. For the scaling reference of
 * capsim_eval; not a field of the scenario file. */
void capsim_scenario_keep_optimizer_shard(capsim_scenario *s, int gpus);

/* Write s, fully resolved (every part's fields as overrides), as a scenario
 * file that loads back into an identical struct. Returns 0 or -1 on a write
 * error. */
int capsim_scenario_write_xml(const capsim_scenario *s, FILE *f);

/* The value of --set path: s's own (value NULL), or value read as that
 * path's field reads it, without applying it to anything. Numbers come in SI
 * (on/off as 1/0), names, refs, enums and dates as text. Returns 0, or -1
 * with the reason in err: an unknown path, a value the field refuses, or
 * (value NULL) a part that s does not have. */
typedef struct capsim_path_value {
	int is_text;
	double num;
	char text[CAPSIM_VALUE_LEN];
} capsim_path_value;

int capsim_scenario_path_value(const capsim_scenario *s, const char *path, const char *value,
			       capsim_path_value *out, char *err, size_t errlen);

/* Where loading writes its warnings ("FILE:LINE: warning: ..."): an old form
 * of a node group (<mix>, cluster.mix.*) that still loads. NULL, the
 * default: nowhere. The command line gives standard error. */
void capsim_scenario_warnings_to(FILE *out);

/* Every path --set accepts, in a stable order; the array lives until exit.
 * A node group's paths are written with ID for its key (cluster.group.ID.nodes):
 * --set takes its id or its index there. */
const char *const *capsim_scenario_set_paths(size_t *n);

/* 1 when --set accepts path, else 0. */
int capsim_scenario_path_known(const char *path);

/* The field that --set path sets: a scenario field, or a field of the part
 * below a part slot ("cluster.gpu.memory.bandwidth"); NULL for neither. */
const capsim_field *capsim_scenario_path_field(const char *path);

/* Paths longer than this have no nearest valid path (the longest is about 60). */
#define CAPSIM_NEAREST_MAX_LEN 256

/* Up to max paths nearest to path (edit distance), into out; returns how
 * many (none for a path longer than CAPSIM_NEAREST_MAX_LEN). */
size_t capsim_scenario_nearest_paths(const char *path, const char **out,
				     size_t max);

#endif
