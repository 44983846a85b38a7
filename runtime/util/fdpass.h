/* Passing one file descriptor over a unix socket (SCM_RIGHTS): the sync
 * socket between brig and the container's init, and --console-socket. */
#ifndef BRIG_FDPASS_H
#define BRIG_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* Send len bytes of buf in one message, with fd attached (fd < 0: none). */
int brig_send_with_fd(int sock, const void *buf, size_t len, int fd, struct brig_error **err);
/* Receive one message of at most len bytes into buf. *fd gets the attached
 * descriptor (close-on-exec) or -1. Returns the bytes received (0 at EOF)
 * or -1. what names the operation in errors. */
ssize_t brig_recv_with_fd(int sock, void *buf, size_t len, int *fd, const char *what,
                          struct brig_error **err);

#endif
