/* xml.h - safe reading of input XML and validation against the embedded schemas.
 *
 * Debian 12's libxml2 2.9.14 has no entity-amplification limit, so documents
 * with a DOCTYPE are refused outright, input is capped in size before parsing,
 * parsing uses XML_PARSE_NONET (never NOENT, DTDLOAD or HUGE), and the external
 * entity loader is replaced by one that serves only the embedded schemas. */
#ifndef CAPSIM_XML_H
#define CAPSIM_XML_H

#include <stddef.h>

#include <libxml/tree.h>

#include "diag.h"

/* Largest input file accepted, in bytes. */
#define CAPSIM_XML_MAX_BYTES (8u << 20)

/* Most attributes on one element, and most elements in one file: counted
 * in one pass over the bytes before parsing, and refused beyond with the
 * line of the element and the limit (libxml2 appends each attribute by
 * walking the element's list, and checks each against those before it, so
 * an element of n attributes costs n^2; every shipped file has at most 20
 * attributes on an element and 300 elements). */
#define CAPSIM_XML_MAX_ATTRS 256
#define CAPSIM_XML_MAX_ELEMENTS 20000

/* Call once before any other xml function (idempotent). */
void capsim_xml_init(void);

/* Read and parse path. Returns the document (caller frees with xmlFreeDoc) or
 * NULL after adding the reasons to d. sha256, when not NULL, receives the
 * SHA-256 of the file's bytes as 64 hex digits. */
xmlDoc *capsim_xml_read(const char *path, char *sha256, capsim_diags *d);

/* The bytes of path, read once (a pipe or FIFO too), capped as above:
 * malloc'd (free it), *len set; NULL after the reason is added to d. */
char *capsim_xml_slurp(const char *path, size_t *len, capsim_diags *d);

/* The same for a buffer; name is used in messages. */
xmlDoc *capsim_xml_read_memory(const char *buf, size_t len, const char *name,
			       capsim_diags *d);

/* Validate doc against schema ("hardware", "model", "scenario",
 * "bibliography", "profile"). Returns 0 when valid, else -1 after adding every schema
 * error to d as file:line messages. */
int capsim_xml_validate(xmlDoc *doc, const char *schema, const char *file,
			capsim_diags *d);

/* Text of an embedded file (e.g. "scenario.xsd"), or NULL. */
const char *capsim_embedded_file(const char *name, size_t *len);

#endif
