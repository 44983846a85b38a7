/* The whole filesystem chain of the child, in a forked child with its own
 * mount namespace: rootfs_prepare -> mounts_apply -> devices_populate ->
 * rootfs_pivot -> paths_mask_readonly -> rootfs_finish, then we look at the
 * result from inside the new root. Needs root. */
#include <linux/magic.h>
#include <sys/sysmacros.h>

#include "test_rootfs_util.h"

static struct tfs T;

static void setup(void)
{
    tfs_skip_unless_root();
    tfs_setup(&T);
}

static void teardown(void)
{
    tfs_teardown(&T);
}

TestSuite(steps, .init = setup, .fini = teardown);

static bool is_chr(const char *path, unsigned maj, unsigned min, mode_t perm)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(maj, min) &&
           (perm == 0 || (st.st_mode & 07777) == perm);
}

static bool link_is(const char *path, const char *target)
{
    char buf[256];
    ssize_t n = readlink(path, buf, sizeof(buf) - 1);
    if (n < 0) return false;
    buf[n] = '\0';
    return strcmp(buf, target) == 0;
}

static struct brig_mount usual_mounts[] = {
    { .destination = "/proc", .type = "proc", .source = "proc" },
    { .destination = "/dev", .type = "tmpfs", .source = "tmpfs",
      .options = (char *[]){ "nosuid", "strictatime", "mode=755", "size=65536k" }, .n_options = 4 },
    { .destination = "/dev/pts", .type = "devpts", .source = "devpts",
      .options = (char *[]){ "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620" },
      .n_options = 5 },
};

/* ---- the full chain, as for a typical container ------------------------ */
static bool host_has_kcore;

static void full_chain(struct tfs *t)
{
    struct brig_spec s;
    tfs_spec(t, &s, usual_mounts, 3);
    s.root.readonly = true;
    struct brig_device devs[] = {
        { .path = "/dev/null", .type = 'c', .major = 1, .minor = 3,
          .has_file_mode = true, .file_mode = 0600 },
        { .path = "/dev/sub/mydev", .type = 'c', .major = 1, .minor = 5, .has_file_mode = true,
          .file_mode = 0640, .has_uid = true, .uid = 1000, .has_gid = true, .gid = 1001 },
    };
    s.linux_cfg.devices = devs;
    s.linux_cfg.n_devices = 2;
    char *masked[] = { "/proc/kcore", "/proc/fs", "/proc/does-not-exist", "/proc/cmdline", NULL };
    char *ro[] = { "/proc/sys", "/proc/sysrq-trigger", "/nope", "/proc/version", NULL };
    s.linux_cfg.masked_paths = masked;
    s.linux_cfg.n_masked_paths = 4;
    s.linux_cfg.readonly_paths = ro;
    s.linux_cfg.n_readonly_paths = 4;

    int rootfd = -1;
    TFS_OK(t, rootfs_prepare(&s, NULL, &rootfd, err));
    TFS_OK(t, mounts_apply(&rootfd, &s, false, err));
    TFS_OK(t, devices_populate(rootfd, &s, false, err));
    TFS_OK(t, rootfs_pivot(rootfd, &s, false, err));
    TFS_OK(t, paths_mask_readonly(&s, err));
    TFS_OK(t, rootfs_finish(&s, err));

    /* we are inside: the host's tree is gone */
    TFS_CHECK(t, !tfs_exists(t->base), "host path %s still visible", t->base);
    char cwd[64];
    TFS_CHECK(t, getcwd(cwd, sizeof(cwd)) != NULL && strcmp(cwd, "/") == 0, "cwd");
    TFS_CHECK(t, tfs_is_rdonly("/"), "root.readonly");
    TFS_CHECK(t, mkdir("/newdir", 0755) < 0 && errno == EROFS, "write to a ro root");
    TFS_CHECK(t, !tfs_is_rdonly("/dev"), "/dev stays writable");

    TFS_CHECK(t, is_chr("/dev/null", 1, 3, 0600), "/dev/null from linux.devices (0600)");
    TFS_CHECK(t, is_chr("/dev/zero", 1, 5, 0666), "/dev/zero");
    TFS_CHECK(t, is_chr("/dev/full", 1, 7, 0666), "/dev/full");
    TFS_CHECK(t, is_chr("/dev/random", 1, 8, 0666), "/dev/random");
    TFS_CHECK(t, is_chr("/dev/urandom", 1, 9, 0666), "/dev/urandom");
    TFS_CHECK(t, is_chr("/dev/tty", 5, 0, 0666), "/dev/tty");
    struct stat st;
    TFS_CHECK(t, is_chr("/dev/sub/mydev", 1, 5, 0640) && stat("/dev/sub/mydev", &st) == 0 &&
                     st.st_uid == 1000 && st.st_gid == 1001, "linux.devices mode/uid/gid");
    TFS_CHECK(t, link_is("/dev/ptmx", "pts/ptmx"), "/dev/ptmx");
    TFS_CHECK(t, link_is("/dev/fd", "/proc/self/fd"), "/dev/fd");
    TFS_CHECK(t, link_is("/dev/stdin", "/proc/self/fd/0"), "/dev/stdin");
    TFS_CHECK(t, link_is("/dev/stdout", "/proc/self/fd/1"), "/dev/stdout");
    TFS_CHECK(t, link_is("/dev/stderr", "/proc/self/fd/2"), "/dev/stderr");
    TFS_CHECK(t, host_has_kcore == link_is("/dev/core", "/proc/kcore"), "/dev/core");
    TFS_CHECK(t, stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode), "/dev/shm");

    if (host_has_kcore) TFS_CHECK(t, is_chr("/proc/kcore", 1, 3, 0), "/proc/kcore masked");
    TFS_CHECK(t, tfs_fstype("/proc/fs") == TMPFS_MAGIC && tfs_is_rdonly("/proc/fs"),
              "/proc/fs masked by a ro tmpfs");
    TFS_CHECK(t, tfs_is_rdonly("/proc/sys"), "/proc/sys read-only");
    TFS_CHECK(t, is_chr("/proc/cmdline", 1, 3, 0), "/proc/cmdline masked");
    if (tfs_exists("/proc/sysrq-trigger"))
        TFS_CHECK(t, tfs_is_rdonly("/proc/sysrq-trigger"), "/proc/sysrq-trigger read-only");
    TFS_CHECK(t, tfs_is_rdonly("/proc/version"), "a read-only file");
    TFS_CHECK(t, !tfs_is_rdonly("/proc"), "/proc itself stays writable");
    int fd = open("/proc/sys/kernel/hostname", O_WRONLY);
    TFS_CHECK(t, fd < 0 && errno == EROFS, "write to /proc/sys");
}

