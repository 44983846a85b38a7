/* The kernel state a container may only change inside its own namespaces:
 * linux.sysctl (config-linux.md, "Sysctl") and hostname/domainname
 * (config.md, "Hostname", "Domainname"). Validation runs in the parent so a
 * config that would touch the host's namespaces fails before anything runs. */
#include "process_attrs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/strutil.h"

/* HOST_NAME_MAX; the kernel limit for both names in a UTS namespace. */
#define UTS_NAME_MAX 64

/* A namespace the container gets to itself: listed in linux.namespaces and,
 * when joined by path, not the one brig itself runs in (runc checks this
 * for the network namespace; the same trap exists for ipc and uts). */
static int sysctl_ns_private(const struct brig_spec *s, enum brig_ns_type t, const char *procname,
                             bool *out, struct brig_error **err)
{
    const struct brig_namespace *ns = &s->linux_cfg.namespaces[t];
    *out = false;
    if (!s->has_linux || !ns->present) return 0;
    if (ns->path == NULL) {
        *out = true;
        return 0;
    }
    struct stat joined, own;
    char self[64];
    snprintf(self, sizeof(self), "/proc/self/ns/%s", procname);
    if (stat(ns->path, &joined) < 0)
        return brig_fail(err, errno, "linux.namespaces (%s): stat %s", spec_ns_name(t), ns->path);
    if (stat(self, &own) < 0) return brig_fail(err, errno, "stat %s", self);
    *out = joined.st_dev != own.st_dev || joined.st_ino != own.st_ino;
    return 0;
}

/* Keys are dotted names under /proc/sys: nothing that could walk elsewhere. */
static int sysctl_check_key(const char *key, struct brig_error **err)
{
    size_t n = strlen(key);
    if (n == 0) return brig_failx(err, "linux.sysctl: empty key");
    if (n > 255) return brig_failx(err, "linux.sysctl.%.64s...: key too long", key);
    if (strchr(key, '/') != NULL || strstr(key, "..") != NULL || key[0] == '.' ||
        key[n - 1] == '.')
        return brig_failx(err, "linux.sysctl.%s: invalid key (no \"/\", \"..\" or empty "
                          "component)", key);
    return 0;
}

static bool sysctl_is_ipc(const char *key)
{
    return brig_str_has_prefix(key, "kernel.msg") || brig_str_has_prefix(key, "kernel.sem") ||
           brig_str_has_prefix(key, "kernel.shm") || brig_str_has_prefix(key, "fs.mqueue.");
}

int sysctl_validate(const struct brig_spec *s, struct brig_error **err)
{
    if (!s->has_linux) return 0;
    bool ipc = false, net = false, uts = false;
    if (s->linux_cfg.n_sysctl > 0) {
        TRY(sysctl_ns_private(s, BRIG_NS_IPC, "ipc", &ipc, err));
        TRY(sysctl_ns_private(s, BRIG_NS_NETWORK, "net", &net, err));
        TRY(sysctl_ns_private(s, BRIG_NS_UTS, "uts", &uts, err));
    }
    for (size_t i = 0; i < s->linux_cfg.n_sysctl; i++) {
        const char *key = s->linux_cfg.sysctl[i].key;
        TRY(sysctl_check_key(key, err));
        if (sysctl_is_ipc(key)) {
            if (!ipc)
                return brig_failx(err, "linux.sysctl.%s: needs a private ipc namespace "
                                  "(linux.namespaces)", key);
        } else if (brig_str_has_prefix(key, "net.")) {
            if (!net)
                return brig_failx(err, "linux.sysctl.%s: needs a private network namespace "
                                  "(linux.namespaces)", key);
        } else if (strcmp(key, "kernel.hostname") == 0) {
            /* As runc: one field for one value; the sysctl is never taken. */
            return brig_failx(err, "linux.sysctl.%s: not allowed, it conflicts with the "
                              "\"hostname\" field (set that instead)", key);
        } else if (strcmp(key, "kernel.domainname") == 0) {
            if (!uts)
                return brig_failx(err, "linux.sysctl.%s: needs a private uts namespace "
                                  "(linux.namespaces)", key);
            /* As crun: one value for one name. The same value twice is
             * harmless; two different ones are a mistake, whichever would
             * win (runc writes the sysctl last and lets it). */
            if (s->domainname != NULL && s->domainname[0] &&
                strcmp(s->domainname, s->linux_cfg.sysctl[i].value) != 0)
                return brig_failx(err, "linux.sysctl.%s: \"%.64s\" conflicts with the "
                                  "\"domainname\" field (\"%.64s\"): set one of them", key,
                                  s->linux_cfg.sysctl[i].value, s->domainname);
        } else {
            return brig_failx(err, "linux.sysctl.%s: not namespaced", key);
        }
    }
    return 0;
}

