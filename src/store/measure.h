/* measure.h - the measurement store: runs of calibrate/'s programs (JSON
 * lines, calibrate/README.md) kept in an SQLite database, which the fit
 * reads. Schema: docs/user-guide.md ("Calibration"). */
#ifndef CAPSIM_MEASURE_H
#define CAPSIM_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"

/* the schema's version, kept in PRAGMA user_version */
#define CAPSIM_MEASURE_SCHEMA 3

/* What one import stored, counted by record kind: power counts power-idle
 * and power-sustained records, power_duty the power-duty ones. */
typedef struct capsim_import_stats {
	int64_t run_id;
	size_t gemm, gemm_failed, copy, checks, power;
	size_t power_duty, nccl, pcie;
	size_t torch_launch, torch_step; /* calibrate/torch/gpt2_step.py */
} capsim_import_stats;

/* Import one JSON-lines file written by one of calibrate/'s programs
 * (capsim-calibrate-gemm, -pcie or -nccl, or calibrate/torch/gpt2_step.py)
 * into the database at db_path, creating it and its tables where absent and
 * upgrading an older database to this version in place. The whole file goes in one transaction:
 * every line is checked first (its kind, the keys and types it needs,
 * positive sizes and times, a median that matches its samples, rates that
 * match sizes and times), and any fault adds "file:line: ..." to d and
 * leaves the database as it was, its schema version included. A file whose
 * SHA-256 is already stored is refused, and so is a database newer than
 * CAPSIM_MEASURE_SCHEMA. Returns 0, or -1 with the reason in d. */
int capsim_measure_import(const char *jsonl_path, const char *db_path,
			  capsim_import_stats *out, capsim_diags *d);

/* The same for JSON lines converted from another program's output
 * (source_path: an nccl-tests log): the run's identity, for refusing a
 * repeat, is the SHA-256 of source_path's bytes, and runs.source records
 * source_path; messages about lines name jsonl_path. */
int capsim_measure_import_converted(const char *jsonl_path, const char *source_path,
				    const char *db_path, capsim_import_stats *out,
				    capsim_diags *d);

#endif
