/* head.c - the JSON head of every result capsim prints; see head.h. */
#include "head.h"

static json_t *input(const char *file, const char *sha256)
{
	json_t *f = json_object();
	json_object_set_new(f, "file", json_string(file));
	json_object_set_new(f, "sha256", json_string(sha256));
	return f;
}

/* the calibrated profiles of every node group, where s has several
 * (hardware_profile and calibrated_profile are the first group's) */
static void groups(const capsim_scenario *s, json_t *o)
{
	json_t *a = json_array(), *hw = json_array();
	for (int g = 0; g < s->n_groups; g++) {
		capsim_group_view v;
		capsim_scenario_group(s, g, &v);
		json_array_append_new(hw, json_string(v.gpu->e.id));
		json_array_append_new(a, v.gpu->cal.profile[0] ? json_string(v.profile) :
								 json_null());
	}
	json_object_set_new(o, "group_hardware_profiles", hw);
	json_object_set_new(o, "group_calibrated_profiles", a);
}

json_t *capsim_api_json_head(const capsim_catalog *cat, const capsim_scenario *s,
			     const char *version)
{
	json_t *o = json_object();
	json_object_set_new(o, "schema_version", json_integer(1));
	json_object_set_new(o, "capsim_version", json_string(version));
	json_t *inputs = json_array();
	if (s)
		json_array_append_new(inputs, input(s->file, s->sha256));
	for (size_t i = 0; cat && i < capsim_catalog_n_files(cat); i++) {
		const char *sha;
		const char *path = capsim_catalog_file(cat, i, &sha);
		json_array_append_new(inputs, input(path, sha));
	}
	json_object_set_new(o, "inputs", inputs);
	if (s) {
		json_object_set_new(o, "hardware_profile", json_string(s->gpu.e.id));
		/* the calibrated profiles applied (cluster.node.profile, cluster.mix.profile) */
		json_object_set_new(o, "calibrated_profile", s->gpu.cal.profile[0] ?
								     json_string(s->gpu_profile) :
								     json_null());
		if (s->n_groups > 1)
			groups(s, o);
		json_object_set_new(o, "seed", json_integer((json_int_t)s->seed));
	}
	return o;
}
