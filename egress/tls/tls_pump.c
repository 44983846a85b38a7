/* One request to a credential's host (tls.h): the handshake, verified by
 * OpenSSL for the credential's own host (SSL_set1_host: the library's
 * RFC 6125 check, never a comparison of ours); then the head with the
 * credential's header, and bytes both ways until the server's response
 * ends. Both sockets are non-blocking: one thread moves both directions
 * (an SSL object is not for two threads at once), and every byte the
 * server sends is passed on as soon as it is decrypted, masked (a
 * streamed model response arrives as it is produced). */
#include "tls.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#define TLS_HANDSHAKE_MS 10000
#define TLS_BUF (16u << 10)

static void pump_fail(int plain, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pump_fail(int plain, const char *fmt, ...)
{
    char msg[300];
    msg[0] = TLS_FAIL;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg + 1, sizeof(msg) - 1, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    size_t len = 1 + ((size_t)n < sizeof(msg) - 1 ? (size_t)n : sizeof(msg) - 2);
    for (size_t i = 1; i < len; i++)
        if ((unsigned char)msg[i] < 0x20 || (unsigned char)msg[i] > 0x7e) msg[i] = '?';
    (void)!send(plain, msg, len, MSG_NOSIGNAL);
}

/* Why the handshake failed, in the words a user can act on. */
static void pump_reason(SSL *s, char *buf, size_t len)
{
    long v = SSL_get_verify_result(s);
    unsigned long e = ERR_get_error();
    if (v != X509_V_OK) snprintf(buf, len, "certificate verify failed: %s", X509_verify_cert_error_string(v));
    else if (e != 0) snprintf(buf, len, "handshake: %s", ERR_reason_error_string(e) ? ERR_reason_error_string(e) : "error");
    else snprintf(buf, len, "handshake: the server closed the connection");
    ERR_clear_error();
}

static uint64_t pump_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

static bool pump_handshake(SSL *s, int up, int plain, const char *host)
{
    uint64_t until = pump_now_ms() + TLS_HANDSHAKE_MS;
    for (;;) {
        int r = SSL_connect(s);
        if (r == 1) return true;
        int e = SSL_get_error(s, r);
        uint64_t now = pump_now_ms();
        if ((e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) && now < until) {
            struct pollfd pf = { .fd = up, .events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT };
            if (poll(&pf, 1, (int)(until - now)) < 0 && errno != EINTR) break;
            continue;
        }
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            pump_fail(plain, "handshake with %s: no answer in %d s", host, TLS_HANDSHAKE_MS / 1000);
            return false;
        }
        char why[256];
        pump_reason(s, why, sizeof(why));
        pump_fail(plain, "%s (%s)", why, host);
        return false;
    }
    pump_fail(plain, "handshake with %s: poll: %s", host, strerror(errno));
    return false;
}

struct pump {
    SSL *s;
    int up, plain;
    char *out;              /* request bytes to send (head, then the client's) */
    size_t out_len, out_off;
    char *down;             /* masked response bytes to pass on */
    size_t down_len, down_off;
    bool plain_eof, tls_eof, broken;
    short up_events, plain_events;
};

