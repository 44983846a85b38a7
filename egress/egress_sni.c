/* The TLS server name (SNI) of a CONNECT tunnel's first record, compared
 * with the name CONNECT asked for (docs/egress.md): a client that says
 * CONNECT allowed.example.com and then asks the server at that address for
 * another virtual host (domain fronting on a shared CDN address) is cut
 * off. The record is read whole before a byte of it goes upstream, then
 * sent on exactly as the client sent it. A protocol where the server
 * speaks first (SSH, SMTP) is not TLS: the check stands aside when the
 * upstream has bytes before the client's first record is whole. Nothing
 * is let through unjudged for lack of time: the first byte may come
 * whenever the client likes (waiting costs a blocked thread, no CPU), but
 * a record begun must be whole within the deadline, else the tunnel is
 * cut (a client that stalls mid-record, then sends another name, is
 * judged by a record it never completed). A second ClientHello that
 * answers a TLS 1.3 HelloRetryRequest is judged too (sni_follow). TLS 1.3
 * ECH hides the inner name: the outer SNI is what is judged. */
#include "egress_internal.h"

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "../runtime/util/strutil.h"

#define SNI_RECORD_MAX (5 + (16u << 10))   /* a whole record: header + 2^14 */

/* The server_name of a ClientHello in buf (one TLS record, complete):
 * 1 found (into out), 0 none, -2 a server_name that is not one host
 * name, -3 a handshake message other than a ClientHello, -1 the
 * ClientHello is not whole in this record (split over records, even
 * after its first byte, an empty record, or cut at SNI_RECORD_MAX): a
 * server joins the pieces, so a name in a later piece would be fronting
 * unseen.
 * RFC 8446 4.1.2 and 5.1, RFC 6066 3. */
static int sni_parse(const unsigned char *b, size_t n, char *out, size_t len)
{
    size_t p = 5 + 4 + 2 + 32;          /* record, handshake header, version, random */
    /* Less than a handshake header (an empty record, or the type byte
     * alone): the ClientHello is in later records, which a server joins. */
    if (n < 9) return -1;
    if (b[5] != 1) return -3;           /* a client's first handshake message is its ClientHello */
    if (9 + ((size_t)b[6] << 16 | (size_t)b[7] << 8 | b[8]) > n) return -1;
    if (n < p + 1) return 0;
    p += 1 + b[p];                      /* session id */
    if (p + 2 > n) return 0;
    p += 2 + ((size_t)b[p] << 8 | b[p + 1]);        /* cipher suites */
    if (p + 1 > n) return 0;
    p += 1 + b[p];                      /* compression methods */
    if (p + 2 > n) return 0;
    size_t end = p + 2 + ((size_t)b[p] << 8 | b[p + 1]);
    p += 2;
    if (end > n) end = n;
    while (p + 4 <= end) {
        unsigned type = (unsigned)b[p] << 8 | b[p + 1];
        size_t elen = (size_t)b[p + 2] << 8 | b[p + 3];
        p += 4;
        if (p + elen > end) return 0;
        if (type == 0) {
            /* Exactly one host_name entry (RFC 6066 3): a server that skips
             * an entry of another type would take a host_name after it. */
            size_t nl = elen >= 5 ? (size_t)b[p + 3] << 8 | b[p + 4] : 0;
            if (elen < 5 || b[p + 2] != 0 || nl == 0 || 5 + nl != elen || nl >= len) return -2;
            /* A NUL would end the name compared here but not the one a
             * server reads ("allowed\0.evil"): never equal to a name. */
            for (size_t i = 0; i < nl; i++) out[i] = b[p + 5 + i] ? (char)tolower(b[p + 5 + i]) : '?';
            out[nl] = '\0';
            if (nl > 1 && out[nl - 1] == '.') out[nl - 1] = '\0';
            return 1;
        }
        p += elen;
    }
    return 0;
}

static int sni_judge(struct egress_conn *c, const unsigned char *b, size_t n)
{
    char sni[EGRESS_NAME_MAX + 2];
    int found = sni_parse(b, n, sni, sizeof(sni));
    if (found == -2) {
        snprintf(c->why, sizeof(c->why), "a TLS server_name extension that is not one host name");
        return -1;
    }
    if (found == -3) {
        snprintf(c->why, sizeof(c->why), "a TLS handshake record that does not begin with a ClientHello");
        return -1;
    }
    if (found < 0) {
        snprintf(c->why, sizeof(c->why), "a TLS ClientHello not whole in its first record (its name is not seen)");
        return -1;
    }
    if (found == 0 || strcmp(sni, c->name) == 0) return 0;
    snprintf(c->why, sizeof(c->why), "TLS server name \"%.200s\" is not the CONNECT name", sni);
    return -1;
}

