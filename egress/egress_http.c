/* The HTTP proxy (RFC 9110 9.3.6 CONNECT, RFC 9112 3.2.2 absolute-form):
 *   CONNECT host:port     -> 200, then bytes both ways (TLS stays TLS)
 *   GET http://host/path  -> the request rewritten to origin-form, sent
 *                            with "Connection: close" and exactly its
 *                            Content-Length of body, then the answer;
 *                            then the connection is closed
 * One plain request per client connection: the rules judged that request
 * only, so nothing the client sends after its body (a pipelined second
 * request naming another host) may reach the server, which could route
 * it by its Host header. A chunked request body is refused: its end is
 * only found by parsing it, and a framing the proxy and the server read
 * differently is request smuggling.
 * A plain request whose Host header names another authority than its
 * URI is refused (400): the rules judged the URI, and a server or a cache
 * behind it must not be told another host; the Host sent is the URI's. Header lines with a bare CR or
 * LF or folded continuation lines are refused too (request smuggling).
 * Refusals are a short text/plain answer naming why. */
#include "egress_internal.h"

#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

#define HTTP_HEAD_MAX (32u << 10)
#define HTTP_HEAD_TIMEOUT_MS 30000

static void http_answer(struct egress_conn *c, int status, const char *reason, const char *what)
{
    char body[600];
    int bl = snprintf(body, sizeof(body), "brig egress: %s: %s\n", what, c->why);
    if (bl < 0) return;
    if ((size_t)bl >= sizeof(body)) bl = (int)sizeof(body) - 1;
    char head[256];
    int hl = snprintf(head, sizeof(head),
                      "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                      "Connection: close\r\nX-Brig-Egress: %s\r\n\r\n", status, reason, bl, what);
    if (egress_write_all(c->client, head, (size_t)hl) == 0) egress_write_all(c->client, body, (size_t)bl);
}

static void http_refuse(struct egress_conn *c)
{
    switch (c->fail) {
    case EGRESS_DENIED: http_answer(c, 403, "Forbidden", "denied"); break;
    case EGRESS_BAD: http_answer(c, 400, "Bad Request", "bad request"); break;
    case EGRESS_UNRESOLVED: http_answer(c, 502, "Bad Gateway", "cannot resolve"); break;
    case EGRESS_UNREACHABLE: http_answer(c, 502, "Bad Gateway", "cannot connect"); break;
    case EGRESS_LIMIT: http_answer(c, 503, "Service Unavailable", "limit"); break;
    case EGRESS_TLS: http_answer(c, 502, "Bad Gateway", "tls"); break;
    case EGRESS_OK: break;
    }
    egress_audit(c, c->fail == EGRESS_DENIED || c->fail == EGRESS_LIMIT ? "deny" : "error");
}

/* why = what, or "what: \"arg\"". */
static int http_bad(struct egress_conn *c, const char *what, const char *arg)
{
    if (arg != NULL) snprintf(c->why, sizeof(c->why), "%s: \"%.200s\"", what, arg);
    else snprintf(c->why, sizeof(c->why), "%s", what);
    c->fail = EGRESS_BAD;
    return -1;
}

/* "host:port", "[v6]:port", "host" (default port): into host, port. */
static int http_authority(struct egress_conn *c, const char *a, size_t len, uint16_t dflt, char *host,
                          size_t hlen, uint16_t *port)
{
    autofree char *s = strndup(a, len);
    if (s == NULL) abort();
    if (strpbrk(s, "@ \t%") != NULL) return http_bad(c, "userinfo, spaces and zone ids are refused in an authority", s);
    char *p = NULL;
    if (len >= hlen) return http_bad(c, "host too long", NULL);   /* never judge a cut name */
    if (s[0] == '[') {
        char *close = strchr(s, ']');
        if (close == NULL || (close[1] != '\0' && close[1] != ':')) return http_bad(c, "not an authority", s);
        *close = '\0';
        snprintf(host, hlen, "%s", s + 1);
        p = close[1] == ':' ? close + 2 : NULL;
    } else {
        char *colon = strchr(s, ':');
        if (colon) {
            *colon = '\0';
            p = colon + 1;
        }
        snprintf(host, hlen, "%s", s);
    }
    *port = dflt;
    if (p != NULL) {
        uint64_t v;
        if (*p == '\0' || *p == '0' || brig_parse_u64(p, &v) < 0 || v == 0 || v > 65535)
            return http_bad(c, "expected a port 1..65535", p);
        *port = (uint16_t)v;
    }
    return 0;
}

/* Read until the blank line that ends the head. The head's length, with
 * what came after it left in buf[head..*have). */
static ssize_t http_read_head(struct egress_conn *c, char *buf, size_t cap, size_t *have)
{
    *have = 0;
    for (;;) {
        char *end = *have >= 4 ? memmem(buf, *have, "\r\n\r\n", 4) : NULL;
        if (end != NULL) return end + 4 - buf;
        if (*have == cap) {
            http_bad(c, "request head over 32768 bytes", NULL);
            return -1;
        }
        ssize_t n = egress_read_some(c->client, buf + *have, cap - *have, HTTP_HEAD_TIMEOUT_MS);
        if (n <= 0) return -2;      /* the client went away or said nothing: no answer */
        *have += (size_t)n;
    }
}

/* A field name is a token (RFC 9110 5.1, 5.6.2): "Host\t:" is not "Host:"
 * here, but a server that trims the name would take it for one, with a
 * value the proxy never compared with the URI. */
static bool http_is_token(const char *s, size_t len)
{
    static const char tchar[] = "!#$%&'*+-.^_`|~";
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
        if (!alnum && (ch == '\0' || strchr(tchar, ch) == NULL)) return false;
    }
    return true;
}

