/* network.credentials and network.tlsCA (policy/policy_credentials.c),
 * the credential lookups the proxy makes (egress/egress_rules.c), env.set,
 * and the masking of a secret in a response stream (egress/tls/
 * tls_redact.c), through policy_parse as a user writes a policy. */
#include <criterion/criterion.h>
#include <string.h>

#include "../../egress/egress_rules.h"
#include "../../egress/tls/tls.h"
#include "../../policy/policy.h"
#include "../../policy/policy_apply.h"
#include "util/cleanup.h"

static const char *const allow = "\"allow\": [\"api.example.com:443\", \"api.other.com:8443\"]";

static struct brig_policy *pol(const char *text)
{
    struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(policy_parse(text, strlen(text), &p, &err), 0, "%s: %s", text, err ? err->msg : "");
    return p;
}

/* The error of a policy with this network.credentials (and extra keys). */
static char *cred_error(const char *creds, const char *extra)
{
    autofree char *text = NULL;
    if (asprintf(&text, "{\"network\": {\"mode\": \"egress\", %s, \"credentials\": %s%s}}", allow, creds, extra) < 0)
        abort();
    struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_lt(policy_parse(text, strlen(text), &p, &err), 0, "%s parsed", text);
    return strdup(err->msg);
}

#define expect_error(creds, extra, want)                                                  \
    do {                                                                                  \
        autofree char *got_ = cred_error(creds, extra);                                   \
        cr_expect(strstr(got_, want) != NULL, "%s\n  error: %s\n  want:  %s", creds, got_, want); \
    } while (0)

Test(egress_cred, parses_the_documented_example)
{
    autopolicy struct brig_policy *p = pol(
        "{\"network\": {\"mode\": \"egress\", \"allow\": [\"api.anthropic.com:443\", \"API.openai.com:443\"],"
        " \"credentials\": [{\"host\": \"api.anthropic.com\", \"header\": \"x-api-key\", \"value\": \"env:ANTHROPIC_API_KEY\"},"
        " {\"host\": \"API.OpenAI.com.\", \"header\": \"authorization\", \"prefix\": \"Bearer \", \"value\": \"file:/etc/brig/keys/openai\"}],"
        " \"tlsCA\": \"/etc/brig/ca.pem\"}}");
    const struct egress_rules *r = p->network.egress;
    cr_assert_eq(r->n_creds, 2);
    cr_expect_str_eq(r->creds[0].host, "api.anthropic.com");
    cr_expect_eq(r->creds[0].port, 443);
    cr_expect_str_eq(r->creds[0].prefix, "");
    cr_expect_str_eq(r->creds[0].value, "env:ANTHROPIC_API_KEY");
    cr_expect_str_eq(r->creds[1].host, "api.openai.com", "normalized as the proxy judges names");
    cr_expect_str_eq(r->creds[1].prefix, "Bearer ");
    cr_expect_str_eq(r->tls_ca, "/etc/brig/ca.pem");
    /* Plain HTTP on 80 or the credential's port; CONNECT only on its port. */
    cr_expect_eq(egress_cred_for_http(r, "api.anthropic.com", 80), &r->creds[0]);
    cr_expect_eq(egress_cred_for_http(r, "api.anthropic.com", 443), &r->creds[0]);
    cr_expect_null(egress_cred_for_http(r, "api.anthropic.com", 8080));
    cr_expect_null(egress_cred_for_http(r, "anthropic.com", 80));
    cr_expect_eq(egress_cred_at(r, "api.openai.com", 443), &r->creds[1]);
    cr_expect_null(egress_cred_at(r, "api.openai.com", 80));
}

Test(egress_cred, header_match_ignores_case_and_underscores)
{
    const struct egress_cred c = { .header = "x-api-key" };
    cr_expect(egress_cred_header_is(&c, "X-API-KEY", 9));
    cr_expect(egress_cred_header_is(&c, "x_api_key", 9), "a CGI server reads x_api_key as x-api-key");
    cr_expect_not(egress_cred_header_is(&c, "x-api-keys", 10));
    cr_expect_not(egress_cred_header_is(&c, "x-api-ke", 8));
}

Test(egress_cred, a_port_other_than_443)
{
    autopolicy struct brig_policy *p = pol("{\"network\": {\"mode\": \"egress\", \"allow\": [\"api.other.com:8443\"],"
                                           " \"credentials\": [{\"host\": \"api.other.com\", \"port\": 8443,"
                                           " \"header\": \"api-key\", \"value\": \"env:K\"}]}}");
    cr_expect_eq(p->network.egress->creds[0].port, 8443);
    cr_expect_not_null(egress_cred_for_http(p->network.egress, "api.other.com", 8443));
}

