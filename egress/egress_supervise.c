/* The proxy process: forked by the supervisor before the container exists
 * (so it holds none of the container's fds), told the init's network
 * namespace and pidfd once the init exists, and gone when the sandbox is:
 *   - sandbox run: egress_stop closes the control socket; the proxy also
 *     dies with the supervisor (PR_SET_PDEATHSIG);
 *   - create: egress_detach; the proxy leaves the supervisor and serves
 *     until the init's pidfd says it exited (delete, or the container's
 *     end), so nothing outlives the container.
 * After its listeners exist the proxy is confined (egress_sandbox.c): its
 * own uid, no capability, a seccomp allow-list; it only connects out,
 * resolves and hands audit lines to its writer (egress_auditor.c). */
#include "egress.h"
#include "egress_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <nss.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../policy/policy.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fdpass.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

#define EGRESS_CTL_FD 3
#define EGRESS_STOP_WAIT_MS 2000

struct egress {
    pid_t pid;
    int ctl;
};

static void sup_reply(int ctl, const char *msg)
{
    (void)!send(ctl, msg, strlen(msg), MSG_NOSIGNAL);
}

/* The proxy's main, in the forked child; never returns. */
static __attribute__((noreturn)) void sup_child(const struct brig_policy *p, const char *id, int ctl, pid_t parent)
{
    int netns = -1, pidfd = -1;
    char msg[16];
    if (brig_recv_with_fd(ctl, msg, sizeof(msg), &netns, "egress", NULL) <= 0 || netns < 0 ||
        brig_recv_with_fd(ctl, msg, sizeof(msg), &pidfd, "egress", NULL) <= 0 || pidfd < 0)
        _exit(0);   /* the supervisor gave up before the container existed */
    static const uint16_t ports[2] = { EGRESS_HTTP_PORT, EGRESS_SOCKS_PORT };
    static const enum egress_proto protos[2] = { EGRESS_PROTO_HTTP, EGRESS_PROTO_SOCKS };
    int fds[2];
    char why[300] = "";
    if (egress_listen_in(netns, ports, fds, 2, why, sizeof(why)) < 0) {
        sup_reply(ctl, why);
        _exit(1);
    }
    close(netns);
    /* Six fds a connection (two sockets, two pipes): room for maxConnections. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    /* What the confined proxy can no longer open: the hosts file, /dev/null
     * (for its detach) and the audit log (through its writer). */
    struct egress_ctx x = { .policy = p, .rules = p->network.egress, .id = id,
                            .hosts_path = getenv(EGRESS_HOSTS_ENV), .hosts_fd = -1 };
    if (x.hosts_path != NULL) x.hosts_fd = brig_open_input(AT_FDCWD, x.hosts_path, 0, NULL, NULL);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    /* The credentials' secrets go to the TLS helper and are wiped here
     * before the audit writer is forked with a copy of this memory. */
    pid_t auditor = -1, tls = -1;
    if (null < 0 || egress_tls_start(x.rules, &tls, &x.tls_fd, why, sizeof(why)) < 0 ||
        egress_auditor_start(p, &auditor, &x.audit_fd, why, sizeof(why)) < 0) {
        sup_reply(ctl, null < 0 ? "open /dev/null" : why);
        _exit(1);
    }
    /* Names through /etc/hosts and DNS only, the NSS modules glibc has
     * built in: a static brig cannot load the host's others (nsswitch.conf's
     * "resolve", "mdns": a second libc, and the proxy crashes). */
    if (__nss_configure_lookup("hosts", "files dns") < 0) {
        sup_reply(ctl, "cannot set the proxy's name lookup (hosts: files dns)");
        _exit(1);
    }
    int keep[] = { ctl, fds[0], fds[1], pidfd, x.hosts_fd, null, x.audit_fd, x.tls_fd };
    if (egress_sandbox_enter(keep, sizeof(keep) / sizeof(keep[0]), parent, why, sizeof(why)) < 0) {
        char fail[sizeof(why) + 40];
        snprintf(fail, sizeof(fail), "cannot confine the proxy: %s", why);
        sup_reply(ctl, fail);
        _exit(1);
    }
    sup_reply(ctl, "ok");
    /* Serve until the control socket speaks: EOF (stop), or "detach". */
    egress_proxy_serve(&x, fds, protos, 2, ctl);
    ssize_t n = recv(ctl, msg, sizeof(msg), 0);
    struct pollfd dead = { .fd = pidfd, .events = POLLIN };
    if (n != 6 || memcmp(msg, "detach", 6) != 0 || poll(&dead, 1, 0) > 0) {
        /* Stopped, or detached after the container ended (run, after its
         * delete): the supervisor reaps us now rather than leave us to init. */
        egress_tls_finish(tls, x.tls_fd);
        egress_auditor_finish(auditor, x.audit_fd);
        sup_reply(ctl, "gone");
        _exit(0);
    }
    /* From now on the container's lifetime is the proxy's. */
    prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
    setsid();
    dup2(null, 2);
    sup_reply(ctl, "ok");
    close(ctl);
    egress_proxy_serve(&x, fds, protos, 2, pidfd);
    egress_tls_finish(tls, x.tls_fd);
    egress_auditor_finish(auditor, x.audit_fd);
    _exit(0);
}

