/* OCI hooks (config.md "POSIX-platform Hooks", runtime.md "Lifecycle"):
 * each hook is executed with its path, args and env, the state of the
 * container as JSON on stdin, and is killed once its timeout expires, with
 * every process it started (its own process group). Without a timeout a
 * hook may run as long as it likes, as in runc and crun: the spec sets no
 * default, and the engine that runs brig has its own. */
#include "hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/strutil.h"

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

/* Largest state we hand over: the pipe is filled before the hook starts. */
#define HOOK_STDIN_MAX (1u << 20)

static int hook_pidfd_open(pid_t pid)
{
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* A pipe already holding the whole state JSON, write end closed: the hook
 * reads it at its own pace and brig never blocks on it nor gets SIGPIPE
 * when a hook ignores its stdin. */
static int hook_stdin_pipe(const char *json, int *out, struct brig_error **err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) return brig_fail(err, errno, "pipe");
    autoclose int rd = p[0];
    autoclose int wr = p[1];
    size_t len = strlen(json);
    if (len > HOOK_STDIN_MAX) return brig_failx(err, "state JSON too large for a hook (%zu bytes)", len);
    if (len >= 65536 && fcntl(wr, F_SETPIPE_SZ, (int)len + 1) < 0)
        return brig_fail(err, errno, "grow hook stdin pipe to %zu bytes", len);
    while (len > 0) {
        ssize_t w = write(wr, json, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            return brig_fail(err, errno, "write state to hook stdin");
        }
        json += w;
        len -= (size_t)w;
    }
    *out = steal_fd(&rd);
    return 0;
}

/* In the forked child: only async-signal-safe calls until execve. */
static __attribute__((noreturn)) void hook_child(const struct brig_hook *h, char *const *argv,
                                                  char *const *envp, int in_fd, int errpipe,
                                                  pid_t brig)
{
    /* brig enforces the hook's timeout: a brig killed meanwhile must not
     * leave a hanging hook behind with nobody to end it. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != brig) goto fail;
    /* A group of its own, so that a timeout ends what the hook started too
     * (`sh -c 'helper; ...'`): such a child would hold brig's stderr open
     * and the caller reading it would wait for it. */
    if (setpgid(0, 0) < 0) goto fail;
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    /* Ignored signals stay ignored across execve; a hook gets defaults. */
    for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);

    /* Move both fds out of the way first: either may be 0..3 when brig
     * was started with closed standard fds. */
    in_fd = fcntl(in_fd, F_DUPFD_CLOEXEC, 10);
    errpipe = fcntl(errpipe, F_DUPFD_CLOEXEC, 10);
    if (in_fd < 0 || errpipe < 0) goto fail;
    if (dup2(in_fd, 0) < 0) goto fail;
    if (dup2(2, 1) < 0) goto fail;       /* hook output goes to brig's stderr */
    if (dup2(errpipe, 3) < 0) goto fail;
    errpipe = 3;
    if (fcntl(3, F_SETFD, FD_CLOEXEC) < 0) goto fail;
    /* Nothing of brig's (state dir lock, sync sockets, log file) leaks into
     * the hook; fd 3 is the close-on-exec error pipe. */
    if (syscall(SYS_close_range, 4U, ~0U, 0U) < 0) {
        for (int fd = 4; fd < 1024; fd++) close(fd);
    }
    execve(h->path, argv, envp);
fail:;
    int e = errno;
    ssize_t r = write(errpipe, &e, sizeof(e));
    (void)r;
    _exit(127);
}

/* Wait for the hook's exit, SIGKILLing it and its process group once
 * timeout_s (0 = none) passes. The hook is not reaped yet, so its pid is
 * still its group's id and names no other group. */
static int hook_wait(pid_t pid, int pidfd, int timeout_s, int *status, bool *timed_out)
{
    *timed_out = false;
    if (timeout_s > 0) {
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        for (;;) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            long long elapsed = (now.tv_sec - start.tv_sec) * 1000LL +
                                (now.tv_nsec - start.tv_nsec) / 1000000;
            long long left = timeout_s * 1000LL - elapsed;
            if (left <= 0) {
                *timed_out = true;
                syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
                kill(-pid, SIGKILL);
                break;
            }
            struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
            int r = poll(&pfd, 1, (int)left);
            if (r > 0) break;
            if (r < 0 && errno != EINTR) return -1;
        }
    }
    while (waitpid(pid, status, 0) < 0) {
        if (errno != EINTR) return -1;
    }
    return 0;
}