Test(egress_cred, every_field_is_judged)
{
    const char *ok = "\"host\": \"api.example.com\", \"header\": \"x-api-key\"";
    char buf[512];
    snprintf(buf, sizeof(buf), "[{%s, \"value\": \"sk-ant-1234567890\"}]", ok);
    expect_error(buf, "", "network.credentials[0].value: expected \"env:NAME\" or \"file:/path\"");
    autofree char *e = cred_error(buf, "");
    cr_expect_null(strstr(e, "sk-ant"), "a secret written in the policy is never echoed: %s", e);
    snprintf(buf, sizeof(buf), "[{%s, \"value\": \"file:keys/a\"}]", ok);
    expect_error(buf, "", "network.credentials[0].value: file: needs an absolute path");
    snprintf(buf, sizeof(buf), "[{%s, \"value\": \"env:1X\"}]", ok);
    expect_error(buf, "", "network.credentials[0].value: env:NAME needs a variable name");
    snprintf(buf, sizeof(buf), "[{%s, \"value\": \"env:K\", \"prefix\": \"Bearer \\r\\nx: y\"}]", ok);
    expect_error(buf, "", "network.credentials[0].prefix: only printable ASCII");
    snprintf(buf, sizeof(buf), "[{%s, \"value\": \"env:K\", \"hdr\": 1}]", ok);
    expect_error(buf, "", "network.credentials[0].hdr: unknown key");
    expect_error("[{\"host\": \"api.example.com\", \"header\": \"x api\", \"value\": \"env:K\"}]", "",
                 "network.credentials[0].header: \"x api\": expected a header name");
    expect_error("[{\"host\": \"api.example.com\", \"header\": \"Host\", \"value\": \"env:K\"}]", "",
                 "network.credentials[0].header: \"Host\": the proxy writes or drops this header itself");
    expect_error("[{\"host\": \"api.example.com\", \"header\": \"Content-Length\", \"value\": \"env:K\"}]", "",
                 "the proxy writes or drops this header itself");
    expect_error("[{\"host\": \"10.0.0.1\", \"header\": \"x\", \"value\": \"env:K\"}]", "",
                 "network.credentials[0].host: \"10.0.0.1\": expected a host name");
    expect_error("[{\"host\": \"*.example.com\", \"header\": \"x\", \"value\": \"env:K\"}]", "", "expected a host name");
    expect_error("[{\"host\": \"api.example.com\", \"port\": 0, \"header\": \"x\", \"value\": \"env:K\"}]", "",
                 "network.credentials[0].port: 0: expected 1 to 65535");
    expect_error("[{\"host\": \"api.example.com\", \"header\": \"x\", \"value\": \"env:K\"},"
                 " {\"host\": \"API.example.com\", \"header\": \"y\", \"value\": \"env:L\"}]", "",
                 "network.credentials[1].host: api.example.com has a credential already (network.credentials[0])");
    expect_error("{}", "", "network.credentials: expected an array");
}

Test(egress_cred, the_host_must_be_allowed_on_its_port)
{
    expect_error("[{\"host\": \"api.example.com\", \"port\": 8443, \"header\": \"x\", \"value\": \"env:K\"}]", "",
                 "network.credentials[0].host: api.example.com:8443 is refused by the rules (api.example.com:8443 is "
                 "not in network.allow): a credential's destination must be allowed too (network.allow "
                 "\"api.example.com:8443\")");
    expect_error("[{\"host\": \"api.example.com\", \"header\": \"x\", \"value\": \"env:K\"}]",
                 ", \"deny\": [\"api.example.com:*\"]", "network.deny[0]");
}

Test(egress_cred, tls_ca_only_with_credentials)
{
    expect_error("[{\"host\": \"api.example.com\", \"header\": \"x\", \"value\": \"env:K\"}]", ", \"tlsCA\": \"ca.pem\"",
                 "network.tlsCA: expected an absolute path");
    autofree char *text = NULL;
    if (asprintf(&text, "{\"network\": {\"mode\": \"egress\", %s, \"tlsCA\": \"/ca.pem\"}}", allow) < 0) abort();
    struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_lt(policy_parse(text, strlen(text), &p, &err), 0);
    cr_expect(strstr(err->msg, "network.tlsCA: only the proxy's own TLS (network.credentials) uses it") != NULL, "%s",
              err->msg);
}