int egress_start(const struct brig_policy *p, const char *id, struct egress **out, struct brig_error **err)
{
    *out = NULL;
    if (p == NULL || p->network.mode != POLICY_NET_EGRESS) return 0;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return brig_fail(err, errno, "network egress: socketpair");
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return brig_fail(err, errno, "network egress: fork the proxy");
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (getppid() != parent) _exit(0);
        prctl(PR_SET_NAME, "brig-egress", 0, 0, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_IGN);
        /* Only the control socket, stderr and /dev/null on 0 and 1. */
        if (dup2(sv[1], EGRESS_CTL_FD) < 0) _exit(1);
        int null = open("/dev/null", O_RDWR);
        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0) _exit(1);
        syscall(SYS_close_range, EGRESS_CTL_FD + 1, ~0u, 0);
        sup_child(p, id, EGRESS_CTL_FD, parent);
    }
    close(sv[1]);
    struct egress *e = brig_calloc(1, sizeof(*e));
    e->pid = pid;
    e->ctl = sv[0];
    *out = e;
    return 0;
}

int egress_attach(struct egress *e, pid_t init_pid, struct brig_error **err)
{
    if (e == NULL) return 0;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)init_pid);
    autoclose int netns = open(path, O_RDONLY | O_CLOEXEC);
    if (netns < 0) return brig_fail(err, errno, "network egress: open %s", path);
    autoclose int pidfd = (int)syscall(SYS_pidfd_open, init_pid, 0);
    if (pidfd < 0) return brig_fail(err, errno, "network egress: pidfd_open");
    TRY(brig_send_with_fd(e->ctl, "N", 1, netns, err));
    TRY(brig_send_with_fd(e->ctl, "P", 1, pidfd, err));
    char msg[400];
    ssize_t n = recv(e->ctl, msg, sizeof(msg) - 1, 0);
    if (n <= 0) return brig_failx(err, "network egress: the proxy ended before it listened");
    msg[n] = '\0';
    if (strcmp(msg, "ok") != 0) return brig_failx(err, "network egress: %s", msg);
    return 0;
}

void egress_detach(struct egress *e)
{
    if (e == NULL) return;
    char ack[8];
    ssize_t n = send(e->ctl, "detach", 6, MSG_NOSIGNAL) == 6 ? recv(e->ctl, ack, sizeof(ack), 0) : -1;
    if (n != 2) return egress_stop(e);     /* "gone", or it ended: reap it here */
    close(e->ctl);
    free(e);
}

void egress_stop(struct egress *e)
{
    if (e == NULL) return;
    close(e->ctl);
    autoclose int pidfd = (int)syscall(SYS_pidfd_open, e->pid, 0);
    struct pollfd pf = { .fd = pidfd, .events = POLLIN };
    if (pidfd < 0 || poll(&pf, 1, EGRESS_STOP_WAIT_MS) <= 0) kill(e->pid, SIGKILL);
    while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR) {}
    free(e);
}