static bool http_is_hop_header(const char *line, size_t len)
{
    static const char *const hop[] = { "connection:", "proxy-connection:", "proxy-authorization:",
                                       "keep-alive:", "proxy-authenticate:", NULL };
    for (size_t i = 0; hop[i]; i++)
        if (len >= strlen(hop[i]) && strncasecmp(line, hop[i], strlen(hop[i])) == 0) return true;
    return false;
}

/* The headers after the request line, checked; the Host header (at most
 * one) must name host:port; body is the Content-Length (at most one, digits
 * only; 0 without). Writes the forwarded headers into out: for a request
 * sent on with c->cred, not the credential's header (every line of it,
 * however spelled: the proxy's value replaces the sandbox's) nor
 * Accept-Encoding (the proxy asks for identity). */
static int http_headers(struct egress_conn *c, const char *h, const char *end, const char *host, uint16_t port,
                        char *out, size_t cap, size_t *olen, uint64_t *body)
{
    bool seen_host = false, seen_length = false;
    *body = 0;
    while (h < end) {
        const char *eol = memmem(h, (size_t)(end - h), "\r\n", 2);
        if (eol == NULL) eol = end;
        size_t len = (size_t)(eol - h);
        if (memchr(h, '\r', len) || memchr(h, '\n', len) || memchr(h, '\0', len))
            return http_bad(c, "a header line with a bare CR, LF or NUL", NULL);
        if (len > 0 && (h[0] == ' ' || h[0] == '\t'))
            return http_bad(c, "a folded header line (obs-fold)", NULL);
        const char *colon = memchr(h, ':', len);
        if (len > 0 && (colon == NULL || colon == h || !http_is_token(h, (size_t)(colon - h))))
            return http_bad(c, "a header line without \"Name:\"", NULL);
        if (len >= 5 && strncasecmp(h, "host:", 5) == 0) {
            if (seen_host) return http_bad(c, "two Host headers", NULL);
            seen_host = true;
            const char *v = h + 5;
            while (v < eol && (*v == ' ' || *v == '\t')) v++;
            size_t vl = (size_t)(eol - v);
            while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) vl--;
            char hh[EGRESS_NAME_MAX + 2];
            uint16_t hp;
            if (http_authority(c, v, vl, 80, hh, sizeof(hh), &hp) < 0) return -1;
            char hn[EGRESS_NAME_MAX + 2], un[EGRESS_NAME_MAX + 2];
            struct egress_addr ignored;
            if (egress_host_parse(hh, hn, sizeof(hn), &ignored) == EGRESS_HOST_BAD ||
                egress_host_parse(host, un, sizeof(un), &ignored) == EGRESS_HOST_BAD || strcmp(hn, un) != 0 ||
                hp != port)
                return http_bad(c, "the Host header names another host than the request URI", NULL);
        }
        if (len >= 18 && strncasecmp(h, "transfer-encoding:", 18) == 0)
            return http_bad(c, "a request body with Transfer-Encoding (send Content-Length, or use CONNECT)", NULL);
        if (len >= 15 && strncasecmp(h, "content-length:", 15) == 0) {
            const char *v = h + 15;
            while (v < eol && (*v == ' ' || *v == '\t')) v++;
            size_t vl = (size_t)(eol - v);
            while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) vl--;
            char num[24];
            if (seen_length) return http_bad(c, "two Content-Length headers", NULL);
            seen_length = true;
            if (vl == 0 || vl >= sizeof(num) || strspn(v, "0123456789") < vl)
                return http_bad(c, "Content-Length is not a number", NULL);
            memcpy(num, v, vl);
            num[vl] = '\0';
            if (brig_parse_u64(num, body) < 0) return http_bad(c, "Content-Length is not a number", NULL);
        }
        bool is_host = len >= 5 && strncasecmp(h, "host:", 5) == 0;   /* sent from the URI */
        bool dropped = c->cred != NULL && len > 0 &&
                       (egress_cred_header_is(c->cred, h, (size_t)(colon - h)) ||
                        (colon - h == 15 && strncasecmp(h, "accept-encoding", 15) == 0));
        if (len > 0 && !is_host && !dropped && !http_is_hop_header(h, len)) {
            if (*olen + len + 2 >= cap) return http_bad(c, "headers too long", NULL);
            memcpy(out + *olen, h, len);
            memcpy(out + *olen + len, "\r\n", 2);
            *olen += len + 2;
        }
        h = eol + 2;
    }
    return 0;
}

