/* linux.maskedPaths and linux.readonlyPaths (config-linux.md), after the
 * pivot: paths are relative to the new "/", resolved with openat2 so a
 * symlink cannot redirect a mask, and mounted with the new mount API on
 * fds (the container's /proc may not even be mounted). */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/fd_defer.h"
#include "../../util/fs.h"
#include "../../util/log.h"
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
    autoclose_path int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
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
    autoclose_path int fd = brig_open_in_root(rootfd, "/dev/null", O_PATH, 0, err);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "stat /dev/null");
    if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
        return brig_failx(err, "/dev/null is not the null device (1:3): refusing to mask with it");
    return steal_fd(&fd);
}

/* What the masks of one paths_mask_readonly share. */
struct paths_ctx {
    int rootfd;
    int null;       /* the verified /dev/null, opened for the first masked file */
    bool proc_fds;  /* /proc/self/fd/N names our fd N (paths_proc_is_ours) */
};

/* Whether "/proc/self/fd/N" in our (pivoted) root is our own fd N, so that
 * mount(2) can mount onto, and bind from, an fd we resolved and verified in
 * one call, as mounts.c does before the pivot with the host's /proc.
 * mounts_apply, which ran before us and succeeded, mounted a procfs at
 * /proc and verified it there (new mount id, PROC_SUPER_MAGIC) when the
 * spec has such a mount; every later entry at or under /proc passed
 * mounts_check_proc: only procfs instances or binds of procfs paths. A
 * procfs root at /proc resolves "self" to this process and "fd/N" to our
 * fd N; a procfs sub-directory bound there has no "self" (ENOENT: nothing
 * is mounted, and the fd-based way is taken). Only a config that binds
 * some procfs directory over /proc/<pid>/fd itself could change what the
 * path names, and a config needs no trick to drop its own maskedPaths.
 * Without such a mount (no /proc, or the image's own directory) the
 * fd-based new mount API is used. */
static bool paths_proc_is_ours(const struct brig_spec *s)
{
    for (size_t i = 0; i < s->n_mounts; i++) {
        const struct brig_mount *m = &s->mounts[i];
        if (m->destination == NULL || m->type == NULL || strcmp(m->type, "proc") != 0) continue;
        autofree char *dst = mnt_path_clean(m->destination);
        if (strcmp(dst, "/proc") != 0) continue;
        bool bind = false;
        for (size_t j = 0; j < m->n_options; j++)
            if (strcmp(m->options[j], "bind") == 0 || strcmp(m->options[j], "rbind") == 0) bind = true;
        if (!bind) return true;
    }
    return false;
}

/* Mask the directory fd with an empty read-only tmpfs: mount(2) onto
 * /proc/self/fd/N, 1 call, when that names fd (see paths_proc_is_ours). */
static int paths_mask_dir(struct paths_ctx *c, int fd, struct brig_error **err)
{
    if (c->proc_fds) {
        char p[64];
        if (mount("tmpfs", brig_fd_path(fd, p, sizeof(p)), "tmpfs",
                  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
            return 0;
        /* ENOENT: "self" did not resolve, nothing was mounted */
        if (errno != ENOENT) return brig_fail(err, errno, "mount tmpfs");
    }
    autoclose_path int tree = paths_empty_tmpfs(err);
    if (tree < 0) return -1;
    return mnt_attach(tree, fd, err);
}

/* Mask the file fd with a bind of the verified /dev/null, opened once. */
static int paths_mask_file(struct paths_ctx *c, int fd, struct brig_error **err)
{
    if (c->null < 0) {
        c->null = paths_dev_null(c->rootfd, err);
        if (c->null < 0) return -1;
    }
    if (c->proc_fds) {
        char src[64], dst[64];
        if (mount(brig_fd_path(c->null, src, sizeof(src)), brig_fd_path(fd, dst, sizeof(dst)),
                  NULL, MS_BIND, NULL) == 0)
            return 0;
        if (errno != ENOENT) return brig_fail(err, errno, "bind /dev/null");
    }
    autoclose_path int tree = mnt_clone(c->null, false, err);
    if (tree < 0) return -1;
    return mnt_attach(tree, fd, err);
}

static int paths_mask(struct paths_ctx *c, const char *path, struct brig_error **err)
{
    autoclose_path int fd = -1;
    TRY(paths_open(c->rootfd, path, &fd, err));
    if (fd < 0) return 0;
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "stat %s", path);
    TRY(S_ISDIR(st.st_mode) ? paths_mask_dir(c, fd, err) : paths_mask_file(c, fd, err));
    brig_debug("paths: masked %s", path);
    return 0;
}

/* runc: bind onto itself, then read-only with nosuid, nodev and noexec.
 * Done on the whole subtree: a mount below a read-only path stays covered. */
static int paths_readonly(int rootfd, const char *path, struct brig_error **err)
{
    autoclose_path int fd = -1;
    TRY(paths_open(rootfd, path, &fd, err));
    if (fd < 0) return 0;
    autoclose_path int tree = mnt_clone(fd, true, err);
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
    autoclose_path int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return brig_fail(err, errno, "open /");
    const struct brig_linux *l = &s->linux_cfg;
    for (size_t i = 0; i < l->n_readonly_paths; i++)
        if (paths_readonly(rootfd, l->readonly_paths[i], err) < 0)
            return brig_wrap(err, "linux.readonlyPaths[%zu] (%s)", i, l->readonly_paths[i]);
    struct paths_ctx c = { .rootfd = rootfd, .null = -1, .proc_fds = paths_proc_is_ours(s) };
    int r = 0;
    for (size_t i = 0; r == 0 && i < l->n_masked_paths; i++)
        if (paths_mask(&c, l->masked_paths[i], err) < 0)
            r = brig_wrap(err, "linux.maskedPaths[%zu] (%s)", i, l->masked_paths[i]);
    brig_fd_defer_closep(&c.null);
    return r;
}
