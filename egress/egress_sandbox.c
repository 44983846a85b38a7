/* The proxy parses hostile bytes (HTTP requests, SOCKS5, TLS ClientHellos)
 * from the container. Once its listening sockets exist it needs no
 * privilege, so before it reads a byte it gives up everything a bug in
 * that parsing could be turned into:
 *   egress_sandbox_enter
 *     close every fd but the ones it serves with
 *     an identity of its own (uid = gid = EGRESS_UID_BASE + pid: no other
 *       process on the host has it, so none can signal or trace the proxy
 *       and the proxy none), no supplementary groups
 *     no capability (bounding, ambient, effective, permitted, inheritable)
 *     no_new_privs, not dumpable
 *     a seccomp allow-list: what the relay and the resolver use, and
 *       nothing that writes a file, makes a process, listens or executes.
 * Rootless (brig run by a user that is not root, docs/rootless.md) there
 * is no uid to change to and no bounding set to drop: the proxy stays the
 * caller, gives up every capability it holds, and its file reads are held
 * by Landlock to the few trees it reads (resolv.conf, hosts, the CA
 * certificates), so a bug in its parsing cannot read the caller's files;
 * the rest is the same. A kernel without Landlock refuses the rootless
 * proxy rather than run it with less.
 * A step that fails ends the proxy (egress_supervise.c): the container
 * then has no way out at all, never an unconfined one. */
#include "egress_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "../runtime/util/cleanup.h"

#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)     /* Landlock ABI 3 (Linux 6.2); Debian 12's headers are 6.1's */
#endif
#ifndef __O_TMPFILE
#define __O_TMPFILE 020000000
#endif

/* Plain syscalls the proxy makes (glibc's threads, stdio on a buffer, the
 * relay's splice and poll/epoll, the resolver's UDP exchange and files). */
static const char *const sandbox_allowed[] = {
    "read", "write", "readv", "writev", "pread64", "close", "lseek", "fstat", "newfstatat", "statx",
    "fcntl", "dup", "dup2", "dup3",
    "poll", "ppoll", "select", "pselect6", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait",
    "epoll_pwait2", "eventfd2",
    "getsockname", "getpeername", "setsockopt", "getsockopt", "shutdown",
    "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg",
    "pipe2", "splice", "tee",
    "munmap", "madvise", "brk", "mremap",
    "futex", "set_robust_list", "rseq", "sched_yield", "sched_getaffinity",
    "rt_sigprocmask", "rt_sigaction", "rt_sigreturn", "sigaltstack", "restart_syscall",
    "gettid", "getpid", "getuid", "geteuid", "getgid", "getegid",
    "clock_gettime", "clock_getres", "gettimeofday", "time", "nanosleep", "clock_nanosleep",
    "getrandom", "getrlimit", "uname", "exit", "exit_group",
    "wait4",        /* its audit writer, at the end */
    "setsid",       /* egress_detach: out of the caller's session */
};

/* The proxy's own: it accepts the sandbox's connections and makes the
 * upstream ones (the TLS helper is handed both). */
static const char *const sandbox_outbound[] = { "accept4", "accept", "connect" };

static int sandbox_rule(scmp_filter_ctx f, const char *name, unsigned n, const struct scmp_arg_cmp *a,
                        uint32_t action)
{
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) return 0;       /* not on this architecture */
    return seccomp_rule_add_array(f, action, nr, n, a);
}

#define ALLOW(name, ...)                                                                        \
    (sandbox_rule(f, name, sizeof((struct scmp_arg_cmp[]){ __VA_ARGS__ }) / sizeof(struct scmp_arg_cmp), \
                  (struct scmp_arg_cmp[]){ __VA_ARGS__ }, SCMP_ACT_ALLOW))

