/* SHA-256 (nettle) for the seccomp cache's keys and checksums. */
#ifndef BRIG_SHA256_H
#define BRIG_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define BRIG_SHA256_LEN 32

/* One call: out = SHA-256(data). */
void brig_sha256(const void *data, size_t len, uint8_t out[BRIG_SHA256_LEN]);
/* Lower-case hex of a digest into buf (>= 65 bytes). */
char *brig_sha256_hex(const uint8_t d[BRIG_SHA256_LEN], char *buf);

#endif
