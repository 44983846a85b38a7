/* `brig sandbox run`: one command in a fresh sandbox, through brig's own
 * lifecycle (launch_container, the start handshake, launch_delete: what
 * `brig run` does), with the command's stdout and stderr on pipes that are
 * drained while the wall and idle clocks run.
 *
 * The sandbox is the init's pid namespace: killing the init (brig-init,
 * PID 1) makes the kernel SIGKILL every process in it, however it detached
 * (setsid, double fork), and the delete then kills and removes the cgroup.
 * Both a timeout and the command's own exit end the sandbox that way. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "../egress/egress.h"
#include "../policy/policy.h"
#include "../runtime/lifecycle/launch.h"
#include "../runtime/lifecycle/waiter.h"
#include "../runtime/linux/cgroup/cgroup.h"
#include "../runtime/linux/sync.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

static uint64_t run_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void run_new_id(char *id, size_t len)
{
    unsigned char b[6] = {0};
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
        uint64_t t = run_now_ms() ^ (uint64_t)getpid() << 20;
        memcpy(b, &t, sizeof(b));
    }
    snprintf(id, len, "sb-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
}

/* The init inherits brig's fds 0-2: for the time of the launch they are
 * the command's stdin and the pipes, then brig's own again. */
struct run_stdio { int saved[3]; };

static int run_stdio_swap(struct run_stdio *s, const int fds[3], struct brig_error **err)
{
    for (int i = 0; i < 3; i++) s->saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 3);
    for (int i = 0; i < 3; i++)
        if (fds[i] != i && dup2(fds[i], i) < 0) return brig_fail(err, errno, "dup2 fd %d", i);
    return 0;
}

static void run_stdio_restore(struct run_stdio *s)
{
    for (int i = 0; i < 3; i++) {
        if (s->saved[i] >= 0) {
            dup2(s->saved[i], i);
            close(s->saved[i]);
        } else {
            close(i);
        }
        s->saved[i] = -1;
    }
}

/* A terminal is never handed in: with it the command could push input
 * into the caller's shell (TIOCSTI) or read what is typed there. */
static int run_open_stdin(const char *path, struct brig_error **err)
{
    autoclose int fd = -1;
    const char *p = path ? path : "/dev/null";
    if (strcmp(p, "-") == 0) {
        fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
        if (fd < 0) return brig_fail(err, errno, "--stdin -: brig has no stdin");
    } else {
        fd = open(p, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) return brig_fail(err, errno, "--stdin %s", p);
    }
    if (isatty(fd))
        return brig_failx(err, "--stdin %s: a terminal; a sandbox never gets one (pipe the input in)", p);
    return steal_fd(&fd);
}

/* The live copy to brig's own stdout/stderr. A reader that stalls for a
 * second (a full pipe nobody reads) or goes away loses the live copy, not
 * the clocks: the loop must keep draining and timing the command. */
static void run_echo(int *fd, const char *buf, size_t n)
{
    while (*fd >= 0 && n > 0) {
        struct pollfd pf = { .fd = *fd, .events = POLLOUT };
        int r = poll(&pf, 1, 1000);
        if (r < 0 && errno == EINTR) continue;
        ssize_t w = r == 1 && !(pf.revents & (POLLERR | POLLHUP | POLLNVAL)) ? write(*fd, buf, n) : -1;
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            *fd = -1;
            return;
        }
        buf += w;
        n -= (size_t)w;
    }
}

/* One read from a stream pipe; false at EOF. */
static bool run_drain(int fd, struct sandbox_stream *s, int *echo_fd, uint64_t *last_byte)
{
    static char buf[65536];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) return errno == EINTR || errno == EAGAIN;
    if (n == 0) return false;
    sandbox_stream_add(s, buf, (size_t)n);
    run_echo(echo_fd, buf, (size_t)n);
    *last_byte = run_now_ms();
    return true;
}

