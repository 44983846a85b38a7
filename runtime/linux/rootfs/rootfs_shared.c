/* A container without a mount namespace of its own (config-linux.md
 * "Namespaces": no "mount" entry, it "MUST inherit" the runtime's; or one
 * joined by path). Its mounts go where runc and crun put them, into that
 * namespace: the host's, or someone else's. What brig does so that this
 * touches nothing but the container's root, and nothing stays:
 *  - root.path is bound onto itself in that namespace (one mount of ours,
 *    made private at once), and every mount is made below it, resolved
 *    inside the root by fd as in a namespace of its own (mounts.c); no
 *    propagation or flag of any mount we did not make is changed (runc
 *    makes the host's "/" rslave, recursively);
 *  - that mount's id is recorded in the state before it is attached, and
 *    delete (or a failed create) detaches it, and with it everything the
 *    container mounted (runc leaves its /proc, /dev and /sys mounted on
 *    the host after the container is gone);
 *  - the root is then a chroot into that mount, not a pivot_root (which
 *    would move the root of every process of the namespace), so the
 *    capabilities that leave a chroot are refused;
 *  - root.path being the namespace's own "/" (every mount would cover the
 *    host's), and a new user namespace (which may not mount there), are
 *    refused when something is to be mounted.
 * A config that needs no mount at all is only chrooted, as before. A sandbox
 * policy refuses both cases anyway (rule ns.host). */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/fs.h"
#include "../../util/log.h"
#include "../../util/strutil.h"
#include "../sync.h"
#include "mount_util.h"

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif

/* CAP_SYS_CHROOT and CAP_SYS_ADMIN leave a chroot at will, and
 * CAP_DAC_READ_SEARCH too (open_by_handle_at of the filesystem's root
 * inode, from any fd on it): with no mount namespace the chroot is all
 * that keeps the process in root.path. */
#define SHARED_ESCAPE_CAPS ((1ull << 2) | (1ull << 18) | (1ull << 21))

static bool shared_same_file(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static bool shared_root_is_host_root(const struct brig_spec *s)
{
    /* the directory create opened, which is what the init chroots into */
    if (s->root.has_fd) return shared_same_file(s->root.fd, "/");
    struct stat a, b;
    return s->root.path != NULL && stat(s->root.path, &a) == 0 && stat("/", &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

bool rootfs_shared_needs_mount(const struct brig_spec *s)
{
    const struct brig_linux *l = &s->linux_cfg;
    return s->n_mounts > 0 || l->n_masked_paths > 0 || l->n_readonly_paths > 0 || s->root.readonly ||
           l->has_rootfs_propagation || l->n_devices > 0 || l->n_sysctl > 0 || s->process.terminal;
}

/* The first field that needs a mount, for the errors. */
static const char *shared_mount_field(const struct brig_spec *s, char *buf, size_t len)
{
    const struct brig_linux *l = &s->linux_cfg;
    if (s->n_mounts > 0)
        snprintf(buf, len, "mounts[0] (%.200s)", s->mounts[0].destination ? s->mounts[0].destination : "");
    else
        snprintf(buf, len, "%s", l->n_masked_paths > 0 ? "linux.maskedPaths"
                                 : l->n_readonly_paths > 0 ? "linux.readonlyPaths"
                                 : s->root.readonly ? "root.readonly"
                                 : l->has_rootfs_propagation ? "linux.rootfsPropagation"
                                 : l->n_devices > 0 ? "linux.devices"
                                 : l->n_sysctl > 0 ? "linux.sysctl" : "process.terminal");
    return buf;
}

int rootfs_shared_check(const struct brig_spec *s, bool new_user, struct brig_error **err)
{
    bool host_root = shared_root_is_host_root(s);
    if (s->process.has_caps && (s->process.caps.sets[BRIG_CAP_BOUNDING] & SHARED_ESCAPE_CAPS) && !host_root)
        return brig_failx(err, "process.capabilities.bounding: CAP_SYS_CHROOT, CAP_SYS_ADMIN and "
                               "CAP_DAC_READ_SEARCH (open_by_handle_at) would let the process leave "
                               "root.path, which without a mount namespace is only a chroot");
    if (!rootfs_shared_needs_mount(s)) return 0;
    char field[256];
    if (host_root)
        return brig_failx(err, "%s: root.path is the host's \"/\": without a mount namespace of its "
                          "own the container would mount over the host's own directories (add "
                          "{\"type\": \"mount\"} to linux.namespaces)", shared_mount_field(s, field, sizeof(field)));
    if (new_user)
        return brig_failx(err, "%s: a new user namespace may not mount in the mount namespace it "
                          "inherits or joins (add {\"type\": \"mount\"} to linux.namespaces)",
                          shared_mount_field(s, field, sizeof(field)));
    return 0;
}

/* root.path in the init's mount namespace: the directory create opened,
 * or, in a namespace joined by path, root.path as that namespace sees it,
 * with no symlink on the way. */
static int shared_open_root(const struct brig_spec *s, bool joined, struct brig_error **err)
{
    if (!joined) {
        int fd = fcntl(s->root.fd, F_DUPFD_CLOEXEC, 3);
        return fd < 0 ? brig_fail(err, errno, "root.path: dup") : fd;
    }
    struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, s->root.path, &how, sizeof(how));
    if (fd < 0) return brig_fail(err, errno, "root.path: %s in the joined mount namespace", s->root.path);
    return fd;
}

/* The mount fd is on: its unique id (never reused, Linux 6.8) when the
 * kernel has one, else the old one. */
static int shared_mnt_id(int fd, uint64_t *id, bool *unique, struct brig_error **err)
{
    struct statx stx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID_UNIQUE, &stx) == 0 &&
        (stx.stx_mask & STATX_MNT_ID_UNIQUE)) {
        *id = stx.stx_mnt_id;
        *unique = true;
        return 0;
    }
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0)
        return brig_fail(err, errno, "statx");
    if (!(stx.stx_mask & STATX_MNT_ID)) return brig_failx(err, "statx: no mount id from the kernel");
    *id = stx.stx_mnt_id;
    *unique = false;
    return 0;
}

