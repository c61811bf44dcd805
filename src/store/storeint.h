/* storeint.h - private to src/store: the open database handle, statement
 * helpers, and the schema (schema.c). Nothing outside src/store includes
 * this header or sqlite3.h. */
#ifndef CAPSIM_STOREINT_H
#define CAPSIM_STOREINT_H

#include <stdint.h>

#include <sqlite3.h>

#include "diag.h"
#include "store.h"

#define CAPSIM_STORE_CACHED 8

struct capsim_store {
	sqlite3 *db;
	char *path;     /* for messages */
	int writable;
	int version;    /* PRAGMA user_version when opened (after any upgrade) */
	int absent;     /* the file did not exist when this handle opened it */
	int created;    /* this handle made the file, holding dir_lock: a write
			 * that fails removes it again */
	int dir_lock;   /* while creating: a descriptor of the file's directory,
			 * flock'd (LOCK_EX) so that no other writer opens the new
			 * file before it is committed or removed; else -1 */
	long waited_ms; /* how long the busy handler has waited, this episode */
	/* statements a writer runs for every point, prepared once
	 * (capsim_store__cached), finalized at close */
	struct {
		const char *sql;
		sqlite3_stmt *st;
	} cached[CAPSIM_STORE_CACHED];
	size_t n_cached;
};

/* The longest the store waits for another process's lock, in total, before
 * "database is locked by another process" (default 300 s); for tests. */
void capsim_store__set_busy_limit_ms(long ms);

/* SQLite's busy handler of every handle (arg: the capsim_store): waits for
 * another process's lock with backoff, up to the busy limit; 0 gives up. */
int capsim_store__wait_for_lock(void *arg, int count);

/* What SQLite's failure rc (on s) means, in words, into d: a runtime
 * failure (CAPSIM_DIAG_RUNTIME: locked, disk full, read-only, not an SQLite
 * file, corrupt, I/O, out of memory) or bad input (a constraint, SQL the
 * file's schema cannot answer). Always names s->path. */
void capsim_store__fail(capsim_store *s, int rc, capsim_diags *d);

/* 0 when path may be opened as a store: a regular file (or a symlink to
 * one) or a name that is absent, with no SQLite file beside it (-journal,
 * -wal, -shm) that is not a regular file; else -1 after why not in d (bad
 * input): "-" (standard input or output), a device, a FIFO, a directory.
 * Checked before SQLite opens anything, so that nothing is ever created
 * beside a device or a directory. */
int capsim_store__check_path(const char *path, capsim_diags *d);

/* Run sql (one or more statements); 0, or -1 after "PATH: database: ..." in d. */
int capsim_store__exec(capsim_store *s, const char *sql, capsim_diags *d);

/* Prepare sql; the statement, or NULL after a message in d. */
sqlite3_stmt *capsim_store__prepare(capsim_store *s, const char *sql, capsim_diags *d);

/* The statement of sql (one statement, a string that lives as long as the
 * store: a literal) prepared on its first use and kept: reset, its bindings
 * cleared, owned by the store (never finalized by the caller). For the
 * statements run for every point of a sweep; NULL after a message in d. */
sqlite3_stmt *capsim_store__cached(capsim_store *s, const char *sql, capsim_diags *d);

/* One step: 1 a row, 0 done, -1 after a message in d. */
int capsim_store__step(capsim_store *s, sqlite3_stmt *st, capsim_diags *d);

/* 1 when table exists, 0 when not, -1 after a message. */
int capsim_store__has_table(capsim_store *s, const char *table, capsim_diags *d);

/* 1 when table has column, 0 when not (or no table), -1 after a message. */
int capsim_store__has_column(capsim_store *s, const char *table, const char *column,
			     capsim_diags *d);

/* Bring the database to CAPSIM_STORE_SCHEMA inside the caller's transaction:
 * a new database gets every table; an older one runs the migrations from its
 * version on, then gains the tables it lacks. A newer database, or one with
 * tables but no version, is refused. 0, or -1 with the reason in d. */
int capsim_store__schema_upgrade(capsim_store *s, capsim_diags *d);

/* Open the store at path for writing and start an immediate transaction
 * with the schema brought up to date; on failure *out is NULL, and a file
 * this call created is removed again. Waits for other writers (up to the
 * busy limit). A writer creating the database holds a lock on its
 * directory until it commits or removes the file, and every writer takes
 * that lock to open the file, so none opens a file that is then removed. */
int capsim_store__begin_write(const char *path, capsim_store **out, capsim_diags *d);

/* COMMIT when ok is 0, else ROLLBACK; then close. Returns 0 when committed.
 * When nothing is committed and this transaction created the database, the
 * file goes again (no empty or schema-only database is left behind). */
int capsim_store__end_write(capsim_store *s, int ok, capsim_diags *d);

/* sqlite3_column_text, "" for NULL */
const char *capsim_store__text(sqlite3_stmt *st, int col);

#endif
