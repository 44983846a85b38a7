/* One layer (a tar, plain or compressed, read by libarchive) applied to
 * the scratch root, following the image-spec's layer rules: whiteouts,
 * opaque directories, an entry replacing what a lower layer had there.
 *
 * Every create, link and unlink is done with *at() calls on the fd of the
 * entry's parent directory, and that fd comes only from openat2(rootfd,
 * parent, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS): a symlink made by an
 * earlier entry or layer ("etc -> /etc", "x -> ../../..") is followed as
 * the container would follow it, inside the root. The last component is
 * never followed (O_NOFOLLOW, O_EXCL, AT_SYMLINK_NOFOLLOW, unlink first),
 * so nothing is ever written outside rootfd. Names with ".." or a leading
 * "/" never get this far (judge.c). */
#include "import.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/rootfs.h"
#include "pathset.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/strutil.h"

struct layer_ctx {
    int rootfd;
    struct archive *a;
    struct layer_limits *lim;
    uint64_t bytes_before;     /* lim->bytes when this layer started */
    bool root;                 /* euid 0: ownership and devices can be applied */
    /* the last parent directory opened, reused while nothing was removed */
    char cached[PATH_MAX];
    int cached_fd;
    struct pathset seen;       /* paths this layer wrote */
    struct pathset opaque;     /* directories this layer made opaque */
};

static int layer_openat2(int dirfd, const char *path, int flags)
{
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                           .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
    for (int tries = 0;; tries++) {
        int fd = (int)syscall(SYS_openat2, dirfd, path[0] ? path : ".", &how, sizeof(how));
        if (fd < 0 && errno == EAGAIN && tries < 32) continue;
        return fd;
    }
}

static void layer_forget_parent(struct layer_ctx *c)
{
    if (c->cached_fd >= 0) close(c->cached_fd);
    c->cached_fd = -1;
    c->cached[0] = '\0';
}

/* The parent directory of clean path p, resolved inside the root (made,
 * 0755, when missing and create is set); *base points at p's last
 * component. Returns an fd owned by the cache (do not close), or -1 with
 * errno ENOENT when missing and !create. */
static int layer_parent(struct layer_ctx *c, const char *p, const char **base, bool create,
                        struct brig_error **err)
{
    const char *slash = strrchr(p, '/');
    *base = slash != NULL ? slash + 1 : p;
    size_t dlen = slash != NULL ? (size_t)(slash - p) : 0;
    if (dlen == 0) return c->rootfd;
    if (c->cached_fd >= 0 && strlen(c->cached) == dlen && memcmp(c->cached, p, dlen) == 0)
        return c->cached_fd;
    char dir[PATH_MAX];
    memcpy(dir, p, dlen);
    dir[dlen] = '\0';
    int fd = layer_openat2(c->rootfd, dir, O_PATH | O_DIRECTORY);
    if (fd < 0 && errno == ENOENT && create) {
        /* Each directory made here is an inode as much as an entry is: one
         * entry under a thousand missing parents must not make a thousand
         * inodes past --max-files. Counted as every component of dir (at
         * least as many as are made). */
        uint64_t parts = 1;
        for (const char *q = dir; *q; q++) parts += *q == '/';
        c->lim->files += parts;
        if (c->lim->files > c->lim->max_files)
            return brig_failx(err, "more than --max-files (%llu) entries (a directory made for an "
                              "entry's missing parents counts as one)", (unsigned long long)c->lim->max_files);
        autoerr struct brig_error *e = NULL;
        fd = brig_mkdir_in_root(c->rootfd, dir, 0755, &e);
        if (fd < 0) return brig_failx(err, "%s: %s", p, e->msg);
    }
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR) && !create) {
        errno = ENOENT;
        return -1;
    }
    if (fd < 0) return brig_fail(err, errno, "%s: parent directory", p);
    layer_forget_parent(c);
    memcpy(c->cached, dir, dlen + 1);
    c->cached_fd = fd;
    return fd;
}

/* Make room for a new entry at pfd/base: what a lower layer had there
 * goes, unless both are directories (1: keep it). */
static int layer_clear(struct layer_ctx *c, int pfd, const char *base, bool want_dir,
                       struct brig_error **err)
{
    struct stat st;
    if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno == ENOENT) return 0;
        return brig_fail(err, errno, "stat %s", base);
    }
    if (S_ISDIR(st.st_mode) && want_dir) return 1;
    int r = S_ISDIR(st.st_mode) ? brig_rm_rf_at(pfd, base, err)
                                : (unlinkat(pfd, base, 0) < 0 ? brig_fail(err, errno, "unlink %s", base) : 0);
    /* the cached directory keeps its path when one of its children goes;
     * a path cached elsewhere may have led through what went */
    if (pfd != c->cached_fd) layer_forget_parent(c);
    return r;
}

