/* schema.c - the store's schema: every table in one list, the migrations
 * from each older version in another, and opening and upgrading a database;
 * see store.h and docs/store.md. */
#include "storeint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "xalloc.h"

/* Every table of CAPSIM_STORE_SCHEMA, as a new database gets it. An older
 * database gains the tables it lacks (CREATE ... IF NOT EXISTS) after its
 * migrations have run. since: the version that added the table. */
static const struct {
	const char *name;
	int since;
	const char *sql;
} tables[] = {
	{ "runs", 1,
	  "CREATE TABLE IF NOT EXISTS runs("
	  " id INTEGER PRIMARY KEY,"
	  " sha256 TEXT NOT NULL UNIQUE,"
	  " source TEXT NOT NULL,"
	  " program TEXT NOT NULL,"
	  " date TEXT NOT NULL,"
	  " gpu TEXT NOT NULL,"
	  " cc TEXT, sms INTEGER, memory_bytes INTEGER, l2_bytes INTEGER,"
	  " cuda_driver INTEGER, cuda_runtime INTEGER, cublaslt INTEGER,"
	  " imported_at TEXT NOT NULL,"
	  " nccl INTEGER, ranks INTEGER, nodes INTEGER, launcher TEXT, env TEXT)" },
	{ "gemm", 1,
	  "CREATE TABLE IF NOT EXISTS gemm("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " dtype TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,"
	  " k INTEGER NOT NULL, shape TEXT, layout TEXT, batch INTEGER,"
	  " flop REAL NOT NULL, median_s REAL NOT NULL, flop_per_s REAL NOT NULL,"
	  " samples_s TEXT NOT NULL)" },
	{ "gemm_failed", 1,
	  "CREATE TABLE IF NOT EXISTS gemm_failed("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " dtype TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL,"
	  " k INTEGER NOT NULL, error TEXT NOT NULL)" },
	{ "gemm_check", 1,
	  "CREATE TABLE IF NOT EXISTS gemm_check("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " dtype TEXT NOT NULL, rel_err REAL NOT NULL)" },
	{ "copy_bandwidth", 1,
	  "CREATE TABLE IF NOT EXISTS copy_bandwidth("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " bytes INTEGER NOT NULL, moved_bytes INTEGER NOT NULL,"
	  " median_s REAL NOT NULL, bytes_per_s REAL NOT NULL, samples_s TEXT NOT NULL)" },
	{ "power_idle", 1,
	  "CREATE TABLE IF NOT EXISTS power_idle("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " power_limit_w REAL NOT NULL, power_w REAL NOT NULL, sm_mhz REAL NOT NULL,"
	  " temp_c REAL, throttle_reasons INTEGER)" },
	{ "power_sustained", 1,
	  "CREATE TABLE IF NOT EXISTS power_sustained("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " dtype TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,"
	  " median_power_w REAL NOT NULL, median_sm_mhz REAL NOT NULL,"
	  " median_flop_per_s REAL NOT NULL, readings TEXT NOT NULL,"
	  " batch_flop_per_s TEXT NOT NULL)" },
	{ "nccl", 2,
	  "CREATE TABLE IF NOT EXISTS nccl("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " op TEXT NOT NULL, dtype TEXT NOT NULL, redop TEXT,"
	  " ranks INTEGER NOT NULL, nodes INTEGER NOT NULL, bytes INTEGER NOT NULL,"
	  " count INTEGER NOT NULL, algo TEXT NOT NULL, proto TEXT NOT NULL,"
	  " in_place INTEGER NOT NULL, median_s REAL NOT NULL,"
	  " algbw_gb_per_s REAL NOT NULL, busbw_gb_per_s REAL NOT NULL,"
	  " wrong INTEGER NOT NULL, samples_s TEXT NOT NULL)" },
	{ "pcie", 2,
	  "CREATE TABLE IF NOT EXISTS pcie("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " direction TEXT NOT NULL, pinned INTEGER NOT NULL, bytes INTEGER NOT NULL,"
	  " median_s REAL NOT NULL, bytes_per_s REAL NOT NULL, samples_s TEXT NOT NULL)" },
	{ "power_duty", 2,
	  "CREATE TABLE IF NOT EXISTS power_duty("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " duty REAL NOT NULL, dtype TEXT NOT NULL, m INTEGER, n INTEGER, k INTEGER,"
	  " median_power_w REAL NOT NULL, median_sm_mhz REAL NOT NULL,"
	  " achieved_flop_per_s REAL NOT NULL, readings TEXT NOT NULL)" },
	{ "torch_launch", 3,
	  "CREATE TABLE IF NOT EXISTS torch_launch("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " op TEXT NOT NULL, elements INTEGER NOT NULL, kernels INTEGER NOT NULL,"
	  " host_median_s REAL NOT NULL, total_median_s REAL NOT NULL,"
	  " host_samples_s TEXT NOT NULL)" },
	{ "torch_step", 3,
	  "CREATE TABLE IF NOT EXISTS torch_step("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " model TEXT NOT NULL, micro_batch INTEGER NOT NULL, seq INTEGER NOT NULL,"
	  " dtype TEXT NOT NULL, mode TEXT NOT NULL, vocab INTEGER,"
	  " median_s REAL, tokens_per_s REAL, peak_allocated_bytes INTEGER,"
	  " peak_reserved_bytes INTEGER, samples_s TEXT, error TEXT,"
	  " issue_median_s REAL, kernels INTEGER, kernel_s REAL)" },
	{ "torch_host", 5,
	  "CREATE TABLE IF NOT EXISTS torch_host("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " arch TEXT NOT NULL, mode TEXT NOT NULL, layers INTEGER NOT NULL,"
	  " seq INTEGER, micro_batch INTEGER,"
	  " kernels_fwd INTEGER, kernels_bwd INTEGER, kernels_opt INTEGER,"
	  " host_fwd_s REAL, host_bwd_s REAL, host_opt_s REAL,"
	  " kernels INTEGER, kernel_s REAL, replay_host_s REAL, replay_gpu_s REAL,"
	  " error TEXT)" },
	{ "attention", 6,
	  "CREATE TABLE IF NOT EXISTS attention("
	  " run_id INTEGER NOT NULL REFERENCES runs(id),"
	  " backend TEXT NOT NULL, dtype TEXT, batch INTEGER, seq INTEGER NOT NULL,"
	  " heads INTEGER, kv_heads INTEGER, head_dim INTEGER NOT NULL,"
	  " causal INTEGER NOT NULL CHECK(causal IN (0, 1)),"
	  " flop_fwd REAL, flop_bwd REAL, fwd_median_s REAL, bwd_median_s REAL,"
	  " fwd_flop_per_s REAL, bwd_flop_per_s REAL, kernels TEXT, error TEXT,"
	  " CHECK((error IS NULL) = (fwd_flop_per_s IS NOT NULL)))" },
	/* the results of batch sweeps (results.h) */
	{ "sweeps", 4,
	  "CREATE TABLE IF NOT EXISTS sweeps("
	  " id INTEGER PRIMARY KEY,"
	  " name TEXT NOT NULL,"
	  " capsim_version TEXT NOT NULL,"
	  " created_at TEXT NOT NULL,"
	  " base_scenario_sha256 TEXT NOT NULL)" },
	{ "sweep_inputs", 4,
	  "CREATE TABLE IF NOT EXISTS sweep_inputs("
	  " sweep_id INTEGER NOT NULL REFERENCES sweeps(id),"
	  " file TEXT NOT NULL,"
	  " sha256 TEXT NOT NULL,"
	  " PRIMARY KEY(sweep_id, file))" },
	{ "points", 4,
	  "CREATE TABLE IF NOT EXISTS points("
	  " id INTEGER PRIMARY KEY,"
	  " sweep_id INTEGER NOT NULL REFERENCES sweeps(id),"
	  " point_index INTEGER NOT NULL CHECK(point_index >= 0),"
	  " scenario_sha256 TEXT NOT NULL,"
	  " status TEXT NOT NULL CHECK(status IN ('ok', 'failed')),"
	  " error TEXT,"
	  " capsim_version TEXT NOT NULL,"
	  " UNIQUE(sweep_id, point_index),"
	  " CHECK((status = 'failed') = (error IS NOT NULL)))" },
	{ "point_params", 4,
	  "CREATE TABLE IF NOT EXISTS point_params("
	  " point_id INTEGER NOT NULL REFERENCES points(id),"
	  " path TEXT NOT NULL,"
	  " value TEXT NOT NULL,"
	  " PRIMARY KEY(point_id, path))" },
	{ "point_results", 4,
	  "CREATE TABLE IF NOT EXISTS point_results("
	  " point_id INTEGER NOT NULL REFERENCES points(id),"
	  " key TEXT NOT NULL,"
	  " num_value REAL,"
	  " text_value TEXT,"
	  " unit TEXT NOT NULL,"
	  " PRIMARY KEY(point_id, key),"
	  " CHECK((num_value IS NULL) != (text_value IS NULL)))" },
};

