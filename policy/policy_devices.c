/* Which devices a policy lets a container reach, for check and apply
 * alike. Two fields grant a device: linux.devices makes a node, and an
 * allow rule of linux.resources.devices lets the device cgroup open one:
 * the image's own nodes too (a rootfs is not nodev without a policy), so an allow
 * rule alone is enough to reach a host disk (tests/security/t-policy-devices).
 * Allowed: the engines' defaults (policy_engine.c) and the devices the
 * policy lists by path, each exactly the host's node at that path. */
#include "policy_internal.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "../runtime/config/spec.h"
#include "../runtime/linux/rootfs/mount_util.h"
#include "../runtime/util/cleanup.h"

static bool dev_listed(char *const *v, const char *s)
{
    for (; v != NULL && *v != NULL; v++)
        if (strcmp(*v, s) == 0) return true;
    return false;
}

/* The host's node at path is type major:minor ('u' is a character device). */
static bool dev_hosts_node_is(const char *path, char type, int64_t major, int64_t minor)
{
    struct stat st;
    if (stat(path, &st) < 0) return false;
    switch (type) {
    case 'p': return S_ISFIFO(st.st_mode);
    case 'b': if (!S_ISBLK(st.st_mode)) return false; break;
    case 'c': case 'u': if (!S_ISCHR(st.st_mode)) return false; break;
    default: return false;
    }
    return major == (int64_t)major(st.st_rdev) && minor == (int64_t)minor(st.st_rdev);
}

const char *policy_device_refused(const struct brig_policy *p, const struct brig_device *d, bool *by_path)
{
    *by_path = false;
    if (policy_engine_device(d)) return NULL;
    *by_path = !dev_listed(p->devices, d->path);
    if (*by_path) return "is not an allowed device";
    /* The policy allows a device by its path; the config names the node's
     * type and numbers itself: /dev/null as "b 7:0" would be a disk. */
    if (!dev_hosts_node_is(d->path, d->type, d->major, d->minor)) return "is not the host's node at that path";
    return NULL;
}

bool policy_device_rule_allowed(const struct brig_policy *p, const struct brig_device_rule *r)
{
    if (!r->allow || policy_engine_device_rule(r)) return true;
    if ((r->type != 'c' && r->type != 'b') || r->major < 0 || r->minor < 0) return false;
    for (char *const *d = p->devices; d != NULL && *d != NULL; d++)
        if (dev_hosts_node_is(*d, r->type, r->major, r->minor)) return true;
    return false;
}

void policy_device_host_name(char type, int64_t major, int64_t minor, char *buf, size_t len)
{
    buf[0] = '\0';
    if ((type != 'b' && type != 'c') || major < 0 || minor < 0) return;
    char path[96], line[256];
    snprintf(path, sizeof(path), "/sys/dev/%s/%lld:%lld/uevent", type == 'b' ? "block" : "char",
             (long long)major, (long long)minor);
    autofclose FILE *f = fopen(path, "re");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "DEVNAME=", 8) != 0) continue;
        line[strcspn(line, "\n")] = '\0';
        snprintf(buf, len, "/dev/%s", line + 8);
        return;
    }
}

int policy_dev_mount_index(const struct brig_spec *s)
{
    for (size_t i = 0; i < s->n_mounts; i++) {
        /* as the runtime reads it (devices.c): "//dev/" is /dev too */
        autofree char *dst = mnt_path_clean(s->mounts[i].destination);
        if (strcmp(dst, "/dev") == 0) return (int)i;
    }
    return -1;
}
