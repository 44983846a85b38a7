/* The foreground side of `brig run` and `brig exec`: the caller sees the
 * process's exit status (128+N for a signal, as a shell does) and the
 * signals it receives reach the process. */
#include "waiter.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../linux/console.h"
#include "../util/cleanup.h"
#include "../util/log.h"

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH,
                                 SIGCONT, SIGTSTP };

void waiter_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGCHLD);
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(forwarded); i++) sigaddset(set, forwarded[i]);
}

int waiter_exit_status(int status)
{
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 255;
}

int waiter_forward(pid_t pid, const sigset_t *set)
{
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(set, &si);
        if (sig < 0) {
            if (errno == EINTR) continue;
            brig_warn("sigwaitinfo: %s", strerror(errno));
            break;
        }
        if (sig != SIGCHLD) {
            brig_debug("forwarding signal %d to %d", sig, (int)pid);
            kill(pid, sig);
            continue;
        }
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return waiter_exit_status(status);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return 255;
    return waiter_exit_status(status);
}

/* Write all of buf; a peer that went away (EIO/EPIPE) ends the copy. */
static int waiter_write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) {
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                poll(&p, 1, 100);
                continue;
            }
            return -1;
        }
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* One read from `from` copied to *to: 1 copied, 0 end (EOF, EIO: the pty's
 * other side is closed), -1 nothing now. When *to fails (a reader that went
 * away) it becomes -1 and what follows is read and dropped, so the process
 * never blocks on a full pty. */
static int waiter_copy(int from, int *to)
{
    char buf[16384];
    ssize_t r = read(from, buf, sizeof(buf));
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) return -1;
    if (r <= 0) return 0;
    if (*to >= 0 && waiter_write_all(*to, buf, (size_t)r) < 0) {
        brig_debug("terminal relay: fd %d: %s; dropping output from now on", *to, strerror(errno));
        *to = -1;
    }
    return 1;
}

struct waiter_pty {
    pid_t pid;
    int master;
    int out;                /* stdout, -1 once it cannot be written */
    int in_to;              /* master, -1 once it cannot be written */
    int sfd;
    bool stdin_open;
    bool master_open;
    bool exited;
    int status;
};

static void waiter_on_signal(struct waiter_pty *w)
{
    struct signalfd_siginfo si;
    while (read(w->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGWINCH) {
            console_copy_winsize(STDIN_FILENO, w->master);
        } else if (sig != SIGCHLD) {
            brig_debug("forwarding signal %d to %d", sig, (int)w->pid);
            kill(w->pid, sig);
        }
    }
    int status;
    if (!w->exited && waitpid(w->pid, &status, WNOHANG) == w->pid) {
        w->exited = true;
        w->status = waiter_exit_status(status);
    }
}

static int waiter_relay(struct waiter_pty *w)
{
    while (!w->exited) {
        struct pollfd p[3] = {
            { .fd = w->sfd, .events = POLLIN },
            { .fd = w->master_open ? w->master : -1, .events = POLLIN },
            { .fd = w->stdin_open ? STDIN_FILENO : -1, .events = POLLIN },
        };
        if (poll(p, 3, -1) < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
            if (waiter_copy(w->master, &w->out) == 0) w->master_open = false;
        if (p[2].revents & (POLLIN | POLLHUP | POLLERR))
            if (waiter_copy(STDIN_FILENO, &w->in_to) == 0 || w->in_to < 0) w->stdin_open = false;
        if (p[0].revents & POLLIN) waiter_on_signal(w);
    }
    /* What the process wrote just before it exited is still in the pty. */
    while (w->master_open && waiter_copy(w->master, &w->out) == 1) {}
    return 0;
}

int waiter_pty_prepare(int master, struct brig_error **err)
{
    /* A terminal wants \r\n and gets it from the pty; a pipe or file gets
     * exactly what the process wrote (runc clears ONLCR the same way). */
    if (!isatty(STDOUT_FILENO)) TRY(console_clear_onlcr(master, err));
    console_copy_winsize(STDIN_FILENO, master);
    return 0;
}

int waiter_attach_pty(pid_t pid, int master, const sigset_t *set, int *exit_status,
                      struct brig_error **err)
{
    struct waiter_pty w = { .pid = pid, .master = master, .out = STDOUT_FILENO, .in_to = master,
                            .stdin_open = true, .master_open = true };
    autoclose int sfd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) return brig_fail(err, errno, "signalfd");
    w.sfd = sfd;
    int fl = fcntl(master, F_GETFL);
    if (fl < 0 || fcntl(master, F_SETFL, fl | O_NONBLOCK) < 0)
        return brig_fail(err, errno, "pty master: O_NONBLOCK");
    struct termios saved;
    bool saved_ok = false;
    TRY(console_raw(STDIN_FILENO, &saved, &saved_ok, err));
    /* A reader of our stdout that goes away (`| head`) must end the copy,
     * not kill brig and leave the process unwaited for. */
    struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
    sigaction(SIGPIPE, &ign, &old_pipe);
    int rc = waiter_relay(&w);
    sigaction(SIGPIPE, &old_pipe, NULL);
    console_restore(STDIN_FILENO, &saved, saved_ok);
    if (rc < 0) {
        brig_fail(err, errno, "relay the terminal");
        *exit_status = waiter_forward(pid, set);
        return -1;
    }
    *exit_status = w.status;
    return 0;
}