/* What takes a database at version `from` to from + 1 beyond the tables it
 * gains from the list above (new tables need no entry here). A migration
 * that alters a table names it in `on`: a database too old to have that
 * table gets it whole from the list instead. */
static const struct {
	int from;
	const char *on;
	const char *sql;
} migrations[] = {
	/* 1 -> 2: the machine line's NCCL keys */
	{ 1, "runs", "ALTER TABLE runs ADD COLUMN nccl INTEGER;"
	     "ALTER TABLE runs ADD COLUMN ranks INTEGER;"
	     "ALTER TABLE runs ADD COLUMN nodes INTEGER;"
	     "ALTER TABLE runs ADD COLUMN launcher TEXT;"
	     "ALTER TABLE runs ADD COLUMN env TEXT;" },
	/* 2 -> 3: torch_launch, torch_step (tables only) */
	/* 3 -> 4: sweeps, sweep_inputs, points, point_params, point_results
	 * (tables only) */
	/* 4 -> 5: the host's view of a torch-step, and torch_host */
	{ 4, "torch_step", "ALTER TABLE torch_step ADD COLUMN issue_median_s REAL;"
	     "ALTER TABLE torch_step ADD COLUMN kernels INTEGER;"
	     "ALTER TABLE torch_step ADD COLUMN kernel_s REAL;" },
	/* 5 -> 6: attention (tables only) */
};

