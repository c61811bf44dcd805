/* knob.h - the what-if explorer's model, apart from the screen (explore.c):
 * the knobs a planner turns (each a --set path, with how it steps and where
 * its choices come from), the scenario they edit, and its undo history.
 * Every change goes through capsim_scenario_set, so a value the scenario
 * refuses is refused here with the same reason, and what the explorer shows
 * is what `capsim run --set PATH=VALUE` gives. */
#ifndef CAPSIM_KNOB_H
#define CAPSIM_KNOB_H

#include <stddef.h>

#include "catalog.h"
#include "compare.h"
#include "scenario.h"

typedef enum {
	CAPSIM_KNOB_DOUBLING,    /* a count that halves and doubles: nodes, global batch */
	CAPSIM_KNOB_STEP,        /* a count a step of one: micro-batch, virtual stages */
	CAPSIM_KNOB_SHARE,       /* a share a step of 5 points: utilisation */
	CAPSIM_KNOB_SCALE,       /* a quantity 10% up or down: a price */
	CAPSIM_KNOB_CHOICE,      /* a catalog entry of a kind, or one of the field's names */
	CAPSIM_KNOB_FABRIC       /* a fabric preset: transport, NIC and switch together */
} capsim_ui_knob_kind;

typedef struct capsim_ui_knob {
	const char *group;       /* "cluster", "workload", "cost" */
	const char *label;       /* what the screen calls it */
	const char *path;        /* the --set path (FABRIC: "cluster.fabric", its three paths
				  * are cluster.fabric.transport, cluster.nic.ref and
				  * cluster.fabric.switch.ref) */
	capsim_ui_knob_kind kind;
	int catalog;             /* CHOICE: a capsim_kind_id, or -1 for the field's own names */
} capsim_ui_knob;

extern const capsim_ui_knob capsim_ui_knobs[];
extern const size_t capsim_ui_n_knobs;

/* A fabric preset: a transport with a NIC and a switch of the catalog that
 * carry it (their figures and sources are the catalog's,
 * hardware/network.xml), so that one key press moves all three. */
typedef struct capsim_ui_fabric {
	const char *name;        /* "InfiniBand NDR" */
	const char *transport;   /* cluster.fabric.transport */
	const char *nic;         /* cluster.nic.ref */
	const char *sw;          /* cluster.fabric.switch.ref */
} capsim_ui_fabric;

extern const capsim_ui_fabric capsim_ui_fabrics[];
extern const size_t capsim_ui_n_fabrics;

/* The preset s's fabric is (its transport, the NIC of its first node group
 * and its switch), or -1 for none of them. */
int capsim_ui_fabric_of(const capsim_scenario *s);

#define CAPSIM_UI_MAX_KNOBS 96

/* The knobs of one scenario: the fixed ones, then, in a cluster of several
 * node groups, each group's node type and nodes (cluster.group.ID.ref,
 * cluster.group.ID.nodes with the group's id), the labels and paths held
 * here. */
typedef struct capsim_ui_knob_list {
	size_t n;
	capsim_ui_knob v[CAPSIM_UI_MAX_KNOBS];
	char label[CAPSIM_UI_MAX_KNOBS][CAPSIM_ID_LEN + 32];
	char path[CAPSIM_UI_MAX_KNOBS][CAPSIM_ID_LEN + 32];
} capsim_ui_knob_list;

/* Fill out with s's knobs (the list's pointers point into out). */
void capsim_ui_knobs_of(const capsim_scenario *s, capsim_ui_knob_list *out);

/* knob k's value in s for people ("64", "InfiniBand", "70%", "$0.08/kWh"),
 * or "-" where s has none */
void capsim_ui_knob_text(const capsim_scenario *s, const capsim_ui_knob *k, char *buf, size_t n);

/* The value one step up (dir > 0) or down from s's, as a --set value: 0
 * with value set, or -1 where there is none that way (a count at 1, the
 * last choice). */
int capsim_ui_knob_step(const capsim_scenario *s, const capsim_catalog *cat, const capsim_ui_knob *k,
		     int dir, char *value, size_t n);

