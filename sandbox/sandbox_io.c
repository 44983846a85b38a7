/* The command's side of a sandbox, shared by `sandbox run` (the command is
 * PID 1's) and `sandbox exec` (a process joined to a long-lived sandbox):
 * its stdin, the two output pipes drained while the wall and idle clocks
 * run, the signals forwarded to it, the stats of its cgroup and the audit
 * line. How a command is killed is the caller's (a pid namespace's init for
 * run, an exec's own cgroup for exec): sandbox_io_wait calls it back. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "init_report.h"
#include "sandbox.h"
#include "../policy/policy.h"
#include "../runtime/lifecycle/waiter.h"
#include "../runtime/linux/cgroup/cgroup.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

uint64_t sandbox_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void sandbox_new_id(const char *prefix, char *id, size_t len)
{
    unsigned char b[6] = {0};
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
        uint64_t t = sandbox_now_ms() ^ (uint64_t)getpid() << 20;
        memcpy(b, &t, sizeof(b));
    }
    snprintf(id, len, "%s%02x%02x%02x%02x%02x%02x", prefix, b[0], b[1], b[2], b[3], b[4], b[5]);
}

/* A terminal is never handed in: with it the command could push input
 * into the caller's shell (TIOCSTI) or read what is typed there. */
static int io_open_stdin(const char *path, struct brig_error **err)
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
    /* A directory (or an O_PATH fd) is a place to look names up from, with
     * the command's credentials and outside its root: openat(0, "etc/..."),
     * /proc/self/fd/0/... */
    struct stat st;
    int fl = fcntl(fd, F_GETFL);
    if (fstat(fd, &st) < 0 || fl < 0) return brig_fail(err, errno, "--stdin %s", p);
    if (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode) || (fl & O_PATH))
        return brig_failx(err, "--stdin %s: a directory or an O_PATH fd; a sandbox never gets one "
                          "(the command could open host files through it)", p);
    return steal_fd(&fd);
}

int sandbox_io_open(struct sandbox_io *io, const char *stdin_path, struct brig_error **err)
{
    *io = (struct sandbox_io){ .in = -1, .out = { -1, -1 }, .err = { -1, -1 }, .sigfd = -1,
                               .saved = { -1, -1, -1 } };
    io->in = io_open_stdin(stdin_path, err);
    if (io->in < 0) return -1;
    if (pipe2(io->out, O_CLOEXEC) < 0 || pipe2(io->err, O_CLOEXEC) < 0)
        return brig_fail(err, errno, "pipe");
    fcntl(io->out[0], F_SETFL, O_NONBLOCK);
    fcntl(io->err[0], F_SETFL, O_NONBLOCK);
    /* Blocked before the clone (the new process unblocks them); then read
     * from a signalfd and forwarded to the command. */
    sigset_t set;
    waiter_signals(&set);
    sigprocmask(SIG_BLOCK, &set, &io->old_mask);
    io->masked = true;
    io->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (io->sigfd < 0) return brig_fail(err, errno, "signalfd");
    return 0;
}

/* The process made next inherits brig's fds 0-2: for the time of the
 * launch they are the command's stdin and the pipes. */
int sandbox_io_swap(struct sandbox_io *io, struct brig_error **err)
{
    const int fds[3] = { io->in, io->out[1], io->err[1] };
    for (int i = 0; i < 3; i++) io->saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 3);
    for (int i = 0; i < 3; i++)
        if (fds[i] != i && dup2(fds[i], i) < 0) return brig_fail(err, errno, "dup2 fd %d", i);
    return 0;
}

void sandbox_io_restore(struct sandbox_io *io)
{
    for (int i = 0; i < 3; i++) {
        if (io->saved[i] >= 0) {
            dup2(io->saved[i], i);
            close(io->saved[i]);
        } else {
            close(i);
        }
        io->saved[i] = -1;
    }
    /* Only the command holds the write ends now: EOF when it is gone. */
    brig_closep(&io->out[1]);
    brig_closep(&io->err[1]);
    brig_closep(&io->in);
}

