/* SHA-256 (FIPS 180-4), small and dependency-free: names cache entries on
 * the start path, where loading and initialising libcrypto would cost more
 * (about 1 ms, reading openssl.cnf) than hashing a few kilobytes. */
#ifndef BRIG_SHA256_H
#define BRIG_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define BRIG_SHA256_LEN 32

struct brig_sha256 {
    uint32_t h[8];
    uint64_t total;         /* bytes fed so far */
    uint8_t block[64];
    size_t used;            /* bytes waiting in block */
};

void brig_sha256_init(struct brig_sha256 *c);
void brig_sha256_update(struct brig_sha256 *c, const void *data, size_t len);
void brig_sha256_final(struct brig_sha256 *c, uint8_t out[BRIG_SHA256_LEN]);
/* One call: out = SHA-256(data). */
void brig_sha256(const void *data, size_t len, uint8_t out[BRIG_SHA256_LEN]);
/* Lower-case hex of a digest into buf (>= 65 bytes). */
char *brig_sha256_hex(const uint8_t d[BRIG_SHA256_LEN], char *buf);

#endif
