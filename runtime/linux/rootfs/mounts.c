/* spec->mounts, in order, into the container root (runtime-spec config.md
 * "Mounts"). Every destination is resolved or created inside the root by
 * fd (util/fs.h) and mounted onto that fd: binds with open_tree/move_mount,
 * filesystems with mount(2) on /proc/self/fd/N; then the result is reopened
 * and checked, so a symlink in the image can never put a mount on the host. */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../config/mount_options.h"
#include "../../util/cleanup.h"
#include "../../util/fd_defer.h"
#include "../../util/fs.h"
#include "../../util/log.h"
#include "../../util/strutil.h"
#include "mount_util.h"
#include "mounts_internal.h"

static bool streq(const char *a, const char *b)
{
    return a != NULL && b != NULL && strcmp(a, b) == 0;
}

static bool mounts_path_under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* proc, sysfs and /dev must land on a real directory: a symlink there is
 * the classic hostile-image trick (/proc -> a host path; /dev -> a bind
 * mount's destination, where the device nodes would then be made). Checked on the last
 * component (O_NOFOLLOW in the one resolution of dest); the rest of the
 * path is scoped to the root by openat2. */
static bool mounts_needs_real_dir(const char *dest, const char *type)
{
    return strcmp(dest, "/proc") == 0 || strcmp(dest, "/sys") == 0 || strcmp(dest, "/dev") == 0 ||
           (type != NULL && (strcmp(type, "proc") == 0 || strcmp(type, "sysfs") == 0));
}

/* mounts_open_dest; *plain as brig_mkdir_in_root_ex (directories only).
 * A dangling symlink on the way has its target made inside the root, as
 * runc and crun make it (/etc/resolv.conf -> ../run/resolv.conf in an
 * image without /run/resolv.conf); never for real_dir_of, which must not
 * be a symlink at all. */
static int mounts_open_dest_ex(int rootfd, const char *dest, bool dir, const char *real_dir_of,
                               bool *plain, struct brig_error **err)
{
    *plain = false;
    if (dir) {
        autoerr struct brig_error *e = NULL;
        int fd = brig_mkdir_in_root_ex(rootfd, dest, 0755,
                                       real_dir_of != NULL ? BRIG_IN_ROOT_NOFOLLOW
                                                           : BRIG_IN_ROOT_MAKE_TARGET, plain, &e);
        if (fd >= 0) return fd;
        if (real_dir_of != NULL && e->errnum == ELOOP)
            return brig_failx(err, "%s must be mounted on a directory, %s is a symlink",
                              real_dir_of, dest);
        *err = steal_ptr(&e);
        return -1;
    }
    int fd = brig_mkfile_in_root_ex(rootfd, dest, 0644, BRIG_IN_ROOT_MAKE_TARGET, err);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return brig_fail(err, e, "stat %s", dest);
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return brig_failx(err, "%s is a directory, the source is a file", dest);
    }
    return fd;
}

int mounts_open_dest(int rootfd, const char *dest, bool dir, struct brig_error **err)
{
    bool plain;
    return mounts_open_dest_ex(rootfd, dest, dir, NULL, &plain, err);
}

/* Mounts under /proc could hide or replace what the kernel says about the
 * container (runc's checkProcMount): only procfs itself, and the handful of
 * files lxcfs emulates, may go there. */
static int mounts_check_proc(const char *where, const char *type, bool bind, bool src_is_proc,
                             struct brig_error **err)
{
    static const char *const lxcfs[] = {
        "/proc/cpuinfo", "/proc/diskstats", "/proc/meminfo", "/proc/stat",
        "/proc/swaps", "/proc/uptime", "/proc/loadavg", "/proc/slabinfo",
        "/proc/net/dev", "/proc/sys/kernel/ns_last_pid", "/proc/sys/crypto/fips_enabled",
    };
    if (!mounts_path_under(where, "/proc")) return 0;
    if (strcmp(where, "/proc") == 0) {
        if ((!bind && streq(type, "proc")) || (bind && src_is_proc)) return 0;
        return brig_failx(err, "only a procfs may be mounted on /proc");
    }
    if (bind && src_is_proc) return 0;
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(lxcfs); i++)
        if (strcmp(where, lxcfs[i]) == 0) return 0;
    return brig_failx(err, "refusing to mount over %s: inside /proc", where);
}

