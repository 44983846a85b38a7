/* The proxy's side of network.credentials (docs/egress.md, "Credentials"):
 * the secrets are read here, in the proxy process before it is confined
 * (the caller's environment it inherited, or a file only root reads),
 * handed to the TLS helper brig-egress-tls and wiped; from then on only
 * the helper holds them, and the proxy, which parses every byte the
 * sandbox sends, holds none. The helper is a program of its own (OpenSSL
 * linked into it, not into brig: no cost on every brig start), exec'd by
 * a launcher forked before any secret is read, at the first request that
 * needs it, with an empty environment: no secret is in its argv or
 * environ, and a sandbox that never uses its credential pays one fork.
 * Each request to a credential's host is the proxy's up to the connected
 * TCP socket; egress_tls_open gives that socket and the request head to
 * the helper and relays the client to the helper's plain side. */
#include "egress_internal.h"
#include "egress_tls_proto.h"

#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "brig-config.h"
#include "../runtime/linux/exe_seal.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fdpass.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/strutil.h"

#define TLS_STATUS_TIMEOUT_MS 30000     /* the helper's set-up, then a handshake (10 s) */

/* Beside brig, in brig's build tree, in the libexec of the install tree brig is in
 * (unpacked under another root), or in the compiled-in libexec. */
static int tls_helper_path(char *out, size_t len)
{
    char exe[PATH_MAX];
    if (exe_seal_origin_path(exe, sizeof(exe)) == 0) {
        const char *dir = dirname(exe);
        const char *const rel[] = { TLS_HELPER_NAME, "../egress/tls/" TLS_HELPER_NAME,
                                    BRIG_LIBEXEC_FROM_SBIN "/" TLS_HELPER_NAME };
        for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
            snprintf(out, len, "%s/%s", dir, rel[i]);
            if (access(out, X_OK) == 0) return 0;
        }
    }
    snprintf(out, len, "%s/%s", BRIG_LIBEXECDIR, TLS_HELPER_NAME);
    return access(out, X_OK);
}

/* The secret of credential i into buf: its length, or -1 with why (which
 * names the handle, never a byte of the value). */
static ssize_t tls_secret(const struct egress_cred *c, size_t i, char *buf, size_t cap, char *why, size_t len)
{
    size_t n = 0;
    if (brig_str_has_prefix(c->value, "env:")) {
        const char *v = getenv(c->value + 4);
        if (v == NULL || *v == '\0')
            return snprintf(why, len, "network.credentials[%zu].value: %s is not set in brig's environment "
                            "(set it where brig runs)", i, c->value), -1;
        n = strlen(v);
        if (n >= cap) return snprintf(why, len, "network.credentials[%zu].value: %s: longer than %d bytes", i,
                                      c->value, TLS_SECRET_MAX), -1;
        memcpy(buf, v, n);
    } else {
        struct stat st;
        autoerr struct brig_error *err = NULL;
        autoclose int fd = brig_open_input(AT_FDCWD, c->value + 5, BRIG_INPUT_NOFOLLOW, &st, &err);
        if (fd < 0) return snprintf(why, len, "network.credentials[%zu].value: %s", i, err->msg), -1;
        /* Judged by what was opened: only root may have written or read it. */
        if (st.st_uid != 0 || (st.st_mode & 077) != 0)
            return snprintf(why, len, "network.credentials[%zu].value: %s: expected a file owned by root that only "
                            "root reads (chown root; chmod 0600): it is uid %u, mode %04o", i, c->value,
                            (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777)), -1;
        for (;;) {
            ssize_t r = read(fd, buf + n, cap - n);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) return snprintf(why, len, "network.credentials[%zu].value: %s: %s", i, c->value,
                                       strerror(errno)), -1;
            if (r == 0) break;
            n += (size_t)r;
            if (n == cap) return snprintf(why, len, "network.credentials[%zu].value: %s: longer than %d bytes", i,
                                          c->value, TLS_SECRET_MAX), -1;
        }
        if (n > 0 && buf[n - 1] == '\n') n--;       /* echo KEY > file */
        if (n > 0 && buf[n - 1] == '\r') n--;
    }
    bool ok = n >= TLS_SECRET_MIN && buf[0] != ' ' && buf[n - 1] != ' ';
    for (size_t k = 0; ok && k < n; k++) ok = (unsigned char)buf[k] >= 0x20 && (unsigned char)buf[k] <= 0x7e;
    if (!ok)
        return snprintf(why, len, "network.credentials[%zu].value: %s: not a header value (%d to %d printable "
                        "ASCII bytes, no line break, no leading or trailing space)", i, c->value, TLS_SECRET_MIN,
                        TLS_SECRET_MAX - 1), -1;
    return (ssize_t)n;
}

