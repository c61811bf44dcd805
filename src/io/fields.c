/* fields.c - fill structs from XML through the field tables (see ioint.h). */
#include "ioint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

xmlNode *capsim_xml_child(xmlNode *elem, const char *name)
{
	for (xmlNode *c = elem ? elem->children : NULL; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE &&
		    strcmp((const char *)c->name, name) == 0)
			return c;
	return NULL;
}

xmlNode *capsim_xml_child_path(xmlNode *elem, const char *path, size_t pathlen,
			       xmlNode **dup)
{
	char step[128];
	size_t i = 0;
	*dup = NULL;
	while (elem && i < pathlen) {
		size_t j = i;
		while (j < pathlen && path[j] != '.')
			j++;
		if (j - i >= sizeof step)
			return NULL;
		memcpy(step, path + i, j - i);
		step[j - i] = '\0';
		xmlNode *found = NULL;
		for (xmlNode *c = elem->children; c; c = c->next) {
			if (c->type != XML_ELEMENT_NODE ||
			    strcmp((const char *)c->name, step) != 0)
				continue;
			if (found) {
				if (!*dup)
					*dup = c;
			} else {
				found = c;
			}
		}
		elem = found;
		i = j + 1;
	}
	return elem;
}

size_t capsim_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t *row = capsim_xmalloc((lb + 1) * sizeof *row);
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t best = diag + cost;
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	size_t r = row[lb];
	free(row);
	return r;
}

static void enum_list(const char *const *names, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; names[i]; i++) {
		int w = snprintf(buf + n, len - n, "%s'%s'", i ? ", " : "", names[i]);
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
}

static int check_range(const capsim_field *f, double v, const char *text,
		       char *err, size_t errlen)
{
	if ((f->flags & CAPSIM_F_POSITIVE) && !(v > 0.0)) {
		snprintf(err, errlen, "must be greater than zero, found '%s'", text);
		return -1;
	}
	if ((f->flags & CAPSIM_F_NONNEG) && v < 0.0) {
		snprintf(err, errlen, "must not be negative, found '%s'", text);
		return -1;
	}
	if (f->min < f->max && (v < f->min || v > f->max)) {
		char lo[48], hi[48];
		capsim_units_format(f->min, f->dim, lo, sizeof lo);
		capsim_units_format(f->max, f->dim, hi, sizeof hi);
		snprintf(err, errlen,
			 "'%s' is outside the plausible range %s to %s for %s",
			 text, lo, hi, f->doc ? f->doc : f->path);
		return -1;
	}
	return 0;
}

/* The schemas' id type: [a-z0-9][a-z0-9._-]{0,62} */
static int is_id(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return 0;
	size_t n = 0;
	for (; *s; s++, n++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '.' ||
		      *s == '_' || *s == '-'))
			return 0;
	return n <= 63;
}

/* A value from --set meets the same facets as the file's attribute would
 * (the schema checks files; edits skip it): ids by the id pattern, other
 * text free of control characters, so that what capsim writes back loads. */
static int text_facets(const capsim_field *f, const char *text, char *err, size_t errlen)
{
	if (f->type == CAPSIM_FT_REF || (f->flags & CAPSIM_F_ID)) {
		if (!is_id(text)) {
			snprintf(err, errlen,
				 "expected an id (lower-case letters, digits, '.', '_' and '-', "
				 "starting with a letter or digit, at most 63), found '%s'",
				 text);
			return -1;
		}
		return 0;
	}
	for (const char *p = text; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			snprintf(err, errlen, "contains a control character (byte 0x%02x)",
				 (unsigned char)*p);
			return -1;
		}
	return 0;
}

