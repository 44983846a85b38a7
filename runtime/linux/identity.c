/* process.user (OCI runtime-spec config.md, "POSIX-platform User"): groups
 * first (needs CAP_SETGID), then gid, then uid; PR_SET_KEEPCAPS keeps the
 * permitted set across the uid change so caps_apply can still set it. */
#include "identity.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"

/* runc's default when process.user.umask is absent. */
#define IDENTITY_DEFAULT_UMASK 0022

/* In a user namespace whose setgroups file says "deny" (unprivileged
 * mappings), setgroups(2) always fails. Read into the stack: this runs
 * where the heap is off limits (util/noheap.h). */
static bool identity_setgroups_denied(void)
{
    autoclose int fd = open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);
    char buf[8];
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
    return n >= 4 && strncmp(buf, "deny", 4) == 0;
}

static int identity_groups(const struct brig_user *u, bool in_userns, struct brig_error **err)
{
    if (in_userns && identity_setgroups_denied()) {
        if (u->n_additional_gids > 0)
            return brig_failx(err, "process.user.additionalGids: setgroups is denied in this "
                              "user namespace (/proc/self/setgroups is \"deny\")");
        brig_debug("identity: setgroups denied in the user namespace, none asked: skipped");
        return 0;
    }
    /* Also with no additionalGids: root's own supplementary groups must not
     * follow it into the container. */
    _Static_assert(sizeof(gid_t) == sizeof(uint32_t), "additionalGids are passed as gid_t");
    const gid_t *gids = (const gid_t *)u->additional_gids;
    if (setgroups(u->n_additional_gids, gids) < 0)
        return brig_fail(err, errno, "process.user.additionalGids: setgroups (%zu groups)",
                         u->n_additional_gids);
    return 0;
}

static bool identity_mapped(const struct brig_id_mapping *m, size_t n, uint32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (id >= m[i].container_id && id - m[i].container_id < m[i].size) return true;
    return false;
}

int identity_validate(const struct brig_spec *s, bool new_userns, struct brig_error **err)
{
    const struct brig_user *u = &s->process.user;
    const struct brig_linux *l = &s->linux_cfg;
    if (u->uid == (uint32_t)-1 || u->gid == (uint32_t)-1)
        return brig_failx(err, "process.user.%s: 4294967295 is not a valid id",
                          u->uid == (uint32_t)-1 ? "uid" : "gid");
    if (!new_userns) return 0;
    if (!identity_mapped(l->uid_mappings, l->n_uid_mappings, u->uid))
        return brig_failx(err, "process.user.uid: %u is not mapped by linux.uidMappings", u->uid);
    if (!identity_mapped(l->gid_mappings, l->n_gid_mappings, u->gid))
        return brig_failx(err, "process.user.gid: %u is not mapped by linux.gidMappings", u->gid);
    for (size_t i = 0; i < u->n_additional_gids; i++)
        if (!identity_mapped(l->gid_mappings, l->n_gid_mappings, u->additional_gids[i]))
            return brig_failx(err, "process.user.additionalGids[%zu]: %u is not mapped by "
                              "linux.gidMappings", i, u->additional_gids[i]);
    return 0;
}

int identity_apply(const struct brig_user *u, bool in_userns, struct brig_error **err)
{
    brig_debug("identity: uid %u gid %u, %zu additional gids", u->uid, u->gid,
               u->n_additional_gids);
    /* To setresuid/setresgid, -1 means "leave unchanged": the process
     * would silently stay root. */
    if (u->uid == (uint32_t)-1 || u->gid == (uint32_t)-1)
        return brig_failx(err, "process.user.%s: 4294967295 is not a valid id",
                          u->uid == (uint32_t)-1 ? "uid" : "gid");
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
        return brig_fail(err, errno, "process.user: prctl PR_SET_KEEPCAPS");
    TRY(identity_groups(u, in_userns, err));
    if (setresgid(u->gid, u->gid, u->gid) < 0)
        return brig_fail(err, errno, "process.user.gid: setresgid %u", u->gid);
    if (setresuid(u->uid, u->uid, u->uid) < 0)
        return brig_fail(err, errno, "process.user.uid: setresuid %u", u->uid);
    /* Only meant for the switch above: capabilities are set explicitly next,
     * and execve recomputes them anyway. */
    if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
        return brig_fail(err, errno, "process.user: prctl PR_SET_KEEPCAPS 0");
    umask(u->has_umask ? (mode_t)u->umask : IDENTITY_DEFAULT_UMASK);
    return 0;
}