/* The host path of the root fd mounts_apply works on, read once for all its
 * mounts: the fd stays open (and on the same mount) for the whole loop. */
static int mounts_root_fd = -1;
static char *mounts_root_path;

/* plain: destfd was resolved without following a symlink, so its path in
 * the root is dest itself, cleaned (what the readlink would have said). */
static int mounts_check_dest(int rootfd, int destfd, const char *dest, bool plain,
                             const char *type, bool bind, bool src_is_proc,
                             struct brig_error **err)
{
    autofree char *where = NULL;
    if (!plain) {
        if (rootfd == mounts_root_fd && mounts_root_path == NULL)
            mounts_root_path = mnt_root_link(rootfd);
        where = rootfd == mounts_root_fd && mounts_root_path != NULL
                    ? mnt_path_in_root_link(mounts_root_path, destfd)
                    : mnt_path_in_root(rootfd, destfd);
    }
    if (where == NULL) where = mnt_path_clean(dest);
    if (strcmp(where, "/") == 0)
        return brig_failx(err, "%s resolves to the container's root: refusing to mount over it",
                          dest);
    return mounts_check_proc(where, type, bind, src_is_proc, err);
}

/* Apply per-mount flags to a (detached) bind, as runc's MS_REMOUNT|MS_BIND
 * would; in a user namespace, flags locked by the host cannot be cleared,
 * and keeping them is the safe side, so retry without clearing those. */
int mounts_bind_flags(int tree, const struct brig_mount_opts *o, struct brig_error **err)
{
    uint64_t set = mnt_flags_to_attr(o->flags);
    uint64_t clr = mnt_flags_to_attr(o->clear_flags) & ~(uint64_t)MOUNT_ATTR__ATIME;
    /* atime is one field: setting it, or leaving noatime/strictatime ("atime",
     * "nostrictatime", which means relatime again), replaces it whole */
    if (o->flags & (MS_NOATIME | MS_STRICTATIME | MS_RELATIME) ||
        o->clear_flags & (MS_NOATIME | MS_STRICTATIME))
        clr |= MOUNT_ATTR__ATIME;
    if (set != 0 || clr != 0) {
        autoerr struct brig_error *e = NULL;
        if (mnt_setattr(tree, false, set, clr, 0, &e) < 0) {
            struct statvfs sv;
            if (e->errnum != EPERM || clr == 0 || fstatvfs(tree, &sv) < 0)
                return brig_fail(err, e->errnum, "set mount flags");
            clr &= ~mnt_flags_to_attr(sv.f_flag); /* ST_* == MS_* for these */
            brig_debug("bind: keeping locked flags %#lx", (unsigned long)sv.f_flag);
            if (mnt_setattr(tree, false, set, clr, 0, err) < 0)
                return brig_wrap(err, "set mount flags");
        }
    }
    if (o->attr_set != 0 || o->attr_clr != 0)
        if (mnt_setattr(tree, true, o->attr_set, o->attr_clr, 0, err) < 0)
            return brig_wrap(err, "set recursive mount attributes");
    return 0;
}

int mounts_bind_source(int rootfd, const char *src, const char *dest,
                       const struct brig_mount_opts *o, const char *type,
                       struct brig_error **err)
{
    autoclose_path int srcfd = open(src, O_PATH | O_CLOEXEC);
    if (srcfd < 0) return brig_fail(err, errno, "source %s", src);
    struct stat st;
    struct statfs sfs;
    if (fstat(srcfd, &st) < 0 || fstatfs(srcfd, &sfs) < 0)
        return brig_fail(err, errno, "stat source %s", src);
    bool src_is_proc = sfs.f_type == PROC_SUPER_MAGIC;
    /* before creating anything; checked again on the resolved path below */
    TRY(mounts_check_proc(dest, type, true, src_is_proc, err));
    bool plain;
    const char *real_dir_of = mounts_needs_real_dir(dest, NULL) ? dest : NULL;
    autoclose_path int destfd =
        mounts_open_dest_ex(rootfd, dest, S_ISDIR(st.st_mode), real_dir_of, &plain, err);
    if (destfd < 0) return -1;
    TRY(mounts_check_dest(rootfd, destfd, dest, plain, type, true, src_is_proc, err));