/* ---- failures ------------------------------------------------------------ */

/* "locked by another process", with how long this process waited */
static void locked(const char *path, long waited_ms, capsim_diags *d)
{
	if (waited_ms >= 10000)
		capsim_diags_add_runtime(d, path, "database is locked by another process "
					 "(waited %ld s)", waited_ms / 1000);
	else
		capsim_diags_add_runtime(d, path, "database is locked by another process "
					 "(waited %.1f s)", (double)waited_ms / 1000.0);
}

/* a failure of the operating system under SQLite (errno), in words: NULL
 * when errno says nothing more than SQLite */
static const char *system_words(int err)
{
	switch (err) {
	case ENOSPC: case EDQUOT: return "disk full";
	case EROFS: return "read-only (the file system is mounted read-only)";
	case EACCES: case EPERM: return "permission denied";
	default: return NULL;
	}
}

void capsim_store__fail(capsim_store *s, int rc, capsim_diags *d)
{
	const char *msg = s->db ? sqlite3_errmsg(s->db) : "out of memory";
	const char *sys = s->db ? system_words(sqlite3_system_errno(s->db)) : NULL;
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		locked(s->path, s->waited_ms, d);
		break;
	case SQLITE_FULL:
		capsim_diags_add_runtime(d, s->path, "disk full");
		break;
	case SQLITE_READONLY:
		capsim_diags_add_runtime(d, s->path, "read-only (SQLite: %s)", msg);
		break;
	case SQLITE_NOTADB:
		capsim_diags_add_runtime(d, s->path, "not a capsim database (not an SQLite file)");
		break;
	case SQLITE_CORRUPT:
		capsim_diags_add_runtime(d, s->path, "corrupt (SQLite: %s)", msg);
		break;
	case SQLITE_NOMEM:
		capsim_diags_add_runtime(d, s->path, "out of memory");
		break;
	case SQLITE_IOERR:
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
	case SQLITE_PROTOCOL:
	case SQLITE_NOLFS:
		if (sys)
			capsim_diags_add_runtime(d, s->path, "%s (SQLite: %s)", sys, msg);
		else if (s->db && sqlite3_system_errno(s->db))
			capsim_diags_add_runtime(d, s->path, "I/O error (SQLite: %s, code %d: %s)", msg,
						 sqlite3_extended_errcode(s->db),
						 strerror(sqlite3_system_errno(s->db)));
		else
			capsim_diags_add_runtime(d, s->path, "I/O error (SQLite: %s, code %d)", msg,
						 s->db ? sqlite3_extended_errcode(s->db) : rc);
		break;
	default: /* a constraint, SQL the file's tables cannot answer: the input */
		capsim_diags_add(d, s->path, 0, "database: %s", msg);
		break;
	}
}

