/* knob.c - the explorer's knobs and their scenario with its undo history;
 * see knob.h. */
#include "knob.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "units.h"
#include "xalloc.h"

const capsim_ui_knob capsim_ui_knobs[] = {
	{ "cluster", "node type", "cluster.node.ref", CAPSIM_KNOB_CHOICE, CAPSIM_KIND_NODE },
	{ "cluster", "nodes", "cluster.nodes", CAPSIM_KNOB_DOUBLING, -1 },
	{ "cluster", "GPU (override)", "cluster.gpu.ref", CAPSIM_KNOB_CHOICE, CAPSIM_KIND_GPU },
	{ "cluster", "fabric", "cluster.fabric", CAPSIM_KNOB_FABRIC, -1 },
	{ "cluster", "transport", "cluster.fabric.transport", CAPSIM_KNOB_CHOICE, -1 },
	{ "cluster", "NIC (override)", "cluster.nic.ref", CAPSIM_KNOB_CHOICE, CAPSIM_KIND_NIC },
	{ "cluster", "fabric switch", "cluster.fabric.switch.ref", CAPSIM_KNOB_CHOICE,
	  CAPSIM_KIND_SWITCH },
	{ "cluster", "oversubscription", "cluster.fabric.oversubscription", CAPSIM_KNOB_DOUBLING, -1 },
	{ "cluster", "SHARP", "cluster.fabric.sharp", CAPSIM_KNOB_CHOICE, -1 },
	{ "cluster", "placement", "cluster.fabric.placement", CAPSIM_KNOB_CHOICE, -1 },
	{ "cluster", "shared storage", "cluster.storage.shared.ref", CAPSIM_KNOB_CHOICE,
	  CAPSIM_KIND_STORAGE },
	{ "workload", "model", "workload.model.ref", CAPSIM_KNOB_CHOICE, CAPSIM_KIND_MODEL },
	{ "workload", "sequence length", "workload.seq-len", CAPSIM_KNOB_DOUBLING, -1 },
	{ "workload", "global batch", "workload.global-batch", CAPSIM_KNOB_DOUBLING, -1 },
	{ "workload", "micro-batch", "workload.micro-batch", CAPSIM_KNOB_DOUBLING, -1 },
	{ "workload", "TP", "workload.parallelism.tp", CAPSIM_KNOB_DOUBLING, -1 },
	{ "workload", "PP", "workload.parallelism.pp", CAPSIM_KNOB_STEP, -1 },
	{ "workload", "virtual stages", "workload.parallelism.virtual-stages", CAPSIM_KNOB_STEP, -1 },
	{ "workload", "schedule", "workload.parallelism.schedule", CAPSIM_KNOB_CHOICE, -1 },
	{ "workload", "CP", "workload.parallelism.cp", CAPSIM_KNOB_DOUBLING, -1 },
	{ "workload", "EP", "workload.parallelism.ep", CAPSIM_KNOB_DOUBLING, -1 },
	{ "workload", "ZeRO", "workload.parallelism.zero", CAPSIM_KNOB_CHOICE, -1 },
	{ "workload", "recompute", "workload.parallelism.recompute", CAPSIM_KNOB_CHOICE, -1 },
	{ "workload", "framework", "workload.framework", CAPSIM_KNOB_CHOICE, -1 },
	{ "cost", "utilisation", "cost.utilization", CAPSIM_KNOB_SHARE, -1 },
	{ "cost", "energy price", "facility.energy.price", CAPSIM_KNOB_SCALE, -1 },
	{ "cost", "cloud offer", "cost.cloud.ref", CAPSIM_KNOB_CHOICE, CAPSIM_KIND_CLOUD },
	{ "cost", "bought or rented", "cost.acquire", CAPSIM_KNOB_CHOICE, -1 },
	{ "cost", "horizon", "cost.horizon", CAPSIM_KNOB_SCALE, -1 },
};
const size_t capsim_ui_n_knobs = sizeof capsim_ui_knobs / sizeof capsim_ui_knobs[0];