static int hook_run_one(const struct brig_hook *h, const char *kind, size_t idx,
                        const char *state_json, char *const *default_env, struct brig_error **err)
{
    char *default_argv[] = { h->path, NULL };
    char *const *argv = h->n_args > 0 ? h->args : default_argv;
    char *const *envp = h->env != NULL ? h->env : default_env;

    autoclose int in_fd = -1;
    TRY(hook_stdin_pipe(state_json, &in_fd, err));
    int ep[2];
    if (pipe2(ep, O_CLOEXEC) < 0) return brig_fail(err, errno, "pipe");
    autoclose int ep_rd = ep[0];
    autoclose int ep_wr = ep[1];

    brig_debug("running hook %s[%zu]: %s", kind, idx, h->path);
    pid_t self = getpid();
    pid_t pid = fork();
    if (pid < 0) return brig_fail(err, errno, "fork");
    if (pid == 0) hook_child(h, argv, envp, in_fd, ep_wr, self);
    setpgid(pid, pid);      /* also here: a timeout may come before the child's own call */
    close(ep_wr);
    ep_wr = -1;

    /* Only a timeout needs the pidfd: a startContainer hook runs under the
     * container's seccomp filter, which may deny pidfd_open. */
    int timeout = h->has_timeout ? h->timeout : 0;
    autoclose int pidfd = timeout > 0 ? hook_pidfd_open(pid) : -1;
    if (timeout > 0 && pidfd < 0) {
        int e = errno;
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
        return brig_fail(err, e, "pidfd_open");
    }

    int status = 0;
    bool timed_out = false;
    if (hook_wait(pid, pidfd, timeout, &status, &timed_out) < 0)
        return brig_fail(err, errno, "wait for hook");

    int exec_errno = 0;
    ssize_t r;
    do {
        r = read(ep_rd, &exec_errno, sizeof(exec_errno));
    } while (r < 0 && errno == EINTR);
    if (r == (ssize_t)sizeof(exec_errno)) return brig_fail(err, exec_errno, "exec");
    if (timed_out) return brig_failx(err, "timed out after %ds (killed, with what it started)", h->timeout);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        return brig_failx(err, "exited with status %d", WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return brig_failx(err, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    brig_debug("hook %s[%zu] succeeded", kind, idx);
    return 0;
}

/* A hook without env gets the environment of whoever runs it, as runc
 * and crun pass theirs: brig's own on the runtime's side; for a
 * startContainer hook, an image's program run as the process, the
 * process's (runc's init holds process.env by then). */
static char *const *hook_default_env(const struct brig_spec *s, enum brig_hook_kind kind)
{
    static char *empty[] = { NULL };
    if (kind == BRIG_HOOK_START_CONTAINER) return s->process.env != NULL ? s->process.env : empty;
    return environ != NULL ? environ : empty;
}

static int hooks_each(const struct brig_spec *s, enum brig_hook_kind kind, const char *state_json,
                      const char *warn_ctx, struct brig_error **err)
{
    if (kind < 0 || kind >= BRIG_HOOK_KIND_COUNT) return brig_failx(err, "hooks: bad kind %d", (int)kind);
    const struct brig_hook_list *l = &s->hooks[kind];
    const char *name = spec_hook_name(kind);
    for (size_t i = 0; i < l->n; i++) {
        if (hook_run_one(&l->hooks[i], name, i, state_json ? state_json : "{}",
                         hook_default_env(s, kind), err) == 0)
            continue;
        brig_wrap(err, "hooks.%s[%zu] (%s)", name, i, l->hooks[i].path);
        if (warn_ctx == NULL) return -1;
        brig_warn("%s: %s", warn_ctx, (*err)->msg);
        brig_error_freep(err);
    }
    return 0;
}

int hooks_run(const struct brig_spec *s, enum brig_hook_kind kind, const char *state_json,
              struct brig_error **err)
{
    return hooks_each(s, kind, state_json, NULL, err);
}

void hooks_run_warn(const struct brig_spec *s, enum brig_hook_kind kind, const char *state_json,
                    const char *ctx)
{
    autoerr struct brig_error *e = NULL;
    if (hooks_each(s, kind, state_json, ctx, &e) < 0) brig_warn("%s: %s", ctx, e->msg);
}

bool hooks_any(const struct brig_spec *s, enum brig_hook_kind first, enum brig_hook_kind last)
{
    for (int k = (int)first; k <= (int)last && k < BRIG_HOOK_KIND_COUNT; k++)
        if (s->hooks[k].n > 0) return true;
    return false;
}
