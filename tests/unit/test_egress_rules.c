/* The egress allow-list (egress/egress_rules.c, egress_ranges.c): rule
 * syntax, strict host forms, the special ranges, deny wins, and that a
 * name rule never reaches a private address unless an IP/CIDR rule lists
 * it (DNS rebinding). Through policy_parse as a user writes a policy. */
#include <criterion/criterion.h>
#include <string.h>

#include "../../egress/egress_rules.h"
#include "../../policy/policy.h"
#include "util/cleanup.h"

static struct brig_policy *pol(const char *network)
{
    autofree char *text = NULL;
    if (asprintf(&text, "{\"network\": %s}", network) < 0) abort();
    struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(policy_parse(text, strlen(text), &p, &err), 0, "%s: %s", network, err ? err->msg : "");
    return p;
}

static char *pol_error(const char *network)
{
    autofree char *text = NULL;
    if (asprintf(&text, "{\"network\": %s}", network) < 0) abort();
    struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_lt(policy_parse(text, strlen(text), &p, &err), 0, "%s parsed", network);
    return strdup(err->msg);
}

static struct egress_addr A(const char *s)
{
    struct egress_addr a;
    cr_assert_eq(egress_addr_parse(s, &a), 0, "%s", s);
    return a;
}

static bool name_ok(const struct brig_policy *p, const char *name, uint16_t port)
{
    char why[256];
    return egress_check_name(p->network.egress, name, port, why, sizeof(why)) == 0;
}

/* The destination name resolved to addr: both decisions must allow it. */
static bool via_name(const struct brig_policy *p, const char *name, const char *addr, uint16_t port, char *why)
{
    char w[256];
    if (egress_check_name(p->network.egress, name, port, why ? why : w, 256) < 0) return false;
    struct egress_addr a = A(addr);
    return egress_check_addr(p->network.egress, &a, port, true, why ? why : w, 256) == 0;
}

static bool literal_why(const struct brig_policy *p, const char *addr, uint16_t port, char *why)
{
    char w[256];
    struct egress_addr a = A(addr);
    return egress_check_addr(p->network.egress, &a, port, false, why ? why : w, 256) == 0;
}

static bool literal(const struct brig_policy *p, const char *addr, uint16_t port)
{
    return literal_why(p, addr, port, NULL);
}

Test(egress_rules, policy_parses_the_issue_example)
{
    autopolicy struct brig_policy *p = pol(
        "{\"mode\":\"egress\",\"allow\":[\"api.anthropic.com:443\",\"registry.npmjs.org:443\","
        "\"*.github.com:443\",\"10.0.5.7:5432\"],\"deny\":[\"*.internal:*\"],\"privateRanges\":false,"
        "\"maxConnections\":8,\"maxBytes\":\"1GiB\"}");
    cr_assert_eq(p->network.mode, POLICY_NET_EGRESS);
    cr_assert_eq(p->network.egress->n_allow, 4);
    cr_assert_eq(p->network.egress->max_conns, 8);
    cr_assert_eq(p->network.egress->max_bytes, 1ull << 30);
    cr_assert(name_ok(p, "api.anthropic.com", 443));
    cr_assert(!name_ok(p, "api.anthropic.com", 80), "port is part of the rule");
    cr_assert(name_ok(p, "api.github.com", 443));
    cr_assert(name_ok(p, "a.b.github.com", 443));
    cr_assert(!name_ok(p, "github.com", 443), "*.x matches names below x only");
    cr_assert(!name_ok(p, "evilgithub.com", 443));
    cr_assert(!name_ok(p, "example.com", 443));
    cr_assert(literal(p, "10.0.5.7", 5432), "listed literally");
    cr_assert(!literal(p, "10.0.5.8", 5432));
    cr_assert(!literal(p, "10.0.5.7", 5433));
}

Test(egress_rules, deny_wins)
{
    autopolicy struct brig_policy *p = pol("{\"mode\":\"egress\",\"allow\":[\"*:*\",\"10.0.0.0/8:*\"],"
                                           "\"deny\":[\"*.internal:*\",\"bad.example.com:443\",\"10.9.0.0/16:*\"]}");
    char why[256];
    cr_assert(!name_ok(p, "db.internal", 5432));
    cr_assert_eq(egress_check_name(p->network.egress, "db.internal", 1, why, sizeof(why)), -1);
    cr_assert_str_eq(why, "network.deny[0] \"*.internal:*\"");
    cr_assert(!name_ok(p, "bad.example.com", 443));
    cr_assert(name_ok(p, "bad.example.com", 80));
    cr_assert(literal(p, "10.1.2.3", 22));
    cr_assert(!literal(p, "10.9.2.3", 22));
    cr_assert(!via_name(p, "ok.example.com", "10.9.2.3", 22, why));
    cr_assert(strstr(why, "network.deny[2]") != NULL, "%s", why);
}