int capsim_field_parse(const capsim_field *f, const char *text, void *obj,
		       char *err, size_t errlen)
{
	char *at = (char *)obj + f->offset;
	double v;

	switch (f->type) {
	case CAPSIM_FT_DOUBLE:
		if (capsim_units_parse(text, f->dim, f->hw, &v, err, errlen) < 0)
			return -1;
		if ((f->flags & CAPSIM_F_INTEGRAL) && v != floor(v)) {
			snprintf(err, errlen, "expected a whole number, found '%s'",
				 text);
			return -1;
		}
		if (check_range(f, v, text, err, errlen) < 0)
			return -1;
		*(double *)at = v;
		return 0;
	case CAPSIM_FT_INT:
		if (capsim_units_parse(text, f->dim, NULL, &v, err, errlen) < 0)
			return -1;
		if (v != floor(v)) {
			snprintf(err, errlen, "expected a whole number, found '%s'",
				 text);
			return -1;
		}
		if (check_range(f, v, text, err, errlen) < 0)
			return -1;
		if (fabs(v) > 2147483647.0) {
			snprintf(err, errlen, "'%s' is too large (at most 2147483647)",
				 text);
			return -1;
		}
		*(int *)at = (int)v;
		return 0;
	case CAPSIM_FT_TEXT:
	case CAPSIM_FT_REF:
		if (!*text) {
			snprintf(err, errlen, "must not be empty");
			return -1;
		}
		if (strlen(text) >= f->size) {
			snprintf(err, errlen, "is longer than %zu characters",
				 f->size - 1);
			return -1;
		}
		if (text_facets(f, text, err, errlen) < 0)
			return -1;
		memcpy(at, text, strlen(text) + 1);
		return 0;
	case CAPSIM_FT_DATE:
		return capsim_date_parse(text, at, f->size, err, errlen);
	case CAPSIM_FT_FLAG: {
		int b = capsim_flag_parse(text);
		if (b < 0) {
			snprintf(err, errlen,
				 "expected on/off (or true/false, yes/no), found '%s'",
				 text);
			return -1;
		}
		*(int *)at = b;
		return 0;
	}
	case CAPSIM_FT_ENUM:
		for (int i = 0; f->enums[i]; i++)
			if (strcmp(f->enums[i], text) == 0) {
				*(int *)at = i;
				return 0;
			}
		{
			char list[256];
			enum_list(f->enums, list, sizeof list);
			snprintf(err, errlen, "expected one of %s, found '%s'", list,
				 text);
		}
		return -1;
	}
	snprintf(err, errlen, "internal: unknown field type");
	return -1;
}

static const char *base_unit(capsim_dim dim)
{
	switch (dim) {
	case CAPSIM_DIM_BYTES: return " B";
	case CAPSIM_DIM_BYTES_PER_S: return " B/s";
	case CAPSIM_DIM_FLOP_PER_S: return " FLOP/s";
	case CAPSIM_DIM_SECONDS: return " s";
	case CAPSIM_DIM_WATTS: return " W";
	case CAPSIM_DIM_JOULES: return " J";
	case CAPSIM_DIM_VOLTS: return " V";
	case CAPSIM_DIM_AMPERES: return " A";
	case CAPSIM_DIM_HERTZ: return " Hz";
	case CAPSIM_DIM_OPS_PER_S: return " ops/s";
	case CAPSIM_DIM_METERS: return " m";
	default: return "";
	}
}