/* One step of a knob: the edits it makes (one; a fabric preset's three),
 * the value for people, and the first value refused on the way with why. */
typedef struct capsim_ui_step {
	size_t n;
	capsim_set sets[3];      /* point into path and value */
	char path[3][64], value[3][128];
	char shown[128];         /* "8", "InfiniBand NDR" */
	int skipped;             /* values refused on the way */
	char skipped_value[128]; /* the first of them, for people */
	char why[256];           /* the scenario's reason for it */
} capsim_ui_step;

/* The nearest value up (dir > 0) or down from s's that the scenario takes
 * (each tried with capsim_scenario_set_many on a copy), values it refuses
 * passed over and counted in st, the first with its reason. Returns 0 with
 * st's edits set, or -1 where no value that way is taken (st->skipped
 * still says what was refused). */
int capsim_ui_knob_next(const capsim_scenario *s, const capsim_catalog *cat,
			const capsim_ui_knob *k, int dir, capsim_ui_step *st);

#define CAPSIM_EXPLORE_UNDO 64

/* the explorer's state: the scenario now and the ones before it, and the
 * knobs the screen lists: the scenario's own (capsim_ui_knobs_of), made
 * again after every change and undo */
typedef struct capsim_explore {
	const capsim_catalog *cat;
	capsim_scenario *s;                        /* owned */
	capsim_ui_knob_list *knobs;                /* owned: s's knobs */
	capsim_scenario *undo[CAPSIM_EXPLORE_UNDO]; /* owned, oldest first */
	size_t n_undo;
} capsim_explore;

/* Take s (owned from now on). */
void capsim_explore_init(capsim_explore *x, const capsim_catalog *cat, capsim_scenario *s);
void capsim_explore_free(capsim_explore *x);

/* Set path to value on the scenario, keeping the one before for undo: 0,
 * or -1 with the scenario's reason in err (the scenario unchanged). */
int capsim_explore_set(capsim_explore *x, const char *path, const char *value, char *err,
		       size_t n);

/* The same for several edits checked together (a layout). */
int capsim_explore_set_many(capsim_explore *x, const capsim_set *sets, size_t n_sets, char *err,
			    size_t n);

/* Back to the scenario before the last change: 0, or -1 when there is none. */
int capsim_explore_undo(capsim_explore *x);

/* The error model's quantity that the result key named key follows
 * (err.h): the step for step_time_s, tokens_per_s, mfu, time_to_train_s,
 * wall_to_train_s and cost_to_train_usd (each proportional, or inversely,
 * to the step time; prices are inputs and carry no model error), memory for
 * peak_mem_per_gpu_bytes, power for power_it_w and power_facility_w; -1
 * for a key no band follows. */
int capsim_ui_err_quantity(const char *key);

/* The design apart from its inputs: every knob of s outside the "cost"
 * group (utilisation, energy price, cloud offer, bought or rented, horizon:
 * prices and inputs, which carry no model error), "PATH=VALUE" each, joined
 * by ';', into buf. Two states of equal text are one design: what moves
 * between them is inputs alone. */
void capsim_ui_design_text(const capsim_scenario *s, char *buf, size_t n);

/* Whether a delta the explorer shows is inside capsim's own error: the
 * result key key went from was (a result of features fw) to now (features
 * fn), and the two are compared as compare.h compares two predictions (on
 * the difference where both are of one GPU generation and stack).
 * same_design: 1 where the two states are one design (equal
 * capsim_ui_design_text), so that a key that follows the step moved by
 * inputs alone, exactly. Returns 1 when the change is inside the 80% band
 * of the comparison (a tie: "within error"), 0 when it is outside or
 * exact, -1 when no band reaches it (m NULL, a key no band follows, a
 * value not above 0). */
int capsim_ui_within_error(const capsim_err_model *m, const char *key, int same_design,
			   const capsim_err_features *fw, double was,
			   const capsim_err_features *fn, double now);

#endif
