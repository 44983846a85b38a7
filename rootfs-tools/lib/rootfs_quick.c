/* The per-use check of a runner rootfs against its manifest, without
 * listing the tree (rootfs_manifest_quick in rootfs.h).
 *
 * What the full check (a scan, then rootfs_manifest_diff) learns from
 * reading every directory, this learns from the directories' ctimes: an
 * entry added to, removed from or renamed in a directory sets that
 * directory's ctime (and mtime) to now, which nobody can set back. So
 * when every directory of the manifest is there with a ctime not after the
 * manifest's, none holds an entry the manifest does not name. The root is
 * the exception (the build renames the tree into place after writing the
 * manifest): it is listed. Every other entry is compared as the diff
 * compares it, link targets read; an entry on another mount than the root
 * (something mounted over a part of the tree) is not judged here. */
#include "rootfs.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../runtime/util/cleanup.h"

static bool quick_after(const struct statx_timestamp *t, const struct timespec *limit)
{
    return t->tv_sec > limit->tv_sec || (t->tv_sec == limit->tv_sec && t->tv_nsec > limit->tv_nsec);
}

static char quick_type(mode_t m)
{
    return S_ISDIR(m) ? ROOTFS_DIR : S_ISREG(m) ? ROOTFS_FILE : S_ISLNK(m) ? ROOTFS_LINK : ROOTFS_OTHER;
}

/* The entry as w records it (rootfs_manifest_diff's diff_entry, without
 * hashes: a scan for use has none), on the root's mount. */
static bool quick_entry(int rootfd, const struct rootfs_entry *w, const struct timespec *not_after, uint64_t mnt)
{
    bool root = strcmp(w->path, "/") == 0;
    const char *rel = root ? "" : w->path + 1;
    struct statx sx;
    if (statx(rootfd, rel, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (root ? AT_EMPTY_PATH : 0),
              STATX_BASIC_STATS | STATX_MNT_ID, &sx) < 0 ||
        !(sx.stx_mask & STATX_MNT_ID) || sx.stx_mnt_id != mnt)
        return false;
    char type = quick_type(sx.stx_mode);
    uint64_t size = type == ROOTFS_DIR || type == ROOTFS_OTHER ? 0 : sx.stx_size;
    if (type != w->type || (sx.stx_mode & 07777) != w->mode || sx.stx_uid != w->uid || sx.stx_gid != w->gid ||
        size != w->size)
        return false;
    if (type != ROOTFS_DIR && (sx.stx_mtime.tv_sec != w->mtime_s || sx.stx_mtime.tv_nsec != w->mtime_ns))
        return false;
    if (!root && quick_after(&sx.stx_ctime, not_after)) return false;
    if (type == ROOTFS_LINK) {
        char target[4096];
        ssize_t n = readlinkat(rootfd, rel, target, sizeof(target) - 1);
        if (n < 0 || w->target == NULL) return false;
        target[n] = '\0';
        if (strcmp(target, w->target) != 0) return false;
    }
    return true;
}

/* The root holds exactly the manifest's top-level entries. */
static bool quick_root_names(int rootfd, const struct rootfs_manifest *want)
{
    size_t top = 0;
    for (size_t i = 0; i < want->n; i++) {
        const char *p = want->e[i].path;
        if (p[0] == '/' && p[1] != '\0' && strchr(p + 1, '/') == NULL) top++;
    }
    int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (d == NULL) {
        if (fd >= 0) close(fd);
        return false;
    }
    size_t seen = 0;
    bool ok = true;
    for (struct dirent *de; ok && (de = readdir(d)) != NULL;) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        seen++;
        /* want is sorted by path (strcmp): a binary search for "/NAME" */
        char key[sizeof(de->d_name) + 1];
        key[0] = '/';
        memcpy(key + 1, de->d_name, strlen(de->d_name) + 1);
        size_t lo = 0, hi = want->n;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (strcmp(want->e[mid].path, key) < 0) lo = mid + 1;
            else hi = mid;
        }
        ok = lo < want->n && strcmp(want->e[lo].path, key) == 0;
    }
    closedir(d);
    return ok && seen == top;
}

bool rootfs_manifest_quick(int rootfd, const struct rootfs_manifest *want, const struct timespec *not_after)
{
    struct statx sx;
    if (want->n == 0 || statx(rootfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
        return false;
    for (size_t i = 0; i < want->n; i++)
        if (!quick_entry(rootfd, &want->e[i], not_after, sx.stx_mnt_id)) return false;
    return quick_root_names(rootfd, want);
}