void sandbox_io_close(struct sandbox_io *io)
{
    brig_closep(&io->in);
    for (int i = 0; i < 2; i++) {
        brig_closep(&io->out[i]);
        brig_closep(&io->err[i]);
    }
    /* A signal that came while the sandbox was being removed was for it:
     * taken here, it cannot kill brig before the result is printed. */
    struct signalfd_siginfo si;
    while (io->sigfd >= 0 && read(io->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {}
    brig_closep(&io->sigfd);
    if (io->masked) sigprocmask(SIG_SETMASK, &io->old_mask, NULL);
    io->masked = false;
}

struct io_loop {
    int fd[2];                      /* stdout, stderr read ends; -1 at EOF */
    int pidfd, sigfd;
    pid_t pid;
    int echo[2];                    /* live copies, -1: none */
    int echo_last[2];               /* the last byte copied to each, -1: none */
    int echo_last_any;              /* and to either */
    struct sandbox_events *events;
    bool init_reports;
    const struct sandbox_kill *kill;
    struct sandbox_limits lim;
    uint64_t started, last_byte;
    struct policy_watch *watch;     /* forked when due, or NULL */
    bool echo_pipe[2];              /* that copy's reader is a pipe (io_write_until) */
    bool done;                      /* the command reaped or killed: no watcher forked */
    bool watch_failed;              /* its watcher could not start: the command killed */
};

/* A write to a live copy's reader that is not a pipe (a terminal held
 * with ^S or a pty nobody reads, a socket with a small buffer) may block
 * though it polled writable: SIGALRM (no SA_RESTART) interrupts it at
 * `until`, the first of the copy's clocks. */
static void io_alarm_noop(int sig)
{
    (void)sig;
}

static ssize_t io_write_until(int fd, bool pipe, const char *buf, size_t n, uint64_t until)
{
    if (pipe) return write(fd, buf, n);     /* polled writable: takes PIPE_BUF at once */
    uint64_t now = sandbox_now_ms();
    if (until <= now) until = now + 1;
    struct sigaction sa = { .sa_handler = io_alarm_noop }, old;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, &old);
    /* a mask brig inherited blocking it would keep the write waiting */
    sigset_t alrm, mask;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    sigprocmask(SIG_UNBLOCK, &alrm, &mask);
    struct itimerval it = { .it_value = { .tv_sec = (time_t)((until - now) / 1000),
                                          .tv_usec = (suseconds_t)((until - now) % 1000 * 1000) },
                            /* again: one that fired just before the write */
                            .it_interval = { .tv_usec = 10000 } }, off = {0};
    setitimer(ITIMER_REAL, &it, NULL);
    ssize_t w = write(fd, buf, n);
    int e = errno;
    setitimer(ITIMER_REAL, &off, NULL);
    sigprocmask(SIG_SETMASK, &mask, NULL);
    sigaction(SIGALRM, &old, NULL);
    errno = e;
    return w;
}

/* The workspace's watcher, once the command outlives its first look (or
 * now, `at_once`, while one is still to come): a watcher that cannot start
 * stops the command (never unwatched), and the result says why. */
static int io_watch_due(struct io_loop *lp, bool at_once, struct sandbox_result *r)
{
    long due = lp->done ? -1 : policy_watch_due(lp->watch);
    if (due < 0 || (due > 0 && !at_once)) return 0;
    autoerr struct brig_error *e = NULL;
    if (policy_watch_spawn(lp->watch, &e) == 0) return 0;
    free(r->error);
    r->error = brig_asprintf("%s: the sandbox is stopped", e->msg);
    lp->kill->fn(lp->kill->arg);
    lp->done = lp->watch_failed = true;
    return -1;
}

/* A live copy of what the command wrote to brig's own stdout/stderr: a
 * reader that takes it slowly holds the copy until the command's wall
 * limit at most (then the copy stops, and the limit is kept), and one that
 * takes nothing for a second (a full pipe nobody reads) or goes away ends
 * it, never the clocks: the loop keeps draining and timing the command.
 * The workspace's watcher is forked before the first byte is
 * copied: a write to the caller's output may block where nothing
 * interrupts it (a frozen filesystem, a pipe another writer holds), and
 * the bound must not wait for it (a review). */
static void io_echo(struct io_loop *lp, int i, const char *buf, size_t n, struct sandbox_result *r)
{
    int *fd = &lp->echo[i];
    if (*fd >= 0) io_watch_due(lp, true, r);
    uint64_t deadline = lp->lim.wall_ms ? lp->started + lp->lim.wall_ms : 0;
    uint64_t stalled = sandbox_now_ms() + 1000;
    while (*fd >= 0 && n > 0) {
        uint64_t now = sandbox_now_ms();
        if ((deadline != 0 && now >= deadline) || now >= stalled) {
            *fd = -1;
            return;
        }
        uint64_t until = deadline != 0 && deadline < stalled ? deadline : stalled;
        struct pollfd pf = { .fd = *fd, .events = POLLOUT };
        int pr = poll(&pf, 1, (int)(until - now));
        if (pr <= 0) continue;      /* interrupted, or the clocks: seen above */
        if (pf.revents & (POLLERR | POLLHUP | POLLNVAL)) {
            *fd = -1;
            return;
        }
        /* at most PIPE_BUF at a time: a pipe that polled writable takes it
         * without blocking */
        size_t chunk = n > PIPE_BUF ? PIPE_BUF : n;
        ssize_t w = io_write_until(*fd, lp->echo_pipe[i], buf, chunk, until);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            *fd = -1;
            return;
        }
        buf += w;
        n -= (size_t)w;
        stalled = sandbox_now_ms() + 1000;
    }
}

