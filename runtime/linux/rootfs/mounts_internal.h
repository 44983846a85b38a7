/* Shared between the mount steps (mounts.c, mounts_cgroup.c,
 * mounts_copyup.c, devices.c); not part of the module interface. */
#ifndef BRIG_MOUNTS_INTERNAL_H
#define BRIG_MOUNTS_INTERNAL_H

#include <stdbool.h>

#include "../../config/spec.h"

/* Resolve dest inside the root, creating it (a directory if dir, else an
 * empty file) as needed; fails if it exists as the other kind. O_PATH fd. */
int mounts_open_dest(int rootfd, const char *dest, bool dir, struct brig_error **err);

/* Bind the host path src onto dest inside the root with o's flags,
 * recursive attributes and propagation. type is for the /proc checks. */
int mounts_bind_source(int rootfd, const char *src, const char *dest,
                       const struct brig_mount_opts *o, const char *type,
                       struct brig_error **err);

/* Set o's per-mount flags and recursive attributes on a detached tree. */
int mounts_bind_flags(int tree, const struct brig_mount_opts *o, struct brig_error **err);

/* Idmapped bind mounts (mounts_idmap.c): whether mounts[i] asks for one,
 * and, in create as host root, its detached idmapped tree in tree_fd.
 * lock_matters: the container holds CAP_SYS_ADMIN in its own user
 * namespace, where the clone's flags would not be locked. */
bool mounts_idmap_wanted(const struct brig_mount *m);
int mounts_idmap_prepare(struct brig_spec *s, size_t i, int srcfd, bool lock_matters,
                         struct brig_error **err);

/* mount(2) a filesystem of type on dest, then verify and apply attributes. */
int mounts_fs(int rootfd, const char *source, const char *dest, const char *type,
              const struct brig_mount_opts *o, bool in_userns, struct brig_error **err);
/* The same, and *verified: the O_PATH fd of the new mount, as reopened
 * through the root and verified, or -1 (a bind fallback: open it yourself). */
int mounts_fs_open(int rootfd, const char *source, const char *dest, const char *type,
                   const struct brig_mount_opts *o, bool in_userns, int *verified,
                   struct brig_error **err);

/* type "cgroup": a tmpfs with one bind per v1 hierarchy of our cgroup;
 * 1 (nothing done) when this process is in no v1 hierarchy. */
/* Whether this process belongs to any cgroup v1 hierarchy (legacy/hybrid). */
bool mounts_host_has_cgroup_v1(void);
int mounts_cgroup_v1(int rootfd, const struct brig_spec *s, const char *dest,
                     const struct brig_mount_opts *o, struct brig_error **err);

/* tmpfs with "tmpcopyup": the image's directory is copied into it. */
int mounts_tmpfs_copyup(int rootfd, const char *source, const char *dest,
                        const struct brig_mount_opts *o, struct brig_error **err);

#endif
