/* The container root: made a private-enough mount point before anything is
 * mounted into it, pivoted into, and finished (read-only, propagation).
 * runtime-spec config.md "Root" and config-linux.md "Rootfs Mount
 * Propagation". Runs in the child, in its own mount namespace. */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/fd_defer.h"
#include "../../util/fs.h"
#include "../../util/log.h"
#include "../../util/strutil.h"
#include "mount_util.h"

/* Shared and unbindable are only applied to the new root at the end:
 * pivot_root refuses shared mounts, and an unbindable "/" could not even be
 * bind-mounted onto itself. Until then the host's mounts are rslave. */
static bool rootfs_prop_deferred(unsigned long prop)
{
    return (prop & (MS_SHARED | MS_UNBINDABLE)) != 0;
}

struct rootfs_parent {
    const char *root;
    char *best;
    size_t best_len;
    bool shared;
};

static int rootfs_parent_cb(const struct mnt_info *mi, void *arg, struct brig_error **err)
{
    struct rootfs_parent *p = arg;
    size_t n = strlen(mi->mount_point);
    bool is_prefix = strcmp(mi->mount_point, "/") == 0 ||
                     (strncmp(p->root, mi->mount_point, n) == 0 &&
                      (p->root[n] == '/' || p->root[n] == '\0'));
    /* the last matching line wins: it is the top of a stack of mounts */
    if (is_prefix && (p->best == NULL || n >= p->best_len)) {
        free(p->best);
        p->best = brig_strdup(mi->mount_point);
        p->best_len = strcmp(mi->mount_point, "/") == 0 ? 0 : n;
        p->shared = mi->shared;
    }
    return 0;
}

/* A shared parent mount would propagate our bind of the root to the host
 * and makes pivot_root fail: make it private (what runc does). Only needed
 * when rootfsPropagation asked for something non-recursive. */
static int rootfs_parent_private(const char *root, struct brig_error **err)
{
    struct rootfs_parent p = { .root = root };
    if (mnt_info_foreach(rootfs_parent_cb, &p, err) < 0) return -1;
    autofree char *best = p.best;
    if (best == NULL || !p.shared) return 0;
    brig_debug("rootfs: making the parent mount %s private", best);
    if (mount(NULL, best, NULL, MS_PRIVATE, NULL) < 0)
        return brig_fail(err, errno, "make %s private", best);
    return 0;
}

/* Everything below changes propagation and mounts of the namespace we are
 * in: doing that in the caller's (brig's, so the host's) namespace would be
 * a disaster. caller is the mount namespace this process was in before it
 * joined or made the container's (stat of /proc/self/ns/mnt then). */
static int rootfs_check_own_mntns(const struct stat *caller, struct brig_error **err)
{
    if (caller == NULL) return 0;
    struct stat self;
    if (stat("/proc/self/ns/mnt", &self) < 0) return brig_fail(err, errno, "stat /proc/self/ns/mnt");
    if (self.st_ino == caller->st_ino && self.st_dev == caller->st_dev)
        return brig_failx(err, "linux.namespaces: the root filesystem needs a new mount "
                               "namespace (refusing to change the caller's)");
    return 0;
}

/* root.path with no symlink anywhere on the way (runc refuses one too:
 * "invalid rootfs: not an absolute path, or a symlink"). A symlink would
 * be followed wherever it leads when it is opened, and whoever can rename
 * entries of the directory holding it can put one there at any moment. */
static int rootfs_open_nofollow(int dirfd, const char *path, const char *shown, int *out,
                                struct brig_error **err)
{
    struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
    int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
    if (fd < 0 && errno == ELOOP)
        return brig_failx(err, "root.path: %s: a symlink on the way, refusing it (name the "
                               "directory it leads to)", shown);
    if (fd < 0) return brig_fail(err, errno, "root.path: %s", shown);
    *out = fd;
    return 0;
}

