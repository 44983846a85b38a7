/* Per-process attributes of the container's init (config.md "POSIX process"
 * and config-linux.md "Personality"): rlimits, oom_score_adj, personality,
 * scheduler, I/O priority, no_new_privs, cwd, and the fds execve passes on.
 * Each runs in the child; sysctl and hostname live in sysctl.c. */
#include "process_attrs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ioprio.h>
#include <linux/magic.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"

int rlimits_apply(const struct brig_process *p, struct brig_error **err)
{
    for (size_t i = 0; i < p->n_rlimits; i++) {
        const struct brig_rlimit *r = &p->rlimits[i];
        const char *name = r->name != NULL ? r->name : "?";
        struct rlimit rl = { .rlim_cur = r->soft, .rlim_max = r->hard };
        if (r->soft > r->hard)
            return brig_failx(err, "process.rlimits[%zu] (%s): soft limit %llu above hard limit "
                              "%llu", i, name, (unsigned long long)r->soft,
                              (unsigned long long)r->hard);
        if (prlimit(0, (__rlimit_resource_t)r->resource, &rl, NULL) < 0)
            return brig_fail(err, errno, "process.rlimits[%zu] (%s): setrlimit", i, name);
    }
    return 0;
}

int oom_score_adj_apply(const struct brig_process *p, struct brig_error **err)
{
    if (!p->has_oom_score_adj) return 0;
    if (p->oom_score_adj < -1000 || p->oom_score_adj > 1000)
        return brig_failx(err, "process.oomScoreAdj: %d is out of range (-1000-1000)",
                          p->oom_score_adj);
    char buf[16];
    int n = snprintf(buf, sizeof(buf), "%d", p->oom_score_adj);
    if (brig_write_file("/proc/self/oom_score_adj", buf, (size_t)n, err) < 0)
        return brig_wrap(err, "process.oomScoreAdj");
    return 0;
}

int personality_apply(const struct brig_linux *l, struct brig_error **err)
{
    if (!l->personality.present) return 0;
    /* The spec defines no flags yet: anything given is something we cannot do. */
    if (l->personality.n_flags > 0)
        return brig_failx(err, "linux.personality.flags[0]: unknown flag \"%s\"",
                          l->personality.flags[0]);
    if (l->personality.domain != PER_LINUX && l->personality.domain != PER_LINUX32)
        return brig_failx(err, "linux.personality.domain: unsupported domain 0x%lx",
                          l->personality.domain);
    if (personality(l->personality.domain) < 0)
        return brig_fail(err, errno, "linux.personality: personality(0x%lx)",
                         l->personality.domain);
    return 0;
}

/* struct sched_attr (SCHED_ATTR_SIZE_VER1): glibc 2.36 has no wrapper, and
 * <linux/sched/types.h> clashes with <sched.h> over struct sched_param. */
struct brig_sched_attr {
    uint32_t size;
    uint32_t sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime;
    uint64_t sched_deadline;
    uint64_t sched_period;
    uint32_t sched_util_min;
    uint32_t sched_util_max;
};

static bool scheduler_is_rt(int policy)
{
    return policy == SCHED_FIFO || policy == SCHED_RR;
}

int scheduler_validate(const struct brig_process *p, struct brig_error **err)
{
    if (!p->has_scheduler) return 0;
    const struct brig_scheduler *sc = &p->scheduler;
    /* The kernel only says EINVAL; name the field that is wrong. */
    if (sc->nice < -20 || sc->nice > 19)
        return brig_failx(err, "process.scheduler.nice: %d is out of range (-20-19)", sc->nice);
    if (scheduler_is_rt(sc->policy) && (sc->priority < 1 || sc->priority > 99))
        return brig_failx(err, "process.scheduler.priority: %d is out of range (1-99) for a "
                          "real-time policy", sc->priority);
    if (!scheduler_is_rt(sc->policy) && sc->priority != 0)
        return brig_failx(err, "process.scheduler.priority: must be 0 unless the policy is "
                          "SCHED_FIFO or SCHED_RR");
    return 0;
}

int scheduler_apply(const struct brig_process *p, pid_t pid, struct brig_error **err)
{
    if (!p->has_scheduler) return 0;
    TRY(scheduler_validate(p, err));
    const struct brig_scheduler *sc = &p->scheduler;
    struct brig_sched_attr attr = {
        .size = sizeof(attr),
        .sched_policy = (uint32_t)sc->policy,
        .sched_flags = sc->flags,
        .sched_nice = sc->nice,
        .sched_priority = (uint32_t)sc->priority,
        .sched_runtime = sc->runtime,
        .sched_deadline = sc->deadline,
        .sched_period = sc->period,
    };
    if (syscall(SYS_sched_setattr, pid, &attr, 0) < 0) {
        /* Root is refused a real-time policy in a cgroup without real-time
         * time (cgroup v1 with real-time group scheduling: a new cgroup
         * has none): say what gives it some. */
        if (errno == EPERM && scheduler_is_rt(sc->policy))
            return brig_fail(err, errno, "process.scheduler: sched_setattr %s (a cgroup v1 cpu "
                             "controller gives a new cgroup no real-time time: set "
                             "linux.resources.cpu.realtimeRuntime)",
                             sc->policy == SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR");
        return brig_fail(err, errno, "process.scheduler: sched_setattr (policy %d)", sc->policy);
    }
    return 0;
}

int io_priority_apply(const struct brig_process *p, struct brig_error **err)
{
    if (!p->has_io_priority) return 0;
    const struct brig_io_priority *io = &p->io_priority;
    if (io->klass != IOPRIO_CLASS_RT && io->klass != IOPRIO_CLASS_BE &&
        io->klass != IOPRIO_CLASS_IDLE)
        return brig_failx(err, "process.ioPriority.class: unknown class %d", io->klass);
    if (io->priority < 0 || io->priority > 7)
        return brig_failx(err, "process.ioPriority.priority: %d is out of range (0-7)",
                          io->priority);
    if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0,
                IOPRIO_PRIO_VALUE(io->klass, io->priority)) < 0)
        return brig_fail(err, errno, "process.ioPriority: ioprio_set");
    return 0;
}

