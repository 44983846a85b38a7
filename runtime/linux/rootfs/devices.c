/* /dev inside the container: the default devices and symlinks every OCI
 * runtime provides (config-linux.md "Default Devices", runtime-linux.md
 * "Dev symbolic links"), then linux.devices. Nodes are made with mknodat on
 * a parent fd resolved inside the root; in a user namespace, where mknod is
 * not allowed, the host's node is bind-mounted onto an empty file. */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/fd_defer.h"
#include "../../util/fs.h"
#include "../../util/log.h"
#include "../../util/strutil.h"
#include "mount_util.h"
#include "mounts_internal.h"

struct dev_node {
    const char *path;
    char type;              /* 'c', 'b', 'p' ('u' is 'c') */
    unsigned major, minor;
    mode_t perm;
    uid_t uid;
    gid_t gid;
};

static const struct dev_node dev_defaults[] = {
    { "/dev/null", 'c', 1, 3, 0666, 0, 0 },
    { "/dev/zero", 'c', 1, 5, 0666, 0, 0 },
    { "/dev/full", 'c', 1, 7, 0666, 0, 0 },
    { "/dev/random", 'c', 1, 8, 0666, 0, 0 },
    { "/dev/urandom", 'c', 1, 9, 0666, 0, 0 },
    { "/dev/tty", 'c', 5, 0, 0666, 0, 0 },
};

static mode_t dev_type_bits(char type)
{
    switch (type) {
    case 'b': return S_IFBLK;
    case 'p': return S_IFIFO;
    default: return S_IFCHR;
    }
}

/* Split "/dev/a/b" into an O_PATH fd of "/dev/a" (created) and "b". */
static int dev_parent(int rootfd, const char *path, char **base, struct brig_error **err)
{
    autofree char *clean = mnt_path_clean(path);
    char *slash = strrchr(clean, '/');
    if (slash == NULL || slash[1] == '\0') return brig_failx(err, "%s: not a device path", path);
    *base = brig_strdup(slash + 1);
    *slash = '\0';
    int fd = brig_mkdir_in_root(rootfd, clean[0] != '\0' ? clean : "/", 0755, err);
    if (fd < 0) {
        free(*base);
        *base = NULL;
    }
    return fd;
}

/* What a node fresh from mknodat gets without asking, made with no umask in
 * a directory without the setgid bit: its mode exactly, our euid/egid. Known
 * once for the default nodes, so that a fresh node is chown'ed only when that
 * differs from what was asked, and never chmod'ed. */
struct dev_fresh {
    uid_t uid;
    gid_t gid;
    bool known;
};

static int dev_mknod_at(int dir, const char *base, const struct dev_node *d,
                        const struct dev_fresh *fresh, struct brig_error **err)
{
    mode_t type = dev_type_bits(d->type);
    dev_t rdev = d->type == 'p' ? 0 : makedev(d->major, d->minor);
    bool made = mknodat(dir, base, type | d->perm, rdev) == 0;
    if (!made) {
        if (errno != EEXIST) return brig_fail(err, errno, "mknod %s", d->path);
        struct stat st;
        if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
            return brig_fail(err, errno, "stat %s", d->path);
        if (S_ISDIR(st.st_mode)) return brig_fail(err, EISDIR, "mknod %s", d->path);
        /* an image's own node only stays if it is exactly the device asked
         * for: a regular file or symlink at /dev/null is replaced */
        if ((st.st_mode & S_IFMT) != type || st.st_rdev != rdev) {
            brig_debug("devices: replacing %s from the image", d->path);
            if (unlinkat(dir, base, 0) < 0) return brig_fail(err, errno, "remove %s", d->path);
            if (mknodat(dir, base, type | d->perm, rdev) < 0)
                return brig_fail(err, errno, "mknod %s", d->path);
            made = true;
        }
    }
    /* the node is ours now (mknodat never follows a symlink, and anything
     * else there was removed above): set exactly the mode and owner asked */
    bool fresh_ok = made && fresh != NULL && fresh->known;
    if (!fresh_ok && fchmodat(dir, base, d->perm, 0) < 0)
        return brig_fail(err, errno, "chmod %s", d->path);
    if (!(fresh_ok && d->uid == fresh->uid && d->gid == fresh->gid) &&
        fchownat(dir, base, d->uid, d->gid, AT_SYMLINK_NOFOLLOW) < 0)
        return brig_fail(err, errno, "chown %s", d->path);
    brig_debug("devices: mknod %s %c %u:%u %o", d->path, d->type, d->major, d->minor, d->perm);
    return 0;
}