struct run_loop {
    int out_fd, err_fd;             /* read ends; -1 at EOF */
    int pidfd, sigfd;
    pid_t pid;
    int echo_out, echo_err;         /* live copies, -1: none */
    struct sandbox_limits lim;
};

static void run_kill(pid_t pid)
{
    /* PID 1 of its pid namespace: the kernel takes every member with it. */
    kill(pid, SIGKILL);
}

/* Drain until both pipes close and the init is reaped; enforce the clocks. */
static int run_wait(struct run_loop *lp, struct sandbox_result *r, uint64_t started)
{
    uint64_t last_byte = started;
    int status = 0;
    bool reaped = false, killed = false;
    uint64_t reaped_at = 0;
    while (!reaped || lp->out_fd >= 0 || lp->err_fd >= 0) {
        uint64_t now = run_now_ms();
        long timeout = -1;
        if (!killed && !reaped) {
            if (lp->lim.wall_ms && now - started >= lp->lim.wall_ms) {
                r->timed_out = killed = true;
                run_kill(lp->pid);
            } else if (lp->lim.idle_ms && now - last_byte >= lp->lim.idle_ms) {
                r->idle_timed_out = killed = true;
                run_kill(lp->pid);
            } else {
                if (lp->lim.wall_ms) timeout = (long)(started + lp->lim.wall_ms - now);
                if (lp->lim.idle_ms) {
                    long idle = (long)(last_byte + lp->lim.idle_ms - now);
                    if (timeout < 0 || idle < timeout) timeout = idle;
                }
            }
        }
        if (reaped) {
            /* Everyone in the namespace is dead: the pipes close at once.
             * Something outside it holding one must not hang brig. */
            if (now - reaped_at > 2000) break;
            timeout = (long)(reaped_at + 2000 - now);
        }
        struct pollfd pf[4] = {
            { .fd = lp->out_fd, .events = POLLIN }, { .fd = lp->err_fd, .events = POLLIN },
            { .fd = reaped ? -1 : lp->pidfd, .events = POLLIN }, { .fd = lp->sigfd, .events = POLLIN },
        };
        int n = poll(pf, 4, (int)timeout);
        if (n < 0 && errno != EINTR) return -1;
        if (n <= 0) continue;
        if (pf[0].revents && !run_drain(lp->out_fd, &r->out, &lp->echo_out, &last_byte)) {
            close(lp->out_fd);
            lp->out_fd = -1;
        }
        if (pf[1].revents && !run_drain(lp->err_fd, &r->err, &lp->echo_err, &last_byte)) {
            close(lp->err_fd);
            lp->err_fd = -1;
        }
        if (pf[3].revents) {
            struct signalfd_siginfo si;
            if (read(lp->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si) && si.ssi_signo != SIGCHLD && !reaped)
                kill(lp->pid, (int)si.ssi_signo);   /* brig-init forwards it to the command */
        }
        if (pf[2].revents && waitpid(lp->pid, &status, WNOHANG) == lp->pid) {
            reaped = true;
            reaped_at = run_now_ms();
            r->wall_ms = reaped_at - started;
        }
    }
    if (!reaped) {
        while (waitpid(lp->pid, &status, 0) < 0 && errno == EINTR) {}
        r->wall_ms = run_now_ms() - started;
    }
    if (WIFEXITED(status)) {
        int code = WEXITSTATUS(status);
        /* brig-init reports a command killed by signal N as 128+N. */
        if (code > 128 && code <= 128 + 64) r->signal = code - 128;
        else { r->has_exit_code = true; r->exit_code = code; }
    } else if (WIFSIGNALED(status)) {
        r->signal = WTERMSIG(status);
    }
    return 0;
}

