/* linux.maskedPaths and linux.readonlyPaths (config-linux.md), after the
 * pivot: paths are relative to the new "/", resolved with openat2 so a
 * symlink cannot redirect a mask, and mounted with the new mount API on
 * fds (the container's /proc may not even be mounted). */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "mount_util.h"

/* Open a listed path; 0 with *fd = -1 when it does not exist (skipped, as
 * every runtime does: the list is the same for every image). */
static int paths_open(int rootfd, const char *path, int *fd, struct brig_error **err)
{
    autoerr struct brig_error *e = NULL;
    *fd = brig_open_in_root(rootfd, path, O_PATH, 0, &e);
    if (*fd >= 0) return 0;
    if (e->errnum == ENOENT) {
        brig_debug("paths: %s does not exist, skipped", path);
        return 0;
    }
    return brig_fail(err, e->errnum, "open %s", path);
}

/* A fresh read-only, empty tmpfs, detached until attached onto destfd. */
static int paths_empty_tmpfs(struct brig_error **err)
{
    autoclose int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0) return brig_fail(err, errno, "fsopen tmpfs");
    if (fsconfig(fs, FSCONFIG_SET_FLAG, "ro", NULL, 0) < 0 ||
        fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        return brig_fail(err, errno, "create tmpfs");
    int m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
                                             MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
    if (m < 0) return brig_fail(err, errno, "fsmount tmpfs");
    return m;
}

/* The container's /dev/null, but only if it really is the null device:
 * an image or a mount could have put anything there. */
static int paths_dev_null(int rootfd, struct brig_error **err)
{
    autoclose int fd = brig_open_in_root(rootfd, "/dev/null", O_PATH, 0, err);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "stat /dev/null");
    if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
        return brig_failx(err, "/dev/null is not the null device (1:3): refusing to mask with it");
    return steal_fd(&fd);
}

static int paths_mask(int rootfd, const char *path, struct brig_error **err)
{
    autoclose int fd = -1;
    TRY(paths_open(rootfd, path, &fd, err));
    if (fd < 0) return 0;
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "stat %s", path);
    autoclose int tree = -1;
    if (S_ISDIR(st.st_mode)) {
        tree = paths_empty_tmpfs(err);
    } else {
        autoclose int null = paths_dev_null(rootfd, err);
        if (null < 0) return -1;
        tree = mnt_clone(null, false, err);
    }
    if (tree < 0) return -1;
    TRY(mnt_attach(tree, fd, err));
    brig_debug("paths: masked %s", path);
    return 0;
}

/* runc: bind onto itself, then read-only with nosuid, nodev and noexec.
 * Done on the whole subtree: a mount below a read-only path stays covered. */
static int paths_readonly(int rootfd, const char *path, struct brig_error **err)
{
    autoclose int fd = -1;
    TRY(paths_open(rootfd, path, &fd, err));
    if (fd < 0) return 0;
    autoclose int tree = mnt_clone(fd, true, err);
    if (tree < 0) return -1;
    TRY(mnt_setattr(tree, true,
                    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                    0, 0, err));
    TRY(mnt_attach(tree, fd, err));
    brig_debug("paths: %s is read-only", path);
    return 0;
}

int paths_mask_readonly(const struct brig_spec *s, struct brig_error **err)
{
    autoclose int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return brig_fail(err, errno, "open /");
    const struct brig_linux *l = &s->linux_cfg;
    for (size_t i = 0; i < l->n_readonly_paths; i++)
        if (paths_readonly(rootfd, l->readonly_paths[i], err) < 0)
            return brig_wrap(err, "linux.readonlyPaths[%zu] (%s)", i, l->readonly_paths[i]);
    for (size_t i = 0; i < l->n_masked_paths; i++)
        if (paths_mask(rootfd, l->masked_paths[i], err) < 0)
            return brig_wrap(err, "linux.maskedPaths[%zu] (%s)", i, l->masked_paths[i]);
    return 0;
}
