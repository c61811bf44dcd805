/* ioint.h - private to src/io: filling structs from XML elements through the
 * field tables of spec.h. */
#ifndef CAPSIM_IOINT_H
#define CAPSIM_IOINT_H

#include <libxml/tree.h>

#include "diag.h"
#include "spec.h"

/* LOAD: a catalog entry or a scenario; required fields must be present and
 * defaults fill what is absent. OVERRIDE: only what is present is written. */
typedef enum { CAPSIM_APPLY_LOAD, CAPSIM_APPLY_OVERRIDE } capsim_apply_mode;

/* Where the values of an element come from, for messages (edits after the
 * file, --set, are reported by the scenario's own edit list). */
typedef struct capsim_origin {
	const char *file;
	const char *label;    /* "gpu 'h100-sxm5-80gb'" or "scenario" */
	const char *prefix;   /* path of elem in the scenario ("cluster.gpu"), or "" */
} capsim_origin;

/* Fill obj from the attributes under elem per the fields. Every problem is
 * added to d; returns the number of problems found. */
int capsim_fields_apply(const capsim_field *f, size_t n, void *obj,
			xmlNode *elem, capsim_apply_mode mode,
			const capsim_origin *o, capsim_diags *d);

/* Parse one value of field f from text into obj. Returns 0, or -1 with a
 * message in err. */
int capsim_field_parse(const capsim_field *f, const char *text, void *obj,
		       char *err, size_t errlen);

/* Format the value of f in obj so that capsim_field_parse reads it back
 * exactly; returns 0, or 1 when the field is absent (0 or ""). */
int capsim_field_format(const capsim_field *f, const void *obj, char *buf,
			size_t len);

/* The element at dotted path below elem ("memory" or "fabric.switch"), or
 * NULL; *dup is set to the first repeated element when some step had more
 * than one candidate, else NULL. */
xmlNode *capsim_xml_child_path(xmlNode *elem, const char *path, size_t pathlen,
			       xmlNode **dup);

/* First child element named name, or NULL. */
xmlNode *capsim_xml_child(xmlNode *elem, const char *name);

/* Levenshtein distance, for "did you mean". */
size_t capsim_edit_distance(const char *a, const char *b);

#endif
