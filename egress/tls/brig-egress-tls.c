/* brig-egress-tls: the egress proxy's TLS helper (docs/egress.md,
 * "Credentials"). The proxy's launcher (egress/egress_tls.c), forked
 * before the proxy read a secret or confined itself, execs it at the
 * proxy's first request to a credential's host, with nothing but its
 * control socket on fd TLS_CTL_FD and an empty environment; the socket
 * holds, queued, the credentials with their secrets and the network.tlsCA
 * file (egress_tls_proto.h), then the requests.
 *   main
 *     not dumpable, before a secret arrives
 *     the configuration: credentials, the tlsCA fd
 *     confined as the proxy is (egress_sandbox_enter_tls: a uid of its
 *       own, no capability, seccomp; not even a socket to make)
 *     one thread per request the proxy hands over (tls_pump.c)
 * The TLS context is made at the first request too. Its CAs: the system's, looked up on demand in
 * OpenSSL's hashed directory (/etc/ssl/certs: public files, read-only, one
 * CA per verification; parsing Debian's whole bundle up front costs
 * 60-100 ms of CPU here), and tlsCA, opened by the proxy before either was
 * confined (it may be root's alone), parsed from that fd.
 * It holds the secrets; it never parses a request (the proxy did) and
 * verifies every server for the credential's own host, so whatever the
 * proxy, which parses the sandbox's bytes, is made to do, a secret goes
 * only to the host it is for. It ends when the proxy closes the socket
 * (or dies: PR_SET_PDEATHSIG). OpenSSL is linked into this program
 * only, not into brig. */
#include "tls.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "../egress_internal.h"

#define TLS_MAX_CREDS 64
#define TLS_THREAD_STACK (256u << 10)

static struct tls_cred tls_creds[TLS_MAX_CREDS];
static size_t tls_n_creds;
static SSL_CTX *tls_ctx;
static char tls_setup_error[300];   /* set: every request fails with it */

struct tls_job {
    const struct tls_cred *cred;
    int up, plain;
    size_t head_len;
    char head[];
};

