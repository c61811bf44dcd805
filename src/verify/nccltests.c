/* nccltests.c - the nccl-tests output parser (nccltests.h): one pass over
 * the lines, each classified as a comment (header, rank line, column
 * header, trailer), a data row (its first field a whole number) or noise
 * (NCCL's own INFO and WARN lines, a shell prompt), then the checks that
 * need the whole file (rows present, trailer present, ranks known). */
#include "nccltests.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "hmap.h"
#include "nccl.h"
#include "sha256.h"
#include "xalloc.h"

#define MAX_TOKENS 40
#define MAX_ERRORS 20
/* A log of one nccl-tests run is kilobytes (a row a size, tens of sizes; a
 * rank line a GPU), a few hundred KB with NCCL's INFO lines: a log over
 * MAX_LOG_BYTES or with more than MAX_ROWS data rows (each is one
 * collective simulated) is refused, the rows at the first past the limit. */
#define MAX_LOG_BYTES (8L << 20)
#define MAX_ROWS 4096
#define HOST_LEN 64
#define LINE_MAX_BYTES 1024     /* a line the parser reads whole */

/* what a row may hold: nccl-tests prints times in microseconds with two
 * decimals, so 0.001 us is below anything it can measure and 1e9 us
 * (1000 s) above any one collective; sizes and counts up to 2^50 (1 PiB) */
#define TIME_US_MIN 1e-3
#define TIME_US_MAX 1e9
#define GB_PER_S_MAX 1e9
#define SIZE_MAX_BYTES 1125899906842624.0 /* 2^50 */

/* what standard input ("-") is called in messages */
#define STDIN_NAME "standard input"

typedef struct proc {
	char host[HOST_LEN];
	long pid;
} proc;

typedef struct parser {
	const char *name;
	capsim_nccltests_log *log;
	capsim_diags *d;
	long line;
	int errors;
	int cols_known, has_ip_wrong;
	size_t cap;
	proc *procs;
	size_t n_procs, cap_procs;
	char (*hosts)[HOST_LEN];
	size_t n_hosts, cap_hosts;
	capsim_hmap host_index, proc_index; /* hash -> index into hosts, procs */
	int stop;               /* past a limit: read no further */
	long op_line;           /* where the program was named */
	int after_trailer;
	int order_reported;     /* one "sizes do not increase" is enough */
	char last_type[16], last_redop[16];
	double last_bytes;
	long last_line;
	unsigned char *rank_seen; /* a bit by rank number: its line was read */
	size_t rank_bytes;
	long max_rank, max_rank_line; /* the highest rank number, and its line */
} parser;