static int layer_xattrs(struct layer_ctx *c, int fd, struct archive_entry *e, struct brig_error **err)
{
    const char *name;
    const void *value;
    size_t size;
    archive_entry_xattr_reset(e);
    while (archive_entry_xattr_next(e, &name, &value, &size) == ARCHIVE_OK) {
        /* file capabilities are privileges, as setuid is */
        bool caps = strcmp(name, "security.capability") == 0;
        if (caps && !(c->lim->flags & JUDGE_KEEP_SETUID)) {
            c->lim->stripped++;
            continue;
        }
        if (!caps && strncmp(name, "user.", 5) != 0) continue;   /* trusted.*, security.selinux ... */
        if (fsetxattr(fd, name, value, size, 0) < 0 && errno != EOPNOTSUPP)
            return brig_fail(err, errno, "xattr %s", name);
    }
    return 0;
}

/* Ownership, mode, xattrs, mtime of what fd is (a file or directory). */
static int layer_meta_fd(struct layer_ctx *c, int fd, struct archive_entry *e, mode_t mode,
                         struct brig_error **err)
{
    if (c->root && fchown(fd, (uid_t)archive_entry_uid(e), (gid_t)archive_entry_gid(e)) < 0)
        return brig_fail(err, errno, "chown");
    /* after chown, which clears setuid bits */
    mode_t perm = mode & 07777;
    if (!c->root && S_ISDIR(mode)) perm |= S_IRWXU;   /* rootless: later entries go in */
    if (fchmod(fd, perm) < 0) return brig_fail(err, errno, "chmod");
    TRY(layer_xattrs(c, fd, e, err));
    if (!S_ISDIR(mode)) {
        struct timespec ts[2] = {{archive_entry_mtime(e), archive_entry_mtime_nsec(e)},
                                 {archive_entry_mtime(e), archive_entry_mtime_nsec(e)}};
        if (futimens(fd, ts) < 0) return brig_fail(err, errno, "utimes");
    }
    return 0;
}

static int layer_count_bytes(struct layer_ctx *c, struct brig_error **err)
{
    c->lim->bytes = c->bytes_before + (uint64_t)archive_filter_bytes(c->a, 0);
    if (c->lim->bytes > c->lim->max_bytes)
        return brig_failx(err, "more than --max-size (%llu bytes) once decompressed",
                          (unsigned long long)c->lim->max_bytes);
    return 0;
}

static int layer_file(struct layer_ctx *c, int pfd, const char *base, struct archive_entry *e,
                      mode_t mode, struct brig_error **err)
{
    int64_t size = archive_entry_size(e);
    if (size < 0 || (uint64_t)size > c->lim->max_bytes - c->lim->bytes)
        return brig_failx(err, "more than --max-size (%llu bytes) once decompressed",
                          (unsigned long long)c->lim->max_bytes);
    TRY(layer_clear(c, pfd, base, false, err));
    autoclose int fd = openat(pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return brig_fail(err, errno, "create");
    const void *buf;
    size_t len;
    la_int64_t off;
    for (;;) {
        int r = archive_read_data_block(c->a, &buf, &len, &off);
        if (r == ARCHIVE_EOF) break;
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
            return brig_failx(err, "truncated or corrupt layer: %s", archive_error_string(c->a));
        TRY(layer_count_bytes(c, err));
        if (off < 0 || off > size || (uint64_t)len > (uint64_t)(size - off))
            return brig_failx(err, "data past the entry's size");
        for (size_t done = 0; done < len;) {
            ssize_t w = pwrite(fd, (const char *)buf + done, len - done, off + (off_t)done);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) return brig_fail(err, errno, "write");
            done += (size_t)w;
        }
    }
    if (ftruncate(fd, size) < 0) return brig_fail(err, errno, "truncate");   /* a sparse tail */
    return layer_meta_fd(c, fd, e, mode, err);
}

static int layer_dir(struct layer_ctx *c, int pfd, const char *base, struct archive_entry *e,
                     mode_t mode, struct brig_error **err)
{
    int kept = layer_clear(c, pfd, base, true, err);
    if (kept < 0) return -1;
    if (!kept && mkdirat(pfd, base, 0700) < 0) return brig_fail(err, errno, "mkdir");
    autoclose int fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "open");
    return layer_meta_fd(c, fd, e, mode, err);
}

static int layer_meta_at(struct layer_ctx *c, int pfd, const char *base, struct archive_entry *e,
                         bool symlink, mode_t mode, struct brig_error **err)
{
    if (c->root && fchownat(pfd, base, (uid_t)archive_entry_uid(e), (gid_t)archive_entry_gid(e),
                            AT_SYMLINK_NOFOLLOW) < 0)
        return brig_fail(err, errno, "chown");
    /* what was just made by mknodat, never a symlink, in a root only we write */
    if (!symlink && fchmodat(pfd, base, mode & 07777, 0) < 0) return brig_fail(err, errno, "chmod");
    struct timespec ts[2] = {{archive_entry_mtime(e), archive_entry_mtime_nsec(e)},
                             {archive_entry_mtime(e), archive_entry_mtime_nsec(e)}};
    if (utimensat(pfd, base, ts, AT_SYMLINK_NOFOLLOW) < 0) return brig_fail(err, errno, "utimes");
    return 0;
}