Test(steps, full_chain)
{
    host_has_kcore = access("/proc/kcore", F_OK) == 0;
    tfs_run_in_ns(&T, full_chain);
}

/* ---- --no-pivot: MS_MOVE + chroot ------------------------------------- */
static void no_pivot(struct tfs *t)
{
    tfs_write(tfs_in(t, "marker"), "m");
    struct brig_spec s;
    tfs_spec(t, &s, usual_mounts, 1);
    int rootfd = -1;
    TFS_OK(t, rootfs_prepare(&s, NULL, &rootfd, err));
    TFS_OK(t, mounts_apply(&rootfd, &s, false, err));
    TFS_OK(t, rootfs_pivot(rootfd, &s, true, err));
    TFS_OK(t, rootfs_finish(&s, err));
    TFS_CHECK(t, tfs_exists("/marker"), "not in the new root");
    TFS_CHECK(t, !tfs_exists(t->base), "host path visible");
    TFS_CHECK(t, tfs_fstype("/proc") == PROC_SUPER_MAGIC, "the container's proc");
}

Test(steps, no_pivot) { tfs_run_in_ns(&T, no_pivot); }

/* ---- a hostile /dev/null is never used to mask ------------------------- */
static void hostile_null(struct tfs *t)
{
    mkdir(tfs_in(t, "dev"), 0755);
    tfs_write(tfs_in(t, "dev/null"), "not a device");
    tfs_write(tfs_in(t, "secret"), "secret");
    struct brig_spec s;
    tfs_spec(t, &s, NULL, 0);
    char *masked[] = { "/secret", NULL };
    s.linux_cfg.masked_paths = masked;
    s.linux_cfg.n_masked_paths = 1;
    int rootfd = -1;
    TFS_OK(t, rootfs_prepare(&s, NULL, &rootfd, err));
    TFS_OK(t, rootfs_pivot(rootfd, &s, false, err));
    char msg[1024];
    TFS_FAILS(t, paths_mask_readonly(&s, err), msg);
    TFS_CHECK(t, strstr(msg, "linux.maskedPaths[0] (/secret): /dev/null is not the null device") == msg,
              "message: %s", msg);
}

Test(steps, hostile_dev_null_refused) { tfs_run_in_ns(&T, hostile_null); }

