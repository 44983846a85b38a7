/* A workspace bound kept by a watch, where the workspace's own filesystem
 * keeps none (no project quotas, not small enough; policy_quota.c decides)
 * and the policy does not ask for a stage (workspace.bound "stage"): the
 * workspace stays a plain live bind, and a watcher started with the
 * container measures it (watch_walk.c) and stops the container once it
 * has grown past the bound from what it held at create (bytes on disk, and
 * inodes: one per 4 KiB of the bound, at least WATCH_MIN_INODES):
 *
 *   policy_watch_start   forked before the init is cloned, into a child
 *                        cgroup (WATCH_CGROUP) of the container's: its
 *                        cpu and memory are the sandbox's (a supervised
 *                        run's is "later": brig measures the workspace
 *                        now, and policy_watch_spawn forks the watcher
 *                        only once the command outlives the first look,
 *                        policy_watch_due: a short command never has
 *                        one, nor its cgroup); it holds the
 *                        workspace directory (opened once, from the fd
 *                        create pinned) and STATE/wswatch.json, empty;
 *   policy_watch_attach  given the init's pidfd once it exists; it has
 *                        measured the workspace meanwhile (what it held
 *                        at create), walks from then on, and ends when the
 *                        init does;
 *   policy_watch_detach  create, run -d: brig lets go of it; it lives
 *                        exactly as long as the init (delete kills the
 *                        init, and removes its cgroup with the container's);
 *   policy_watch_stop    run, sandbox run, a failed create: killed.
 *
 * Past the bound it writes the record first (what fired, what it measured:
 * `sandbox run`/`exec` report limits_hit "workspace.maxSize", `brig state`
 * an annotation), logs it to --log, then kills the init (its pid
 * namespace with it) and every process left in the container's cgroup.
 *
 * Not a hard bound: the container can write what it writes within one
 * period past the bound before it is stopped (docs/policy.md). The period
 * adapts to the walk's cost: at least 10 times the last walk's time (the
 * watcher takes at most a tenth of a CPU), at least WATCH_MIN_MS. */
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../policy.h"
#include "../../runtime/config/spec.h"
#include "../../runtime/lifecycle/launch.h"
#include "../../runtime/lifecycle/state.h"
#include "../../runtime/linux/cgroup/cgroup.h"
#include "../../runtime/util/cleanup.h"
#include "../../runtime/util/fdpass.h"
#include "../../runtime/util/log.h"
#include "../../runtime/util/strutil.h"

#define WATCH_CGROUP "brig-wswatch"
#define WATCH_RECORD "wswatch.json"
#define WATCH_RECORD_MAX 1024
/* The inode bound: one per 4 KiB of the bound, at least this many (as the
 * stage's tmpfs has). */
#define WATCH_MIN_INODES 4096
#define WATCH_MIN_MS 50
/* The watcher's fds (watch_child). */
#define WATCH_CTL_FD 3
#define WATCH_WS_FD 4
#define WATCH_REC_FD 5
#define WATCH_PIDFD_FD 6

struct watch_ctx {
    const char *id;
    const struct brig_cgroup *container;    /* to kill what is left in it */
    int ctl, ws, rec, pidfd;
    dev_t ws_dev;                           /* the workspace's filesystem */
    struct watch_walk walk;
    uint64_t base_bytes, base_inodes;       /* what it held at create */
    uint64_t floor, avail;                  /* the free room it keeps, the last seen */
};

struct policy_watch {
    pid_t pid;                  /* the watcher, 0 while a later one is not forked yet */
    int ctl;
    struct brig_cgroup *cg;     /* the watcher's child cgroup, or NULL */
    /* later (a supervised run): measured by brig at create, forked only
     * once the command outlives the first look (policy_watch_due) */
    bool later;
    uint64_t due;               /* CLOCK_MONOTONIC ms of the first look */
    char *id;
    struct watch_ctx x;         /* its workspace, record and init's pidfd, its baseline */
};

