/* loopback_up in a fresh network namespace: lo comes up and carries a
 * TCP connection to 127.0.0.1; the kernel's refusal is the error. */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linux/loopback.h"
#include "util/error.h"
#include "sec_child.h"

static int lo_flags(void)
{
    struct ifreq ifr = { 0 };
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) return -1;
    strcpy(ifr.ifr_name, "lo");
    int r = ioctl(s, SIOCGIFFLAGS, &ifr);
    close(s);
    return r < 0 ? -1 : ifr.ifr_flags;
}

/* Listen on 127.0.0.1:<any>, connect, accept: "tcp=ok" or the failing step. */
static void tcp_roundtrip(int fd)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
        getsockname(l, (struct sockaddr *)&a, &len) < 0) {
        sec_out(fd, "tcp=listen:%d", errno);
        return;
    }
    int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (connect(c, (struct sockaddr *)&a, sizeof(a)) < 0) {
        sec_out(fd, "tcp=connect:%d", errno);
        return;
    }
    int s = accept(l, NULL, NULL);
    if (s < 0 || write(c, "x", 1) != 1) {
        sec_out(fd, "tcp=accept:%d", errno);
        return;
    }
    char b = 0;
    sec_out(fd, read(s, &b, 1) == 1 && b == 'x' ? "tcp=ok" : "tcp=read");
}

static int lo_child(void *arg, int fd)
{
    struct brig_error *err = NULL;
    if (unshare(CLONE_NEWNET) < 0) {
        sec_out(fd, "unshare: %d", errno);
        return 77;
    }
    int before = lo_flags();
    sec_out(fd, "before=%s ", before >= 0 && (before & IFF_UP) ? "up" : "down");
    if (loopback_up(&err) < 0) {
        sec_out(fd, "ERR %s", err->msg);
        return 1;
    }
    int after = lo_flags();
    sec_out(fd, "after=%s ", after >= 0 && (after & IFF_UP) ? "up" : "down");
    /* Idempotent: a second call, on lo already up, succeeds too. */
    if (loopback_up(&err) < 0) {
        sec_out(fd, "ERR again %s", err->msg);
        return 1;
    }
    tcp_roundtrip(fd);
    return 0;
}

Test(loopback, lo_up_in_new_netns)
{
    if (geteuid() != 0) cr_skip_test("needs root for unshare(CLONE_NEWNET)");
    struct sec_child r;
    cr_assert_eq(sec_child_run(lo_child, NULL, &r), 0);
    if (sec_exit_code(&r) == 77) cr_skip_test("no network namespaces here: %s", r.out);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert_str_eq(r.out, "before=down after=up tcp=ok");
}

static int lo_unprivileged_child(void *arg, int fd)
{
    struct brig_error *err = NULL;
    if (unshare(CLONE_NEWNET) < 0) return 77;
    if (setresuid(65534, 65534, 65534) < 0) return 78;
    if (loopback_up(&err) == 0) return 1;
    sec_out(fd, "%s", err->msg);
    return 0;
}

/* The kernel's refusal comes back as the error, not as success. */
Test(loopback, reports_kernel_error)
{
    if (geteuid() != 0) cr_skip_test("needs root for unshare(CLONE_NEWNET)");
    struct sec_child r;
    cr_assert_eq(sec_child_run(lo_unprivileged_child, NULL, &r), 0);
    if (sec_exit_code(&r) == 77) cr_skip_test("no network namespaces here");
    cr_assert_eq(sec_exit_code(&r), 0, "child: status %d %s", r.status, r.out);
    cr_assert(strstr(r.out, "loopback: bring lo up: Operation not permitted") != NULL,
              "%s", r.out);
}