static void fault(parser *p, long line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* add one error at line of the file, up to MAX_ERRORS of them */
static void fault(parser *p, long line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	p->errors++;
	if (p->errors > MAX_ERRORS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (p->errors == MAX_ERRORS)
		capsim_diags_add(p->d, p->name, line, "%s (further errors not shown)", msg);
	else
		capsim_diags_add(p->d, p->name, line, "%s", msg);
}

/* A token of the log as a message shows it: quoted, at most 40 bytes,
 * control characters as '?'. A value, so that printable(s).s lasts the
 * whole call. */
typedef struct shown {
	char s[48];
} shown;

static shown printable(const char *text)
{
	shown out;
	size_t o = 0;
	out.s[o++] = '\'';
	for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
		if (o == 41) {
			memcpy(out.s + o, "...", 3);
			o += 3;
			break;
		}
		out.s[o++] = *c < 0x20 || *c == 0x7f ? '?' : (char)*c;
	}
	out.s[o++] = '\'';
	out.s[o] = '\0';
	return out;
}

/* split s (modified) at blanks into at most max tokens; returns the count */
static int tokenize(char *s, char **tok, int max)
{
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(s, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return max + 1;
		tok[n++] = t;
	}
	return n;
}

/* the rest of a line after a launcher's label: Slurm's "  0: ", Open MPI's
 * "[1,0]<stdout>:" */
static char *strip_label(char *s)
{
	char *q = s;
	while (*q == ' ' || *q == '\t')
		q++;
	if (isdigit((unsigned char)*q)) {
		char *r = q;
		while (isdigit((unsigned char)*r))
			r++;
		if (*r == ':' && (r[1] == ' ' || r[1] == '\t' || r[1] == '\0'))
			return r[1] ? r + 2 : r + 1;
		return s;
	}
	if (*q == '[') {
		char *r = strchr(q, ']');
		if (r && (strncmp(r + 1, "<stdout>:", 9) == 0 || strncmp(r + 1, "<stderr>:", 9) == 0))
			return r + 10;
	}
	return s;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

int capsim_nccltests_type_size(const char *type)
{
	static const struct { const char *name; int size; } types[] = {
		{ "int8", 1 }, { "uint8", 1 }, { "int32", 4 }, { "uint32", 4 },
		{ "int64", 8 }, { "uint64", 8 }, { "half", 2 }, { "float", 4 },
		{ "double", 8 }, { "bfloat16", 2 }, { "f8e4m3", 1 }, { "f8e5m2", 1 },
	};
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strcmp(type, types[i].name) == 0)
			return types[i].size;
	return 0;
}

/* ---- naming the collective ---------------------------------------------- */

/* nccl-tests' program for each capsim_coll, and the programs capsim has no
 * model of (op -1) */
static const struct { const char *prog; int op; } programs[] = {
	{ "all_reduce", CAPSIM_COLL_ALLREDUCE },
	{ "all_gather", CAPSIM_COLL_ALLGATHER },
	{ "reduce_scatter", CAPSIM_COLL_REDUCESCATTER },
	{ "broadcast", CAPSIM_COLL_BROADCAST },
	{ "reduce", CAPSIM_COLL_REDUCE },
	{ "alltoall", CAPSIM_COLL_ALLTOALL },
	{ "sendrecv", CAPSIM_COLL_SENDRECV },
	{ "gather", -1 },
	{ "scatter", -1 },
	{ "hypercube", -1 },
};

/* index into programs[] of the first "NAME_perf" word in s, or -1 */
static int find_program(const char *s)
{
	for (const char *q = strstr(s, "_perf"); q; q = strstr(q + 1, "_perf")) {
		char after = q[5];
		if (isalnum((unsigned char)after) || after == '_')
			continue;
		const char *b = q;
		while (b > s && (islower((unsigned char)b[-1]) || b[-1] == '_'))
			b--;
		size_t len = (size_t)(q - b);
		for (size_t i = 0; i < sizeof programs / sizeof programs[0]; i++)
			if (strlen(programs[i].prog) == len && strncmp(b, programs[i].prog, len) == 0)
				return (int)i;
	}
	return -1;
}

/* a program named on line: the first one counts; another one is an error */
static void note_program(parser *p, int idx, const char *from)
{
	capsim_nccltests_log *g = p->log;
	char name[32];
	snprintf(name, sizeof name, "%s_perf", programs[idx].prog);
	if (!g->program[0]) {
		snprintf(g->program, sizeof g->program, "%s", name);
		g->op = programs[idx].op;
		g->op_from = from;
		p->op_line = p->line;
		return;
	}
	if (strcmp(g->program, name) != 0)
		fault(p, p->line, "program: expected one nccl-tests program per log (%s on line %ld), found %s",
		      g->program, p->op_line, name);
}

/* ---- comment lines -------------------------------------------------------- */

/* more ranks than any log could describe (the measurement store's limit) */
#define MAX_RANKS (1 << 24)

/* a count from the header: its value, or -1 for anything but a decimal
 * integer from 0 to MAX_RANKS */
static int header_count(const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	return end == s || *end || errno || v < 0 || v > MAX_RANKS ? -1 : (int)v;
}

/* "# nThread 1 nGpus 8 minBytes ... validation: 1 graph: 0" */
static void header(parser *p, char **tok, int n)
{
	capsim_nccltests_log *g = p->log;
	g->header_line = p->line;
	for (int i = 0; i + 1 < n; i++) {
		if (strcmp(tok[i], "nThread") == 0)
			g->nthreads = header_count(tok[i + 1]);
		else if (strcmp(tok[i], "nGpus") == 0)
			g->ngpus = header_count(tok[i + 1]);
		else if (strcmp(tok[i], "validation:") == 0)
			g->validation = header_count(tok[i + 1]);
	}
	if (g->nthreads < 1 || g->ngpus < 1)
		fault(p, p->line, "header: expected 'nThread N nGpus M' with N, M from 1 to %d, "
		      "found nThread %d nGpus %d (-1: not such a number)", MAX_RANKS,
		      g->nthreads, g->ngpus);
	else if ((long long)g->nthreads * g->ngpus > MAX_RANKS) /* each <= 2^24: no overflow */
		fault(p, p->line, "header: expected nThread x nGpus up to %d GPUs a process, found "
		      "%d x %d", MAX_RANKS, g->nthreads, g->ngpus);
}

/* FNV-1a of s, then of the 8 bytes of x */
static uint64_t hash_of(const char *s, long x)
{
	uint64_t h = 14695981039346656037ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	for (int i = 0; i < 8; i++)
		h = (h ^ (((uint64_t)x >> (8 * i)) & 0xff)) * 1099511628211ull;
	return h;
}

/* The slot of an entry in index: key is its hash, is(i) whether entry i is
 * it. Keys of other entries that share the hash are followed by rehashing,
 * so the lookup is exact. Returns the entry's index, or -1 with *key the
 * free key to put it under. */
static int32_t find_entry(const capsim_hmap *index, uint64_t *key, const parser *p,
			  int (*is)(const parser *p, int32_t i, const void *what), const void *what)
{
	for (;;) {
		int32_t i = capsim_hmap_get(index, *key);
		if (i < 0 || is(p, i, what))
			return i;
		*key = *key * 6364136223846793005ull + 1442695040888963407ull;
	}
}

static int is_host(const parser *p, int32_t i, const void *what)
{
	return strcmp(p->hosts[i], what) == 0;
}

static int is_proc(const parser *p, int32_t i, const void *what)
{
	const proc *w = what;
	return p->procs[i].pid == w->pid && strcmp(p->procs[i].host, w->host) == 0;
}

static void add_host(parser *p, const char *host)
{
	char h[HOST_LEN];
	snprintf(h, sizeof h, "%s", host);
	uint64_t key = hash_of(h, 0);
	if (find_entry(&p->host_index, &key, p, is_host, h) >= 0)
		return;
	capsim_hmap_set(&p->host_index, key, (int32_t)p->n_hosts);
	if (p->n_hosts == p->cap_hosts) {
		p->cap_hosts = p->cap_hosts ? 2 * p->cap_hosts : 16;
		p->hosts = capsim_xrealloc(p->hosts, p->cap_hosts * sizeof *p->hosts);
	}
	snprintf(p->hosts[p->n_hosts++], HOST_LEN, "%s", host);
}

static void add_proc(parser *p, const char *host, long pid)
{
	proc w = { .pid = pid };
	snprintf(w.host, sizeof w.host, "%s", host);
	uint64_t key = hash_of(w.host, pid);
	if (find_entry(&p->proc_index, &key, p, is_proc, &w) >= 0)
		return;
	capsim_hmap_set(&p->proc_index, key, (int32_t)p->n_procs);
	if (p->n_procs == p->cap_procs) {
		p->cap_procs = p->cap_procs ? 2 * p->cap_procs : 16;
		p->procs = capsim_xrealloc(p->procs, p->cap_procs * sizeof *p->procs);
	}
	snprintf(p->procs[p->n_procs].host, HOST_LEN, "%s", host);
	p->procs[p->n_procs++].pid = pid;
}

/* The rank number of a rank line: 0 to MAX_RANKS - 1 and not seen before;
 * returns 0, or -1 after a fault. */
static int rank_number(parser *p, const char *s)
{
	char *end;
	errno = 0;
	long r = strtol(s, &end, 10);
	if (end == s || *end || errno || r < 0 || r >= MAX_RANKS) {
		fault(p, p->line, "rank line: expected a rank from 0 to %d, found %s", MAX_RANKS - 1,
		      printable(s).s);
		return -1;
	}
	size_t byte = (size_t)r / 8;
	if (byte >= p->rank_bytes) {
		size_t want = p->rank_bytes ? 2 * p->rank_bytes : 64;
		while (want <= byte)
			want *= 2;
		p->rank_seen = capsim_xrealloc(p->rank_seen, want);
		memset(p->rank_seen + p->rank_bytes, 0, want - p->rank_bytes);
		p->rank_bytes = want;
	}
	unsigned char bit = (unsigned char)(1u << (r % 8));
	if (p->rank_seen[byte] & bit) {
		fault(p, p->line, "rank line: expected one line for each rank, found rank %ld again",
		      r);
		return -1;
	}
	p->rank_seen[byte] |= bit;
	if (r > p->max_rank || p->log->rank_lines == 0) {
		p->max_rank = r;
		p->max_rank_line = p->line;
	}
	return 0;
}

/* rank 0's GPU name from the tokens after "device D [BUS]": at most the
 * log's field, no control characters */
static void device_name(parser *p, char **tok, int first, int n)
{
	capsim_nccltests_log *g = p->log;
	char name[LINE_MAX_BYTES] = "";
	for (int i = first; i < n; i++) {
		size_t len = strlen(name);
		snprintf(name + len, sizeof name - len, "%s%s", len ? " " : "", tok[i]);
	}
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		if (*c < 0x20 || *c == 0x7f) {
			fault(p, p->line, "rank line: expected a GPU name of printable text, found a "
			      "control character (0x%02x)", *c);
			return;
		}
	if (strlen(name) >= sizeof g->device) {
		fault(p, p->line, "rank line: expected a GPU name of at most %zu bytes, found %zu",
		      sizeof g->device - 1, strlen(name));
		return;
	}
	snprintf(g->device, sizeof g->device, "%s", name);
}

/* "#  Rank  0 Group  0 Pid 295203 on node005 device  0 [0x18] NVIDIA H100 80GB HBM3"
 * (older: no Group; the host may be empty) */
static void rank_line(parser *p, char **tok, int n)
{
	capsim_nccltests_log *g = p->log;
	const char *host = "";
	long pid = -1;
	int dev = -1;
	for (int i = 1; i + 1 < n; i++) {
		if (strcmp(tok[i], "Pid") == 0)
			pid = strtol(tok[i + 1], NULL, 10);
		else if (strcmp(tok[i], "on") == 0 && strcmp(tok[i + 1], "device") != 0)
			host = tok[i + 1];
		else if (strcmp(tok[i], "device") == 0) {
			dev = i + 1;
			break;
		}
	}
	if (dev < 0) {
		fault(p, p->line, "rank line: expected '# Rank N ... on HOST device D [BUS] NAME', found no 'device'");
		return;
	}
	if (rank_number(p, tok[1]) < 0)
		return;
	add_host(p, host);
	add_proc(p, host, pid);
	if (g->rank_lines++ == 0) {
		int first = dev + 1;
		if (first < n && tok[first][0] == '[')
			first++;
		device_name(p, tok, first, n);
	}
}

/* "#  size  count  type  redop  root  time  algbw  busbw #wrong  time ..." */
static void column_header(parser *p, char **tok, int n)
{
	capsim_nccltests_log *g = p->log;
	int times = 0, wrongs = 0;
	g->has_redop = g->has_root = 0;
	for (int i = 0; i < n; i++) {
		if (strcmp(tok[i], "redop") == 0)
			g->has_redop = 1;
		else if (strcmp(tok[i], "root") == 0)
			g->has_root = 1;
		else if (strcmp(tok[i], "time") == 0)
			times++;
		else if (strcmp(tok[i], "#wrong") == 0 || strcmp(tok[i], "error") == 0)
			wrongs++;
	}
	if (times != 2 || wrongs < 1) {
		fault(p, p->line, "column header: expected out-of-place and in-place 'time algbw busbw #wrong', found %d time and %d #wrong columns",
		      times, wrongs);
		return;
	}
	p->has_ip_wrong = wrongs >= 2;
	p->cols_known = 1;
}

static void trailer_avg(parser *p, const char *s)
{
	const char *colon = strchr(s, ':');
	char *end;
	double v = colon ? strtod(colon + 1, &end) : 0;
	if (!colon || end == colon + 1 || !isfinite(v)) {
		fault(p, p->line, "trailer: expected '# Avg bus bandwidth : X', found %s", printable(s).s);
		return;
	}
	p->log->avg_busbw_gb_per_s = v;
	p->log->trailer_line = p->line;
	p->after_trailer = 1;
}

static void comment(parser *p, char *s)
{
	char copy[1024];
	char *tok[MAX_TOKENS];
	snprintf(copy, sizeof copy, "%s", s + 1);
	int n = tokenize(copy, tok, MAX_TOKENS);
	if (n > MAX_TOKENS)
		n = MAX_TOKENS;
	if (n == 0)
		return;
	if (strcmp(tok[0], "nThread") == 0)
		header(p, tok, n);
	else if (strcmp(tok[0], "Rank") == 0)
		rank_line(p, tok, n);
	else if (strcmp(tok[0], "size") == 0 && n > 1 && strcmp(tok[1], "count") == 0)
		column_header(p, tok, n);
	else if (strcmp(tok[0], "Avg") == 0 && n > 2 && strcmp(tok[1], "bus") == 0)
		trailer_avg(p, s);
	else if (strcmp(tok[0], "Out") == 0 && n > 5 && strcmp(tok[3], "values") == 0)
		p->log->oob_values = strtol(tok[5], NULL, 10);
	else if (n >= 4 && strcmp(tok[0], "Collective") == 0 && strcmp(tok[2], "starting:") == 0) {
		int idx = find_program(tok[3]);
		if (idx >= 0)
			note_program(p, idx, "test line");
	}
}

/* ---- data rows ------------------------------------------------------------ */

static int number(parser *p, const char *field, const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*end != '\0' || end == s || errno == ERANGE || !isfinite(v) || v < 0) {
		fault(p, p->line, "%s: expected a number, found %s", field, printable(s).s);
		return -1;
	}
	*out = v;
	return 0;
}