static int sandbox_seccomp(bool outbound)
{
    /* Anything else kills the proxy: loud, and its container is then cut
     * off rather than served by a proxy in an unknown state. */
    scmp_filter_ctx f = seccomp_init(SCMP_ACT_KILL_PROCESS);
    if (f == NULL) return -ENOMEM;
    int rc = seccomp_attr_set(f, SCMP_FLTATR_CTL_TSYNC, 1);
    for (size_t i = 0; rc == 0 && i < sizeof(sandbox_allowed) / sizeof(sandbox_allowed[0]); i++)
        rc = sandbox_rule(f, sandbox_allowed[i], 0, NULL, SCMP_ACT_ALLOW);
    for (size_t i = 0; outbound && rc == 0 && i < sizeof(sandbox_outbound) / sizeof(sandbox_outbound[0]); i++)
        rc = sandbox_rule(f, sandbox_outbound[i], 0, NULL, SCMP_ACT_ALLOW);
    const scmp_datum_t wflags = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | __O_TMPFILE;
    pid_t self = getpid();
    if (rc == 0 && outbound)
        rc = /* Outgoing TCP and the resolver's UDP; nscd's unix socket and
              * glibc's netlink probe get an error they handle. A socketpair
              * (a credential's request, to the TLS helper) reaches nothing. */
            ALLOW("socket", SCMP_A0(SCMP_CMP_EQ, AF_INET)) ?:
            ALLOW("socket", SCMP_A0(SCMP_CMP_EQ, AF_INET6)) ?:
            sandbox_rule(f, "socket", 1, (struct scmp_arg_cmp[]){ SCMP_A0(SCMP_CMP_EQ, AF_UNIX) },
                         SCMP_ACT_ERRNO(EACCES)) ?:
            sandbox_rule(f, "socket", 1, (struct scmp_arg_cmp[]){ SCMP_A0(SCMP_CMP_EQ, AF_NETLINK) },
                         SCMP_ACT_ERRNO(EACCES)) ?:
            ALLOW("socketpair", SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
    if (rc == 0)
        rc =
            /* Threads, never a process; clone3's flags are out of reach of
             * a filter, glibc falls back to clone on ENOSYS. */
            ALLOW("clone", SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD)) ?:
            sandbox_rule(f, "clone3", 0, NULL, SCMP_ACT_ERRNO(ENOSYS)) ?:
            /* Files read only (resolv.conf, hosts, nsswitch.conf). */
            ALLOW("openat", SCMP_A2(SCMP_CMP_MASKED_EQ, wflags, O_RDONLY)) ?:
            ALLOW("open", SCMP_A1(SCMP_CMP_MASKED_EQ, wflags, O_RDONLY)) ?:
            /* Memory never becomes executable: no code the proxy did not
             * start with. */
            ALLOW("mmap", SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)) ?:
            ALLOW("mprotect", SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)) ?:
            ALLOW("ioctl", SCMP_A1(SCMP_CMP_EQ, FIONREAD)) ?:
            /* Signals to itself only (abort, pthread_kill). */
            ALLOW("tgkill", SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self)) ?:
            ALLOW("prctl", SCMP_A0(SCMP_CMP_EQ, PR_SET_PDEATHSIG)) ?:
            ALLOW("prlimit64", SCMP_A2(SCMP_CMP_EQ, 0));
    if (rc == 0) rc = seccomp_load(f);
    seccomp_release(f);
    return rc;
}

/* Every fd but keep[] (and 0, 1, 2) closed: the proxy holds nothing of
 * the supervisor or the host it could hand to a container. */
static int sandbox_close_fds(const int *keep, size_t n)
{
    for (int fd = 3;;) {
        int next = -1;
        for (size_t i = 0; i < n; i++)
            if (keep[i] >= fd && (next < 0 || keep[i] < next)) next = keep[i];
        unsigned last = next < 0 ? ~0u : (unsigned)next - 1;
        if ((next < 0 || next > fd) && syscall(SYS_close_range, (unsigned)fd, last, 0) < 0) return -1;
        if (next < 0) return 0;
        fd = next + 1;
    }
}

static int sandbox_drop_caps(void)
{
    for (unsigned long c = 0; c <= CAP_LAST_CAP; c++)
        if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL) return -1;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) return -1;
    return 0;
}

static int sandbox_identity(uid_t id)
{
    if (setgroups(0, NULL) < 0 || setresgid(id, id, id) < 0 || setresuid(id, id, id) < 0) return -1;
    /* A uid change empties effective and permitted; be sure of the rest. */
    struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct d[2] = {0};
    return (int)syscall(SYS_capset, &h, d);
}

/* Rootless: no capability in any set (a user has none in the host's
 * namespace; a brig that is uid 0 of another may hold some there). */
static int sandbox_no_caps(void)
{
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) return -1;
    struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct d[2] = {0};
    return (int)syscall(SYS_capset, &h, d);
}