/* /proc/sys of the container's procfs; checked to really be procfs, since
 * after the pivot /proc is whatever the container's mounts put there. */
static int sysctl_open_dir(struct brig_error **err)
{
    autoclose int fd = open("/proc/sys", O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return brig_fail(err, errno, "linux.sysctl: open /proc/sys");
    struct statfs sfs;
    if (fstatfs(fd, &sfs) < 0) return brig_fail(err, errno, "linux.sysctl: statfs /proc/sys");
    if (sfs.f_type != PROC_SUPER_MAGIC)
        return brig_failx(err, "linux.sysctl: /proc/sys is not on procfs");
    return steal_fd(&fd);
}

int sysctl_apply(const struct brig_spec *s, struct brig_error **err)
{
    if (!s->has_linux || s->linux_cfg.n_sysctl == 0) return 0;
    autoclose int dirfd = sysctl_open_dir(err);
    if (dirfd < 0) return -1;

    for (size_t i = 0; i < s->linux_cfg.n_sysctl; i++) {
        const struct brig_kv *kv = &s->linux_cfg.sysctl[i];
        TRY(sysctl_check_key(kv->key, err));
        char path[256];
        snprintf(path, sizeof(path), "%s", kv->key);
        for (char *p = path; *p != '\0'; p++)
            if (*p == '.') *p = '/';

        struct open_how how = {
            .flags = O_WRONLY | O_CLOEXEC | O_NOCTTY,
            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                       RESOLVE_NO_XDEV,
        };
        autoclose int fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        if (fd < 0) return brig_fail(err, errno, "linux.sysctl.%s: open /proc/sys/%s", kv->key, path);
        size_t len = strlen(kv->value);
        ssize_t w = write(fd, kv->value, len);
        if (w < 0) return brig_fail(err, errno, "linux.sysctl.%s: write \"%s\"", kv->key, kv->value);
        if ((size_t)w != len)
            return brig_failx(err, "linux.sysctl.%s: short write of \"%s\"", kv->key, kv->value);
        brig_debug("sysctl: %s = %s", kv->key, kv->value);
    }
    return 0;
}

int hostname_validate(const struct brig_spec *s, struct brig_error **err)
{
    bool has_host = s->hostname != NULL && s->hostname[0] != '\0';
    bool has_domain = s->domainname != NULL && s->domainname[0] != '\0';
    if (!has_host && !has_domain) return 0;
    const char *field = has_host ? "hostname" : "domainname";
    if (has_host && strlen(s->hostname) > UTS_NAME_MAX)
        return brig_failx(err, "hostname: longer than %d bytes", UTS_NAME_MAX);
    if (has_domain && strlen(s->domainname) > UTS_NAME_MAX)
        return brig_failx(err, "domainname: longer than %d bytes", UTS_NAME_MAX);
    /* A new one, or one joined by path that is not brig's own (the host's):
     * the names are set there, as runc and crun do. */
    bool uts = false;
    TRY(sysctl_ns_private(s, BRIG_NS_UTS, "uts", &uts, err));
    if (!uts)
        return brig_failx(err, "%s: needs a private uts namespace (add \"uts\" to "
                          "linux.namespaces)", field);
    return 0;
}

int hostname_apply(const struct brig_spec *s, struct brig_error **err)
{
    if (s->hostname != NULL && s->hostname[0] != '\0') {
        if (sethostname(s->hostname, strlen(s->hostname)) < 0)
            return brig_fail(err, errno, "hostname: sethostname \"%s\"", s->hostname);
        brig_debug("hostname: %s", s->hostname);
    }
    if (s->domainname != NULL && s->domainname[0] != '\0') {
        if (setdomainname(s->domainname, strlen(s->domainname)) < 0)
            return brig_fail(err, errno, "domainname: setdomainname \"%s\"", s->domainname);
        brig_debug("domainname: %s", s->domainname);
    }
    return 0;
}