    autoclose_path int tree = mnt_clone(srcfd, o->recursive_bind, err);
    if (tree < 0) return brig_wrap(err, "bind %s", src);
    TRY(mounts_bind_flags(tree, o, err));
    if (mnt_attach(tree, destfd, err) < 0) return brig_wrap(err, "bind %s", src);
    /* after move_mount the fd is the attached mount */
    if (mnt_set_propagation(tree, o->propagation, err) < 0) return brig_wrap(err, "propagation");
    brig_debug("mounted bind %s on %s (flags %#lx)", src, dest, o->flags);
    return 0;
}

/* A source the policy judged (spec.h: source_fd, opened in the host's mount
 * namespace, which open_tree refuses here): open its symlink-free path in
 * ours and insist on the same file. A directory swapped for a symlink or
 * another directory since the check fails the create. */
static int mounts_bind_pinned(const struct brig_mount *m, int *out, struct brig_error **err)
{
    if (m->source_fd < 0)
        return brig_failx(err, "source %s: did not exist at the policy check, refusing it", m->source);
    struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
    autoclose int fd = (int)syscall(SYS_openat2, AT_FDCWD, m->source, &how, sizeof(how));
    if (fd < 0) return brig_fail(err, errno, "source %s (as the policy judged it)", m->source);
    struct stat now, judged;
    if (fstat(fd, &now) < 0 || fstat(m->source_fd, &judged) < 0)
        return brig_fail(err, errno, "stat source %s", m->source);
    if (now.st_dev != judged.st_dev || now.st_ino != judged.st_ino)
        return brig_failx(err, "source %s: changed since the policy check, refusing it", m->source);
    *out = steal_fd(&fd);
    return 0;
}

/* The tree create cloned for us (mounts_bind_prepare): checked like a
 * source, attached, then given its propagation here, in our namespace. */
static int mounts_bind_tree(int rootfd, const struct brig_mount *m, const char *dest,
                            const struct brig_mount_opts *o, struct brig_error **err)
{
    struct stat st;
    struct statfs sfs;
    if (fstat(m->tree_fd, &st) < 0 || fstatfs(m->tree_fd, &sfs) < 0)
        return brig_fail(err, errno, "stat source %s", m->source);
    bool src_is_proc = sfs.f_type == PROC_SUPER_MAGIC;
    TRY(mounts_check_proc(dest, m->type, true, src_is_proc, err));
    bool plain;
    const char *real_dir_of = strcmp(dest, "/proc") == 0 || strcmp(dest, "/sys") == 0 ? dest : NULL;
    autoclose_path int destfd =
        mounts_open_dest_ex(rootfd, dest, S_ISDIR(st.st_mode), real_dir_of, &plain, err);
    if (destfd < 0) return -1;
    TRY(mounts_check_dest(rootfd, destfd, dest, plain, m->type, true, src_is_proc, err));
    if (mnt_attach(m->tree_fd, destfd, err) < 0) return brig_wrap(err, "bind %s", m->source);
    if (mnt_set_propagation(m->tree_fd, o->propagation, err) < 0) return brig_wrap(err, "propagation");
    brig_debug("mounted bind %s on %s (cloned before the user namespace)", m->source, dest);
    return 0;
}

