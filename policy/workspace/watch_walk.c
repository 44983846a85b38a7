/* What a watched workspace holds (policy/workspace/watch.c): one walk of
 * the tree from the directory create opened, by fd, never following a
 * symlink and never leaving its filesystem. Each inode counts once: its
 * st_blocks * 512 bytes (what it takes on disk: a sparse file by the
 * blocks written, not by its size; a hard link once) and one inode (an
 * empty file or directory costs the host an inode and no block). The walk
 * stops as soon as either bound is passed. */
#include "watch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../runtime/util/cleanup.h"

struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Inode numbers of multiply linked files seen in this walk (open
 * addressing; 0 marks a free slot, so ino + 1 is stored). */
bool watch_seen(struct watch_walk *w, uint64_t ino, bool insert)
{
    if (!insert && w->cap_seen == 0) return false;
    if (insert && w->n_seen * 2 >= w->cap_seen) {
        size_t cap = w->cap_seen ? w->cap_seen * 2 : 1024;
        uint64_t *v = calloc(cap, sizeof(*v));
        if (v == NULL) return false;     /* counted again: never fewer bytes */
        for (size_t i = 0; i < w->cap_seen; i++) {
            if (w->seen[i] == 0) continue;
            size_t j = (size_t)(w->seen[i] * 0x9E3779B97F4A7C15ull) & (cap - 1);
            while (v[j] != 0) j = (j + 1) & (cap - 1);
            v[j] = w->seen[i];
        }
        free(w->seen);
        w->seen = v;
        w->cap_seen = cap;
    }
    uint64_t key = ino + 1;
    size_t j = (size_t)(key * 0x9E3779B97F4A7C15ull) & (w->cap_seen - 1);
    while (w->seen[j] != 0) {
        if (w->seen[j] == key) return true;
        j = (j + 1) & (w->cap_seen - 1);
    }
    if (!insert) return false;
    w->seen[j] = key;
    w->n_seen++;
    return false;
}

/* Count st; true when a bound is passed. */
static bool walk_count(struct watch_walk *w, const struct stat *st)
{
    if (!S_ISDIR(st->st_mode) && st->st_nlink > 1 && watch_seen(w, (uint64_t)st->st_ino, true)) return false;
    w->bytes += (uint64_t)st->st_blocks * 512;
    w->inodes++;
    if (w->bytes > w->max_bytes) w->why = "bytes";
    else if (w->inodes > w->max_inodes) w->why = "inodes";
    return w->why != NULL;
}

static bool walk_dir(struct watch_walk *w, int dirfd, dev_t dev, int depth)
{
    if (depth > WATCH_DEPTH) {
        w->why = "depth";     /* deeper than it can be measured: refused, never uncounted */
        return true;
    }
    char buf[4096] __attribute__((aligned(8)));
    for (;;) {
        long n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf));
        if (n <= 0) return false;       /* the end, or the directory went */
        for (long off = 0; off < n;) {
            struct linux_dirent64 *e = (struct linux_dirent64 *)(buf + off);
            off += e->d_reclen;
            const char *name = e->d_name;
            if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
            struct stat st;
            if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;     /* gone */
            if (st.st_dev != dev) continue;     /* another filesystem: not the workspace's */
            if (walk_count(w, &st)) return true;
            /* a set-id program a command could rewrite through a shared
             * mapping, which keeps the bit (watch.c refuses it at create) */
            if (S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID)) && (st.st_mode & 0222) &&
                w->setid[0] == '\0')
                snprintf(w->setid, sizeof(w->setid), "%s", name);
            if (!S_ISDIR(st.st_mode)) continue;
            autoclose int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
            struct stat now;
            /* replaced meanwhile (by a symlink: O_NOFOLLOW refused it): the
             * next walk sees what is there then */
            if (fd < 0 || fstat(fd, &now) < 0 || now.st_ino != st.st_ino || now.st_dev != dev) continue;
            if (walk_dir(w, fd, dev, depth + 1)) return true;
        }
    }
}

bool watch_walk(struct watch_walk *w, int rootfd)
{
    w->bytes = w->inodes = 0;
    w->why = NULL;
    if (w->seen != NULL) memset(w->seen, 0, w->cap_seen * sizeof(*w->seen));
    w->n_seen = 0;
    struct stat st;
    if (fstat(rootfd, &st) < 0) return false;
    if (walk_count(w, &st)) return true;
    /* its own open file: the offset starts at 0 each walk */
    autoclose int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    return walk_dir(w, fd, st.st_dev, 1);
}