/* ---- statements ---------------------------------------------------------- */

int capsim_store__exec(capsim_store *s, const char *sql, capsim_diags *d)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		capsim_store__fail(s, rc, d);
		return -1;
	}
	return 0;
}

sqlite3_stmt *capsim_store__prepare(capsim_store *s, const char *sql, capsim_diags *d)
{
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, &tail);
	if (rc != SQLITE_OK) {
		capsim_store__fail(s, rc, d);
		sqlite3_finalize(st);
		return NULL;
	}
	/* one statement a call: a second would never run */
	CAPSIM_ASSERT(st && tail && tail[strspn(tail, " \t\n;")] == '\0');
	return st;
}

sqlite3_stmt *capsim_store__cached(capsim_store *s, const char *sql, capsim_diags *d)
{
	for (size_t i = 0; i < s->n_cached; i++)
		if (s->cached[i].sql == sql || strcmp(s->cached[i].sql, sql) == 0) {
			sqlite3_stmt *st = s->cached[i].st;
			sqlite3_reset(st);
			sqlite3_clear_bindings(st);
			return st;
		}
	/* a fixed set of statements: more is a caller's mistake */
	CAPSIM_ASSERT(s->n_cached < CAPSIM_STORE_CACHED);
	sqlite3_stmt *st = capsim_store__prepare(s, sql, d);
	if (!st)
		return NULL;
	s->cached[s->n_cached].sql = sql;
	s->cached[s->n_cached].st = st;
	s->n_cached++;
	return st;
}

int capsim_store__step(capsim_store *s, sqlite3_stmt *st, capsim_diags *d)
{
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	capsim_store__fail(s, rc, d);
	return -1;
}

const char *capsim_store__text(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	return t ? (const char *)t : "";
}

/* the one integer of a query, or -1 after a message */
static int64_t query_int(capsim_store *s, const char *sql, const char *a, const char *b,
			 capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__prepare(s, sql, d);
	if (!st)
		return -1;
	if (a)
		sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
	if (b)
		sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
	int rc = capsim_store__step(s, st, d);
	int64_t v = rc == 1 ? sqlite3_column_int64(st, 0) : -1;
	if (rc == 0) /* a count or a pragma always gives a row: say what failed, not the SQL */
		capsim_diags_add_runtime(d, s->path, "reading the database's header gave nothing "
					 "(SQLite returned no row)");
	sqlite3_finalize(st);
	return v;
}

int capsim_store__has_table(capsim_store *s, const char *table, capsim_diags *d)
{
	int64_t n = query_int(s, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?",
			      table, NULL, d);
	return n < 0 ? -1 : n > 0;
}

