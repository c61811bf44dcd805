/* catalog.h - the catalog of hardware parts and models that scenarios name by id,
 * loaded from hardware/NAME.xml and models/NAME.xml, with the bibliography that every
 * number in them cites (hardware/bibliography.xml).
 *
 * A catalog owns its entries; pointers returned by the lookups stay valid
 * until capsim_catalog_free. */
#ifndef CAPSIM_CATALOG_H
#define CAPSIM_CATALOG_H

#include <stddef.h>

#include "diag.h"
#include "spec.h"

typedef struct capsim_catalog capsim_catalog;

capsim_catalog *capsim_catalog_create(void);
void capsim_catalog_free(capsim_catalog *c);

/* Load root/hardware/bibliography.xml, then root/hardware/NAME.xml and
 * root/models/NAME.xml in name order, skipping the file whose real path is
 * skip (may be NULL), then check references across files.
 * Returns 0, or -1 after adding every problem to d. */
int capsim_catalog_load_root(capsim_catalog *c, const char *root,
			     const char *skip, capsim_diags *d);

/* Load one more file (bibliography, hardware or model, by its root element).
 * Returns 0, or -1 after adding every problem to d. */
int capsim_catalog_load_file(capsim_catalog *c, const char *path,
			     capsim_diags *d);

/* The same for a file's text in memory; name is used in messages. */
int capsim_catalog_load_memory(capsim_catalog *c, const char *buf,
			       size_t len, const char *name, capsim_diags *d);

/* Check references between entries (a node's GPU, a cloud offer's GPU). */
int capsim_catalog_check(const capsim_catalog *c, capsim_diags *d);

size_t capsim_catalog_count(const capsim_catalog *c, capsim_kind_id k);
const void *capsim_catalog_at(const capsim_catalog *c, capsim_kind_id k,
			      size_t i);
const void *capsim_catalog_find(const capsim_catalog *c, capsim_kind_id k,
				const char *id);

/* The files read from disk, in order, with the SHA-256 of each (hex): the
 * digests that results carry. */
size_t capsim_catalog_n_files(const capsim_catalog *c);
const char *capsim_catalog_file(const capsim_catalog *c, size_t i,
				const char **sha256);

size_t capsim_catalog_n_refs(const capsim_catalog *c);
const capsim_bibref *capsim_catalog_ref_at(const capsim_catalog *c, size_t i);
const capsim_bibref *capsim_catalog_ref(const capsim_catalog *c,
					const char *id);

/* Where the catalog files live: $CAPSIM_DATA if set; else, from the running
 * executable's directory (/proc/self/exe), ../share/capsim after
 * `cmake --install` to any prefix, or the source tree when the executable
 * sits in a build directory of it; else the configured install prefix's
 * share/capsim. */
const char *capsim_catalog_default_root(void);

/* Where each value of entry e comes from, read again from its file (e->file
 * at e->line): for each child element that holds values, its name, its
 * values as written ("capacity=80 GB bandwidth=3.35 TB/s"), and its own src
 * or assumption, else the entry's ("" where neither). Calls fn for each, in
 * file order; returns how many, or -1 after the reason in d (the file cannot
 * be read, or no longer holds the entry there). */
typedef void (*capsim_provenance_fn)(void *ctx, const char *element, const char *values,
				     const char *src, const char *assumption);
int capsim_catalog_provenance(const capsim_entry *e, capsim_provenance_fn fn, void *ctx,
			      capsim_diags *d);

/* Semantic checks of one entry that a schema cannot express (a node on
 * NVSwitch names its switch chip; heads divide the hidden size). label and
 * file/line place the messages. Returns the number of problems. */
int capsim_catalog_check_entry(capsim_kind_id k, const void *obj,
			       const char *file, long line, const char *label,
			       capsim_diags *d);

#endif