/* a number from lo to hi, in unit ("" for none) */
static int bounded(parser *p, const char *field, const char *s, double lo, double hi,
		   const char *unit, double *out)
{
	if (number(p, field, s, out) < 0)
		return -1;
	if (!(*out >= lo && *out <= hi)) {
		fault(p, p->line, "%s: expected %g to %g%s, found %s%s", field, lo, hi, unit, s, unit);
		return -1;
	}
	return 0;
}

/* one placement's time, algbw and busbw */
static int placement(parser *p, const char *where, char **tok, double *time_us,
		     double *algbw, double *busbw)
{
	char field[48];
	int bad = 0;
	snprintf(field, sizeof field, "%s time", where);
	bad |= bounded(p, field, tok[0], TIME_US_MIN, TIME_US_MAX, " us", time_us);
	snprintf(field, sizeof field, "%s algbw", where);
	bad |= bounded(p, field, tok[1], 0, GB_PER_S_MAX, " GB/s", algbw);
	snprintf(field, sizeof field, "%s busbw", where);
	bad |= bounded(p, field, tok[2], 0, GB_PER_S_MAX, " GB/s", busbw);
	return bad;
}

static int wrong(parser *p, const char *field, const char *s, double *out)
{
	if (strcmp(s, "N/A") == 0) {
		*out = -1;
		return 0;
	}
	return bounded(p, field, s, 0, SIZE_MAX_BYTES, "", out);
}

