/* api_int.h - what libcapsim's own sources share (api.c, sweep.c); not
 * installed, not part of the ABI. */
#ifndef CAPSIM_API_INT_H
#define CAPSIM_API_INT_H

#include <jansson.h>

#include "diag.h"
#include "err.h"

/* capsim_init() once for the process, whichever thread asks first. */
void capsim_api_init(void);

/* "MAJOR.MINOR.PATCH (git REV)": what the JSON head and a sweep's store
 * record as the writer. */
const char *capsim_api_version(void);

/* d as the capsim command prints it (one problem a line), a new string. */
char *capsim_api_diags_text(const capsim_diags *d);

/* The status of the failure d holds: CAPSIM_E_RUNTIME where any of it is a
 * runtime failure, else CAPSIM_E_INPUT. */
int capsim_api_status(const capsim_diags *d);

/* The shipped error model, or NULL after adding why to d. */
capsim_err_model *capsim_api_err_model(capsim_diags *d);

/* o as the capsim command prints it (indented by 2, keys in order, reals
 * to precision digits, a newline after), a new string. */
char *capsim_api_json_text(json_t *o, int precision);

#endif
