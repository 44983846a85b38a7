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
 * judged by a record it never completed). TLS 1.3 ECH hides the inner
 * name: the outer SNI is what is judged. */
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
 * name, -1 the ClientHello is not whole in this
 * record (split over records, or cut at SNI_RECORD_MAX): a server joins the
 * pieces, so a name in a later piece would be fronting unseen.
 * RFC 8446 4.1.2 and 5.1, RFC 6066 3. */
static int sni_parse(const unsigned char *b, size_t n, char *out, size_t len)
{
    size_t p = 5 + 4 + 2 + 32;          /* record, handshake header, version, random */
    if (n < 9 || b[5] != 1) return 0;
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

int egress_sni_check(struct egress_conn *c, const char *pending, size_t n_pending, char **first, size_t *n_first)
{
    size_t cap = n_pending > SNI_RECORD_MAX ? n_pending : SNI_RECORD_MAX, n = n_pending;
    unsigned char *b = brig_calloc(1, cap);
    if (n_pending > 0) memcpy(b, pending, n_pending);     /* SOCKS5: none (NULL) */
    *first = (char *)b;
    uint64_t deadline = 0;
    for (;;) {
        *n_first = n;
        if (n > 0 && b[0] != 0x16) return 0;        /* not a TLS handshake record */
        size_t need = sni_record_len(b, n);
        if (need > 0 && n >= need) return sni_judge(c, b, need);
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