/* What the container's cgroup can tell, read before the delete removes it. */
static void run_stats(const struct brig_cgroup *cg, struct sandbox_result *r)
{
    struct cgroup_stats cs = {0};
    if (cg == NULL || cgroup_stats_read(cg, &cs, NULL) < 0) return;
    if (cs.has_cpu) {
        r->has_cpu = true;
        r->cpu_user_ms = cs.cpu_user / 1000000;
        r->cpu_system_ms = cs.cpu_kernel / 1000000;
    }
    if (cs.has_memory && cs.mem_max > 0) {
        r->has_memory_peak = true;
        r->memory_peak_bytes = cs.mem_max;
    }
    if (cs.has_oom && cs.oom_kills > 0) r->oom_killed = true;
    cgroup_stats_clear(&cs);
}

/* One audit line per command under the policy's audit log: never argv in
 * full, env values or output. A failed write warns, it does not fail the run. */
static void run_audit(const struct brig_policy *p, const struct sandbox_opts *o, const struct sandbox_result *r)
{
    char hit[32] = "";
    snprintf(hit, sizeof(hit), "%s%s%s", r->timed_out ? "wall," : "", r->idle_timed_out ? "idle," : "",
             r->oom_killed ? "oom," : "");
    if (hit[0]) hit[strlen(hit) - 1] = '\0';
    struct policy_audit_event ev = {
        .op = "sandbox-run", .id = r->id, .decision = r->error ? "error" : NULL,
        .has_exit_status = true, .exit_status = sandbox_exit_status(r),
        .has_duration = true, .duration_ms = r->wall_ms,
        .has_memory_peak = r->has_memory_peak, .memory_peak = r->memory_peak_bytes,
        .argv0 = o->argv && o->argv[0] ? o->argv[0] : NULL, .limits_hit = hit[0] ? hit : NULL,
        .has_bytes = true, .stdout_bytes = r->out.bytes, .stderr_bytes = r->err.bytes,
    };
    autoerr struct brig_error *e = NULL;
    if (policy_audit(p, &ev, &e) < 0) brig_warn("sandbox %s: audit: %s", r->id, e->msg);
}

static int run_fail(struct sandbox_result *r, struct brig_error *e)
{
    free(r->error);
    r->error = brig_strdup(e ? e->msg : "unknown error");
    return 0;
}

/* After the launch: start, wait, stats, delete. */
static int run_started(struct launch *L, const struct sandbox_opts *o, const struct sandbox_limits *lim,
                       int pipes[2], int sigfd, struct sandbox_result *r, struct brig_error **err)
{
    uint64_t started = run_now_ms();
    int rc = sync_send(L->sync_fd, SYNC_START, NULL, err);
    if (rc == 0) rc = sync_wait_exec(L->sync_fd, err);
    brig_closep(&L->sync_fd);
    autoclose int pidfd = (int)syscall(SYS_pidfd_open, L->pid, 0);
    if (rc == 0 && pidfd < 0) rc = brig_fail(err, errno, "pidfd_open");
    if (rc < 0) {
        run_kill(L->pid);
        while (waitpid(L->pid, NULL, 0) < 0 && errno == EINTR) {}
        return -1;
    }
    r->ran = true;
    struct run_loop lp = { .out_fd = pipes[0], .err_fd = pipes[1], .pidfd = pidfd, .sigfd = sigfd,
                           .pid = L->pid, .echo_out = o->stream ? 1 : -1, .echo_err = o->stream ? 2 : -1,
                           .lim = *lim };
    pipes[0] = pipes[1] = -1;
    rc = run_wait(&lp, r, started);
    if (lp.out_fd >= 0) close(lp.out_fd);
    if (lp.err_fd >= 0) close(lp.err_fd);
    if (rc < 0) return brig_fail(err, errno, "wait for the sandbox");
    run_stats(L->cg, r);
    return 0;
}