Test(egress_rules, star_is_public_only)
{
    autopolicy struct brig_policy *p = pol("{\"mode\":\"egress\",\"allow\":[\"*:*\"]}");
    cr_assert(via_name(p, "example.com", "93.184.216.34", 443, NULL));
    cr_assert(literal(p, "93.184.216.34", 443));
    cr_assert(literal(p, "2606:2800:220:1:248:1893:25c8:1946", 443));
    static const char *const special[] = {
        "127.0.0.1", "127.255.0.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1",
        "169.254.169.254", "100.64.0.1", "100.127.255.255", "0.0.0.0", "224.0.0.1", "255.255.255.255",
        "::1", "::", "fe80::1", "fd00::1", "fc12::1", "ff02::1", "::ffff:127.0.0.1", "::ffff:169.254.169.254",
        "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", "::7f00:1", "fec0::1", "198.18.0.1",
    };
    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
        char why[256];
        cr_assert(!via_name(p, "rebind.example.com", special[i], 443, why), "%s reached by name", special[i]);
        cr_assert(strstr(why, "reached only when network.allow lists it") != NULL, "%s", why);
        cr_assert(!literal(p, special[i], 443), "%s reached as a literal", special[i]);
    }
    cr_assert(via_name(p, "x.example.com", "172.32.0.1", 443, NULL), "just outside 172.16/12");
    cr_assert(via_name(p, "x.example.com", "100.128.0.1", 443, NULL), "just outside 100.64/10");
}

Test(egress_rules, star_alone_is_every_public_destination)
{
    autopolicy struct brig_policy *p = pol("{\"mode\":\"egress\",\"allow\":[\"*\"]}");
    cr_assert_eq(p->network.egress->allow[0].kind, EGRESS_ANY);
    cr_assert_eq(p->network.egress->allow[0].port, -1, "any port, as *:*");
    cr_assert(name_ok(p, "example.com", 443));
    cr_assert(name_ok(p, "example.com", 22));
    cr_assert(via_name(p, "example.com", "93.184.216.34", 8080, NULL));
    cr_assert(literal(p, "93.184.216.34", 1));
    cr_assert(!via_name(p, "example.com", "10.0.0.1", 443, NULL), "public only, as *:*");
    cr_assert(!literal(p, "127.0.0.1", 80));
    autopolicy struct brig_policy *d = pol("{\"mode\":\"egress\",\"allow\":[\"*:443\"],\"deny\":[\"*\"]}");
    cr_assert(!name_ok(d, "example.com", 443), "deny * wins over everything");
}

Test(egress_rules, documentation_ranges_need_the_exact_address_and_port)
{
    autopolicy struct brig_policy *p = pol("{\"mode\":\"egress\",\"allow\":[\"*:*\",\"192.0.2.0/24:*\","
                                           "\"198.51.100.7:*\",\"203.0.113.9:8080\",\"[2001:db8::5]:443\"]}");
    static const char *const doc[] = { "192.0.2.1", "198.51.100.200", "203.0.113.1", "2001:db8::1", "2001:db8:ffff::1" };
    for (size_t i = 0; i < sizeof(doc) / sizeof(doc[0]); i++) {
        char why[256];
        cr_assert(!via_name(p, "doc.example.com", doc[i], 443, why), "%s reached by name", doc[i]);
        cr_assert(strstr(why, " is documentation (reached only when network.allow names ") != NULL, "%s", why);
        cr_assert(!literal(p, doc[i], 443), "%s reached as a literal", doc[i]);
    }
    char why[256];
    cr_assert(!literal_why(p, "198.51.100.7", 443, why), "an exact address with port * is not exact");
    cr_assert(!via_name(p, "doc.example.com", "203.0.113.9", 8081, why), "the exact port only");
    cr_assert_str_eq(why, "203.0.113.9 is documentation (reached only when network.allow names 203.0.113.9:8081 exactly)");
    cr_assert(literal(p, "203.0.113.9", 8080), "named exactly");
    cr_assert(via_name(p, "doc.example.com", "203.0.113.9", 8080, NULL));
    cr_assert(literal(p, "2001:db8::5", 443));
    cr_assert(!literal_why(p, "2001:db8::6", 443, why));
    cr_assert_str_eq(why, "2001:db8::6 is documentation (reached only when network.allow names [2001:db8::6]:443 exactly)");
    cr_assert(literal(p, "192.0.3.1", 443), "just outside 192.0.2.0/24: public");
    cr_assert(literal(p, "2001:db9::1", 443), "just outside 2001:db8::/32");
    struct egress_addr a = A("203.0.113.9");
    cr_assert(egress_rules_exact(p->network.egress, &a, 8080));
    cr_assert(!egress_rules_exact(p->network.egress, &a, 8081));
    a = A("198.51.100.7");
    cr_assert(!egress_rules_exact(p->network.egress, &a, 443), "port * is not exact");
}