int no_new_privs_apply(const struct brig_process *p, struct brig_error **err)
{
    if (!p->no_new_privileges) return 0;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return brig_fail(err, errno, "process.noNewPrivileges: prctl PR_SET_NO_NEW_PRIVS");
    return 0;
}

/* A new session also without a terminal. The caller's terminal, which
 * stdio may still be, is then not the process's controlling one, so
 * TIOCSTI into it needs CAP_SYS_ADMIN over the host (security.md),
 * and the caller's job control does not reach into the container. */
int session_new(struct brig_error **err)
{
    if (setsid() < 0 && getsid(0) != getpid()) return brig_fail(err, errno, "setsid");
    return 0;
}

int cwd_apply(const struct brig_process *p, struct brig_error **err)
{
    if (p->cwd == NULL || p->cwd[0] != '/')
        return brig_failx(err, "process.cwd: must be an absolute path");
    /* Resolved inside the (pivoted) root, so a symlink in the image cannot
     * put the process's cwd outside it. */
    autoclose int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return brig_fail(err, errno, "process.cwd: open /");
    autoclose int fd = brig_open_in_root(rootfd, p->cwd, O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                                         err);
    if (fd < 0) return brig_wrap(err, "process.cwd (%s)", p->cwd);
    if (fchdir(fd) < 0) return brig_fail(err, errno, "process.cwd (%s): chdir", p->cwd);
    return 0;
}

/* Without close_range (Linux < 5.9): close what /proc/self/fd lists, read
 * only from a real procfs (a container may mount a tmpfs over its /proc:
 * an empty listing would leave every fd open). */
static int fds_close_walk(int first, int keep, struct brig_error **err)
{
    autoclose int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct statfs sfs;
    if (dfd < 0 || fstatfs(dfd, &sfs) < 0)
        return brig_fail(err, errno, "fds: close_range is unavailable and /proc/self/fd cannot "
                                     "be read");
    if (sfs.f_type != PROC_SUPER_MAGIC)
        return brig_failx(err, "fds: close_range is unavailable and /proc is not a procfs");
    DIR *d = fdopendir(dfd);
    if (d == NULL) return brig_fail(err, errno, "fds: read /proc/self/fd");
    int own = steal_fd(&dfd);
    /* Closing while reading: rewind until a pass finds nothing to close. */
    for (bool closed = true; closed;) {
        closed = false;
        rewinddir(d);
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            char *end;
            long fd = strtol(de->d_name, &end, 10);
            if (*end != '\0' || end == de->d_name || fd < first || fd == keep || fd == own) continue;
            close((int)fd);
            closed = true;
        }
    }
    closedir(d);
    return 0;
}

static int fds_close_range(unsigned int lo, unsigned int hi)
{
    if (lo > hi) return 0;
    return (int)syscall(SYS_close_range, lo, hi, 0);
}

/* Closed, not marked close-on-exec: execve resolves process.args[0], a
 * script's #! interpreter and an ELF's PT_INTERP before it closes
 * close-on-exec fds, so /proc/self/fd/N/.. of a host directory fd would
 * lead out of the root (CVE-2024-21626). keep (the sync socket, or -1)
 * stays: a socket is no directory, /proc/self/fd/N/.. is ENOTDIR and
 * /proc/self/fd/N cannot be opened (ENXIO), so it leads nowhere. */
int fds_close_from(int first, int keep, struct brig_error **err)
{
    if (first < 0) return brig_failx(err, "fds: invalid first fd %d", first);
    if (keep < first) keep = -1;
    brig_debug("fds: closing every fd from %d but %d", first, keep);
    int log = brig_log_fd();
    if (log >= first && log != keep) brig_log_set_fd(-1);   /* closed below */
    int r = keep < 0 ? fds_close_range((unsigned int)first, ~0U)
                     : fds_close_range((unsigned int)first, (unsigned int)keep - 1);
    if (r == 0 && keep >= 0) r = fds_close_range((unsigned int)keep + 1, ~0U);
    if (r == 0) return 0;
    if (errno != ENOSYS) return brig_fail(err, errno, "fds: close_range from %d", first);
    return fds_close_walk(first, keep, err);
}

/* The preserved range 3..first-1 holds the caller's fds, but only those the
 * caller really had: where it had none, brig's own (all close-on-exec: a
 * cgroup directory, the bundle) took the number, and the kernel resolves
 * args[0], #! and PT_INTERP at execve before close-on-exec applies, so
 * /proc/self/fd/N/.. there led to the host. Close-on-exec fds do not reach
 * the new program anyway: closing them now changes nothing it gets. */
void fds_close_cloexec_below(int first, int keep)
{
    int log = brig_log_fd();
    for (int fd = 3; fd < first; fd++) {
        int fl = fcntl(fd, F_GETFD);
        if (fd == keep || fl < 0 || !(fl & FD_CLOEXEC)) continue;
        if (fd == log) brig_log_set_fd(-1);
        close(fd);
    }
}
