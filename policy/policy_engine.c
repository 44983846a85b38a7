/* What engines add to every container they create, which the rules accept
 * although a config author could not ask for the same by hand:
 *  - Docker's libnetwork-setkey prestart hook (dockerd itself, by
 *    /proc/PID/exe, in its setkey mode), added even with --network none;
 *  - Docker's two namespaced net sysctls, with Docker's values;
 *  - the engines' per-container files bound into the container (hosts,
 *    hostname, resolv.conf, podman's .containerenv), which live below
 *    directories the forbidden list holds (/var/lib/docker, ...);
 *  - the default devices (runtime-spec config-linux.md "Default Devices")
 *    and the device cgroup rules Docker and containerd write for them.
 * Each is recognised by its exact shape; anything else is judged by the
 * policy's own lists. docs/policy.md, "Engine defaults". */
#include "policy_internal.h"

#include <ctype.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../runtime/config/spec.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

static bool all_hex(const char *s, size_t n)
{
    if (strlen(s) != n) return false;
    for (; *s; s++)
        if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s)) return false;
    return true;
}

/* Every uid of the process (real, effective, saved, fs) is 0: /proc/PID's
 * owner is root for any process that made itself non-dumpable. */
static bool engine_runs_as_root(int procfd)
{
    char line[256];
    int fd = openat(procfd, "status", O_RDONLY | O_CLOEXEC);
    autofclose FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
    if (fd >= 0 && f == NULL) close(fd);
    unsigned r, e, s, fs;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "Uid: %u %u %u %u", &r, &e, &s, &fs) == 4) return r == 0 && e == 0 && s == 0 && fs == 0;
    return false;
}

/* dockerd is a root process of the host's mount namespace, and its
 * executable is the file at the path its link names there. A container's
 * process shows the path inside its own root: any image can hold a root-owned
 * /usr/bin/dockerd, and the hook would run that image's program on the host
 * as root (tests/security/t-engine-hook). */
static bool engine_is_hosts_daemon(int procfd, const char *target, const struct stat *exe)
{
    struct stat ns, self, at;
    if (fstatat(procfd, "ns/mnt", &ns, 0) < 0 || stat("/proc/self/ns/mnt", &self) < 0 ||
        ns.st_dev != self.st_dev || ns.st_ino != self.st_ino)
        return false;
    if (!engine_runs_as_root(procfd)) return false;
    return stat(target, &at) == 0 && at.st_dev == exe->st_dev && at.st_ino == exe->st_ino;
}

bool policy_engine_hook(const struct brig_hook *h)
{
    int pid = 0, used = 0;
    if (sscanf(h->path, "/proc/%d/exe%n", &pid, &used) != 1 || pid <= 0 || h->path[used] != '\0') return false;
    /* Docker gives the hook no env: LD_PRELOAD or GODEBUG there would run
     * the config author's code in a root dockerd on the host. */
    if (h->n_env != 0 || h->env != NULL) return false;
    if (h->n_args != 4 || strcmp(h->args[0], "libnetwork-setkey") != 0 ||
        !brig_str_has_prefix(h->args[1], "-exec-root=") || !all_hex(h->args[2], 64) || !all_hex(h->args[3], 12))
        return false;
    /* The process is a root-owned dockerd now: the hook runs that binary.
     * Every fact is read through one fd of its /proc directory: a process
     * that exits meanwhile fails the lookups (ESRCH) instead of a new one
     * with its pid answering some of them. */
    char proc[32];
    snprintf(proc, sizeof(proc), "/proc/%d", pid);
    autoclose int procfd = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (procfd < 0) return false;
    char target[PATH_MAX];
    ssize_t n = readlinkat(procfd, "exe", target, sizeof(target) - 1);
    if (n <= 0) return false;
    target[n] = '\0';
    const char *base = strrchr(target, '/');
    struct stat st;
    if (base == NULL || strcmp(base, "/dockerd") != 0 || fstatat(procfd, "exe", &st, 0) < 0 || st.st_uid != 0 ||
        (st.st_mode & 0022) != 0)
        return false;
    if (!engine_is_hosts_daemon(procfd, target, &st)) return false;
    /* Still that process at the end: its directory still answers. */
    struct stat alive;
    return fstatat(procfd, "stat", &alive, 0) == 0;
}

