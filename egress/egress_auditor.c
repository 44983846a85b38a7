/* The proxy, confined (egress_sandbox.c), can no longer open, create or
 * rotate the policy's audit log. Before it drops its privileges it forks
 * this writer, which keeps them and does one thing: each message the proxy
 * sends on a socketpair becomes one line of audit.path (policy_audit_write:
 * O_APPEND, rotated by size). The proxy never holds a writable fd of a
 * file. The writer ends when the proxy's end closes (the proxy exited, or
 * was killed), after the lines already sent.
 *
 * The log is shared by every sandbox (and brig's own lines), and rotation
 * keeps one older file: a sandbox that could write without bound (12,000
 * connections over maxConnections are 12,000 "deny" lines in a second)
 * would push every other sandbox's lines out of it. So the writer, one per
 * sandbox, holds each sandbox to its share (docs/egress.md, "Answers and
 * audit"):
 *   - refusals (deny, error) come at most AUDITOR_BURST at once, then
 *     AUDITOR_PER_S a second (a token bucket);
 *   - all its lines together are at most audit.maxSize / AUDITOR_SHARE
 *     bytes: the log must take at least maxSize bytes more to lose a line
 *     (rotation, then the next one), which one sandbox can never write;
 *   - what is not written is counted, by decision, and written as one
 *     "folded" line: at most once a minute while it lasts (within the
 *     share), and when the sandbox ends.
 * A message is "A", "D" or "E" (allow, deny, error) and the line; the
 * proxy could lie about the first byte, a compromised proxy about
 * anything: the share bounds what any of it costs the log. */
#include "egress_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../policy/policy.h"
#include "../runtime/config/json.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

#define AUDITOR_LINE_MAX 8192
#define AUDITOR_BURST 64
#define AUDITOR_PER_S 4
#define AUDITOR_SHARE 8
#define AUDITOR_FOLD_S 60

struct auditor {
    const struct brig_policy *p;
    const char *id;
    pid_t proxy;
    uint64_t share, written;        /* bytes */
    uint64_t tokens_ms;             /* the bucket, in ms of refill (1000 / AUDITOR_PER_S a line) */
    uint64_t refilled_at, folded_at;
    uint64_t folded[3];             /* allow, deny, error */
    bool over_share;
};

static const char *const auditor_names[3] = { "allow", "deny", "error" };

static void auditor_write(struct auditor *a, const char *line)
{
    autoerr struct brig_error *err = NULL;
    if (policy_audit_write(a->p, line, &err) < 0) fprintf(stderr, "brig: egress: audit: %s\n", err->msg);
    a->written += strlen(line) + 1;
}

/* The counts of what was not written, as one line. */
static void auditor_fold(struct auditor *a, bool last)
{
    uint64_t now = egress_now_ms();
    if (a->folded[0] + a->folded[1] + a->folded[2] == 0) return;
    if (!last && (now - a->folded_at < AUDITOR_FOLD_S * 1000ull || a->over_share)) return;
    autojw struct brig_jw *w = egress_audit_open(a->id, a->p);
    jw_kstr(w, "decision", "folded");
    for (int i = 0; i < 3; i++) jw_ku64(w, auditor_names[i], a->folded[i]);
    char why[160];
    if (a->over_share)
        snprintf(why, sizeof(why), "connections not written one by one: this sandbox's share of the audit log "
                 "(%llu bytes) is spent", (unsigned long long)a->share);
    else
        snprintf(why, sizeof(why), "refusals not written one by one: more than %d at once, then %d a second",
                 AUDITOR_BURST, AUDITOR_PER_S);
    jw_kstr(w, "reason", why);
    jw_ki64(w, "pid", (int64_t)a->proxy);
    jw_obj_close(w);
    const char *line = jw_text(w, NULL);
    if (line == NULL) return;
    /* Within the share while the sandbox lives; the last one always. */
    if (!last && a->written + strlen(line) + 1 > a->share) {
        a->over_share = true;
        return;
    }
    auditor_write(a, line);
    memset(a->folded, 0, sizeof(a->folded));
    a->folded_at = now;
}

