/* rtnetlink through libmnl: a fresh network namespace has only "lo", and
 * down. Bringing it up is the one network step a runtime does itself: one
 * RTM_NEWLINK request (the link named by IFLA_IFNAME, so no if_nametoindex)
 * and the kernel's ACK. */
#include "netlink.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <time.h>

#include "../util/log.h"

static void netlink_closep(struct mnl_socket **nl)
{
    if (*nl != NULL) mnl_socket_close(*nl);
    *nl = NULL;
}
#define automnl __attribute__((cleanup(netlink_closep)))

/* Set IFF_UP on the link called ifname and wait for the kernel's ACK. */
static int netlink_link_set_up(const char *ifname, struct brig_error **err)
{
    char buf[MNL_SOCKET_BUFFER_SIZE];
    automnl struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
    if (nl == NULL) return brig_fail(err, errno, "netlink: open NETLINK_ROUTE socket");

    uint32_t seq = (uint32_t)time(NULL);
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_NEWLINK;
    nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    nlh->nlmsg_seq = seq;
    struct ifinfomsg *ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
    ifm->ifi_family = AF_UNSPEC;
    ifm->ifi_flags = IFF_UP;
    ifm->ifi_change = IFF_UP;
    mnl_attr_put_strz(nlh, IFLA_IFNAME, ifname);

    /* Unbound: the kernel binds the socket on the first send. */
    if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
        return brig_fail(err, errno, "netlink: RTM_NEWLINK %s up: send", ifname);
    for (;;) {
        ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return brig_fail(err, errno, "netlink: RTM_NEWLINK %s up: receive", ifname);
        /* The ACK is an NLMSG_ERROR with error 0; mnl_cb_run turns a
         * non-zero one into -1 with errno set to the kernel's error.
         * Port id 0: the reply is addressed to us, whatever we were bound to. */
        int r = mnl_cb_run(buf, (size_t)n, seq, 0, NULL, NULL);
        if (r == MNL_CB_ERROR) return brig_fail(err, errno, "netlink: RTM_NEWLINK %s up", ifname);
        if (r == MNL_CB_STOP) return 0;
    }
}

int netlink_lo_up(struct brig_error **err)
{
    brig_debug("netlink: bringing up lo");
    return netlink_link_set_up("lo", err);
}