static int dev_mknod(int rootfd, const struct dev_node *d, struct brig_error **err)
{
    autofree char *base = NULL;
    autoclose_path int dir = dev_parent(rootfd, d->path, &base, err);
    if (dir < 0) return -1;
    return dev_mknod_at(dir, base, d, NULL, err);
}

/* In a user namespace: bind the host's node (the same path on the host, as
 * runc does) onto an empty file, after checking it is the device asked for. */
static int dev_bind(int rootfd, const struct dev_node *d, struct brig_error **err)
{
    autoclose_path int src = open(d->path, O_PATH | O_CLOEXEC);
    if (src < 0) return brig_fail(err, errno, "host device %s", d->path);
    struct stat st;
    if (fstat(src, &st) < 0) return brig_fail(err, errno, "stat host device %s", d->path);
    if ((st.st_mode & S_IFMT) != dev_type_bits(d->type) ||
        (d->type != 'p' && st.st_rdev != makedev(d->major, d->minor)))
        return brig_failx(err, "host %s is not the device %c %u:%u", d->path, d->type, d->major,
                          d->minor);
    {
        /* a symlink from the image must not redirect the bind elsewhere */
        autofree char *base = NULL;
        autoclose_path int dir = dev_parent(rootfd, d->path, &base, err);
        if (dir < 0) return -1;
        if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
            unlinkat(dir, base, 0) < 0)
            return brig_fail(err, errno, "remove %s", d->path);
    }
    autoclose_path int dest = mounts_open_dest(rootfd, d->path, false, err);
    if (dest < 0) return -1;
    autoclose_path int tree = mnt_clone(src, false, err);
    if (tree < 0) return brig_wrap(err, "bind %s", d->path);
    if (mnt_attach(tree, dest, err) < 0) return brig_wrap(err, "bind %s", d->path);
    brig_debug("devices: bound host %s", d->path);
    return 0;
}

static int dev_create(int rootfd, const struct dev_node *d, bool in_userns,
                      struct brig_error **err)
{
    /* a fifo needs no privilege: always our own */
    return in_userns && d->type != 'p' ? dev_bind(rootfd, d, err) : dev_mknod(rootfd, d, err);
}

/* runc's rule: no default devices when /dev itself comes from the host. */
static bool dev_needs_setup(const struct brig_spec *s)
{
    for (size_t i = s->n_mounts; i-- > 0;) {
        const struct brig_mount *m = &s->mounts[i];
        if (m->destination == NULL) continue;
        autofree char *dst = mnt_path_clean(m->destination);
        if (strcmp(dst, "/dev") != 0) continue;
        if (m->type != NULL && (strcmp(m->type, "devtmpfs") == 0 || strcmp(m->type, "bind") == 0))
            return false;
        for (size_t j = 0; j < m->n_options; j++)
            if (strcmp(m->options[j], "bind") == 0 || strcmp(m->options[j], "rbind") == 0)
                return false;
        return true;
    }
    return true;
}

static bool dev_listed(const struct brig_spec *s, const char *path)
{
    for (size_t i = 0; i < s->linux_cfg.n_devices; i++) {
        autofree char *p = mnt_path_clean(s->linux_cfg.devices[i].path);
        if (strcmp(p, path) == 0) return true;
    }
    return false;
}

static int dev_symlink(int devfd, const char *target, const char *name, bool replace,
                       struct brig_error **err)
{
    if (symlinkat(target, devfd, name) == 0) return 0;
    if (errno != EEXIST) return brig_fail(err, errno, "symlink /dev/%s -> %s", name, target);
    if (!replace) return 0;
    /* whatever the image had there goes (unlinkat never follows a
     * symlink): only then, so the usual empty /dev costs one call */
    if (unlinkat(devfd, name, 0) < 0 && errno != ENOENT)
        return brig_fail(err, errno, "remove /dev/%s", name);
    if (symlinkat(target, devfd, name) < 0)
        return brig_fail(err, errno, "symlink /dev/%s -> %s", name, target);
    return 0;
}