/* each a transport with a NIC and a switch of hardware/network.xml that
 * carry it, in order of speed, InfiniBand before RoCE at each */
const capsim_ui_fabric capsim_ui_fabrics[] = {
	{ "InfiniBand HDR", "infiniband", "cx6-hdr-200", "qm8700" },
	{ "RoCE 200GbE", "roce", "cx7-200gbe", "sn5600" },
	{ "InfiniBand NDR", "infiniband", "cx7-ndr-400", "qm9700" },
	{ "RoCE 400GbE", "roce", "cx7-400gbe", "sn5600" },
	{ "InfiniBand XDR", "infiniband", "cx8-800", "q3400" },
};
const size_t capsim_ui_n_fabrics = sizeof capsim_ui_fabrics / sizeof capsim_ui_fabrics[0];

/* the text of path in s ("" where it has none) */
static void path_text(const capsim_scenario *s, const char *path, char *buf, size_t n)
{
	capsim_path_value v;
	char err[256];
	buf[0] = '\0';
	if (capsim_scenario_path_value(s, path, NULL, &v, err, sizeof err) == 0 && v.is_text)
		snprintf(buf, n, "%s", v.text);
}

int capsim_ui_fabric_of(const capsim_scenario *s)
{
	char transport[128], sw[128];
	path_text(s, "cluster.fabric.transport", transport, sizeof transport);
	path_text(s, "cluster.fabric.switch.ref", sw, sizeof sw);
	capsim_group_view v;
	capsim_scenario_group(s, 0, &v);
	for (size_t i = 0; i < capsim_ui_n_fabrics; i++) {
		const capsim_ui_fabric *f = &capsim_ui_fabrics[i];
		if (strcmp(f->transport, transport) == 0 && strcmp(f->sw, sw) == 0 && v.nic &&
		    strcmp(f->nic, v.nic->e.id) == 0)
			return (int)i;
	}
	return -1;
}

/* the fabric of s in words: its preset's name, or its three parts */
static void fabric_text(const capsim_scenario *s, char *buf, size_t n)
{
	int f = capsim_ui_fabric_of(s);
	if (f >= 0) {
		snprintf(buf, n, "%s", capsim_ui_fabrics[f].name);
		return;
	}
	char transport[128], sw[128];
	path_text(s, "cluster.fabric.transport", transport, sizeof transport);
	path_text(s, "cluster.fabric.switch.ref", sw, sizeof sw);
	capsim_group_view v;
	capsim_scenario_group(s, 0, &v);
	snprintf(buf, n, "%s, %s, %s", transport, v.nic ? v.nic->e.id : "-", sw[0] ? sw : "-");
}

/* one knob of a group: label "LABEL of group ID", path cluster.group.ID.REST */
static void group_knob(capsim_ui_knob_list *out, const char *id, const char *label,
		       const char *rest, capsim_ui_knob_kind kind, int catalog)
{
	size_t i = out->n++;
	snprintf(out->label[i], sizeof out->label[i], "%s of %s", label, id);
	snprintf(out->path[i], sizeof out->path[i], "cluster.group.%s.%s", id, rest);
	out->v[i] = (capsim_ui_knob){ "cluster", out->label[i], out->path[i], kind, catalog };
}

void capsim_ui_knobs_of(const capsim_scenario *s, capsim_ui_knob_list *out)
{
	out->n = 0;
	for (size_t k = 0; k < capsim_ui_n_knobs; k++) {
		out->v[out->n++] = capsim_ui_knobs[k];
		if (k != 0 || s->n_groups < 2)
			continue;
		/* after the cluster's node type: each group's type and nodes */
		for (int g = 0; g < s->n_groups && out->n + 2 < CAPSIM_UI_MAX_KNOBS; g++) {
			group_knob(out, s->groups[g].id, "node type", "ref", CAPSIM_KNOB_CHOICE,
				   CAPSIM_KIND_NODE);
			group_knob(out, s->groups[g].id, "nodes", "nodes", CAPSIM_KNOB_DOUBLING, -1);
		}
	}
}

