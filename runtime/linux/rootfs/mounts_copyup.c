/* "tmpcopyup" (crun's extension, used by podman): a tmpfs mounted over an
 * image directory starts with a copy of that directory's content. The copy
 * reads the covered directory through an fd taken before the mount and
 * never follows a symlink, so it cannot read or write outside the root. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/fs.h"
#include "../../util/log.h"
#include "../../util/strutil.h"
#include "mount_util.h"
#include "mounts_internal.h"

static int copyup_file(int sfd, int dfd, const char *name, const struct stat *st,
                       struct brig_error **err)
{
    autoclose int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (in < 0) return brig_fail(err, errno, "tmpcopyup: open %s", name);
    autoclose int out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                               st->st_mode & 07777);
    if (out < 0) return brig_fail(err, errno, "tmpcopyup: create %s", name);
    char buf[65536];
    for (;;) {
        ssize_t r = read(in, buf, sizeof(buf));
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return brig_fail(err, errno, "tmpcopyup: read %s", name);
        if (r == 0) break;
        for (ssize_t off = 0; off < r;) {
            ssize_t w = write(out, buf + off, (size_t)(r - off));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) return brig_fail(err, errno, "tmpcopyup: write %s", name);
            off += w;
        }
    }
    return 0;
}

static int copyup_dir(int sfd, int dfd, int depth, struct brig_error **err);

static int copyup_entry(int sfd, int dfd, const char *name, int depth, struct brig_error **err)
{
    struct stat st;
    if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return brig_fail(err, errno, "tmpcopyup: stat %s", name);
    if (S_ISDIR(st.st_mode)) {
        if (mkdirat(dfd, name, st.st_mode & 07777) < 0)
            return brig_fail(err, errno, "tmpcopyup: mkdir %s", name);
        autoclose int s2 = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        autoclose int d2 = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s2 < 0 || d2 < 0) return brig_fail(err, errno, "tmpcopyup: open %s", name);
        if (copyup_dir(s2, d2, depth + 1, err) < 0) return brig_wrap(err, "%s", name);
    } else if (S_ISREG(st.st_mode)) {
        TRY(copyup_file(sfd, dfd, name, &st, err));
    } else if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlinkat(sfd, name, target, sizeof(target) - 1);
        if (n < 0) return brig_fail(err, errno, "tmpcopyup: readlink %s", name);
        target[n] = '\0';
        if (symlinkat(target, dfd, name) < 0)
            return brig_fail(err, errno, "tmpcopyup: symlink %s", name);
    } else {
        if (mknodat(dfd, name, st.st_mode, st.st_rdev) < 0)
            return brig_fail(err, errno, "tmpcopyup: mknod %s", name);
    }
    if (fchownat(dfd, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
        return brig_fail(err, errno, "tmpcopyup: chown %s", name);
    if (!S_ISLNK(st.st_mode) && fchmodat(dfd, name, st.st_mode & 07777, 0) < 0)
        return brig_fail(err, errno, "tmpcopyup: chmod %s", name);
    return 0;
}

static int copyup_dir(int sfd, int dfd, int depth, struct brig_error **err)
{
    if (depth > 128) return brig_failx(err, "tmpcopyup: directory tree too deep");
    int dupfd = fcntl(sfd, F_DUPFD_CLOEXEC, 0);
    if (dupfd < 0) return brig_fail(err, errno, "tmpcopyup: dup");
    DIR *d = fdopendir(dupfd);
    if (d == NULL) {
        close(dupfd);
        return brig_fail(err, errno, "tmpcopyup: opendir");
    }
    struct dirent *de;
    int r = 0;
    while (r == 0 && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        r = copyup_entry(sfd, dfd, de->d_name, depth, err);
    }
    closedir(d);
    return r;
}

int mounts_tmpfs_copyup(int rootfd, const char *source, const char *dest,
                        const struct brig_mount_opts *o, struct brig_error **err)
{
    autoclose int under = mounts_open_dest(rootfd, dest, true, err);
    if (under < 0) return -1;
    /* a readable fd of the image's directory, kept across the mount */
    autoclose int src = openat(under, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (src < 0) return brig_fail(err, errno, "tmpcopyup: open %s", dest);
    struct stat st;
    if (fstat(src, &st) < 0) return brig_fail(err, errno, "tmpcopyup: stat %s", dest);

    struct brig_mount_opts rw = *o;
    rw.flags &= ~MS_RDONLY; /* read-only only once filled */
    rw.propagation = 0;
    TRY(mounts_fs(rootfd, source, dest, "tmpfs", &rw, false, err));
    autoclose int dst = brig_open_in_root(rootfd, dest, O_RDONLY | O_DIRECTORY, 0, err);
    if (dst < 0) return -1;
    TRY(copyup_dir(src, dst, 0, err));
    if (fchown(dst, st.st_uid, st.st_gid) < 0 || fchmod(dst, st.st_mode & 07777) < 0)
        return brig_fail(err, errno, "tmpcopyup: chown/chmod %s", dest);
    brig_debug("tmpcopyup: %s copied into its tmpfs", dest);
    if (o->flags & MS_RDONLY) TRY(mnt_setattr(dst, false, MOUNT_ATTR_RDONLY, 0, 0, err));
    return mnt_set_propagation(dst, o->propagation, err);
}
