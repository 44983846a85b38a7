/* Per-process attributes of the container's init, each applied in the child. */
#ifndef BRIG_PROCESS_ATTRS_H
#define BRIG_PROCESS_ATTRS_H

#include <stdbool.h>

#include <sys/types.h>

#include "../config/spec.h"

/* hostname/domainname (runtime/linux/sysctl.c with linux.sysctl).
 * hostname_validate runs in the parent: refuses a name without a private uts
 * namespace (new, or joined by path and not brig's own); hostname_apply runs
 * in the child, in that namespace. */
int hostname_apply(const struct brig_spec *s, struct brig_error **err);
int hostname_validate(const struct brig_spec *s, struct brig_error **err);
/* linux.sysctl through the container's /proc/sys (after the pivot, before
 * /proc/sys is made read-only). Only namespaced sysctls are accepted. */
int sysctl_apply(const struct brig_spec *s, struct brig_error **err);
/* Validate linux.sysctl against the namespaces the container gets (parent). */
/* linux.memoryPolicy: set_mempolicy on the init (mempolicy.c). */
int mempolicy_apply(const struct brig_linux *l, struct brig_error **err);
int sysctl_validate(const struct brig_spec *s, struct brig_error **err);
int rlimits_apply(const struct brig_process *p, struct brig_error **err);
int oom_score_adj_apply(const struct brig_process *p, struct brig_error **err);
int personality_apply(const struct brig_linux *l, struct brig_error **err);
/* process.scheduler on pid (0: ourselves), by a caller with host
 * privileges: the container's init gets it from `create`, once it is in
 * its cgroups (as crun sets it), so a real-time policy works in a user
 * namespace too. scheduler_validate names a bad field before anything
 * runs. */
int scheduler_validate(const struct brig_process *p, struct brig_error **err);
int scheduler_apply(const struct brig_process *p, pid_t pid, struct brig_error **err);
int io_priority_apply(const struct brig_process *p, struct brig_error **err);
int no_new_privs_apply(const struct brig_process *p, struct brig_error **err);
/* setsid(): the process leads a new session, terminal or not. */
int session_new(struct brig_error **err);
/* chdir to process.cwd, checked to be inside the (already pivoted) root. */
int cwd_apply(const struct brig_process *p, struct brig_error **err);
/* Every fd >= first (3 + preserve_fds) but keep (the sync socket, or -1)
 * is closed, not only marked close-on-exec: execve resolves its paths
 * while those are still open. The log fd among them stops logging. */
int fds_close_from(int first, int keep, struct brig_error **err);
/* Close the close-on-exec fds in 3..first-1 but keep (brig's own, in a
 * preserved range the caller left unused). */
void fds_close_cloexec_below(int first, int keep);

#endif
