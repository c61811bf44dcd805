/* mix.h - a fixed 64-bit mixing function (the splitmix64 finaliser, Steele,
 * Lea and Flood, OOPSLA 2014): the same hash on every machine, for ECMP
 * choices and symmetry colouring. */
#ifndef CAPSIM_MIX_H
#define CAPSIM_MIX_H

#include <stdint.h>

static inline uint64_t capsim_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

#endif
