/* Idmapped bind mounts (runtime-spec config.md "Mounts": uidMappings,
 * gidMappings, the "idmap"/"ridmap" options). Made by create as host root,
 * before the init exists: the source is cloned (open_tree), given its
 * flags, then MOUNT_ATTR_IDMAP with a throwaway user namespace carrying
 * the mapping; the init only attaches the detached tree (mounts.c,
 * mounts_bind_tree). A mapping reads as a user namespace's does: a file
 * owned by containerID on disk is seen as hostID, and what hostID creates
 * is stored as containerID (runc and crun write it the same way). */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/log.h"
#include "../../util/raw_syscall.h"
#include "../ns.h"
#include "mount_util.h"
#include "mounts_internal.h"

bool mounts_idmap_wanted(const struct brig_mount *m)
{
    return m->opts.idmap || m->n_uid_mappings > 0 || m->n_gid_mappings > 0;
}

struct idmap_maps {
    const struct brig_id_mapping *uid, *gid;
    size_t n_uid, n_gid;
    char uid_field[48], gid_field[48];
};

/* The user namespace of a mapping lives in a task until we hold an fd of
 * it (and then in the mount): a child cloned into a new one that never has
 * to run. It shares our memory (no copy of our page tables, no wait for
 * it to be scheduled) on a small stack of its own and, if it is
 * scheduled at all, only blocks in a bare ppoll (no libc, nothing of ours
 * touched) until it is killed. We write its maps, open the namespace, kill
 * and reap it. Where no bare system call is written: a fork that waits. */
#if RAW_SYSCALL_NATIVE
__attribute__((no_sanitize_address)) static int idmap_hold(void *arg)
{
    (void)arg;
    for (;;) raw_syscall6(SYS_ppoll, 0, 0, 0, 0, 0, 0);
    __builtin_unreachable();
}

static pid_t idmap_clone(void)
{
    static char stack[4096] __attribute__((aligned(16)));
    return clone(idmap_hold, stack + sizeof(stack), CLONE_NEWUSER | CLONE_VM | SIGCHLD, NULL);
}
#else
static pid_t idmap_clone(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (unshare(CLONE_NEWUSER) < 0) _exit(1);
        for (;;) pause();
    }
    return pid;
}
#endif

static int idmap_userns(const struct idmap_maps *mp, int *out, struct brig_error **err)
{
    pid_t pid = idmap_clone();
    if (pid < 0) return brig_fail(err, errno, "could not make a user namespace for the mapping");
    int r = ns_write_id_map(pid, "uid_map", mp->uid_field, mp->uid, mp->n_uid, err);
    if (r == 0) r = ns_write_id_map(pid, "gid_map", mp->gid_field, mp->gid, mp->n_gid, err);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
    if (r == 0 && (*out = open(path, O_RDONLY | O_CLOEXEC)) < 0) r = brig_fail(err, errno, "open %s", path);
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    return r;
}

/* Flags the kernel locks when it hands a host mount to a less privileged
 * mount namespace; on our clone nothing locks them. */
static int idmap_check_locks(int tree, bool recursive, struct brig_error **err)
{
    if (recursive)
        return brig_failx(err, "an idmapped rbind in a user namespace holding CAP_SYS_ADMIN "
                               "(process.capabilities.bounding): the submounts' flags would not be "
                               "locked against it; drop CAP_SYS_ADMIN or use \"bind\"");
    struct statvfs sv;
    if (fstatvfs(tree, &sv) < 0) return brig_fail(err, errno, "statvfs");
    if (sv.f_flag & (ST_RDONLY | ST_NOSUID | ST_NODEV | ST_NOEXEC))
        return brig_failx(err, "idmapped mount with ro/nosuid/nodev/noexec in a user namespace "
                               "holding CAP_SYS_ADMIN (process.capabilities.bounding): the container "
                               "could clear them; drop CAP_SYS_ADMIN");
    return 0;
}

int mounts_idmap_prepare(struct brig_spec *s, size_t i, int srcfd, bool lock_matters,
                         struct brig_error **err)
{
    struct brig_mount *m = &s->mounts[i];
    /* "idmap" alone: the container's own mapping (spec_validate made sure
     * there is one, and that the mount's come in pairs) */
    bool own = m->n_uid_mappings > 0;
    struct idmap_maps mp = {
        .uid = own ? m->uid_mappings : s->linux_cfg.uid_mappings,
        .n_uid = own ? m->n_uid_mappings : s->linux_cfg.n_uid_mappings,
        .gid = own ? m->gid_mappings : s->linux_cfg.gid_mappings,
        .n_gid = own ? m->n_gid_mappings : s->linux_cfg.n_gid_mappings,
    };
    if (own && m->opts.idmap_inline) {
        snprintf(mp.uid_field, sizeof(mp.uid_field), "mounts[%zu].options (idmap uids=)", i);
        snprintf(mp.gid_field, sizeof(mp.gid_field), "mounts[%zu].options (idmap gids=)", i);
    } else if (own) {
        snprintf(mp.uid_field, sizeof(mp.uid_field), "mounts[%zu].uidMappings", i);
        snprintf(mp.gid_field, sizeof(mp.gid_field), "mounts[%zu].gidMappings", i);
    } else {
        snprintf(mp.uid_field, sizeof(mp.uid_field), "linux.uidMappings (for mounts[%zu])", i);
        snprintf(mp.gid_field, sizeof(mp.gid_field), "linux.gidMappings (for mounts[%zu])", i);
    }
    autoclose int userns = -1;
    TRY(idmap_userns(&mp, &userns, err));
    autoclose int tree = mnt_clone(srcfd, m->opts.recursive_bind, err);
    if (tree < 0) return brig_wrap(err, "bind %s", m->source);
    TRY(mounts_bind_flags(tree, &m->opts, err));
    if (lock_matters) TRY(idmap_check_locks(tree, m->opts.recursive_bind, err));
    struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns };
    unsigned int flags = AT_EMPTY_PATH | (m->opts.idmap_recursive ? AT_RECURSIVE : 0);
    if (mount_setattr(tree, "", flags, &attr, sizeof(attr)) < 0) {
        if (errno == EINVAL || errno == EPERM)
            return brig_fail(err, errno, "the filesystem of source %s cannot be idmapped%s "
                             "(mount_setattr MOUNT_ATTR_IDMAP): use a directory on one that can (ext4, "
                             "xfs, btrfs; tmpfs since Linux 6.3; not ramfs, NFS, most FUSE)", m->source,
                             m->opts.idmap_recursive ? " (with every submount: ridmap)" : "");
        return brig_fail(err, errno, "idmap %s (mount_setattr MOUNT_ATTR_IDMAP)", m->source);
    }
    brig_debug("mounts[%zu]: %s idmapped (%s)", i, m->source, own ? "its mappings" : "the container's");
    m->tree_fd = steal_fd(&tree);
    m->has_tree_fd = true;
    return 0;
}