static uint64_t watch_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Only what the walk and the kill need: reading any directory of the
 * workspace (CAP_DAC_READ_SEARCH), the fds and maps of the container's
 * processes (CAP_SYS_PTRACE, for /proc/PID/fd and maps: watch_hidden.c;
 * it attaches to nothing) and signalling them under their own ids
 * (CAP_KILL). Not dumpable: no process of the same uid can trace it or
 * open its /proc files. */
static int watch_confine(char *why, size_t len)
{
    for (unsigned long c = 0; c <= CAP_LAST_CAP; c++)
        if (c != CAP_DAC_READ_SEARCH && c != CAP_KILL && c != CAP_SYS_PTRACE && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
            return snprintf(why, len, "drop the bounding set: %s", strerror(errno)), -1;
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return snprintf(why, len, "clear the ambient set: %s", strerror(errno)), -1;
    struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
    struct __user_cap_data_struct d[2] = { 0 };
    uint32_t keep = (1u << CAP_DAC_READ_SEARCH) | (1u << CAP_KILL) | (1u << CAP_SYS_PTRACE);
    d[0].effective = d[0].permitted = keep;
    if (syscall(SYS_capset, &h, d) < 0) return snprintf(why, len, "capset: %s", strerror(errno)), -1;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return snprintf(why, len, "no_new_privs, dumpable: %s", strerror(errno)), -1;
    return 0;
}

/* The free room of the workspace's filesystem (x->avail), which the watch
 * keeps at the bound (x->floor) whatever its walks see: what no walk can
 * count (an unlinked file kept only as an fd queued in a unix socket, an
 * inode an inotify watch holds) can take the filesystem down to that, never
 * further. */
static int watch_room(struct watch_ctx *x)
{
    struct statfs sf;
    if (fstatfs(x->ws, &sf) < 0) return -1;
    x->avail = (uint64_t)sf.f_bavail * (sf.f_frsize ? (uint64_t)sf.f_frsize : (uint64_t)sf.f_bsize);
    return 0;
}

/* The bound passed: the record, the log line, then the kill. */
static __attribute__((noreturn)) void watch_fire(struct watch_ctx *x)
{
    const struct watch_walk *w = &x->walk;
    char text[WATCH_RECORD_MAX];
    int n = snprintf(text, sizeof(text),
                     "{\"limit\":\"workspace.maxSize\",\"exceeded\":\"%s\",\"bytes\":%" PRIu64 ",\"inodes\":%" PRIu64
                     ",\"createBytes\":%" PRIu64 ",\"createInodes\":%" PRIu64 ",\"maxBytes\":%" PRIu64
                     ",\"maxInodes\":%" PRIu64 ",\"freeBytes\":%" PRIu64 ",\"keepFreeBytes\":%" PRIu64 "}\n",
                     w->why, w->bytes, w->inodes, x->base_bytes, x->base_inodes, w->max_bytes - x->base_bytes,
                     w->max_inodes - x->base_inodes, x->avail, x->floor);
    if (n > 0) (void)!pwrite(x->rec, text, (size_t)n, 0);
    if (strcmp(w->why, "room") == 0)
        brig_errorf("container %s: workspace.maxSize: the workspace's filesystem has %" PRIu64 " bytes free, under the %"
                    PRIu64 " its watch keeps free (the bound): the container is killed", x->id, x->avail, x->floor);
    else if (strcmp(w->why, "error") == 0)
        brig_errorf("container %s: workspace.maxSize: its watch failed (poll: %s): the container is killed", x->id,
                    strerror(errno));
    else if (strcmp(w->why, "depth") == 0)
        brig_errorf("container %s: workspace.maxSize: the workspace is deeper than %d directories, more than "
                    "its watch measures: the container is killed", x->id, WATCH_DEPTH);
    else
        brig_errorf("container %s: workspace.maxSize: the workspace grew by more than %" PRIu64 " bytes or %" PRIu64
                    " inodes (it holds at least %" PRIu64 " bytes, %" PRIu64 " inodes; %" PRIu64 " and %" PRIu64
                    " at create): the container is killed", x->id, w->max_bytes - x->base_bytes,
                    w->max_inodes - x->base_inodes, w->bytes, w->inodes, x->base_bytes, x->base_inodes);
    /* The init first: its pid namespace (every sandbox's) goes with it. */
    syscall(SYS_pidfd_send_signal, x->pidfd, SIGKILL, NULL, 0);
    /* Without one of its own, what it left in its cgroup. Not cgroup_kill:
     * its freeze would freeze this process too (a child cgroup). */
    for (int round = 0; x->container != NULL && round < 3; round++) {
        autofree pid_t *pids = NULL;
        size_t np = 0;
        if (cgroup_pids(x->container, &pids, &np, NULL) < 0 || np == 0) break;
        for (size_t i = 0; i < np; i++) kill(pids[i], SIGKILL);
    }
    _exit(0);
}

/* The control socket spoke: "detach" (create: live on with the init), or
 * EOF (brig stops us). */
static void watch_control(struct watch_ctx *x)
{
    char msg[16];
    ssize_t n = recv(x->ctl, msg, sizeof(msg), 0);
    if (n != 6 || memcmp(msg, "detach", 6) != 0) _exit(0);
    close(x->ctl);
    x->ctl = -1;
}

/* The pause after a walk that took took_ms: ten times as long (a tenth of
 * a CPU at most), at least WATCH_MIN_MS. */
static int watch_period(uint64_t took_ms)
{
    return took_ms * 10 > WATCH_MIN_MS ? (int)(took_ms * 10 > INT32_MAX ? INT32_MAX : took_ms * 10) : WATCH_MIN_MS;
}

/* The first look is WATCH_MIN_MS after the walk at create (which measured
 * the workspace as the container found it): a command shorter than that is
 * never walked again. Not the period a walk of that length earns: a large
 * workspace (300,000 files: a 5 s period) would give a writer that starts
 * at once gigabytes before the first look. */
static __attribute__((noreturn)) void watch_loop(struct watch_ctx *x, int wait_ms)
{
    for (;;) {
        struct pollfd pf[2] = { { .fd = x->pidfd, .events = POLLIN }, { .fd = x->ctl, .events = POLLIN } };
        int n = poll(pf, x->ctl >= 0 ? 2 : 1, wait_ms);
        if (n < 0 && errno != EINTR) {
            /* it cannot go on watching: the container does not go on unwatched */
            x->walk.why = "error";
            watch_fire(x);
        }
        if (pf[0].revents != 0) _exit(0);       /* the container ended */
        if (n > 0 && x->ctl >= 0 && pf[1].revents != 0) {
            watch_control(x);
            continue;
        }
        if (n != 0) continue;
        uint64_t t0 = watch_now_ms();
        if (watch_walk(&x->walk, x->ws)) watch_fire(x);
        autofree pid_t *pids = NULL;
        size_t np = 0;
        if (x->container != NULL && cgroup_pids_tree(x->container, &pids, &np) == 0 &&
            watch_hidden(&x->walk, pids, np, x->ws_dev))
            watch_fire(x);
        if (watch_room(x) < 0 || x->avail < x->floor) {
            x->walk.why = "room";
            watch_fire(x);
        }
        wait_ms = watch_period(watch_now_ms() - t0);
    }
}

/* What the workspace holds before the container runs anything: the bound
 * is on what it grows by. *why (empty on entry) says what stops the watch
 * (the create fails with it). */
static void watch_measure(struct watch_ctx *x, char *why, size_t len)
{
    struct watch_walk *w = &x->walk;
    struct stat wst;
    if (why[0] == '\0' && fstat(x->ws, &wst) < 0) snprintf(why, len, "stat the workspace: %s", strerror(errno));
    x->ws_dev = why[0] == '\0' ? wst.st_dev : 0;
    uint64_t bound = w->max_bytes, inodes = w->max_inodes;
    w->max_bytes = w->max_inodes = UINT64_MAX;
    if (why[0] == '\0' && watch_walk(w, x->ws))
        snprintf(why, len, "the workspace is deeper than %d directories: its watch cannot measure it "
                 "(workspace.bound \"stage\", or a filesystem with project quotas, can bound it)", WATCH_DEPTH);
    if (why[0] == '\0' && w->setid[0] != '\0')
        snprintf(why, len, "the workspace holds a writable set-id file (%.200s): a command could rewrite it "
                 "through a shared mapping, which keeps the bit, and leave a set-id program of its own on the host; "
                 "clear its bits (chmod ug-s) or its write permission, or stage the workspace "
                 "(workspace.bound \"stage\": its write-back drops the bits)", w->setid);
    x->base_bytes = w->bytes;
    x->base_inodes = w->inodes;
    x->floor = bound;
    if (why[0] == '\0' && watch_room(x) < 0)
        snprintf(why, len, "statfs the workspace: %s", strerror(errno));
    else if (why[0] == '\0' && x->avail < x->floor)
        snprintf(why, len, "the workspace's filesystem has %" PRIu64 " bytes free, under the %" PRIu64
                 " its watch keeps free (the bound): free room there, or "
                 "bound the workspace by its filesystem, project quotas or the stage (docs/policy.md)",
                 x->avail, x->floor);
    w->max_bytes = w->bytes > UINT64_MAX - bound ? UINT64_MAX : w->bytes + bound;
    w->max_inodes = w->inodes > UINT64_MAX - inodes ? UINT64_MAX : w->inodes + inodes;
}

/* The watcher's main, in the forked child; never returns. Forked at create
 * it measures the workspace and waits for the init's pidfd; a later one
 * has both (x->pidfd set) and its first look is due at once. */
static __attribute__((noreturn)) void watch_child(struct watch_ctx *x, const struct brig_cgroup *own, bool cloned_into)
{
    bool later = x->pidfd >= 0;
    char why[640] = "";
    autoerr struct brig_error *e = NULL;
    /* Out of brig's process group and session first: the terminal's job
     * control (SIGTTOU when brig, a background job, writes to it; ^Z) must
     * never stop the watcher with it, nor leave it stopped when only brig is
     * continued (the watcher was in brig's group until its answer, and a
     * streamed run writes right after that answer: t-workspace-watch). */
    setsid();
    if (own != NULL && cgroup_attach_self(own, cloned_into, &e) < 0)
        snprintf(why, sizeof(why), "join the sandbox's cgroup: %s", e->msg);
    if (why[0] == '\0') watch_confine(why, sizeof(why));
    /* (the init is being made meanwhile) */
    if (!later && why[0] == '\0') watch_measure(x, why, sizeof(why));
    char msg[8];
    if (!later && (brig_recv_with_fd(x->ctl, msg, sizeof(msg), &x->pidfd, "watch", NULL) <= 0 || x->pidfd < 0))
        _exit(0);   /* brig gave up before the container existed */
    if (why[0] != '\0') {
        (void)!send(x->ctl, why, strlen(why), MSG_NOSIGNAL);
        _exit(1);
    }
    /* From now on it lives as long as the init (its pidfd), whoever ends
     * brig: run's init dies with brig (sandbox run) or lives on (run -d,
     * create), and so does the bound. Before the answer: brig may exit as
     * soon as it has it, and the parent-death signal would end us then. */
    prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
    (void)!send(x->ctl, "ok", 2, MSG_NOSIGNAL);
    watch_loop(x, later ? 0 : WATCH_MIN_MS);
}

/* The workspace mount create marked for a watch, or NULL. */
static const struct brig_mount *watch_mount(const struct brig_spec *s)
{
    for (size_t i = 0; s != NULL && i < s->n_mounts; i++)
        if (s->mounts[i].watch_bytes > 0 && s->mounts[i].has_source_fd && s->mounts[i].source_fd >= 0)
            return &s->mounts[i];
    return NULL;
}

/* fds onto 3, 4, 5 (and the init's pidfd onto 6, when given; the log onto
 * 2 when it is a file: --log), the rest closed; in the child. */
static int watch_fds(int ctl, int ws, int rec, int pidfd)
{
    int log = brig_log_fd();
    struct stat st;
    bool keep_log = log >= 0 && fstat(log, &st) == 0 && S_ISREG(st.st_mode);
    int hi[5] = { fcntl(ctl, F_DUPFD, 10), fcntl(ws, F_DUPFD, 10), fcntl(rec, F_DUPFD, 10),
                  keep_log ? fcntl(log, F_DUPFD, 10) : -1, pidfd >= 0 ? fcntl(pidfd, F_DUPFD, 10) : -1 };
    if (hi[0] < 0 || hi[1] < 0 || hi[2] < 0 || (pidfd >= 0 && hi[4] < 0)) return -1;
    int null = open("/dev/null", O_RDWR);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(hi[3] >= 0 ? hi[3] : null, 2) < 0) return -1;
    if (dup2(hi[0], WATCH_CTL_FD) < 0 || dup2(hi[1], WATCH_WS_FD) < 0 || dup2(hi[2], WATCH_REC_FD) < 0) return -1;
    if (pidfd >= 0 && dup2(hi[4], WATCH_PIDFD_FD) < 0) return -1;
    syscall(SYS_close_range, pidfd >= 0 ? WATCH_PIDFD_FD + 1 : WATCH_REC_FD + 1, ~0u, 0);
    brig_log_set_fd(2);
    return 0;
}

