/* The proxy's accept loop: each admitted connection (at most
 * network.maxConnections at once) is served by a detached worker thread,
 * until stop_fd says the sandbox is gone. Then every open connection's
 * sockets are shut down, which ends whatever its thread waits for (a
 * request head, a TLS record, a connect, the relay's poll) at once, so
 * the threads write their audit lines and the proxy ends within
 * milliseconds of its sandbox, not when the servers close. A worker that finished waits a
 * while for the next connection: handing a connection to a waiting
 * thread costs ~20 us, starting a thread ~300 us on a loaded machine,
 * which was most of what the proxy added to a connection's set-up. A connection over the limit is answered at once (503
 * on the HTTP port; closed on the SOCKS port) and audited, without a
 * thread: a flood costs the proxy nothing it keeps. So is every
 * connection once network.maxBytes is spent. */
#include "egress_internal.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

#define PROXY_THREAD_STACK (256u << 10)
#define PROXY_DRAIN_MS 1500       /* below egress_stop's wait: a thread in getaddrinfo */
#define PROXY_IDLE_MAX 8          /* workers kept waiting */
#define PROXY_IDLE_S 10           /* how long one waits */

/* The waiting workers and the connections handed to them. One proxy per
 * process (brig-egress), across both egress_proxy_serve calls. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct egress_conn *head, **tail;
    size_t idle, queued;
} proxy_pool = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, &proxy_pool.head, 0, 0 };

/* The client's socket is non-blocking (accept4): a request usually came
 * with the connection, so read first and poll only when nothing is there. */
ssize_t egress_read_some(int fd, void *buf, size_t len, int timeout_ms)
{
    for (;;) {
        ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
        if (n >= 0 || (errno != EINTR && errno != EAGAIN)) return n;
        if (errno == EINTR) continue;
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        int r;
        while ((r = poll(&pf, 1, timeout_ms)) < 0 && errno == EINTR) {}
        if (r <= 0) return -1;
    }
}

int egress_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {
            struct pollfd pf = { .fd = fd, .events = POLLOUT };
            if (poll(&pf, 1, 30000) <= 0) return -1;
            continue;
        }
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The open connections, for the shutdown at the end. A connection's fds
 * are closed only after it left the list: what the list holds is open. */
static struct {
    pthread_mutex_t lock;
    struct egress_conn *head;
    bool ended;
} proxy_live = { PTHREAD_MUTEX_INITIALIZER, NULL, false };

static void proxy_live_add(struct egress_conn *c)
{
    pthread_mutex_lock(&proxy_live.lock);
    c->live_prev = NULL;
    c->live_next = proxy_live.head;
    if (proxy_live.head != NULL) proxy_live.head->live_prev = c;
    proxy_live.head = c;
    /* Accepted before the end, handed over after it. */
    if (proxy_live.ended) shutdown(c->client, SHUT_RDWR);
    pthread_mutex_unlock(&proxy_live.lock);
}

static void proxy_live_remove(struct egress_conn *c)
{
    pthread_mutex_lock(&proxy_live.lock);
    if (c->live_prev != NULL) c->live_prev->live_next = c->live_next;
    else proxy_live.head = c->live_next;
    if (c->live_next != NULL) c->live_next->live_prev = c->live_prev;
    pthread_mutex_unlock(&proxy_live.lock);
}

void egress_conn_upstream(struct egress_conn *c, int fd)
{
    pthread_mutex_lock(&proxy_live.lock);
    c->upstream = fd;
    if (proxy_live.ended) shutdown(fd, SHUT_RDWR);
    pthread_mutex_unlock(&proxy_live.lock);
}

static void proxy_live_end(void)
{
    pthread_mutex_lock(&proxy_live.lock);
    proxy_live.ended = true;
    for (struct egress_conn *c = proxy_live.head; c != NULL; c = c->live_next) {
        shutdown(c->client, SHUT_RDWR);
        if (c->upstream >= 0) shutdown(c->upstream, SHUT_RDWR);
    }
    pthread_mutex_unlock(&proxy_live.lock);
}

static void proxy_conn_serve(struct egress_conn *c)
{
    proxy_live_add(c);
    if (c->proto == EGRESS_PROTO_SOCKS) egress_socks_serve(c);
    else egress_http_serve(c);
    proxy_live_remove(c);
    close(c->client);
    if (c->upstream >= 0) close(c->upstream);
    egress_limit_release(c->ctx);
    free(c);
}

/* The next connection handed over, or NULL: this worker should end. */
static struct egress_conn *proxy_pool_wait(void)
{
    pthread_mutex_lock(&proxy_pool.lock);
    if (proxy_pool.idle >= PROXY_IDLE_MAX) {
        pthread_mutex_unlock(&proxy_pool.lock);
        return NULL;
    }
    proxy_pool.idle++;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += PROXY_IDLE_S;
    while (proxy_pool.head == NULL)
        if (pthread_cond_timedwait(&proxy_pool.wake, &proxy_pool.lock, &until) == ETIMEDOUT &&
            proxy_pool.head == NULL)
            break;
    struct egress_conn *c = proxy_pool.head;
    if (c != NULL) {
        proxy_pool.head = c->next;
        if (proxy_pool.head == NULL) proxy_pool.tail = &proxy_pool.head;
        proxy_pool.queued--;
    }
    proxy_pool.idle--;
    pthread_mutex_unlock(&proxy_pool.lock);
    return c;
}

