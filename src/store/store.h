/* store.h - the store: capsim's one SQLite database of measurements (the
 * runs of calibrate/'s programs and imported nccl-tests logs, measure.h),
 * read back as plain C rows (query.h), and the results of batch sweeps
 * (results.h). This module alone speaks SQL; its schema, one table of
 * CREATE statements and one list of migrations, is in schema.c and
 * docs/store.md. Library code: it never prints; faults go to a capsim_diags
 * as "DB: ..." or "FILE:LINE: ...". */
#ifndef CAPSIM_STORE_H
#define CAPSIM_STORE_H

#include "diag.h"

/* the schema's version, kept in PRAGMA user_version: 1 calibrate/'s GEMM,
 * copy and power runs; 2 NCCL and PCIe; 3 PyTorch's launch and step rows;
 * 4 the results of sweeps; 5 the host's view of a step; 6 fused attention
 * (calibrate/torch/attn_probe.py) */
#define CAPSIM_STORE_SCHEMA 6

/* An open database. Opened for reading it is never modified, whatever its
 * version (an older one is read as it is); opened for writing it is created
 * where absent and upgraded in place to CAPSIM_STORE_SCHEMA. */
typedef struct capsim_store capsim_store;

enum { CAPSIM_STORE_READ = 0, CAPSIM_STORE_WRITE = 1 };

/* Open path. Returns 0 with *out set (close it with capsim_store_close), or
 * -1 with *out NULL and the reason in d: the file cannot be opened, is not
 * an SQLite database, or (for writing) is newer than CAPSIM_STORE_SCHEMA or
 * cannot be upgraded; an upgrade that fails leaves the file as it was. */
int capsim_store_open(const char *path, int mode, capsim_store **out, capsim_diags *d);

/* Close s (NULL is ignored). */
void capsim_store_close(capsim_store *s);

/* The schema version of s as opened (0 for a new, empty database). */
int capsim_store_version(const capsim_store *s);

#endif
