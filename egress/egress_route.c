/* The host is not a destination (docs/egress.md): whether this machine's
 * kernel would deliver an address locally, asked of its routing table for
 * every address the proxy is about to connect to, as that connect would
 * be routed (the proxy's own uid and namespace): one RTM_GETROUTE request
 * on a NETLINK_ROUTE socket made before the proxy is confined. A route of
 * type RTN_LOCAL (an address of any interface, loopback's and an address
 * added a second ago included, or a "local" route) or RTN_BROADCAST is the
 * host. Not a snapshot of the interfaces' addresses: what the kernel
 * answers now is what the connect would reach. The messages are built and
 * read with the kernel's own uapi macros (NLMSG_*, RTA_*), as
 * linux/loopback.c does with an ioctl: no netlink library to link, brig
 * links statically. */
#include "egress_internal.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* One request at a time on the one socket; seq pairs an answer with it. */
static pthread_mutex_t route_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t route_seq;

int egress_route_open(void)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    /* The kernel answers within the send; a bound on the wait anyway. */
    struct timeval tv = { .tv_sec = 2 };
    if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* 0 with *local, or -1 with why. Called with route_lock held. */
static int route_ask(int fd, const struct egress_addr *a, bool *local, char *why, size_t len)
{
    bool v4 = egress_addr_is_v4(a);
    struct {
        struct nlmsghdr n;
        struct rtmsg r;
        char attrs[RTA_SPACE(16)];
    } req;
    memset(&req, 0, sizeof(req));
    req.n.nlmsg_len = NLMSG_LENGTH(sizeof(req.r));
    req.n.nlmsg_type = RTM_GETROUTE;
    req.n.nlmsg_flags = NLM_F_REQUEST;
    req.n.nlmsg_seq = ++route_seq;
    req.r.rtm_family = v4 ? AF_INET : AF_INET6;
    req.r.rtm_dst_len = v4 ? 32 : 128;
    struct rtattr *dst = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.n.nlmsg_len));
    dst->rta_type = RTA_DST;
    dst->rta_len = RTA_LENGTH(v4 ? 4 : 16);
    memcpy(RTA_DATA(dst), v4 ? a->b + 12 : a->b, v4 ? 4 : 16);
    req.n.nlmsg_len = NLMSG_ALIGN(req.n.nlmsg_len) + RTA_ALIGN(dst->rta_len);
    if (send(fd, &req, req.n.nlmsg_len, 0) != (ssize_t)req.n.nlmsg_len)
        return snprintf(why, len, "cannot ask the routing table: send: %s", strerror(errno)), -1;
    for (;;) {
        union {
            char b[8192];
            struct nlmsghdr align;
        } buf;
        ssize_t n = recv(fd, buf.b, sizeof(buf.b), 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return snprintf(why, len, "cannot ask the routing table: recv: %s", n < 0 ? strerror(errno) : "EOF"), -1;
        for (struct nlmsghdr *h = &buf.align; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_seq != req.n.nlmsg_seq) continue;     /* an answer to an earlier, failed ask */
            if (h->nlmsg_type == NLMSG_ERROR) {
                const struct nlmsgerr *e = NLMSG_DATA(h);
                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
                    return snprintf(why, len, "cannot ask the routing table: a short answer"), -1;
                /* No route (unreachable, prohibited): the connect fails the
                 * same way, and it is nothing of this host's. */
                if (e->error == -ENETUNREACH || e->error == -EHOSTUNREACH || e->error == -EACCES) {
                    *local = false;
                    return 0;
                }
                return snprintf(why, len, "cannot ask the routing table: %s", strerror(-e->error)), -1;
            }
            if (h->nlmsg_type == RTM_NEWROUTE && h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct rtmsg))) {
                const struct rtmsg *r = NLMSG_DATA(h);
                *local = r->rtm_type == RTN_LOCAL || r->rtm_type == RTN_BROADCAST;
                return 0;
            }
        }
    }
}

int egress_route_local(int fd, const struct egress_addr *a, bool *local, char *why, size_t len)
{
    if (fd < 0) return snprintf(why, len, "cannot ask the routing table: no netlink socket"), -1;
    pthread_mutex_lock(&route_lock);
    int rc = route_ask(fd, a, local, why, len);
    pthread_mutex_unlock(&route_lock);
    return rc;
}