/* One read from a stream pipe; false at EOF. */
static bool io_drain(struct io_loop *lp, int i, struct sandbox_stream *s, struct sandbox_result *r)
{
    static char buf[65536];
    ssize_t n = read(lp->fd[i], buf, sizeof(buf));
    if (n < 0) return errno == EINTR || errno == EAGAIN;
    uint64_t now = sandbox_now_ms();
    if (n == 0) {
        if (lp->events) sandbox_events_eof(lp->events, i, now);
        return false;
    }
    bool was_whole = s->bytes <= (uint64_t)s->head_cap + s->tail_cap;
    sandbox_stream_add(s, buf, (size_t)n);
    io_echo(lp, i, buf, (size_t)n, r);
    if (lp->echo[i] >= 0) lp->echo_last[i] = lp->echo_last_any = (unsigned char)buf[n - 1];
    if (lp->events) {
        if (was_whole && s->bytes > (uint64_t)s->head_cap + s->tail_cap)
            sandbox_events_limit(lp->events, "output", i, now);
        sandbox_events_output(lp->events, i, buf, (size_t)n, now);
    }
    lp->last_byte = now;
    return true;
}

static void io_status(int status, struct sandbox_result *r)
{
    if (WIFEXITED(status)) {
        int code = WEXITSTATUS(status);
        /* brig-init reports a command killed by signal N as 128+N; a shell
         * does the same for an exec'd `sh -c`: read alike. */
        if (code > 128 && code <= 128 + 64) r->signal = code - 128;
        else { r->has_exit_code = true; r->exit_code = code; }
    } else if (WIFSIGNALED(status)) {
        r->signal = WTERMSIG(status);
    }
}

/* pid has exited and is not reaped yet: if it is brig-init saying its
 * command's execve failed (init_report.h), the errno; else 0. */
static int io_init_report(pid_t pid)
{
    siginfo_t si = {0};
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid != pid ||
        si.si_code != CLD_EXITED || (si.si_status != 126 && si.si_status != 127))
        return 0;
    char path[64], comm[32] = "";
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    autoclose int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, comm, sizeof(comm) - 1) : -1;
    if (n <= 0) return 0;
    comm[n] = '\0';
    size_t m = strlen(INIT_EXEC_FAILED_COMM);
    if (strncmp(comm, INIT_EXEC_FAILED_COMM, m) != 0) return 0;
    int e = atoi(comm + m);
    return e > 0 ? e : 0;
}

static void io_reaped(struct sandbox_result *r, int init_errno, int status)
{
    io_status(status, r);
    if (init_errno == 0 || !r->has_exit_code || (r->exit_code != 126 && r->exit_code != 127)) return;
    r->exec_status = r->exit_code;
    r->exec_errno = init_errno;
    r->ran = false;
}