static void auditor_line(struct auditor *a, char kind, const char *line)
{
    int k = kind == 'A' ? 0 : kind == 'D' ? 1 : 2;
    uint64_t now = egress_now_ms();
    uint64_t full = AUDITOR_BURST * (1000ull / AUDITOR_PER_S);
    a->tokens_ms += now - a->refilled_at;
    if (a->tokens_ms > full) a->tokens_ms = full;
    a->refilled_at = now;
    bool refusal = k != 0, has_token = a->tokens_ms >= 1000ull / AUDITOR_PER_S;
    if (a->written + strlen(line) + 1 > a->share) a->over_share = true;
    if (a->over_share || (refusal && !has_token)) {
        a->folded[k]++;
        auditor_fold(a, false);
        return;
    }
    if (refusal) a->tokens_ms -= 1000ull / AUDITOR_PER_S;
    auditor_write(a, line);
}

static __attribute__((noreturn)) void auditor_main(const struct brig_policy *p, const char *id, int fd)
{
    prctl(PR_SET_NAME, "brig-egress-log", 0, 0, 0);
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    /* stderr is the proxy's /dev/null (never the caller's: an engine waits
     * for its EOF after create); nothing is opened here but the log. */
    if (dup2(fd, 3) < 0) _exit(1);
    syscall(SYS_close_range, 4u, ~0u, 0);
    uint64_t now = egress_now_ms();
    struct auditor a = { .p = p, .id = id, .proxy = getppid(), .share = p->audit.max_size / AUDITOR_SHARE,
                         .tokens_ms = AUDITOR_BURST * (1000ull / AUDITOR_PER_S), .refilled_at = now,
                         .folded_at = now };
    static char msg[AUDITOR_LINE_MAX + 1];
    for (;;) {
        /* Folded counts wait for the next minute, not for the next line. */
        int timeout = -1;
        if (a.folded[0] + a.folded[1] + a.folded[2] > 0 && !a.over_share) {
            uint64_t due = a.folded_at + AUDITOR_FOLD_S * 1000ull, t = egress_now_ms();
            timeout = due > t ? (int)(due - t) : 0;
        }
        struct pollfd pf = { .fd = 3, .events = POLLIN };
        int r = poll(&pf, 1, timeout);
        if (r < 0 && errno != EINTR) break;
        if (r == 0) auditor_fold(&a, false);
        if (r <= 0) continue;
        ssize_t n = recv(3, msg, AUDITOR_LINE_MAX, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        msg[n] = '\0';
        /* One line a message: a message with a newline in it is not one
         * (a confused or compromised proxy). */
        if (n < 2 || strchr(msg, '\n') != NULL || strchr("ADE", msg[0]) == NULL) continue;
        auditor_line(&a, msg[0], msg + 1);
    }
    auditor_fold(&a, true);
    _exit(0);
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

int egress_auditor_start(const struct brig_policy *p, const char *id, pid_t *pid, int *fd, char *why, size_t len)
{
    *pid = -1;
    *fd = -1;
    if (p->audit.path == NULL) return 0;
    int sv[2];
    pid_t child = egress_fork_peer("audit writer", sv, why, len);
    if (child < 0) return -1;
    if (child == 0) auditor_main(p, id, sv[1]);
    *pid = child;
    *fd = sv[0];
    return 0;
}

void egress_auditor_send(int fd, const char *decision, const char *line)
{
    char kind = strcmp(decision, "allow") == 0 ? 'A' : strcmp(decision, "deny") == 0 ? 'D' : 'E';
    struct iovec iov[2] = { { .iov_base = &kind, .iov_len = 1 }, { .iov_base = (void *)line, .iov_len = strlen(line) } };
    struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2 };
    (void)!sendmsg(fd, &m, MSG_NOSIGNAL);
}

void egress_auditor_finish(pid_t pid, int fd)
{
    if (pid < 0) return;
    close(fd);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}
