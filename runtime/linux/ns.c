/* linux.namespaces (config-linux.md "Namespaces"), user namespace mappings
 * and time namespace offsets. */
#include "ns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <linux/nsfs.h>
#include <linux/securebits.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/strutil.h"
#include "rootfs/rootfs.h"
#include "rootless.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const int ns_clone_flag[BRIG_NS_COUNT] = {
    [BRIG_NS_PID] = CLONE_NEWPID,       [BRIG_NS_NETWORK] = CLONE_NEWNET,
    [BRIG_NS_MOUNT] = CLONE_NEWNS,      [BRIG_NS_IPC] = CLONE_NEWIPC,
    [BRIG_NS_UTS] = CLONE_NEWUTS,       [BRIG_NS_USER] = CLONE_NEWUSER,
    [BRIG_NS_CGROUP] = CLONE_NEWCGROUP, [BRIG_NS_TIME] = CLONE_NEWTIME,
};

static int ns_open_path(enum brig_ns_type t, const char *path, struct brig_error **err)
{
    autoclose int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return brig_fail(err, errno, "linux.namespaces[%s].path: open %s", spec_ns_name(t), path);
    int type = ioctl(fd, NS_GET_NSTYPE);
    if (type < 0)
        return brig_fail(err, errno, "linux.namespaces[%s].path: %s is not a namespace",
                         spec_ns_name(t), path);
    if (type != ns_clone_flag[t])
        return brig_failx(err, "linux.namespaces[%s].path: %s is not a %s namespace",
                          spec_ns_name(t), path, spec_ns_name(t));
    return steal_fd(&fd);
}

static bool time_offsets_set(const struct brig_linux *l)
{
    return l->time_offsets[0].set || l->time_offsets[1].set;
}

static bool mapping_has_root(const struct brig_id_mapping *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].container_id == 0 && m[i].size > 0) return true;
    return false;
}

int ns_plan_prepare(const struct brig_spec *s, struct ns_plan *p, struct brig_error **err)
{
    const struct brig_linux *l = &s->linux_cfg;
    memset(p, 0, sizeof(*p));
    p->saved_pid_fd = p->saved_time_fd = -1;
    for (int t = 0; t < BRIG_NS_COUNT; t++) p->join_fds[t] = -1;

    unsigned long new_flags = 0;
    for (int t = 0; t < BRIG_NS_COUNT; t++) {
        const struct brig_namespace *ns = &l->namespaces[t];
        if (!ns->present) continue;
        if (ns->path == NULL) {
            new_flags |= (unsigned long)ns_clone_flag[t];
            continue;
        }
        int fd = ns_open_path((enum brig_ns_type)t, ns->path, err);
        if (fd < 0) {
            ns_plan_close(p);
            return -1;
        }
        p->join_fds[t] = fd;
    }

    p->new_user = new_flags & CLONE_NEWUSER;
    p->new_net = new_flags & CLONE_NEWNET;
    p->new_uts = new_flags & CLONE_NEWUTS;
    p->new_mnt = new_flags & CLONE_NEWNS;
    bool join_user = p->join_fds[BRIG_NS_USER] >= 0;

    const char *bad = NULL;
    if (p->new_user && (l->n_uid_mappings == 0 || l->n_gid_mappings == 0))
        bad = "linux.uidMappings/gidMappings: required with a new user namespace";
    else if (!p->new_user && (l->n_uid_mappings > 0 || l->n_gid_mappings > 0))
        bad = "linux.uidMappings/gidMappings: given, but no new user namespace is asked for";
    else if (time_offsets_set(l) && !(new_flags & CLONE_NEWTIME))
        bad = "linux.timeOffsets: requires a new time namespace";
    else if (join_user && (new_flags & (CLONE_NEWPID | CLONE_NEWTIME)))
        bad = "linux.namespaces: joining a user namespace by path together with a new pid or "
              "time namespace is not supported";
    if (bad != NULL) {
        ns_plan_close(p);
        return brig_failx(err, "%s", bad);
    }
    /* Inherited (the spec's MUST) or joined: rootfs_shared.c. */
    if (!p->new_mnt && rootfs_shared_check(s, p->new_user, err) < 0) {
        ns_plan_close(p);
        return brig_wrap(err, "linux.namespaces: no new mount namespace");
    }

    if (join_user) {
        /* Namespaces created after setns(user) are owned by that namespace:
         * the child creates them itself with unshare. */
        p->clone_flags = 0;
        p->unshare_flags = (int)new_flags;
        return 0;
    }
    /* The cgroup namespace is unshared by the child once it has been moved
     * into its cgroup, so that the namespace's root is the container's cgroup. */
    p->clone_flags = new_flags & ~(unsigned long)CLONE_NEWCGROUP;
    p->unshare_flags = (int)(new_flags & CLONE_NEWCGROUP);
    /* Offsets can only be written before a process enters the namespace:
     * the parent unshares it for its children and writes them. */
    if (time_offsets_set(l)) p->clone_flags &= ~(unsigned long)CLONE_NEWTIME;
    return 0;
}

