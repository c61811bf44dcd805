/* csv.h - the CSV splitter of the reference tables (tests/data/reference),
 * shared by the unit tests and tests/bench/fit_gemm.c. */
#ifndef CAPSIM_TEST_CSV_H
#define CAPSIM_TEST_CSV_H

/* Split one CSV line into up to nf fields (double quotes group commas);
 * returns the count. Modifies line; the fields point into it. */
static inline int csv_split(char *line, char **f, int nf)
{
	int n = 0;
	char *p = line;
	while (n < nf) {
		int q = *p == '"';
		if (q)
			p++;
		f[n++] = p;
		while (*p && (q ? *p != '"' : *p != ',' && *p != '\n' && *p != '\r'))
			p++;
		if (q && *p == '"')
			*p++ = '\0';
		if (*p != ',') {
			*p = '\0';
			break;
		}
		*p++ = '\0';
	}
	return n;
}

#endif