/* a number of dimension dim as a --set value the field reads back exactly */
static void value_text(double v, capsim_dim dim, char *buf, size_t n)
{
	switch (dim) {
	case CAPSIM_DIM_USD_PER_J: snprintf(buf, n, "$%.17g/J", v); break;
	case CAPSIM_DIM_USD_PER_S: snprintf(buf, n, "$%.17g/s", v); break;
	case CAPSIM_DIM_USD: snprintf(buf, n, "$%.17g", v); break;
	case CAPSIM_DIM_SECONDS: snprintf(buf, n, "%.17g s", v); break;
	default: snprintf(buf, n, "%.17g", v); break;
	}
}

void capsim_ui_knob_text(const capsim_scenario *s, const capsim_ui_knob *k, char *buf, size_t n)
{
	if (k->kind == CAPSIM_KNOB_FABRIC) {
		fabric_text(s, buf, n);
		return;
	}
	capsim_path_value v;
	char err[256];
	if (capsim_scenario_path_value(s, k->path, NULL, &v, err, sizeof err) < 0) {
		snprintf(buf, n, "-");
		return;
	}
	if (v.is_text) {
		snprintf(buf, n, "%s", v.text[0] ? v.text : "-");
		return;
	}
	const capsim_field *f = capsim_scenario_path_field(k->path);
	if (f && f->type == CAPSIM_FT_FLAG) {
		snprintf(buf, n, "%s", v.num ? "on" : "off");
		return;
	}
	switch (k->kind) {
	case CAPSIM_KNOB_SHARE:
		snprintf(buf, n, "%.0f%%", 100.0 * v.num);
		return;
	case CAPSIM_KNOB_SCALE:
		if (f && f->dim == CAPSIM_DIM_USD_PER_J)
			snprintf(buf, n, "$%.4f/kWh", v.num * 3.6e6);
		else if (f && f->dim == CAPSIM_DIM_SECONDS)
			snprintf(buf, n, "%.2f y", v.num / (365.25 * 86400.0));
		else
			capsim_units_format(v.num, f ? f->dim : CAPSIM_DIM_COUNT, buf, n);
		return;
	default:
		if (strcmp(k->path, "cluster.fabric.oversubscription") == 0)
			snprintf(buf, n, "%g:1", v.num);
		else
			snprintf(buf, n, "%.0f", v.num);
	}
}

/* the next name of names[] after (dir > 0) or before cur; -1 at an end */
static int next_name(const char *const *names, size_t count, const char *cur, int dir)
{
	size_t i = 0;
	while (i < count && strcmp(names[i], cur) != 0)
		i++;
	if (i == count)
		return count ? 0 : -1; /* not among them: the first */
	if (dir > 0)
		return i + 1 < count ? (int)(i + 1) : -1;
	return i > 0 ? (int)(i - 1) : -1;
}

/* knob k's value in s as its choices name it ("on" for a flag) */
static void choice_of(const capsim_scenario *s, const capsim_ui_knob *k, char *cur, size_t n)
{
	capsim_path_value v;
	char err[256];
	if (capsim_scenario_path_value(s, k->path, NULL, &v, err, sizeof err) < 0)
		v.is_text = 1, v.text[0] = '\0';
	if (v.is_text)
		snprintf(cur, n, "%s", v.text);
	else
		snprintf(cur, n, "%s", v.num ? "on" : "off");
}

