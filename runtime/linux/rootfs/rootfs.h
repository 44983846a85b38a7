/* The container's filesystem view: runs in the child, inside the new mount
 * namespace, in this order (see child.c):
 *   rootfs_prepare -> mounts_apply -> devices_populate -> rootfs_pivot
 *   -> paths_mask_readonly -> rootfs_finish
 * Every destination is resolved inside the root by fd (util/fs.h). */
#ifndef BRIG_ROOTFS_H
#define BRIG_ROOTFS_H

#include <stdbool.h>
#include <stdint.h>

#include <sys/stat.h>

#include "../../config/spec.h"

/* In create, before anything exists: open root.path once (from bundle_fd
 * when it lies in the bundle; no symlink on the way), make root.path the
 * path of what was opened and record the fd in s->root (the policy judges
 * that path; the init uses that directory only). *fd is the caller's to
 * close after the init is cloned. */
int rootfs_open(int bundle_fd, struct brig_spec *s, int *fd, struct brig_error **err);

/* No mount namespace of the container's own (none, or one joined by
 * path; rootfs_shared.c). The mounts go into that namespace, below a bind
 * of root.path onto itself that create records and delete detaches. */
struct rootfs_shared_mnt {
    uint64_t id;                /* that bind's mount id */
    bool unique;                /* a unique id (STATX_MNT_ID_UNIQUE), never reused */
    uint64_t root_dev, root_ino;    /* the root directory it binds */
    uint64_t ns_dev, ns_ino;    /* the mount namespace it is in */
    char *ns_path;              /* linux.namespaces[mount].path, or NULL: create's own */
};
/* Whether any field needs a mount (mounts, masks, a read-only root, ...). */
bool rootfs_shared_needs_mount(const struct brig_spec *s);
/* Parent, before anything exists: refuse the capabilities that leave a
 * chroot, and, when something is to be mounted, a root.path that is the
 * host's "/" or a new user namespace (which cannot mount there). */
int rootfs_shared_check(const struct brig_spec *s, bool new_user, struct brig_error **err);
/* Child, when something is to be mounted: bind root.path onto itself in
 * this namespace, its id sent to create (SYNC_SHARED_MNT, recorded) before
 * it is attached; *rootfd is the bind, to mount into. */
int rootfs_shared_bind(const struct brig_spec *s, bool joined, int sync_fd, int *rootfd,
                       struct brig_error **err);
/* Child, when nothing is: root.path opened, no mount made. */
int rootfs_shared_open(const struct brig_spec *s, bool joined, int *rootfd, struct brig_error **err);
/* chroot into rootfd (pivot_root would move the root of the namespace). */
int rootfs_chroot_shared(int rootfd, struct brig_error **err);
/* The record as one line of text ("ID u DEV:INO DEV:INO [PATH]"), and
 * back (0, or -1 when it is not one; ns_path then malloc'd). */
char *rootfs_shared_format(const struct rootfs_shared_mnt *m);
int rootfs_shared_parse(const char *text, struct rootfs_shared_mnt *m);
/* delete, or a failed create: detach the bind at root (the root.path the
 * init bound) if it is still the recorded one, and everything below it. */
int rootfs_shared_detach(const char *root, const struct rootfs_shared_mnt *m, struct brig_error **err);

/* Make the host's mounts not propagate into ours (rslave by default, or
 * linux.rootfsPropagation), bind the root onto itself so it is a mount
 * point, and return an O_PATH fd of it in *rootfd. caller_mntns (the stat
 * of /proc/self/ns/mnt before the namespaces were joined; NULL: unchecked)
 * must not be the namespace we are in now. */
int rootfs_prepare(const struct brig_spec *s, const struct stat *caller_mntns, int *rootfd,
                   struct brig_error **err);

/* Create, with a new mount namespace: make every idmapped bind mount
 * (mounts_idmap.c), and, when the init gets a new user namespace, clone
 * every other bind source (open_tree) and set its flags now, as host
 * root, so the init need not reach the path from inside the namespace
 * (runc 1.2 and crun do the same). Not when CAP_SYS_ADMIN is in the
 * bounding set: the clone's flags are not locked (see mounts.c).
 * mounts_bind_release closes the clones once the init has them. */
int mounts_bind_prepare(struct brig_spec *s, bool new_user, bool rootless, struct brig_error **err);
/* (A mount the policy stages is prepared once staged: run it again then.) */
void mounts_bind_release(struct brig_spec *s);

/* Every entry of spec->mounts, in order. Errors read
 * "mounts[2] (/proc): mount proc: Operation not permitted". A bind onto
 * "/" replaces the root: *rootfd is then the new mount (the old one is
 * closed), for everything after it. */
int mounts_apply(int *rootfd, const struct brig_spec *s, bool in_userns, struct brig_error **err);

/* /dev: the default devices (null zero full random urandom tty, ptmx ->
 * pts/ptmx), the fd/stdin/stdout/stderr symlinks, and linux.devices.
 * In a user namespace devices are bind mounts of the host's nodes. */
int devices_populate(int rootfd, const struct brig_spec *s, bool in_userns,
                     struct brig_error **err);

/* pivot_root into the root (or chroot with MS_MOVE for --no-pivot), detach
 * the old root, chdir("/"). */
int rootfs_pivot(int rootfd, const struct brig_spec *s, bool no_pivot, struct brig_error **err);

/* After the pivot: linux.maskedPaths (a verified /dev/null bind for files,
 * an empty read-only tmpfs for directories) and linux.readonlyPaths. */
int paths_mask_readonly(const struct brig_spec *s, struct brig_error **err);

/* Last filesystem step: remount / read-only when root.readonly, and apply
 * rootfsPropagation to the new root. */
int rootfs_finish(const struct brig_spec *s, struct brig_error **err);

#endif
