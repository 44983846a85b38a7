/* workspace.maxSize: a bound on what the container can write into its
 * workspace, enforced by the kernel or refused (docs/policy.md). Three ways
 * hold, judged on the directory create opened (the pinned bind source), in
 * this order:
 *
 *   - the workspace's filesystem is itself no bigger than the bound (a
 *     loop-mounted image or a tmpfs with size= made for the workspace):
 *     nothing to set, the filesystem is full before the bound is passed;
 *   - the filesystem enforces project quotas (ext4 or XFS mounted with
 *     prjquota) and the container has a user namespace: create gives the
 *     tree a project id of its own, inherited by what is made in it, and
 *     sets that project's block limit;
 *   - anywhere else (an ext4 without project quotas, a tmpfs without
 *     size=): the workspace is watched (policy/workspace/watch.c): it stays
 *     a live bind, a watcher in the container's cgroup measures it and
 *     stops the container once it holds more than the bound; or, with
 *     workspace.bound "stage", it is staged (policy/workspace/stage.c), an
 *     overlay whose writes go to a tmpfs of the bound's size, written back
 *     into the directory when the container ends.
 *
 * What none of them can bound (a filesystem mounted below the workspace,
 * another writable bind) is refused with the field named: a bound the host
 * cannot keep is never silently dropped. */
#include "policy_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/dqblk_xfs.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/quota.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../runtime/config/spec.h"
#include "../runtime/linux/rootfs/mount_util.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

#ifndef XFS_SUPER_MAGIC
#define XFS_SUPER_MAGIC 0x58465342
#endif
/* A tree deeper than this is refused rather than walked (one fd a level). */
#define QUOTA_WALK_DEPTH 256

static int quotactl_fd(int fd, unsigned int cmd, unsigned int id, void *addr)
{
    return (int)syscall(SYS_quotactl_fd, fd, cmd, id, addr);
}

/* Filesystems whose reported size bounds what can be written to them. A
 * FUSE or network filesystem reports what its server says. */
static const char *quota_sized_fs(long type)
{
    switch ((unsigned long)type) {
    case TMPFS_MAGIC: return "tmpfs";
    case EXT4_SUPER_MAGIC: return "ext4";
    case XFS_SUPER_MAGIC: return "xfs";
    case BTRFS_SUPER_MAGIC: return "btrfs";
    default: return NULL;
    }
}

struct quota_submount {
    const char *top;
    char found[PATH_MAX];
};

static int quota_submount_cb(const struct mnt_info *mi, void *arg, struct brig_error **err)
{
    (void)err;
    struct quota_submount *q = arg;
    size_t n = strlen(q->top);
    if (q->found[0] == '\0' && strncmp(mi->mount_point, q->top, n) == 0 && mi->mount_point[n] == '/')
        snprintf(q->found, sizeof(q->found), "%s", mi->mount_point);
    return 0;
}

/* The bind is recursive: a filesystem mounted below the workspace would be
 * writable in the container and outside the bound. A create judges its
 * workspace three times (policy check, apply, enforce) within a few
 * milliseconds: the mount table is read once per workspace and process. */
static bool quota_has_submount(const char *top, char *found, size_t len)
{
    static char last_top[PATH_MAX], last_found[PATH_MAX];
    if (last_top[0] != '\0' && strcmp(last_top, top) == 0) {
        snprintf(found, len, "%s", last_found);
        return last_found[0] != '\0';
    }
    struct quota_submount q = { .top = top };
    autoerr struct brig_error *err = NULL;
    if (mnt_info_foreach(quota_submount_cb, &q, &err) < 0) {
        snprintf(found, len, "(mountinfo: %s)", err->msg);
        return true;
    }
    snprintf(found, len, "%s", q.found);
    snprintf(last_top, sizeof(last_top), "%s", top);
    snprintf(last_found, sizeof(last_found), "%s", q.found);
    return q.found[0] != '\0';
}

static bool quota_in_userns(const struct brig_spec *s)
{
    return s->linux_cfg.namespaces[BRIG_NS_USER].present;
}