/* The methods whose request content has no generally defined semantics
 * (RFC 9110 9.3.1 GET, 9.3.2 HEAD, 9.3.5 DELETE, 9.3.7 OPTIONS: "does not
 * define any use for such content"; 9.3.8 TRACE: "MUST NOT send content"):
 * a server may ignore the body, and then reads it as a request. POST, PUT,
 * PATCH and extension methods (WebDAV's) carry a body their server reads. */
static bool http_body_undefined(const char *m, size_t n)
{
    static const char *const none[] = { "GET", "HEAD", "DELETE", "OPTIONS", "TRACE" };
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
        if (n == strlen(none[i]) && memcmp(m, none[i], n) == 0) return true;
    return false;
}

/* CONNECT host:port HTTP/1.x */
static void http_connect(struct egress_conn *c, const char *target, size_t tlen, const char *rest, size_t nrest)
{
    c->proto = EGRESS_PROTO_CONNECT;
    char host[EGRESS_NAME_MAX + 2];
    uint16_t port = 0;
    if (http_authority(c, target, tlen, 0, host, sizeof(host), &port) < 0) return http_refuse(c);
    if (port == 0) {
        c->fail = EGRESS_BAD;
        snprintf(c->why, sizeof(c->why), "CONNECT needs host:port");
        return http_refuse(c);
    }
    c->upstream = egress_dial(c, host, port);
    if (c->upstream < 0) return http_refuse(c);
    static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
    if (egress_write_all(c->client, ok, sizeof(ok) - 1) < 0) return egress_audit(c, "allow");
    /* The name was judged; a TLS client must ask the server for it too. */
    struct egress_addr ip;
    char ignored[EGRESS_NAME_MAX + 2];
    autofree char *first = NULL;
    size_t nfirst = nrest;
    if (egress_host_parse(host, ignored, sizeof(ignored), &ip) == EGRESS_HOST_NAME &&
        egress_sni_check(c, rest, nrest, &first, &nfirst) < 0)
        return egress_audit(c, "deny");
    egress_relay(c, first != NULL ? first : rest, nfirst, EGRESS_RELAY_ALL);
    egress_audit(c, "allow");
}