/* the choice of k after (dir > 0) or before cur, into value; -1 at an end */
static int step_choice_from(const capsim_catalog *cat, const capsim_ui_knob *k, const char *cur,
			    int dir, char *value, size_t n)
{
	if (k->catalog >= 0) {
		size_t count = capsim_catalog_count(cat, (capsim_kind_id)k->catalog);
		const char **ids = capsim_xcalloc(count ? count : 1, sizeof *ids);
		for (size_t i = 0; i < count; i++)
			ids[i] = ((const capsim_entry *)capsim_catalog_at(cat, (capsim_kind_id)k->catalog,
									   i))->id;
		int at = next_name(ids, count, cur, dir);
		if (at >= 0)
			snprintf(value, n, "%s", ids[at]);
		free(ids);
		return at >= 0 ? 0 : -1;
	}
	const capsim_field *f = capsim_scenario_path_field(k->path);
	if (!f)
		return -1;
	static const char *const flags[] = { "off", "on" };
	const char *const *names = f->type == CAPSIM_FT_FLAG ? flags : f->enums;
	size_t count = 0;
	if (f->type == CAPSIM_FT_FLAG)
		count = 2;
	else
		while (names && names[count])
			count++;
	int at = next_name(names, count, cur, dir);
	if (at >= 0)
		snprintf(value, n, "%s", names[at]);
	return at >= 0 ? 0 : -1;
}

/* the number of k one step from x up (dir > 0) or down, into *next and as
 * a --set value; -1 where there is none that way */
static int step_number_from(const capsim_ui_knob *k, double x, int dir, double *next, char *value,
			    size_t n)
{
	const capsim_field *f = capsim_scenario_path_field(k->path);
	switch (k->kind) {
	case CAPSIM_KNOB_DOUBLING:
		x = dir > 0 ? x * 2 : x / 2;
		if (x < 1 || x != floor(x))
			return -1;
		break;
	case CAPSIM_KNOB_STEP:
		x += dir > 0 ? 1 : -1;
		if (x < 1)
			return -1;
		break;
	case CAPSIM_KNOB_SHARE:
		x = round(100.0 * x + (dir > 0 ? 5 : -5)) / 100.0;
		if (x < 0.05 || x > 1.0 + 1e-12)
			return -1;
		break;
	case CAPSIM_KNOB_SCALE:
		x *= dir > 0 ? 1.1 : 1.0 / 1.1;
		if (!(x > 0))
			return -1;
		break;
	default:
		return -1;
	}
	if (strcmp(k->path, "cluster.fabric.oversubscription") == 0)
		snprintf(value, n, "%.17g:1", x);
	else
		value_text(x, f ? f->dim : CAPSIM_DIM_COUNT, value, n);
	*next = x;
	return 0;
}

int capsim_ui_knob_step(const capsim_scenario *s, const capsim_catalog *cat, const capsim_ui_knob *k,
		     int dir, char *value, size_t n)
{
	if (k->kind == CAPSIM_KNOB_FABRIC) {
		capsim_ui_step st;
		if (capsim_ui_knob_next(s, cat, k, dir, &st) < 0)
			return -1;
		snprintf(value, n, "%s", st.shown);
		return 0;
	}
	if (k->kind == CAPSIM_KNOB_CHOICE) {
		char cur[128];
		choice_of(s, k, cur, sizeof cur);
		return step_choice_from(cat, k, cur, dir, value, n);
	}
	capsim_path_value v;
	char err[256];
	if (capsim_scenario_path_value(s, k->path, NULL, &v, err, sizeof err) < 0 || v.is_text)
		return -1;
	double next;
	return step_number_from(k, v.num, dir, &next, value, n);
}

/* ---- a step past the values the scenario refuses ------------------------------------- */

/* st's edit i: path = value */
static void step_edit(capsim_ui_step *st, size_t i, const char *path, const char *value)
{
	snprintf(st->path[i], sizeof st->path[i], "%s", path);
	snprintf(st->value[i], sizeof st->value[i], "%s", value);
	st->sets[i] = (capsim_set){ st->path[i], st->value[i] };
	st->n = i + 1;
}

static void diags_text(const capsim_diags *d, char *err, size_t n);

/* whether s takes st's edits; a refusal counted in st, the first kept */
static int takes(const capsim_scenario *s, const capsim_catalog *cat, capsim_ui_step *st)
{
	capsim_scenario *copy = capsim_xmalloc(sizeof *copy);
	*copy = *s;
	capsim_diags d = { 0 };
	int ok = capsim_scenario_set_many(copy, cat, st->sets, st->n, &d) == 0;
	if (!ok && st->skipped++ == 0) {
		snprintf(st->skipped_value, sizeof st->skipped_value, "%s", st->shown);
		diags_text(&d, st->why, sizeof st->why);
	}
	capsim_diags_free(&d);
	free(copy);
	return ok;
}