int mounts_bind_prepare(struct brig_spec *s, bool new_user, bool rootless, struct brig_error **err)
{
    /* A clone moved in from here carries no lock: the kernel locks a
     * mount's flags only when it copies a mount namespace for a less
     * privileged owner. The init's own bind (of its copy of the host's
     * mounts) keeps the host's ro/nodev/nosuid/noexec locked; ours would
     * not, and a process with CAP_SYS_ADMIN in its user namespace could
     * remount a source the host keeps read-only writable (seen on 6.18).
     * So only a container that can never hold CAP_SYS_ADMIN gets them;
     * an idmapped mount can only be made here (mounts_idmap.c judges it). */
    bool sysadmin = s->process.has_caps &&
                    (s->process.caps.sets[BRIG_CAP_BOUNDING] & (1ull << 21 /* CAP_SYS_ADMIN */));
    for (size_t i = 0; i < s->n_mounts; i++) {
        struct brig_mount *m = &s->mounts[i];
        if (!m->opts.bind || m->source == NULL || m->source[0] == '\0') continue;
        /* cloned already; or staged later, when this runs again for it */
        if (m->has_tree_fd || (m->stage_bytes > 0 && !m->staged)) continue;
        bool idmap = mounts_idmap_wanted(m);
        /* Rootless: only the init can bind (it has privilege in its user
         * namespace, we have none on the host), and its copy keeps the
         * host's flags locked; an idmapped mount of a host filesystem needs
         * CAP_SYS_ADMIN on the host. */
        if (rootless && idmap)
            return brig_failx(err, "mounts[%zu] (%s): an idmapped mount needs privilege on the host; "
                              "rootless brig cannot make one", i, m->destination ? m->destination : "");
        if (rootless || (!idmap && (!new_user || sysadmin))) continue;
        autoclose int own = -1;
        int srcfd = m->has_source_fd ? m->source_fd : -1;
        if (!m->has_source_fd) {
            autofree char *src = m->source[0] == '/' || s->bundle == NULL
                                     ? brig_strdup(m->source)
                                     : brig_asprintf("%s/%s", s->bundle, m->source);
            srcfd = own = open(src, O_PATH | O_CLOEXEC);
            if (own < 0) return brig_fail(err, errno, "mounts[%zu] (%s): source %s", i,
                                          m->destination ? m->destination : "", m->source);
        }
        if (srcfd < 0) continue;    /* did not exist at the policy check: the init refuses it */
        if (idmap) {
            if (mounts_idmap_prepare(s, i, srcfd, new_user && sysadmin, err) < 0)
                return brig_wrap(err, "mounts[%zu] (%s)", i, m->destination);
            continue;
        }
        int tree = mnt_clone(srcfd, m->opts.recursive_bind, err);
        if (tree < 0) return brig_wrap(err, "mounts[%zu] (%s): bind %s", i, m->destination, m->source);
        m->has_tree_fd = true;
        m->tree_fd = tree;
        if (mounts_bind_flags(tree, &m->opts, err) < 0)
            return brig_wrap(err, "mounts[%zu] (%s)", i, m->destination);
    }
    return 0;
}

void mounts_bind_release(struct brig_spec *s)
{
    for (size_t i = 0; i < s->n_mounts; i++) {
        if (!s->mounts[i].has_tree_fd) continue;
        close(s->mounts[i].tree_fd);
        s->mounts[i].has_tree_fd = false;
    }
}

static int mounts_bind(int rootfd, const struct brig_spec *s, const struct brig_mount *m,
                       const char *dest, const struct brig_mount_opts *o,
                       struct brig_error **err)
{
    if (m->source == NULL || m->source[0] == '\0')
        return brig_failx(err, "source: required for a bind mount");
    if (m->has_tree_fd) return mounts_bind_tree(rootfd, m, dest, o, err);
    autoclose int pinned = -1;
    if (m->has_source_fd) TRY(mounts_bind_pinned(m, &pinned, err));
    /* fail closed: an idmapped mount asked for must not become a plain one */
    if (o->idmap || mounts_idmap_wanted(m))
        return brig_failx(err, "idmapped mount: not prepared by create (brig idmaps only in a "
                               "new mount namespace: linux.namespaces \"mount\")");
    /* relative sources are relative to the bundle (config.md "Mounts") */
    autofree char *src = pinned >= 0 ? brig_asprintf("/proc/self/fd/%d", pinned)
                         : m->source[0] == '/' || s->bundle == NULL
                             ? brig_strdup(m->source)
                             : brig_asprintf("%s/%s", s->bundle, m->source);
    return mounts_bind_source(rootfd, src, dest, o, m->type, err);
}

