/* check.h - checked invariants: what the code itself guarantees, stated
 * where a reader needs it, and verified in checked builds. Never for input
 * (a scenario, a file, an option): that is a capsim_diags error with its
 * file:line and exit status 2. A failed check is a bug in capsim.
 *
 * CAPSIM_CHECKS (1 or 0, set by CMake's CAPSIM_CHECKS option, on by default
 * in Debug and sanitizer builds) chooses:
 *
 *   CAPSIM_ASSERT(cond)  checked: cond is evaluated, and when false the
 *                        failure is reported and the process aborts.
 *                        Unchecked: cond is type-checked and never evaluated,
 *                        so it must have no side effect and may be costly.
 *   CAPSIM_ALWAYS(cond)  an expression with cond's truth, for a defensive
 *   CAPSIM_NEVER(cond)   branch that cannot be taken: `if (CAPSIM_NEVER(k >
 *                        MAX)) k = MAX;`. Checked: aborts when ALWAYS's cond
 *                        is false or NEVER's true. Unchecked: cond is
 *                        evaluated and the branch kept (SQLite's ALWAYS and
 *                        NEVER).
 *   CAPSIM_BROKEN(what)  in every build: a state the code cannot continue
 *                        from (a deadlock, a counter exhausted); aborts.
 *
 * A failure writes "capsim: internal check failed: FILE:LINE: FUNCTION:
 * CONDITION" on standard error (FILE relative to the source tree) and calls
 * abort(): a core dump or a debugger's stop, never an exit status that looks
 * like an input error. */
#ifndef CAPSIM_CHECK_H
#define CAPSIM_CHECK_H

#ifndef CAPSIM_CHECKS
#define CAPSIM_CHECKS 0
#endif

/* Report a failed check at file:line in func and abort. Writes with
 * write(2) and allocates nothing, so it is safe anywhere, out of memory
 * included. */
_Noreturn void capsim_check_fail(const char *file, int line, const char *func,
				 const char *cond) __attribute__((cold));

/* 1 when the library was built with CAPSIM_CHECKS on, else 0 (a program
 * built apart from the library may compare it with its own setting). */
int capsim_checks_enabled(void);

/* The two definitions, named so that tests can reach both in any build. */
#define CAPSIM_ASSERT_ON(cond) \
	((cond) ? (void)0 : capsim_check_fail(__FILE__, __LINE__, __func__, #cond))
#define CAPSIM_ASSERT_OFF(cond) ((void)(0 && (cond)))
#define CAPSIM_ALWAYS_ON(cond) \
	((cond) ? 1 : (capsim_check_fail(__FILE__, __LINE__, __func__, #cond), 0))
#define CAPSIM_NEVER_ON(cond) \
	((cond) ? (capsim_check_fail(__FILE__, __LINE__, __func__, "!(" #cond ")"), 1) : 0)
#define CAPSIM_ALWAYS_OFF(cond) (!!(cond))
#define CAPSIM_NEVER_OFF(cond) (!!(cond))

#if CAPSIM_CHECKS
#define CAPSIM_ASSERT(cond) CAPSIM_ASSERT_ON(cond)
#define CAPSIM_ALWAYS(cond) CAPSIM_ALWAYS_ON(cond)
#define CAPSIM_NEVER(cond) CAPSIM_NEVER_ON(cond)
#else
#define CAPSIM_ASSERT(cond) CAPSIM_ASSERT_OFF(cond)
#define CAPSIM_ALWAYS(cond) CAPSIM_ALWAYS_OFF(cond)
#define CAPSIM_NEVER(cond) CAPSIM_NEVER_OFF(cond)
#endif

#define CAPSIM_BROKEN(what) capsim_check_fail(__FILE__, __LINE__, __func__, what)

#endif
