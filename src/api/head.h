/* head.h - what every JSON object capsim prints starts with (the schema and
 * program versions, the inputs with their digests, the profiles applied and
 * the seed): one writer for the capsim command and the library, so that
 * `capsim run --json` and capsim_res_json agree key for key. */
#ifndef CAPSIM_API_HEAD_H
#define CAPSIM_API_HEAD_H

#include <jansson.h>

#include "catalog.h"
#include "spec.h"

/* A new JSON object (the caller's): schema_version, capsim_version (version),
 * inputs (s's file, then every catalog file, each with its SHA-256) and, with
 * s, hardware_profile, calibrated_profile, the groups' where s has several,
 * and seed. cat and s may be NULL. */
json_t *capsim_api_json_head(const capsim_catalog *cat, const capsim_scenario *s,
			     const char *version);

#endif
