/* Paths inside the container root, resolved only through openat2(2) with
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS: ".." and absolute symlinks are
 * clamped at the root fd and /proc magic links are refused, so nothing an
 * image contains can make us open, create or mount something on the host. */
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd_defer.h"
#include "log.h"
#include "strutil.h"

/* glibc 2.36 has no openat2() wrapper. extra: more RESOLVE_* flags. */
static int fsroot_openat2_res(int dirfd, const char *path, int flags, mode_t mode, uint64_t extra)
{
    struct open_how how = {
        .flags = (uint64_t)(flags | O_CLOEXEC),
        /* openat2 rejects a mode without O_CREAT/O_TMPFILE */
        .mode = (flags & (O_CREAT | __O_TMPFILE)) ? mode : 0,
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | extra,
    };
    /* "" would need AT_EMPTY_PATH semantics; "." is the root itself */
    if (path[0] == '\0') path = ".";
    for (int tries = 0;; tries++) {
        int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        /* EAGAIN: a concurrent rename/mount raced the scoped lookup; the
         * kernel asks us to retry rather than risk an escape. */
        if (fd < 0 && errno == EAGAIN && tries < 32) continue;
        return fd;
    }
}

static int fsroot_openat2(int dirfd, const char *path, int flags, mode_t mode)
{
    return fsroot_openat2_res(dirfd, path, flags, mode, 0);
}

/* A directory first without following any symlink (RESOLVE_NO_SYMLINKS:
 * then *plain, and its in-root path is path, lexically cleaned), and only
 * if a symlink was in the way (ELOOP), again the usual way, which costs one
 * more call only for paths through a symlink. nofollow: O_NOFOLLOW, so a
 * symlink as the last component fails (ENOTDIR with O_DIRECTORY). */
static int fsroot_open_dir(int rootfd, const char *path, int nofollow, bool *plain)
{
    *plain = false;
    int fd = fsroot_openat2_res(rootfd, path, O_PATH | O_DIRECTORY, 0, RESOLVE_NO_SYMLINKS);
    if (fd >= 0) {
        *plain = true;
        return fd;
    }
    if (errno != ELOOP) return -1;
    return fsroot_openat2(rootfd, path, O_PATH | O_DIRECTORY | nofollow, 0);
}

int brig_open_in_root_errno(int rootfd, const char *path, int flags, mode_t mode)
{
    return fsroot_openat2(rootfd, path, flags, mode);
}

int brig_open_exact_in_root(int rootfd, const char *path, dev_t dev, ino_t ino)
{
    autoclose int fd = fsroot_openat2_res(rootfd, path, O_PATH, 0, RESOLVE_NO_SYMLINKS);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != dev || st.st_ino != ino) return -1;
    return steal_fd(&fd);
}

int brig_open_in_root(int rootfd, const char *path, int flags, mode_t mode,
                      struct brig_error **err)
{
    int fd = fsroot_openat2(rootfd, path, flags, mode);
    if (fd < 0) return brig_fail(err, errno, "open %s", path);
    return fd;
}

/* Next component of *p (skipping slashes); returns its length, 0 at end. */
static size_t fsroot_next_component(const char **p)
{
    while (**p == '/') (*p)++;
    size_t n = strcspn(*p, "/");
    return n;
}

/* Symlinks followed to make a dangling one's target, at most (the
 * kernel's MAXSYMLINKS): a chain or a loop of them ends with ELOOP. */
#define FSROOT_MAX_HOPS 40

/* name in dirfd is a dangling symlink, reached as the given path dir (""
 * for the root): the path of its target followed by rest, which resolves
 * from the root as the kernel resolves the link (dir, then the target;
 * an absolute target from the root itself, ".." clamped there). Only a
 * string: whatever it names is resolved and made inside the root again. */
static char *fsroot_link_target(int dirfd, const char *name, const char *dir, const char *rest,
                                int hops, struct brig_error **err)
{
    if (hops >= FSROOT_MAX_HOPS) {
        brig_fail(err, ELOOP, "%s/%s", dir, name);
        return NULL;
    }
    char t[PATH_MAX];
    ssize_t n = readlinkat(dirfd, name, t, sizeof(t) - 1);
    if (n <= 0) {
        brig_fail(err, n < 0 ? errno : ENOENT, "readlink %s/%s", dir, name);
        return NULL;
    }
    t[n] = '\0';
    while (*rest == '/') rest++;
    const char *sep = *rest != '\0' ? "/" : "";
    char *out = t[0] == '/' ? brig_asprintf("%s%s%s", t, sep, rest)
                            : brig_asprintf("%s/%s%s%s", dir, t, sep, rest);
    brig_debug("in root: %s/%s is a dangling symlink, making its target %s", dir, name, out);
    return out;
}

static int fsroot_mkdir(int rootfd, const char *path, mode_t mode, int nofollow, bool *plain,
                        int hops, struct brig_error **err);

