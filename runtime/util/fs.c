#include "fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"

int brig_read_file_at(int dirfd, const char *name, size_t max, char **out, size_t *len,
                      struct brig_error **err)
{
    autoclose int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return brig_fail(err, errno, "open %s", name);
    size_t cap = 4096, n = 0;
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
