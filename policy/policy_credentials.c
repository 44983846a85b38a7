/* network.credentials and network.tlsCA of an egress policy
 * (docs/egress.md, "Credentials"): headers the proxy adds to requests for
 * a host, sent on over TLS. A policy holds only the handle of a secret
 * (env:NAME, file:/path); the value is read by the proxy at launch
 * (egress/egress_tls.c). Every field is judged here, so `brig policy
 * check` and every launch refuse a credential the proxy could not add
 * as its author meant: a header that frames the request, a prefix with
 * a line break, a host the allow-list does not let through. */
#include "policy.h"
#include "policy_internal.h"

#include <ctype.h>
#include <limits.h>
#include <string.h>
#include <strings.h>

#include "../egress/egress_rules.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

#define CRED_MAX 64
#define CRED_FIELD_MAX 64

/* Fields the proxy writes itself, or that frame the request or the
 * connection: a credential in one of them would change what the server
 * reads as the request. */
static const char *const cred_refused_headers[] = {
    "host", "content-length", "transfer-encoding", "connection", "keep-alive", "te", "trailer", "upgrade",
    "expect", "accept-encoding", "proxy-authorization", "proxy-authenticate", "proxy-connection", NULL,
};

static bool cred_token(const char *s)
{
    static const char tchar[] = "!#$%&'*+-.^_`|~";
    if (*s == '\0' || strlen(s) > CRED_FIELD_MAX) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && strchr(tchar, *s) == NULL) return false;
    return true;
}

static int cred_header(brig_json v, const char *path, char **out, struct brig_error **err)
{
    TRY(json_get_string(v, path, "header", true, out, err));
    if (!cred_token(*out))
        return brig_failx(err, "%s.header: \"%.80s\": expected a header name (letters, digits, '-', at most %d)",
                          path, *out, CRED_FIELD_MAX);
    for (size_t i = 0; cred_refused_headers[i] != NULL; i++)
        if (strcasecmp(*out, cred_refused_headers[i]) == 0)
            return brig_failx(err, "%s.header: \"%s\": the proxy writes or drops this header itself; "
                              "a credential goes in its own (authorization, x-api-key, ...)", path, *out);
    return 0;
}

static int cred_prefix(brig_json v, const char *path, char **out, struct brig_error **err)
{
    if (json_get_string(v, path, "prefix", false, out, err) < 0) return -1;
    if (*out == NULL) *out = brig_strdup("");
    if (strlen(*out) > CRED_FIELD_MAX)
        return brig_failx(err, "%s.prefix: longer than %d bytes", path, CRED_FIELD_MAX);
    for (const char *s = *out; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return brig_failx(err, "%s.prefix: only printable ASCII (a line break would start another header)",
                              path);
    return 0;
}

/* "env:NAME" or "file:/absolute/path": a handle, never the secret itself. */
static int cred_value(brig_json v, const char *path, char **out, struct brig_error **err)
{
    TRY(json_get_string(v, path, "value", true, out, err));
    const char *s = *out;
    if (brig_str_has_prefix(s, "env:")) {
        const char *n = s + 4;
        bool ok = (isalpha((unsigned char)*n) || *n == '_') && strlen(n) <= 128;
        for (const char *p = n; ok && *p; p++) ok = isalnum((unsigned char)*p) || *p == '_';
        if (!ok) return brig_failx(err, "%s.value: env:NAME needs a variable name ([A-Za-z_][A-Za-z0-9_]*)", path);
        return 0;
    }
    if (brig_str_has_prefix(s, "file:")) {
        if (s[5] != '/' || strlen(s + 5) >= PATH_MAX)
            return brig_failx(err, "%s.value: file: needs an absolute path (file:/etc/brig/keys/NAME)", path);
        return 0;
    }
    /* Never echoed: it may be the secret, written where a handle belongs. */
    return brig_failx(err, "%s.value: expected \"env:NAME\" or \"file:/path\" (a policy holds a handle to the "
                      "secret, never the secret: see docs/egress.md)", path);
}

static int cred_parse(struct egress_rules *r, brig_json v, size_t i, struct brig_error **err)
{
    char path[64];
    snprintf(path, sizeof(path), "network.credentials[%zu]", i);
    TRY(json_as_object(v, path, err));
    static const char *const keys[] = { "host", "port", "header", "prefix", "value", NULL };
    for (size_t k = 0; k < json_object_len(v); k++) {
        bool known = false;
        for (size_t j = 0; keys[j] != NULL; j++) known = known || strcmp(keys[j], json_object_key(v, k)) == 0;
        if (!known) return brig_failx(err, "%s.%s: unknown key (docs/egress.md)", path, json_object_key(v, k));
    }
    struct egress_cred *c = &r->creds[i];
    autofree char *host = NULL;
    TRY(json_get_string(v, path, "host", true, &host, err));
    char norm[EGRESS_NAME_MAX + 2];
    struct egress_addr ip;
    if (egress_host_parse(host, norm, sizeof(norm), &ip) != EGRESS_HOST_NAME)
        return brig_failx(err, "%s.host: \"%.80s\": expected a host name (the proxy verifies the server's "
                          "certificate for that name; no address, no \"*\")", path, host);
    uint64_t port = 443;
    TRY(json_get_u64(v, path, "port", false, &port, err));
    if (port == 0 || port > 65535) return brig_failx(err, "%s.port: %llu: expected 1 to 65535", path, (unsigned long long)port);
    for (size_t j = 0; j < i; j++)
        if (strcmp(r->creds[j].host, norm) == 0)
            return brig_failx(err, "%s.host: %s has a credential already (network.credentials[%zu])", path, norm, j);
    c->host = brig_strdup(norm);
    c->port = (uint16_t)port;
    TRY(cred_header(v, path, &c->header, err));
    TRY(cred_prefix(v, path, &c->prefix, err));
    TRY(cred_value(v, path, &c->value, err));
    /* The proxy connects to host:port with the secret: the rules must let
     * it, as they would any connection (deny wins). */
    char why[300];
    if (egress_check_name(r, c->host, c->port, why, sizeof(why)) < 0)
        return brig_failx(err, "%s.host: %s:%u is refused by the rules (%s): a credential's destination must be "
                          "allowed too (network.allow \"%s:%u\")", path, c->host, c->port, why, c->host, c->port);
    return 0;
}

int policy_parse_credentials(struct egress_rules *r, brig_json v, struct brig_error **err)
{
    brig_json list = json_get(v, "credentials");
    if (list != NULL) {
        TRY(json_as_array(list, "network.credentials", err));
        size_t n = json_array_len(list);
        if (n > CRED_MAX) return brig_failx(err, "network.credentials: more than %d", CRED_MAX);
        r->creds = brig_calloc(n + 1, sizeof(*r->creds));
        for (size_t i = 0; i < n; i++) {
            r->n_creds = i + 1;     /* freed with the rules from here on */
            TRY(cred_parse(r, json_array_at(list, i), i, err));
        }
    }
    brig_json ca = json_get(v, "tlsCA");
    if (ca == NULL) return 0;
    const char *s = NULL;
    TRY(json_as_string(ca, "network.tlsCA", &s, err));
    if (s[0] != '/' || strlen(s) >= PATH_MAX)
        return brig_failx(err, "network.tlsCA: expected an absolute path (a PEM file of CA certificates)");
    if (r->n_creds == 0)
        return brig_failx(err, "network.tlsCA: only the proxy's own TLS (network.credentials) uses it; "
                          "CONNECT and SOCKS traffic is the client's TLS, verified by the client");
    r->tls_ca = brig_strdup(s);
    return 0;
}