int capsim_store__has_column(capsim_store *s, const char *table, const char *column,
			     capsim_diags *d)
{
	int64_t n = query_int(s, "SELECT count(*) FROM pragma_table_info(?) WHERE name = ?",
			      table, column, d);
	return n < 0 ? -1 : n > 0;
}

/* 0 when this capsim can read a database of version, else -1 after a
 * message: a newer schema is the user's file being incompatible with this
 * capsim (bad input, exit status 2), as is a negative one */
static int known_version(capsim_store *s, int64_t version, capsim_diags *d)
{
	if (version > CAPSIM_STORE_SCHEMA) {
		capsim_diags_add(d, s->path, 0, "schema version %lld is newer than this capsim (%d); "
				 "use a newer capsim", (long long)version, CAPSIM_STORE_SCHEMA);
		return -1;
	}
	if (version < 0) {
		capsim_diags_add(d, s->path, 0, "not a capsim database (schema version %lld)",
				 (long long)version);
		return -1;
	}
	return 0;
}

int capsim_store__schema_upgrade(capsim_store *s, capsim_diags *d)
{
	int64_t version = query_int(s, "PRAGMA user_version", NULL, NULL, d);
	if (version < 0)
		return -1;
	if (known_version(s, version, d) < 0)
		return -1;
	if (version == 0) {
		int64_t any = query_int(s, "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
					NULL, NULL, d);
		if (any < 0)
			return -1;
		if (any > 0) {
			capsim_diags_add(d, s->path, 0, "expected a capsim store (a schema version in "
					 "PRAGMA user_version), found %lld tables and no version",
					 (long long)any);
			return -1;
		}
	}
	for (size_t i = 0; version > 0 && i < sizeof migrations / sizeof migrations[0]; i++) {
		if (migrations[i].from < version)
			continue;
		int has = capsim_store__has_table(s, migrations[i].on, d);
		if (has < 0 || (has > 0 && capsim_store__exec(s, migrations[i].sql, d) < 0))
			return -1;
	}
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		if (capsim_store__exec(s, tables[i].sql, d) < 0)
			return -1;
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", CAPSIM_STORE_SCHEMA);
	if (capsim_store__exec(s, sql, d) < 0)
		return -1;
	s->version = CAPSIM_STORE_SCHEMA;
	return 0;
}

/* ---- opening ------------------------------------------------------------- */

static long busy_limit_ms = 300000;

void capsim_store__set_busy_limit_ms(long ms)
{
	busy_limit_ms = ms;
}

/* One wait of a backoff (1, 2, 4 ... 128 ms, then 250 ms at a time, a few
 * milliseconds of this process's own added so that waiters do not retry in
 * step) added to *waited_ms; 0 when busy_limit_ms is spent (no wait). */
static int backoff(int count, long *waited_ms)
{
	if (*waited_ms >= busy_limit_ms)
		return 0;
	long ms = count < 8 ? 1L << count : 250;
	ms += (long)(getpid() % 7);
	if (ms > busy_limit_ms - *waited_ms)
		ms = busy_limit_ms - *waited_ms;
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	*waited_ms += ms;
	return 1;
}

/* SQLite's busy handler: wait for another process's lock with backoff, up
 * to busy_limit_ms in all; 0 gives up (SQLITE_BUSY). */
int capsim_store__wait_for_lock(void *arg, int count)
{
	capsim_store *s = arg;
	if (count == 0)
		s->waited_ms = 0;
	return backoff(count, &s->waited_ms);
}

/* the directory path is in: "." for a bare name, "/" for "/name" (caller
 * frees) */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return capsim_xstrdup(".");
	return capsim_xasprintf("%.*s", (int)(slash == path ? 1 : slash - path), path);
}

/* why a file cannot be made in path's directory: its errno (ENOENT when
 * the directory is absent; ENOENT too, SQLite's own, when it could be) */