/* columns the rows must have, from the column header; without one, the
 * usual layouts by their field count (13: redop and root; 12: redop, as
 * nccl-tests printed before the root column; 11: neither) */
static int layout(parser *p, int n)
{
	capsim_nccltests_log *g = p->log;
	if (!p->cols_known) {
		p->cols_known = 1;
		p->has_ip_wrong = 1;
		g->has_redop = n >= 12;
		g->has_root = n >= 13;
	}
	return 3 + g->has_redop + g->has_root + 7 + p->has_ip_wrong;
}

static void check_order(parser *p, const capsim_nccltests_row *r)
{
	int same_block = p->last_line > 0 && strcmp(r->type, p->last_type) == 0 &&
			 strcmp(r->redop, p->last_redop) == 0;
	if (same_block && !(r->bytes > p->last_bytes) && !p->order_reported) {
		fault(p, p->line, "size: expected more than %.0f (line %ld), as sizes increase within a run, found %.0f (several runs mixed in one log?)",
		      p->last_bytes, p->last_line, r->bytes);
		p->order_reported = 1;
	}
	snprintf(p->last_type, sizeof p->last_type, "%s", r->type);
	snprintf(p->last_redop, sizeof p->last_redop, "%s", r->redop);
	p->last_bytes = r->bytes;
	p->last_line = p->line;
}