static int dev_defaults_setup(int rootfd, const struct brig_spec *s, bool in_userns,
                              struct brig_error **err)
{
    /* /dev itself must be a directory: a hostile image's /dev -> /workspace
     * would put the nodes (and /dev/shm) in a host directory bound there. */
    bool plain;
    autoerr struct brig_error *e = NULL;
    autoclose_path int devfd = brig_mkdir_in_root_ex(rootfd, "/dev", 0755, BRIG_IN_ROOT_NOFOLLOW, &plain, &e);
    if (devfd < 0 && e->errnum == ELOOP)
        return brig_failx(err, "the rootfs's /dev is a symlink: refusing to make devices through it");
    if (devfd < 0) {
        *err = steal_ptr(&e);
        return -1;
    }
    /* the defaults are all directly in /dev: one resolution of it for all */
    struct dev_fresh fresh = {0};
    struct stat dst;
    if (!in_userns && fstat(devfd, &dst) == 0 && !(dst.st_mode & S_ISGID)) {
        fresh.uid = geteuid();
        fresh.gid = getegid();
        fresh.known = true;
    }
    /* no umask while the nodes are made: mknodat gives them their mode */
    mode_t old_umask = umask(0);
    int r = 0;
    for (size_t i = 0; r == 0 && i < BRIG_ARRAY_SIZE(dev_defaults); i++) {
        const struct dev_node *d = &dev_defaults[i];
        if (dev_listed(s, d->path)) continue;
        if (in_userns && d->type != 'p') r = dev_bind(rootfd, d, err);
        else r = dev_mknod_at(devfd, d->path + strlen("/dev/"), d, &fresh, err);
    }
    umask(old_umask);
    if (r < 0) return -1;
    TRY(dev_symlink(devfd, "/proc/self/fd", "fd", false, err));
    TRY(dev_symlink(devfd, "/proc/self/fd/0", "stdin", false, err));
    TRY(dev_symlink(devfd, "/proc/self/fd/1", "stdout", false, err));
    TRY(dev_symlink(devfd, "/proc/self/fd/2", "stderr", false, err));
    /* runc links /dev/core only where the kernel has /proc/kcore */
    if (access("/proc/kcore", F_OK) == 0) TRY(dev_symlink(devfd, "/proc/kcore", "core", false, err));
    /* the container's ptmx is its own devpts instance's */
    if (!dev_listed(s, "/dev/ptmx")) TRY(dev_symlink(devfd, "pts/ptmx", "ptmx", true, err));
    struct stat st;
    if (fstatat(devfd, "shm", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
        if (mkdirat(devfd, "shm", 01777) < 0 || fchmodat(devfd, "shm", 01777, 0) < 0)
            return brig_fail(err, errno, "mkdir /dev/shm");
    }
    return 0;
}

int devices_populate(int rootfd, const struct brig_spec *s, bool in_userns,
                     struct brig_error **err)
{
    if (dev_needs_setup(s)) {
        if (dev_defaults_setup(rootfd, s, in_userns, err) < 0)
            return brig_wrap(err, "default devices");
    } else {
        brig_debug("devices: /dev comes from the host, no default devices");
    }
    for (size_t i = 0; i < s->linux_cfg.n_devices; i++) {
        const struct brig_device *sd = &s->linux_cfg.devices[i];
        if (sd->path == NULL || sd->path[0] != '/')
            return brig_failx(err, "linux.devices[%zu].path: must be absolute", i);
        if (sd->type != 'c' && sd->type != 'b' && sd->type != 'u' && sd->type != 'p')
            return brig_failx(err, "linux.devices[%zu].type: unknown type '%c'", i, sd->type);
        struct dev_node d = {
            .path = sd->path,
            .type = sd->type == 'u' ? 'c' : sd->type,
            .major = (unsigned)sd->major,
            .minor = (unsigned)sd->minor,
            .perm = sd->has_file_mode ? (mode_t)(sd->file_mode & 07777) : 0666,
            .uid = sd->has_uid ? sd->uid : 0,
            .gid = sd->has_gid ? sd->gid : 0,
        };
        if (dev_create(rootfd, &d, in_userns, err) < 0)
            return brig_wrap(err, "linux.devices[%zu] (%s)", i, sd->path);
    }
    return 0;
}
