/* hmap.c - see hmap.h. */
#include "hmap.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mix.h"
#include "xalloc.h"

static size_t slot_of(const capsim_hmap *m, uint64_t key)
{
	return (size_t)capsim_mix64(key) & (m->cap - 1);
}

static void rehash(capsim_hmap *m, size_t cap)
{
	uint64_t *ok = m->keys;
	int32_t *ov = m->vals;
	size_t ocap = m->cap;
	m->keys = capsim_xmalloc(cap * sizeof *m->keys);
	m->vals = capsim_xmalloc(cap * sizeof *m->vals);
	memset(m->vals, 0xff, cap * sizeof *m->vals); /* every slot -1 */
	m->cap = cap;
	size_t moved = 0;
	for (size_t i = 0; i < ocap; i++) {
		if (ov[i] < 0)
			continue;
		size_t j = slot_of(m, ok[i]);
		while (m->vals[j] >= 0)
			j = (j + 1) & (cap - 1);
		m->keys[j] = ok[i];
		m->vals[j] = ov[i];
		moved++;
	}
	/* every entry moved, none lost or doubled */
	CAPSIM_ASSERT(moved == m->n);
	free(ok);
	free(ov);
}

void capsim_hmap_free(capsim_hmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

void capsim_hmap_clear(capsim_hmap *m)
{
	if (m->cap)
		memset(m->vals, 0xff, m->cap * sizeof *m->vals);
	m->n = 0;
}

int32_t capsim_hmap_get(const capsim_hmap *m, uint64_t key)
{
	if (!m->n)
		return -1;
	for (size_t j = slot_of(m, key);; j = (j + 1) & (m->cap - 1)) {
		if (m->vals[j] < 0)
			return -1;
		if (m->keys[j] == key)
			return m->vals[j];
	}
}

/* the slot holding key, or the empty one where it goes */
static size_t find(capsim_hmap *m, uint64_t key)
{
	if (2 * (m->n + 1) > m->cap)
		rehash(m, m->cap ? 2 * m->cap : 16);
	/* a power of two, under half full: probing always meets an empty slot */
	CAPSIM_ASSERT((m->cap & (m->cap - 1)) == 0 && 2 * m->n < m->cap);
	size_t j = slot_of(m, key);
	while (m->vals[j] >= 0 && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	return j;
}

int32_t capsim_hmap_get_or_put(capsim_hmap *m, uint64_t key, int32_t v)
{
	CAPSIM_ASSERT(v >= 0); /* -1 marks an empty slot */
	size_t j = find(m, key);
	if (m->vals[j] >= 0)
		return m->vals[j];
	m->keys[j] = key;
	m->vals[j] = v;
	m->n++;
	return v;
}

void capsim_hmap_set(capsim_hmap *m, uint64_t key, int32_t v)
{
	CAPSIM_ASSERT(v >= 0); /* -1 marks an empty slot */
	size_t j = find(m, key);
	if (m->vals[j] < 0)
		m->n++;
	m->keys[j] = key;
	m->vals[j] = v;
}
