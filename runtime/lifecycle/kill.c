/* `kill` (runtime.md "Kill"): signal the container's init, or with --all
 * every process of its cgroup. Only created and running containers can be
 * signalled, as with runc. */
#include "container.h"
#include "init_proc.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../egress/egress.h"
#include "../linux/cgroup/cgroup.h"
#include "../util/cleanup.h"
#include "../util/log.h"
#include "../../policy/policy.h"
#include "state.h"

int init_pidfd_open(const struct brig_state *st, int *pidfd, struct brig_error **err)
{
    if (st->pid <= 0) return 0;
    autoclose int fd = (int)syscall(SYS_pidfd_open, st->pid, 0);
    if (fd < 0) {
        if (errno == ESRCH) return 0;
        return brig_fail(err, errno, "pidfd_open %d", (int)st->pid);
    }
    /* Checked after the pidfd exists: from here on the fd names exactly
     * the process whose start time we compare, never a recycled pid. */
    uint64_t start = state_pid_start_time(st->pid);
    if (start == 0) return 0;
    if (st->pid_start_time != 0 && start != st->pid_start_time) {
        brig_debug("pid %d was reused (start time %llu, recorded %llu)", (int)st->pid,
                   (unsigned long long)start, (unsigned long long)st->pid_start_time);
        return 0;
    }
    *pidfd = steal_fd(&fd);
    return 1;
}

int init_pidfd_signal(int pidfd, int sig, struct brig_error **err)
{
    if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
        return brig_fail(err, errno, "pidfd_send_signal %d", sig);
    return 0;
}

int init_pidfd_wait(int pidfd, int timeout_ms, struct brig_error **err)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long left = timeout_ms - ((now.tv_sec - start.tv_sec) * 1000LL +
                                       (now.tv_nsec - start.tv_nsec) / 1000000);
        if (left <= 0) return brig_fail(err, ETIMEDOUT, "process still alive after %d ms", timeout_ms);
        struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
        int r = poll(&pfd, 1, (int)left);
        if (r > 0) return 0;
        if (r < 0 && errno != EINTR) return brig_fail(err, errno, "poll pidfd");
    }
}

/* How long the init may take to die after SIGKILL (it can be in an
 * uninterruptible sleep, e.g. on a stuck NFS mount). */
#define INIT_KILL_TIMEOUT_MS 10000

int init_kill_all(const struct brig_state *st, struct brig_cgroup *cg, struct brig_error **err)
{
    autoclose int pidfd = -1;
    int alive = init_pidfd_open(st, &pidfd, err);
    if (alive < 0) return -1;
    if (alive) {
        brig_debug("%s: SIGKILL init %d", st->id, (int)st->pid);
        autoerr struct brig_error *e = NULL;
        if (init_pidfd_signal(pidfd, SIGKILL, &e) < 0 && e->errnum != ESRCH)
            return brig_failx(err, "%s", e->msg);
    }
    /* An egress proxy ends with the init, its connections' audit lines
     * written: before the cgroup's kill takes it too. */
    egress_wait_gone(cg);
    /* Without a pid namespace the init's death leaves its children alive:
     * the cgroup is what holds all of them. */
    if (cg != NULL) {
        /* A create killed before its first mkdir recorded a cgroup that was
         * never made: nothing to kill there. */
        autoerr struct brig_error *ke = NULL;
        if (cgroup_kill(cg, SIGKILL, &ke) < 0 && ke->errnum != ENOENT)
            return brig_failx(err, "%s", ke->msg);
    }
    if (alive && init_pidfd_wait(pidfd, INIT_KILL_TIMEOUT_MS, err) < 0)
        return brig_wrap(err, "init process %d did not exit after SIGKILL", (int)st->pid);
    return 0;
}

int init_ns_pids(const struct brig_state *st, pid_t **pids, size_t *n, struct brig_error **err)
{
    *pids = NULL;
    *n = 0;
    autoclose int pidfd = -1;
    int alive = init_pidfd_open(st, &pidfd, err);
    if (alive <= 0) return alive;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)st->pid);
    struct stat ns, own;
    if (stat(path, &ns) < 0) return brig_fail(err, errno, "stat %s", path);
    if (stat("/proc/self/ns/pid", &own) == 0 && own.st_dev == ns.st_dev && own.st_ino == ns.st_ino)
        return brig_failx(err, "container %s has no cgroup and no pid namespace of its own to find "
                          "its processes in", st->id);
    DIR *d = opendir("/proc");
    if (d == NULL) return brig_fail(err, errno, "opendir /proc");
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end = NULL;
        long pid = strtol(e->d_name, &end, 10);
        if (pid <= 0 || *end != '\0') continue;
        struct stat pst;
        snprintf(path, sizeof(path), "/proc/%ld/ns/pid", pid);
        if (stat(path, &pst) < 0 || pst.st_dev != ns.st_dev || pst.st_ino != ns.st_ino) continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 16;
            pid_t *grown = realloc(*pids, cap * sizeof(pid_t));
            if (grown == NULL) abort();
            *pids = grown;
        }
        (*pids)[(*n)++] = (pid_t)pid;
    }
    closedir(d);
    return 0;
}