static int layer_symlink(struct layer_ctx *c, int pfd, const char *base, struct archive_entry *e,
                         struct brig_error **err)
{
    /* the target is only text: it is resolved later, inside the root */
    const char *target = archive_entry_symlink(e);
    if (target == NULL || target[0] == '\0') return brig_failx(err, "symlink without a target");
    TRY(layer_clear(c, pfd, base, false, err));
    if (symlinkat(target, pfd, base) < 0) return brig_fail(err, errno, "symlink");
    return layer_meta_at(c, pfd, base, e, true, 0, err);
}

static int layer_node(struct layer_ctx *c, int pfd, const char *base, struct archive_entry *e,
                      mode_t mode, struct brig_error **err)
{
    TRY(layer_clear(c, pfd, base, false, err));
    if (mknodat(pfd, base, mode, S_ISFIFO(mode) ? 0 : archive_entry_rdev(e)) < 0)
        return brig_fail(err, errno, "mknod");
    return layer_meta_at(c, pfd, base, e, false, mode, err);
}

/* A hard link to an earlier entry: both ends resolved inside the root. */
static int layer_hardlink(struct layer_ctx *c, const char *path, const char *target_name,
                          struct brig_error **err)
{
    char target[PATH_MAX];
    if (judge_entry_path(target_name, target, sizeof(target), err) < 0) return brig_wrap(err, "hard link");
    if (strcmp(target, path) == 0 || target[0] == '\0') return brig_failx(err, "hard link to itself");
    const char *tslash = strrchr(target, '/');
    const char *tbase = tslash != NULL ? tslash + 1 : target;
    autofree char *tdir = strndup(target, tslash != NULL ? (size_t)(tslash - target) : 0);
    autoclose int tpfd = layer_openat2(c->rootfd, tdir, O_PATH | O_DIRECTORY);
    if (tpfd < 0) return brig_fail(err, errno, "hard link to %s", target);
    struct stat st;
    if (fstatat(tpfd, tbase, &st, AT_SYMLINK_NOFOLLOW) < 0) return brig_fail(err, errno, "hard link to %s", target);
    if (S_ISDIR(st.st_mode)) return brig_failx(err, "hard link to a directory (%s)", target);
    const char *base;
    int pfd = layer_parent(c, path, &base, true, err);
    if (pfd < 0) return -1;
    TRY(layer_clear(c, pfd, base, false, err));
    if (linkat(tpfd, tbase, pfd, base, 0) < 0) return brig_fail(err, errno, "hard link to %s", target);
    return 0;
}

/* A whiteout: the lower layers' victim goes (nothing if it is absent). */
static int layer_whiteout(struct layer_ctx *c, const char *victim, struct brig_error **err)
{
    const char *base;
    int pfd = layer_parent(c, victim, &base, false, err);
    if (pfd < 0) return errno == ENOENT ? 0 : -1;
    autoclose int keep = fcntl(pfd, F_DUPFD_CLOEXEC, 3);
    if (keep < 0) return brig_fail(err, errno, "dup");
    layer_forget_parent(c);   /* a directory may go */
    return brig_rm_rf_at(keep, base, err);
}

/* Below an opaque directory, what this layer did not write goes. */
static int layer_prune(struct layer_ctx *c, int dfd, const char *prefix, struct brig_error **err)
{
    int dup_fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dup_fd < 0) return brig_fail(err, errno, "open %s", prefix);
    DIR *d = fdopendir(dup_fd);
    if (d == NULL) {
        close(dup_fd);
        return brig_fail(err, errno, "opendir %s", prefix);
    }
    int rc = 0;
    struct dirent *de;
    while (rc == 0 && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        autofree char *p = prefix[0] ? brig_asprintf("%s/%s", prefix, de->d_name) : brig_strdup(de->d_name);
        if (!pathset_has(&c->seen, p)) {
            rc = brig_rm_rf_at(dirfd(d), de->d_name, err);
            continue;
        }
        autoclose int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) rc = layer_prune(c, sub, p, err);
    }
    closedir(d);
    return rc;
}

