/* spec_check_supported(): what the config asks for and brig cannot enforce
 * on this host. Running with less isolation than asked is never an option,
 * so each of these is an error naming the field. Data only, except for the
 * two LSM checks that read /sys. */
#include "spec_internal.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"

static bool spec_apparmor_enabled(void)
{
    autofree char *s = NULL;
    if (brig_read_file("/sys/module/apparmor/parameters/enabled", 64, &s, NULL, NULL) < 0)
        return false;
    return s[0] == 'Y';
}

static bool spec_selinux_enabled(void)
{
    return access("/sys/fs/selinux/enforce", F_OK) == 0;
}

static int spec_check_process(const struct brig_process *p, struct brig_error **err)
{
    if (p->apparmor_profile != NULL && p->apparmor_profile[0] != '\0' && !spec_apparmor_enabled())
        return brig_failx(err, "process.apparmorProfile: AppArmor is not enabled on this host, "
                               "cannot apply profile \"%.100s\"", p->apparmor_profile);
    if (p->selinux_label != NULL && p->selinux_label[0] != '\0' && !spec_selinux_enabled())
        return brig_failx(err, "process.selinuxLabel: SELinux is not enabled on this host");
    if (p->exec_cpu_affinity_initial != NULL || p->exec_cpu_affinity_final != NULL)
        return brig_failx(err, "process.execCPUAffinity: not supported by brig yet");
    /* (uid_t)-1 tells setresuid/setresgid to change nothing: the process
     * would silently stay root. */
    if (p->user.uid == UINT32_MAX || p->user.gid == UINT32_MAX)
        return brig_failx(err, "process.user.%s: 4294967295 is not a valid id (it means "
                          "\"unchanged\" to the kernel)", p->user.uid == UINT32_MAX ? "uid" : "gid");
    return 0;
}

/* An idmapped mount's mappings go to a user namespace's uid_map/gid_map:
 * refuse here, naming the field, what the kernel would refuse there. */
static int spec_check_idmap(const struct brig_id_mapping *m, size_t n, size_t i, const char *field,
                            struct brig_error **err)
{
    if (n > 340) return brig_failx(err, "mounts[%zu].%s: %zu entries, the kernel takes at most 340",
                                   i, field, n);
    for (size_t k = 0; k < n; k++) {
        if (m[k].size == 0 ||
            (uint64_t)m[k].container_id + m[k].size > UINT32_MAX ||
            (uint64_t)m[k].host_id + m[k].size > UINT32_MAX)
            return brig_failx(err, "mounts[%zu].%s[%zu]: size must be at least 1 and the range "
                              "must stay below 4294967295", i, field, k);
        for (size_t j = 0; j < k; j++)
            if ((m[j].container_id < m[k].container_id + m[k].size &&
                 m[k].container_id < m[j].container_id + m[j].size) ||
                (m[j].host_id < m[k].host_id + m[k].size && m[k].host_id < m[j].host_id + m[j].size))
                return brig_failx(err, "mounts[%zu].%s[%zu]: overlaps entry %zu", i, field, k, j);
    }
    return 0;
}

/* config.md "Mounts", idmap/ridmap and uidMappings/gidMappings: brig
 * idmaps bind mounts (mounts_idmap.c); what it cannot do is refused. */
static int spec_check_mounts(const struct brig_spec *s, struct brig_error **err)
{
    for (size_t i = 0; i < s->n_mounts; i++) {
        const struct brig_mount *m = &s->mounts[i];
        bool maps = m->n_uid_mappings > 0 || m->n_gid_mappings > 0;
        if (!m->opts.idmap && !maps) continue;
        /* spec_parse turned "idmap=uids=...;gids=..." into the mappings */
        if (m->opts.idmap_inline && !maps)
            return brig_failx(err, "mounts[%zu].options: the mappings of \"idmap=...\" were not "
                                   "read", i);
        if (!m->opts.bind)
            return brig_failx(err, "mounts[%zu].options: only bind mounts can be idmapped by "
                                   "brig (type %.40s)", i, m->type != NULL ? m->type : "none");
        if (maps && (m->n_uid_mappings == 0 || m->n_gid_mappings == 0))
            return brig_failx(err, "mounts[%zu].%s: required along with %s", i,
                              m->n_uid_mappings == 0 ? "uidMappings" : "gidMappings",
                              m->n_uid_mappings == 0 ? "gidMappings" : "uidMappings");
        if (!maps && (s->linux_cfg.n_uid_mappings == 0 || s->linux_cfg.n_gid_mappings == 0))
            return brig_failx(err, "mounts[%zu].options: idmap without mounts[%zu].uidMappings "
                                   "uses the container's user namespace mappings, and "
                                   "linux.uidMappings/gidMappings are empty", i, i);
        bool opt = m->opts.idmap_inline;
        TRY(spec_check_idmap(m->uid_mappings, m->n_uid_mappings, i,
                             opt ? "options (idmap uids=)" : "uidMappings", err));
        TRY(spec_check_idmap(m->gid_mappings, m->n_gid_mappings, i,
                             opt ? "options (idmap gids=)" : "gidMappings", err));
    }
    return 0;
}

static int spec_check_seccomp(const struct brig_seccomp *sc, struct brig_error **err)
{
    if (!sc->present) return 0;
    if (sc->listener_path != NULL)
        return brig_failx(err, "linux.seccomp.listenerPath: seccomp notification is not "
                               "supported by brig yet");
    if (sc->default_action == BRIG_SCMP_NOTIFY)
        return brig_failx(err, "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY is not supported "
                               "by brig yet");
    for (size_t i = 0; i < sc->n_syscalls; i++)
        if (sc->syscalls[i].action == BRIG_SCMP_NOTIFY)
            return brig_failx(err, "linux.seccomp.syscalls[%zu].action: SCMP_ACT_NOTIFY is not "
                                   "supported by brig yet", i);
    return 0;
}

static int spec_check_linux(const struct brig_linux *l, struct brig_error **err)
{
    if (l->has_intel_rdt) return brig_failx(err, "linux.intelRdt: not supported by brig");
    if (l->has_net_devices) return brig_failx(err, "linux.netDevices: not supported by brig");
    if (l->personality.present && l->personality.n_flags > 0)
        return brig_failx(err, "linux.personality.flags: not supported by brig (\"%.100s\")",
                          l->personality.flags[0]);
    if (l->mount_label != NULL && l->mount_label[0] != '\0' && !spec_selinux_enabled())
        return brig_failx(err, "linux.mountLabel: SELinux is not enabled on this host");
    return spec_check_seccomp(&l->seccomp, err);
}

int spec_check_supported(const struct brig_spec *s, struct brig_error **err)
{
    if (s->root.path == NULL) return brig_failx(err, "root: required to create a container");
    if (!s->has_process) return brig_failx(err, "process: required to create a container");
    TRY(spec_check_process(&s->process, err));
    TRY(spec_check_mounts(s, err));
    TRY(spec_check_linux(&s->linux_cfg, err));
    brig_debug("config: every requested feature is supported here");
    return 0;
}