/* A watch of mount m's bound (its inodes: one per 4 KiB of it, at least
 * WATCH_MIN_INODES), before its baseline; no pidfd yet. */
static struct watch_ctx watch_ctx_new(const struct brig_mount *m, const char *id, const struct brig_cgroup *cg,
                                      int ctl, int ws, int rec)
{
    uint64_t bytes = m->watch_bytes;
    return (struct watch_ctx){ .id = id, .container = cg, .ctl = ctl, .ws = ws, .rec = rec, .pidfd = -1,
                               .walk = { .max_bytes = bytes,
                                         .max_inodes = bytes / 4096 > WATCH_MIN_INODES ? bytes / 4096
                                                                                       : WATCH_MIN_INODES } };
}

/* What brig holds of a watch (a later one's fds and baseline). */
static void watch_release(struct policy_watch *w)
{
    if (w->cg != NULL) cgroup_free(w->cg);
    if (w->later) {
        brig_closep(&w->x.ws);
        brig_closep(&w->x.rec);
        brig_closep(&w->x.pidfd);
        free(w->x.walk.seen);
        free(w->id);
    }
    free(w);
}

/* Never the OOM killer's pick when the sandbox fills the memory cgroup it
 * shares (the bound would go with it): set by brig, where it holds
 * CAP_SYS_RESOURCE (a root without it leaves the watcher at 0, the
 * smallest process of the cgroup but not exempt: docs/policy.md). */