/* The first record's length once its header is in (capped: a longer one
 * is judged on its first SNI_RECORD_MAX bytes, where sni_parse finds the
 * ClientHello not whole), 0 before. */
static size_t sni_record_len(const unsigned char *b, size_t n)
{
    if (n < 5) return 0;
    size_t need = 5 + ((size_t)b[3] << 8 | b[4]);
    return need > SNI_RECORD_MAX ? SNI_RECORD_MAX : need;
}

/* A TLS record of another type than handshake (22), by its header: its
 * name, NULL when b is not one (not TLS: not judged), "" when it is too
 * short to tell. A server may read such a record before the ClientHello
 * and go on (Go's crypto/tls drops a warning alert there), so one sent
 * first would carry the ClientHello past the check. */
static const char *sni_other_record(const unsigned char *b, size_t n)
{
    static const char *const types[] = { "change_cipher_spec", "alert", NULL, "application_data", "heartbeat" };
    if (b[0] < 20 || b[0] > 24 || b[0] == 22) return NULL;
    if (n < 3) return "";
    return b[1] == 3 && b[2] <= 4 ? types[b[0] - 20] : NULL;     /* TLS 1.0-1.3, SSL 3 headers */
}

/* RFC 8446 4.1.3: a ServerHello with this random is a HelloRetryRequest. */
static const unsigned char sni_hrr_random[32] = {
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
};

/* After the first ClientHello: the handshake followed until the server's
 * first record says whether another ClientHello comes in the clear. */
struct sni_follow {
    unsigned char *b;           /* the client's bytes not sent upstream yet */
    size_t n, cap;
    size_t pass;                /* bytes of the record at b still to pass on unread */
    unsigned char sh[43];       /* the server's first bytes: record and handshake headers, version, random */
    size_t shn;
    enum { SNI_SERVER_UNKNOWN, SNI_SERVER_RETRY, SNI_SERVER_OTHER } server;
    bool judged_after_retry;    /* the ClientHello that answers a HelloRetryRequest was judged */
    uint64_t deadline;          /* a ClientHello record begun must be whole by then */
};

/* len bytes to fd, taken from network.maxBytes: false when it is spent
 * (or fd is gone), and the relay after this ends the connection. */
static bool sni_send(struct egress_conn *c, int fd, const void *buf, size_t len, uint64_t *count)
{
    size_t got = egress_budget_take(c->ctx, len);
    if (got < len || egress_write_all(fd, buf, len) < 0) {
        egress_budget_refund(c->ctx, got);
        return false;
    }
    *count += len;
    return true;
}

/* The client's records in f->b, in order: a record that begins a
 * ClientHello is judged whole (a server takes a ClientHello only at the
 * start of a handshake message, and rejects any other message where it
 * waits for one), every other record is passed on as it comes. 0: wait
 * for bytes; -1: refused (c->why); -2: stop following (maxBytes). */
static int sni_client(struct egress_conn *c, struct sni_follow *f)
{
    for (;;) {
        if (f->pass > 0 && f->n > 0) {
            size_t k = f->pass < f->n ? f->pass : f->n;
            if (!sni_send(c, c->upstream, f->b, k, &c->up)) return -2;
            memmove(f->b, f->b + k, f->n - k);
            f->n -= k;
            f->pass -= k;
            continue;
        }
        if (f->pass > 0 || f->n < 6) return 0;
        size_t rl = 5 + ((size_t)f->b[3] << 8 | f->b[4]);
        if (f->b[0] == 0x16 && f->b[5] == 1) {
            size_t need = rl > SNI_RECORD_MAX ? SNI_RECORD_MAX : rl;
            if (f->n < need) {
                if (f->deadline == 0) f->deadline = egress_now_ms() + c->ctx->tls_wait_ms;
                return 0;
            }
            if (sni_judge(c, f->b, need) < 0) return -1;
            f->deadline = 0;
            if (f->server == SNI_SERVER_RETRY) f->judged_after_retry = true;
        }
        f->pass = rl;
    }
}

/* The server's bytes, passed on to the client; its first record tells
 * whether it asked for a second ClientHello. false: stop following. */
static bool sni_server(struct egress_conn *c, struct sni_follow *f, const unsigned char *buf, size_t len)
{
    for (size_t i = 0; i < len && f->shn < sizeof(f->sh); i++) f->sh[f->shn++] = buf[i];
    if (f->server == SNI_SERVER_UNKNOWN && f->shn >= 5) {
        size_t rl = (size_t)f->sh[3] << 8 | f->sh[4];
        if (f->sh[0] != 0x16 || rl < sizeof(f->sh) - 5) f->server = SNI_SERVER_OTHER;
        else if (f->shn == sizeof(f->sh))
            f->server = f->sh[5] == 2 && memcmp(f->sh + 11, sni_hrr_random, 32) == 0 ? SNI_SERVER_RETRY
                                                                                      : SNI_SERVER_OTHER;
    }
    return sni_send(c, c->client, buf, len, &c->down);
}