int sandbox_run(const struct sandbox_opts *o, struct sandbox_result *r)
{
    autoerr struct brig_error *err = NULL;
    run_new_id(r->id, sizeof(r->id));
    const char *policy_flag = o->policy ? o->policy : "agent";
    autopolicy struct brig_policy *p = NULL;
    if (policy_load(policy_flag, &p, &err) < 0) {
        brig_wrap(&err, "--policy %s", policy_flag);
        return run_fail(r, err);
    }
    r->policy = brig_strdup(p->name);
    struct sandbox_limits lim;
    if (sandbox_limits(p, o, &lim, &err) < 0) return run_fail(r, err);
    sandbox_stream_init(&r->out, lim.output_max);
    sandbox_stream_init(&r->err, lim.output_max);
    autofree char *init = NULL;
    autofree char *config = NULL;
    if (sandbox_find_init(&init, &err) < 0 || sandbox_config(p, o, r->id, init, &config, &err) < 0)
        return run_fail(r, err);

    const char *state_root = o->state_root ? o->state_root : SANDBOX_STATE_ROOT;
    sandbox_reap_stale(state_root);
    if (sandbox_cgroup_parent(&err) < 0) return run_fail(r, err);
    autoclose int in_fd = run_open_stdin(o->stdin_path, &err);
    if (in_fd < 0) return run_fail(r, err);
    int out_p[2], err_p[2];
    if (pipe2(out_p, O_CLOEXEC) < 0) return run_fail(r, (brig_fail(&err, errno, "pipe"), err));
    if (pipe2(err_p, O_CLOEXEC) < 0) {
        close(out_p[0]);
        close(out_p[1]);
        return run_fail(r, (brig_fail(&err, errno, "pipe"), err));
    }
    int pipes[2] = { out_p[0], err_p[0] };
    fcntl(pipes[0], F_SETFL, O_NONBLOCK);
    fcntl(pipes[1], F_SETFL, O_NONBLOCK);

    /* Blocked before the clone (the init unblocks them); then read from a
     * signalfd and forwarded to the init. */
    sigset_t set, old;
    waiter_signals(&set);
    sigprocmask(SIG_BLOCK, &set, &old);
    autoclose int sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);

    const struct brig_globals g = { .root = state_root, .policy = policy_flag };
    const struct brig_create_opts co = { .id = r->id, .bundle = "/", .config_text = config };
    struct launch L;
    struct run_stdio sio;
    const int fds[3] = { in_fd, out_p[1], err_p[1] };
    int rc = sigfd < 0 ? brig_fail(&err, errno, "signalfd") : run_stdio_swap(&sio, fds, &err);
    if (rc == 0) {
        rc = launch_container(&L, &g, &co, true, &err);
        run_stdio_restore(&sio);
    } else if (sigfd >= 0) {
        run_stdio_restore(&sio);
    }
    close(out_p[1]);
    close(err_p[1]);
    if (rc == 0) {
        /* Only now, the init cloned with the default: a reader of brig's
         * output that goes away must not kill brig (and orphan the sandbox). */
        void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
        flock(L.dirfd, LOCK_UN);
        rc = run_started(&L, o, &lim, pipes, sigfd, r, &err);
        /* Whatever happened: what `delete --force` does, with what we hold. */
        struct brig_error *derr = NULL;
        if (launch_delete(&L, r->id, &derr) < 0) {
            if (rc == 0) {
                rc = -1;
                err = derr;
            } else {
                brig_warn("sandbox %s: %s", r->id, derr->msg);
                brig_error_free(derr);
            }
        }
        egress_stop(steal_ptr(&L.egress));     /* the egress proxy ends with the sandbox */
        launch_release(&L);
        signal(SIGPIPE, old_pipe);
    }
    for (int i = 0; i < 2; i++)
        if (pipes[i] >= 0) close(pipes[i]);
    /* A signal that came while the sandbox was being removed was for it:
     * taken here, it cannot kill brig before the result is printed. */
    struct signalfd_siginfo si;
    while (sigfd >= 0 && read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {}
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (rc < 0) run_fail(r, err);
    run_audit(p, o, r);
    return 0;
}