int rootfs_shared_bind(const struct brig_spec *s, bool joined, int sync_fd, int *rootfd,
                       struct brig_error **err)
{
    autoclose int dirfd = shared_open_root(s, joined, err);
    if (dirfd < 0) return -1;
    /* In a joined namespace root.path may be that namespace's "/" even
     * when the host's is not. */
    if (shared_same_file(dirfd, "/"))
        return brig_failx(err, "root.path: %s is the \"/\" of the mount namespace: refusing to mount "
                          "over its own directories", s->root.path);
    /* Not recursive: whatever is mounted below root.path in this namespace
     * (another such container's /proc, a bind of its secrets) is not the
     * container's, and its view would show it. */
    autoclose int tree = mnt_clone(dirfd, false, err);
    if (tree < 0) return brig_wrap(err, "root.path: bind %s onto itself", s->root.path);
    struct rootfs_shared_mnt rec = {0};
    struct stat st;
    if (fstat(dirfd, &st) < 0) return brig_fail(err, errno, "root.path: stat");
    rec.root_dev = st.st_dev;
    rec.root_ino = st.st_ino;
    TRY(shared_mnt_id(tree, &rec.id, &rec.unique, err));
    /* On the record before it exists: a create killed from here on leaves
     * a state whose delete detaches it. */
    autofree char *text = rootfs_shared_format(&rec);
    TRY(sync_send(sync_fd, SYNC_SHARED_MNT, text, err));
    TRY(sync_expect(sync_fd, SYNC_SHARED_MNT_ACK, "parent went away", NULL, err));
    if (mnt_attach(tree, dirfd, err) < 0) return brig_wrap(err, "root.path: bind %s onto itself", s->root.path);
    /* Attached under a shared mount it was made shared with copies in the
     * peers: private now, before anything is mounted in it, so that none
     * of the container's mounts propagates anywhere (the copies go when
     * this mount does). */
    if (mnt_setattr(tree, false, 0, 0, MS_PRIVATE, err) < 0)
        return brig_wrap(err, "root.path: make the bind of %s private", s->root.path);
    brig_debug("rootfs: no mount namespace of its own: %s bound onto itself (mount %" PRIu64 ")",
               s->root.path, rec.id);
    *rootfd = steal_fd(&tree);
    return 0;
}

