/* results.c - sweep results; see results.h. */
