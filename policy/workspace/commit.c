/* Writing a staged workspace back (stage.c): the overlay's upper layer (what
 * the container wrote, on the bounded tmpfs) into the workspace directory,
 * as root, by fd, never following a symlink and never leaving the
 * workspace's filesystem, and doing there only what the workspace's owner
 * could: a directory is written into, removed (with what it holds) or given
 * attributes only when it is one the write-back made or one of an owner the
 * stage maps ids to (commit_dir_ok); anything else stops it with an error:
 *
 *   a whiteout (char 0:0)      the entry is removed from the workspace
 *   an opaque directory        the workspace's entries it does not hold go
 *   a directory                made if missing (a non-directory there is replaced),
 *                              the owner's at once, its mode set when it is done
 *   a regular file             its data segments copied (holes stay holes)
 *                              to a temporary name, owner, mode and times
 *                              set, renamed over the name; hard links of one
 *                              file stay links; unchanged (size, mtime) files
 *                              are not copied again
 *   a symlink                  made as is (never followed)
 *   a fifo, socket or device   not written back
 *
 * The host never gets more than the tmpfs held: the data copied is counted
 * against what the tmpfs uses, and the names against its inodes (a hard
 * link takes one there too). Extended attributes are not written back. */
#include "stage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../runtime/util/cleanup.h"
#include "../../runtime/util/fs.h"
#include "../../runtime/util/log.h"
#include "../../runtime/util/strutil.h"

#define COMMIT_DEPTH 256
#define COMMIT_LINKS 4096       /* hard-linked files whose first copy is kept open */

struct commit_link { ino_t ino; int fd; };

struct commit {
    const struct stage_record *rec;     /* an idmapped workspace's mapping */
    dev_t ws_dev;
    uint64_t budget_bytes, written;     /* data the tmpfs holds, data written back */
    uint64_t budget_names, names;       /* the tmpfs's inodes, names written back */
    struct commit_link links[COMMIT_LINKS];
    size_t n_links;
    unsigned tmp_seq;
};

static void commit_tmpname(struct commit *c, char *buf, size_t len)
{
    snprintf(buf, len, ".brig-commit.%d.%u", (int)getpid(), c->tmp_seq++);
}

static int commit_count_name(struct commit *c, const char *name, struct brig_error **err)
{
    if (++c->names > c->budget_names)
        return brig_failx(err, "%s: more names than the staged workspace held (%llu)", name,
                          (unsigned long long)c->budget_names);
    return 0;
}

/* A listing of dirfd (which stays open). */
static DIR *commit_opendir(int dirfd, const char *what, struct brig_error **err)
{
    int dup = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    DIR *d = dup < 0 ? NULL : fdopendir(dup);
    if (d == NULL) {
        brig_fail(err, errno, "list %s", what);
        if (dup >= 0) close(dup);
    }
    return d;
}

/* A directory of the workspace's filesystem the write-back may work in,
 * as root, for the workspace's owner: one of an owner the stage maps its
 * ids to (an idmapped workspace: the owner's). Another's, a root-owned one
 * a root build step left, say, the owner can rename to a name the
 * container wrote or removed while it runs: written into, chowned or
 * removed by the write-back it would be the owner's. Without a mapping the
 * container's ids are the host's and it could have done so itself. */
static int commit_dir_ok(const struct commit *c, int fd, const char *name, struct brig_error **err)
{
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "%s: stat", name);
    if (st.st_dev != c->ws_dev) return brig_failx(err, "%s: another filesystem is mounted there", name);
    bool mapped = c->rec->n_uid == 0;
    for (size_t i = 0; !mapped && i < c->rec->n_uid; i++)
        mapped = st.st_uid >= c->rec->uid[i].disk && st.st_uid - c->rec->uid[i].disk < c->rec->uid[i].size;
    if (!mapped)
        return brig_failx(err, "%s: a directory of uid %u, not of the workspace's owner: left as it is", name,
                          (unsigned)st.st_uid);
    return 0;
}