int rootfs_shared_open(const struct brig_spec *s, bool joined, int *rootfd, struct brig_error **err)
{
    *rootfd = shared_open_root(s, joined, err);
    return *rootfd < 0 ? -1 : 0;
}

int rootfs_chroot_shared(int rootfd, struct brig_error **err)
{
    if (fchdir(rootfd) < 0) return brig_fail(err, errno, "root.path: chdir");
    if (chroot(".") < 0) return brig_fail(err, errno, "root.path: chroot");
    if (chdir("/") < 0) return brig_fail(err, errno, "chdir /");
    brig_debug("rootfs: no mount namespace of its own, chrooted");
    return 0;
}

/* ---- the record, and its undo ---------------------------------------- */

char *rootfs_shared_format(const struct rootfs_shared_mnt *m)
{
    return brig_asprintf("%" PRIu64 " %c %" PRIu64 ":%" PRIu64 " %" PRIu64 ":%" PRIu64 " %s", m->id,
                         m->unique ? 'u' : 'o', m->root_dev, m->root_ino, m->ns_dev, m->ns_ino,
                         m->ns_path != NULL ? m->ns_path : "");
}

int rootfs_shared_parse(const char *text, struct rootfs_shared_mnt *m)
{
    char kind = 0;
    int off = -1;
    *m = (struct rootfs_shared_mnt){0};
    if (sscanf(text, "%" SCNu64 " %c %" SCNu64 ":%" SCNu64 " %" SCNu64 ":%" SCNu64 " %n", &m->id, &kind,
               &m->root_dev, &m->root_ino, &m->ns_dev, &m->ns_ino, &off) != 6 || off < 0 ||
        (kind != 'u' && kind != 'o'))
        return -1;
    m->unique = kind == 'u';
    m->ns_path = text[off] != '\0' ? brig_strdup(text + off) : NULL;
    return 0;
}

/* statmount(2) (Linux 6.8), not in this libc's headers; the syscall
 * number is the same on every architecture. */
#ifndef SYS_statmount
#define SYS_statmount 457
#endif
struct shared_mnt_id_req {
    uint32_t size, spare;
    uint64_t mnt_id, param;
};
#define SHARED_STATMOUNT_SB_BASIC 0x1

/* Whether our bind is still mounted somewhere in this namespace, though
 * not on top at root: covered by another mount since (a second such
 * container on the same root.path binds over ours). */
static bool shared_still_mounted(const char *root, const struct rootfs_shared_mnt *m)
{
    if (m->unique) {
        struct shared_mnt_id_req req = { .size = sizeof(req), .mnt_id = m->id, .param = SHARED_STATMOUNT_SB_BASIC };
        char buf[512];
        return syscall(SYS_statmount, &req, buf, sizeof(buf), 0) == 0 || errno != ENOENT;
    }
    autofree char *text = NULL;
    if (brig_read_file("/proc/self/mountinfo", 16u << 20, &text, NULL, NULL) < 0) return true;
    autofree char *want = brig_asprintf("%" PRIu64 " ", m->id);
    for (char *l = text; l != NULL && *l != '\0';) {
        char *nl = strchr(l, '\n');
        if (nl != NULL) *nl = '\0';
        /* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ...": the id and, escaped as
         * mountinfo escapes it, the mount point */
        char mp[4096];
        if (strncmp(l, want, strlen(want)) == 0 && sscanf(l, "%*s %*s %*s %*s %4095s", mp) == 1 &&
            strcmp(mp, root) == 0)
            return true;
        l = nl != NULL ? nl + 1 : NULL;
    }
    return false;
}

/* In the namespace the mounts are in (a child of ours: it changes its
 * cwd, and for a joined namespace its mount namespace): the mount at root
 * (the top one) is ours when it has our id and our root directory;
 * detached, it takes every mount of the container with it. One that is
 * gone (or was covered by someone since) is left alone. The detach is of
 * ".", the cwd entered through that fd: no path, and no /proc needed. */