static int ns_save_and_setns(const char *self, int *saved, int fd, int type, struct brig_error **err)
{
    *saved = open(self, O_RDONLY | O_CLOEXEC);
    if (*saved < 0) return brig_fail(err, errno, "open %s", self);
    if (setns(fd, type) < 0) return brig_fail(err, errno, "setns %s", self);
    return 0;
}

int ns_parent_before_clone(const struct brig_spec *s, struct ns_plan *p, struct brig_error **err)
{
    const struct brig_linux *l = &s->linux_cfg;
    if (p->join_fds[BRIG_NS_PID] >= 0)
        TRY(ns_save_and_setns("/proc/self/ns/pid", &p->saved_pid_fd, p->join_fds[BRIG_NS_PID],
                              CLONE_NEWPID, err));
    if (p->join_fds[BRIG_NS_TIME] >= 0)
        TRY(ns_save_and_setns("/proc/self/ns/time", &p->saved_time_fd, p->join_fds[BRIG_NS_TIME],
                              CLONE_NEWTIME, err));
    if (!time_offsets_set(l)) return 0;

    p->saved_time_fd = open("/proc/self/ns/time", O_RDONLY | O_CLOEXEC);
    if (p->saved_time_fd < 0) return brig_fail(err, errno, "open /proc/self/ns/time");
    if (unshare(CLONE_NEWTIME) < 0) return brig_fail(err, errno, "linux.timeOffsets: unshare time namespace");
    char buf[128];
    size_t n = 0;
    static const char *const clock_names[2] = { "monotonic", "boottime" };
    for (int i = 0; i < 2; i++) {
        const struct brig_time_offset *o = &l->time_offsets[i];
        if (!o->set) continue;
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s %lld %u\n", clock_names[i],
                              (long long)o->secs, o->nanosecs);
    }
    if (brig_write_file("/proc/self/timens_offsets", buf, n, err) < 0)
        return brig_wrap(err, "linux.timeOffsets");
    return 0;
}

int ns_parent_after_clone(struct ns_plan *p, struct brig_error **err)
{
    if (p->saved_pid_fd >= 0 && setns(p->saved_pid_fd, CLONE_NEWPID) < 0)
        return brig_fail(err, errno, "restore pid namespace");
    if (p->saved_time_fd >= 0 && setns(p->saved_time_fd, CLONE_NEWTIME) < 0)
        return brig_fail(err, errno, "restore time namespace");
    return 0;
}

int ns_write_id_map(pid_t pid, const char *file, const char *field,
                        const struct brig_id_mapping *m, size_t n, struct brig_error **err)
{
    size_t cap = n * 40 + 1, len = 0;
    autofree char *buf = brig_calloc(cap, 1);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%u %u %u\n", m[i].container_id,
                                m[i].host_id, m[i].size);
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
    if (brig_write_file(path, buf, len, err) < 0) return brig_wrap(err, "%s", field);
    return 0;
}

int ns_write_id_maps(const struct brig_spec *s, pid_t pid, struct brig_error **err)
{
    /* Without CAP_SETUID in our own namespace (rootless.h). */
    if (geteuid() != 0) return rootless_write_id_maps(s, pid, err);
    const struct brig_linux *l = &s->linux_cfg;
    TRY(ns_write_id_map(pid, "uid_map", "linux.uidMappings", l->uid_mappings, l->n_uid_mappings, err));
    TRY(ns_write_id_map(pid, "gid_map", "linux.gidMappings", l->gid_mappings, l->n_gid_mappings, err));
    return 0;
}

