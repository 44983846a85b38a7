/* The secret masked in what the credential's host answers (tls.h). A host
 * that echoes request headers (an error that quotes them, a debugging
 * endpoint) would otherwise hand the sandbox the very value the proxy
 * keeps from it. This holds for the value as sent; a host that transforms
 * what it echoes (encodes, compresses, splits it) is out of its reach,
 * which is why a credential names the one host it is for. */
#include "tls.h"

#include <string.h>

void tls_redact_init(struct tls_redact *r, const char *secret, size_t n)
{
    r->secret = secret;
    r->n = n < sizeof(r->held) ? n : sizeof(r->held) - 1;
    r->n_held = 0;
}

size_t tls_redact_feed(struct tls_redact *r, const char *in, size_t len, char *out)
{
    memcpy(out, r->held, r->n_held);
    memcpy(out + r->n_held, in, len);
    size_t total = r->n_held + len;
    r->n_held = 0;
    for (char *p = out; (p = memmem(p, (size_t)(out + total - p), r->secret, r->n)) != NULL; p += r->n)
        memset(p, '*', r->n);
    /* The longest tail (shorter than the secret) that begins it. */
    size_t keep = r->n - 1 < total ? r->n - 1 : total;
    while (keep > 0 && memcmp(out + total - keep, r->secret, keep) != 0) keep--;
    memcpy(r->held, out + total - keep, keep);
    r->n_held = keep;
    return total - keep;
}

size_t tls_redact_flush(struct tls_redact *r, char *out)
{
    size_t n = r->n_held;
    memcpy(out, r->held, n);
    r->n_held = 0;
    return n;
}