static int shared_detach_here(const char *root, const struct rootfs_shared_mnt *m, struct brig_error **err)
{
    struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
    autoclose int fd = (int)syscall(SYS_openat2, AT_FDCWD, root, &how, sizeof(how));
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) return 0;
    if (fd < 0) return brig_fail(err, errno, "open %s", root);
    struct statx stx;
    unsigned mask = m->unique ? STATX_MNT_ID_UNIQUE : STATX_MNT_ID;
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, mask | STATX_INO, &stx) < 0)
        return brig_fail(err, errno, "statx %s", root);
    bool unique = (stx.stx_mask & STATX_MNT_ID_UNIQUE) != 0;
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "stat %s", root);
    if (stx.stx_mnt_id != m->id || unique != m->unique || st.st_dev != m->root_dev ||
        st.st_ino != m->root_ino) {
        /* Detaching a covered one would take what covers it along: say so,
         * and keep the state for a later delete. */
        if (shared_still_mounted(root, m))
            return brig_failx(err, "its mounts at %s are covered by a later mount (another container "
                              "without a mount namespace on the same root.path?): delete that one first", root);
        brig_debug("rootfs: mount %" PRIu64 " is gone from %s: nothing to detach", m->id, root);
        return 0;
    }
    if (fchdir(fd) < 0) return brig_fail(err, errno, "chdir %s", root);
    if (umount2(".", MNT_DETACH) < 0) return brig_fail(err, errno, "detach the container's mounts at %s", root);
    brig_debug("rootfs: detached mount %" PRIu64 " at %s with everything below it", m->id, root);
    return 0;
}

int rootfs_shared_detach(const char *root, const struct rootfs_shared_mnt *m, struct brig_error **err)
{
    if (root == NULL || root[0] != '/') return brig_failx(err, "no root.path recorded for its mounts");
    autoclose int ns = -1;
    if (m->ns_path != NULL) {
        /* A namespace joined by path, if it is still the one the container
         * used. Gone: its mounts are gone with it. */
        ns = open(m->ns_path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (ns < 0 || fstat(ns, &st) < 0 || st.st_dev != m->ns_dev || st.st_ino != m->ns_ino) {
            brig_debug("rootfs: the mount namespace %s is gone: so are the container's mounts", m->ns_path);
            return 0;
        }
    } else {
        struct stat self;
        if (stat("/proc/self/ns/mnt", &self) < 0) return brig_fail(err, errno, "stat /proc/self/ns/mnt");
        if (self.st_dev != m->ns_dev || self.st_ino != m->ns_ino)
            return brig_failx(err, "its mounts are in the mount namespace create ran in (mnt:[%" PRIu64 "]), "
                              "not this one: run delete from there", m->ns_ino);
    }
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0) return brig_fail(err, errno, "pipe");
    pid_t pid = fork();
    if (pid == 0) {
        /* setns of a mount namespace wants a single-threaded process and
         * resets its root and cwd: a child of ours does it */
        close(pipefd[0]);
        struct brig_error *e = NULL;
        if (ns >= 0 && setns(ns, CLONE_NEWNS) < 0) brig_fail(&e, errno, "setns %s", m->ns_path);
        else shared_detach_here(root, m, &e);
        if (e != NULL && write(pipefd[1], e->msg, strlen(e->msg)) < 0) _exit(2);
        _exit(e != NULL);
    }
    int fork_errno = errno;
    close(pipefd[1]);
    if (pid < 0) {
        close(pipefd[0]);
        return brig_fail(err, fork_errno, "fork");
    }
    char msg[512];
    ssize_t n;
    do {
        n = read(pipefd[0], msg, sizeof(msg) - 1);
    } while (n < 0 && errno == EINTR);
    close(pipefd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    msg[n > 0 ? n : 0] = '\0';
    const char *why = n > 0 ? msg : "detaching the container's mounts failed";
    if (m->ns_path != NULL) return brig_failx(err, "in the mount namespace %s: %s", m->ns_path, why);
    return brig_failx(err, "%s", why);
}