int ns_child_join(const struct brig_spec *s, struct ns_plan *p, struct brig_error **err)
{
    const struct brig_linux *l = &s->linux_cfg;
    if (p->join_fds[BRIG_NS_USER] >= 0 && setns(p->join_fds[BRIG_NS_USER], CLONE_NEWUSER) < 0)
        return brig_fail(err, errno, "linux.namespaces[user]: setns %s",
                         l->namespaces[BRIG_NS_USER].path);
    for (int t = 0; t < BRIG_NS_COUNT; t++) {
        /* user: done first; pid, time: the parent chose them for us at clone. */
        if (t == BRIG_NS_USER || t == BRIG_NS_PID || t == BRIG_NS_TIME) continue;
        if (p->join_fds[t] < 0) continue;
        if (setns(p->join_fds[t], ns_clone_flag[t]) < 0)
            return brig_fail(err, errno, "linux.namespaces[%s]: setns %s",
                             spec_ns_name((enum brig_ns_type)t), l->namespaces[t].path);
    }
    if (p->unshare_flags != 0 && unshare(p->unshare_flags) < 0)
        return brig_fail(err, errno, "linux.namespaces: unshare");
    if (p->new_user) {
        /* Become root of the new user namespace when root is mapped, so the
         * rest of the setup runs as uid 0 there (as runc does). */
        if (mapping_has_root(l->gid_mappings, l->n_gid_mappings) && setresgid(0, 0, 0) < 0)
            return brig_fail(err, errno, "setresgid 0 in the user namespace");
        if (mapping_has_root(l->uid_mappings, l->n_uid_mappings) && setresuid(0, 0, 0) < 0)
            return brig_fail(err, errno, "setresuid 0 in the user namespace");
    }
    return 0;
}

void ns_plan_close(struct ns_plan *p)
{
    for (int t = 0; t < BRIG_NS_COUNT; t++) brig_closep(&p->join_fds[t]);
    brig_closep(&p->saved_pid_fd);
    brig_closep(&p->saved_time_fd);
}

int ns_own_unshare(uint32_t owner, struct brig_error **err)
{
    /* The owner is the euid at the unshare (create_user_ns). The effective
     * set survives the change to it (no setuid fixup): where the kernel
     * allows a user namespace only with CAP_SYS_ADMIN (a distribution's
     * sysctl, an LSM) the unshare still holds it. The real and saved ids
     * stay root's until the namespace maps them. */
    int bits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
    if (bits < 0 || prctl(PR_SET_SECUREBITS, (unsigned long)bits | SECBIT_NO_SETUID_FIXUP, 0, 0, 0) < 0)
        return brig_fail(err, errno, "user namespace: keep the capabilities across the euid change");
    if (setresgid((gid_t)-1, (gid_t)owner, (gid_t)-1) < 0 || setresuid((uid_t)-1, (uid_t)owner, (uid_t)-1) < 0)
        return brig_fail(err, errno, "user namespace: take its owner's uid %u", owner);
    if (unshare(CLONE_NEWUSER) < 0) {
        int e = errno;
        if (e == EINVAL || e == ENOSYS)
            return brig_fail(err, e, "user namespace: this kernel has none (CONFIG_USER_NS): a sandbox runs "
                             "under a host identity of its own and needs one");
        if (e == ENOSPC)
            return brig_fail(err, e, "user namespace: none left for uid %u (user.max_user_namespaces, "
                             "/proc/sys/user/max_user_namespaces; 0 turns them off)", owner);
        return brig_fail(err, e, "user namespace: unshare (owner uid %u)", owner);
    }
    return 0;
}

int ns_own_write_maps(pid_t pid, uint32_t base, uint32_t size, struct brig_error **err)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
    autoclose int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "user namespace: open %s", path);
    uid_t owner;
    if (ioctl(fd, NS_GET_OWNER_UID, &owner) < 0) return brig_fail(err, errno, "user namespace: its owner");
    if (owner != base)
        return brig_failx(err, "user namespace: owned by uid %u, not by %u as made: refusing to map it",
                          (unsigned)owner, base);
    const struct brig_id_mapping m = { .container_id = 0, .host_id = base, .size = size };
    TRY(ns_write_id_map(pid, "uid_map", "user namespace: uid_map", &m, 1, err));
    TRY(ns_write_id_map(pid, "gid_map", "user namespace: gid_map", &m, 1, err));
    return 0;
}

int ns_own_become_root(struct brig_error **err)
{
    if (setresgid(0, 0, 0) < 0) return brig_fail(err, errno, "user namespace: setresgid 0 in it");
    if (setresuid(0, 0, 0) < 0) return brig_fail(err, errno, "user namespace: setresuid 0 in it");
    return 0;
}