/* The caller's environment this process inherited: its copy of each
 * secret goes (the process's /proc/PID/environ is this memory). */
static void tls_wipe_env(const struct egress_rules *r)
{
    for (size_t i = 0; i < r->n_creds; i++) {
        char *v = brig_str_has_prefix(r->creds[i].value, "env:") ? getenv(r->creds[i].value + 4) : NULL;
        if (v != NULL) explicit_bzero(v, strlen(v));
    }
}

/* The helper's launcher, forked before a secret is read: it waits, root
 * but holding nothing (no secret, no fd but the control socket and the
 * go pipe), until the proxy's first request to a credential's host asks
 * for the helper, and only then execs it; at EOF on the pipe (the proxy
 * ended first) it exits. A sandbox that never uses its credential pays a
 * fork for it, not an exec of OpenSSL. */
static __attribute__((noreturn)) void tls_launcher(const struct egress_rules *r, const char *path, pid_t proxy,
                                                   int sock, int go)
{
    /* Dies with the proxy; nothing of it but the control socket and the
     * pipe, and no environment at all. */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != proxy) _exit(1);
    prctl(PR_SET_NAME, TLS_HELPER_NAME, 0, 0, 0);
    tls_wipe_env(r);
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(sock, TLS_CTL_FD) < 0 || dup2(go, TLS_CTL_FD + 1) < 0 || dup2(null, 0) < 0 ||
        dup2(null, 1) < 0 || dup2(null, 2) < 0)
        _exit(1);
    syscall(SYS_close_range, TLS_CTL_FD + 2, ~0u, 0);
    char b;
    ssize_t n;
    while ((n = read(TLS_CTL_FD + 1, &b, 1)) < 0 && errno == EINTR) {}
    if (n != 1) _exit(0);
    close(TLS_CTL_FD + 1);
    char *const argv[] = { (char *)TLS_HELPER_NAME, NULL };
    char *const envp[] = { NULL };
    execve(path, argv, envp);
    _exit(127);
}

/* The configuration messages: every credential with its secret, the CA
 * file. The secrets are wiped from this process as they are sent. */
static int tls_configure(const struct egress_rules *r, int sock, char *why, size_t len)
{
    /* On this (the proxy's main) thread's stack, wiped after each send. */
    char msg[TLS_MSG_MAX + TLS_SECRET_MAX];
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < r->n_creds; i++) {
        const struct egress_cred *c = &r->creds[i];
        size_t off = 0;
        msg[off++] = 'C';
        memcpy(msg + off, &c->port, 2);
        off += 2;
        const char *fields[] = { c->host, c->header, c->prefix };
        for (size_t f = 0; f < 3; f++) {
            size_t l = strlen(fields[f]) + 1;
            memcpy(msg + off, fields[f], l);
            off += l;
        }
        ssize_t n = tls_secret(c, i, msg + off, TLS_SECRET_MAX, why, len);
        if (n < 0) rc = -1;
        else if (send(sock, msg, off + (size_t)n, MSG_NOSIGNAL) < 0)
            rc = (snprintf(why, len, "TLS helper: send: %s", strerror(errno)), -1);
        explicit_bzero(msg, sizeof(msg));
    }
    if (rc == 0 && r->tls_ca != NULL) {
        autoerr struct brig_error *err = NULL;
        autoclose int fd = brig_open_input(AT_FDCWD, r->tls_ca, 0, NULL, &err);
        if (fd < 0) return snprintf(why, len, "network.tlsCA: %s", err->msg), -1;
        if (brig_send_with_fd(sock, "A", 1, fd, &err) < 0) return snprintf(why, len, "TLS helper: %s", err->msg), -1;
    }
    if (rc == 0 && send(sock, "E", 1, MSG_NOSIGNAL) < 0)
        rc = (snprintf(why, len, "TLS helper: send: %s", strerror(errno)), -1);
    tls_wipe_env(r);
    return rc;
}

