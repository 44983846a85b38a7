/* The proxy process: forked by the supervisor before the container's init
 * is cloned (so it holds none of the container's fds, and prepares itself
 * while the container is made), told the init's network namespace and
 * pidfd once the init exists, and gone when the sandbox is:
 *   - sandbox run, run: egress_stop (from launch_delete, the init reaped)
 *     closes the control socket; the proxy also dies with the supervisor
 *     (PR_SET_PDEATHSIG);
 *   - create: egress_detach; the proxy leaves the supervisor and serves
 *     until the init's pidfd says it exited (delete, or the container's
 *     end), so nothing outlives the container.
 * Its work is the sandbox's: it runs, with its audit writer, in a child
 * cgroup (EGRESS_CGROUP) of the container's, joined before it does
 * anything, so the container's cpu, memory and pids limits (hierarchical
 * in v1 and v2) bound it too. It is removed with the proxy (egress_stop)
 * or with the container's cgroup (delete, which first lets the proxy end
 * and write its lines: egress_wait_gone).
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
#include "../runtime/lifecycle/launch.h"
#include "../runtime/linux/cgroup/cgroup.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fdpass.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

#define EGRESS_CTL_FD 3

struct egress {
    pid_t pid;
    int ctl;
    struct brig_cgroup *cg;     /* the proxy's child cgroup, or NULL */
    int netns, userns;          /* rootless: the init's, held early (egress_hold_ns), or -1 */
};

static void sup_reply(int ctl, const char *msg)
{
    (void)!send(ctl, msg, strlen(msg), MSG_NOSIGNAL);
}

/* What the proxy holds before the container exists: its audit writer, the
 * TLS helper with the credentials' secrets, the hosts file of tests, the
 * name lookup it uses. why set: it cannot serve. */
static void sup_prepare(const struct brig_policy *p, const struct brig_cgroup *cg, bool cloned_into,
                        struct egress_ctx *x, pid_t *auditor, pid_t *tls, char *why, size_t len)
{
    /* The sandbox's from here on, and so are the TLS helper and the audit
     * writer forked below. */
    autoerr struct brig_error *e = NULL;
    if (cg != NULL && cgroup_attach_self(cg, cloned_into, &e) < 0) {
        snprintf(why, len, "join the sandbox's cgroup: %s", e->msg);
        return;
    }
    /* What the confined proxy can no longer open: the hosts file, the
     * host's routing table (asked for every address) and the audit log
     * (through its writer). */
    if (x->hosts_path != NULL) x->hosts_fd = brig_open_input(AT_FDCWD, x->hosts_path, 0, NULL, NULL);
    x->route_fd = egress_route_open();
    if (x->route_fd < 0) {
        snprintf(why, len, "a NETLINK_ROUTE socket (to ask the routing table): %s", strerror(errno));
        return;
    }
    /* The credentials' secrets go to the TLS helper and are wiped here
     * before the audit writer is forked with a copy of this memory. */
    if (egress_tls_start(x->rules, tls, &x->tls_fd, &x->tls_go, why, len) < 0) return;
    if (egress_auditor_start(p, x->id, auditor, &x->audit_fd, why, len) < 0) return;
    /* Names through /etc/hosts and DNS only, the NSS modules glibc has
     * built in: a static brig cannot load the host's others (nsswitch.conf's
     * "resolve", "mdns": a second libc, and the proxy crashes). */
    if (__nss_configure_lookup("hosts", "files dns") < 0)
        snprintf(why, len, "cannot set the proxy's name lookup (hosts: files dns)");
    /* The name judged is the name resolved: no search list (resolv.conf's
     * "search" and "domain" would make "db" a lookup of "db.corp.example",
     * a name the rules never saw; an empty LOCALDOMAIN replaces the list,
     * resolv.conf(5)), no HOSTALIASES (a file mapping one name to another). */
    if (setenv("LOCALDOMAIN", "", 1) < 0 || unsetenv("HOSTALIASES") < 0)
        snprintf(why, len, "cannot set the proxy's name lookup (no search list): %s", strerror(errno));
}

