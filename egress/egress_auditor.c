/* The proxy, confined (egress_sandbox.c), can no longer open, create or
 * rotate the policy's audit log. Before it drops its privileges it forks
 * this writer, which keeps them and does one thing: each message the proxy
 * sends on a socketpair becomes one line of audit.path (policy_audit_write:
 * O_APPEND, rotated by size). The proxy never holds a writable fd of a
 * file. The writer ends when the proxy's end closes (the proxy exited, or
 * was killed), after the lines already sent. */
#include "egress_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../policy/policy.h"
#include "../runtime/util/cleanup.h"

#define AUDITOR_LINE_MAX 8192

static __attribute__((noreturn)) void auditor_main(const struct brig_policy *p, int fd)
{
    prctl(PR_SET_NAME, "brig-egress-log", 0, 0, 0);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    /* Not the caller's stderr: an engine waits for its EOF after create. */
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0 || dup2(null, 2) < 0 || dup2(fd, 3) < 0) _exit(1);
    syscall(SYS_close_range, 4u, ~0u, 0);
    static char line[AUDITOR_LINE_MAX + 1];
    for (;;) {
        ssize_t n = recv(3, line, AUDITOR_LINE_MAX, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) _exit(0);
        line[n] = '\0';
        /* One line a message: a message with a newline in it is not one
         * (a confused or compromised proxy). */
        if (strchr(line, '\n') != NULL) continue;
        autoerr struct brig_error *err = NULL;
        if (policy_audit_write(p, line, &err) < 0) fprintf(stderr, "brig: egress: audit: %s\n", err->msg);
    }
}

pid_t egress_fork_peer(const char *what, int sv[2], char *why, size_t len)
{
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return snprintf(why, len, "%s: socketpair: %s", what, strerror(errno)), -1;
    pid_t child = fork();
    if (child < 0) {
        close(sv[0]);
        close(sv[1]);
        return snprintf(why, len, "%s: fork: %s", what, strerror(errno)), -1;
    }
    if (child == 0) close(sv[0]);
    else close(sv[1]);
    return child;
}

int egress_auditor_start(const struct brig_policy *p, pid_t *pid, int *fd, char *why, size_t len)
{
    *pid = -1;
    *fd = -1;
    if (p->audit.path == NULL) return 0;
    int sv[2];
    pid_t child = egress_fork_peer("audit writer", sv, why, len);
    if (child < 0) return -1;
    if (child == 0) auditor_main(p, sv[1]);
    *pid = child;
    *fd = sv[0];
    return 0;
}

void egress_auditor_send(int fd, const char *line)
{
    (void)!send(fd, line, strlen(line), MSG_NOSIGNAL);
}

void egress_auditor_finish(pid_t pid, int fd)
{
    if (pid < 0) return;
    close(fd);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}
