/* brig-egress-tls, the egress proxy's TLS helper (egress_tls_proto.h has
 * what it and the proxy say): the files of the helper only. */
#ifndef BRIG_EGRESS_TLS_H
#define BRIG_EGRESS_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#include "../egress_tls_proto.h"

struct tls_cred {
    char *host;
    uint16_t port;
    char *header, *prefix;
    char *secret;
    size_t n_secret;
};

/* tls_redact.c: the response passed on with every occurrence of the
 * secret masked ('*' for each byte: lengths, and so the response's
 * framing, stay as the server sent them). A tail that may be the start of
 * an occurrence is held back until the next bytes tell (or the end); a
 * tail that cannot be (an SSE event's blank line) is never held. */
struct tls_redact {
    const char *secret;
    size_t n;
    char held[TLS_SECRET_MAX];
    size_t n_held;
};
void tls_redact_init(struct tls_redact *r, const char *secret, size_t n);
/* in[0..len) after what is held: what can be passed on now goes into out
 * (room for len + TLS_SECRET_MAX bytes); its length. */
size_t tls_redact_feed(struct tls_redact *r, const char *in, size_t len, char *out);
/* At the end: what is held, into out. */
size_t tls_redact_flush(struct tls_redact *r, char *out);

/* tls_pump.c: one request. up is the TCP connection to cred's host:port,
 * plain the proxy's side; head (no blank line) is sent with cred's header.
 * Closes neither. */
void tls_serve(SSL_CTX *ctx, const struct tls_cred *cred, int up, int plain, const char *head, size_t head_len,
               const char *setup_error);

#endif