/* The proxy's main, in the forked child; never returns. */
static __attribute__((noreturn)) void sup_child(const struct brig_policy *p, const char *id, int ctl, pid_t parent,
                                                 unsigned tls_wait_ms, const struct brig_cgroup *cg, bool cloned_into)
{
    struct egress_ctx x = { .policy = p, .rules = p->network.egress, .id = id, .audit_fd = -1,
                            .hosts_path = getenv(EGRESS_HOSTS_ENV), .hosts_fd = -1, .route_fd = -1,
                            .tls_fd = -1, .tls_go = -1, .tls_wait_ms = tls_wait_ms };
    pid_t auditor = -1, tls = -1;
    char why[300] = "";
    sup_prepare(p, cg, cloned_into, &x, &auditor, &tls, why, sizeof(why));
    int netns = -1, pidfd = -1, userns = -1;
    char msg[16];
    if (brig_recv_with_fd(ctl, msg, sizeof(msg), &netns, "egress", NULL) <= 0 || netns < 0 ||
        brig_recv_with_fd(ctl, msg, sizeof(msg), &pidfd, "egress", NULL) <= 0 || pidfd < 0 ||
        brig_recv_with_fd(ctl, msg, sizeof(msg), &userns, "egress", NULL) <= 0) {
        egress_tls_finish(tls, x.tls_fd, x.tls_go);
        egress_auditor_finish(auditor, x.audit_fd);
        _exit(0);   /* the supervisor gave up before the container existed */
    }
    static const uint16_t ports[2] = { EGRESS_HTTP_PORT, EGRESS_SOCKS_PORT };
    static const enum egress_proto protos[2] = { EGRESS_PROTO_HTTP, EGRESS_PROTO_SOCKS };
    int fds[2];
    /* Rootless, the container's user namespace (ours) is entered first. */
    int lrc = why[0] != '\0' ? -1
              : userns >= 0 ? egress_listen_in_userns(userns, netns, ports, fds, 2, why, sizeof(why))
                            : egress_listen_in(netns, ports, fds, 2, why, sizeof(why));
    if (userns >= 0) close(userns);
    if (lrc < 0) {
        sup_reply(ctl, why);
        egress_tls_finish(tls, x.tls_fd, x.tls_go);
        egress_auditor_finish(auditor, x.audit_fd);
        _exit(1);
    }
    close(netns);
    /* Six fds a connection (two sockets, two pipes): room for maxConnections. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        setrlimit(RLIMIT_NOFILE, &nofile);
    }
    int keep[] = { ctl, fds[0], fds[1], pidfd, x.hosts_fd, x.route_fd, x.audit_fd, x.tls_fd, x.tls_go };
    if (egress_sandbox_enter(keep, sizeof(keep) / sizeof(keep[0]), parent, why, sizeof(why)) < 0) {
        char fail[sizeof(why) + 40];
        snprintf(fail, sizeof(fail), "cannot confine the proxy: %s", why);
        sup_reply(ctl, fail);
        egress_tls_finish(tls, x.tls_fd, x.tls_go);
        egress_auditor_finish(auditor, x.audit_fd);
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
        egress_proxy_end(&x, fds, protos, 2);
        egress_tls_finish(tls, x.tls_fd, x.tls_go);
        egress_auditor_finish(auditor, x.audit_fd);
        sup_reply(ctl, "gone");
        _exit(0);
    }
    /* From now on the container's lifetime is the proxy's. */
    prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
    setsid();
    sup_reply(ctl, "ok");
    close(ctl);
    egress_proxy_serve(&x, fds, protos, 2, pidfd);
    egress_proxy_end(&x, fds, protos, 2);
    egress_tls_finish(tls, x.tls_fd, x.tls_go);
    egress_auditor_finish(auditor, x.audit_fd);
    _exit(0);
}

/* EGRESS_TLS_WAIT_ENV, or the default. */
static int sup_tls_wait(unsigned *ms, struct brig_error **err)
{
    const char *v = getenv(EGRESS_TLS_WAIT_ENV);
    uint64_t n = EGRESS_TLS_WAIT_MS;
    if (v != NULL && (brig_parse_u64(v, &n) < 0 || n == 0 || n > EGRESS_TLS_WAIT_MS))
        return brig_failx(err, "network egress: %s=%s: expected 1..%u (ms)", EGRESS_TLS_WAIT_ENV, v,
                          EGRESS_TLS_WAIT_MS);
    *ms = (unsigned)n;
    return 0;
}