/* A bind onto "/" itself (runc 1.1.5 does it): the source, a directory,
 * is put over the root and becomes the container's root; every later
 * mount, the devices and the pivot go into it (*rootfd is then the new
 * mount). The mounts made before it are under it, unseen, as in runc.
 * Only this literal destination: a destination that resolves to the root
 * through a symlink is still refused (mounts_check_dest). */
static int mounts_bind_root(int *rootfd, const struct brig_spec *s, const struct brig_mount *m,
                            const struct brig_mount_opts *o, struct brig_error **err)
{
    if (m->source == NULL || m->source[0] == '\0')
        return brig_failx(err, "source: required for a bind mount");
    autoclose int tree = -1;
    if (m->has_tree_fd) {
        tree = fcntl(m->tree_fd, F_DUPFD_CLOEXEC, 3);
        if (tree < 0) return brig_fail(err, errno, "dup the cloned source");
    } else {
        if (o->idmap || mounts_idmap_wanted(m))
            return brig_failx(err, "idmapped mount: not prepared by create (brig idmaps only in a "
                                   "new mount namespace: linux.namespaces \"mount\")");
        autoclose int src = -1;
        if (m->has_source_fd) {
            TRY(mounts_bind_pinned(m, &src, err));
        } else {
            autofree char *path = m->source[0] == '/' || s->bundle == NULL
                                      ? brig_strdup(m->source)
                                      : brig_asprintf("%s/%s", s->bundle, m->source);
            src = open(path, O_PATH | O_CLOEXEC);
            if (src < 0) return brig_fail(err, errno, "source %s", m->source);
        }
        tree = mnt_clone(src, o->recursive_bind, err);
        if (tree < 0) return brig_wrap(err, "bind %s", m->source);
        TRY(mounts_bind_flags(tree, o, err));
    }
    struct stat st;
    struct statfs sfs;
    if (fstat(tree, &st) < 0 || fstatfs(tree, &sfs) < 0)
        return brig_fail(err, errno, "stat source %s", m->source);
    if (!S_ISDIR(st.st_mode))
        return brig_failx(err, "source %s: a bind onto the container's root needs a directory", m->source);
    if (sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC)
        return brig_failx(err, "source %s: refusing a procfs or sysfs as the container's root", m->source);
    if (mnt_attach(tree, *rootfd, err) < 0) return brig_wrap(err, "bind %s onto the root", m->source);
    if (mnt_set_propagation(tree, o->propagation, err) < 0) return brig_wrap(err, "propagation");
    brig_debug("mounted bind %s over the root: it is the container's root now", m->source);
    close(*rootfd);
    *rootfd = steal_fd(&tree);
    mounts_root_fd = *rootfd;
    free(mounts_root_path);
    mounts_root_path = NULL;
    return 0;
}

/* The mount an fd is on: a new mount must show a new id at the path. */
static int mounts_mnt_id(int fd, uint64_t *id, struct brig_error **err)
{
    struct statx stx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0)
        return brig_fail(err, errno, "statx");
    if (!(stx.stx_mask & STATX_MNT_ID)) return brig_failx(err, "statx: no mount id from the kernel");
    *id = stx.stx_mnt_id;
    return 0;
}

static unsigned long mounts_fs_magic(const char *type)
{
    static const struct { const char *type; unsigned long magic; } magics[] = {
        { "proc", PROC_SUPER_MAGIC },     { "sysfs", SYSFS_MAGIC },
        { "tmpfs", TMPFS_MAGIC },         { "devpts", DEVPTS_SUPER_MAGIC },
        { "mqueue", 0x19800202 },          { "cgroup2", CGROUP2_SUPER_MAGIC },
    };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(magics); i++)
        if (strcmp(type, magics[i].type) == 0) return magics[i].magic;
    return 0;
}