static int commit_remove_at(const struct commit *c, int ws, const char *name, int depth, struct brig_error **err)
{
    autoclose int fd = openat(ws, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return 0;
    if (fd < 0 && (errno == ENOTDIR || errno == ELOOP)) {
        if (unlinkat(ws, name, 0) < 0 && errno != ENOENT) return brig_fail(err, errno, "%s: unlink", name);
        return 0;
    }
    if (fd < 0) return brig_fail(err, errno, "%s: open", name);
    if (depth > COMMIT_DEPTH) return brig_failx(err, "%s: deeper than %d directories", name, COMMIT_DEPTH);
    TRY(commit_dir_ok(c, fd, name, err));
    DIR *d = commit_opendir(fd, name, err);
    if (d == NULL) return -1;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        rc = commit_remove_at(c, fd, e->d_name, depth + 1, err);
        if (rc < 0) brig_wrap(err, "%s", name);
    }
    closedir(d);
    if (rc == 0 && unlinkat(ws, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        rc = brig_fail(err, errno, "%s: rmdir", name);
    return rc;
}

/* Remove whatever ws/name is (a directory with what it holds, each
 * directory judged by commit_dir_ok before anything in it goes). */
static int commit_remove(const struct commit *c, int ws, const char *name, struct brig_error **err)
{
    return commit_remove_at(c, ws, name, 0, err);
}

/* Copy src's data segments to dst (same offsets, holes left as holes). */
static int commit_data(struct commit *c, int src, int dst, off_t size, const char *name, struct brig_error **err)
{
    off_t off = 0;
    char buf[65536];
    while (off < size) {
        off_t data = lseek(src, off, SEEK_DATA);
        if (data < 0 && errno == ENXIO) break;     /* only a hole is left */
        if (data < 0) return brig_fail(err, errno, "%s: SEEK_DATA", name);
        off_t hole = lseek(src, data, SEEK_HOLE);
        if (hole < 0) return brig_fail(err, errno, "%s: SEEK_HOLE", name);
        for (off_t at = data; at < hole;) {
            size_t want = (size_t)(hole - at) < sizeof(buf) ? (size_t)(hole - at) : sizeof(buf);
            ssize_t n = pread(src, buf, want, at);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) return brig_fail(err, errno, "%s: read", name);
            if (n == 0) break;      /* it shrank meanwhile (a session still running) */
            if ((c->written += (uint64_t)n) > c->budget_bytes)
                return brig_failx(err, "%s: more data than the staged workspace held (%llu bytes)", name,
                                  (unsigned long long)c->budget_bytes);
            for (ssize_t w = 0; w < n;) {
                ssize_t k = pwrite(dst, buf + w, (size_t)(n - w), at + w);
                if (k < 0 && errno == EINTR) continue;
                if (k < 0) return brig_fail(err, errno, "%s: write", name);
                w += k;
            }
            at += n;
        }
        off = hole;
    }
    if (ftruncate(dst, size) < 0) return brig_fail(err, errno, "%s: truncate", name);
    return 0;
}

static uid_t commit_uid(const struct commit *c, uid_t seen)
{
    return stage_map_id(c->rec->uid, c->rec->n_uid, seen);
}

static gid_t commit_gid(const struct commit *c, gid_t seen)
{
    return stage_map_id(c->rec->gid, c->rec->n_gid, seen);
}

/* Owner (as the workspace stores it), then mode (a chown clears set-id
 * bits), then times, of fd. */
static int commit_attrs(const struct commit *c, int fd, const struct stat *st, const char *name,
                        struct brig_error **err)
{
    if (fchown(fd, commit_uid(c, st->st_uid), commit_gid(c, st->st_gid)) < 0)
        return brig_fail(err, errno, "%s: chown", name);
    if (fchmod(fd, st->st_mode & 07777) < 0) return brig_fail(err, errno, "%s: chmod", name);
    const struct timespec t[2] = { st->st_atim, st->st_mtim };
    if (futimens(fd, t) < 0) return brig_fail(err, errno, "%s: times", name);
    return 0;
}

static int commit_link_find(const struct commit *c, ino_t ino)
{
    for (size_t i = 0; i < c->n_links; i++)
        if (c->links[i].ino == ino) return c->links[i].fd;
    return -1;
}

/* A hard link of a file written back already: linked, not copied. */
static int commit_hardlink(struct commit *c, int first, int ws, const char *name, struct brig_error **err)
{
    char tmp[64], from[32];
    commit_tmpname(c, tmp, sizeof(tmp));
    if (linkat(AT_FDCWD, brig_fd_path(first, from, sizeof(from)), ws, tmp, AT_SYMLINK_FOLLOW) < 0)
        return brig_fail(err, errno, "%s: link", name);
    struct stat now;
    if (fstatat(ws, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(now.st_mode) &&
        commit_remove(c, ws, name, err) < 0) {
        unlinkat(ws, tmp, 0);
        return -1;
    }
    if (renameat(ws, tmp, ws, name) < 0) {
        int e = errno;
        unlinkat(ws, tmp, 0);
        return brig_fail(err, e, "%s: rename into place", name);
    }
    return 0;
}

static int commit_file(struct commit *c, int up, int ws, const char *name, const struct stat *st,
                       struct brig_error **err)
{
    int first = st->st_nlink > 1 ? commit_link_find(c, st->st_ino) : -1;
    if (first >= 0) return commit_hardlink(c, first, ws, name, err);
    struct stat have;
    if (fstatat(ws, name, &have, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(have.st_mode) && have.st_nlink == 1 &&
        st->st_nlink == 1 && have.st_size == st->st_size && have.st_mtim.tv_sec == st->st_mtim.tv_sec &&
        have.st_mtim.tv_nsec == st->st_mtim.tv_nsec && have.st_uid == commit_uid(c, st->st_uid) &&
        have.st_gid == commit_gid(c, st->st_gid) && (have.st_mode & 07777) == (st->st_mode & 07777))
        return 0;   /* written back by an earlier commit of this session */
    autoclose int src = openat(up, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat sst;
    if (src < 0 || fstat(src, &sst) < 0) return brig_fail(err, errno, "%s: open in the stage", name);
    if (!S_ISREG(sst.st_mode) || sst.st_ino != st->st_ino) return 0;     /* changed meanwhile: next time */
    char tmp[64];
    commit_tmpname(c, tmp, sizeof(tmp));
    autoclose int dst = openat(ws, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (dst < 0) return brig_fail(err, errno, "%s: create", name);
    int rc = commit_data(c, src, dst, sst.st_size, name, err);
    if (rc == 0) rc = commit_attrs(c, dst, &sst, name, err);
    if (rc == 0 && fstatat(ws, name, &have, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(have.st_mode))
        rc = commit_remove(c, ws, name, err);
    if (rc == 0 && renameat(ws, tmp, ws, name) < 0) rc = brig_fail(err, errno, "%s: rename into place", name);
    if (rc < 0) {
        unlinkat(ws, tmp, 0);
        return -1;
    }
    if (sst.st_nlink > 1) {
        if (c->n_links == COMMIT_LINKS)
            return brig_failx(err, "%s: more than %d hard-linked files", name, COMMIT_LINKS);
        c->links[c->n_links++] = (struct commit_link){ .ino = sst.st_ino, .fd = steal_fd(&dst) };
    }
    return 0;
}

static int commit_symlink(struct commit *c, int up, int ws, const char *name, const struct stat *st,
                          struct brig_error **err)
{
    char target[4096];
    ssize_t n = readlinkat(up, name, target, sizeof(target) - 1);
    if (n < 0) return brig_fail(err, errno, "%s: readlink in the stage", name);
    target[n] = '\0';
    char tmp[64];
    commit_tmpname(c, tmp, sizeof(tmp));
    if (symlinkat(target, ws, tmp) < 0) return brig_fail(err, errno, "%s: symlink", name);
    const struct timespec t[2] = { st->st_atim, st->st_mtim };
    struct stat have;
    int rc = 0;
    if (fchownat(ws, tmp, commit_uid(c, st->st_uid), commit_gid(c, st->st_gid), AT_SYMLINK_NOFOLLOW) < 0 ||
        utimensat(ws, tmp, t, AT_SYMLINK_NOFOLLOW) < 0)
        rc = brig_fail(err, errno, "%s: owner and times", name);
    if (rc == 0 && fstatat(ws, name, &have, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(have.st_mode))
        rc = commit_remove(c, ws, name, err);
    if (rc == 0 && renameat(ws, tmp, ws, name) < 0) rc = brig_fail(err, errno, "%s: rename into place", name);
    if (rc < 0) unlinkat(ws, tmp, 0);
    return rc;
}

static bool commit_opaque(int dirfd)
{
    char v[4];
    ssize_t n = fgetxattr(dirfd, "trusted.overlay.opaque", v, sizeof(v));
    return n == 1 && v[0] == 'y';
}

/* An opaque directory replaced the workspace's: what it does not hold goes. */
static int commit_prune(const struct commit *c, int up, int ws, struct brig_error **err)
{
    DIR *d = commit_opendir(ws, "the workspace", err);
    if (d == NULL) return -1;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(up, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT) continue;
        rc = commit_remove(c, ws, e->d_name, err);
    }
    closedir(d);
    return rc;
}

static int commit_dir(struct commit *c, int up, int ws, int depth, struct brig_error **err);

/* fd is the directory mkdirat just made, as far as can be told: root's,
 * 0700, empty. The owner may rename a directory of theirs, or of root's,
 * onto the empty one made before it is opened: then it is judged as one
 * that was there (commit_dir_ok); an empty one of root's taken for ours
 * holds nothing to take over. */
static bool commit_made(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 0777) != 0700 || st.st_nlink != 2) return false;
    autoerr struct brig_error *e = NULL;
    DIR *d = commit_opendir(fd, "the directory made", &e);
    if (d == NULL) return false;
    bool empty = true;
    for (struct dirent *de; empty && (de = readdir(d)) != NULL;)
        empty = strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0;
    closedir(d);
    return empty;
}

static int commit_subdir(struct commit *c, int up, int ws, const char *name, const struct stat *st, int depth,
                         struct brig_error **err)
{
    struct stat have;
    if (fstatat(ws, name, &have, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(have.st_mode) && unlinkat(ws, name, 0) < 0)
        return brig_fail(err, errno, "%s: replace by a directory", name);
    bool made = mkdirat(ws, name, 0700) == 0;
    if (!made && errno != EEXIST) return brig_fail(err, errno, "%s: mkdir", name);
    autoclose int sub_ws = openat(ws, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    autoclose int sub_up = openat(up, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub_ws < 0 || sub_up < 0) return brig_fail(err, errno, "%s: open", name);
    /* Its owner's from the start (its mode stays 0700 until it is done): a
     * write-back that stops inside (an error, a brig killed) leaves nothing
     * of root's that the owner could not remove. */
    if (made && commit_made(sub_ws)) {
        if (fchown(sub_ws, commit_uid(c, st->st_uid), commit_gid(c, st->st_gid)) < 0)
            return brig_fail(err, errno, "%s: chown", name);
    } else {
        TRY(commit_dir_ok(c, sub_ws, name, err));
    }
    if (commit_opaque(sub_up)) TRY(commit_prune(c, sub_up, sub_ws, err));
    if (commit_dir(c, sub_up, sub_ws, depth + 1, err) < 0) return brig_wrap(err, "%s", name);
    return commit_attrs(c, sub_ws, st, name, err);
}

static int commit_dir(struct commit *c, int up, int ws, int depth, struct brig_error **err)
{
    if (depth > COMMIT_DEPTH) return brig_failx(err, "deeper than %d directories", COMMIT_DEPTH);
    DIR *d = commit_opendir(up, "the stage", err);
    if (d == NULL) return -1;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d)) != NULL;) {
        const char *name = e->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0) continue;
        struct stat st;
        if (fstatat(up, name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;     /* gone (a session) */
        if ((rc = commit_count_name(c, name, err)) < 0) break;
        if (S_ISCHR(st.st_mode) && st.st_rdev == 0) rc = commit_remove(c, ws, name, err);
        else if (S_ISDIR(st.st_mode)) rc = commit_subdir(c, up, ws, name, &st, depth, err);
        else if (S_ISREG(st.st_mode)) rc = commit_file(c, up, ws, name, &st, err);
        else if (S_ISLNK(st.st_mode)) rc = commit_symlink(c, up, ws, name, &st, err);
        else brig_debug("staged workspace: %s is not written back (a fifo, socket or device)", name);
    }
    closedir(d);
    return rc;
}

/* The workspace, by its real path without a symlink, and only if it is the
 * directory staged. */
static int commit_open_workspace(const struct stage_record *r, struct brig_error **err)
{
    struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
    autoclose int fd = (int)syscall(SYS_openat2, AT_FDCWD, r->workspace, &how, sizeof(how));
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) return brig_fail(err, errno, "the workspace %s", r->workspace);
    if ((uint64_t)st.st_dev != r->dev || (uint64_t)st.st_ino != r->ino)
        return brig_failx(err, "the workspace %s is no longer the directory staged (moved or replaced)",
                          r->workspace);
    return steal_fd(&fd);
}

int policy_stage_commit(int state_dirfd, bool finish, struct brig_error **err)
{
    struct stage_record r;
    if (stage_record_read(state_dirfd, &r, err) < 0) return -1;
    if (!r.present) return 0;
    int rc = 0;
    autoclose int up = openat(state_dirfd, "wsstage/upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct statfs sf;
    if (up < 0 || fstatfs(up, &sf) < 0 || sf.f_type != 0x01021994 /* TMPFS_MAGIC */) {
        brig_debug("staged workspace: no stage left to write back");    /* e.g. /run after a reboot */
    } else {
        struct commit *c = brig_calloc(1, sizeof(*c));
        c->rec = &r;
        /* what the tmpfs holds, plus a block per name for rounding */
        c->budget_names = (uint64_t)(sf.f_files - sf.f_ffree) + 16;
        c->budget_bytes = (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_bsize +
                          c->budget_names * (uint64_t)sf.f_bsize;
        autoclose int ws = commit_open_workspace(&r, err);
        struct stat st, ust;
        rc = ws < 0 ? -1 : 0;
        if (rc == 0 && (fstat(ws, &st) < 0 || fstat(up, &ust) < 0)) rc = brig_fail(err, errno, "stat");
        if (rc == 0) {
            c->ws_dev = st.st_dev;
            rc = commit_dir(c, up, ws, 0, err);
            if (rc == 0) rc = commit_attrs(c, ws, &ust, r.workspace, err);
        }
        for (size_t i = 0; i < c->n_links; i++) close(c->links[i].fd);
        if (rc == 0)
            brig_debug("staged workspace: %llu bytes, %llu names written back to %s",
                       (unsigned long long)c->written, (unsigned long long)c->names, r.workspace);
        free(c);
        if (rc < 0) brig_wrap(err, "workspace.maxSize: writing the staged workspace back into %s", r.workspace);
    }
    if (finish && rc == 0) stage_unmount(state_dirfd);
    stage_record_free(&r);
    return rc;
}
