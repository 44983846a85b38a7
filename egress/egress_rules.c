/* network.allow / network.deny (docs/egress.md, "Rules"): parsing, and the
 * decisions. Deny wins. A name rule lets a name through, and then only
 * the public addresses it resolves to (privateRanges adds RFC 1918, CGNAT
 * and ULA); an address in loopback, link-local, multicast and the like is
 * reached only when an IP/CIDR rule that lies inside that range lists it:
 * "0.0.0.0/0:*" names no private network on purpose, "10.0.5.7:5432" does.
 * A documentation address (192.0.2.0/24, 2001:db8::/32, ...) is reached
 * only by a rule of that exact address and port.
 * The check is on the address the proxy connects to, after resolution,
 * so a name that resolves (or rebinds) to 169.254.169.254 is refused. */
#include "egress_rules.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

static int rules_why(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int rules_why(char *why, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

/* Labels of letters, digits, '-' and '_' (1..63 each, no leading or
 * trailing '-'), at most 253 in all, and a last label with a letter: "1.2"
 * or "0x7f000001" are address forms getaddrinfo would accept, not names. */
static bool rules_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > EGRESS_NAME_MAX) return false;
    const char *label = s;
    bool letter = false;
    for (const char *p = s;; p++) {
        if (*p == '.' || *p == '\0') {
            size_t l = (size_t)(p - label);
            if (l == 0 || l > 63 || label[0] == '-' || label[l - 1] == '-') return false;
            if (*p == '\0') break;
            label = p + 1;
            letter = false;
            continue;
        }
        if (isalpha((unsigned char)*p)) letter = true;
        else if (!isdigit((unsigned char)*p) && *p != '-' && *p != '_') return false;
    }
    if (!letter) return false;
    struct in_addr ignored;
    return inet_aton(s, &ignored) == 0;   /* "0x7f.1" has a letter and is an address */
}

enum egress_host egress_host_parse(const char *host, char *norm, size_t len, struct egress_addr *ip)
{
    if (egress_addr_parse(host, ip) == 0) {
        egress_addr_format(ip, norm, len);
        return EGRESS_HOST_IP;
    }
    size_t n = strlen(host);
    if (n > 0 && host[n - 1] == '.') n--;
    if (n == 0 || n > EGRESS_NAME_MAX || n + 1 > len) return EGRESS_HOST_BAD;
    for (size_t i = 0; i < n; i++) norm[i] = (char)tolower((unsigned char)host[i]);
    norm[n] = '\0';
    return rules_name_ok(norm) ? EGRESS_HOST_NAME : EGRESS_HOST_BAD;
}

static int rules_port(const char *s, int *port)
{
    if (strcmp(s, "*") == 0) {
        *port = -1;
        return 0;
    }
    uint64_t v;
    if (s[0] == '0' || brig_parse_u64(s, &v) < 0 || v == 0 || v > 65535) return -1;
    *port = (int)v;
    return 0;
}

/* "10.0.0.0/8", "fd00::/8", "10.0.5.7": an exact network, host bits clear. */
static int rules_net(char *s, struct egress_rule *out, char *why, size_t len)
{
    char *slash = strchr(s, '/');
    unsigned max = strchr(s, ':') ? 128 : 32;
    uint64_t plen = max;
    if (slash != NULL) {
        *slash = '\0';
        if (slash[1] == '\0' || (slash[1] == '0' && slash[2] != '\0') || brig_parse_u64(slash + 1, &plen) < 0 ||
            plen > max)
            return rules_why(why, len, "\"/%s\": expected a prefix length 0..%u", slash + 1, max);
    }
    if (egress_addr_parse(s, &out->net) < 0)
        return rules_why(why, len, "\"%s\": not an IP address (IPv4 as a.b.c.d, IPv6 in [])", s);
    /* An IPv4-mapped IPv6 network is an IPv4 network: same form inside. */
    out->prefix = (unsigned)plen + (egress_addr_is_v4(&out->net) && max == 32 ? 96 : 0);
    if (egress_addr_is_v4(&out->net) && max == 128 && out->prefix < 96)
        return rules_why(why, len, "\"%s/%u\": an IPv4-mapped network shorter than /96", s, out->prefix);
    for (unsigned bit = out->prefix; bit < 128; bit++)
        if (out->net.b[bit / 8] & (0x80 >> (bit % 8)))
            return rules_why(why, len, "\"%s/%llu\": host bits set (the network is not what it says)", s,
                             (unsigned long long)plen);
    out->kind = EGRESS_NET;
    return 0;
}

