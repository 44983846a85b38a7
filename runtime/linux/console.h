/* process.terminal (config.md "Process"): a pty made inside the container's
 * own devpts, its master handed to whoever holds the terminal (the caller of
 * `brig run`, or the --console-socket listener as with runc). */
#ifndef BRIG_CONSOLE_H
#define BRIG_CONSOLE_H

#include <stdbool.h>
#include <termios.h>

#include "../config/spec.h"

/* In the container, after its root is in place (pivoted, or joined by
 * exec): open the container's /dev/ptmx, get the peer by TIOCGPTPEER (never
 * by path), bind it over /dev/console when bind_console (the init, as
 * runc), apply process.consoleSize, give the peer to owner (process.user.uid
 * as this process's user namespace sees it),
 * make it the controlling terminal of a new session and stdin/out/err.
 * Returns the master in *master (close-on-exec). */
int console_setup(const struct brig_process *p, bool bind_console, uid_t owner, int *master,
                  struct brig_error **err);

/* runc's console-socket protocol: connect to the unix socket at path
 * (before anything is created, so a bad path changes nothing), later send
 * the master with SCM_RIGHTS and the payload "/dev/ptmx" (utils.SendRawFd). */
int console_socket_connect(const char *path, int *sock, struct brig_error **err);
int console_socket_send(int sock, int master, struct brig_error **err);

/* Receive one fd sent with SCM_RIGHTS on a connected socket (the other end
 * of console_socket_send; used by tests and helpers). name (optional, len
 * bytes) receives the payload. */
int console_recv_fd(int sock, char *name, size_t len, int *fd, struct brig_error **err);

/* The caller's terminal while attached: raw mode on fd if it is a tty
 * (*saved_ok tells whether *saved must be restored). */
int console_raw(int fd, struct termios *saved, bool *saved_ok, struct brig_error **err);
void console_restore(int fd, const struct termios *saved, bool saved_ok);
/* Copy the window size of from (a tty) to the pty master; no-op otherwise. */
void console_copy_winsize(int from, int master);
/* No \n -> \r\n translation on output read from master (runc's ClearONLCR):
 * used when the output goes to a pipe or file rather than a terminal. */
int console_clear_onlcr(int master, struct brig_error **err);

#endif