/* One round of what can be done without waiting; true: something was. */
static bool pump_round(struct pump *p, struct tls_redact *rd, char *in, char *rbuf)
{
    bool did = false;
    p->up_events = p->plain_events = 0;
    if (p->out_len == 0 && !p->plain_eof) {
        ssize_t n = recv(p->plain, in, TLS_BUF, MSG_DONTWAIT);
        if (n > 0) {
            p->out = in;
            p->out_len = (size_t)n;
            p->out_off = 0;
            did = true;
        } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            p->plain_eof = did = true;      /* the request is all sent: the response still comes */
        } else {
            p->plain_events |= POLLIN;
        }
    }
    if (p->out_len > 0) {
        int r = SSL_write(p->s, p->out + p->out_off, (int)p->out_len);
        if (r > 0) {
            if (p->out != in) explicit_bzero(p->out + p->out_off, (size_t)r);     /* the head: the secret */
            p->out_off += (size_t)r;
            p->out_len -= (size_t)r;
            did = true;
        } else {
            int e = SSL_get_error(p->s, r);
            if (e == SSL_ERROR_WANT_READ) p->up_events |= POLLIN;
            else if (e == SSL_ERROR_WANT_WRITE) p->up_events |= POLLOUT;
            else p->broken = true;
        }
    }
    if (p->down_len == 0 && !p->tls_eof) {
        int r = SSL_read(p->s, rbuf, TLS_BUF);
        if (r > 0) {
            p->down_len = tls_redact_feed(rd, rbuf, (size_t)r, p->down);
            p->down_off = 0;
            did = true;
        } else {
            int e = SSL_get_error(p->s, r);
            if (e == SSL_ERROR_WANT_READ) p->up_events |= POLLIN;
            else if (e == SSL_ERROR_WANT_WRITE) p->up_events |= POLLOUT;
            else {
                /* The end (close_notify, or a close the response's own
                 * framing tells the client about): what is held goes too. */
                p->tls_eof = did = true;
                p->down_len = tls_redact_flush(rd, p->down);
                p->down_off = 0;
                ERR_clear_error();
            }
        }
    }
    if (p->down_len > 0) {
        ssize_t n = send(p->plain, p->down + p->down_off, p->down_len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            p->down_off += (size_t)n;
            p->down_len -= (size_t)n;
            did = true;
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            p->plain_events |= POLLOUT;
        } else {
            p->broken = true;       /* the proxy closed: the client went away */
        }
    }
    return did;
}

void tls_serve(SSL_CTX *ctx, const struct tls_cred *cred, int up, int plain, const char *head, size_t head_len,
               const char *setup_error)
{
    if (setup_error != NULL) return pump_fail(plain, "%s", setup_error);
    fcntl(plain, F_SETFL, O_NONBLOCK);
    fcntl(up, F_SETFL, O_NONBLOCK);
    SSL *s = SSL_new(ctx);
    if (s == NULL || SSL_set_fd(s, up) != 1 || SSL_set_tlsext_host_name(s, cred->host) != 1 ||
        SSL_set1_host(s, cred->host) != 1) {
        pump_fail(plain, "cannot set up TLS for %s", cred->host);
        SSL_free(s);
        return;
    }
    if (!pump_handshake(s, up, plain, cred->host)) {
        SSL_free(s);
        return;
    }
    const char ok = TLS_OK;
    if (send(plain, &ok, 1, MSG_NOSIGNAL) != 1) {
        SSL_free(s);
        return;
    }
    /* head, "Header: prefix secret", the blank line: wiped as it is sent. */
    size_t req_len = head_len + strlen(cred->header) + 2 + strlen(cred->prefix) + cred->n_secret + 4;
    char *req = malloc(req_len + 1);
    char *in = malloc(TLS_BUF), *rbuf = malloc(TLS_BUF), *down = malloc(TLS_BUF + TLS_SECRET_MAX);
    if (req == NULL || in == NULL || rbuf == NULL || down == NULL) abort();
    int n = snprintf(req, req_len + 1, "%.*s%s: %s%.*s\r\n\r\n", (int)head_len, head, cred->header, cred->prefix,
                     (int)cred->n_secret, cred->secret);
    struct pump p = { .s = s, .up = up, .plain = plain, .out = req, .out_len = (size_t)n, .down = down };
    struct tls_redact rd;
    tls_redact_init(&rd, cred->secret, cred->n_secret);
    while (!p.broken && !(p.tls_eof && p.down_len == 0)) {
        if (pump_round(&p, &rd, in, rbuf)) continue;
        struct pollfd pf[2] = { { .fd = up, .events = p.up_events }, { .fd = plain, .events = p.plain_events } };
        if (pf[0].events == 0) pf[0].fd = -1;
        if (pf[1].events == 0) pf[1].fd = -1;
        if (pf[0].fd < 0 && pf[1].fd < 0) break;
        if (poll(pf, 2, -1) < 0 && errno != EINTR) break;
    }
    explicit_bzero(req, req_len + 1);
    free(req);
    free(in);
    free(rbuf);
    free(down);
    shutdown(plain, SHUT_WR);
    SSL_free(s);
}
