/* The per-use check of a runner rootfs against its manifest, without
 * listing the tree, once a full check has passed (rootfs.h: the stamp and
 * rootfs_manifest_quick; docs/rootfs.md).
 *
 * A full check (a scan, then a diff with no difference at all) records a
 * stamp beside the tree: this boot (no offline edit in between, short of
 * unmounting the filesystem and mounting it again within one boot), which
 * tree (its root's device and inode), which manifest (device, inode, size,
 * mtime, ctime: any change to it voids the stamp), and a time taken from
 * the filesystem before the scan began (the ctime of a file made then).
 *
 * Every later change to an entry of the tree sets that entry's ctime to a
 * time at or after it, which nobody can set back short of setting the
 * clock back; an entry added to, removed from or renamed in a directory
 * moves the directory's. So while every entry of the manifest is there as
 * recorded, on the tree's own mount, with a ctime before the stamp's time,
 * the tree is what the full check saw: no directory holds an entry the
 * manifest does not name. Only on filesystems whose ctimes the kernel
 * keeps so (ext4, xfs, btrfs, tmpfs): an overlay (whose directories show
 * the top layer's ctime while a lower layer adds entries), FUSE or a
 * network filesystem is always scanned. */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../../runtime/util/cleanup.h"

#define STAMP_MAGIC "brig-rootfs verified 3"

static bool ts_before(const struct statx_timestamp *t, const struct timespec *limit)
{
    return t->tv_sec < limit->tv_sec || (t->tv_sec == limit->tv_sec && t->tv_nsec < (uint32_t)limit->tv_nsec);
}

static char quick_type(mode_t m)
{
    return S_ISDIR(m) ? ROOTFS_DIR : S_ISREG(m) ? ROOTFS_FILE : S_ISLNK(m) ? ROOTFS_LINK : ROOTFS_OTHER;
}

/* The entry is still there as w records it (type, mode, owner, size,
 * mtime, a directory's too), on the root's mount and device, unchanged
 * since ref (a ctime before it). The ctime alone would do on a kernel
 * that always moves it, but what is shown can change without it: an
 * idmapped mount shows other owners, a write in flight moves the ctime
 * before the size, an inode edited offline moves nothing; and a clock
 * stepped back gives a change an old ctime, not an old mtime (an entry
 * added to a directory sets its mtime, which the manifest has). A link's
 * target is not read: a link is replaced, never changed in place, and
 * its directory's mtime and ctime move. */
static bool quick_entry(int rootfd, const struct rootfs_entry *w, const struct timespec *ref,
                        const struct statx *root)
{
    bool is_root = strcmp(w->path, "/") == 0;
    struct statx sx;
    if (statx(rootfd, is_root ? "" : w->path + 1,
              AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (is_root ? AT_EMPTY_PATH : 0),
              STATX_BASIC_STATS | STATX_MNT_ID, &sx) < 0 ||
        (sx.stx_mask & (STATX_BASIC_STATS | STATX_MNT_ID)) != (STATX_BASIC_STATS | STATX_MNT_ID) ||
        sx.stx_mnt_id != root->stx_mnt_id || sx.stx_dev_major != root->stx_dev_major ||
        sx.stx_dev_minor != root->stx_dev_minor || !ts_before(&sx.stx_ctime, ref))
        return false;
    char type = quick_type(sx.stx_mode);
    uint64_t size = type == ROOTFS_DIR || type == ROOTFS_OTHER ? 0 : sx.stx_size;
    return type == w->type && (sx.stx_mode & 07777) == w->mode && sx.stx_uid == w->uid && sx.stx_gid == w->gid &&
           size == w->size && sx.stx_mtime.tv_sec == w->mtime_s && sx.stx_mtime.tv_nsec == w->mtime_ns;
}

bool rootfs_manifest_quick(int rootfd, const struct rootfs_manifest *want, const struct timespec *ref)
{
    struct statx root;
    if (want->n == 0 || statx(rootfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &root) < 0 ||
        !(root.stx_mask & STATX_MNT_ID))
        return false;
    for (size_t i = 0; i < want->n; i++)
        if (!quick_entry(rootfd, &want->e[i], ref, &root)) return false;
    return true;
}

/* ---- the stamp ---- */

/* This boot's id (36 characters) into out[37], or "-". */
static void stamp_boot_id(char out[37])
{
    autoclose int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, out, 36) : -1;
    if (n != 36 || memchr(out, ' ', 36) != NULL || memchr(out, '\n', 36) != NULL) n = 0;
    if (n == 0) out[n++] = '-';
    out[n] = '\0';
}

/* ext4, xfs, btrfs, tmpfs: the kernel sets every ctime it shows. */
static bool stamp_fs_ok(int fd)
{
    struct statfs f;
    if (fstatfs(fd, &f) < 0) return false;
    switch ((unsigned long)f.f_type) {
    case 0xEF53UL:          /* EXT4_SUPER_MAGIC (ext2/3 too) */
    case 0x58465342UL:      /* XFS_SUPER_MAGIC */
    case 0x9123683EUL:      /* BTRFS_SUPER_MAGIC */
    case 0x01021994UL:      /* TMPFS_MAGIC */
        return true;
    default:
        return false;
    }
}

