/* The egress allow-list as plain data, and the pure matcher
 * (docs/egress.md): a policy's network.allow / network.deny rules, the
 * address classes that are refused unless listed literally, and the
 * decision for a destination name and for every address actually
 * connected to. No sockets here: the proxy (egress_proxy.c) asks. */
#ifndef BRIG_EGRESS_RULES_H
#define BRIG_EGRESS_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EGRESS_NAME_MAX 253

enum egress_kind {
    EGRESS_ANY,         /* "*" (alone, or as the host): any name, any public address */
    EGRESS_NAME,        /* "api.example.com": that name exactly */
    EGRESS_SUFFIX,      /* "*.example.com": names below it (not itself) */
    EGRESS_NET,         /* "10.0.5.7", "10.0.0.0/8", "[fd00::/8]": addresses */
};

/* Every address is kept as IPv6; IPv4 as ::ffff:a.b.c.d, so an
 * IPv4-mapped IPv6 literal is the IPv4 address it carries. */
struct egress_addr { uint8_t b[16]; };

struct egress_rule {
    enum egress_kind kind;
    char *name;             /* NAME, SUFFIX (without the "*.") */
    struct egress_addr net; /* NET */
    unsigned prefix;        /* NET: 0..128 on the IPv6 form */
    int port;               /* 1..65535, or -1 for "*" */
    char *text;             /* as written, for reasons */
};

/* network.credentials[i]: a header the proxy adds to plain-HTTP requests
 * for host, which it sends on over TLS to host:port (docs/egress.md,
 * "Credentials"). value is the handle, never the secret: "env:NAME" (the
 * caller's environment at launch) or "file:/abs/path" (a file only root
 * reads); egress_tls.c reads it in the proxy, at launch. */
struct egress_cred {
    char *host;             /* a name, normalized (egress_host_parse) */
    uint16_t port;          /* upstream TLS port, default 443 */
    char *header;           /* a field name (token), as written */
    char *prefix;           /* printable ASCII before the secret ("Bearer "), or "" */
    char *value;            /* the handle */
};

struct egress_rules {
    struct egress_rule *allow;  size_t n_allow;
    struct egress_rule *deny;   size_t n_deny;
    struct egress_cred *creds;  size_t n_creds;
    char *tls_ca;               /* network.tlsCA: PEM of CAs trusted besides the system's, or NULL */
    bool private_ranges;        /* RFC 1918, CGNAT, ULA reachable by name */
    uint64_t max_conns;         /* concurrent connections, > 0 */
    uint64_t max_bytes;         /* both directions, all connections; 0: no bound */
};

/* "host:port" (see docs/egress.md). 0, or -1 with why filled. */
int egress_rule_parse(const char *text, struct egress_rule *out, char *why, size_t len);
void egress_rule_clear(struct egress_rule *r);
void egress_rules_free(struct egress_rules *r);

/* The credential for a plain-HTTP request to name:port (name normalized):
 * port 80 or the credential's own. NULL: none. */
const struct egress_cred *egress_cred_for_http(const struct egress_rules *r, const char *name, uint16_t port);
/* The credential whose TLS destination is name:port exactly (what CONNECT
 * and SOCKS to it would reach without it). NULL: none. */
const struct egress_cred *egress_cred_at(const struct egress_rules *r, const char *name, uint16_t port);
/* Whether a request header line's name (len bytes before the ':') is the
 * credential's header: case-insensitive, '_' read as '-' (a CGI server
 * maps both to one variable). */
bool egress_cred_header_is(const struct egress_cred *c, const char *name, size_t len);

/* A destination as a client wrote it: a strict dotted-quad IPv4, an IPv6
 * literal (brackets stripped by the caller) or a host name. Decimal,
 * octal, hex and short IPv4 forms ("2130706433", "0177.0.0.1", "127.1")
 * are refused: the C library would read them as addresses. A name is
 * lowercased and loses one trailing dot into norm (EGRESS_NAME_MAX+1). */
enum egress_host { EGRESS_HOST_BAD, EGRESS_HOST_NAME, EGRESS_HOST_IP };
enum egress_host egress_host_parse(const char *host, char *norm, size_t len, struct egress_addr *ip);
/* Strict IPv4 / IPv6 literal into the IPv6 form; 0 or -1. */
int egress_addr_parse(const char *s, struct egress_addr *out);
void egress_addr_format(const struct egress_addr *a, char *out, size_t len);
bool egress_addr_is_v4(const struct egress_addr *a);
bool egress_net_contains(const struct egress_addr *net, unsigned prefix, const struct egress_addr *a);

/* The special range a holds ("loopback", "link-local", "private",
 * "cgnat", "ula", "documentation", ...), NULL for a public address.
 * *prefix gets the range's length (on the IPv6 form); *private_class
 * whether the policy's privateRanges makes it reachable by name; *exact
 * whether only a rule of the exact address and port reaches it. Each
 * pointer may be NULL. */
const char *egress_addr_class(const struct egress_addr *a, unsigned *prefix, bool *private_class, bool *exact);

/* The decision on the destination name (before resolving it). 0 allowed,
 * -1 denied with why ("network.deny[0] \"*.internal\""). */
int egress_check_name(const struct egress_rules *r, const char *name, uint16_t port, char *why, size_t len);
/* Whether an allow rule names exactly a, with exactly port (not "*"):
 * what reaches a documentation address, or one the host delivers locally. */
bool egress_rules_exact(const struct egress_rules *r, const struct egress_addr *a, uint16_t port);
/* The decision on one address about to be connected to: by_name says the
 * destination was a name that egress_check_name allowed. */
int egress_check_addr(const struct egress_rules *r, const struct egress_addr *a, uint16_t port, bool by_name,
                      char *why, size_t len);

#endif
