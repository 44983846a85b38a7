#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"

/* Read what fd (open for reading) holds, at most max bytes. */
int brig_read_fd(int fd, const char *name, size_t max, char **out, size_t *len, struct brig_error **err)
{
    size_t cap = 4096, n = 0;
    brig_noheap_check("brig_read_file");
    autofree char *buf = malloc(cap);
    if (buf == NULL) abort();
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > max) return brig_fail(err, EFBIG, "read %s", name);
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (nb == NULL) abort();
            buf = nb;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0) {
            if (errno == EINTR) continue;
            return brig_fail(err, errno, "read %s", name);
        }
        if (r == 0) break;
        n += (size_t)r;
        if (n > max) return brig_fail(err, EFBIG, "read %s", name);
    }
    buf[n] = '\0';
    if (len != NULL) *len = n;
    *out = steal_ptr(&buf);
    return 0;
}

int brig_read_file_at(int dirfd, const char *name, size_t max, char **out, size_t *len,
                      struct brig_error **err)
{
    autoclose int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return brig_fail(err, errno, "open %s", name);
    return brig_read_fd(fd, name, max, out, len, err);
}

/* A name is judged before anything is opened for reading: O_PATH opens a
 * fifo without waiting for a writer and a device without calling its
 * driver, and O_NOFOLLOW opens a symlink itself. Only a regular file (or,
 * when asked, a directory) is then reopened for reading, through that fd
 * (the same inode, whatever the name means by then). */
static int fs_reopen_input(int pfd, const char *name, int flags, size_t max, struct stat *stp,
                           struct brig_error **err)
{
    struct stat st;
    if (fstat(pfd, &st) < 0) return brig_fail(err, errno, "stat %s", name);
    if (S_ISLNK(st.st_mode)) return brig_failx(err, "%s: a symlink, refusing to follow it", name);
    bool dir = (flags & BRIG_INPUT_DIR) && S_ISDIR(st.st_mode);
    if (!S_ISREG(st.st_mode) && !dir)
        return brig_failx(err, "%s: not a regular file%s, refusing to read it", name,
                          S_ISFIFO(st.st_mode) ? " (a fifo)" : S_ISDIR(st.st_mode) ? " (a directory)"
                          : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? " (a device)"
                          : S_ISSOCK(st.st_mode) ? " (a socket)" : "");
    /* st_size says nothing of what a read returns (procfs, a file still
     * growing): the read itself stops past max. This only saves reading
     * max bytes of a file that is known to be larger. */
    if (!dir && (uint64_t)st.st_size > max) return brig_fail(err, EFBIG, "read %s", name);
    char p[32];
    int fd = open(brig_fd_path(pfd, p, sizeof(p)), O_RDONLY | O_CLOEXEC | O_NOCTTY | (dir ? O_DIRECTORY : 0));
    if (fd < 0) return brig_fail(err, errno, "open %s", name);
    if (stp != NULL) *stp = st;
    return fd;
}

int brig_open_input(int dirfd, const char *name, int flags, struct stat *stp, struct brig_error **err)
{
    autoclose int pfd = flags & BRIG_INPUT_IN_ROOT ? brig_open_in_root_errno(dirfd, name, O_PATH, 0)
                        : openat(dirfd, name, O_PATH | (flags & BRIG_INPUT_NOFOLLOW ? O_NOFOLLOW : 0) | O_CLOEXEC);
    if (pfd < 0) return brig_fail(err, errno, "open %s", name);
    return fs_reopen_input(pfd, name, flags, SIZE_MAX, stp, err);
}

int brig_read_regular_fd(int pfd, const char *name, size_t max, char **out, size_t *len,
                         struct brig_error **err)
{
    autoclose int fd = fs_reopen_input(pfd, name, 0, max, NULL, err);
    if (fd < 0) return -1;
    return brig_read_fd(fd, name, max, out, len, err);
}

static int fs_read_regular(int dirfd, const char *name, bool follow, size_t max, char **out, size_t *len,
                           struct brig_error **err)
{
    autoclose int fd = brig_open_input(dirfd, name, follow ? 0 : BRIG_INPUT_NOFOLLOW, NULL, err);
    if (fd < 0) return -1;
    return brig_read_fd(fd, name, max, out, len, err);
}

int brig_read_regular_at(int dirfd, const char *name, size_t max, char **out, size_t *len,
                         struct brig_error **err)
{
    return fs_read_regular(dirfd, name, false, max, out, len, err);
}

