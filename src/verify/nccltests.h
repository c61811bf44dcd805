/* nccltests.h - reading what nccl-tests prints (all_reduce_perf and the
 * other *_perf programs of NVIDIA/nccl-tests): the parameter header, the
 * "Using devices" lines (one per rank), the column header, one row per
 * message size with the out-of-place and in-place time, algbw, busbw and
 * #wrong, and the "Out of bounds values" / "Avg bus bandwidth" trailer.
 *
 * Variants met in published logs are accepted: rows without the redop or
 * root column (older nccl-tests), an "error" column of floats instead of
 * "#wrong", "N/A" when validation is off, an in-place #wrong column left
 * out, NCCL INFO/WARN lines between the rows, and a label that a launcher
 * puts before every line (Slurm's "0: ", Open MPI's "[1,0]<stdout>:").
 * Units are nccl-tests' own: bytes, microseconds, GB/s (1e9 B/s). */
#ifndef CAPSIM_NCCLTESTS_H
#define CAPSIM_NCCLTESTS_H

#include <stddef.h>

#include "diag.h"

#define CAPSIM_NCCLTESTS_NAME_LEN 128

/* One message size. wrong_* is the #wrong count (or the older max error),
 * -1 for N/A or a column left out. */
typedef struct capsim_nccltests_row {
	double bytes;           /* nccl-tests' size */
	double count;           /* elements (per rank, as printed) */
	char type[16];          /* "float", "bfloat16", ... */
	char redop[16];         /* "sum", "none", ...; "" when the column is absent */
	int root;               /* -1: none or absent */
	double oop_time_us, oop_algbw_gb_per_s, oop_busbw_gb_per_s, oop_wrong;
	double ip_time_us, ip_algbw_gb_per_s, ip_busbw_gb_per_s, ip_wrong;
	long line;              /* 1-based line in the file */
} capsim_nccltests_row;

typedef struct capsim_nccltests_log {
	char file[1024];
	char sha256[65];        /* of the bytes parsed, 64 hex digits */
	/* the collective as a capsim_coll (nccl.h), or -1; op_from says where
	 * it was found: "test line", "command line", "--op" or "columns" */
	int op;
	const char *op_from;
	char program[32];       /* "all_reduce_perf" where named */
	int nthreads, ngpus;    /* from the header; 0 when absent */
	int validation;         /* -1 when absent */
	long header_line;       /* 0 when absent */
	int rank_lines;         /* "#  Rank  N ..." lines */
	int processes;          /* distinct (host, pid) among them */
	int hosts;              /* distinct hosts among them */
	char device[CAPSIM_NCCLTESTS_NAME_LEN]; /* rank 0's GPU name */
	int nranks;             /* rank lines, or --ranks when there are none */
	int has_redop, has_root; /* columns of the rows */
	capsim_nccltests_row *rows;
	size_t n_rows;
	double avg_busbw_gb_per_s; /* the trailer's figure */
	long oob_values;        /* "Out of bounds values : N", -1 when absent */
	long trailer_line;
	int warnings;           /* NCCL WARN lines seen */
} capsim_nccltests_log;

/* What the caller knows that a log may not say. op: a capsim_coll or -1;
 * ranks: 0 when unknown. */
typedef struct capsim_nccltests_hint {
	int op;
	int ranks;
} capsim_nccltests_hint;

/* Parse a log file into *out (zeroed first; free with capsim_nccltests_free,
 * also after a failure); path "-" is standard input, named "standard input"
 * in messages and out->file. Every fault adds "file:line: FIELD: expected X,
 * found Y" to d: an unreadable file or one over 8 MiB, more than 4096 data
 * rows, no data rows, a row with too few fields, a field that is not a number or out of its bounds
 * (times 0.001 us to 1e9 us, sizes and counts whole and at most 2^50,
 * bandwidths 0 to 1e9 GB/s, #wrong 0 to 2^50, root -1 to 2^24 - 1), sizes
 * that do not increase (within one data type), a header whose nThread x
 * nGpus is over 2^24, a rank's line twice or ranks missing from 0..N-1, a GPU
 * name over 127 bytes or with control characters, a header, rank line or
 * row over 1023 bytes, a missing trailer (the run died), no rank count, an
 * unknown collective. Returns 0 or -1. */
int capsim_nccltests_parse_file(const char *path, const capsim_nccltests_hint *hint,
				capsim_nccltests_log *out, capsim_diags *d);

/* The same for text in memory; name is used in messages. */
int capsim_nccltests_parse_memory(const char *buf, size_t len, const char *name,
				  const capsim_nccltests_hint *hint,
				  capsim_nccltests_log *out, capsim_diags *d);

void capsim_nccltests_free(capsim_nccltests_log *log);

/* Size in bytes of one element of an nccl-tests data type ("float": 4,
 * "bfloat16": 2, "f8e4m3": 1), or 0 if unknown. */
int capsim_nccltests_type_size(const char *type);

#endif
