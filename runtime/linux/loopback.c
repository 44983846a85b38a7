/* A fresh network namespace has only "lo", and down. Bringing it up is the
 * one network step a runtime does itself: IFF_UP set with SIOCSIFFLAGS on a
 * datagram socket of that namespace (what `ip link set lo up` amounts to).
 * An ioctl, not an rtnetlink request: no netlink library to link, so brig
 * links statically (docs/performance.md). */
#include "loopback.h"

#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "../util/cleanup.h"
#include "../util/log.h"

int loopback_up(struct brig_error **err)
{
    brig_debug("loopback: bringing up lo");
    /* Any socket of the namespace reaches its links; AF_INET is always there
     * when lo is (lo carries 127.0.0.1). */
    autoclose int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return brig_fail(err, errno, "loopback: socket");
    struct ifreq ifr = { .ifr_name = "lo" };
    if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) return brig_fail(err, errno, "loopback: flags of lo");
    if (ifr.ifr_flags & IFF_UP) return 0;          /* a joined netns may have it up */
    ifr.ifr_flags |= IFF_UP;
    if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) return brig_fail(err, errno, "loopback: bring lo up");
    return 0;
}