/* a row's size and count: whole numbers from 0 to 2^50 */
static int row_sizes(parser *p, char **tok, capsim_nccltests_row *r)
{
	int bad = 0;
	bad |= bounded(p, "size", tok[0], 0, SIZE_MAX_BYTES, " bytes", &r->bytes);
	bad |= bounded(p, "count", tok[1], 0, SIZE_MAX_BYTES, "", &r->count);
	if (!bad && (r->bytes != floor(r->bytes) || r->count != floor(r->count))) {
		int size_bad = r->bytes != floor(r->bytes);
		fault(p, p->line, "%s: expected a whole number, found %s", size_bad ? "size" : "count",
		      printable(size_bad ? tok[0] : tok[1]).s);
		bad = -1;
	}
	return bad;
}

/* a row's type, and its redop and root where the columns have them, from
 * tok[*i] on; *i moves past them */
static int row_names(parser *p, char **tok, int *i, capsim_nccltests_row *r)
{
	capsim_nccltests_log *g = p->log;
	int bad = 0;
	const char *type = tok[(*i)++];
	if (capsim_nccltests_type_size(type) == 0) {
		fault(p, p->line, "type: expected an nccl-tests data type (float, half, bfloat16, ...), found %s",
		      printable(type).s);
		bad = -1;
	}
	snprintf(r->type, sizeof r->type, "%s", type);
	if (g->has_redop) {
		const char *redop = tok[(*i)++];
		if (strlen(redop) >= sizeof r->redop) {
			fault(p, p->line, "redop: expected an nccl-tests reduction (sum, prod, max, "
			      "min, avg, none), found %s", printable(redop).s);
			bad = -1;
		}
		snprintf(r->redop, sizeof r->redop, "%s", redop);
	}
	if (g->has_root) {
		const char *root = tok[(*i)++];
		char *end;
		errno = 0;
		long v = strtol(root, &end, 10);
		if (*end != '\0' || end == root || errno || v < -1 || v >= MAX_RANKS) {
			fault(p, p->line, "root: expected -1 or a rank from 0 to %d, found %s",
			      MAX_RANKS - 1, printable(root).s);
			bad = -1;
		} else {
			r->root = (int)v;
		}
	}
	return bad;
}