Test(egress_rules, cloud_metadata_outside_link_local_needs_the_exact_address_and_port)
{
    autopolicy struct brig_policy *p = pol("{\"mode\":\"egress\",\"allow\":[\"*:*\",\"100.64.0.0/10:*\",\"[fd00::/8]:*\","
                                           "\"0.0.0.0/0:80\",\"[fd20:ce::254]:80\"],\"privateRanges\":true}");
    static const char *const meta[] = { "100.100.100.200", "168.63.129.16", "fd00:ec2::254", "fd20:ce::254" };
    for (size_t i = 0; i < sizeof(meta) / sizeof(meta[0]); i++) {
        char why[256];
        cr_assert(!via_name(p, "meta.example.com", meta[i], 443, why), "%s reached by name", meta[i]);
        cr_assert(strstr(why, " is cloud metadata (reached only when network.allow names ") != NULL, "%s", why);
        cr_assert(!literal(p, meta[i], 443), "%s reached as a literal (a network holds it)", meta[i]);
    }
    cr_assert(literal(p, "fd20:ce::254", 80), "named exactly");
    cr_assert(via_name(p, "meta.example.com", "100.100.100.201", 443, NULL), "its neighbour is CGNAT (privateRanges)");
    cr_assert(literal(p, "168.63.129.17", 443), "its neighbour is public");
}

Test(egress_rules, allowed_name_to_private_address_needs_the_literal)
{
    autopolicy struct brig_policy *p = pol("{\"mode\":\"egress\",\"allow\":[\"api.example.test:8080\","
                                           "\"127.0.0.1:8080\",\"0.0.0.0/0:*\"]}");
    char why[256];
    cr_assert(via_name(p, "api.example.test", "127.0.0.1", 8080, NULL));
    cr_assert(!via_name(p, "api.example.test", "127.0.0.2", 8080, why), "not the listed address");
    cr_assert_str_eq(why, "127.0.0.2 is loopback (reached only when network.allow lists it as an IP or CIDR)");
    cr_assert(!via_name(p, "api.example.test", "169.254.169.254", 8080, why));
    cr_assert(!via_name(p, "api.example.test", "10.0.0.1", 8080, NULL));
    cr_assert(!via_name(p, "api.example.test", "127.0.0.1", 8081, NULL), "the literal's port");
    cr_assert(!via_name(p, "other.example.test", "127.0.0.1", 8080, NULL), "the name is judged too");
    cr_assert(!literal(p, "10.0.0.1", 80), "0.0.0.0/0 names no private network");
    cr_assert(literal(p, "::ffff:127.0.0.1", 8080), "IPv4-mapped is the IPv4 address");
}

Test(egress_rules, private_ranges_by_name)
{
    autopolicy struct brig_policy *p = pol("{\"mode\":\"egress\",\"allow\":[\"db.corp.test:*\"],"
                                           "\"privateRanges\":true}");
    cr_assert(via_name(p, "db.corp.test", "10.0.0.5", 5432, NULL));
    cr_assert(via_name(p, "db.corp.test", "100.64.1.1", 5432, NULL));
    cr_assert(via_name(p, "db.corp.test", "fd12::5", 5432, NULL));
    cr_assert(!via_name(p, "db.corp.test", "127.0.0.1", 5432, NULL), "loopback is never a private range");
    cr_assert(!via_name(p, "db.corp.test", "169.254.169.254", 80, NULL), "nor the metadata service");
    cr_assert(!via_name(p, "db.corp.test", "fe80::1", 80, NULL));
    cr_assert(!literal(p, "10.0.0.5", 5432), "privateRanges is for allowed names, not any address");
}

