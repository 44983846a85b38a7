/* Helpers for the process-security unit tests: run a step in a forked
 * child (it may load seccomp, drop caps, change uid...) and look at what it
 * saw from the parent, where Criterion's asserts run. */
#ifndef BRIG_TEST_SEC_CHILD_H
#define BRIG_TEST_SEC_CHILD_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct sec_child {
    int status;         /* waitpid status */
    char out[8192];     /* what the child wrote to its fd */
};

/* fn runs in the child with an fd to write its findings to; its return
 * value is the child's exit status. */
typedef int (*sec_child_fn)(void *arg, int outfd);

static inline int sec_child_run(sec_child_fn fn, void *arg, struct sec_child *r)
{
    int p[2];
    memset(r, 0, sizeof(*r));
    if (pipe2(p, O_CLOEXEC) < 0) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(p[0]);
        /* The raw exit, not _exit(): in a sanitizer build ASan runs its own
         * code before every noreturn call (sigaltstack), which the filter
         * the child loaded may deny. */
        syscall(SYS_exit_group, fn(arg, p[1]));
        __builtin_unreachable();
    }
    close(p[1]);
    size_t n = 0;
    for (;;) {
        ssize_t k = read(p[0], r->out + n, sizeof(r->out) - 1 - n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        n += (size_t)k;
    }
    close(p[0]);
    while (waitpid(pid, &r->status, 0) < 0 && errno == EINTR) {}
    return 0;
}

/* printf into the child's fd (no stdio buffers shared with the parent). */
__attribute__((format(printf, 2, 3)))
static inline void sec_out(int fd, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n > 0) {
        ssize_t w = write(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
        (void)w;
    }
}

static inline int sec_exit_code(const struct sec_child *r)
{
    return WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
}

static inline int sec_signal(const struct sec_child *r)
{
    return WIFSIGNALED(r->status) ? WTERMSIG(r->status) : 0;
}

#endif