/* Drain until both pipes close and the command is reaped; enforce the clocks. */
static int io_loop_run(struct io_loop *lp, struct sandbox_result *r)
{
    const uint64_t started = lp->started;
    int status = 0, init_errno = 0;
    bool reaped = false, killed = false;
    uint64_t reaped_at = 0;
    lp->last_byte = started;
    while (!reaped || lp->fd[0] >= 0 || lp->fd[1] >= 0) {
        uint64_t now = sandbox_now_ms();
        long timeout = -1;
        killed = killed || lp->watch_failed;    /* while a copy was held (io_echo) */
        if (!killed && !reaped) {
            if (lp->lim.wall_ms && now - started >= lp->lim.wall_ms) {
                r->timed_out = killed = true;
                lp->kill->fn(lp->kill->arg);
                if (lp->events) sandbox_events_limit(lp->events, "wall", -1, now);
            } else if (lp->lim.idle_ms && now - lp->last_byte >= lp->lim.idle_ms) {
                r->idle_timed_out = killed = true;
                lp->kill->fn(lp->kill->arg);
                if (lp->events) sandbox_events_limit(lp->events, "idle", -1, now);
            } else if (io_watch_due(lp, false, r) < 0) {
                killed = true;
            } else {
                if (lp->lim.wall_ms) timeout = (long)(started + lp->lim.wall_ms - now);
                if (lp->lim.idle_ms) {
                    long idle = (long)(lp->last_byte + lp->lim.idle_ms - now);
                    if (timeout < 0 || idle < timeout) timeout = idle;
                }
                long due = policy_watch_due(lp->watch);
                if (due >= 0 && (timeout < 0 || due < timeout)) timeout = due;
            }
        }
        if (reaped) {
            /* Everyone of the command is dead: the pipes close at once.
             * Something outside it holding one must not hang brig. */
            if (now - reaped_at > 2000) break;
            timeout = (long)(reaped_at + 2000 - now);
        }
        struct pollfd pf[5] = {
            { .fd = lp->fd[0], .events = POLLIN }, { .fd = lp->fd[1], .events = POLLIN },
            { .fd = reaped ? -1 : lp->pidfd, .events = POLLIN }, { .fd = lp->sigfd, .events = POLLIN },
            { .fd = lp->events ? sandbox_events_pollfd(lp->events) : -1, .events = POLLOUT },
        };
        lp->done = killed || reaped;
        int n = poll(pf, 5, (int)timeout);
        if (n < 0 && errno != EINTR) return -1;
        if (n <= 0) continue;
        for (int i = 0; i < 2; i++)
            if (pf[i].revents && !io_drain(lp, i, i == 0 ? &r->out : &r->err, r)) brig_closep(&lp->fd[i]);
        if (pf[3].revents) {
            struct signalfd_siginfo si;
            if (read(lp->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si) && si.ssi_signo != SIGCHLD && !reaped)
                kill(lp->pid, (int)si.ssi_signo);   /* brig-init forwards it to the command */
        }
        if (pf[4].revents) sandbox_events_write(lp->events);
        if (pf[2].revents) {
            /* read before the reap: the name goes with the process */
            int e = lp->init_reports ? io_init_report(lp->pid) : 0;
            if (waitpid(lp->pid, &status, WNOHANG) == lp->pid) {
                reaped = true;
                init_errno = e;
                reaped_at = sandbox_now_ms();
                r->wall_ms = reaped_at - started;
                /* What the command left behind goes with it (and lets go of
                 * the pipes). */
                if (lp->kill->at_exit) lp->kill->fn(lp->kill->arg);
            }
        }
    }
    if (!reaped) {
        while (waitpid(lp->pid, &status, 0) < 0 && errno == EINTR) {}
        r->wall_ms = sandbox_now_ms() - started;
    }
    io_reaped(r, init_errno, status);
    return 0;
}

/* Does the summary on stderr start mid-line? stderr's own last byte, or,
 * when stdout is the same file (a terminal, 2>&1), the last of both. */
