/* capsim.h - libcapsim, capsim as a library: the one public header.
 *
 * Load a scenario, edit it with the same PATH=VALUE edits as `capsim run
 * --set`, evaluate it (with the shipped error model's 80% and 95% bands, or
 * without), read the result's keys by name with their units and bands or as
 * the JSON `capsim run --json` prints, predict one NCCL collective on the
 * scenario's cluster, run a sweep file into a results store and read a
 * store's points back.
 *
 * Conventions:
 * - Handles are opaque and owned by the caller (each _new has its _free).
 *   Separate handles may be used from separate threads at once; one handle
 *   is used by one thread at a time. The library keeps no state the caller
 *   must set up or tear down.
 * - Functions return a capsim_status. A failure's diagnostics, as the
 *   capsim command prints them (file:line or the --set edit, the field,
 *   what was expected and what was found; one problem a line), are kept on
 *   the handle (capsim_scn_diagnostics) or, for the functions that take
 *   no handle, written to *out in place of the answer.
 * - Strings the library returns in *out are allocated and freed with
 *   capsim_free; strings a function returns directly belong to the library
 *   or to the handle and live as long as it.
 * - Out of memory ends the process with status 1, as the capsim command does.
 * - The catalog (hardware, models, scenarios, the error model) is the one
 *   installed beside the library (PREFIX/share/capsim for PREFIX/lib), or
 *   the source tree for a library in a build directory of it; the
 *   environment variable CAPSIM_DATA names another. The user's own parts
 *   files (the command's --parts and CAPSIM_PARTS) are not read.
 *
 * The ABI is versioned (symbols in the node CAPSIM_0, SONAME libcapsim.so.0);
 * a program built against this header runs against any libcapsim.so.0. */
#ifndef CAPSIM_H
#define CAPSIM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CAPSIM_VERSION_MAJOR 0
#define CAPSIM_VERSION_MINOR 1
#define CAPSIM_VERSION_PATCH 0
/* the version this header came with, "MAJOR.MINOR.PATCH" */
#define CAPSIM_VERSION_TEXT "0.1.0"

/* What a call did. The values of RUNTIME and INPUT are the capsim command's
 * exit statuses for the same failures. */
typedef enum capsim_status {
	CAPSIM_OK = 0,
	CAPSIM_E_RUNTIME = 1, /* a failure while running: a store or file that cannot be
			       * read or written */
	CAPSIM_E_INPUT = 2,   /* bad input: a file, an edit, an option value refused */
	CAPSIM_E_USAGE = 3,   /* a call the library cannot make: a NULL handle or
			       * argument, no scenario loaded, a key the result table
			       * does not have, a number asked of a text key */
	CAPSIM_E_ABSENT = 4   /* the key is the table's, but this result has no value
			       * of it (a key present only for some scenarios) */
} capsim_status;

/* The library's version at run time: "MAJOR.MINOR.PATCH (git REV)", and its
 * parts in *major, *minor, *patch where not NULL. */
const char *capsim_library_version(int *major, int *minor, int *patch);

/* The name of a status ("ok", "runtime", "input", "usage", "absent"); NULL
 * for a value that is none of them. */
const char *capsim_status_name(int status);

/* The catalog's directory the library reads (hardware/, models/, scenarios/
 * with its sweeps/, the error model): CAPSIM_DATA where set, else the one
 * beside the library. */
const char *capsim_data_dir(void);

/* Free a string the library returned in *out (NULL is nothing). */
void capsim_free(void *p);

/* ---- a scenario -------------------------------------------------------- */

typedef struct capsim_scn capsim_scn;

/* A new handle holding no scenario yet; NULL only when out of memory. */
capsim_scn *capsim_scn_new(void);
void capsim_scn_free(capsim_scn *h);

/* Load a scenario file into h (replacing what it held): path, or NULL for
 * the catalog's scenarios/default.xml, or the name of a shipped scenario
 * ("h100-8node-ndr": the catalog's scenarios/NAME.xml) where no file of
 * that name exists. The catalog is loaded with it. OK; INPUT with the
 * diagnostics on h (h then holds no scenario). */
int capsim_scn_load(capsim_scn *h, const char *path);

/* Edit h's scenario: path is a --set path (`capsim validate --paths` lists
 * them), value as in the file ("8", "80 GB", "roce"). The scenario is
 * resolved and checked again as a load checks it. OK; INPUT with the
 * diagnostics on h, the scenario as it was; USAGE without a scenario. */
int capsim_scn_set(capsim_scn *h, const char *path, const char *value);

/* n edits applied together, for values only consistent together (the
 * nodes and the global batch): all or none. As capsim_scn_set. */
int capsim_scn_set_many(capsim_scn *h, const char *const *paths,
			     const char *const *values, size_t n);

/* The diagnostics of h's last failed call, one problem a line as the
 * capsim command prints them; "" after a call that succeeded. */
const char *capsim_scn_diagnostics(const capsim_scn *h);

/* The scenario as `capsim validate --resolved` writes it (XML, every field
 * in base SI units) into *out (capsim_free). OK; USAGE without a scenario. */
