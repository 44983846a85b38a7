/* The SOCKS5 proxy (RFC 1928): no authentication, CONNECT only, to a
 * domain name (judged by the name rules, resolved by the proxy: what
 * socks5h:// clients send), an IPv4 or an IPv6 address (judged as an
 * address; an IPv4-mapped IPv6 one as the IPv4 address it carries). */
#include "egress_internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "../runtime/util/cleanup.h"

#define SOCKS_TIMEOUT_MS 30000

enum {
    SOCKS_OK = 0x00, SOCKS_FAIL = 0x01, SOCKS_NOT_ALLOWED = 0x02, SOCKS_HOST_UNREACHABLE = 0x04,
    SOCKS_REFUSED = 0x05, SOCKS_BAD_COMMAND = 0x07, SOCKS_BAD_ATYP = 0x08,
};

static int socks_read(struct egress_conn *c, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = egress_read_some(c->client, (char *)buf + got, n - got, SOCKS_TIMEOUT_MS);
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

static void socks_reply(struct egress_conn *c, uint8_t rep)
{
    const uint8_t r[10] = { 5, rep, 0, 1, 0, 0, 0, 0, 0, 0 };
    egress_write_all(c->client, r, sizeof(r));
}

static void socks_refuse(struct egress_conn *c, uint8_t rep, const char *decision)
{
    socks_reply(c, rep);
    egress_audit(c, decision);
}

void egress_socks_serve(struct egress_conn *c)
{
    c->proto = EGRESS_PROTO_SOCKS;
    uint8_t hello[2], methods[255];
    if (socks_read(c, hello, 2) < 0 || hello[0] != 5 || hello[1] == 0 || socks_read(c, methods, hello[1]) < 0)
        return;     /* not SOCKS5: nothing to answer */
    if (memchr(methods, 0, hello[1]) == NULL) {
        const uint8_t no[2] = { 5, 0xff };
        egress_write_all(c->client, no, 2);
        return;
    }
    const uint8_t yes[2] = { 5, 0 };
    uint8_t req[4];
    if (egress_write_all(c->client, yes, 2) < 0 || socks_read(c, req, 4) < 0 || req[0] != 5) return;
    char host[256 + 1] = "";       /* a SOCKS5 name is at most 255 bytes */
    uint8_t raw[256];
    if (req[3] == 1) {
        if (socks_read(c, raw, 4) < 0) return;
        inet_ntop(AF_INET, raw, host, sizeof(host));
    } else if (req[3] == 4) {
        if (socks_read(c, raw, 16) < 0) return;
        inet_ntop(AF_INET6, raw, host, sizeof(host));
    } else if (req[3] == 3) {
        uint8_t len;
        if (socks_read(c, &len, 1) < 0 || len == 0 || socks_read(c, raw, len) < 0) return;
        if (memchr(raw, '\0', len) != NULL) {
            snprintf(c->why, sizeof(c->why), "a NUL in the domain name");
            return socks_refuse(c, SOCKS_NOT_ALLOWED, "deny");
        }
        memcpy(host, raw, len);
        host[len] = '\0';
    } else {
        snprintf(c->why, sizeof(c->why), "address type %u", req[3]);
        return socks_refuse(c, SOCKS_BAD_ATYP, "error");
    }
    uint8_t pb[2];
    if (socks_read(c, pb, 2) < 0) return;
    uint16_t port = (uint16_t)(pb[0] << 8 | pb[1]);
    if (req[1] != 1) {
        snprintf(c->name, sizeof(c->name), "%s", host);
        c->port = port;
        snprintf(c->why, sizeof(c->why), "SOCKS command %u (only CONNECT)", req[1]);
        return socks_refuse(c, SOCKS_BAD_COMMAND, "deny");
    }
    c->upstream = egress_dial(c, host, port);
    if (c->upstream < 0) {
        uint8_t rep = c->fail == EGRESS_DENIED || c->fail == EGRESS_BAD ? SOCKS_NOT_ALLOWED
                    : c->fail == EGRESS_UNRESOLVED ? SOCKS_HOST_UNREACHABLE : SOCKS_REFUSED;
        return socks_refuse(c, rep, c->fail == EGRESS_DENIED || c->fail == EGRESS_BAD ? "deny" : "error");
    }
    socks_reply(c, SOCKS_OK);
    struct egress_addr ip;
    char ignored[EGRESS_NAME_MAX + 2];
    autofree char *first = NULL;
    size_t nfirst = 0;
    if (egress_host_parse(host, ignored, sizeof(ignored), &ip) == EGRESS_HOST_NAME &&
        egress_sni_check(c, NULL, 0, &first, &nfirst) < 0)
        return egress_audit(c, "deny");
    egress_relay(c, first, nfirst, EGRESS_RELAY_ALL);
    egress_audit(c, "allow");
}