static int dir_unwritable(const char *path)
{
	char *dir = dir_of(path);
	int err = access(dir, W_OK) == 0 ? ENOENT : errno;
	free(dir);
	return err;
}

/* sqlite3_open_v2 failed: why, from errno. A path that names nothing (or
 * names a directory) is the input; anything else is the run's. */
static void open_failed(capsim_store *s, capsim_diags *d)
{
	int err = s->db ? sqlite3_system_errno(s->db) : ENOMEM;
	if (s->writable && s->absent && err == ENOENT)
		err = dir_unwritable(s->path);
	const char *sys = system_words(err);
	if (err == ENOENT || err == ENOTDIR || err == EISDIR)
		capsim_diags_add(d, s->path, 0, "cannot open the database: %s", strerror(err));
	else if (sys)
		capsim_diags_add_runtime(d, s->path, "cannot open the database: %s", sys);
	else if (!s->db)
		capsim_diags_add_runtime(d, s->path, "out of memory");
	else
		capsim_diags_add_runtime(d, s->path, "cannot open the database (SQLite: %s)",
					 sqlite3_errmsg(s->db));
}

/* PRAGMA quick_check: 0 when the file's pages hold together, else -1 after
 * "corrupt" (a runtime failure: the file was damaged, not written wrong) */
static int check_pages(capsim_store *s, capsim_diags *d)
{
	sqlite3_stmt *st = capsim_store__prepare(s, "PRAGMA quick_check(1)", d);
	if (!st)
		return -1;
	int rc = capsim_store__step(s, st, d);
	const char *result = rc == 1 ? capsim_store__text(st, 0) : "";
	if (rc == 1 && strcmp(result, "ok") != 0) {
		char *flat = capsim_xstrdup(result);
		for (char *c = flat; *c; c++)
			if (*c == '\n')
				*c = ' ';
		capsim_diags_add_runtime(d, s->path, "corrupt (SQLite: %s)", flat);
		free(flat);
		rc = -1;
	}
	sqlite3_finalize(st);
	return rc < 0 ? -1 : 0;
}

static int path_absent(const char *path)
{
	struct stat sb;
	return stat(path, &sb) != 0 && errno == ENOENT;
}

/* what a file that is not a regular one is, in words */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISFIFO(mode))
		return "a FIFO (named pipe)";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

int capsim_store__check_path(const char *path, capsim_diags *d)
{
	if (strcmp(path, "-") == 0) {
		capsim_diags_add_at(d, "--db -", "a store cannot be standard input or output: it "
				    "is an SQLite file that is read and written in place; give a "
				    "file name (./- for a file named '-')");
		return -1;
	}
	struct stat sb;
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		capsim_diags_add(d, path, 0, "expected a regular file for the store (an SQLite "
				 "database), found %s", file_kind(sb.st_mode));
		return -1;
	}
	/* SQLite's files beside it: where one is there, it is a regular file
	 * (a symlink planted there would have SQLite write through it) */
	static const char *const beside[] = { "-journal", "-wal", "-shm" };
	for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++) {
		char *side = capsim_xasprintf("%s%s", path, beside[i]);
		int bad = lstat(side, &sb) == 0 && !S_ISREG(sb.st_mode);
		if (bad)
			capsim_diags_add(d, side, 0, "expected SQLite's %s file of the store to be a "
					 "regular file, found %s", beside[i] + 1,
					 S_ISLNK(sb.st_mode) ? "a symbolic link" : file_kind(sb.st_mode));
		free(side);
		if (bad)
			return -1;
	}
	return 0; /* a regular file; or absent (a writer creates it), or open_failed says why */
}

/* 1 when the SQLite file at path is in write-ahead-log mode (its header's
 * read and write versions are 2), else 0 (also when it cannot be read:
 * SQLite then says why) */