/* the fabric presets from s's one way, the first s takes */
static int next_fabric(const capsim_scenario *s, const capsim_catalog *cat, int dir,
		       capsim_ui_step *st)
{
	int at = capsim_ui_fabric_of(s);
	int i = at < 0 ? (dir > 0 ? 0 : (int)capsim_ui_n_fabrics - 1) : at + (dir > 0 ? 1 : -1);
	for (; i >= 0 && (size_t)i < capsim_ui_n_fabrics; i += dir > 0 ? 1 : -1) {
		const capsim_ui_fabric *f = &capsim_ui_fabrics[i];
		step_edit(st, 0, "cluster.fabric.transport", f->transport);
		step_edit(st, 1, "cluster.nic.ref", f->nic);
		step_edit(st, 2, "cluster.fabric.switch.ref", f->sw);
		snprintf(st->shown, sizeof st->shown, "%s", f->name);
		if (takes(s, cat, st))
			return 0;
	}
	return -1;
}

/* the most values a knob passes over in one step */
#define MAX_SKIPS 32

int capsim_ui_knob_next(const capsim_scenario *s, const capsim_catalog *cat,
			const capsim_ui_knob *k, int dir, capsim_ui_step *st)
{
	memset(st, 0, sizeof *st);
	if (k->kind == CAPSIM_KNOB_FABRIC)
		return next_fabric(s, cat, dir, st);
	/* every other kind walks on from each value tried, refused or not */
	char cur[128];
	double x = 0;
	if (k->kind == CAPSIM_KNOB_CHOICE) {
		choice_of(s, k, cur, sizeof cur);
	} else {
		capsim_path_value v;
		char err[256];
		if (capsim_scenario_path_value(s, k->path, NULL, &v, err, sizeof err) < 0 ||
		    v.is_text)
			return -1;
		x = v.num;
	}
	for (int i = 0; i < MAX_SKIPS; i++) {
		char value[128];
		int rc = k->kind == CAPSIM_KNOB_CHOICE ?
				 step_choice_from(cat, k, cur, dir, value, sizeof value) :
				 step_number_from(k, x, dir, &x, value, sizeof value);
		if (rc < 0)
			return -1;
		step_edit(st, 0, k->path, value);
		snprintf(st->shown, sizeof st->shown, "%s", value);
		if (takes(s, cat, st))
			return 0;
		snprintf(cur, sizeof cur, "%s", value);
	}
	return -1;
}

/* ---- the scenario and its history ---------------------------------------------------- */

void capsim_explore_init(capsim_explore *x, const capsim_catalog *cat, capsim_scenario *s)
{
	memset(x, 0, sizeof *x);
	x->cat = cat;
	x->s = s;
	x->knobs = capsim_xmalloc(sizeof *x->knobs);
	capsim_ui_knobs_of(s, x->knobs);
}

void capsim_explore_free(capsim_explore *x)
{
	for (size_t i = 0; i < x->n_undo; i++)
		free(x->undo[i]);
	free(x->s);
	free(x->knobs);
	memset(x, 0, sizeof *x);
}

static void diags_text(const capsim_diags *d, char *err, size_t n)
{
	size_t at = 0;
	err[0] = '\0';
	for (size_t i = 0; i < d->n && at + 1 < n; i++) {
		int k = snprintf(err + at, n - at, "%s%s", i ? "; " : "", d->v[i].msg);
		if (k < 0)
			break;
		at += (size_t)k < n - at ? (size_t)k : n - at - 1;
	}
	for (char *c = err; *c; c++)
		if (*c == '\n')
			*c = ' ';
}

