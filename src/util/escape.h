/* escape.h - text written into XML and HTML: the characters markup gives a
 * meaning (& < > ") as entities, so that a value reads back as it was. */
#ifndef CAPSIM_ESCAPE_H
#define CAPSIM_ESCAPE_H

#include <stdio.h>

/* s to f, & < > " escaped: fit for element text and quoted attributes */
static inline void capsim_xml_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

#endif