static bool io_mid_line(const struct io_loop *lp)
{
    struct stat a, b;
    bool same = fstat(1, &a) == 0 && fstat(2, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    int last = same ? lp->echo_last_any : lp->echo_last[1];
    return last >= 0 && last != '\n';
}

int sandbox_io_wait(struct sandbox_io *io, pid_t pid, const struct sandbox_kill *k, const struct sandbox_limits *lim,
                    const struct sandbox_live *live, uint64_t started, struct sandbox_result *r,
                    struct brig_error **err)
{
    autoclose int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) {
        int e = errno;
        k->fn(k->arg);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        return brig_fail(err, e, "pidfd_open");
    }
    r->ran = true;
    struct io_loop lp = { .fd = { io->out[0], io->err[0] }, .pidfd = pidfd, .sigfd = io->sigfd, .pid = pid,
                          .echo = { live->echo ? 1 : -1, live->echo ? 2 : -1 },
                          .echo_last = { -1, -1 }, .echo_last_any = -1,
                          .events = live->events, .init_reports = live->init_reports, .kill = k, .lim = *lim,
                          .started = started, .watch = live->watch };
    io->out[0] = io->err[0] = -1;
    if (lp.events) sandbox_events_start(lp.events, r, started, lim->output_max);
    for (int i = 0; i < 2; i++) {
        struct stat st;
        lp.echo_pipe[i] = lp.echo[i] >= 0 && fstat(lp.echo[i], &st) == 0 && S_ISFIFO(st.st_mode);
    }
    int rc = io_loop_run(&lp, r);
    brig_closep(&lp.fd[0]);
    brig_closep(&lp.fd[1]);
    if (rc < 0) return brig_fail(err, errno, "wait for the sandbox");
    if (live->echo) r->echo_mid_line = io_mid_line(&lp);
    return 0;
}

void sandbox_not_run(struct sandbox_result *r, const char *argv0, bool echo)
{
    if (r->exec_status == 0) return;
    const char *cmd = argv0 ? argv0 : "";
    if (r->error == NULL) {
        /* brig-init's report: its message is on the command's stderr */
        r->error = brig_asprintf("%s: %s (reported by brig-init: the command never ran)", cmd,
                                 strerrordesc_np(r->exec_errno) ? strerrordesc_np(r->exec_errno) : "exec failed");
        return;
    }
    if (r->ran || r->err.head_cap == 0) return;
    /* found (or not) by brig itself: what a shell would say */
    autofree char *line = brig_asprintf("brig sandbox: %s: %s\n", cmd,
                                        r->exec_status == 127 ? "not found" : "Permission denied");
    sandbox_stream_add(&r->err, line, strlen(line));
    if (echo) {
        struct io_loop lp = { .echo = { -1, 2 }, .done = true };    /* no clock, no watcher */
        io_echo(&lp, 1, line, strlen(line), r);
    }
}

void sandbox_stats(const struct brig_cgroup *cg, struct sandbox_result *r)
{
    struct cgroup_stats cs = {0};
    if (cg == NULL) return;
    cgroup_stats_brief(cg, &cs);
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
    if (cs.has_pids_peak) {
        r->has_pids_peak = true;
        r->pids_peak = cs.pids_peak;
    }
    cgroup_stats_clear(&cs);
}

void sandbox_audit(const struct brig_policy *p, const char *op, const char *id, const char *argv0,
                   const struct sandbox_result *r)
{
    char hit[48] = "";
    snprintf(hit, sizeof(hit), "%s%s%s%s", r->timed_out ? "wall," : "", r->idle_timed_out ? "idle," : "",
             r->oom_killed ? "oom," : "", r->workspace_full ? "workspace," : "");
    if (hit[0]) hit[strlen(hit) - 1] = '\0';
    struct policy_audit_event ev = {
        .op = op, .id = id, .decision = r->error ? "error" : NULL,
        .has_exit_status = true, .exit_status = sandbox_exit_status(r),
        .has_duration = true, .duration_ms = r->wall_ms,
        .has_memory_peak = r->has_memory_peak, .memory_peak = r->memory_peak_bytes,
        .argv0 = argv0, .limits_hit = hit[0] ? hit : NULL,
        .has_bytes = true, .stdout_bytes = r->out.bytes, .stderr_bytes = r->err.bytes,
    };
    autoerr struct brig_error *e = NULL;
    if (policy_audit(p, &ev, &e) < 0) brig_warn("sandbox %s: audit: %s", id, e->msg);
}

int sandbox_fail(struct sandbox_result *r, struct brig_error *e)
{
    free(r->error);
    r->error = brig_strdup(e ? e->msg : "unknown error");
    r->exec_status = e ? e->exec_status : 0;
    return 0;
}