int rootfs_open(int bundle_fd, struct brig_spec *s, int *fd, struct brig_error **err)
{
    if (s->root.path == NULL || s->root.path[0] != '/')
        return brig_failx(err, "root.path: must be an absolute path");
    /* A root in the bundle (the usual "rootfs") is looked up from the
     * bundle's fd: the directory create read config.json from. */
    size_t bl = s->bundle ? strlen(s->bundle) : 0;
    bool in_bundle = bundle_fd >= 0 && bl > 0 && strncmp(s->root.path, s->bundle, bl) == 0 &&
                     s->root.path[bl] == '/';
    autoclose int dirfd = -1;
    TRY(rootfs_open_nofollow(in_bundle ? bundle_fd : AT_FDCWD,
                             in_bundle ? s->root.path + bl + 1 : s->root.path, s->root.path, &dirfd,
                             err));
    char where[PATH_MAX];
    if (brig_fd_where(dirfd, where, sizeof(where), err) < 0) return brig_wrap(err, "root.path");
    if (strcmp(where, s->root.path) != 0) {
        brig_debug("rootfs: root.path %s is %s", s->root.path, where);
        free(s->root.path);
        s->root.path = brig_strdup(where);
    }
    s->root.has_fd = true;
    s->root.fd = dirfd;
    *fd = steal_fd(&dirfd);
    return 0;
}

/* In the init's mount namespace: the directory create opened (a copy of
 * the host's mount, which open_tree refuses to clone from here), reached
 * again by its symlink-free path and checked to be the same inode. One
 * swapped since (for a symlink or another directory) fails the create. */
static int rootfs_reopen(const struct brig_spec *s, int *out, struct brig_error **err)
{
    autoclose_path int judged = s->root.fd;
    autoclose_path int fd = -1;
    TRY(rootfs_open_nofollow(AT_FDCWD, s->root.path, s->root.path, &fd, err));
    struct stat now, then;
    if (fstat(fd, &now) < 0 || fstat(judged, &then) < 0)
        return brig_fail(err, errno, "root.path: stat %s", s->root.path);
    if (now.st_dev != then.st_dev || now.st_ino != then.st_ino)
        return brig_failx(err, "root.path: %s is no longer the directory create opened, refusing it",
                          s->root.path);
    *out = steal_fd(&fd);
    return 0;
}

int rootfs_prepare(const struct brig_spec *s, const struct stat *caller_mntns, int *rootfd,
                   struct brig_error **err)
{
    if (s->root.path == NULL || s->root.path[0] != '/')
        return brig_failx(err, "root.path: must be an absolute path");
    TRY(rootfs_check_own_mntns(caller_mntns, err));
    unsigned long prop = MS_SLAVE | MS_REC;
    if (s->linux_cfg.has_rootfs_propagation &&
        !rootfs_prop_deferred(s->linux_cfg.rootfs_propagation))
        prop = s->linux_cfg.rootfs_propagation;
    brig_debug("rootfs: propagation of / set to %#lx", prop);
    if (mount(NULL, "/", NULL, prop, NULL) < 0)
        return brig_fail(err, errno, "%sset propagation of /",
                         s->linux_cfg.has_rootfs_propagation ? "linux.rootfsPropagation: " : "");

    /* The directory create opened (rootfs_open), or, for a spec that did
     * not come through create, root.path opened here by the same rule. */
    autoclose_path int dirfd = -1;
    if (s->root.has_fd)
        TRY(rootfs_reopen(s, &dirfd, err));
    else
        TRY(rootfs_open_nofollow(AT_FDCWD, s->root.path, s->root.path, &dirfd, err));
    if (!(prop & MS_REC)) {
        char real[PATH_MAX];
        if (brig_fd_where(dirfd, real, sizeof(real), err) < 0) return brig_wrap(err, "root.path");
        TRY(rootfs_parent_private(real, err));
    }

    /* A mount point of its own: pivot_root needs one, and the read-only
     * remount and propagation at the end must not touch the host's mount.
     * The recursive bind of the directory onto itself, made on fds
     * (open_tree clones what mount(MS_BIND|MS_REC) would, move_mount
     * attaches it where that would), and the tree fd is then the new
     * mount's root: no path lookup after the bind. */
    int fd = mnt_clone(dirfd, true, err);
    if (fd < 0) return brig_wrap(err, "root.path: bind %s onto itself", s->root.path);
    if (mnt_attach(fd, dirfd, err) < 0) {
        close(fd);
        return brig_wrap(err, "root.path: bind %s onto itself", s->root.path);
    }
    brig_debug("rootfs: %s bound onto itself (fd %d)", s->root.path, fd);
    *rootfd = fd;
    return 0;
}