int egress_rule_parse(const char *text, struct egress_rule *out, char *why, size_t len)
{
    memset(out, 0, sizeof(*out));
    out->port = -1;
    if (strcmp(text, "*") == 0) {       /* every public destination, any port: "*:*" */
        out->kind = EGRESS_ANY;
        out->text = brig_strdup(text);
        return 0;
    }
    autofree char *s = brig_strdup(text);
    char *host = s, *colon;
    if (s[0] == '[') {
        char *close = strchr(s, ']');
        if (close == NULL || close[1] != ':')
            return rules_why(why, len, "expected [IPv6]:PORT or [IPv6]:*");
        *close = '\0';
        host = s + 1;
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (colon == NULL) return rules_why(why, len, "expected HOST:PORT or HOST:* (a port is required), or * alone");
        if (memchr(s, ':', (size_t)(colon - s)) != NULL)
            return rules_why(why, len, "an IPv6 address goes in brackets: [%s]:PORT", s);
    }
    *colon = '\0';
    if (rules_port(colon + 1, &out->port) < 0)
        return rules_why(why, len, "port \"%s\": expected 1..65535 or *", colon + 1);
    if (s[0] == '[' || (host[0] >= '0' && host[0] <= '9' && strspn(host, "0123456789./") == strlen(host))) {
        if (rules_net(host, out, why, len) < 0) return -1;
    } else if (strcmp(host, "*") == 0) {
        out->kind = EGRESS_ANY;
    } else {
        bool suffix = strncmp(host, "*.", 2) == 0;
        char norm[EGRESS_NAME_MAX + 2];
        struct egress_addr ignored;
        if (egress_host_parse(host + (suffix ? 2 : 0), norm, sizeof(norm), &ignored) != EGRESS_HOST_NAME)
            return rules_why(why, len, "\"%s\": not a host name, *.NAME, IP address or CIDR "
                             "(a '*' only as the whole name or a leading \"*.\")", host);
        out->kind = suffix ? EGRESS_SUFFIX : EGRESS_NAME;
        out->name = brig_strdup(norm);
    }
    out->text = brig_strdup(text);
    return 0;
}

void egress_rule_clear(struct egress_rule *r)
{
    free(r->name);
    free(r->text);
    memset(r, 0, sizeof(*r));
}

void egress_rules_free(struct egress_rules *r)
{
    if (r == NULL) return;
    for (size_t i = 0; i < r->n_allow; i++) egress_rule_clear(&r->allow[i]);
    for (size_t i = 0; i < r->n_deny; i++) egress_rule_clear(&r->deny[i]);
    free(r->allow);
    free(r->deny);
    for (size_t i = 0; i < r->n_creds; i++) {
        free(r->creds[i].host);
        free(r->creds[i].header);
        free(r->creds[i].prefix);
        free(r->creds[i].value);
    }
    free(r->creds);
    free(r->tls_ca);
    free(r);
}

const struct egress_cred *egress_cred_at(const struct egress_rules *r, const char *name, uint16_t port)
{
    for (size_t i = 0; r != NULL && i < r->n_creds; i++)
        if (r->creds[i].port == port && strcmp(r->creds[i].host, name) == 0) return &r->creds[i];
    return NULL;
}

const struct egress_cred *egress_cred_for_http(const struct egress_rules *r, const char *name, uint16_t port)
{
    for (size_t i = 0; r != NULL && i < r->n_creds; i++)
        if ((port == 80 || r->creds[i].port == port) && strcmp(r->creds[i].host, name) == 0) return &r->creds[i];
    return NULL;
}

