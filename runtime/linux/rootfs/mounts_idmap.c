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
#include <sys/wait.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/log.h"
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

/* A child that unshares a user namespace and waits on hold until we close
 * it: its namespace gets the mapping, we keep an fd of it, and the child
 * goes. The namespace lives on in the fd (and then in the mount). */
static int idmap_userns_of(pid_t pid, int ready, const struct idmap_maps *mp, int *out,
                           struct brig_error **err)
{
    char ok = 0;
    if (read(ready, &ok, 1) != 1 || ok != 1)
        return brig_failx(err, "could not make a user namespace for the mapping");
    TRY(ns_write_id_map(pid, "uid_map", mp->uid_field, mp->uid, mp->n_uid, err));
    TRY(ns_write_id_map(pid, "gid_map", mp->gid_field, mp->gid, mp->n_gid, err));
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
    *out = open(path, O_RDONLY | O_CLOEXEC);
    if (*out < 0) return brig_fail(err, errno, "open %s", path);
    return 0;
}

static int idmap_userns(const struct idmap_maps *mp, int *out, struct brig_error **err)
{
    int ready[2], hold[2];
    if (pipe2(ready, O_CLOEXEC) < 0) return brig_fail(err, errno, "pipe");
    if (pipe2(hold, O_CLOEXEC) < 0) {
        int e = errno;
        close(ready[0]);
        close(ready[1]);
        return brig_fail(err, e, "pipe");
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(ready[0]);
        close(hold[1]);
        char ok = unshare(CLONE_NEWUSER) == 0;
        if (write(ready[1], &ok, 1) != 1) _exit(1);
        while (read(hold[0], &ok, 1) < 0 && errno == EINTR) {}
        _exit(0);
    }
    int fork_errno = errno;
    close(ready[1]);
    close(hold[0]);
    int r = pid < 0 ? brig_fail(err, fork_errno, "fork") : idmap_userns_of(pid, ready[0], mp, out, err);
    close(ready[0]);
    close(hold[1]);     /* the child reads EOF and exits */
    if (pid > 0) {
        kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    }
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
                             "(mount_setattr MOUNT_ATTR_IDMAP)", m->source,
                             m->opts.idmap_recursive ? " (with every submount: ridmap)" : "");
        return brig_fail(err, errno, "idmap %s (mount_setattr MOUNT_ATTR_IDMAP)", m->source);
    }
    brig_debug("mounts[%zu]: %s idmapped (%s)", i, m->source, own ? "its mappings" : "the container's");
    m->tree_fd = steal_fd(&tree);
    m->has_tree_fd = true;
    return 0;
}