/* The usual missing mount point has a parent that exists (/dev/pts,
 * /sys/fs/cgroup/pids): create the last component there and resolve the
 * whole path again from the root, as the walk below does, with 3 openat2
 * instead of one per component. -2 when the parent is missing too. */
static int fsroot_mkdir_last(int rootfd, const char *path, mode_t mode, int nofollow,
                             bool *plain, int hops, struct brig_error **err)
{
    const char *last = NULL;
    size_t last_n = 0;
    for (const char *q = path;;) {
        size_t n = fsroot_next_component(&q);
        if (n == 0) break;
        last = q;
        last_n = n;
        q += n;
    }
    if (last == NULL || last_n > NAME_MAX || (last_n == 1 && last[0] == '.') ||
        (last_n == 2 && last[0] == '.' && last[1] == '.'))
        return -2;
    autofree char *parent = strndup(path, (size_t)(last - path));
    if (parent == NULL) return -2;
    bool parent_plain;
    autoclose_path int pfd = fsroot_open_dir(rootfd, parent, 0, &parent_plain);
    if (pfd < 0) return -2;
    char comp[NAME_MAX + 1];
    memcpy(comp, last, last_n);
    comp[last_n] = '\0';
    if (mkdirat(pfd, comp, mode) < 0 && errno != EEXIST) return brig_fail(err, errno, "mkdir %s", path);
    brig_debug("mkdir in root: %s", path);
    /* through a symlink-free parent, the symlink-free way first */
    int fd = parent_plain ? fsroot_open_dir(rootfd, path, nofollow, plain)
                          : fsroot_openat2(rootfd, path, O_PATH | O_DIRECTORY | nofollow, 0);
    /* EEXIST then ENOENT: a dangling symlink; creating its target means
     * following it: refused, unless asked (hops >= 0), and then inside
     * the root (as the walk does). */
    if (fd < 0 && errno == ENOENT && hops >= 0) {
        autofree char *target = fsroot_link_target(pfd, comp, parent, "", hops, err);
        if (target == NULL) return -1;
        fd = fsroot_mkdir(rootfd, target, mode, nofollow, plain, hops + 1, err);
        *plain = false;
        return fd;
    }
    if (fd < 0 && errno == ENOENT) return brig_failx(err, "mkdir %s: is a dangling symlink", path);
    if (fd < 0) return brig_fail(err, errno, "mkdir %s", path);
    return fd;
}

/* hops < 0: a dangling symlink on the way is refused; else its target is
 * made (hops counts the links followed so far). */
static int fsroot_mkdir(int rootfd, const char *path, mode_t mode, int nofollow, bool *plain,
                        int hops, struct brig_error **err)
{
    /* cur is always the fully resolved (in-root) prefix walked so far; a new
     * directory is only ever created with mkdirat() on it, which never
     * follows a symlink, and the prefix is then re-resolved from the root so
     * that a symlink component is scoped by RESOLVE_IN_ROOT like the kernel
     * would scope it for the container. */
    /* Usually the whole path exists already: one openat2, resolved exactly
     * as the walk below would resolve it, instead of one per component. */
    int whole = fsroot_open_dir(rootfd, path, nofollow, plain);
    if (whole >= 0) return whole;
    if (errno == ENOENT) {
        int fd = fsroot_mkdir_last(rootfd, path, mode, nofollow, plain, hops, err);
        if (fd != -2) return fd;
    }
    autoclose_path int cur = fsroot_openat2(rootfd, ".", O_PATH | O_DIRECTORY, 0);
    if (cur < 0) return brig_fail(err, errno, "open root");
    autofree char *prefix = brig_calloc(1, strlen(path) + 2);
    size_t plen = 0;
    const char *p = path;
    for (;;) {
        size_t n = fsroot_next_component(&p);
        if (n == 0) break;
        char comp[NAME_MAX + 1];
        if (n > NAME_MAX) return brig_fail(err, ENAMETOOLONG, "mkdir %s", path);
        memcpy(comp, p, n);
        comp[n] = '\0';
        p += n;
        size_t parent_len = plen;
        if (plen > 0) prefix[plen++] = '/';
        memcpy(prefix + plen, comp, n + 1);
        plen += n;

        const char *rest = p;
        int last = fsroot_next_component(&rest) == 0 ? nofollow : 0;
        int fd = fsroot_openat2(rootfd, prefix, O_PATH | O_DIRECTORY | last, 0);
        if (fd < 0 && errno == ENOENT && strcmp(comp, ".") != 0 && strcmp(comp, "..") != 0) {
            if (mkdirat(cur, comp, mode) < 0 && errno != EEXIST)
                return brig_fail(err, errno, "mkdir %s", prefix);
            brig_debug("mkdir in root: %s", prefix);
            fd = fsroot_openat2(rootfd, prefix, O_PATH | O_DIRECTORY | last, 0);
            /* EEXIST from mkdirat then ENOENT here: a dangling symlink.
             * Creating its target means following it: refused unless
             * asked, and then from the root again. */
            if (fd < 0 && errno == ENOENT && hops >= 0) {
                autofree char *dir = strndup(prefix, parent_len);
                if (dir == NULL) abort();
                autofree char *target = fsroot_link_target(cur, comp, dir, p, hops, err);
                if (target == NULL) return -1;
                fd = fsroot_mkdir(rootfd, target, mode, nofollow, plain, hops + 1, err);
                *plain = false;
                return fd;
            }
            if (fd < 0 && errno == ENOENT)
                return brig_failx(err, "mkdir %s: is a dangling symlink", prefix);
        }
        if (fd < 0) return brig_fail(err, errno, "mkdir %s", prefix);
        close(cur);
        cur = fd;
    }
    *plain = false;
    return steal_fd(&cur);
}