enum policy_quota_how policy_quota_judge(const struct brig_policy *p, const struct brig_spec *s,
                                         const struct brig_mount *m, char *why, size_t len)
{
    autoclose int own = -1;
    int fd = m->has_source_fd ? m->source_fd : -1;
    if (!m->has_source_fd) fd = own = open(m->source, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, len, "%s: cannot be opened", m->source);
        return POLICY_QUOTA_NONE;
    }
    struct stat st;
    struct statfs sf;
    if (fstat(fd, &st) < 0 || fstatfs(fd, &sf) < 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, len, "%s: not a directory", m->source);
        return POLICY_QUOTA_NONE;
    }
    /* Mount points are spelled as real paths: compare with what was
     * opened, not with the config's spelling (a symlink for check). */
    char link[64], real[PATH_MAX], sub[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, real, sizeof(real) - 1);
    if (n <= 0 || real[0] != '/') {
        snprintf(why, len, "%s: where it leads cannot be told", m->source);
        return POLICY_QUOTA_NONE;
    }
    real[n] = '\0';
    if (quota_has_submount(real, sub, sizeof(sub))) {
        snprintf(why, len, "%s is a mount below the workspace %s, outside its bound", sub, real);
        return POLICY_QUOTA_NONE;
    }
    const char *fs = quota_sized_fs(sf.f_type);
    uint64_t bsize = sf.f_frsize ? (uint64_t)sf.f_frsize : (uint64_t)sf.f_bsize;
    uint64_t size = (uint64_t)sf.f_blocks * bsize;
    /* tmpfs without size= says 0 blocks: unbounded, not empty. */
    if (fs != NULL && sf.f_blocks > 0 && size / bsize == (uint64_t)sf.f_blocks &&
        size <= p->workspace.max_size)
        return POLICY_QUOTA_FS_SIZE;
    struct fs_quota_statv qs = { .qs_version = FS_QSTATV_VERSION1 };
    bool prj = quotactl_fd(fd, QCMD(Q_XGETQSTATV, PRJQUOTA), 0, &qs) == 0 &&
               (qs.qs_flags & FS_QUOTA_PDQ_ENFD);
    /* In the host's user namespace a file's owner may change its project
     * id (FS_IOC_FSSETXATTR) and leave the quota: staged instead. */
    if (prj && fs != NULL && strcmp(fs, "tmpfs") != 0 && quota_in_userns(s)) return POLICY_QUOTA_PROJECT;
    bool stage = p->workspace.bound == POLICY_WS_STAGE;
    snprintf(why, len, "%s is on %s of %llu bytes without project quotas enforced: %s", m->source,
             fs ? fs : "a filesystem", (unsigned long long)size,
             stage ? "staged on an overlay bounded by a tmpfs" : "watched, the container stopped past the bound");
    return stage ? POLICY_QUOTA_STAGED : POLICY_QUOTA_WATCHED;
}

/* Give fd (a directory or a regular file) the project id; directories
 * also pass it on to what is made in them. */
static int quota_set_projid(int fd, bool dir, uint32_t projid, struct brig_error **err)
{
    struct fsxattr fa;
    if (ioctl(fd, FS_IOC_FSGETXATTR, &fa) < 0) return brig_fail(err, errno, "FS_IOC_FSGETXATTR");
    uint32_t want = fa.fsx_xflags | (dir ? FS_XFLAG_PROJINHERIT : 0);
    if (fa.fsx_projid == projid && fa.fsx_xflags == want) return 0;
    fa.fsx_projid = projid;
    fa.fsx_xflags = want;
    if (ioctl(fd, FS_IOC_FSSETXATTR, &fa) < 0) return brig_fail(err, errno, "FS_IOC_FSSETXATTR");
    return 0;
}

/* Every directory and regular file already in the tree joins the project
 * (a file made before counts, a subdirectory without the inherit flag
 * would hand new files project 0). By fd, never following a symlink, never
 * leaving the filesystem; symlinks and special files hold no data. */
static int quota_walk(int dirfd, dev_t dev, uint32_t projid, int depth, struct brig_error **err)
{
    if (depth > QUOTA_WALK_DEPTH) return brig_failx(err, "deeper than %d directories", QUOTA_WALK_DEPTH);
    TRY(quota_set_projid(dirfd, true, projid, err));
    int dup = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) return brig_fail(err, errno, "dup");
    DIR *d = fdopendir(dup);
    if (d == NULL) {
        close(dup);
        return brig_fail(err, errno, "fdopendir");
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        struct stat st;
        if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;   /* gone */
        if (st.st_dev != dev || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))) continue;
        bool dir = S_ISDIR(st.st_mode);
        autoclose int fd = openat(dirfd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
                                  O_NONBLOCK | O_NOATIME | (dir ? O_DIRECTORY : 0));
        struct stat now;
        if (fd < 0 || fstat(fd, &now) < 0 || now.st_ino != st.st_ino || now.st_dev != dev) {
            rc = brig_fail(err, fd < 0 ? errno : EAGAIN, "%s: changed while it was walked", e->d_name);
            break;
        }
        rc = dir ? quota_walk(fd, dev, projid, depth + 1, err) : quota_set_projid(fd, false, projid, err);
        if (rc < 0) brig_wrap(err, "%s", e->d_name);
    }
    closedir(d);
    return rc;
}

