/* Parent <-> container-init messages over a SOCK_SEQPACKET socketpair.
 * One message per step; the child reports failures as SYNC_ERROR with its
 * brig_error text, so the parent can print "create ID: mounts[2] ...". */
#ifndef BRIG_SYNC_H
#define BRIG_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

enum sync_type {
    SYNC_GO = 1,        /* parent -> child: cgroup joined, id maps written */
    SYNC_HOOKS,         /* child -> parent: namespaces ready, run prestart/createRuntime */
    SYNC_HOOKS_DONE,    /* parent -> child: payload is the state JSON for createContainer */
    SYNC_CREATED,       /* child -> parent: setup done, waiting for start */
    SYNC_START,         /* parent -> child (run only): go ahead and exec */
    SYNC_ERROR,         /* either way: payload is the error message */
    SYNC_CONSOLE,       /* child -> parent: carries the pty master (SCM_RIGHTS) */
    SYNC_CREATED_ACK,   /* parent -> child (create only): state says created, wait on exec.fifo */
    SYNC_SHARED_MNT,    /* child -> parent: the root's bind, no mount namespace of its own (payload: its record) */
    SYNC_SHARED_MNT_ACK,/* parent -> child: recorded in the state, attach it */
    SYNC_USERNS,        /* child -> parent: its own user namespace is made, map it */
    SYNC_USERNS_DONE,   /* parent -> child: mapped */
};

#define SYNC_MAX_PAYLOAD (64 * 1024)

struct sync_msg {
    uint32_t type;
    int32_t errnum;
    uint32_t len;               /* payload bytes, NUL included */
    char payload[SYNC_MAX_PAYLOAD];
};

int sync_socketpair(int fds[2], struct brig_error **err);
int sync_send(int fd, enum sync_type type, const char *payload, struct brig_error **err);
/* An error's errnum and exec_status in the message's errnum field (an
 * errno fits in 16 bits), and back into an error. */
int sync_errnum_wire(const struct brig_error *e);
void sync_errnum_apply(struct brig_error *e, int32_t wire);
/* Send the error as SYNC_ERROR; -1 when nobody is listening any more. */
int sync_send_error(int fd, const struct brig_error *e);
/* Receive the next message, which must be `expect`. A SYNC_ERROR becomes
 * *err with the peer's message; EOF becomes the error "eof_what", or, when
 * eof_what is NULL, returns 1. payload (optional)
 * receives a malloc'd copy of the payload. */
int sync_expect(int fd, enum sync_type expect, const char *eof_what, char **payload,
                struct brig_error **err);

/* A message carrying one fd (SCM_RIGHTS), and its receiving end: *out gets
 * the fd (close-on-exec). Same error and EOF handling as sync_expect. */
int sync_send_fd(int fd, enum sync_type type, int send_fd, struct brig_error **err);
int sync_expect_fd(int fd, enum sync_type expect, const char *eof_what, int *out,
                   struct brig_error **err);

/* The socket `brig start` connects to before it releases a created init,
 * to hear from it until execve (name is a socket in dirfd): a listening
 * one for the init, made by create, and start's connected end. */
#define SYNC_START_SOCK "exec.sock"
int sync_listen_at(int dirfd, const char *name, int *out, struct brig_error **err);
int sync_connect_at(int dirfd, const char *name, int *out, struct brig_error **err);

/* run, start and exec: wait until the container's init has called execve (our end sees EOF
 * as its CLOEXEC end closes) or has reported an error. */
int sync_wait_exec(int fd, struct brig_error **err);

#endif