/* ---- devices_populate replaces hostile nodes in the image's /dev ------- */
static void hostile_dev(struct tfs *t, bool userns)
{
    mkdir(tfs_in(t, "dev"), 0755);
    mkdir(tfs_in(t, "etc"), 0755);
    tfs_write(tfs_in(t, "etc/target"), "target");
    tfs_write(tfs_in(t, "dev/null"), "not a device");
    if (symlink("/etc/target", tfs_in(t, "dev/zero")) < 0) tfs_fail(t, "symlink");
    if (symlink("/", tfs_in(t, "dev/full")) < 0) tfs_fail(t, "symlink");
    struct brig_spec s;
    tfs_spec(t, &s, NULL, 0);
    int rootfd = -1;
    TFS_OK(t, rootfs_prepare(&s, NULL, &rootfd, err));
    TFS_OK(t, devices_populate(rootfd, &s, userns, err));
    TFS_CHECK(t, is_chr(tfs_in(t, "dev/null"), 1, 3, 0), "/dev/null");
    TFS_CHECK(t, is_chr(tfs_in(t, "dev/zero"), 1, 5, 0), "/dev/zero");
    TFS_CHECK(t, is_chr(tfs_in(t, "dev/full"), 1, 7, 0), "/dev/full");
    struct stat st;
    TFS_CHECK(t, stat(tfs_in(t, "etc/target"), &st) == 0 && S_ISREG(st.st_mode) &&
                     st.st_size == 6, "the symlink target was touched");
    TFS_CHECK(t, stat(t->root, &st) == 0 && S_ISDIR(st.st_mode), "root replaced");
    TFS_CHECK(t, stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "host /dev/full");
}

static void hostile_dev_mknod(struct tfs *t) { hostile_dev(t, false); }
static void hostile_dev_bind(struct tfs *t) { hostile_dev(t, true); }

Test(steps, devices_replace_hostile_nodes) { tfs_run_in_ns(&T, hostile_dev_mknod); }
Test(steps, devices_bind_mode_replaces_hostile_links) { tfs_run_in_ns(&T, hostile_dev_bind); }

/* ---- /dev from the host: no default devices ---------------------------- */
static void dev_bound(struct tfs *t)
{
    char src[256];
    snprintf(src, sizeof(src), "%s/hostdev", t->base);
    mkdir(src, 0755);
    struct brig_mount m[] = { tfs_mount("/dev", "bind", src, TFS_OPTS("rbind")) };
    struct brig_spec s;
    tfs_spec(t, &s, m, 1);
    int rootfd = -1;
    TFS_OK(t, rootfs_prepare(&s, NULL, &rootfd, err));
    TFS_OK(t, mounts_apply(&rootfd, &s, false, err));
    TFS_OK(t, devices_populate(rootfd, &s, false, err));
    TFS_CHECK(t, !tfs_exists(tfs_in(t, "dev/null")), "default devices created in a bound /dev");
}

Test(steps, bound_dev_gets_no_defaults) { tfs_run_in_ns(&T, dev_bound); }

/* ---- rootfsPropagation ------------------------------------------------ */
static bool root_is_shared(void)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[1024];
    bool shared = false;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        char mp[512];
        if (sscanf(line, "%*s %*s %*s %*s %511s", mp) == 1 && strcmp(mp, "/") == 0)
            shared = strstr(line, " shared:") != NULL; /* the last "/" is the top */
    }
    if (f != NULL) fclose(f);
    return shared;
}

static void propagation(struct tfs *t)
{
    struct brig_spec s;
    tfs_spec(t, &s, usual_mounts, 1);
    s.linux_cfg.has_rootfs_propagation = true;
    s.linux_cfg.rootfs_propagation = MS_SHARED | MS_REC;
    int rootfd = -1;
    TFS_OK(t, rootfs_prepare(&s, NULL, &rootfd, err));
    TFS_OK(t, mounts_apply(&rootfd, &s, false, err));
    TFS_OK(t, rootfs_pivot(rootfd, &s, false, err));
    TFS_CHECK(t, !root_is_shared(), "shared before finish");
    TFS_OK(t, rootfs_finish(&s, err));
    TFS_CHECK(t, root_is_shared(), "rshared not applied to the new root");
    TFS_CHECK(t, !tfs_is_rdonly("/"), "root.readonly false");
}

Test(steps, rootfs_propagation_shared) { tfs_run_in_ns(&T, propagation); }

static void prop_private(struct tfs *t)
{
    struct brig_spec s;
    tfs_spec(t, &s, NULL, 0);
    s.linux_cfg.has_rootfs_propagation = true;
    s.linux_cfg.rootfs_propagation = MS_PRIVATE;
    int rootfd = -1;
    TFS_OK(t, rootfs_prepare(&s, NULL, &rootfd, err));
    TFS_OK(t, rootfs_pivot(rootfd, &s, false, err));
    TFS_OK(t, rootfs_finish(&s, err));
    TFS_CHECK(t, !root_is_shared(), "private root is shared");
}

Test(steps, rootfs_propagation_private) { tfs_run_in_ns(&T, prop_private); }

/* ---- in a user namespace (root mapped to root, no new net ns) ----------- */
static void write_file(struct tfs *t, const char *path, const char *data)
{
    int fd = open(path, O_WRONLY);
    if (fd < 0 || write(fd, data, strlen(data)) != (ssize_t)strlen(data))
        tfs_fail(t, "write %s: %s", path, strerror(errno));
    close(fd);
}

