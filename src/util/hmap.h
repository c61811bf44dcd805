/* hmap.h - an open-addressing hash map from 64-bit keys to non-negative
 * 32-bit values (linear probing, power-of-two table kept under half full).
 * For sparse tables indexed by link ids, and for numbering hashed colours
 * densely in the order they are first seen. The caller owns the struct;
 * zero-initialised it is an empty map. */
#ifndef CAPSIM_HMAP_H
#define CAPSIM_HMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct capsim_hmap {
	uint64_t *keys;
	int32_t *vals;  /* -1: empty slot */
	size_t cap, n;  /* slots (0 or a power of two), entries */
} capsim_hmap;

void capsim_hmap_free(capsim_hmap *m);
/* Forget every entry, keeping the table (O(slots)). */
void capsim_hmap_clear(capsim_hmap *m);

/* The value of key, or -1. */
int32_t capsim_hmap_get(const capsim_hmap *m, uint64_t key);
/* The value of key; absent, key gets v (>= 0) and v is returned. */
int32_t capsim_hmap_get_or_put(capsim_hmap *m, uint64_t key, int32_t v);
/* Set key's value to v (>= 0), inserting it if absent. */
void capsim_hmap_set(capsim_hmap *m, uint64_t key, int32_t v);

#endif