static void data_row(parser *p, char *s)
{
	capsim_nccltests_log *g = p->log;
	char *tok[MAX_TOKENS];
	int n = tokenize(s, tok, MAX_TOKENS);
	int want = layout(p, n);
	if (p->after_trailer) {
		fault(p, p->line, "row: expected the end of the run after its trailer (line %ld), found another data row: one nccl-tests run per log",
		      g->trailer_line);
		return;
	}
	if (n != want) {
		fault(p, p->line, "row: expected %d fields (size count type%s%s, then time algbw busbw #wrong out-of-place and in-place), found %d%s",
		      want, g->has_redop ? " redop" : "", g->has_root ? " root" : "",
		      n > MAX_TOKENS ? MAX_TOKENS + 1 : n, n < want ? " (a truncated row)" : "");
		return;
	}
	capsim_nccltests_row r;
	memset(&r, 0, sizeof r);
	r.line = p->line;
	r.root = -1;
	int bad = row_sizes(p, tok, &r);
	int i = 2; /* past size and count */
	bad |= row_names(p, tok, &i, &r);
	bad |= placement(p, "out-of-place", tok + i, &r.oop_time_us, &r.oop_algbw_gb_per_s,
			 &r.oop_busbw_gb_per_s);
	i += 3;
	bad |= wrong(p, "out-of-place #wrong", tok[i++], &r.oop_wrong);
	bad |= placement(p, "in-place", tok + i, &r.ip_time_us, &r.ip_algbw_gb_per_s,
			 &r.ip_busbw_gb_per_s);
	i += 3;
	r.ip_wrong = -1;
	if (p->has_ip_wrong)
		bad |= wrong(p, "in-place #wrong", tok[i++], &r.ip_wrong);
	if (bad)
		return;
	if (g->n_rows == MAX_ROWS) {
		fault(p, p->line, "rows: expected at most %d data rows in a log (one nccl-tests run "
		      "prints tens), found more; the rest of the log is not read", MAX_ROWS);
		p->stop = 1;
		return;
	}
	check_order(p, &r);
	if (g->n_rows == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 32;
		g->rows = capsim_xrealloc(g->rows, p->cap * sizeof *g->rows);
	}
	g->rows[g->n_rows++] = r;
}

/* ---- the whole file ------------------------------------------------------- */

/* Read one line (modified); cut says that it was longer than the buffer
 * holding raw, which is refused for a line the parser reads (a comment or a
 * row) and ignored for noise. */