static void in_userns(struct tfs *t)
{
    /* a read-only host mount that becomes locked in the user namespace */
    char src[256];
    snprintf(src, sizeof(src), "%s/locked", t->base);
    mkdir(src, 0755);
    if (mount(src, src, NULL, MS_BIND, NULL) < 0 ||
        mount(NULL, src, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID, NULL) < 0)
        tfs_fail(t, "ro bind: %s", strerror(errno));

    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
        tfs_fail(t, "unshare(CLONE_NEWUSER): %s", strerror(errno));
    write_file(t, "/proc/self/setgroups", "deny");
    write_file(t, "/proc/self/uid_map", "0 0 1");
    write_file(t, "/proc/self/gid_map", "0 0 1");

    struct brig_mount m[] = {
        tfs_mount("/dev", "tmpfs", "tmpfs", TFS_OPTS("nosuid", "mode=755")),
        tfs_mount("/sys", "sysfs", "sysfs", TFS_OPTS("nosuid", "noexec", "nodev", "ro")),
        tfs_mount("/data", "bind", src, TFS_OPTS("rbind", "rw", "suid")),
        tfs_mount("/sys/fs/cgroup", "cgroup", "cgroup", TFS_OPTS("nosuid", "ro")),
    };
    struct brig_spec s;
    bool v1 = tfs_fstype("/sys/fs/cgroup/memory") == CGROUP_SUPER_MAGIC;
    tfs_spec(t, &s, m, v1 ? 4 : 3);
    int rootfd = -1;
    TFS_OK(t, rootfs_prepare(&s, NULL, &rootfd, err));
    TFS_OK(t, mounts_apply(&rootfd, &s, true, err));
    TFS_OK(t, devices_populate(rootfd, &s, true, err));
    /* sysfs cannot be mounted here: the host's /sys is bound instead, ro */
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "sys")) == SYSFS_MAGIC, "sysfs fallback");
    TFS_CHECK(t, tfs_is_rdonly(tfs_in(t, "sys")), "sysfs fallback ro");
    /* asking for rw cannot undo the host's locked ro: kept, not an error */
    TFS_CHECK(t, tfs_is_rdonly(tfs_in(t, "data")), "locked ro kept");
    /* devices are binds of the host's nodes */
    TFS_CHECK(t, is_chr(tfs_in(t, "dev/null"), 1, 3, 0), "/dev/null bound");
    TFS_CHECK(t, is_chr(tfs_in(t, "dev/tty"), 5, 0, 0), "/dev/tty bound");
    if (v1) {
        TFS_CHECK(t, tfs_fstype(tfs_in(t, "sys/fs/cgroup/memory")) == CGROUP_SUPER_MAGIC,
                  "cgroup v1 in a user namespace");
        TFS_CHECK(t, tfs_is_rdonly(tfs_in(t, "sys/fs/cgroup/memory")), "cgroup v1 ro");
    }
    TFS_OK(t, rootfs_pivot(rootfd, &s, false, err));
    char *masked[] = { "/data", NULL };
    s.linux_cfg.masked_paths = masked;
    s.linux_cfg.n_masked_paths = 1;
    s.root.readonly = true;
    TFS_OK(t, paths_mask_readonly(&s, err));
    TFS_OK(t, rootfs_finish(&s, err));
    TFS_CHECK(t, tfs_fstype("/data") == TMPFS_MAGIC, "masked dir");
    TFS_CHECK(t, tfs_is_rdonly("/"), "ro root in a user namespace");
}

Test(steps, user_namespace) { tfs_run_in_ns(&T, in_userns); }

/* ---- never in the caller's mount namespace ------------------------------ */
static void shared_ns(struct tfs *t)
{
    /* the grandchild shares this (already private) namespace with its
     * parent, so a failing check could not harm the host */
    pid_t pid = fork();
    if (pid == 0) {
        struct brig_spec s;
        tfs_spec(t, &s, NULL, 0);
        int rootfd = -1;
        struct brig_error *e = NULL;
        struct stat caller;
        if (stat("/proc/self/ns/mnt", &caller) < 0) tfs_fail(t, "stat /proc/self/ns/mnt");
        if (rootfs_prepare(&s, &caller, &rootfd, &e) == 0) tfs_fail(t, "prepared in the parent's namespace");
        if (strstr(e->msg, "needs a new mount namespace") == NULL) tfs_fail(t, "message: %s", e->msg);
        _exit(0);
    }
    int st;
    TFS_CHECK(t, waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
              "grandchild: %s", t->res->msg);
}

Test(steps, refuses_the_parent_mount_namespace) { tfs_run_in_ns(&T, shared_ns); }
