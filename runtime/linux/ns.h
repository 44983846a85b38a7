/* linux.namespaces, linux.uidMappings/gidMappings, linux.timeOffsets.
 * The parent plans and prepares (opens the namespaces to join, sets the
 * pid/time namespace its children will get), the child joins. */
#ifndef BRIG_NS_H
#define BRIG_NS_H

#include <stdbool.h>
#include <sys/types.h>

#include "../config/spec.h"

struct ns_plan {
    unsigned long clone_flags;      /* CLONE_NEW* given to clone3 */
    int unshare_flags;              /* CLONE_NEW* the child unshares after SYNC_GO */
    int join_fds[BRIG_NS_COUNT];    /* -1, or an fd of the namespace to join */
    bool new_user;
    bool new_net;
    bool new_uts;
    bool new_mnt;                   /* false: inherited or joined (rootfs_shared.c) */
    int saved_pid_fd;               /* parent's own pid/time ns, to restore */
    int saved_time_fd;
};

/* Validate linux.namespaces and the id mappings, open the paths to join
 * (checking each is a namespace of the right type). */
int ns_plan_prepare(const struct brig_spec *s, struct ns_plan *p, struct brig_error **err);
/* Parent, just before clone: join the pid/time namespace given by path for
 * our children only, or unshare a time namespace and write its offsets. */
int ns_parent_before_clone(const struct brig_spec *s, struct ns_plan *p, struct brig_error **err);
/* Parent, just after clone: restore pid_for_children/time_for_children. */
int ns_parent_after_clone(struct ns_plan *p, struct brig_error **err);
/* Parent: write /proc/<pid>/{uid,gid}_map for a new user namespace. */
int ns_write_id_maps(const struct brig_spec *s, pid_t pid, struct brig_error **err);
/* One of them: file is "uid_map" or "gid_map", field names m in errors. */
int ns_write_id_map(pid_t pid, const char *file, const char *field,
                    const struct brig_id_mapping *m, size_t n, struct brig_error **err);
/* Child, after SYNC_GO: join the user namespace first, then the others,
 * then unshare what could not be created by clone. */
int ns_child_join(const struct brig_spec *s, struct ns_plan *p, struct brig_error **err);
void ns_plan_close(struct ns_plan *p);

/* A user namespace of the init's own, entered after its setup (brig
 * sandbox: lifecycle/container.h, brig_userns_own). Child: make it, with
 * euid `owner` so that it is owned by that host uid (the kernel charges
 * every per-user counter of the processes inside to its owner in the
 * namespace above: kernel/ucount.c). Parent: write its maps, container ids
 * 0..size-1 onto host ids base..; first that it is pid's and owned by
 * base. Child again, once they are written: become root of it. */
int ns_own_unshare(uint32_t owner, struct brig_error **err);
int ns_own_write_maps(pid_t pid, uint32_t base, uint32_t size, struct brig_error **err);
int ns_own_become_root(struct brig_error **err);

#endif
