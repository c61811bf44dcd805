/* sha256.h - SHA-256 (FIPS 180-4), for the digests of input files that every
 * JSON result carries, so that a number can be traced to what produced it. */
#ifndef CAPSIM_SHA256_H
#define CAPSIM_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct capsim_sha256 {
	uint32_t h[8];
	uint64_t bytes;
	uint8_t block[64];
	size_t used;
} capsim_sha256;

void capsim_sha256_init(capsim_sha256 *c);
void capsim_sha256_update(capsim_sha256 *c, const void *data, size_t len);
/* Writes the digest as 64 lowercase hex digits and a NUL into hex[65]. */
void capsim_sha256_final_hex(capsim_sha256 *c, char hex[65]);

/* Digest of a buffer, as hex. */
void capsim_sha256_hex(const void *data, size_t len, char hex[65]);

#endif