static int wal_mode(const char *path)
{
	unsigned char head[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	ssize_t n = pread(fd, head, sizeof head, 0);
	close(fd);
	return n == (ssize_t)sizeof head && memcmp(head, "SQLite format 3", 16) == 0 &&
	       head[18] == 2 && head[19] == 2;
}

/* path as a file: URI (RFC 3986: every byte but unreserved ones and '/'
 * percent-encoded, so that no '?', '#' or '%' of a name is read as URI
 * syntax), with query (caller frees) */
static char *file_uri(const char *path, const char *query)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path);
	char *u = capsim_xmalloc(16 + 3 * n + strlen(query));
	size_t k = 0;
	memcpy(u, "file:", 5);
	k = 5;
	if (path[0] == '/') { /* an empty authority: file:///abs, never file://host */
		memcpy(u + k, "//", 2);
		k += 2;
	}
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p)) {
			u[k++] = (char)*p;
		} else {
			u[k++] = '%';
			u[k++] = hex[*p >> 4];
			u[k++] = hex[*p & 15];
		}
	}
	strcpy(u + k, query);
	return u;
}

/* How a reader opens path, read-only, so that it never creates or changes
 * a file (no -journal, -wal or -shm left by a query or a report):
 *
 * - A store in rollback-journal mode (what capsim sweep leaves when it
 *   ends, and every measurement store) opens with SQLITE_OPEN_READONLY and
 *   SQLite's locks: a reader takes a shared lock on the file itself, which
 *   works on a read-only mount and in a directory it cannot write, and
 *   creates nothing.
 * - A store in write-ahead-log mode whose -wal file exists has a writer
 *   (a sweep running now) or a writer's last commits in that log: it opens
 *   read-only with SQLite's locks, sharing the writer's -wal and -shm, so
 *   that those commits are read.
 * - A store in write-ahead-log mode without a -wal file holds every commit
 *   in the file itself, but SQLite would create a -wal and an -shm beside
 *   it to read it (and leave them there, or fail with "unable to open"
 *   where the directory cannot be written or the mount is read-only). It
 *   opens with immutable=1: SQLite then reads the file alone, takes no
 *   lock and creates nothing. nolock=1 would not do: it drops the locks but
 *   still needs the -shm (WAL index) of a WAL-mode file. What immutable
 *   gives up is the lock against a writer that starts while the reader
 *   reads; capsim sweep takes its store out of write-ahead-log mode when it
 *   ends, so only a store left in that mode without its log (by another
 *   program) is read so. */
static char *reader_uri(const char *path)
{
	int immutable = 0;
	if (wal_mode(path)) {
		char *wal = capsim_xasprintf("%s-wal", path);
		immutable = access(wal, F_OK) != 0 && errno == ENOENT;
		free(wal);
	}
	return file_uri(path, immutable ? "?mode=ro&immutable=1" : "?mode=ro");
}

/* open without touching the schema; a reader refuses a newer version */
static int open_raw(const char *path, int mode, capsim_store **out, capsim_diags *d)
{
	*out = NULL;
	if (capsim_store__check_path(path, d) < 0)
		return -1;
	capsim_store *s = capsim_xcalloc(1, sizeof *s);
	s->path = capsim_xstrdup(path);
	s->writable = mode == CAPSIM_STORE_WRITE;
	s->dir_lock = -1;
	s->absent = path_absent(path);
	int rc;
	if (s->writable) {
		rc = sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	} else {
		char *uri = reader_uri(path);
		rc = sqlite3_open_v2(uri, &s->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
		free(uri);
	}
	if (rc != SQLITE_OK) {
		open_failed(s, d);
		capsim_store_close(s);
		return -1;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_handler(s->db, capsim_store__wait_for_lock, s);
	int64_t version = query_int(s, "PRAGMA user_version", NULL, NULL, d);
	if (version < 0 || (!s->writable && known_version(s, version, d) < 0) ||
	    check_pages(s, d) < 0) {
		capsim_store_close(s);
		return -1;
	}
	s->version = (int)version;
	*out = s;
	return 0;
}

/* The lock on path's directory that writers take to open path (see
 * storeint.h): the flock'd descriptor; -1 when the directory cannot be
 * locked (then a new file is never removed); -2 after waiting busy_limit_ms
 * for it, with the message in d. */
static int lock_dir(const char *path, capsim_diags *d)
{
	char *dir = dir_of(path);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (fd < 0)
		return -1;
	long waited_ms = 0;
	for (int count = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; count++) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			close(fd);
			return -1;
		}
		if (!backoff(count, &waited_ms)) {
			locked(path, waited_ms, d);
			close(fd);
			return -2;
		}
	}
	return fd;
}