static void one_line(parser *p, char *raw, size_t full_len, int cut)
{
	size_t len = strlen(raw);
	while (len && (raw[len - 1] == '\r' || raw[len - 1] == ' ' || raw[len - 1] == '\t'))
		raw[--len] = '\0';
	char *s = strip_label(raw);
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0')
		return;
	if (cut && (*s == '#' || isdigit((unsigned char)*s))) {
		fault(p, p->line, "line: expected at most %d bytes in a header, rank line or row, "
		      "found %zu", LINE_MAX_BYTES - 1, full_len);
		return;
	}
	int prog = find_program(s);
	if (prog >= 0 && !strstr(s, "Collective test"))
		note_program(p, prog, "command line");
	if (*s == '#') {
		comment(p, s);
		return;
	}
	char first[64];
	size_t k = strcspn(s, " \t");
	snprintf(first, sizeof first, "%.*s", (int)(k < sizeof first ? k : sizeof first - 1), s);
	if (all_digits(first)) {
		char copy[1024];
		snprintf(copy, sizeof copy, "%s", s);
		data_row(p, copy);
	} else if (strstr(s, "NCCL WARN")) {
		p->log->warnings++;
	}
}

/* the collective from the first row's columns: reductions with count x
 * type size = size are all-reduce, with count x ranks x type size = size
 * reduce-scatter; a root makes it reduce or broadcast; "none" with the
 * gathered count is all-gather or all-to-all, which columns cannot tell */
static int op_from_columns(const capsim_nccltests_log *g)
{
	const capsim_nccltests_row *r = &g->rows[0];
	double per = r->count * capsim_nccltests_type_size(r->type);
	int reduces = g->has_redop && strcmp(r->redop, "none") != 0;
	if (r->root >= 0)
		return reduces ? CAPSIM_COLL_REDUCE : CAPSIM_COLL_BROADCAST;
	if (reduces && per == r->bytes)
		return CAPSIM_COLL_ALLREDUCE;
	if (reduces && g->nranks > 0 && per * g->nranks == r->bytes)
		return CAPSIM_COLL_REDUCESCATTER;
	return -1;
}

static void finish_ranks(parser *p, const capsim_nccltests_hint *h)
{
	capsim_nccltests_log *g = p->log;
	g->hosts = (int)p->n_hosts;
	g->processes = (int)p->n_procs;
	int hint = h ? h->ranks : 0;
	if (g->rank_lines > 0) {
		g->nranks = g->rank_lines;
		if (p->max_rank + 1 != g->rank_lines)
			fault(p, p->max_rank_line, "rank line: expected ranks 0 to %d, one line each, "
			      "found rank %ld (some ranks have no line)", g->rank_lines - 1, p->max_rank);
		if (hint > 0 && hint != g->rank_lines)
			fault(p, p->line, "ranks: expected --ranks %d to match the log, found %d rank lines",
			      hint, g->rank_lines);
	} else if (hint > 0) {
		g->nranks = hint;
	} else if (g->nthreads > 0 && g->ngpus > 0) {
		/* one process, as without MPI; the header's counts are the log's
		 * word, so their product was checked (header) before it becomes a
		 * count */
		long long n = (long long)g->nthreads * g->ngpus;
		if (n <= MAX_RANKS)
			g->nranks = (int)n;
	} else {
		fault(p, p->line, "ranks: expected '#  Rank N ... device D' lines or --ranks N, found neither");
	}
}

static void finish_op(parser *p, const capsim_nccltests_hint *h)
{
	capsim_nccltests_log *g = p->log;
	int hint = h ? h->op : -1;
	if (g->program[0] && g->op < 0) {
		fault(p, p->op_line, "program: expected a collective capsim models (all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv), found %s",
		      g->program);
		return;
	}
	if (hint >= 0) {
		int cols = g->n_rows ? op_from_columns(g) : -1;
		if (g->op >= 0 && g->op != hint)
			fault(p, p->op_line, "program: expected %s as --op says, found %s",
			      capsim_coll_names[hint], g->program);
		else if (g->op < 0 && cols >= 0 && cols != hint)
			fault(p, g->rows[0].line, "columns: expected %s's as --op says, found %s's (redop %s, root %d, count %.0f for size %.0f)",
			      capsim_coll_names[hint], capsim_coll_names[cols], g->rows[0].redop,
			      g->rows[0].root, g->rows[0].count, g->rows[0].bytes);
		g->op = hint;
		g->op_from = "--op";
		return;
	}
	if (g->op >= 0 || g->n_rows == 0)
		return;
	g->op = op_from_columns(g);
	g->op_from = "columns";
	if (g->op < 0)
		fault(p, g->rows[0].line, "collective: expected a *_perf command line in the log or --op, found none (the columns do not tell which)");
}