/* Landlock rule: reading files and directories beneath path (skipped when
 * the path does not exist here). */
static int sandbox_landlock_read(int ruleset, const char *path)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    struct landlock_path_beneath_attr pb = {
        .allowed_access = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR, .parent_fd = fd };
    int rc = (int)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
    close(fd);
    return rc;
}

/* Rootless: every filesystem access Landlock knows is handled, and only
 * reading beneath /etc (resolv.conf, hosts, nsswitch.conf, gai.conf), the
 * directory resolv.conf really is in (systemd-resolved's /run/...), and
 * the CA certificates /etc/ssl/certs links into is allowed. */
int egress_sandbox_landlock(char *why, size_t len)
{
    int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1)
        return snprintf(why, len, "Landlock is not available (%s): a rootless proxy's file reads cannot be "
                        "confined; run brig as root, or use a policy whose network is \"none\"",
                        strerror(errno)), -1;
    struct landlock_ruleset_attr ra = {
        .handled_access_fs = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                             LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
                             LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                             LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
                             LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                             LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                             LANDLOCK_ACCESS_FS_MAKE_SYM |
                             (abi >= 2 ? LANDLOCK_ACCESS_FS_REFER : 0) |
                             (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0),
    };
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &ra, sizeof(ra), 0);
    if (ruleset < 0) return snprintf(why, len, "landlock_create_ruleset: %s", strerror(errno)), -1;
    char resolv[PATH_MAX];
    const char *dirs[] = { "/etc", "/usr/share/ca-certificates", "/usr/local/share/ca-certificates",
                           "/usr/lib/ssl", NULL };
    int rc = 0;
    for (size_t i = 0; rc == 0 && dirs[i] != NULL; i++) rc = sandbox_landlock_read(ruleset, dirs[i]);
    if (rc == 0 && realpath("/etc/resolv.conf", resolv) != NULL) {
        char *slash = strrchr(resolv, '/');
        if (slash != NULL && slash != resolv) *slash = '\0';
        rc = sandbox_landlock_read(ruleset, resolv);
    }
    if (rc == 0) rc = (int)syscall(SYS_landlock_restrict_self, ruleset, 0);
    int e = errno;
    close(ruleset);
    if (rc < 0) return snprintf(why, len, "Landlock: %s", strerror(e)), -1;
    return 0;
}

static int sandbox_enter(const int *keep, size_t n_keep, pid_t parent, bool outbound, char *why, size_t len)
{
    uid_t id = EGRESS_UID_BASE + (uid_t)getpid();
    /* Rootless: an ordinary user's brig (a brig that is uid 0 of a user
     * namespace that is not the host's takes the root path, whose uid
     * change fails there: refused, never run with less). */
    bool rootless = geteuid() != 0;
    if (sandbox_close_fds(keep, n_keep) < 0) return snprintf(why, len, "close_range: %s", strerror(errno)), -1;
    if (rootless) {
        if (sandbox_no_caps() < 0) return snprintf(why, len, "drop every capability: %s", strerror(errno)), -1;
    } else {
        if (sandbox_drop_caps() < 0) return snprintf(why, len, "drop the bounding set: %s", strerror(errno)), -1;
        if (sandbox_identity(id) < 0) return snprintf(why, len, "become uid %u: %s", id, strerror(errno)), -1;
    }
    /* A credential change clears the parent-death signal: set it again
     * (and the parent may have died meanwhile). */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
        return snprintf(why, len, "the supervisor ended"), -1;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return snprintf(why, len, "no_new_privs, dumpable: %s", strerror(errno)), -1;
    if (rootless && egress_sandbox_landlock(why, len) < 0) return -1;
    int rc = sandbox_seccomp(outbound);
    if (rc < 0) return snprintf(why, len, "seccomp filter: %s", strerror(-rc)), -1;
    return 0;
}

int egress_sandbox_enter(const int *keep, size_t n_keep, pid_t parent, char *why, size_t len)
{
    return sandbox_enter(keep, n_keep, parent, true, why, len);
}

int egress_sandbox_enter_tls(const int *keep, size_t n_keep, pid_t parent, char *why, size_t len)
{
    return sandbox_enter(keep, n_keep, parent, false, why, len);
}
