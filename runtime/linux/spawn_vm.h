/* A child that shares our memory until its execve (the posix_spawn
 * technique): no page tables copied, no copy-on-write faults, no copied mm
 * to tear down at its execve. Not a vfork: we keep running (a bounded wait
 * on a child the container may stop), so between spawn_vm_start and the
 * child's end (EOF on a close-on-exec socket it holds) the parent may make
 * raw syscalls only (spawn_vm_sys): no malloc, no stdio, not even errno,
 * which the child shares with us. */
#ifndef BRIG_SPAWN_VM_H
#define BRIG_SPAWN_VM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"
#include "sync.h"

struct spawn_vm {
    void *map;          /* guard page + stack */
    size_t map_len;
    pid_t pid;
};

/* Whether this build can spawn so (raw syscalls need an architecture we
 * wrote them for); without, the caller forks. */
bool spawn_vm_available(void);

/* fn(arg) in a new process sharing our memory, on a stack of its own,
 * born in the v2 cgroup of cgroup_fd (-1: ours) where the kernel allows
 * (*cloned_into, which fn may read, says so). fn must end in execve or
 * _exit (never return), and write only memory that is its own or that we
 * do not read until it is gone. */
int spawn_vm_start(struct spawn_vm *s, int cgroup_fd, int (*fn)(void *), void *arg, bool *cloned_into,
                   struct brig_error **err);

/* A syscall that leaves errno alone: -errno on failure. */
long spawn_vm_sys(long nr, long a, long b, long c, long d, long e);

enum spawn_vm_end {
    SPAWN_VM_EXECED,        /* EOF with nothing said: the child reached its execve */
    SPAWN_VM_ERROR,         /* the child sent SYNC_ERROR (in *m) */
    SPAWN_VM_TIMEOUT,       /* no EOF within the socket's SO_RCVTIMEO: killed */
    SPAWN_VM_RECV_FAILED,   /* *recv_errno; killed */
};

/* Raw: read sync_fd until EOF, keeping a SYNC_ERROR in *m. On a timeout or
 * a receive error the child is killed and read to EOF (blocking). When this
 * returns, the child runs no more in our memory. */
enum spawn_vm_end spawn_vm_wait_gone(const struct spawn_vm *s, int sync_fd, struct sync_msg *m,
                                     int *recv_errno);

/* Unmaps the child's stack: only once it is gone. */
void spawn_vm_release(struct spawn_vm *s);

#endif