static int rootfs_pivot_root(int rootfd, struct brig_error **err)
{
    autoclose int oldroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (oldroot < 0) return brig_fail(err, errno, "open /");
    if (fchdir(rootfd) < 0) return brig_fail(err, errno, "chdir to the root");
    /* pivot_root(".", "."): the old root is stacked under the new one at
     * the same place, so no directory for it is needed in the image. */
    if (syscall(SYS_pivot_root, ".", ".") < 0) return brig_fail(err, errno, "pivot_root");
    if (fchdir(oldroot) < 0) return brig_fail(err, errno, "chdir to the old root");
    /* the detach below must not propagate to the host */
    if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
        return brig_fail(err, errno, "make the old root rslave");
    if (umount2(".", MNT_DETACH) < 0) return brig_fail(err, errno, "detach the old root");
    if (chdir("/") < 0) return brig_fail(err, errno, "chdir /");
    brig_debug("rootfs: pivoted, old root detached");
    return 0;
}

/* --no-pivot (e.g. a rootfs on a ramdisk, where pivot_root is refused).
 * The host's mounts stay reachable below the chroot, so proc and sysfs
 * instances outside the root are detached (or covered) first, as runc does. */
static int rootfs_nopivot_cb(const struct mnt_info *mi, void *arg, struct brig_error **err)
{
    const char *root = arg;
    size_t rl = strlen(root);
    if (strncmp(mi->mount_point, root, rl) == 0 &&
        (mi->mount_point[rl] == '/' || mi->mount_point[rl] == '\0'))
        return 0;
    if (strcmp(mi->fstype, "proc") != 0 && strcmp(mi->fstype, "sysfs") != 0) return 0;
    if (mount(NULL, mi->mount_point, NULL, MS_SLAVE | MS_REC, NULL) < 0 && errno != ENOENT)
        return brig_fail(err, errno, "make %s rslave", mi->mount_point);
    if (umount2(mi->mount_point, MNT_DETACH) == 0 || errno == ENOENT) return 0;
    if (errno != EINVAL && errno != EPERM)
        return brig_fail(err, errno, "detach %s", mi->mount_point);
    if (mount("tmpfs", mi->mount_point, "tmpfs", MS_RDONLY, NULL) < 0)
        return brig_fail(err, errno, "cover %s", mi->mount_point);
    return 0;
}

static int rootfs_move_root(int rootfd, struct brig_error **err)
{
    char p[64], root[PATH_MAX];
    ssize_t n = readlink(brig_fd_path(rootfd, p, sizeof(p)), root, sizeof(root) - 1);
    if (n < 0) return brig_fail(err, errno, "readlink the root fd");
    root[n] = '\0';
    TRY(mnt_info_foreach(rootfs_nopivot_cb, root, err));
    if (fchdir(rootfd) < 0) return brig_fail(err, errno, "chdir to the root");
    if (mount(".", "/", NULL, MS_MOVE, NULL) < 0) return brig_fail(err, errno, "move the root onto /");
    if (chroot(".") < 0) return brig_fail(err, errno, "chroot");
    if (chdir("/") < 0) return brig_fail(err, errno, "chdir /");
    brig_debug("rootfs: moved onto / and chrooted (no pivot)");
    return 0;
}

int rootfs_pivot(int rootfd, const struct brig_spec *s, bool no_pivot, struct brig_error **err)
{
    if (no_pivot) return rootfs_move_root(rootfd, err);
    return rootfs_pivot_root(rootfd, err);
}

int rootfs_finish(const struct brig_spec *s, struct brig_error **err)
{
    /* "/" by path: our root after the pivot (or chroot), the same mount an
     * open("/") would give, without the open and close */
    if (s->root.readonly || s->root.nodev) {
        /* mount_setattr changes only these bits of the root mount and keeps
         * every other flag (nosuid, locked ones in a user namespace), like a
         * MS_REMOUNT|MS_BIND with the statvfs flags. Not recursive: /dev is
         * a mount of its own (policy_enforce sets nodev only then). */
        uint64_t set = (s->root.readonly ? MOUNT_ATTR_RDONLY : 0) | (s->root.nodev ? MOUNT_ATTR_NODEV : 0);
        if (mnt_setattr_at(AT_FDCWD, "/", false, set, 0, 0, err) < 0)
            return brig_wrap(err, s->root.readonly ? "root.readonly: remount / read-only"
                                                   : "policy: remount / nodev");
        brig_debug("rootfs: /%s%s", s->root.readonly ? " read-only" : "", s->root.nodev ? " nodev" : "");
    }
    if (s->linux_cfg.has_rootfs_propagation) {
        if (mnt_set_propagation_at(AT_FDCWD, "/", s->linux_cfg.rootfs_propagation, err) < 0)
            return brig_wrap(err, "linux.rootfsPropagation");
        brig_debug("rootfs: propagation %#lx applied to /", s->linux_cfg.rootfs_propagation);
    }
    return 0;
}