/* TLS 1.3 lets a server answer the first ClientHello with a
 * HelloRetryRequest; the client's second ClientHello comes in the clear,
 * and a server takes its name (OpenSSL runs its SNI callback again). So
 * the check follows the tunnel until the server's first record: another
 * answer ends it (what comes after is encrypted, or the server's), a
 * HelloRetryRequest makes it judge the next ClientHello too. Every
 * ClientHello the client sends meanwhile is judged as the first. b holds
 * n bytes from the client, the first record (judged) first; *left: what
 * is still to go upstream, at b. 0, or -1 refused (c->why). */
static int sni_follow(struct egress_conn *c, unsigned char *b, size_t n, size_t cap, size_t first, size_t *left)
{
    struct sni_follow f = { .b = b, .n = n, .cap = cap, .pass = first };
    unsigned char buf[4096];
    int rc = 0;
    for (;;) {
        int r = sni_client(c, &f);
        if (r == -1) rc = -1;
        if (r < 0 || f.server == SNI_SERVER_OTHER || f.judged_after_retry) break;
        uint64_t now = egress_now_ms();
        if (f.deadline != 0 && now >= f.deadline) {
            snprintf(c->why, sizeof(c->why), "a TLS record still partial after %u ms (its name is not seen)",
                     c->ctx->tls_wait_ms);
            rc = -1;
            break;
        }
        struct pollfd pf[2] = { { .fd = f.n < f.cap ? c->client : -1, .events = POLLIN },
                                { .fd = c->upstream, .events = POLLIN } };
        int p = poll(pf, 2, f.deadline != 0 ? (int)(f.deadline - now) : -1);
        if (p < 0 && errno != EINTR) break;      /* the relay sees what is wrong */
        if (p <= 0) continue;
        if (pf[0].revents) {
            ssize_t got = recv(c->client, f.b + f.n, f.cap - f.n, MSG_DONTWAIT);
            if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) break;   /* EOF: relayed as is */
            if (got > 0) f.n += (size_t)got;
        }
        if (pf[1].revents) {
            ssize_t got = recv(c->upstream, buf, sizeof(buf), MSG_DONTWAIT);
            if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) break;
            if (got > 0 && !sni_server(c, &f, buf, (size_t)got)) break;
        }
    }
    *left = f.n;
    return rc;
}

int egress_sni_check(struct egress_conn *c, const char *pending, size_t n_pending, char **first, size_t *n_first)
{
    size_t cap = n_pending > SNI_RECORD_MAX ? n_pending : SNI_RECORD_MAX, n = n_pending;
    unsigned char *b = brig_calloc(1, cap);
    if (n_pending > 0) memcpy(b, pending, n_pending);     /* SOCKS5: none (NULL) */
    *first = (char *)b;
    uint64_t deadline = 0;
    for (;;) {
        *n_first = n;
        const char *other = n > 0 ? sni_other_record(b, n) : NULL;
        if (other != NULL && other[0] != '\0') {
            snprintf(c->why, sizeof(c->why), "a TLS %s record before the ClientHello (its name is not seen)", other);
            return -1;
        }
        if (n > 0 && b[0] != 0x16 && other == NULL) return 0;      /* not TLS */
        size_t need = other == NULL ? sni_record_len(b, n) : 0;
        if (need > 0 && n >= need) {
            if (sni_judge(c, b, need) < 0) return -1;
            return sni_follow(c, b, n, cap, need, n_first);
        }
        uint64_t now = egress_now_ms();
        if (n > 0 && deadline == 0) deadline = now + c->ctx->tls_wait_ms;
        if (deadline != 0 && now >= deadline) {
            snprintf(c->why, sizeof(c->why), "a TLS record still partial after %u ms (its name is not seen)",
                     c->ctx->tls_wait_ms);
            return -1;
        }
        /* Only bytes not read yet wake this poll: it sleeps until more come. */
        struct pollfd pf[2] = { { .fd = c->client, .events = POLLIN }, { .fd = c->upstream, .events = POLLIN } };
        int r = poll(pf, 2, deadline != 0 ? (int)(deadline - now) : -1);
        if (r < 0 && errno != EINTR) return 0;      /* the relay sees what is wrong */
        if (r <= 0) continue;
        if (pf[1].revents) return 0;    /* the server speaks first: not TLS */
        ssize_t got = recv(c->client, b + n, cap - n, MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) return 0;  /* EOF, reset: relayed as is */
        if (got > 0) n += (size_t)got;
    }
}
