/* The TLS server name (SNI) of a CONNECT tunnel's first bytes, compared
 * with the name CONNECT asked for (docs/egress.md): a client that says
 * CONNECT allowed.example.com and then asks the server at that address for
 * another virtual host (domain fronting on a shared CDN address) is cut
 * off. The bytes are only peeked (MSG_PEEK): what reaches the server is
 * exactly what the client sent. A protocol where the server speaks first
 * (SSH, SMTP) is not TLS: the check stands aside when the upstream has
 * bytes before the client. TLS 1.3 ECH hides the inner name: the outer
 * SNI is what is judged. */
#include "egress_internal.h"

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define SNI_PEEK_MAX (5 + (16u << 10))     /* a whole record: header + 2^14 */
#define SNI_WAIT_MS 10000

/* The server_name of a ClientHello in buf (one TLS record, complete):
 * 1 found (into out), 0 none, -2 a server_name that is not one host
 * name, -1 the ClientHello is not whole in this
 * record (split over records, or cut at SNI_PEEK_MAX): a server joins the
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

int egress_sni_check(struct egress_conn *c, const char *pending, size_t n_pending)
{
    if (n_pending > 0) {
        /* Sent with the CONNECT, before the 200: judged as it is. */
        const unsigned char *b = (const unsigned char *)pending;
        if (b[0] != 0x16) return 0;
        if (n_pending < 5 || n_pending < 5 + ((size_t)b[3] << 8 | b[4])) {
            snprintf(c->why, sizeof(c->why), "a TLS record cut short behind the CONNECT request");
            return -1;
        }
        return sni_judge(c, b, 5 + ((size_t)b[3] << 8 | b[4]));    /* the first record only */
    }
    static __thread unsigned char buf[SNI_PEEK_MAX];
    uint64_t start = egress_now_ms();
    for (;;) {
        long left = (long)(start + SNI_WAIT_MS) - (long)egress_now_ms();
        if (left <= 0) return 0;        /* a silent client: nothing to judge */
        struct pollfd pf[2] = { { .fd = c->client, .events = POLLIN }, { .fd = c->upstream, .events = POLLIN } };
        if (poll(pf, 2, (int)left) <= 0) continue;
        if (pf[1].revents) return 0;    /* the server speaks first: not TLS */
        ssize_t n = recv(c->client, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
        if (n <= 0) return 0;           /* EOF or an error: the relay sees it */
        if (buf[0] != 0x16) return 0;   /* not a TLS handshake record */
        if (n < 5) continue;
        size_t need = 5 + ((size_t)buf[3] << 8 | buf[4]);
        if (need > sizeof(buf)) need = sizeof(buf);
        if ((size_t)n < need) {
            /* The rest of the record is on its way: wait for more bytes. */
            struct pollfd more = { .fd = c->client, .events = POLLIN };
            poll(&more, 1, 50);
            continue;
        }
        return sni_judge(c, buf, need);
    }
}
