/* From a destination a client asked for to a connected socket, or a
 * refusal with its reason. The order is the security argument:
 *   1. the host as written must be a strict IP literal or a valid name
 *      (no "2130706433", "0177.0.0.1", "0x7f.1": the C library would
 *      read those as addresses the rules never saw);
 *   2. a name is judged by the name rules (deny wins);
 *   3. the proxy resolves it itself, once;
 *   4. every address is judged before it is connected to (the rules, then
 *      the host's routing table: an address this machine delivers locally
 *      is refused unless a rule names it exactly), and the socket connects
 *      to exactly that sockaddr: what was checked is what is reached,
 *      whatever the name resolves to a second later. */
#include "egress_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define DIAL_TIMEOUT_MS 10000
#define DIAL_MAX_ADDRS 16

/* client: the connection's client socket; its end (a reset, or the proxy
 * shutting it down when the sandbox ended) ends the wait for the server. */
static int dial_connect(const struct egress_addr *a, uint16_t port, int client, int *err_out)
{
    struct sockaddr_storage ss = {0};
    socklen_t sl;
    if (egress_addr_is_v4(a)) {
        struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
        s4->sin_family = AF_INET;
        s4->sin_port = htons(port);
        memcpy(&s4->sin_addr, a->b + 12, 4);
        sl = sizeof(*s4);
    } else {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(port);
        memcpy(&s6->sin6_addr, a->b, 16);
        sl = sizeof(*s6);
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        *err_out = errno;
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&ss, sl) < 0 && errno != EINPROGRESS) {
        *err_out = errno;
        close(fd);
        return -1;
    }
    /* events 0 on the client: only its POLLHUP and POLLERR (a half-close,
     * a request sent and SHUT_WR, is not an end). */
    struct pollfd pf[2] = { { .fd = fd, .events = POLLOUT }, { .fd = client, .events = 0 } };
    int r;
    while ((r = poll(pf, 2, DIAL_TIMEOUT_MS)) < 0 && errno == EINTR) {}
    int soerr = 0;
    socklen_t el = sizeof(soerr);
    if (r == 0) soerr = ETIMEDOUT;
    else if (r > 0 && pf[0].revents == 0) soerr = ECONNABORTED;    /* the client is gone */
    else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &el) < 0) soerr = errno;
    if (soerr != 0) {
        *err_out = soerr;
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

/* The host is not a destination: an address its kernel delivers locally
 * (any of its interfaces' addresses, loopback's, a "local" route) is
 * refused, whatever rule allowed it, unless a rule names it exactly with
 * the port. true (why set): refused; also when the routing table cannot
 * be asked. */
static bool dial_host(struct egress_conn *c, const struct egress_addr *a, uint16_t port, char *why, size_t len)
{
    if (egress_rules_exact(c->ctx->rules, a, port)) return false;
    bool local = false;
    if (egress_route_local(c->ctx->route_fd, a, &local, why, len) < 0) return true;
    if (!local) return false;
    char text[64];
    egress_addr_format(a, text, sizeof(text));
    bool v6 = !egress_addr_is_v4(a);
    snprintf(why, len, "%s is host: this machine delivers it locally (reached only when network.allow names "
             "%s%s%s:%u exactly)", text, v6 ? "[" : "", text, v6 ? "]" : "", port);
    return true;
}

static int dial_refuse(struct egress_conn *c, enum egress_fail f)
{
    c->fail = f;
    return -1;
}

int egress_dial(struct egress_conn *c, const char *host, uint16_t port)
{
    const struct egress_rules *r = c->ctx->rules;
    c->port = port;
    struct egress_addr addrs[DIAL_MAX_ADDRS];
    size_t n = 0;
    enum egress_host kind = egress_host_parse(host, c->name, sizeof(c->name), &addrs[0]);
    if (kind == EGRESS_HOST_BAD) {
        snprintf(c->name, sizeof(c->name), "%.*s", (int)strcspn(host, "\r\n\"\\"), host);
        snprintf(c->why, sizeof(c->why), "not a host name or a plain IP address (a.b.c.d, [IPv6])");
        return dial_refuse(c, EGRESS_BAD);
    }
    if (port == 0) {
        snprintf(c->why, sizeof(c->why), "port 0");
        return dial_refuse(c, EGRESS_BAD);
    }
    if (kind == EGRESS_HOST_IP) {
        n = 1;
    } else if (c->cred == NULL && egress_cred_at(r, c->name, port) != NULL) {
        /* One way to a credential's host: the proxy's TLS, which adds it. */
        snprintf(c->why, sizeof(c->why), "%s:%u has a credential (network.credentials): send plain HTTP to "
                 "http://%s/ through the proxy, which adds it over TLS", c->name, port, c->name);
        return dial_refuse(c, EGRESS_DENIED);
    } else {
        if (egress_check_name(r, c->name, port, c->why, sizeof(c->why)) < 0) return dial_refuse(c, EGRESS_DENIED);
        if (egress_resolve(c->ctx, c->name, addrs, DIAL_MAX_ADDRS, &n, c->why, sizeof(c->why)) < 0)
            return dial_refuse(c, EGRESS_UNRESOLVED);
    }
    /* A refusal is reported before an unreachable address: it is the
     * answer that holds whatever the network does. */
    char denied[sizeof(c->why)] = "", unreachable[sizeof(c->why)] = "", denied_addr[64] = "";
    for (size_t i = 0; i < n; i++) {
        char why[sizeof(c->why)];
        egress_addr_format(&addrs[i], c->addr, sizeof(c->addr));
        if (egress_check_addr(r, &addrs[i], port, kind == EGRESS_HOST_NAME, why, sizeof(why)) < 0 ||
            dial_host(c, &addrs[i], port, why, sizeof(why))) {
            if (!denied[0]) {
                snprintf(denied, sizeof(denied), "%s", why);
                snprintf(denied_addr, sizeof(denied_addr), "%s", c->addr);
            }
            continue;
        }
        int e = 0;
        int fd = dial_connect(&addrs[i], port, c->client, &e);
        if (fd >= 0) {
            egress_conn_upstream(c, fd);
            return fd;
        }
        if (!unreachable[0])
            snprintf(unreachable, sizeof(unreachable), "connect %s port %u: %s", c->addr, port, strerror(e));
    }
    if (denied[0]) {
        snprintf(c->why, sizeof(c->why), "%s", denied);
        snprintf(c->addr, sizeof(c->addr), "%s", denied_addr);
        return dial_refuse(c, EGRESS_DENIED);
    }
    snprintf(c->why, sizeof(c->why), "%s", unreachable);
    return dial_refuse(c, EGRESS_UNREACHABLE);
}