/* In a user namespace the kernel refuses some filesystems that expose
 * namespaces we do not own (sysfs without our own netns, mqueue without our
 * own ipcns): runc binds the host's instance instead, with the same flags. */
static const char *mounts_userns_fallback(const char *type)
{
    if (strcmp(type, "sysfs") == 0) return "/sys";
    if (strcmp(type, "mqueue") == 0) return "/dev/mqueue";
    return NULL;
}

/* A tmpfs without "mode=" takes the mode of the directory it covers, as
 * runc does: images rely on e.g. a 1777 /tmp or a 0712 directory keeping
 * its mode under the tmpfs (the kernel's default would be 1777). */
static int mounts_tmpfs_mode(int destfd, const char *type, const char *data, char **out,
                             struct brig_error **err)
{
    bool has_mode = data != NULL && (brig_str_has_prefix(data, "mode=") || strstr(data, ",mode=") != NULL);
    if (strcmp(type, "tmpfs") != 0 || has_mode) {
        *out = data != NULL ? brig_strdup(data) : NULL;
        return 0;
    }
    struct stat st;
    if (fstat(destfd, &st) < 0) return brig_fail(err, errno, "stat the tmpfs mount point");
    unsigned mode = (unsigned)st.st_mode & 07777;
    *out = data != NULL && data[0] != '\0' ? brig_asprintf("%s,mode=%o", data, mode)
                                           : brig_asprintf("mode=%o", mode);
    return 0;
}

int mounts_fs(int rootfd, const char *source, const char *dest, const char *type,
              const struct brig_mount_opts *o, bool in_userns, struct brig_error **err)
{
    return mounts_fs_open(rootfd, source, dest, type, o, in_userns, NULL, err);
}

int mounts_fs_open(int rootfd, const char *source, const char *dest, const char *type,
                   const struct brig_mount_opts *o, bool in_userns, int *verified,
                   struct brig_error **err)
{
    if (verified != NULL) *verified = -1;
    TRY(mounts_check_proc(dest, type, false, false, err));
    bool plain;
    autoclose_path int destfd = mounts_open_dest_ex(
        rootfd, dest, true, mounts_needs_real_dir(dest, type) ? type : NULL, &plain, err);
    if (destfd < 0) return -1;
    TRY(mounts_check_dest(rootfd, destfd, dest, plain, type, false, false, err));
    uint64_t before = 0;
    TRY(mounts_mnt_id(destfd, &before, err));

    unsigned long flags = o->flags & ~(MS_BIND | MS_REC);
    /* cgroup2 is read-only unless "rw" was given explicitly */
    if (strcmp(type, "cgroup2") == 0 && !(o->clear_flags & MS_RDONLY)) flags |= MS_RDONLY;
    autofree char *data = NULL;
    TRY(mounts_tmpfs_mode(destfd, type, o->data, &data, err));
    char fdpath[64];
    brig_fd_path(destfd, fdpath, sizeof(fdpath));
    if (mount(source != NULL ? source : type, fdpath, type, flags, data) < 0) {
        int e = errno;
        const char *host = mounts_userns_fallback(type);
        if (e != EPERM || !in_userns || host == NULL) return brig_fail(err, e, "mount %s", type);
        brig_debug("mount %s refused in the user namespace: binding %s instead", type, host);
        struct brig_mount_opts bo = *o;
        bo.bind = bo.recursive_bind = true;
        bo.flags = flags & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC);
        bo.data = NULL;
        if (mounts_bind_source(rootfd, host, dest, &bo, type, err) < 0)
            return brig_wrap(err, "mount %s refused (%s), bind of %s", type, strerror(e), host);
        return 0;
    }

    /* Look again through the root: the new mount must be where we meant. */
    autoclose_path int newfd = brig_open_in_root(rootfd, dest, O_PATH | O_DIRECTORY, 0, err);
    if (newfd < 0) return brig_wrap(err, "reopen after mount %s", type);
    uint64_t after = 0;
    struct statfs sfs;
    TRY(mounts_mnt_id(newfd, &after, err));
    if (fstatfs(newfd, &sfs) < 0) return brig_fail(err, errno, "statfs %s after mount", dest);
    unsigned long magic = mounts_fs_magic(type);
    if (!(flags & MS_REMOUNT) &&
        (after == before || (magic != 0 && (unsigned long)sfs.f_type != magic)))
        return brig_failx(err, "mount %s: the new mount is not visible at %s", type, dest);
    if (o->attr_set != 0 || o->attr_clr != 0)
        if (mnt_setattr(newfd, true, o->attr_set, o->attr_clr, 0, err) < 0)
            return brig_wrap(err, "set recursive mount attributes");
    if (mnt_set_propagation(newfd, o->propagation, err) < 0) return brig_wrap(err, "propagation");
    brig_debug("mounted %s on %s (flags %#lx, data %s)", type, dest, flags,
               o->data != NULL ? o->data : "");
    if (verified != NULL) *verified = steal_fd(&newfd);
    return 0;
}

