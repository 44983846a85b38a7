/* Addresses of the egress rules: strict literals, and the ranges that are
 * never reached by name (docs/egress.md, "What is refused"): loopback,
 * link-local (the cloud metadata service at 169.254.169.254), private,
 * CGNAT, ULA, multicast and the forms that embed an IPv4 address another
 * way than ::ffff:0:0/96 (NAT64, 6to4, IPv4-compatible); and the
 * documentation ranges (RFC 5737, RFC 3849) and the cloud metadata
 * services outside link-local, reached only when a rule names the exact
 * address and port. IPv4 is kept as IPv4-mapped IPv6, so
 * "::ffff:127.0.0.1" is 127.0.0.1 everywhere. */
#include "egress_rules.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

bool egress_addr_is_v4(const struct egress_addr *a)
{
    return memcmp(a->b, v4_mapped, 12) == 0;
}

/* a.b.c.d, four decimal parts 0..255 without leading zeros: what every
 * client means by an IPv4 address, and nothing inet_aton also reads. */
static int ranges_parse_v4(const char *s, uint8_t out[4])
{
    for (int i = 0; i < 4; i++) {
        if (*s < '0' || *s > '9') return -1;
        unsigned v = 0, digits = 0;
        const char *start = s;
        while (*s >= '0' && *s <= '9') {
            v = v * 10 + (unsigned)(*s++ - '0');
            if (++digits > 3) return -1;
        }
        if (v > 255 || (digits > 1 && *start == '0')) return -1;
        out[i] = (uint8_t)v;
        if (i < 3 && *s++ != '.') return -1;
    }
    return *s == '\0' ? 0 : -1;
}

int egress_addr_parse(const char *s, struct egress_addr *out)
{
    uint8_t v4[4];
    if (ranges_parse_v4(s, v4) == 0) {
        memcpy(out->b, v4_mapped, 12);
        memcpy(out->b + 12, v4, 4);
        return 0;
    }
    if (strchr(s, ':') == NULL || strchr(s, '%') != NULL) return -1;   /* no zone ids */
    struct in6_addr a6;
    if (inet_pton(AF_INET6, s, &a6) != 1) return -1;
    memcpy(out->b, &a6, 16);
    return 0;
}

void egress_addr_format(const struct egress_addr *a, char *out, size_t len)
{
    if (egress_addr_is_v4(a)) {
        snprintf(out, len, "%u.%u.%u.%u", a->b[12], a->b[13], a->b[14], a->b[15]);
        return;
    }
    if (inet_ntop(AF_INET6, a->b, out, (socklen_t)len) == NULL) snprintf(out, len, "?");
}

struct range {
    uint8_t b[16];
    unsigned prefix;        /* on the IPv6 form */
    const char *name;
    bool private_class;
    bool exact;             /* only an allow rule of the exact address and port */
};

#define V4(a, b2, c, d, len, name, priv) \
    { { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b2, c, d }, 96 + (len), name, priv, false }
#define DOC4(a, b2, c) { { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b2, c, 0 }, 120, "documentation", false, true }
/* A cloud's metadata service at an address outside link-local: in CGNAT,
 * ULA (which privateRanges opens to allowed names) or public space. */
#define META4(a, b2, c, d) { { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b2, c, d }, 128, "cloud metadata", false, true }

static const struct range ranges[] = {
    V4(0, 0, 0, 0, 8, "unspecified", false),
    V4(10, 0, 0, 0, 8, "private", true),
    V4(100, 64, 0, 0, 10, "cgnat", true),
    V4(127, 0, 0, 0, 8, "loopback", false),
    V4(169, 254, 0, 0, 16, "link-local", false),
    V4(172, 16, 0, 0, 12, "private", true),
    V4(192, 0, 0, 0, 24, "special", false),
    V4(192, 168, 0, 0, 16, "private", true),
    V4(198, 18, 0, 0, 15, "benchmark", false),
    V4(224, 0, 0, 0, 4, "multicast", false),
    V4(240, 0, 0, 0, 4, "reserved", false),
    DOC4(192, 0, 2), DOC4(198, 51, 100), DOC4(203, 0, 113),
    { { 0x20, 0x01, 0x0d, 0xb8 }, 32, "documentation", false, true },
    META4(100, 100, 100, 200),      /* Alibaba Cloud ECS */
    META4(168, 63, 129, 16),        /* Azure WireServer */
    { { 0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54 }, 128, "cloud metadata", false, true },  /* AWS IMDS, fd00:ec2::254 */
    { { 0xfd, 0x20, 0x00, 0xce, [14] = 0x02, [15] = 0x54 }, 128, "cloud metadata", false, true },  /* GCP, fd20:ce::254 */
    { { 0 }, 128, "unspecified", false, false },
    { { [15] = 1 }, 128, "loopback", false, false },
    { { 0 }, 96, "ipv4-compatible", false, false },
    { { 0, 0x64, 0xff, 0x9b }, 96, "nat64", false, false },
    { { 0, 0x64, 0xff, 0x9b, 0, 1 }, 48, "nat64", false, false },
    { { 0x01 }, 64, "discard", false, false },
    { { 0x20, 0x02 }, 16, "6to4", false, false },
    { { 0x20, 0x01, 0, 0 }, 32, "teredo", false, false },
    { { 0xfc }, 7, "ula", true, false },
    { { 0xfe, 0x80 }, 10, "link-local", false, false },
    { { 0xfe, 0xc0 }, 10, "site-local", false, false },
    { { 0xff }, 8, "multicast", false, false },
};

static bool ranges_contains(const uint8_t net[16], unsigned prefix, const struct egress_addr *a)
{
    unsigned full = prefix / 8, rest = prefix % 8;
    if (memcmp(net, a->b, full) != 0) return false;
    if (rest == 0) return true;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (net[full] & mask) == (a->b[full] & mask);
}

const char *egress_addr_class(const struct egress_addr *a, unsigned *prefix, bool *private_class, bool *exact)
{
    /* The longest match: ::1 is loopback, not IPv4-compatible. */
    const struct range *best = NULL;
    for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++)
        if (ranges_contains(ranges[i].b, ranges[i].prefix, a) && (!best || ranges[i].prefix > best->prefix))
            best = &ranges[i];
    if (best == NULL) return NULL;
    if (prefix) *prefix = best->prefix;
    if (private_class) *private_class = best->private_class;
    if (exact) *exact = best->exact;
    return best->name;
}

bool egress_net_contains(const struct egress_addr *net, unsigned prefix, const struct egress_addr *a)
{
    return ranges_contains(net->b, prefix, a);
}