Test(egress_rules, host_forms)
{
    char norm[256];
    struct egress_addr a;
    cr_assert_eq(egress_host_parse("API.Example.COM.", norm, sizeof(norm), &a), EGRESS_HOST_NAME);
    cr_assert_str_eq(norm, "api.example.com");
    cr_assert_eq(egress_host_parse("127.0.0.1", norm, sizeof(norm), &a), EGRESS_HOST_IP);
    cr_assert_eq(egress_host_parse("::ffff:7f00:1", norm, sizeof(norm), &a), EGRESS_HOST_IP);
    cr_assert_str_eq(norm, "127.0.0.1", "mapped IPv6 shows as IPv4");
    static const char *const bad[] = {
        "2130706433", "0177.0.0.1", "0x7f.0.0.1", "0x7f000001", "127.1", "127.0.1", "017700000001",
        "1.2.3.04", "256.1.1.1", "fe80::1%eth0", "", ".", "a..b", "-a.com", "a-.com", "a b.com", "a/b",
        "exa mple.com", "a@b.com", "1.2.3.4.5", "[::1]", "0x7F.1",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(egress_host_parse(bad[i], norm, sizeof(norm), &a), EGRESS_HOST_BAD, "\"%s\" accepted", bad[i]);
}

Test(egress_rules, rule_syntax_errors_name_the_rule)
{
    static const struct { const char *rules, *msg; } cases[] = {
        { "[\"api.example.com\"]", "network.allow[0]: \"api.example.com\": expected HOST:PORT or HOST:* (a port is required), or * alone" },
        { "[\"a.com:443\",\"api.*.com:443\"]", "network.allow[1]: \"api.*.com:443\": \"api.*.com\": not a host name" },
        { "[\"a.com:0\"]", "port \"0\": expected 1..65535 or *" },
        { "[\"a.com:65536\"]", "port \"65536\"" },
        { "[\"a.com:080\"]", "port \"080\"" },
        { "[\"10.0.0.1/8:*\"]", "host bits set" },
        { "[\"10.0.0.0/33:*\"]", "expected a prefix length 0..32" },
        { "[\"2130706433:80\"]", "\"2130706433\": not an IP address" },
        { "[\"0177.0.0.1:80\"]", "not an IP address" },
        { "[\"fd00::1:443\"]", "an IPv6 address goes in brackets" },
        { "[\"[fd00::/129]:443\"]", "expected a prefix length 0..128" },
        { "[\"*.*.com:443\"]", "not a host name" },
        { "[\"**:443\"]", "not a host name" },
        { "[\"\"]", "expected HOST:PORT" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        autofree char *net = NULL;
        if (asprintf(&net, "{\"mode\":\"egress\",\"allow\":%s}", cases[i].rules) < 0) abort();
        autofree char *msg = pol_error(net);
        cr_assert(strstr(msg, cases[i].msg) != NULL, "%s: got \"%s\"", cases[i].rules, msg);
    }
    autofree char *m1 = pol_error("{\"mode\":\"egress\",\"alow\":[]}");
    cr_assert(strstr(m1, "network.alow: unknown key") != NULL, "%s", m1);
    autofree char *m2 = pol_error("{\"mode\":\"egress\",\"maxConnections\":0}");
    cr_assert(strstr(m2, "network.maxConnections: 0: expected 1 to") != NULL, "%s", m2);
    autofree char *m3 = pol_error("{\"mode\":\"egres\"}");
    cr_assert(strstr(m3, "expected \"none\" or \"netns\" or \"egress\"") != NULL, "%s", m3);
}

Test(egress_rules, cidr_and_ipv6_rules)
{
    autopolicy struct brig_policy *p = pol("{\"mode\":\"egress\",\"allow\":[\"[fd00:1::/32]:443\","
                                           "\"[2606:4700::1111]:*\",\"192.168.10.0/24:22\",\"[::ffff:10.1.0.0/112]:80\"]}");
    cr_assert(literal(p, "fd00:1::5", 443));
    cr_assert(!literal(p, "fd00:2::5", 443));
    cr_assert(literal(p, "2606:4700::1111", 1));
    cr_assert(literal(p, "192.168.10.77", 22));
    cr_assert(!literal(p, "192.168.11.77", 22));
    cr_assert(literal(p, "10.1.200.3", 80), "an IPv4-mapped CIDR is the IPv4 network");
    cr_assert(literal(p, "::ffff:192.168.10.1", 22));
}

Test(egress_rules, other_modes_have_no_rules)
{
    autopolicy struct brig_policy *p = pol("{\"mode\":\"none\"}");
    cr_assert_null(p->network.egress);
    autofree char *m = pol_error("{\"mode\":\"none\",\"allow\":[\"*:*\"]}");
    cr_assert(strstr(m, "network.allow: unknown key") != NULL, "%s", m);
}