int policy_quota_apply(const struct brig_policy *p, const struct brig_spec *s, struct brig_mount *m,
                       struct brig_error **err)
{
    char why[PATH_MAX + 256];
    enum policy_quota_how how = policy_quota_judge(p, s, m, why, sizeof(why));
    if (how == POLICY_QUOTA_NONE) return brig_failx(err, "%s", why);
    if (how == POLICY_QUOTA_FS_SIZE) {
        brig_debug("policy: workspace %s: its filesystem is within %llu bytes", m->source,
                   (unsigned long long)p->workspace.max_size);
        return 0;
    }
    if (how == POLICY_QUOTA_STAGED) {
        brig_debug("policy: workspace %s", why);
        m->stage_bytes = p->workspace.max_size;     /* made with the state directory */
        return 0;
    }
    if (how == POLICY_QUOTA_WATCHED) {
        brig_debug("policy: workspace %s", why);
        m->watch_bytes = p->workspace.max_size;     /* its watcher starts with the container */
        return 0;
    }
    /* The directory's inode number is its project id: unique among live
     * directories of the filesystem, and the same at every create. */
    autoclose int dfd = openat(m->source_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (dfd < 0 || fstat(dfd, &st) < 0) return brig_fail(err, errno, "open %s", m->source);
    if (st.st_ino == 0 || st.st_ino >= UINT32_MAX)
        return brig_failx(err, "%s: inode %llu does not fit a project id", m->source,
                          (unsigned long long)st.st_ino);
    uint32_t projid = (uint32_t)st.st_ino;
    if (quota_walk(dfd, st.st_dev, projid, 0, err) < 0) return brig_wrap(err, "%s", m->source);
    struct if_dqblk q = {
        .dqb_bhardlimit = (p->workspace.max_size + QIF_DQBLKSIZE - 1) / QIF_DQBLKSIZE,
        .dqb_valid = QIF_BLIMITS,
    };
    q.dqb_bsoftlimit = q.dqb_bhardlimit;
    if (quotactl_fd(dfd, QCMD(Q_SETQUOTA, PRJQUOTA), projid, &q) < 0)
        return brig_fail(err, errno, "%s: set the limit of project %u", m->source, projid);
    brig_debug("policy: workspace %s: project %u, %llu KiB", m->source, projid,
               (unsigned long long)q.dqb_bhardlimit);
    return 0;
}

bool policy_workspace_full(const struct brig_policy *p, const struct brig_spec *s, int state_dirfd)
{
    if (p == NULL || p->workspace.max_size == 0) return false;
    if (state_dirfd >= 0 && (policy_stage_full(state_dirfd) || policy_watch_fired(state_dirfd))) return true;
    size_t idx = 0;
    const struct brig_mount *m = s != NULL ? policy_workspace_mount(p, s, &idx) : NULL;
    if (m == NULL || m->staged || m->watch_bytes > 0 || !m->has_source_fd || m->source_fd < 0) return false;
    autoclose int fd = openat(m->source_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct statfs sf;
    struct stat st;
    if (fd < 0 || fstatfs(fd, &sf) < 0 || fstat(fd, &st) < 0) return false;
    uint64_t bsize = sf.f_frsize ? (uint64_t)sf.f_frsize : (uint64_t)sf.f_bsize;
    if (sf.f_blocks > 0 && (uint64_t)sf.f_blocks * bsize <= p->workspace.max_size)
        return sf.f_bavail == 0 || sf.f_ffree == 0;     /* its own small filesystem, full */
    struct if_dqblk q = { 0 };
    if (st.st_ino == 0 || st.st_ino >= UINT32_MAX ||
        quotactl_fd(fd, QCMD(Q_GETQUOTA, PRJQUOTA), (uint32_t)st.st_ino, &q) < 0 || q.dqb_bhardlimit == 0)
        return false;
    return q.dqb_curspace >= q.dqb_bhardlimit * QIF_DQBLKSIZE;     /* its project's limit reached */
}
