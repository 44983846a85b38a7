/* A container without a mount namespace of its own (config-linux.md
 * "Namespaces": no "mount" entry, it "MUST inherit" the runtime's; or one
 * joined by path). Every mount brig would make lands in that namespace, on
 * the host or on someone else's container: runc 1.1.5 does exactly that
 * (its /proc, /dev, /sys stay mounted on the host after the container is
 * gone). brig fails closed instead: a field that needs a mount is refused,
 * naming it, and the only step left is a chroot into root.path. */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/log.h"

#define SHARED_WHY "needs a mount namespace of the container's own (add {\"type\": \"mount\"} " \
                   "without a path to linux.namespaces)"

/* CAP_SYS_CHROOT and CAP_SYS_ADMIN leave a chroot at will, and
 * CAP_DAC_READ_SEARCH too (open_by_handle_at of the filesystem's root
 * inode, from any fd on it): with no mount namespace the chroot is all
 * that keeps the process in root.path. */
#define SHARED_ESCAPE_CAPS ((1ull << 2) | (1ull << 18) | (1ull << 21))

static bool shared_root_is_host_root(const struct brig_spec *s)
{
    struct stat a, b;
    /* the directory create opened, which is what the init chroots into */
    int r = s->root.has_fd ? fstat(s->root.fd, &a) : s->root.path ? stat(s->root.path, &a) : -1;
    if (r < 0 || stat("/", &b) < 0) return false;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int rootfs_shared_check(const struct brig_spec *s, struct brig_error **err)
{
    const struct brig_linux *l = &s->linux_cfg;
    if (s->n_mounts > 0)
        return brig_failx(err, "mounts[0] (%s): %s", s->mounts[0].destination ? s->mounts[0].destination : "",
                          SHARED_WHY);
    if (l->n_masked_paths > 0) return brig_failx(err, "linux.maskedPaths: %s", SHARED_WHY);
    if (l->n_readonly_paths > 0) return brig_failx(err, "linux.readonlyPaths: %s", SHARED_WHY);
    if (s->root.readonly) return brig_failx(err, "root.readonly: %s", SHARED_WHY);
    if (l->has_rootfs_propagation) return brig_failx(err, "linux.rootfsPropagation: %s", SHARED_WHY);
    if (l->n_devices > 0) return brig_failx(err, "linux.devices: %s", SHARED_WHY);
    if (l->n_sysctl > 0)
        return brig_failx(err, "linux.sysctl: %s (they are written through the container's /proc)",
                          SHARED_WHY);
    if (s->process.terminal)
        return brig_failx(err, "process.terminal: %s (the pty comes from the container's /dev/pts)",
                          SHARED_WHY);
    if (s->process.has_caps && (s->process.caps.sets[BRIG_CAP_BOUNDING] & SHARED_ESCAPE_CAPS) &&
        !shared_root_is_host_root(s))
        return brig_failx(err, "process.capabilities.bounding: CAP_SYS_CHROOT, CAP_SYS_ADMIN and "
                               "CAP_DAC_READ_SEARCH (open_by_handle_at) would let the process leave "
                               "root.path, which without a mount namespace is only a chroot");
    return 0;
}

int rootfs_chroot_shared(const struct brig_spec *s, bool joined, struct brig_error **err)
{
    autoclose int fd = -1;
    if (joined) {
        /* root.path as that namespace sees it, with no symlink on the way */
        struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS };
        fd = (int)syscall(SYS_openat2, AT_FDCWD, s->root.path, &how, sizeof(how));
        if (fd < 0) return brig_fail(err, errno, "root.path: %s in the joined mount namespace", s->root.path);
    } else {
        fd = fcntl(s->root.fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0) return brig_fail(err, errno, "root.path: dup");
    }
    if (fchdir(fd) < 0) return brig_fail(err, errno, "root.path: chdir %s", s->root.path);
    if (chroot(".") < 0) return brig_fail(err, errno, "root.path: chroot %s", s->root.path);
    if (chdir("/") < 0) return brig_fail(err, errno, "chdir /");
    brig_debug("rootfs: no mount namespace of its own, chrooted into %s", s->root.path);
    return 0;
}