static int layer_apply_opaque(struct layer_ctx *c, struct brig_error **err)
{
    layer_forget_parent(c);
    for (size_t i = 0; i < c->opaque.cap; i++) {
        const char *dir = c->opaque.slots[i];
        if (dir == NULL) continue;
        autoclose int dfd = layer_openat2(c->rootfd, dir, O_RDONLY | O_DIRECTORY);
        if (dfd < 0 && (errno == ENOENT || errno == ENOTDIR)) continue;
        if (dfd < 0) return brig_fail(err, errno, "opaque directory %s", dir);
        if (layer_prune(c, dfd, dir, err) < 0) return brig_wrap(err, "opaque directory %s", dir);
    }
    return 0;
}

/* path and its ancestors: under an opaque directory, a lower layer's
 * directory that this layer writes into stays (its other entries go). */
static void layer_seen(struct layer_ctx *c, const char *path)
{
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s", path);
    for (;;) {
        pathset_add(&c->seen, p);
        char *slash = strrchr(p, '/');
        if (slash == NULL) break;
        *slash = '\0';
    }
}

static int layer_entry(struct layer_ctx *c, struct archive_entry *e, struct brig_error **err)
{
    if (++c->lim->files > c->lim->max_files)
        return brig_failx(err, "more than --max-files (%llu) entries", (unsigned long long)c->lim->max_files);
    char path[PATH_MAX], victim[PATH_MAX];
    TRY(judge_entry_path(archive_entry_pathname(e), path, sizeof(path), err));
    enum judge_wh wh = JUDGE_WH_NONE;
    if (!(c->lim->flags & JUDGE_PLAIN_TAR)) TRY(judge_whiteout(path, &wh, victim, sizeof(victim), err));
    switch (wh) {
    case JUDGE_WH_FILE:
        if (layer_whiteout(c, victim, err) < 0) return brig_wrap(err, "whiteout %s", path);
        return 0;
    case JUDGE_WH_OPAQUE:
        pathset_add(&c->opaque, victim);
        return 0;
    case JUDGE_WH_IGNORE:
        return 0;
    case JUDGE_WH_NONE:
        break;
    }
    if (path[0] == '\0') return 0;   /* "./": the root is ours */
    layer_seen(c, path);
    const char *hl = archive_entry_hardlink(e);
    if (hl != NULL) {
        if (layer_hardlink(c, path, hl, err) < 0) return brig_wrap(err, "%s", path);
        return 0;
    }
    mode_t mode;
    bool stripped;
    if (judge_mode(archive_entry_mode(e), c->lim->flags, &mode, &stripped, err) < 0)
        return brig_wrap(err, "%s", path);
    if (stripped) c->lim->stripped++;
    if ((S_ISCHR(mode) || S_ISBLK(mode)) && !c->root)
        return brig_failx(err, "%s: a device node needs root", path);
    const char *base;
    int pfd = layer_parent(c, path, &base, true, err);
    if (pfd < 0) return -1;
    int r;
    switch (mode & S_IFMT) {
    case S_IFREG: r = layer_file(c, pfd, base, e, mode, err); break;
    case S_IFDIR: r = layer_dir(c, pfd, base, e, mode, err); break;
    case S_IFLNK: r = layer_symlink(c, pfd, base, e, err); break;
    default: r = layer_node(c, pfd, base, e, mode, err); break;
    }
    if (r < 0) return brig_wrap(err, "%s", path);
    return 0;
}

int layer_apply(int rootfd, int fd, struct layer_limits *lim, struct brig_error **err)
{
    struct layer_ctx c = {.rootfd = rootfd, .lim = lim, .bytes_before = lim->bytes,
                          .root = geteuid() == 0, .cached_fd = -1};
    c.a = import_tar_reader();
    if (c.a == NULL) return brig_failx(err, "libarchive: out of memory");
    int rc = -1;
    if (archive_read_open_fd(c.a, fd, 1 << 20) != ARCHIVE_OK) {
        brig_failx(err, "truncated or corrupt layer (a tar, plain, gzip, zstd, xz or bzip2, was expected): %s",
                   archive_error_string(c.a));
        goto out;
    }
    for (;;) {
        struct archive_entry *e;
        int r = archive_read_next_header(c.a, &e);
        if (r == ARCHIVE_EOF) break;
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
            brig_failx(err, "truncated or corrupt layer: %s", archive_error_string(c.a));
            goto out;
        }
        if (layer_count_bytes(&c, err) < 0 || layer_entry(&c, e, err) < 0) goto out;
        if (lim->progress)
            lim->progress->fn(lim->progress->arg, lim->in_done + (uint64_t)archive_filter_bytes(c.a, -1),
                              lim->in_total, lim->files, lim->bytes);
    }
    lim->in_done += (uint64_t)archive_filter_bytes(c.a, -1);
    if (layer_count_bytes(&c, err) < 0 || layer_apply_opaque(&c, err) < 0) goto out;
    rc = 0;
out:
    layer_forget_parent(&c);
    pathset_clear(&c.seen);
    pathset_clear(&c.opaque);
    archive_read_free(c.a);
    return rc;
}