Test(egress_cred, env_set)
{
    autopolicy struct brig_policy *p = pol("{\"env\": {\"set\": {\"ANTHROPIC_BASE_URL\": \"http://api.anthropic.com\"}}}");
    cr_assert_not_null(p->env_set[0]);
    cr_expect_str_eq(p->env_set[0], "ANTHROPIC_BASE_URL=http://api.anthropic.com");
    const char *cfg = "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\","
                      " \"env\": [\"PATH=/bin\"]}, \"root\": {\"path\": \"rootfs\"}}";
    autofree char *out = NULL;
    autoerr struct brig_error *err = NULL;
    const struct policy_apply_opts o = {0};
    cr_assert_eq(policy_apply(p, cfg, strlen(cfg), &o, &out, &err), 0, "%s", err ? err->msg : "");
    cr_expect(strstr(out, "\"ANTHROPIC_BASE_URL=http://api.anthropic.com\"") != NULL, "%s", out);
    const char *own = "{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"cwd\": \"/\","
                      " \"env\": [\"ANTHROPIC_BASE_URL=http://mine\"]}, \"root\": {\"path\": \"rootfs\"}}";
    autofree char *out2 = NULL;
    cr_assert_eq(policy_apply(p, own, strlen(own), &o, &out2, &err), 0);
    cr_expect(strstr(out2, "http://mine") != NULL && strstr(out2, "api.anthropic.com") == NULL,
              "the process's own value stays: %s", out2);

    const char *bad[][2] = {
        { "{\"env\": {\"set\": {\"ANTHROPIC_API_KEY\": \"sk\"}}}", "env.set.ANTHROPIC_API_KEY: the policy's env rules refuse this name (env.deny)" },
        { "{\"env\": {\"allow\": [\"PATH\"], \"set\": {\"FOO\": \"1\"}}}", "env.set.FOO: the policy's env rules refuse this name (not in env.allow)" },
        { "{\"network\": {\"mode\": \"egress\"}, \"env\": {\"set\": {\"HTTPS_PROXY\": \"http://evil\"}}}", "env.set.HTTPS_PROXY: the egress proxy's variable" },
        { "{\"env\": {\"set\": {\"A-B\": \"1\"}}}", "env.set.A-B: expected a variable name" },
        { "{\"env\": {\"set\": {\"A\": 1}}}", "env.set.A" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct brig_policy *q = NULL;
        autoerr struct brig_error *e = NULL;
        cr_expect_lt(policy_parse(bad[i][0], strlen(bad[i][0]), &q, &e), 0, "%s parsed", bad[i][0]);
        if (e != NULL) cr_expect(strstr(e->msg, bad[i][1]) != NULL, "%s: %s", bad[i][0], e->msg);
    }
}

/* Feed in pieces of the given sizes; what comes out, flushed at the end. */
static char *redact(const char *secret, const char *in, const size_t *cuts, size_t n_cuts, size_t *held_max)
{
    static struct tls_redact r;
    tls_redact_init(&r, secret, strlen(secret));
    static char out[1 << 16], buf[1 << 16];
    size_t len = strlen(in), off = 0, o = 0;
    *held_max = 0;
    for (size_t i = 0; i <= n_cuts && off < len; i++) {
        size_t n = i < n_cuts && cuts[i] < len - off ? cuts[i] : len - off;
        size_t got = tls_redact_feed(&r, in + off, n, buf);
        memcpy(out + o, buf, got);
        o += got;
        off += n;
        if (r.n_held > *held_max) *held_max = r.n_held;
    }
    o += tls_redact_flush(&r, out + o);
    out[o] = '\0';
    return out;
}

Test(egress_cred, the_secret_is_masked_in_any_split)
{
    const char *s = "sk-SECRET-42";
    const char *in = "HTTP/1.1 200 OK\r\nx-echo: sk-SECRET-42\r\n\r\n{\"key\":\"sk-SECRET-42sk-SECRET-42\",\"n\":\"sk-SECRET\"}";
    const char *want = "HTTP/1.1 200 OK\r\nx-echo: ************\r\n\r\n{\"key\":\"************************\",\"n\":\"sk-SECRET\"}";
    size_t held;
    /* Every single cut point, and byte by byte. */
    for (size_t cut = 1; cut < strlen(in); cut++) {
        size_t cuts[] = { cut };
        cr_expect_str_eq(redact(s, in, cuts, 1, &held), want, "cut at %zu", cut);
    }
    size_t ones[256];
    for (size_t i = 0; i < 256; i++) ones[i] = 1;
    cr_expect_str_eq(redact(s, in, ones, 256, &held), want);
    cr_expect_lt(held, strlen(s), "never holds a whole secret's length");
}

Test(egress_cred, an_event_end_is_never_held)
{
    struct tls_redact r;
    tls_redact_init(&r, "sk-SECRET-42", 12);
    char out[256];
    const char *ev = "data: {\"type\": \"delta\", \"text\": \"s\"}\n\n";
    cr_expect_eq(tls_redact_feed(&r, ev, strlen(ev), out), strlen(ev), "an SSE event passes at once, whole");
    const char *tail = "partial sk-SE";
    cr_expect_eq(tls_redact_feed(&r, tail, strlen(tail), out), strlen("partial "), "what may begin it waits");
    cr_expect_eq(tls_redact_flush(&r, out), 5);
    cr_expect_eq(memcmp(out, "sk-SE", 5), 0, "and is passed on at the end as it was");
}
