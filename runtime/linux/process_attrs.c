/* Per-process attributes of the container's init (config.md "POSIX process"
 * and config-linux.md "Personality"): rlimits, oom_score_adj, personality,
 * scheduler, I/O priority, no_new_privs, cwd, and the fds execve passes on.
 * Each runs in the child; sysctl and hostname live in sysctl.c. */
#include "process_attrs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/ioprio.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
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

int scheduler_apply(const struct brig_process *p, struct brig_error **err)
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
    if (syscall(SYS_sched_setattr, 0, &attr, 0) < 0)
        return brig_fail(err, errno, "process.scheduler: sched_setattr (policy %d)", sc->policy);
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

/* Without CLOSE_RANGE_CLOEXEC (Linux < 5.11): walk /proc/self/fd. */
static int fds_cloexec_walk(int first, struct brig_error **err)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL) return brig_fail(err, errno, "fds: open /proc/self/fd");
    int dfd = dirfd(d);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(de->d_name, &end, 10);
        if (*end != '\0' || end == de->d_name || fd < first || fd == dfd) continue;
        int fl = fcntl((int)fd, F_GETFD);
        if (fl >= 0 && !(fl & FD_CLOEXEC)) fcntl((int)fd, F_SETFD, fl | FD_CLOEXEC);
    }
    closedir(d);
    return 0;
}

/* Every fd >= first is marked close-on-exec rather than closed: the ones
 * still needed until execve (keep: the sync socket or exec fifo, the log
 * fd) keep working, and none of them reaches the container's process. */
int fds_close_from(int first, int keep, struct brig_error **err)
{
    if (first < 0) return brig_failx(err, "fds: invalid first fd %d", first);
    brig_debug("fds: close-on-exec from %d (fd %d stays usable until execve)", first, keep);
    if (syscall(SYS_close_range, (unsigned int)first, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return 0;
    if (errno != ENOSYS && errno != EINVAL)
        return brig_fail(err, errno, "fds: close_range(%d, CLOSE_RANGE_CLOEXEC)", first);
    return fds_cloexec_walk(first, err);
}
