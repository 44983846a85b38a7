/* rtnetlink: a fresh network namespace has only "lo", and down. Bringing it
 * up is the one network step a runtime does itself: one RTM_NEWLINK request
 * and its ACK, written by hand (no libmnl: one shared library less to load
 * on every brig command; no if_nametoindex: the kernel finds the link by
 * IFLA_IFNAME; no bind: the socket is bound on the first send). */
#include "netlink.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/log.h"

struct netlink_req {
    struct nlmsghdr nh;
    struct ifinfomsg ifm;
    char attrs[RTA_SPACE(IFNAMSIZ)];
};

/* Set IFF_UP on the link called ifname and wait for the kernel's ACK. */
static int netlink_link_set_up(const char *ifname, struct brig_error **err)
{
    size_t nlen = strlen(ifname) + 1;
    if (nlen > IFNAMSIZ) return brig_failx(err, "netlink: interface name %s too long", ifname);
    autoclose int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return brig_fail(err, errno, "netlink: open NETLINK_ROUTE socket");

    struct netlink_req req;
    memset(&req, 0, sizeof(req));
    uint32_t seq = (uint32_t)time(NULL);
    req.nh.nlmsg_type = RTM_NEWLINK;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    req.nh.nlmsg_seq = seq;
    req.ifm.ifi_family = AF_UNSPEC;
    req.ifm.ifi_index = 0;                  /* by name: IFLA_IFNAME below */
    req.ifm.ifi_flags = IFF_UP;
    req.ifm.ifi_change = IFF_UP;
    struct rtattr *rta = (struct rtattr *)req.attrs;
    rta->rta_type = IFLA_IFNAME;
    rta->rta_len = (unsigned short)RTA_LENGTH(nlen);
    memcpy(RTA_DATA(rta), ifname, nlen);
    req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(req.ifm)) + RTA_ALIGN(rta->rta_len);

    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
        return brig_fail(err, errno, "netlink: RTM_NEWLINK %s up: send", ifname);

    for (;;) {
        union {
            struct nlmsghdr nh;
            char buf[8192];
        } u;
        struct sockaddr_nl from;
        socklen_t flen = sizeof(from);
        ssize_t n = recvfrom(fd, u.buf, sizeof(u.buf), 0, (struct sockaddr *)&from, &flen);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return brig_fail(err, errno, "netlink: RTM_NEWLINK %s up: receive", ifname);
        /* only the kernel (port 0) answers our request */
        if (flen != sizeof(from) || from.nl_pid != 0) continue;
        size_t len = (size_t)n;
        for (struct nlmsghdr *h = &u.nh; NLMSG_OK(h, len); h = NLMSG_NEXT(h, len)) {
            if (h->nlmsg_seq != seq) continue;
            if (h->nlmsg_type != NLMSG_ERROR) continue;
            if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                return brig_failx(err, "netlink: RTM_NEWLINK %s up: short ACK", ifname);
            /* The ACK is an NLMSG_ERROR with error 0, a refusal -errno. */
            const struct nlmsgerr *e = NLMSG_DATA(h);
            if (e->error != 0)
                return brig_fail(err, -e->error, "netlink: RTM_NEWLINK %s up", ifname);
            return 0;
        }
    }
}

int netlink_lo_up(struct brig_error **err)
{
    brig_debug("netlink: bringing up lo");
    return netlink_link_set_up("lo", err);
}