int capsim_explore_set_many(capsim_explore *x, const capsim_set *sets, size_t n_sets, char *err,
			    size_t n)
{
	capsim_scenario *before = capsim_xmalloc(sizeof *before);
	*before = *x->s;
	capsim_diags d = { 0 };
	if (capsim_scenario_set_many(x->s, x->cat, sets, n_sets, &d) < 0) {
		diags_text(&d, err, n);
		capsim_diags_free(&d);
		free(before);
		return -1;
	}
	capsim_diags_free(&d);
	if (x->n_undo == CAPSIM_EXPLORE_UNDO) {
		free(x->undo[0]);
		memmove(&x->undo[0], &x->undo[1], (CAPSIM_EXPLORE_UNDO - 1) * sizeof x->undo[0]);
		x->n_undo--;
	}
	x->undo[x->n_undo++] = before;
	capsim_ui_knobs_of(x->s, x->knobs);
	return 0;
}

int capsim_explore_set(capsim_explore *x, const char *path, const char *value, char *err,
		       size_t n)
{
	capsim_set one = { path, value };
	return capsim_explore_set_many(x, &one, 1, err, n);
}

int capsim_explore_undo(capsim_explore *x)
{
	if (x->n_undo == 0)
		return -1;
	free(x->s);
	x->s = x->undo[--x->n_undo];
	capsim_ui_knobs_of(x->s, x->knobs);
	return 0;
}

/* the keys a band follows: the quantity, and 1 where the key is inversely
 * proportional to it (a rate) */
static const struct {
	const char *key;
	capsim_err_quantity q;
	int inverse;
} err_keys[] = {
	{ "step_time_s", CAPSIM_ERR_STEP, 0 },
	{ "tokens_per_s", CAPSIM_ERR_STEP, 1 },
	{ "mfu", CAPSIM_ERR_STEP, 1 },
	{ "time_to_train_s", CAPSIM_ERR_STEP, 0 },
	{ "wall_to_train_s", CAPSIM_ERR_STEP, 0 },
	{ "cost_to_train_usd", CAPSIM_ERR_STEP, 0 },
	{ "peak_mem_per_gpu_bytes", CAPSIM_ERR_MEMORY, 0 },
	{ "power_it_w", CAPSIM_ERR_POWER, 0 },
	{ "power_facility_w", CAPSIM_ERR_POWER, 0 },
};

static int err_key(const char *key)
{
	for (size_t i = 0; i < sizeof err_keys / sizeof err_keys[0]; i++)
		if (strcmp(err_keys[i].key, key) == 0)
			return (int)i;
	return -1;
}

int capsim_ui_err_quantity(const char *key)
{
	int i = err_key(key);
	return i < 0 ? -1 : (int)err_keys[i].q;
}

void capsim_ui_design_text(const capsim_scenario *s, char *buf, size_t n)
{
	capsim_ui_knob_list *k = capsim_xmalloc(sizeof *k);
	capsim_ui_knobs_of(s, k);
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < k->n && at < n; i++) {
		if (strcmp(k->v[i].group, "cost") == 0)
			continue;
		char v[128];
		capsim_ui_knob_text(s, &k->v[i], v, sizeof v);
		int w = snprintf(buf + at, n - at, "%s=%s;", k->v[i].path, v);
		at = w < 0 ? n : at + (size_t)w;
	}
	free(k);
}

int capsim_ui_within_error(const capsim_err_model *m, const char *key, int same_design,
			   const capsim_err_features *fw, double was,
			   const capsim_err_features *fn, double now)
{
	int i = err_key(key);
	if (!m || i < 0 || !(was > 0) || !(now > 0) || !isfinite(was) || !isfinite(now))
		return -1;
	if (same_design && err_keys[i].q == CAPSIM_ERR_STEP)
		return 0; /* one design: moved by inputs alone, exactly */
	/* a rate compared as the step it is the inverse of */
	double a = err_keys[i].inverse ? 1.0 / now : now;
	double b = err_keys[i].inverse ? 1.0 / was : was;
	capsim_err_cmp c;
	if (capsim_err_compare(m, err_keys[i].q, fn, a, fw, b, &c) < 0)
		return -1;
	return c.tie;
}