int egress_start(const struct brig_policy *p, const char *id, const struct brig_cgroup *cg, struct egress **out,
                 struct brig_error **err)
{
    *out = NULL;
    if (p == NULL || p->network.mode != POLICY_NET_EGRESS) return 0;
    unsigned tls_wait_ms = EGRESS_TLS_WAIT_MS;
    TRY(sup_tls_wait(&tls_wait_ms, err));
    struct launch_helper h;
    pid_t pid = launch_helper_fork(cg, EGRESS_CGROUP, "brig-egress", &h, err);
    if (pid < 0) return brig_wrap(err, "network egress: the proxy");
    if (pid == 0) {
        /* Only the control socket, and /dev/null on 0, 1 and 2: what the
         * proxy has to say goes over the control socket or to the audit
         * log. Never the caller's stdio: `sandbox run` has the command's
         * output pipes there, and waits for their EOF (a proxy holding
         * one cost every run a wait); an engine waits for create's. */
        if (dup2(h.ctl, EGRESS_CTL_FD) < 0) _exit(1);
        int null = open("/dev/null", O_RDWR);
        if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0) _exit(1);
        syscall(SYS_close_range, EGRESS_CTL_FD + 1, ~0u, 0);
        sup_child(p, id, EGRESS_CTL_FD, getppid(), tls_wait_ms, h.cg, h.cloned_into);
    }
    struct egress *e = brig_calloc(1, sizeof(*e));
    e->pid = pid;
    e->ctl = h.ctl;
    e->cg = h.cg;
    e->netns = e->userns = -1;
    *out = e;
    return 0;
}

int egress_hold_ns(struct egress *e, pid_t init_pid, struct brig_error **err)
{
    if (e == NULL) return 0;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)init_pid);
    if (e->netns < 0 && (e->netns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return brig_fail(err, errno, "network egress: open %s", path);
    snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)init_pid);
    if (e->userns < 0 && (e->userns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return brig_fail(err, errno, "network egress: open %s", path);
    return 0;
}

static void egress_free(struct egress *e)
{
    if (e->netns >= 0) close(e->netns);
    if (e->userns >= 0) close(e->userns);
    free(e);
}

int egress_attach(struct egress *e, pid_t init_pid, struct brig_error **err)
{
    if (e == NULL) return 0;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)init_pid);
    autoclose int netns = e->netns >= 0 ? fcntl(e->netns, F_DUPFD_CLOEXEC, 0) : open(path, O_RDONLY | O_CLOEXEC);
    if (netns < 0) return brig_fail(err, errno, "network egress: open %s", path);
    autoclose int pidfd = (int)syscall(SYS_pidfd_open, init_pid, 0);
    if (pidfd < 0) return brig_fail(err, errno, "network egress: pidfd_open");
    TRY(brig_send_with_fd(e->ctl, "N", 1, netns, err));
    TRY(brig_send_with_fd(e->ctl, "P", 1, pidfd, err));
    TRY(brig_send_with_fd(e->ctl, "U", 1, e->userns, err));     /* -1: none (not rootless) */
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
    /* The cgroup goes with the container's (delete). */
    if (e->cg != NULL) cgroup_free(e->cg);
    egress_free(e);
}

void egress_stop(struct egress *e)
{
    if (e == NULL) return;
    close(e->ctl);
    autoclose int pidfd = (int)syscall(SYS_pidfd_open, e->pid, 0);
    struct pollfd pf = { .fd = pidfd, .events = POLLIN };
    if (pidfd < 0 || poll(&pf, 1, EGRESS_END_WAIT_MS) <= 0) kill(e->pid, SIGKILL);
    while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR) {}
    if (e->cg != NULL) {
        /* Empty unless the proxy was killed before its audit writer ended. */
        autoerr struct brig_error *err = NULL;
        if (cgroup_destroy(e->cg, &err) < 0) brig_warn("network egress: %s", err->msg);
        cgroup_free(e->cg);
    }
    egress_free(e);
}

void egress_wait_gone(const struct brig_cgroup *cg)
{
    if (cg == NULL) return;
    /* The proxy ends within ms of the init's exit, once its connections
     * wrote their lines; one stuck longer is killed with the cgroup. */
    for (int waited = 0; cgroup_child_busy(cg, EGRESS_CGROUP) && waited < EGRESS_END_WAIT_MS; waited += 5)
        poll(NULL, 0, 5);
}