static void unlock_dir(int fd)
{
	if (fd >= 0)
		close(fd); /* and with it the flock */
}

/* A failed write transaction of s ends: ROLLBACK (SQLite removes its
 * journal), then the file goes when s created it (no other writer has it
 * open: they wait for s's directory lock), then s closes. */
static void abandon(capsim_store *s)
{
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	if (s->created)
		unlink(s->path);
	capsim_store_close(s);
}

/* Open path for writing under its directory's lock, kept while the file is
 * new, and take the write lock (BEGIN IMMEDIATE). */
static int lock_for_write(const char *path, capsim_store **out, capsim_diags *d)
{
	int dir = lock_dir(path, d);
	if (dir == -2)
		return -1;
	int absent = path_absent(path);
	capsim_store *s;
	if (open_raw(path, CAPSIM_STORE_WRITE, &s, d) < 0) {
		if (absent && dir >= 0)
			unlink(path); /* what SQLite may have made before failing */
		unlock_dir(dir);
		return -1;
	}
	if (absent && dir >= 0) {
		s->created = 1;
		s->dir_lock = dir;
	} else {
		unlock_dir(dir);
	}
	if (capsim_store__exec(s, "BEGIN IMMEDIATE", d) < 0) {
		abandon(s);
		return -1;
	}
	CAPSIM_ASSERT(!sqlite3_get_autocommit(s->db)); /* inside the transaction */
	*out = s;
	return 0;
}

int capsim_store__begin_write(const char *path, capsim_store **out, capsim_diags *d)
{
	capsim_store *s;
	*out = NULL;
	if (lock_for_write(path, &s, d) < 0)
		return -1;
	if (capsim_store__schema_upgrade(s, d) < 0) {
		abandon(s);
		return -1;
	}
	*out = s;
	return 0;
}

int capsim_store__end_write(capsim_store *s, int ok, capsim_diags *d)
{
	if (ok == 0 && capsim_store__exec(s, "COMMIT", d) == 0) {
		CAPSIM_ASSERT(sqlite3_get_autocommit(s->db)); /* nothing left open */
		capsim_store_close(s);
		return 0;
	}
	abandon(s);
	return -1;
}

int capsim_store_open(const char *path, int mode, capsim_store **out, capsim_diags *d)
{
	if (mode != CAPSIM_STORE_WRITE)
		return open_raw(path, CAPSIM_STORE_READ, out, d);
	capsim_store *s;
	if (capsim_store__begin_write(path, &s, d) < 0) {
		*out = NULL;
		return -1;
	}
	if (capsim_store__exec(s, "COMMIT", d) < 0) {
		abandon(s);
		*out = NULL;
		return -1;
	}
	s->created = 0; /* committed: the file stays, whatever comes next */
	unlock_dir(s->dir_lock);
	s->dir_lock = -1;
	*out = s;
	return 0;
}

void capsim_store_close(capsim_store *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_cached; i++)
		sqlite3_finalize(s->cached[i].st);
	/* every statement finalized by its owner: else sqlite3_close leaves
	 * the database open */
	CAPSIM_ASSERT(sqlite3_next_stmt(s->db, NULL) == NULL);
	sqlite3_close(s->db);
	unlock_dir(s->dir_lock);
	free(s->path);
	free(s);
}

int capsim_store_version(const capsim_store *s)
{
	return s->version;
}