/* One message and up to two fds (close-on-exec). Bytes, 0 at EOF, -1. */
static ssize_t tls_recv(int sock, char *buf, size_t len, int fds[2])
{
    fds[0] = fds[1] = -1;
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    union { char b[CMSG_SPACE(2 * sizeof(int))]; struct cmsghdr align; } u;
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof(u.b) };
    ssize_t n;
    while ((n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {}
    for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&m) : NULL; c != NULL; c = CMSG_NXTHDR(&m, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            memcpy(fds, CMSG_DATA(c), (k < 2 ? k : 2) * sizeof(int));
            for (size_t i = 2; i < k; i++) close(((int *)CMSG_DATA(c))[i]);
        }
    if (n >= 0 && (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) return -1;
    return n;
}

/* 'C' port host NUL header NUL prefix NUL secret */
static int tls_take_cred(const char *msg, size_t n)
{
    if (tls_n_creds == TLS_MAX_CREDS || n < 3) return -1;
    struct tls_cred *c = &tls_creds[tls_n_creds];
    memcpy(&c->port, msg + 1, 2);
    const char *p = msg + 3, *end = msg + n;
    char **fields[] = { &c->host, &c->header, &c->prefix };
    for (size_t f = 0; f < 3; f++) {
        const char *z = memchr(p, '\0', (size_t)(end - p));
        if (z == NULL) return -1;
        *fields[f] = strdup(p);
        p = z + 1;
    }
    c->n_secret = (size_t)(end - p);
    c->secret = malloc(c->n_secret + 1);
    if (c->host == NULL || c->header == NULL || c->prefix == NULL || c->secret == NULL) return -1;
    memcpy(c->secret, p, c->n_secret);
    c->secret[c->n_secret] = '\0';
    tls_n_creds++;
    return 0;
}

static int tls_read_config(char *buf, size_t cap, int *ca_fd)
{
    for (;;) {
        int fds[2];
        ssize_t n = tls_recv(TLS_CTL_FD, buf, cap, fds);
        if (fds[1] >= 0) close(fds[1]);
        if (n <= 0) return -1;
        if (buf[0] == 'E') return 0;
        if (buf[0] == 'A' && fds[0] >= 0 && *ca_fd < 0) *ca_fd = fds[0];
        else if (fds[0] >= 0) close(fds[0]);
        if (buf[0] == 'C' && tls_take_cred(buf, (size_t)n) < 0) return -1;
        explicit_bzero(buf, (size_t)n);
    }
}

static int tls_ca_fd = -1;

/* The policy's tlsCA: a tlsCA without a certificate fails every request
 * with why (the policy's author meant it to be trusted). */
static void tls_load_ca_file(X509_STORE *store)
{
    BIO *b = BIO_new_fd(tls_ca_fd, BIO_CLOSE);
    tls_ca_fd = -1;
    STACK_OF(X509_INFO) *infos = b != NULL ? PEM_X509_INFO_read_bio(b, NULL, NULL, NULL) : NULL;
    int added = 0;
    for (int i = 0; infos != NULL && i < sk_X509_INFO_num(infos); i++) {
        X509_INFO *inf = sk_X509_INFO_value(infos, i);
        if (inf->x509 != NULL && X509_STORE_add_cert(store, inf->x509) == 1) added++;
    }
    sk_X509_INFO_pop_free(infos, X509_INFO_free);
    BIO_free(b);
    ERR_clear_error();
    if (added == 0)
        snprintf(tls_setup_error, sizeof(tls_setup_error), "network.tlsCA: no PEM certificate in the file");
}

static void tls_make_ctx(void)
{
    tls_ctx = SSL_CTX_new(TLS_client_method());
    if (tls_ctx == NULL) {
        snprintf(tls_setup_error, sizeof(tls_setup_error), "cannot make a TLS context");
        return;
    }
    SSL_CTX_set_min_proto_version(tls_ctx, TLS1_2_VERSION);
    SSL_CTX_set_verify(tls_ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_mode(tls_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    /* Many servers end a response with a close and no close_notify; the
     * response's own framing tells its client whether it is whole. */
    SSL_CTX_set_options(tls_ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
    if (SSL_CTX_load_verify_dir(tls_ctx, X509_get_default_cert_dir()) != 1) ERR_clear_error();
    if (tls_ca_fd >= 0) tls_load_ca_file(SSL_CTX_get_cert_store(tls_ctx));
}

static void *tls_job_main(void *arg)
{
    struct tls_job *j = arg;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, tls_make_ctx);
    tls_serve(tls_ctx, j->cred, j->up, j->plain, j->head, j->head_len,
              tls_setup_error[0] ? tls_setup_error : NULL);
    close(j->up);
    close(j->plain);
    free(j);
    return NULL;
}

int main(void)
{
    pid_t parent = getppid();
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);     /* before a secret is in this memory */
    if (parent == 1) return 1;
    signal(SIGPIPE, SIG_IGN);
    static char msg[TLS_MSG_MAX + TLS_SECRET_MAX];
    if (tls_read_config(msg, sizeof(msg), &tls_ca_fd) < 0) return 1;
    /* What OpenSSL would look for on first use (its CPU features, the
     * error strings), while this process can still open anything. */
    if (OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_LOAD_SSL_STRINGS, NULL) != 1) return 1;
    char why[300];
    const int keep[] = { TLS_CTL_FD, tls_ca_fd };
    if (egress_sandbox_enter_tls(keep, tls_ca_fd >= 0 ? 2 : 1, parent, why, sizeof(why)) < 0) return 1;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, TLS_THREAD_STACK);
    for (;;) {
        int fds[2];
        ssize_t n = tls_recv(TLS_CTL_FD, msg, sizeof(msg), fds);
        if (n <= 0) _exit(0);       /* the proxy ended: nothing to flush, no OpenSSL clean-up to run */
        uint32_t idx;
        if (n < 5 || msg[0] != 'R' || fds[0] < 0 || fds[1] < 0 || (memcpy(&idx, msg + 1, 4), idx >= tls_n_creds)) {
            if (fds[0] >= 0) close(fds[0]);
            if (fds[1] >= 0) close(fds[1]);
            continue;
        }
        struct tls_job *j = malloc(sizeof(*j) + (size_t)n - 5);
        if (j == NULL) abort();
        *j = (struct tls_job){ .cred = &tls_creds[idx], .up = fds[0], .plain = fds[1], .head_len = (size_t)n - 5 };
        memcpy(j->head, msg + 5, j->head_len);
        pthread_t t;
        if (pthread_create(&t, &attr, tls_job_main, j) != 0) {
            close(j->up);
            close(j->plain);
            free(j);
        }
    }
}