static void watch_oom_exempt(pid_t pid)
{
    char oom_path[64];
    snprintf(oom_path, sizeof(oom_path), "/proc/%d/oom_score_adj", (int)pid);
    autoclose int oom = open(oom_path, O_WRONLY | O_CLOEXEC);
    if (oom < 0 || write(oom, "-1000", 5) != 5)
        brig_debug("workspace watch: oom_score_adj -1000: %s", strerror(errno));
}

/* The watcher's answer on ctl: "ok", or why it cannot watch. */
static int watch_answer(int ctl, struct brig_error **err)
{
    char msg[700];
    ssize_t n = recv(ctl, msg, sizeof(msg) - 1, 0);
    if (n <= 0) return brig_failx(err, "workspace.maxSize: the watcher ended before it started");
    msg[n] = '\0';
    if (strcmp(msg, "ok") != 0) return brig_failx(err, "workspace.maxSize: the watcher: %s", msg);
    return 0;
}

/* later: brig measures the baseline now, the watcher is forked by
 * policy_watch_spawn (the one who supervises the run calls it when
 * policy_watch_due says so). */
static int watch_start_later(const struct brig_mount *m, const char *id, const struct brig_cgroup *cg, int *ws,
                             int *rec, struct policy_watch **out, struct brig_error **err)
{
    struct policy_watch *w = brig_calloc(1, sizeof(*w));
    w->ctl = -1;
    w->later = true;
    w->id = brig_strdup(id);
    w->x = watch_ctx_new(m, w->id, cg, -1, *ws, *rec);
    *ws = *rec = -1;
    char why[640] = "";
    watch_measure(&w->x, why, sizeof(why));
    if (why[0] != '\0') {
        policy_watch_stop(w);
        return brig_failx(err, "workspace.maxSize: the watcher: %s", why);
    }
    *out = w;
    brig_debug("workspace %s measured (%" PRIu64 " bytes, %" PRIu64 " inodes), its watcher forked if the "
               "command outlives the first look; %" PRIu64 " bytes", m->source, w->x.base_bytes, w->x.base_inodes,
               m->watch_bytes);
    return 0;
}

