/* spec_check_supported(): what the config asks for and brig cannot enforce
 * on this host. Running with less isolation than asked is never an option,
 * so each of these is an error naming the field. Data only, except for the
 * two LSM checks that read /sys. */
#include "spec_internal.h"

#include <errno.h>
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

static int spec_check_mounts(const struct brig_spec *s, struct brig_error **err)
{
    for (size_t i = 0; i < s->n_mounts; i++) {
        const struct brig_mount *m = &s->mounts[i];
        if (m->n_uid_mappings > 0 || m->n_gid_mappings > 0)
            return brig_failx(err, "mounts[%zu].uidMappings: idmapped mounts are not supported "
                                   "by brig yet", i);
        if (m->opts.idmap)
            return brig_failx(err, "mounts[%zu].options: idmapped mounts (\"idmap\") are not "
                                   "supported by brig yet", i);
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