int capsim_scn_xml(capsim_scn *h, char **out);

/* ---- evaluation ---------------------------------------------------------- */

typedef struct capsim_res capsim_res;

/* capsim_scn_evaluate's flags */
#define CAPSIM_NO_INTERVALS 1u /* no bands (`capsim run --no-intervals`) */

/* Evaluate h's scenario as `capsim run` does into a new result *out
 * (capsim_res_free), with the shipped error model's 80% and 95%
 * bands unless flags has CAPSIM_NO_INTERVALS. A job that does not fit in
 * memory is a result, not a failure. OK; INPUT with the diagnostics on h
 * (*out NULL); USAGE without a scenario. */
int capsim_scn_evaluate(capsim_scn *h, unsigned flags, capsim_res **out);

void capsim_res_free(capsim_res *r);

/* The whole result as `capsim run SCENARIO --set ... --json` prints it
 * (the same keys in the same order, the same numbers; text, not a copy of
 * the command's output) into *out (capsim_free). OK, or USAGE. */
int capsim_res_json(const capsim_res *r, char **out);

/* ---- the result table: every key a result can have -------------------- */

/* How a key's value is read */
typedef enum capsim_key_type {
	CAPSIM_KEY_NUMBER = 0, /* capsim_res_number */
	CAPSIM_KEY_INTEGER = 1, /* a whole number; capsim_res_number */
	CAPSIM_KEY_BOOLEAN = 2, /* 0 or 1; capsim_res_number */
	CAPSIM_KEY_TEXT = 3,    /* capsim_res_text */
	CAPSIM_KEY_STRUCTURED = 4 /* JSON only: capsim_res_json */
} capsim_key_type;

/* The number of keys of the result table (each key once; its band ends are
 * not keys of their own). */
size_t capsim_key_count(void);

/* Key i of the table (0 .. capsim_key_count() - 1) in the order the JSON
 * writes them, or NULL past the end. */
const char *capsim_key_name(size_t i);

/* Key name's unit ("s", "bytes", "1" for a ratio, "" for a count or text),
 * its one-line description, its kind (a capsim_key_type), and whether it
 * carries a band (1) or not (0). NULL or -1 for a name the table does not
 * have. */
const char *capsim_key_unit(const char *name);
const char *capsim_key_description(const char *name);
int capsim_key_kind(const char *name);
int capsim_key_banded(const char *name);

/* ---- a result's values ----------------------------------------------------- */

/* Whether r has a value of key name: 1, 0 (absent or not a key). */
int capsim_res_has(const capsim_res *r, const char *name);

/* The value of a number, integer or boolean key into *v; name may also be
 * one end of a band as the JSON names it (step_time_s_lo, _hi, _lo95,
 * _hi95). OK; ABSENT; USAGE for a name the table does not have or a key
 * that is not a number. */
int capsim_res_number(const capsim_res *r, const char *name, double *v);

/* The value of a text key (pointing into r) into *v. As _number. */
int capsim_res_text(const capsim_res *r, const char *name, const char **v);

/* Key name's band at level 80 or 95 (percent) into *lo <= *hi. OK; ABSENT
 * where r was evaluated without bands or the error model has none for this
 * key at that level; USAGE for an unknown key or level. */
int capsim_res_band(const capsim_res *r, const char *name, int level,
		       double *lo, double *hi);

/* ---- collectives -------------------------------------------------------- */

/* One NCCL collective of op ("all-reduce", "all-gather", "reduce-scatter",
 * "broadcast", "reduce", "all-to-all", ...) at bytes (nccl-tests' size) over
 * the first ranks GPUs of h's cluster (0: every GPU), as
 * `capsim collective SCENARIO --op OP --bytes N --ranks R --json
 * --no-intervals` prints it, into *out (capsim_free). OK; INPUT with the
 * diagnostics on h; USAGE without a scenario. */
int capsim_scn_collective(capsim_scn *h, const char *op, double bytes, int ranks,
		      char **out);

/* ---- sweeps and their store -------------------------------------------- */

/* Run the sweep file sweep (`capsim sweep SWEEP --db DB -j THREADS`) into
 * the results store db (created when missing), its points with the shipped
 * error model's bands unless flags has CAPSIM_NO_INTERVALS. *out: a JSON
 * object (sweep_id, planned, ok, failed, dropped) or, on a failure, the
 * diagnostics; capsim_free it either way. OK; INPUT; RUNTIME (the store). */
int capsim_run_sweep(const char *sweep, const char *db, int threads, unsigned flags,
		      char **out);

/* The points of one sweep of the store db (sweep: its name or id; NULL the
 * latest) whose result keys pass every filter of where ("KEY OP VALUE",
 * `capsim query --where`'s form; n_where of them), every result key read:
 * a JSON array into *out (capsim_free), one object a point: index, status,
 * error (failed points), each parameter by its --set path, each result key
 * present. On a failure *out holds the diagnostics. OK; INPUT; RUNTIME. */
int capsim_query(const char *db, const char *sweep, const char *const *where, size_t n_where,
		 char **out);

#ifdef __cplusplus
}
#endif

#endif
