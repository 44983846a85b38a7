/* `brig spec`: a starting config.json, the same as `runc spec` writes
 * (runc libcontainer/specconv.Example and ToRootless) except for:
 *   - process.terminal is false: the spec is mostly used from scripts and
 *     tests, where no console socket is passed (runc's default true makes
 *     `runc run` need a terminal);
 *   - no process.capabilities.ambient: runc lists the three caps there
 *     without them being inheritable, which the kernel refuses to raise;
 *     runc only warns, brig fails closed (linux/caps.c). For uid 0 the
 *     ambient set changes nothing;
 *   - hostname is "brig" instead of "runc";
 *   - ociVersion is the spec version brig implements. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "brig-config.h"
#include "cli.h"
#include "../config/json.h"
#include "../util/cleanup.h"
#include "../util/strutil.h"
#include "../config/spec_write.h"

static void jw_strs(struct brig_jw *w, const char *key, const char *const *v)
{
    jw_key(w, key);
    jw_arr_open(w);
    for (; *v != NULL; v++) jw_str(w, *v);
    jw_arr_close(w);
}

static void spec_mount(struct brig_jw *w, const char *dst, const char *type, const char *src,
                       const char *const *opts, bool rootless)
{
    jw_obj_open(w);
    jw_kstr(w, "destination", dst);
    jw_kstr(w, "type", type);
    jw_kstr(w, "source", src);
    if (opts != NULL) {
        jw_key(w, "options");
        jw_arr_open(w);
        for (; *opts != NULL; opts++) {
            /* Rootless: no uid=/gid= options, those ids are not mapped. */
            if (rootless && (brig_str_has_prefix(*opts, "uid=") || brig_str_has_prefix(*opts, "gid=")))
                continue;
            jw_str(w, *opts);
        }
        jw_arr_close(w);
    }
    jw_obj_close(w);
}

static void spec_process(struct brig_jw *w)
{
    static const char *const caps[] = { "CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };
    static const char *const args[] = { "sh", NULL };
    static const char *const env[] = {
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm", NULL
    };
    jw_key(w, "process");
    jw_obj_open(w);
    jw_kbool(w, "terminal", false);
    jw_key(w, "user");
    jw_obj_open(w);
    jw_ku64(w, "uid", 0);
    jw_ku64(w, "gid", 0);
    jw_obj_close(w);
    jw_strs(w, "args", args);
    jw_strs(w, "env", env);
    jw_kstr(w, "cwd", "/");
    jw_key(w, "capabilities");
    jw_obj_open(w);
    jw_strs(w, "bounding", caps);
    jw_strs(w, "effective", caps);
    jw_strs(w, "permitted", caps);
    jw_obj_close(w);
    jw_key(w, "rlimits");
    jw_arr_open(w);
    jw_obj_open(w);
    jw_kstr(w, "type", "RLIMIT_NOFILE");
    jw_ku64(w, "hard", 1024);
    jw_ku64(w, "soft", 1024);
    jw_obj_close(w);
    jw_arr_close(w);
    jw_kbool(w, "noNewPrivileges", true);
    jw_obj_close(w);
}

static void spec_mounts(struct brig_jw *w, bool rootless)
{
    static const char *const dev[] = { "nosuid", "strictatime", "mode=755", "size=65536k", NULL };
    static const char *const pts[] = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620",
                                       "gid=5", NULL };
    static const char *const shm[] = { "nosuid", "noexec", "nodev", "mode=1777", "size=65536k", NULL };
    static const char *const mq[] = { "nosuid", "noexec", "nodev", NULL };
    static const char *const sys[] = { "nosuid", "noexec", "nodev", "ro", NULL };
    static const char *const sys_rootless[] = { "rbind", "nosuid", "noexec", "nodev", "ro", NULL };
    static const char *const cgroup[] = { "nosuid", "noexec", "nodev", "relatime", "ro", NULL };
    jw_key(w, "mounts");
    jw_arr_open(w);
    spec_mount(w, "/proc", "proc", "proc", NULL, rootless);
    spec_mount(w, "/dev", "tmpfs", "tmpfs", dev, rootless);
    spec_mount(w, "/dev/pts", "devpts", "devpts", pts, rootless);
    spec_mount(w, "/dev/shm", "tmpfs", "shm", shm, rootless);
    spec_mount(w, "/dev/mqueue", "mqueue", "mqueue", mq, rootless);
    /* Without its own network namespace a rootless container cannot mount
     * sysfs: it gets a read-only bind of the host's. */
    if (rootless)
        spec_mount(w, "/sys", "none", "/sys", sys_rootless, rootless);
    else
        spec_mount(w, "/sys", "sysfs", "sysfs", sys, rootless);
    spec_mount(w, "/sys/fs/cgroup", "cgroup", "cgroup", cgroup, rootless);
    jw_arr_close(w);
}

