/* suggest.c - "did you mean": the nearest of a list of names to a word the
 * user mistyped, by edit distance. */
#include <string.h>

#include "cli.h"

/* the longest word compared; longer ones are never near anything */
#define MAX_WORD 64

size_t capsim_cli_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > MAX_WORD || lb > MAX_WORD)
		return (size_t)-1;
	/* three rows of the optimal-string-alignment table: i - 2, i - 1, i */
	size_t rows[3][MAX_WORD + 1];
	for (size_t j = 0; j <= lb; j++)
		rows[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *cur = rows[i % 3], *prev = rows[(i + 2) % 3], *prev2 = rows[(i + 1) % 3];
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t best = prev[j - 1] + cost;
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1; /* two letters swapped */
			cur[j] = best;
		}
	}
	return rows[la % 3][lb];
}

/* whether a word at distance d from a name of length len is near enough to
 * suggest: at most 2 edits, and fewer than half its letters */
static int near_enough(size_t d, size_t len)
{
	return d <= 2 && 2 * d < len;
}

const char *capsim_cli_nearest(const char *word, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		size_t d = capsim_cli_edit_distance(word, names[i]);
		if (d < best_d && near_enough(d, strlen(names[i]))) {
			best = names[i];
			best_d = d;
		}
	}
	return best;
}