/* To a waiting worker if one is free (true); else the caller starts one. */
static bool proxy_pool_hand(struct egress_conn *c)
{
    pthread_mutex_lock(&proxy_pool.lock);
    bool free_worker = proxy_pool.idle > proxy_pool.queued;
    if (free_worker) {
        c->next = NULL;
        *proxy_pool.tail = c;
        proxy_pool.tail = &c->next;
        proxy_pool.queued++;
        pthread_cond_signal(&proxy_pool.wake);
    }
    pthread_mutex_unlock(&proxy_pool.lock);
    return free_worker;
}

static void *proxy_worker(void *arg)
{
    for (struct egress_conn *c = arg; c != NULL; c = proxy_pool_wait()) proxy_conn_serve(c);
    return NULL;
}

static void proxy_over_limit(struct egress_ctx *x, int fd, enum egress_proto proto)
{
    struct egress_conn c = { .ctx = x, .client = fd, .upstream = -1, .proto = proto,
                             .started_ms = egress_now_ms(), .fail = EGRESS_LIMIT };
    if (egress_budget_spent(x))
        snprintf(c.why, sizeof(c.why), "network.maxBytes (%llu bytes) spent",
                 (unsigned long long)x->rules->max_bytes);
    else
        snprintf(c.why, sizeof(c.why), "network.maxConnections (%llu) reached",
                 (unsigned long long)x->rules->max_conns);
    if (proto == EGRESS_PROTO_HTTP) {
        char msg[256];
        int n = snprintf(msg, sizeof(msg),
                         "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
                         "Connection: close\r\nX-Brig-Egress: limit\r\n\r\nbrig egress: limit: %s\n",
                         strlen(c.why) + strlen("brig egress: limit: \n"), c.why);
        if (n > 0) (void)!send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
        shutdown(fd, SHUT_WR);
    }
    egress_audit(&c, "deny");
    close(fd);
}

static void proxy_accept(struct egress_ctx *x, int lfd, enum egress_proto proto, pthread_attr_t *attr)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
        /* Out of fds: the listener stays readable; do not spin on it. */
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) poll(NULL, 0, 100);
        return;
    }
    if (egress_budget_spent(x) || !egress_limit_admit(x)) return proxy_over_limit(x, fd, proto);
    struct egress_conn *c = brig_calloc(1, sizeof(*c));
    *c = (struct egress_conn){ .ctx = x, .client = fd, .upstream = -1, .proto = proto,
                               .started_ms = egress_now_ms() };
    if (proxy_pool_hand(c)) return;
    pthread_t t;
    int rc = pthread_create(&t, attr, proxy_worker, c);
    if (rc != 0) {
        snprintf(c->why, sizeof(c->why), "pthread_create: %s", strerror(rc));
        egress_audit(c, "error");
        close(fd);
        free(c);
        egress_limit_release(x);
    }
}

void egress_proxy_serve(struct egress_ctx *x, const int *listen_fds, const enum egress_proto *protos, size_t n,
                        int stop_fd)
{
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, PROXY_THREAD_STACK);
    struct pollfd pf[8];
    if (n > 7) n = 7;
    for (;;) {
        for (size_t i = 0; i < n; i++) pf[i] = (struct pollfd){ .fd = listen_fds[i], .events = POLLIN };
        pf[n] = (struct pollfd){ .fd = stop_fd, .events = POLLIN };
        if (poll(pf, n + 1, -1) < 0) {
            if (errno == EINTR) continue;
            brig_warn("egress %s: poll: %s", x->id, strerror(errno));
            break;
        }
        if (pf[n].revents) break;
        for (size_t i = 0; i < n; i++)
            if (pf[i].revents & POLLIN) proxy_accept(x, listen_fds[i], protos[i], &attr);
    }
    pthread_attr_destroy(&attr);
}

void egress_proxy_end(struct egress_ctx *x, const int *listen_fds, const enum egress_proto *protos, size_t n)
{
    /* Connections the sandbox made that were not accepted yet: each gets
     * its line (every connection is audited), none is served. */
    for (size_t i = 0; i < n; i++) {
        int fd;
        while ((fd = accept4(listen_fds[i], NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
            struct egress_conn c = { .ctx = x, .client = fd, .upstream = -1, .proto = protos[i],
                                     .started_ms = egress_now_ms(), .fail = EGRESS_LIMIT };
            snprintf(c.why, sizeof(c.why), "the sandbox ended before the proxy served it");
            egress_audit(&c, "error");
            close(fd);
        }
    }
    /* The sandbox is gone: end its connections, and let their threads
     * write their audit lines. */
    proxy_live_end();
    for (int waited = 0; atomic_load(&x->conns) > 0 && waited < PROXY_DRAIN_MS; waited += 2) poll(NULL, 0, 2);
}