int capsim_field_format(const capsim_field *f, const void *obj, char *buf,
			size_t len)
{
	const char *at = (const char *)obj + f->offset;
	switch (f->type) {
	case CAPSIM_FT_DOUBLE: {
		double v = *(const double *)at;
		if (v == 0.0 && !f->def)
			return 1;
		switch (f->dim) {
		case CAPSIM_DIM_USD:
			snprintf(buf, len, "$%.17g", v);
			break;
		case CAPSIM_DIM_USD_PER_S:
			snprintf(buf, len, "$%.17g/s", v);
			break;
		case CAPSIM_DIM_USD_PER_J:
			snprintf(buf, len, "$%.17g/J", v);
			break;
		case CAPSIM_DIM_USD_PER_W_S:
			snprintf(buf, len, "$%.17g/W-s", v);
			break;
		case CAPSIM_DIM_USD_PER_BYTE:
			snprintf(buf, len, "$%.17g/B", v);
			break;
		case CAPSIM_DIM_USD_PER_BYTE_S:
			snprintf(buf, len, "$%.17g/B-s", v);
			break;
		default:
			snprintf(buf, len, "%.17g%s", v, base_unit(f->dim));
		}
		return 0;
	}
	case CAPSIM_FT_INT: {
		int v = *(const int *)at;
		if (v == 0 && !f->def)
			return 1;
		snprintf(buf, len, "%d", v);
		return 0;
	}
	case CAPSIM_FT_TEXT:
	case CAPSIM_FT_REF:
	case CAPSIM_FT_DATE:
		if (!*at)
			return 1;
		capsim_strlcpy(buf, at, len);
		return 0;
	case CAPSIM_FT_FLAG:
		snprintf(buf, len, "%s", *(const int *)at ? "on" : "off");
		return 0;
	case CAPSIM_FT_ENUM:
		snprintf(buf, len, "%s", f->enums[*(const int *)at]);
		return 0;
	}
	return 1;
}

/* full path of field f for messages and --set matching */
static void full_path(const capsim_origin *o, const capsim_field *f, char *buf,
		      size_t len)
{
	if (o->prefix && *o->prefix)
		snprintf(buf, len, "%s.%s", o->prefix, f->path);
	else
		snprintf(buf, len, "%s", f->path);
}

static int dup_reported(xmlNode *const *v, size_t n, const xmlNode *x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

int capsim_fields_apply(const capsim_field *f, size_t n, void *obj,
			xmlNode *elem, capsim_apply_mode mode,
			const capsim_origin *o, capsim_diags *d)
{
	int problems = 0;
	char err[512], path[256];
	xmlNode *reported[16];
	size_t n_reported = 0;

	for (size_t i = 0; i < n; i++) {
		const capsim_field *fi = &f[i];
		if (fi->flags & CAPSIM_F_GROUP)
			continue; /* a node group's: read per group element */
		const char *dot = strrchr(fi->path, '.');
		const char *attr = dot ? dot + 1 : fi->path;
		size_t elen = dot ? (size_t)(dot - fi->path) : 0;
		xmlNode *dup = NULL;
		xmlNode *holder = capsim_xml_child_path(elem, fi->path, elen, &dup);
		full_path(o, fi, path, sizeof path);
		if (dup) {
			/* once per element, at the repeated one */
			if (!dup_reported(reported, n_reported, dup)) {
				if (n_reported < sizeof reported / sizeof reported[0])
					reported[n_reported++] = dup;
				capsim_diags_add(d, o->file, xmlGetLineNo(dup),
						 "%s: element '%.*s' is given more than once",
						 o->label, (int)elen, fi->path);
				problems++;
			}
			continue;
		}
		xmlChar *val = holder ? xmlGetProp(holder, (const xmlChar *)attr) : NULL;
		if (!val) {
			if (mode == CAPSIM_APPLY_OVERRIDE)
				continue;
			if (fi->flags & CAPSIM_F_REQUIRED) {
				long line = xmlGetLineNo(holder ? holder : elem);
				char ex[96] = "";
				if (fi->type == CAPSIM_FT_DOUBLE)
					snprintf(ex, sizeof ex, ", e.g. '%s'",
						 capsim_dim_example(fi->dim));
				capsim_diags_add(d, o->file, line,
						 "%s: %s is missing (%s%s)", o->label,
						 path, fi->doc, ex);
				problems++;
			} else if (fi->def) {
				if (capsim_field_parse(fi, fi->def, obj, err, sizeof err) < 0) {
					capsim_diags_add(d, o->file, 0,
							 "internal: default of %s: %s",
							 path, err);
					problems++;
				}
			}
			continue;
		}
		if (capsim_field_parse(fi, (const char *)val, obj, err, sizeof err) < 0) {
			capsim_diags_add(d, o->file, xmlGetLineNo(holder), "%s: %s: %s",
					 o->label, path, err);
			problems++;
		}
		xmlFree(val);
	}
	return problems;
}