static void spec_id_map(struct brig_jw *w, const char *key, unsigned host_id)
{
    jw_key(w, key);
    jw_arr_open(w);
    jw_obj_open(w);
    jw_ku64(w, "containerID", 0);
    jw_ku64(w, "hostID", host_id);
    jw_ku64(w, "size", 1);
    jw_obj_close(w);
    jw_arr_close(w);
}

static void spec_linux(struct brig_jw *w, bool rootless)
{
    static const char *const masked[] = {
        "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
        "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
        "/proc/scsi", NULL
    };
    static const char *const readonly[] = {
        "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL
    };
    static const char *const ns[] = { "pid", "network", "ipc", "uts", "mount", "cgroup", NULL };
    static const char *const ns_rootless[] = { "pid", "ipc", "uts", "mount", "cgroup", "user", NULL };
    jw_key(w, "linux");
    jw_obj_open(w);
    if (rootless) {
        spec_id_map(w, "uidMappings", (unsigned)geteuid());
        spec_id_map(w, "gidMappings", (unsigned)getegid());
    } else {
        spec_write_deny_devices(w);
    }
    spec_write_namespaces(w, rootless ? ns_rootless : ns);
    jw_strs(w, "maskedPaths", masked);
    jw_strs(w, "readonlyPaths", readonly);
    jw_obj_close(w);
}

char *spec_default_json(bool rootless)
{
    autojw struct brig_jw *w = jw_new(true);
    jw_obj_open(w);
    jw_kstr(w, "ociVersion", BRIG_OCI_VERSION);
    spec_process(w);
    jw_key(w, "root");
    jw_obj_open(w);
    jw_kstr(w, "path", "rootfs");
    jw_kbool(w, "readonly", true);
    jw_obj_close(w);
    jw_kstr(w, "hostname", "brig");
    spec_mounts(w, rootless);
    spec_linux(w, rootless);
    jw_obj_close(w);
    return brig_asprintf("%s\n", jw_text(w, NULL));
}

int cmd_spec(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    const char *bundle = ".";
    bool rootless = false, help = false;
    const struct cli_flag flags[] = {
        { "bundle", 'b', CLI_STRING, &bundle, "DIR", "write DIR/config.json (default: current directory)" },
        { "rootless", 0, CLI_BOOL, &rootless, NULL, "a config for an unprivileged user (user namespace)" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    autofree char **pos = brig_calloc((size_t)argc + 1, sizeof(char *));
    int npos = 0;
    if (cli_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, false, NULL, pos, &npos, err) < 0)
        return brig_wrap(err, "spec");
    if (help) {
        cli_usage("spec", "", "Write a default config.json into the bundle directory.", flags,
                  BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    if (npos != 0) return brig_failx(err, "\"spec\" takes no arguments");

    autoclose int dirfd = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) return brig_fail(err, errno, "spec: --bundle %s", bundle);
    autofree char *json = spec_default_json(rootless);
    /* O_EXCL: an existing config.json is somebody's work, never overwritten. */
    autoclose int fd = openat(dirfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        if (errno == EEXIST)
            return brig_failx(err, "spec: %s/config.json already exists, remove it first", bundle);
        return brig_fail(err, errno, "spec: create %s/config.json", bundle);
    }
    size_t len = strlen(json);
    const char *p = json;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            unlinkat(dirfd, "config.json", 0);
            return brig_fail(err, e, "spec: write %s/config.json", bundle);
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}
