/* screen.h - the what-if explorer's screen (ncurses): the knobs of knob.h
 * on the left, the scenario's results on the right, recomputed by
 * capsim_eval on a worker thread as a knob changes (the same numbers as
 * `capsim run --set`), with undo, a pinned baseline, saving the scenario
 * as XML and the layout optimiser. Results are read through the result
 * table (eval.h). */
#ifndef CAPSIM_UI_SCREEN_H
#define CAPSIM_UI_SCREEN_H

#include "catalog.h"
#include "err.h"
#include "spec.h"

/* Run the explorer on the terminal of standard input and output until q,
 * SIGINT or SIGTERM, giving the terminal back as it was (also when the
 * process exits from elsewhere). s is taken (owned from now on, freed
 * here); cat and em must outlive the call. em: the error model, against
 * which a delta from the pinned baseline is marked "within error" where it
 * is inside the 80% band of the comparison (capsim_ui_within_error); NULL:
 * deltas unmarked. Returns 0 after q, 130 after a signal, -1 when the
 * screen (or its worker thread) could not start. */
int capsim_ui_explore(const capsim_catalog *cat, capsim_scenario *s, const capsim_err_model *em);

#endif