/* What a stamp holds before its time, as the magic line and the start of
 * the next: this boot, the tree's root and the manifest as it was read.
 * The same text at check time, or none is proven. false: no stamp here
 * (no boot id, a filesystem whose ctimes are not the kernel's). */
static bool stamp_head(int treefd, const struct stat *man, char *out, size_t len)
{
    char boot[37];
    struct stat tree;
    stamp_boot_id(boot);
    if (strcmp(boot, "-") == 0 || fstat(treefd, &tree) < 0 || !stamp_fs_ok(treefd)) return false;
    int n = snprintf(out, len, STAMP_MAGIC "\n%s %ju %ju %ju %ju %jd %jd.%09ld %jd.%09ld ", boot,
                     (uintmax_t)tree.st_dev, (uintmax_t)tree.st_ino, (uintmax_t)man->st_dev,
                     (uintmax_t)man->st_ino, (intmax_t)man->st_size, (intmax_t)man->st_mtim.tv_sec,
                     man->st_mtim.tv_nsec, (intmax_t)man->st_ctim.tv_sec, man->st_ctim.tv_nsec);
    return n > 0 && (size_t)n < len;
}

int rootfs_stamp_begin(int cachefd, struct timespec *ref)
{
    /* a new inode's ctime is the filesystem's now: no name, nothing left
     * behind if we die */
    autoclose int fd = openat(cachefd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) return -1;
    *ref = st.st_ctim;
    return 0;
}

void rootfs_stamp_commit(int cachefd, const char *name, int treefd, const struct stat *man,
                         const struct timespec *ref)
{
    char text[512];
    if (!stamp_head(treefd, man, text, sizeof(text))) return;
    size_t head = strlen(text);
    int n = snprintf(text + head, sizeof(text) - head, "%jd.%09ld\n", (intmax_t)ref->tv_sec, ref->tv_nsec);
    if (n <= 0 || (size_t)n >= sizeof(text) - head) return;
    /* A new file of ours, never one planted at the name (a FIFO would
     * hang us, a hard link have its target overwritten). */
    char tmp[256];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d", name, (int)getpid());
    unlinkat(cachefd, tmp, 0);
    autoclose int fd =
        openat(cachefd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (write(fd, text, head + (size_t)n) != (ssize_t)(head + (size_t)n) || renameat(cachefd, tmp, cachefd, name) < 0)
        unlinkat(cachefd, tmp, 0);
}

/* The stamp's time into ref when the stamp in cachefd starts with head;
 * false when there is none, it is not a regular file, or its time is after
 * its own ctime (a stamp is written after its scan). */
static bool stamp_time(int cachefd, const char *name, const char *head, struct timespec *ref)
{
    autoclose int fd = openat(cachefd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    char text[512];
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (size_t)st.st_size >= sizeof(text))
        return false;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    size_t hl = strlen(head);
    if (n <= 0 || (size_t)n <= hl || memcmp(text, head, hl) != 0) return false;
    text[n] = '\0';
    intmax_t sec;
    long nsec;
    int end = 0;
    if (sscanf(text + hl, "%jd.%ld\n%n", &sec, &nsec, &end) != 2 || end == 0 || text[hl + (size_t)end] != '\0' ||
        nsec < 0 || nsec > 999999999)
        return false;
    *ref = (struct timespec){ .tv_sec = (time_t)sec, .tv_nsec = nsec };
    return ref->tv_sec < st.st_ctim.tv_sec || (ref->tv_sec == st.st_ctim.tv_sec && ref->tv_nsec <= st.st_ctim.tv_nsec);
}

bool rootfs_tree_proven(int cachefd, const char *stamp_name, int treefd, const struct stat *man,
                        const struct rootfs_manifest *want)
{
    /* This boot (across a reboot the filesystem may have been written
     * offline: a directory entry added with debugfs moves no time), the
     * tree the full check scanned (a btrfs snapshot swapped in keeps its
     * source's ctimes, not its device), and the manifest it read, unchanged;
     * the tree not a mount of its own. */
    char head[512];
    struct timespec ref;
    struct statx root, cache;
    if (!stamp_head(treefd, man, head, sizeof(head)) || !stamp_time(cachefd, stamp_name, head, &ref)) return false;
    if (statx(treefd, "", AT_EMPTY_PATH, STATX_MNT_ID, &root) < 0 ||
        statx(cachefd, "", AT_EMPTY_PATH, STATX_MNT_ID, &cache) < 0 || !(root.stx_mask & STATX_MNT_ID) ||
        !(cache.stx_mask & STATX_MNT_ID) || root.stx_mnt_id != cache.stx_mnt_id)
        return false;
    return rootfs_manifest_quick(treefd, want, &ref);
}
