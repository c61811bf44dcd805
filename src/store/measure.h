/* measure.h - imports into the store (store.h): runs of calibrate/'s
 * programs (JSON lines, calibrate/README.md) and parsed nccl-tests logs,
 * each one run in one transaction. Schema: docs/store.md. */
#ifndef CAPSIM_MEASURE_H
#define CAPSIM_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "store.h"

/* What one import stored, counted by record kind: power counts power-idle
 * and power-sustained records, power_duty the power-duty ones. */
typedef struct capsim_import_stats {
	int64_t run_id;
	size_t gemm, gemm_failed, copy, checks, power;
	size_t power_duty, nccl, pcie;
	size_t torch_launch, torch_step; /* calibrate/torch/gpt2_step.py, host_probe.py */
	size_t torch_host;               /* calibrate/torch/host_probe.py */
	size_t attention;                /* calibrate/torch/attn_probe.py: shapes timed */
	size_t attention_refused;        /* ... and shapes a backend refused (stored, with
					  * the error) */
} capsim_import_stats;

/* Import one JSON-lines file written by one of calibrate/'s programs
 * (capsim-calibrate-gemm, -pcie or -nccl, or calibrate/torch/gpt2_step.py,
 * host_probe.py or attn_probe.py)
 * into the database at db_path, creating it and its tables where absent and
 * upgrading an older database to this version in place; jsonl_path "-" is
 * standard input, named "standard input" in messages and runs.source. The
 * whole file goes in one transaction: every line is checked first (one JSON
 * object, each key once; its kind, the keys and types it needs, every field
 * within the bounds of docs/store.md's "Validation": a real UTC date, sizes,
 * times, rates and counts in range, text printable UTF-8 no longer than
 * query.h keeps; a median that matches its samples, rates that match sizes
 * and times), and any fault adds "file:line: field 'KEY': expected ...,
 * found ..." to d and leaves the database as it was, its schema version
 * included. A file whose SHA-256 is already stored is refused, and so is a
 * database newer than CAPSIM_STORE_SCHEMA. Returns 0, or -1 with the reason
 * in d. */
int capsim_measure_import(const char *jsonl_path, const char *db_path,
			  capsim_import_stats *out, capsim_diags *d);

/* 1 when s is "YYYY-MM-DD", a real day (leap years counted) of a year that
 * the store accepts (1990 to 2100), as --date and the machine lines want. */
int capsim_measure_is_day(const char *s);

/* The machine of a record-level import: NVML's GPU name ("NVIDIA H100 80GB
 * HBM3", or "unknown"), the program that measured ("nccl-tests
 * all_reduce_perf"), its date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, a real
 * day from 1990 to 2100, or words starting "unknown"),
 * ranks and nodes (0: unknown) and the launcher ("single-process", "mpi" or
 * NULL). The strings are the caller's. */
typedef struct capsim_measure_machine {
	const char *program, *date, *gpu, *launcher;
	int64_t ranks, nodes;
} capsim_measure_machine;

/* One collective at one size and placement, as the nccl table keeps it.
 * op is nccl-tests' name (all_reduce, all_gather, reduce_scatter, alltoall,
 * broadcast, sendrecv), dtype its type name (float, bfloat16, ...), redop
 * sum ... none, algo and proto "default" where NCCL chose. bytes is
 * nccl-tests' size; count is per rank and peer for all_gather,
 * reduce_scatter and alltoall. median_s must be the median of the
 * n_samples seconds of samples_s; algbw and busbw are computed by the store
 * (busbw with collective.h's capsim_busbw_factor). line: where in the source
 * it came from, for messages (0: nowhere in particular). Every pointer is
 * the caller's. */
typedef struct capsim_measure_nccl {
	long line;
	const char *op, *dtype, *redop, *algo, *proto;
	int64_t ranks, nodes, bytes, count, wrong;
	int in_place;
	double median_s;
	const double *samples_s;
	size_t n_samples;
} capsim_measure_nccl;

/* Import n records read from source (an nccl-tests log, whose SHA-256 of
 * its bytes, 64 hex digits, is sha256; "-" for standard input) as one run of
 * machine m, into the database at db_path, in one transaction and with no
 * file written but the database. As capsim_measure_import: a source whose
 * SHA-256 is stored is refused, the machine and every record are checked
 * (the same bounds and text rules) and any fault ("source:line: field 'KEY':
 * ...") leaves the database as it was. Returns 0, or -1 with the reasons in
 * d. */
int capsim_measure_import_nccl(const char *source, const char *sha256, const char *db_path,
			       const capsim_measure_machine *m, const capsim_measure_nccl *recs,
			       size_t n, capsim_import_stats *out, capsim_diags *d);

#endif