int brig_read_regular(const char *path, size_t max, char **out, size_t *len, struct brig_error **err)
{
    return fs_read_regular(AT_FDCWD, path, true, max, out, len, err);
}

int brig_read_file(const char *path, size_t max, char **out, size_t *len, struct brig_error **err)
{
    return brig_read_file_at(AT_FDCWD, path, max, out, len, err);
}

int brig_write_file(const char *path, const char *data, size_t len, struct brig_error **err)
{
    autoclose int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return brig_fail(err, errno, "open %s", path);
    ssize_t w = write(fd, data, len);
    if (w < 0) return brig_fail(err, errno, "write %s", path);
    if ((size_t)w != len) return brig_fail(err, EIO, "write %s: short write", path);
    return 0;
}

int brig_write_file_atomic(int dirfd, const char *name, const void *data, size_t len,
                           mode_t mode, struct brig_error **err)
{
    char tmp[256];
    snprintf(tmp, sizeof(tmp), ".%s.tmp%d", name, (int)getpid());
    autoclose int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0) return brig_fail(err, errno, "create %s", tmp);
    const char *p = data;
    size_t left = len;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            unlinkat(dirfd, tmp, 0);
            return brig_fail(err, e, "write %s", tmp);
        }
        p += w;
        left -= (size_t)w;
    }
    if (renameat(dirfd, tmp, dirfd, name) < 0) {
        int e = errno;
        unlinkat(dirfd, tmp, 0);
        return brig_fail(err, e, "rename %s", name);
    }
    return 0;
}

static int rm_rf_children(int dfd, struct brig_error **err)
{
    DIR *d = fdopendir(dfd);
    if (d == NULL) {
        close(dfd);
        return brig_fail(err, errno, "fdopendir");
    }
    int rc = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        if (unlinkat(dirfd(d), de->d_name, 0) == 0) continue;
        if (errno != EISDIR && errno != EPERM) {
            if (errno == ENOENT) continue;
            rc = brig_fail(err, errno, "unlink %s", de->d_name);
            break;
        }
        if (brig_rm_rf_at(dirfd(d), de->d_name, err) < 0) {
            rc = -1;
            break;
        }
    }
    closedir(d);
    return rc;
}

int brig_rm_rf_at(int dirfd, const char *name, struct brig_error **err)
{
    int dfd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) {
        if (errno == ENOENT) return 0;
        if (errno == ENOTDIR || errno == ELOOP) {
            if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
                return brig_fail(err, errno, "unlink %s", name);
            return 0;
        }
        return brig_fail(err, errno, "open %s", name);
    }
    if (rm_rf_children(dfd, err) < 0) return brig_wrap(err, "remove %s", name);
    if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        return brig_fail(err, errno, "rmdir %s", name);
    return 0;
}

const char *brig_fd_path(int fd, char *buf, size_t len)
{
    snprintf(buf, len, "/proc/self/fd/%d", fd);
    return buf;
}

int brig_fd_where(int fd, char *buf, size_t len, struct brig_error **err)
{
    char p[32];
    ssize_t n = readlink(brig_fd_path(fd, p, sizeof(p)), buf, len - 1);
    if (n < 0) return brig_fail(err, errno, "readlink %s", p);
    if ((size_t)n >= len - 1) return brig_fail(err, ENAMETOOLONG, "readlink %s", p);
    buf[n] = '\0';
    /* Not a path at all (a pipe, an unreachable directory), or removed. */
    static const char deleted[] = " (deleted)";
    size_t dl = sizeof(deleted) - 1;
    if (buf[0] != '/' || ((size_t)n > dl && strcmp(buf + n - dl, deleted) == 0))
        return brig_fail(err, ENOENT, "%s: no path leads to it any more", p);
    return 0;
}

char *brig_realpath(const char *path, char *out)
{
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return NULL;
    char link[32];
    ssize_t n = readlink(brig_fd_path(fd, link, sizeof(link)), out, PATH_MAX - 1);
    close(fd);
    static const char deleted[] = " (deleted)";
    if (n <= 0 || n >= PATH_MAX - 1 || out[0] != '/' ||
        ((size_t)n > sizeof(deleted) - 1 && memcmp(out + n - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1) == 0))
        return realpath(path, out);
    out[n] = '\0';
    return out;
}
