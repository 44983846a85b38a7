/* brig without privilege on the host ("rootless", docs/rootless.md): run by
 * a user that is not root, or as uid 0 of a user namespace that is not the
 * host's (rootless podman runs its runtime so). Everything it makes is the
 * caller's own: its state under $XDG_RUNTIME_DIR, its containers in user
 * namespaces mapping the caller (and the subordinate ids /etc/subuid grants
 * it, through newuidmap), its cgroups only in a cgroup v2 subtree delegated
 * to it (cgroup_delegate.c). */
#ifndef BRIG_ROOTLESS_H
#define BRIG_ROOTLESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "../config/spec.h"
#include "../util/error.h"

/* --rootless VALUE ("true", "false", "auto" or NULL = auto): auto is
 * rootless when the effective uid is not 0 or this process's user
 * namespace is not the host's (its uid_map is not the whole identity). */
bool rootless_detect(const char *flag);
/* This process's user namespace is the host's. */
bool rootless_in_host_userns(void);

/* The default state root of a rootless brig: $XDG_RUNTIME_DIR/LEAF. The
 * variable must name an absolute directory owned by us and writable by no
 * one else (systemd's /run/user/UID is); else the error says to set it or
 * to give the state directory explicitly (flag names that option). */
int rootless_state_root(const char *leaf, const char *flag, char **out, struct brig_error **err);

/* Write the id maps of pid's new user namespace without privilege: one
 * mapping of our own uid (gid) is written directly (setgroups denied
 * first, as the kernel requires of an unprivileged gid_map); anything
 * else goes through newuidmap/newgidmap, which map only what /etc/subuid
 * and /etc/subgid grant us. */
int rootless_write_id_maps(const struct brig_spec *s, pid_t pid, struct brig_error **err);

/* Where a rootless brig keeps its audit log (the policy's audit.path is
 * root's): $XDG_STATE_HOME/brig/audit.jsonl, else
 * $HOME/.local/state/brig/audit.jsonl; NULL when neither is set. */
char *rootless_audit_path(void);

#endif