/* METHOD http://authority/path HTTP/1.x */
static void http_plain(struct egress_conn *c, const char *method, size_t mlen, const char *uri, size_t ulen,
                       const char *version, size_t vlen, const char *headers, const char *head_end,
                       const char *rest, size_t nrest)
{
    c->proto = EGRESS_PROTO_HTTP;
    if (ulen < 7 || strncasecmp(uri, "http://", 7) != 0) {
        c->fail = EGRESS_BAD;
        snprintf(c->why, sizeof(c->why), "%s", ulen >= 8 && strncasecmp(uri, "https://", 8) == 0
                 ? "https:// goes through CONNECT" : "expected an absolute http:// URI");
        return http_refuse(c);
    }
    const char *auth = uri + 7, *uend = uri + ulen;
    const char *path = auth;
    while (path < uend && *path != '/' && *path != '?' && *path != '#') path++;
    char host[EGRESS_NAME_MAX + 2];
    uint16_t port;
    if (path == auth || http_authority(c, auth, (size_t)(path - auth), 80, host, sizeof(host), &port) < 0) {
        if (path == auth) http_bad(c, "no host in the URI", NULL);
        return http_refuse(c);
    }
    char norm[EGRESS_NAME_MAX + 2];
    struct egress_addr ignored;
    enum egress_host kind = egress_host_parse(host, norm, sizeof(norm), &ignored);
    if (kind == EGRESS_HOST_BAD) {
        c->upstream = egress_dial(c, host, port);   /* refuses, with dial's reason */
        return http_refuse(c);
    }
    /* A credential's host: the request goes on over TLS to its port, with
     * its header, and Host names that destination. */
    if (kind == EGRESS_HOST_NAME) c->cred = egress_cred_for_http(c->ctx->rules, norm, port);
    char authority[EGRESS_NAME_MAX + 16];
    if (c->cred == NULL) snprintf(authority, sizeof(authority), "%.*s", (int)(path - auth), auth);
    else if (c->cred->port == 443) snprintf(authority, sizeof(authority), "%s", c->cred->host);
    else snprintf(authority, sizeof(authority), "%s:%u", c->cred->host, c->cred->port);
    autofree char *out = brig_calloc(1, HTTP_HEAD_MAX + 256);
    /* Host is the judged URI's authority (RFC 9112 3.2.2), never left out:
     * a request without one goes to the server's default virtual host. */
    int ol = snprintf(out, HTTP_HEAD_MAX, "%.*s %s%.*s %.*s\r\nHost: %s\r\n", (int)mlen, method,
                      *path == '/' ? "" : "/", (int)(uend - path), path, (int)vlen, version, authority);
    if (ol < 0 || ol >= (int)HTTP_HEAD_MAX) {
        http_bad(c, "request head over 32768 bytes", NULL);
        return http_refuse(c);
    }
    size_t olen = (size_t)ol;
    uint64_t body;
    if (http_headers(c, headers, head_end, host, port, out, HTTP_HEAD_MAX, &olen, &body) < 0) {
        snprintf(c->name, sizeof(c->name), "%s", host);
        c->port = port;
        return http_refuse(c);
    }
    /* A server that reads no body on such a method would take one for its
     * next request (a "CL.0" desync): that request was never judged. */
    if (body > 0 && http_body_undefined(method, mlen)) {
        char why[128];
        snprintf(why, sizeof(why), "a request body on %.*s (RFC 9110 9.3: content with no defined meaning, "
                 "a server may not read it)", (int)mlen, method);
        http_bad(c, why, NULL);
        snprintf(c->name, sizeof(c->name), "%s", host);
        c->port = port;
        return http_refuse(c);
    }
    if (c->cred != NULL) {
        /* The helper adds the credential's line and the blank line. */
        olen += (size_t)snprintf(out + olen, 256, "Accept-Encoding: identity\r\nConnection: close\r\n");
        c->upstream = egress_dial(c, c->cred->host, c->cred->port);
        if (c->upstream < 0 || egress_tls_open(c, out, olen) < 0) return http_refuse(c);
        olen = 0;
    } else {
        olen += (size_t)snprintf(out + olen, 256, "Connection: close\r\n\r\n");
        c->upstream = egress_dial(c, host, port);
        if (c->upstream < 0) return http_refuse(c);
    }
    /* This request's body and nothing after it: what the client sent
     * beyond (a pipelined request) is never forwarded. */
    size_t nbody = body < nrest ? (size_t)body : nrest;
    autofree char *first = brig_calloc(1, olen + nbody + 1);
    memcpy(first, out, olen);
    memcpy(first + olen, rest, nbody);
    egress_relay(c, first, olen + nbody, body - nbody);
    egress_audit(c, "allow");
}

void egress_http_serve(struct egress_conn *c)
{
    autofree char *buf = brig_calloc(1, HTTP_HEAD_MAX + 1);
    size_t have = 0;
    ssize_t head = http_read_head(c, buf, HTTP_HEAD_MAX, &have);
    if (head == -2) return;
    if (head < 0) return http_refuse(c);
    char *line_end = memmem(buf, (size_t)head, "\r\n", 2);
    /* METHOD SP TARGET SP HTTP/1.x: exactly two spaces. */
    char *sp1 = memchr(buf, ' ', (size_t)(line_end - buf));
    char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1)) : NULL;
    if (sp1 == NULL || sp2 == NULL || memchr(sp2 + 1, ' ', (size_t)(line_end - sp2 - 1)) != NULL ||
        line_end - sp2 - 1 != 8 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
        memchr(buf, '\n', (size_t)(line_end - buf)) != NULL || memchr(buf, '\r', (size_t)(line_end - buf)) != NULL ||
        memchr(buf, '\0', (size_t)(line_end - buf)) != NULL) {
        c->fail = EGRESS_BAD;
        snprintf(c->why, sizeof(c->why), "not an HTTP/1.x request line");
        return http_refuse(c);
    }
    for (char *m = buf; m < sp1; m++)
        if (!isupper((unsigned char)*m)) {
            c->fail = EGRESS_BAD;
            snprintf(c->why, sizeof(c->why), "not an HTTP method");
            return http_refuse(c);
        }
    const char *rest = buf + head;
    size_t nrest = have - (size_t)head;
    if (sp1 - buf == 7 && strncmp(buf, "CONNECT", 7) == 0)
        return http_connect(c, sp1 + 1, (size_t)(sp2 - sp1 - 1), rest, nrest);
    http_plain(c, buf, (size_t)(sp1 - buf), sp1 + 1, (size_t)(sp2 - sp1 - 1), sp2 + 1, 8, line_end + 2,
               buf + head - 2, rest, nrest);
}