/* No cgroup (--cgroup-manager disabled, rootless without one): the
 * processes of the init's pid namespace. */
static int kill_pidns(const struct brig_state *st, int sig, struct brig_error **err)
{
    autofree pid_t *pids = NULL;
    size_t n = 0;
    if (init_ns_pids(st, &pids, &n, err) < 0) return brig_wrap(err, "kill --all");
    for (size_t i = 0; i < n; i++)
        if (kill(pids[i], sig) < 0 && errno != ESRCH) return brig_fail(err, errno, "kill %d", (int)pids[i]);
    return 0;
}

static int kill_cgroup(const struct brig_state *st, int sig, struct brig_error **err)
{
    if (st->cgroup == NULL) return kill_pidns(st, sig, err);
    struct brig_cgroup *cg = NULL;
    TRY(cgroup_load(st->cgroup, &cg, err));
    int r = cgroup_kill(cg, sig, err);
    cgroup_free(cg);
    return r;
}

/* A container whose state.json cannot be read as it is: signalled from
 * what the file still says. The init only by pid and start time (a pid
 * alone may name another process by now), --all by its cgroup. */
static int kill_broken(const struct brig_state *st, const char *id, const char *broken, int sig, bool all,
                       struct brig_error **err)
{
    if (all) {
        if (st->cgroup == NULL)
            return brig_failx(err, "kill --all %s: %s, and it is cut before its cgroup: `brig delete --force %s` "
                              "ends what it can", id, broken, id);
        if (kill_cgroup(st, sig, err) < 0) return brig_wrap(err, "kill %s (%s)", id, broken);
        brig_warn("kill --all %s: %s; signalled its cgroup, which it still names", id, broken);
        return 0;
    }
    if (st->pid <= 0 || st->pid_start_time == 0)
        return brig_failx(err, "kill %s: %s, and it does not name its init's pid and start time (which "
                          "tell the init from a process that got its pid since): %s`brig delete --force %s` "
                          "ends what it can", id, broken, st->cgroup ? "`brig kill --all` signals its cgroup; " : "",
                          id);
    autoclose int pidfd = -1;
    int r = init_pidfd_open(st, &pidfd, err);
    if (r < 0) return brig_wrap(err, "kill %s", id);
    if (r == 0 || init_pidfd_signal(pidfd, sig, NULL) < 0)
        return brig_failx(err, "container %s is not running (its init, %d, is gone; %s)", id, (int)st->pid,
                          broken);
    brig_warn("kill %s: %s; signalled its init (%d), which it still names", id, broken, (int)st->pid);
    return 0;
}

static int kill_unaudited(const struct brig_globals *g, const char *id, int sig, bool all, struct brig_error **err)
{
    if (sig <= 0 || sig >= NSIG) return brig_failx(err, "invalid signal %d", sig);
    autoclose int dirfd = -1;
    TRY(state_dir_open(g->root, id, &dirfd, err));
    autostate struct brig_state *st = NULL;
    autofree char *broken = NULL;
    if (state_read_tolerant(dirfd, id, &st, &broken, err) < 0) return brig_wrap(err, "container %s", id);
    if (broken != NULL) return kill_broken(st, id, broken, sig, all, err);
    enum brig_status status = state_status(dirfd, st);
    /* --all also works once the init is gone, as runc's: containerd's shim
     * runs `kill --all ID 9` after the init of a container without its own
     * pid namespace (a pod member) exits, to reap what it left behind. */
    if (!all && status != BRIG_STATUS_CREATED && status != BRIG_STATUS_RUNNING)
        return brig_failx(err, "container %s is not running", id);

    brig_debug("kill %s: signal %d (%s)%s", id, sig, strsignal(sig), all ? " to all processes" : "");
    if (all) {
        if (kill_cgroup(st, sig, err) < 0) return brig_wrap(err, "kill %s", id);
        return 0;
    }
    autoclose int pidfd = -1;
    int r = init_pidfd_open(st, &pidfd, err);
    if (r < 0) return brig_wrap(err, "kill %s", id);
    if (r == 0) return brig_failx(err, "container %s is not running", id);
    if (init_pidfd_signal(pidfd, sig, err) < 0) {
        if (err != NULL && *err != NULL && (*err)->errnum == ESRCH) {
            brig_error_freep(err);
            return brig_failx(err, "container %s is not running", id);
        }
        return brig_wrap(err, "kill %s", id);
    }
    return 0;
}

/* One audit line per operation under the policy in force (policy/). */
int container_kill(const struct brig_globals *g, const char *id, int sig, bool all, struct brig_error **err)
{
    int rc = kill_unaudited(g, id, sig, all, err);
    policy_audit_op(g->policy, "kill", id, true, rc < 0 ? 1 : 0, false, 0);
    return rc;
}