static void finish(parser *p, const capsim_nccltests_hint *h)
{
	capsim_nccltests_log *g = p->log;
	if (g->n_rows == 0 && p->errors == 0)
		fault(p, p->line, "rows: expected data rows (size count type ... busbw #wrong), found none");
	if (!g->trailer_line)
		fault(p, p->line, "trailer: expected '# Avg bus bandwidth : X' after the rows, found the end of the file (the run died or the log was cut)");
	finish_ranks(p, h);
	finish_op(p, h);
}

int capsim_nccltests_parse_memory(const char *buf, size_t len, const char *name,
				  const capsim_nccltests_hint *hint,
				  capsim_nccltests_log *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	snprintf(out->file, sizeof out->file, "%s", name);
	capsim_sha256_hex(buf, len, out->sha256);
	out->op = -1;
	out->validation = -1;
	out->oob_values = -1;
	parser p;
	memset(&p, 0, sizeof p);
	p.name = name;
	p.log = out;
	p.d = d;
	if (len > (size_t)MAX_LOG_BYTES) {
		capsim_diags_add(d, name, 0, "expected an nccl-tests log of at most %ld MiB (one run's "
				 "log is kilobytes), found %zu bytes", MAX_LOG_BYTES >> 20, len);
		return -1;
	}
	const char *s = buf, *end = buf + len;
	char line[LINE_MAX_BYTES];
	while (s < end && !p.stop) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		p.line++;
		if (memchr(s, '\0', n)) {
			fault(&p, p.line, "line: expected text, found a NUL byte (not an nccl-tests log?)");
			break;
		}
		/* blanks at either end say nothing: only the rest must fit */
		const char *a = s, *b = s + n;
		while (a < b && (*a == ' ' || *a == '\t'))
			a++;
		while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r'))
			b--;
		size_t kept = (size_t)(b - a);
		snprintf(line, sizeof line, "%.*s", (int)(kept < sizeof line ? kept : sizeof line - 1), a);
		one_line(&p, line, kept, kept >= sizeof line);
		s += n + (nl ? 1 : 0);
	}
	if (!p.stop)
		finish(&p, hint);
	free(p.procs);
	free(p.hosts);
	capsim_hmap_free(&p.host_index);
	capsim_hmap_free(&p.proc_index);
	free(p.rank_seen);
	return p.errors ? -1 : 0;
}

/* up to MAX_LOG_BYTES + 1 bytes of f, grown as they come (a log is
 * usually kilobytes); NULL after a read error */
static char *read_log(FILE *f, size_t *len)
{
	size_t cap = 1 << 16, n = 0, got;
	char *buf = capsim_xmalloc(cap);
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n > MAX_LOG_BYTES)
			break;
		if (n == cap) {
			cap = cap * 2 > (size_t)MAX_LOG_BYTES + 1 ? (size_t)MAX_LOG_BYTES + 1 : cap * 2;
			buf = capsim_xrealloc(buf, cap);
		}
	}
	if (ferror(f)) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

int capsim_nccltests_parse_file(const char *path, const capsim_nccltests_hint *hint,
				capsim_nccltests_log *out, capsim_diags *d)
{
	memset(out, 0, sizeof *out);
	out->op = -1;
	int is_stdin = !strcmp(path, "-");
	const char *name = is_stdin ? STDIN_NAME : path;
	snprintf(out->file, sizeof out->file, "%s", name);
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	if (!f) {
		capsim_diags_add(d, name, 0, "cannot read: %s", strerror(errno));
		return -1;
	}
	size_t n = 0;
	char *buf = read_log(f, &n);
	if (!is_stdin)
		fclose(f);
	if (!buf || n > MAX_LOG_BYTES) {
		if (!buf)
			capsim_diags_add(d, name, 0, "cannot read: read error");
		else
			capsim_diags_add(d, name, 0, "expected an nccl-tests log of at most %ld MiB "
					 "(one run's log is kilobytes), found a larger file",
					 MAX_LOG_BYTES >> 20);
		free(buf);
		return -1;
	}
	int rc = capsim_nccltests_parse_memory(buf, n, name, hint, out, d);
	free(buf);
	return rc;
}

void capsim_nccltests_free(capsim_nccltests_log *log)
{
	if (!log)
		return;
	free(log->rows);
	log->rows = NULL;
	log->n_rows = 0;
}
