/* Waiting for a process brig started (run's init, exec's process) while
 * forwarding signals to it, optionally relaying a pty to the caller's
 * terminal. The caller blocks the signals of waiter_signals() first. */
#ifndef BRIG_WAITER_H
#define BRIG_WAITER_H

#include <signal.h>
#include <sys/types.h>

#include "../util/error.h"

/* SIGCHLD and the signals forwarded to the process (SIGWINCH resizes the
 * pty when attached). */
void waiter_signals(sigset_t *set);

/* waitpid status -> exit status: the code, or 128+N for signal N. */
int waiter_exit_status(int status);

/* Wait for pid, forwarding the signals in set; returns its exit status. */
int waiter_forward(pid_t pid, const sigset_t *set);

/* Before the process starts writing: the pty's output mode for where it
 * goes, and the caller's window size. */
int waiter_pty_prepare(int master, struct brig_error **err);

/* Same, attached: stdin -> master, master -> stdout, stdin in raw mode while
 * it is a tty (restored on every return), window size kept in sync. */
int waiter_attach_pty(pid_t pid, int master, const sigset_t *set, int *exit_status,
                      struct brig_error **err);

#endif