int policy_watch_start(const struct brig_spec *s, const char *id, int state_dirfd, const struct brig_cgroup *cg,
                       bool later, struct policy_watch **out, struct brig_error **err)
{
    *out = NULL;
    const struct brig_mount *m = watch_mount(s);
    if (m == NULL) {
        /* a watch asked for on a mount create did not pin: never unbounded */
        for (size_t i = 0; s != NULL && i < s->n_mounts; i++)
            if (s->mounts[i].watch_bytes > 0)
                return brig_failx(err, "workspace.maxSize: the workspace %s to watch was not opened by create",
                                  s->mounts[i].source);
        return 0;
    }
    autoclose int ws = openat(m->source_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (ws < 0) return brig_fail(err, errno, "workspace.maxSize: open the workspace %s to watch it", m->source);
    autoclose int rec = openat(state_dirfd, WATCH_RECORD, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (rec < 0) {
        brig_fail(err, errno, "workspace.maxSize: %s", WATCH_RECORD);
        return state_root_hint(err);
    }
    if (later) return watch_start_later(m, id, cg, &ws, &rec, out, err);
    struct launch_helper h;
    pid_t pid = launch_helper_fork(cg, WATCH_CGROUP, "brig-wswatch", &h, err);
    if (pid < 0) return brig_wrap(err, "workspace.maxSize: the watcher");
    if (pid == 0) {
        if (watch_fds(h.ctl, ws, rec, -1) < 0) _exit(1);
        brig_log_set_tag("wswatch");
        struct watch_ctx x = watch_ctx_new(m, id, cg, WATCH_CTL_FD, WATCH_WS_FD, WATCH_REC_FD);
        watch_child(&x, h.cg, h.cloned_into);
    }
    watch_oom_exempt(pid);
    struct policy_watch *w = brig_calloc(1, sizeof(*w));
    w->pid = pid;
    w->ctl = h.ctl;
    w->cg = h.cg;
    *out = w;
    brig_debug("workspace %s watched by pid %d, %" PRIu64 " bytes", m->source, (int)pid, m->watch_bytes);
    return 0;
}

int policy_watch_attach(struct policy_watch *w, pid_t init_pid, struct brig_error **err)
{
    if (w == NULL) return 0;
    autoclose int pidfd = (int)syscall(SYS_pidfd_open, init_pid, 0);
    if (pidfd < 0) return brig_fail(err, errno, "workspace.maxSize: pidfd_open");
    if (w->later) {
        w->x.pidfd = steal_fd(&pidfd);
        w->due = watch_now_ms() + WATCH_MIN_MS;
        return 0;
    }
    TRY(brig_send_with_fd(w->ctl, "P", 1, pidfd, err));
    return watch_answer(w->ctl, err);
}

long policy_watch_due(const struct policy_watch *w)
{
    if (w == NULL || !w->later || w->pid > 0 || w->x.pidfd < 0) return -1;
    uint64_t now = watch_now_ms();
    return w->due > now ? (long)(w->due - now) : 0;
}

/* The later watcher, forked by the run's supervisor (it holds the
 * command's pipes: watch_fds closes them at once), into the container's
 * cgroup; it looks at once (its first look is due) and from then on as the
 * one forked at create. */
int policy_watch_spawn(struct policy_watch *w, struct brig_error **err)
{
    if (w == NULL || !w->later || w->pid > 0) return 0;
    struct launch_helper h;
    pid_t pid = launch_helper_fork(w->x.container, WATCH_CGROUP, "brig-wswatch", &h, err);
    if (pid < 0) return brig_wrap(err, "workspace.maxSize: the watcher");
    if (pid == 0) {
        if (watch_fds(h.ctl, w->x.ws, w->x.rec, w->x.pidfd) < 0) _exit(1);
        brig_log_set_tag("wswatch");
        struct watch_ctx x = w->x;
        x.ctl = WATCH_CTL_FD;
        x.ws = WATCH_WS_FD;
        x.rec = WATCH_REC_FD;
        x.pidfd = WATCH_PIDFD_FD;
        watch_child(&x, h.cg, h.cloned_into);
    }
    watch_oom_exempt(pid);
    w->pid = pid;
    w->ctl = h.ctl;
    w->cg = h.cg;
    brig_debug("workspace watched by pid %d from its first look", (int)pid);
    return watch_answer(w->ctl, err);
}

void policy_watch_detach(struct policy_watch *w)
{
    if (w == NULL) return;
    if (w->later && w->pid == 0) {
        /* only a supervised run waits to fork it: never left unwatched */
        autoerr struct brig_error *e = NULL;
        if (policy_watch_spawn(w, &e) < 0) {
            brig_errorf("container %s: %s: the container is killed", w->id, e->msg);
            if (w->x.pidfd >= 0) syscall(SYS_pidfd_send_signal, w->x.pidfd, SIGKILL, NULL, 0);
        }
    }
    /* no answer waited for: it may be in a walk */
    if (w->ctl >= 0) {
        (void)!send(w->ctl, "detach", 6, MSG_NOSIGNAL);
        close(w->ctl);
    }
    /* its cgroup goes with the container's (delete); a zombie of ours
     * until brig exits */
    watch_release(w);
}

void policy_watch_stop(struct policy_watch *w)
{
    if (w == NULL) return;
    if (w->ctl >= 0) close(w->ctl);
    if (w->pid > 0) {
        kill(w->pid, SIGKILL);
        while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR) {}
    }
    if (w->cg != NULL) {
        autoerr struct brig_error *err = NULL;
        if (cgroup_destroy(w->cg, &err) < 0) brig_warn("workspace watch: %s", err->msg);
    }
    watch_release(w);
}

bool policy_watch_active(int state_dirfd)
{
    struct stat st;
    return fstatat(state_dirfd, WATCH_RECORD, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

bool policy_watch_fired(int state_dirfd)
{
    struct stat st;
    return fstatat(state_dirfd, WATCH_RECORD, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

char *policy_watch_record(int state_dirfd)
{
    autoclose int fd = openat(state_dirfd, WATCH_RECORD, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    char buf[WATCH_RECORD_MAX];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
    if (n <= 0) return NULL;
    while (n > 0 && buf[n - 1] == '\n') n--;
    buf[n] = '\0';
    return brig_strdup(buf);
}
