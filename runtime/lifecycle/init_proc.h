/* The container's init process as seen from a later brig command: a pidfd
 * taken on the recorded pid, guarded against pid reuse by the start time.
 * Implemented in kill.c; used by kill, start and delete. */
#ifndef BRIG_INIT_PROC_H
#define BRIG_INIT_PROC_H

#include <stdbool.h>
#include <sys/types.h>

#include "state.h"

/* Open a pidfd on st->pid. Returns 1 and *pidfd with the process still the
 * container's init, 0 when it is gone (exited, zombie, or the pid now
 * belongs to another process), -1 on error. */
int init_pidfd_open(const struct brig_state *st, int *pidfd, struct brig_error **err);
/* Send sig through the pidfd (no pid-reuse race once it is open). */
int init_pidfd_signal(int pidfd, int sig, struct brig_error **err);
/* Wait until the process behind pidfd has exited, at most timeout_ms.
 * Fails with ETIMEDOUT. */
int init_pidfd_wait(int pidfd, int timeout_ms, struct brig_error **err);
/* Stop the container: SIGKILL its init and everything in cg (may be NULL;
 * without a pid namespace the init's death leaves its children alive), and
 * wait (10 s at most) until the init is gone. */
struct brig_cgroup;
int init_kill_all(const struct brig_state *st, struct brig_cgroup *cg, struct brig_error **err);

/* A container without a cgroup: the processes in its init's pid namespace
 * (malloc'd; none once the init is gone). Refused when that namespace is
 * ours: nothing would tell its processes from the host's. */
int init_ns_pids(const struct brig_state *st, pid_t **pids, size_t *n, struct brig_error **err);

#endif
