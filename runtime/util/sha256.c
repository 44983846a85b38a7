/* SHA-256 through nettle: no initialisation, no configuration file read,
 * statically linked with the other dependencies, so hashing a cache key on
 * the start path costs microseconds (libcrypto's init cost about 1 ms). */
#include "sha256.h"

#include <stdio.h>

#include <nettle/sha2.h>

_Static_assert(BRIG_SHA256_LEN == SHA256_DIGEST_SIZE, "SHA-256 digest size");

void brig_sha256(const void *data, size_t len, uint8_t out[BRIG_SHA256_LEN])
{
    struct sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, len, data);
    sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}

char *brig_sha256_hex(const uint8_t d[BRIG_SHA256_LEN], char *buf)
{
    for (size_t i = 0; i < BRIG_SHA256_LEN; i++) snprintf(buf + 2 * i, 3, "%02x", d[i]);
    return buf;
}