bool policy_engine_sysctl(const char *key, const char *value)
{
    static const struct { const char *key, *value; } docker[] = {
        { "net.ipv4.ip_unprivileged_port_start", "0" },
        { "net.ipv4.ping_group_range", "0 2147483647" },
    };
    for (size_t i = 0; i < sizeof(docker) / sizeof(docker[0]); i++)
        if (strcmp(key, docker[i].key) == 0 && value != NULL && strcmp(value, docker[i].value) == 0) return true;
    return false;
}

bool policy_engine_file(const char *path)
{
    static const char *const files[] = {
        "/var/lib/docker/containers/*/hosts", "/var/lib/docker/containers/*/hostname",
        "/var/lib/docker/containers/*/resolv.conf",
        "/var/lib/containers/storage/overlay-containers/*/userdata/hosts",
        "/var/lib/containers/storage/overlay-containers/*/userdata/hostname",
        "/var/lib/containers/storage/overlay-containers/*/userdata/resolv.conf",
        "/var/lib/containers/storage/overlay-containers/*/userdata/.containerenv",
        "/run/containers/storage/overlay-containers/*/userdata/hosts",
        "/run/containers/storage/overlay-containers/*/userdata/hostname",
        "/run/containers/storage/overlay-containers/*/userdata/resolv.conf",
        "/run/containers/storage/overlay-containers/*/userdata/.containerenv",
        "/var/lib/containerd/io.containerd.grpc.v1.cri/sandboxes/*/hosts",
        "/var/lib/containerd/io.containerd.grpc.v1.cri/sandboxes/*/hostname",
        "/var/lib/containerd/io.containerd.grpc.v1.cri/sandboxes/*/resolv.conf",
        NULL
    };
    for (const char *const *f = files; *f; f++)
        if (fnmatch(*f, path, FNM_PATHNAME | FNM_PERIOD) == 0) return true;
    return false;
}

/* The nodes every runtime makes in /dev whatever the config says: a config
 * that lists them makes nothing more. */
static const struct engine_dev {
    const char *path;
    int64_t major, minor;
} engine_devs[] = {
    { "/dev/null", 1, 3 }, { "/dev/zero", 1, 5 }, { "/dev/full", 1, 7 }, { "/dev/random", 1, 8 },
    { "/dev/urandom", 1, 9 }, { "/dev/tty", 5, 0 }, { "/dev/ptmx", 5, 2 },
};
/* Not the host's console (c 5:1) as a node: listed in linux.devices it
 * would be the host's console, its input and output (a container's
 * /dev/console is its pty, bound there, 136:N). Docker's device cgroup
 * allows c 5:1 all the same: that rule passes, and under a policy the
 * root is nodev (policy_enforce.c), so an image's own node opens nothing. */

bool policy_engine_device(const struct brig_device *d)
{
    for (size_t i = 0; i < sizeof(engine_devs) / sizeof(engine_devs[0]); i++)
        if (strcmp(d->path, engine_devs[i].path) == 0)
            return d->type == 'c' && d->major == engine_devs[i].major && d->minor == engine_devs[i].minor;
    return false;
}

bool policy_engine_device_rule(const struct brig_device_rule *r)
{
    /* mknod alone: a node the device cgroup then lets no one read or write
     * (Docker's and containerd's "c *:* m", "b *:* m"). */
    if (r->access[0] != '\0' && strspn(r->access, "m") == strlen(r->access)) return true;
    if (r->type != 'c' || r->major < 0) return false;
    /* Unix98 pty slaves: they open only on the container's own devpts
     * instance (a mknod'd one gives EIO; t-policy-compose checks). */
    if (r->major == 136 && r->minor < 0) return true;
    if (r->minor < 0) return false;
    for (size_t i = 0; i < sizeof(engine_devs) / sizeof(engine_devs[0]); i++)
        if (r->major == engine_devs[i].major && r->minor == engine_devs[i].minor) return true;
    if (r->major == 5 && r->minor == 1) return true;    /* Docker's console rule: see engine_devs */
    /* containerd's default (ctr run, the CRI plugin): /dev/net/tun. Opened,
     * it makes or attaches an interface only with CAP_NET_ADMIN, and only
     * in the container's own network namespace. */
    return r->major == 10 && r->minor == 200;
}
