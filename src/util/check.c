/* check.c - the failure path of check.h. */
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Write s whole on standard error, giving up on an error. */
static void say(const char *s)
{
	size_t left = strlen(s);
	while (left) {
		ssize_t w = write(STDERR_FILENO, s, left);
		if (w <= 0)
			return;
		s += w;
		left -= (size_t)w;
	}
}

/* The line number in decimal into buf (at least 24 bytes), on the stack:
 * nothing here may allocate. */
static const char *decimal(int v, char *buf, size_t n)
{
	char *p = buf + n - 1;
	unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
	*p = '\0';
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u && p > buf + 1);
	if (v < 0)
		*--p = '-';
	return p;
}

_Noreturn void capsim_check_fail(const char *file, int line, const char *func,
				 const char *cond)
{
	char num[24];
	say("capsim: internal check failed: ");
	say(file);
	say(":");
	say(decimal(line, num, sizeof num));
	say(": ");
	say(func);
	say(": ");
	say(cond);
	say("\n");
	abort();
}

int capsim_checks_enabled(void)
{
	return CAPSIM_CHECKS;
}
