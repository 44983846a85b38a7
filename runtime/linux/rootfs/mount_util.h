/* Small mount helpers shared by rootfs.c, mounts.c, devices.c and paths.c:
 * the new mount API (open_tree/move_mount/mount_setattr) on fds, so that a
 * mount is made onto what we resolved and verified, never onto a path. */
#ifndef BRIG_MOUNT_UTIL_H
#define BRIG_MOUNT_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include "../../util/error.h"

/* "/a//b/./c/../d/" -> "/a/b/d" (lexical, ".." stops at "/"). Malloc'd. */
char *mnt_path_clean(const char *path);

/* MS_RDONLY|MS_NOSUID|... -> MOUNT_ATTR_* (per-mount flags only; atime
 * flags become the atime field). */
uint64_t mnt_flags_to_attr(unsigned long ms);

/* mount_setattr(2) on the mount fd refers to (AT_EMPTY_PATH), recursively
 * if asked. propagation: MS_SHARED/MS_SLAVE/MS_PRIVATE/MS_UNBINDABLE or 0. */
int mnt_setattr(int fd, bool recursive, uint64_t set, uint64_t clr, uint64_t propagation,
                struct brig_error **err);
/* Apply MS_* propagation (+MS_REC) to the mount fd refers to. */
int mnt_set_propagation(int fd, unsigned long propagation, struct brig_error **err);
/* The same on the mount at path (relative to dirfd, followed; "" is dirfd
 * itself): "/" after the pivot is the container's root mount, no open. */
int mnt_setattr_at(int dirfd, const char *path, bool recursive, uint64_t set, uint64_t clr,
                   uint64_t propagation, struct brig_error **err);
int mnt_set_propagation_at(int dirfd, const char *path, unsigned long propagation,
                           struct brig_error **err);

/* A detached copy of the mount tree at fd (open_tree OPEN_TREE_CLONE). */
int mnt_clone(int fd, bool recursive, struct brig_error **err);
/* Attach the detached mount tree onto the object destfd refers to. */
int mnt_attach(int treefd, int destfd, struct brig_error **err);

/* Path of fd inside the root of rootfd ("/proc"), from /proc/self/fd.
 * NULL if it cannot be told (then callers fall back to the config path). */
char *mnt_path_in_root(int rootfd, int fd);
/* The same in two steps, for many fds under one root: the root's path
 * (readlink of rootfd, NULL if unknown), then the fd's path inside it. */
char *mnt_root_link(int rootfd);
char *mnt_path_in_root_link(const char *root, int fd);

/* Iterate /proc/self/mountinfo; cb returns <0 to stop with an error. */
struct mnt_info {
    const char *mount_point;    /* unescaped */
    const char *root;
    const char *fstype;
    const char *source;
    bool shared;                /* "shared:N" among the optional fields */
};
int mnt_info_foreach(int (*cb)(const struct mnt_info *mi, void *arg, struct brig_error **err),
                     void *arg, struct brig_error **err);

#endif
