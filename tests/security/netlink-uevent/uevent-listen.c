/* A host device-event listener, run inside a sandbox: opens a netlink
 * socket of the given protocol (default 15, NETLINK_KOBJECT_UEVENT), joins
 * its multicast group 1, creates READY_FILE (the test attaches a loop
 * device once it exists), and prints the first message it receives:
 *   EVENT <text>        a host device event reached the sandbox
 *   REFUSED <errno>     socket() or bind() refused
 *   NOEVENT             nothing within the wait (argv[3] seconds, a bound)
 * Also tries NETLINK_ROUTE, which a sandbox needs for its own interfaces:
 *   ROUTE ok | ROUTE <errno>
 * uevent-listen READY_FILE [PROTOCOL] [WAIT_S] */
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    int proto = argc > 2 ? atoi(argv[2]) : NETLINK_KOBJECT_UEVENT;
    int wait_s = argc > 3 ? atoi(argv[3]) : 30;
    int r = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (r < 0) printf("ROUTE %s\n", strerrorname_np(errno));
    else printf("ROUTE ok\n");
    int s = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, proto);
    if (s < 0) {
        printf("REFUSED %s\n", strerrorname_np(errno));
        return 0;
    }
    struct sockaddr_nl a = { .nl_family = AF_NETLINK, .nl_groups = 1 };
    if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
        printf("REFUSED bind %s\n", strerrorname_np(errno));
        return 0;
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) { perror(argv[1]); return 1; }
    close(fd);
    fflush(stdout);
    struct pollfd p = { .fd = s, .events = POLLIN };
    if (poll(&p, 1, wait_s * 1000) <= 0) {
        printf("NOEVENT\n");
        return 0;
    }
    char buf[8192];
    ssize_t n = recv(s, buf, sizeof(buf) - 1, 0);
    if (n < 0) { printf("REFUSED recv %s\n", strerrorname_np(errno)); return 0; }
    buf[n] = '\0';
    printf("EVENT %s\n", buf);   /* "change@/devices/virtual/block/loop0" (NULs end the head) */
    return 0;
}