bool egress_cred_header_is(const struct egress_cred *c, const char *name, size_t len)
{
    if (strlen(c->header) != len) return false;
    for (size_t i = 0; i < len; i++) {
        char a = (char)tolower((unsigned char)name[i]), b = (char)tolower((unsigned char)c->header[i]);
        if (a == '_') a = '-';
        if (b == '_') b = '-';
        if (a != b) return false;
    }
    return true;
}

static bool rules_port_match(const struct egress_rule *r, uint16_t port)
{
    return r->port < 0 || r->port == port;
}

static bool rules_name_match(const struct egress_rule *r, const char *name)
{
    switch (r->kind) {
    case EGRESS_ANY: return true;
    case EGRESS_NAME: return strcmp(r->name, name) == 0;
    case EGRESS_SUFFIX: {
        size_t n = strlen(name), m = strlen(r->name);
        return n > m + 1 && name[n - m - 1] == '.' && strcmp(name + n - m, r->name) == 0;
    }
    case EGRESS_NET: return false;
    }
    return false;
}

int egress_check_name(const struct egress_rules *r, const char *name, uint16_t port, char *why, size_t len)
{
    for (size_t i = 0; i < r->n_deny; i++)
        if (rules_port_match(&r->deny[i], port) && rules_name_match(&r->deny[i], name))
            return rules_why(why, len, "network.deny[%zu] \"%s\"", i, r->deny[i].text);
    for (size_t i = 0; i < r->n_allow; i++)
        if (rules_port_match(&r->allow[i], port) && rules_name_match(&r->allow[i], name)) return 0;
    return rules_why(why, len, "%s:%u is not in network.allow", name, port);
}

bool egress_rules_exact(const struct egress_rules *r, const struct egress_addr *a, uint16_t port)
{
    for (size_t i = 0; i < r->n_allow; i++) {
        const struct egress_rule *al = &r->allow[i];
        if (al->kind == EGRESS_NET && al->prefix == 128 && al->port == port && memcmp(al->net.b, a->b, 16) == 0)
            return true;
    }
    return false;
}

int egress_check_addr(const struct egress_rules *r, const struct egress_addr *a, uint16_t port, bool by_name,
                      char *why, size_t len)
{
    char text[64];
    egress_addr_format(a, text, sizeof(text));
    for (size_t i = 0; i < r->n_deny; i++) {
        const struct egress_rule *d = &r->deny[i];
        if (!rules_port_match(d, port)) continue;
        if (d->kind == EGRESS_ANY || (d->kind == EGRESS_NET && egress_net_contains(&d->net, d->prefix, a)))
            return rules_why(why, len, "%s: network.deny[%zu] \"%s\"", text, i, d->text);
    }
    unsigned class_prefix = 0;
    bool private_class = false, exact = false;
    const char *cls = egress_addr_class(a, &class_prefix, &private_class, &exact);
    if (exact && !egress_rules_exact(r, a, port)) {
        bool v6 = !egress_addr_is_v4(a);
        return rules_why(why, len, "%s is %s (reached only when network.allow names %s%s%s:%u exactly)", text, cls,
                         v6 ? "[" : "", text, v6 ? "]" : "", port);
    }
    /* Listed literally: an IP/CIDR rule with the address, which for a
     * special address must lie inside its range (names it on purpose). */
    for (size_t i = 0; i < r->n_allow; i++) {
        const struct egress_rule *al = &r->allow[i];
        if (al->kind == EGRESS_NET && rules_port_match(al, port) && egress_net_contains(&al->net, al->prefix, a) &&
            (cls == NULL || al->prefix >= class_prefix))
            return 0;
    }
    if (cls != NULL && !(private_class && r->private_ranges))
        return rules_why(why, len, "%s is %s (reached only when network.allow lists it as an IP or CIDR)",
                         text, cls);
    if (by_name) return 0;
    for (size_t i = 0; i < r->n_allow; i++)
        if (r->allow[i].kind == EGRESS_ANY && rules_port_match(&r->allow[i], port)) return 0;
    return rules_why(why, len, "%s:%u is not in network.allow", text, port);
}