int egress_tls_start(const struct egress_rules *r, pid_t *pid, int *fd, int *go, char *why, size_t len)
{
    *pid = -1;
    *fd = *go = -1;
    if (r->n_creds == 0) return 0;
    char path[PATH_MAX];
    if (tls_helper_path(path, sizeof(path)) < 0)
        return snprintf(why, len, "network.credentials: %s not found (installed with brig, in %s)", TLS_HELPER_NAME,
                        BRIG_LIBEXECDIR), -1;
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0) return snprintf(why, len, "TLS helper: pipe: %s", strerror(errno)), -1;
    int sv[2];
    pid_t self = getpid();
    pid_t child = egress_fork_peer("TLS helper", sv, why, len);
    if (child == 0) tls_launcher(r, path, self, sv[1], pipefd[0]);
    close(pipefd[0]);
    if (child < 0) {
        close(pipefd[1]);
        return -1;
    }
    /* The secrets wait in the socket for the helper. */
    if (tls_configure(r, sv[0], why, len) < 0) {
        close(sv[0]);
        close(pipefd[1]);
        kill(child, SIGKILL);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
        return -1;
    }
    *pid = child;
    *fd = sv[0];
    *go = pipefd[1];
    return 0;
}

void egress_tls_finish(pid_t pid, int fd, int go)
{
    if (pid < 0) return;
    close(go);
    close(fd);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}

static int tls_fail(struct egress_conn *c, const char *why, const char *detail)
{
    snprintf(c->why, sizeof(c->why), "%s%s%s", why, detail ? ": " : "", detail ? detail : "");
    c->fail = EGRESS_TLS;
    return -1;
}

int egress_tls_open(struct egress_conn *c, const char *head, size_t head_len)
{
    const struct egress_rules *r = c->ctx->rules;
    uint32_t idx = (uint32_t)(c->cred - r->creds);
    if (c->ctx->tls_fd < 0 || head_len + 5 > TLS_MSG_MAX) return tls_fail(c, "no TLS helper", NULL);
    /* The first request starts the helper (tls_launcher). */
    if (!atomic_exchange(&c->ctx->tls_going, true) && write(c->ctx->tls_go, "g", 1) != 1)
        return tls_fail(c, "cannot start the TLS helper", strerror(errno));
    size_t got = egress_budget_take(c->ctx, head_len);
    if (got < head_len) {
        egress_budget_refund(c->ctx, got);
        return tls_fail(c, "network.maxBytes spent", NULL);
    }
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) < 0) return tls_fail(c, "socketpair", strerror(errno));
    autofree char *msg = brig_calloc(1, head_len + 5);
    msg[0] = 'R';
    memcpy(msg + 1, &idx, 4);
    memcpy(msg + 5, head, head_len);
    struct iovec iov = { .iov_base = msg, .iov_len = head_len + 5 };
    union { char buf[CMSG_SPACE(2 * sizeof(int))]; struct cmsghdr align; } u;
    memset(&u, 0, sizeof(u));
    struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
    int fds[2] = { c->upstream, sv[1] };
    memcpy(CMSG_DATA(cm), fds, sizeof(fds));
    ssize_t sent;
    while ((sent = sendmsg(c->ctx->tls_fd, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
    /* The helper has its copies (or there is none): the TCP socket is its. */
    close(sv[1]);
    /* Swapped where the proxy's end shuts sockets down (egress_proxy.c),
     * before the old one is closed: never a closed fd number there. */
    int tcp = c->upstream;
    egress_conn_upstream(c, sv[0]);
    close(tcp);
    if (sent < 0) return tls_fail(c, "the TLS helper is gone", strerror(errno));
    c->up += head_len;
    char status[300];
    ssize_t n = egress_read_some(c->upstream, status, 1, TLS_STATUS_TIMEOUT_MS);
    if (n == 1 && status[0] == TLS_OK) return 0;
    if (n != 1 || status[0] != TLS_FAIL) return tls_fail(c, "the TLS helper did not answer", NULL);
    got = 0;
    while (got < sizeof(status) - 1 &&
           (n = egress_read_some(c->upstream, status + got, sizeof(status) - 1 - got, TLS_STATUS_TIMEOUT_MS)) > 0)
        got += (size_t)n;
    status[got] = '\0';
    return tls_fail(c, status, NULL);
}