int brig_mkdir_in_root_ex(int rootfd, const char *path, mode_t mode, int flags, bool *plain,
                          struct brig_error **err)
{
    bool ignored;
    if (plain == NULL) plain = &ignored;
    int hops = flags & BRIG_IN_ROOT_MAKE_TARGET ? 0 : -1;
    if (!(flags & BRIG_IN_ROOT_NOFOLLOW)) return fsroot_mkdir(rootfd, path, mode, 0, plain, hops, err);
    autoerr struct brig_error *e = NULL;
    int fd = fsroot_mkdir(rootfd, path, mode, O_NOFOLLOW, plain, hops, &e);
    if (fd >= 0) return fd;
    /* O_NOFOLLOW|O_DIRECTORY fails with ENOTDIR on a symlink (ELOOP with
     * RESOLVE_NO_SYMLINKS): only then look at what the last component is */
    if (e->errnum == ENOTDIR || e->errnum == ELOOP) {
        autoclose_path int lfd = fsroot_openat2(rootfd, path, O_PATH | O_NOFOLLOW, 0);
        struct stat st;
        if (lfd >= 0 && fstat(lfd, &st) == 0 && S_ISLNK(st.st_mode)) {
            brig_failx(err, "%s is a symlink", path);
            if (err != NULL && *err != NULL) (*err)->errnum = ELOOP;
            return -1;
        }
    }
    if (err != NULL) *err = steal_ptr(&e);
    return -1;
}

int brig_mkdir_in_root(int rootfd, const char *path, mode_t mode, struct brig_error **err)
{
    return brig_mkdir_in_root_ex(rootfd, path, mode, 0, NULL, err);
}

static int fsroot_mkfile(int rootfd, const char *path, mode_t mode, int hops, struct brig_error **err)
{
    int fd = fsroot_openat2(rootfd, path, O_PATH, 0);
    if (fd < 0 && errno != ENOENT) return brig_fail(err, errno, "open %s", path);
    if (fd < 0) {
        /* split into parent and last component */
        autofree char *dir = brig_strdup(path);
        size_t len = strlen(dir);
        while (len > 1 && dir[len - 1] == '/') dir[--len] = '\0';
        char *slash = strrchr(dir, '/');
        autofree char *name = brig_strdup(slash != NULL ? slash + 1 : dir);
        if (slash != NULL)
            slash[1] = '\0'; /* keep "/" for a file directly under the root */
        else
            free(steal_ptr(&dir)), dir = brig_strdup(".");
        if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            return brig_failx(err, "create %s: not a file name", path);
        bool plain;
        autoclose_path int parent = fsroot_mkdir(rootfd, dir, 0755, 0, &plain, hops, err);
        if (parent < 0) return -1;
        /* O_CREAT|O_EXCL never follows a symlink in the last component */
        int wfd = openat(parent, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (wfd < 0 && errno != EEXIST) return brig_fail(err, errno, "create %s", path);
        if (wfd >= 0) {
            brig_debug("created file in root: %s", path);
            close(wfd);
        }
        fd = fsroot_openat2(rootfd, path, O_PATH, 0);
        if (fd < 0 && errno == ENOENT && hops >= 0) {
            autofree char *target = fsroot_link_target(parent, name, dir, "", hops, err);
            if (target == NULL) return -1;
            return fsroot_mkfile(rootfd, target, mode, hops + 1, err);
        }
        if (fd < 0 && errno == ENOENT)
            return brig_failx(err, "create %s: is a dangling symlink", path);
        if (fd < 0) return brig_fail(err, errno, "open %s", path);
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return brig_fail(err, e, "stat %s", path);
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return brig_fail(err, EISDIR, "create file %s", path);
    }
    return fd;
}

int brig_mkfile_in_root(int rootfd, const char *path, mode_t mode, struct brig_error **err)
{
    return fsroot_mkfile(rootfd, path, mode, -1, err);
}

int brig_mkfile_in_root_ex(int rootfd, const char *path, mode_t mode, int flags, struct brig_error **err)
{
    return fsroot_mkfile(rootfd, path, mode, flags & BRIG_IN_ROOT_MAKE_TARGET ? 0 : -1, err);
}