static int mounts_one(int *rootp, const struct brig_spec *s, size_t i, bool in_userns,
                      struct brig_error **err)
{
    int rootfd = *rootp;
    const struct brig_mount *m = &s->mounts[i];
    if (m->destination == NULL || m->destination[0] == '\0')
        return brig_failx(err, "destination: required");
    /* The options are the source of truth; parsing them again here keeps
     * this step independent of who built the spec. */
    char jpath[64];
    snprintf(jpath, sizeof(jpath), "mounts[%zu].options", i);
    __attribute__((cleanup(mount_opts_free))) struct brig_mount_opts o = {0};
    TRY(mount_options_parse(m->options, m->n_options, m->type, jpath, &o, err));
    autofree char *dest = mnt_path_clean(m->destination);
    if (strcmp(dest, "/") == 0 && o.bind) return mounts_bind_root(rootp, s, m, &o, err);
    if (strcmp(dest, "/") == 0)
        return brig_failx(err, "refusing to mount %s over the container's root (only a bind mount "
                          "of a directory may replace it)", m->type != NULL ? m->type : "a filesystem");
    if (o.bind) return mounts_bind(rootfd, s, m, dest, &o, err);
    if (m->type == NULL || m->type[0] == '\0')
        return brig_failx(err, "type: required for a mount that is not a bind mount");
    if (o.tmpcopyup && strcmp(m->type, "tmpfs") != 0)
        return brig_failx(err, "tmpcopyup: only valid for tmpfs");
    if (strcmp(m->type, "cgroup") == 0) {
        /* On a unified host a "cgroup" mount means cgroup2, as runc does. */
        int r = mounts_cgroup_v1(rootfd, s, dest, &o, err);
        if (r <= 0) return r;
        return mounts_fs(rootfd, m->source, dest, "cgroup2", &o, in_userns, err);
    }
    if (o.tmpcopyup) return mounts_tmpfs_copyup(rootfd, m->source, dest, &o, err);
    return mounts_fs(rootfd, m->source, dest, m->type, &o, in_userns, err);
}

int mounts_apply(int *rootfd, const struct brig_spec *s, bool in_userns, struct brig_error **err)
{
    int r = 0;
    mounts_root_fd = *rootfd;
    mounts_root_path = NULL; /* read at the first destination through a symlink */
    for (size_t i = 0; r == 0 && i < s->n_mounts; i++) {
        if (mounts_one(rootfd, s, i, in_userns, err) < 0)
            r = brig_wrap(err, "mounts[%zu] (%s)", i,
                          s->mounts[i].destination != NULL ? s->mounts[i].destination : "");
    }
    free(mounts_root_path);
    mounts_root_path = NULL;
    mounts_root_fd = -1;
    return r;
}
