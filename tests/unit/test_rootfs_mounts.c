/* rootfs_prepare + mounts_apply against hostile roots, each test in a forked
 * child with its own rslave mount namespace: we assert where the mount
 * landed (inside the root) or that it failed with a clear error, and that
 * the host's "/" did not change. Needs root. */
#include <linux/magic.h>

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

TestSuite(mounts, .init = setup, .fini = teardown);

static void sym(struct tfs *t, const char *target, const char *rel)
{
    if (symlink(target, tfs_in(t, rel)) < 0) tfs_fail(t, "symlink %s: %s", rel, strerror(errno));
}

static int prepare(struct tfs *t, struct brig_spec *s)
{
    int rootfd = -1;
    TFS_OK(t, rootfs_prepare(s, NULL, &rootfd, err));
    return rootfd;
}

/* ---- proc on a symlink: refused, nothing mounted anywhere ------------- */
static void proc_symlink(struct tfs *t)
{
    sym(t, "/", "proc");
    struct brig_mount m[] = { tfs_mount("/proc", "proc", "proc", NULL) };
    struct brig_spec s;
    tfs_spec(t, &s, m, 1);
    long before = tfs_fstype("/");
    int rootfd = prepare(t, &s);
    char msg[1024];
    TFS_FAILS(t, mounts_apply(&rootfd, &s, false, err), msg);
    TFS_CHECK(t, strcmp(msg, "mounts[0] (/proc): proc must be mounted on a directory, "
                             "/proc is a symlink") == 0, "message: %s", msg);
    TFS_CHECK(t, tfs_fstype("/") == before, "host / changed");
    TFS_CHECK(t, tfs_fstype(t->root) != PROC_SUPER_MAGIC, "proc on the root");
}

Test(mounts, proc_on_symlink_refused) { tfs_run_in_ns(&T, proc_symlink); }

/* ---- sysfs on a symlink that points at a host path ------------------- */
static void sys_symlink(struct tfs *t)
{
    sym(t, "/sys", "sys");      /* absolute: the host's /sys if followed */
    struct brig_mount m[] = { tfs_mount("/sys", "sysfs", "sysfs", TFS_OPTS("ro")) };
    struct brig_spec s;
    tfs_spec(t, &s, m, 1);
    int rootfd = prepare(t, &s);
    char msg[1024];
    TFS_FAILS(t, mounts_apply(&rootfd, &s, false, err), msg);
    TFS_CHECK(t, strstr(msg, "mounts[0] (/sys): sysfs must be mounted on a directory") == msg,
              "message: %s", msg);
    TFS_CHECK(t, !tfs_is_rdonly("/sys"), "host /sys remounted");
}

Test(mounts, sysfs_on_symlink_refused) { tfs_run_in_ns(&T, sys_symlink); }

/* ---- a destination through "dst -> /" and "etc -> ../../.." ---------- */
static void dest_symlinks(struct tfs *t)
{
    sym(t, "/", "dst");
    sym(t, "../../..", "etc");
    struct brig_mount m[] = {
        tfs_mount("/dst/sub", "tmpfs", "tmpfs", TFS_OPTS("size=1m", "nosuid")),
        tfs_mount("/etc/other", "tmpfs", "tmpfs", NULL),
    };
    struct brig_spec s;
    tfs_spec(t, &s, m, 2);
    int rootfd = prepare(t, &s);
    TFS_OK(t, mounts_apply(&rootfd, &s, false, err));
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "sub")) == TMPFS_MAGIC, "tmpfs not at <root>/sub");
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "other")) == TMPFS_MAGIC, "tmpfs not at <root>/other");
    TFS_CHECK(t, !tfs_exists("/sub") && !tfs_exists("/other"), "created on the host");
    char up[256];
    snprintf(up, sizeof(up), "%s/other", t->base);
    TFS_CHECK(t, !tfs_exists(up), "escaped to the bundle");
}

Test(mounts, destination_symlinks_stay_inside) { tfs_run_in_ns(&T, dest_symlinks); }

/* ---- a destination symlink to "/" itself is refused ------------------- */
static void dest_is_root(struct tfs *t)
{
    sym(t, "/", "dst");
    struct brig_mount m[] = { tfs_mount("/dst", "tmpfs", "tmpfs", NULL) };
    struct brig_spec s;
    tfs_spec(t, &s, m, 1);
    int rootfd = prepare(t, &s);
    long before = tfs_fstype(t->root);
    char msg[1024];
    TFS_FAILS(t, mounts_apply(&rootfd, &s, false, err), msg);
    TFS_CHECK(t, strstr(msg, "resolves to the container's root") != NULL, "message: %s", msg);
    TFS_CHECK(t, tfs_fstype(t->root) == before, "something was mounted over the root");
}

Test(mounts, destination_resolving_to_root_refused) { tfs_run_in_ns(&T, dest_is_root); }

/* ---- read-only bind of a directory; source stays writable ------------- */
static void bind_ro(struct tfs *t)
{
    char src[256], f[300];
    snprintf(src, sizeof(src), "%s/src", t->base);
    mkdir(src, 0755);
    snprintf(f, sizeof(f), "%s/marker", src);
    tfs_write(f, "m");
    /* relative source: relative to the bundle */
    struct brig_mount m[] = {
        tfs_mount("/mnt/data", "bind", "src", TFS_OPTS("ro", "nosuid")),
        tfs_mount("/mnt/na", "bind", "src", TFS_OPTS("noatime", "nodev")),
        tfs_mount("/mnt/na2", "bind", tfs_in(t, "mnt/na"), TFS_OPTS("atime")),
    };
    struct brig_spec s;
    tfs_spec(t, &s, m, 3);
    int rootfd = prepare(t, &s);
    TFS_OK(t, mounts_apply(&rootfd, &s, false, err));
    TFS_CHECK(t, tfs_exists(tfs_in(t, "mnt/data/marker")), "bind content missing");
    TFS_CHECK(t, tfs_is_rdonly(tfs_in(t, "mnt/data")), "bind not read-only");
    struct statvfs sv;
    TFS_CHECK(t, statvfs(tfs_in(t, "mnt/data"), &sv) == 0 && (sv.f_flag & ST_NOSUID), "not nosuid");
    int fd = open(tfs_in(t, "mnt/data/new"), O_CREAT | O_WRONLY, 0644);
    TFS_CHECK(t, fd < 0 && errno == EROFS, "write into ro bind: fd %d errno %d", fd, errno);
    TFS_CHECK(t, !tfs_is_rdonly(src), "the source became read-only");
    TFS_CHECK(t, statvfs(tfs_in(t, "mnt/na"), &sv) == 0 && (sv.f_flag & ST_NOATIME) &&
                     (sv.f_flag & ST_NODEV) && !(sv.f_flag & ST_RDONLY), "noatime,nodev bind");
    TFS_CHECK(t, statvfs(tfs_in(t, "mnt/na2"), &sv) == 0 && !(sv.f_flag & ST_NOATIME) &&
                     (sv.f_flag & ST_NODEV), "atime clears a noatime source, nodev kept");
}

Test(mounts, bind_read_only) { tfs_run_in_ns(&T, bind_ro); }

/* ---- rbind + rro: submounts are read-only too; plain ro leaves them --- */
static void bind_rro(struct tfs *t)
{
    char src[256], sub[300];
    snprintf(src, sizeof(src), "%s/src", t->base);
    snprintf(sub, sizeof(sub), "%s/src/sub", t->base);
    mkdir(src, 0755);
    mkdir(sub, 0755);
    if (mount("tmpfs", sub, "tmpfs", 0, NULL) < 0) tfs_fail(t, "tmpfs: %s", strerror(errno));
    struct brig_mount m[] = {
        tfs_mount("/a", NULL, src, TFS_OPTS("rbind", "rro")),
        tfs_mount("/b", NULL, src, TFS_OPTS("rbind", "ro", "rprivate")),
    };
    struct brig_spec s;
    tfs_spec(t, &s, m, 2);
    int rootfd = prepare(t, &s);
    TFS_OK(t, mounts_apply(&rootfd, &s, false, err));
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "a/sub")) == TMPFS_MAGIC, "rbind did not copy the submount");
    TFS_CHECK(t, tfs_is_rdonly(tfs_in(t, "a")) && tfs_is_rdonly(tfs_in(t, "a/sub")),
              "rro must reach the submount");
    TFS_CHECK(t, tfs_is_rdonly(tfs_in(t, "b")), "ro top");
    TFS_CHECK(t, !tfs_is_rdonly(tfs_in(t, "b/sub")), "plain ro is not recursive (runc)");
}

Test(mounts, rbind_rro_is_recursive) { tfs_run_in_ns(&T, bind_rro); }

/* ---- file bind: destination created as a file; dir/file mismatch ------ */
static void bind_file(struct tfs *t)
{
    char src[256];
    snprintf(src, sizeof(src), "%s/hosts", t->base);
    tfs_write(src, "127.0.0.1 x\n");
    mkdir(tfs_in(t, "isdir"), 0755);
    struct brig_mount ok[] = { tfs_mount("/etc/hosts", "bind", src, TFS_OPTS("rbind", "ro")) };
    struct brig_spec s;
    tfs_spec(t, &s, ok, 1);
    int rootfd = prepare(t, &s);
    TFS_OK(t, mounts_apply(&rootfd, &s, false, err));
    struct stat st;
    TFS_CHECK(t, stat(tfs_in(t, "etc/hosts"), &st) == 0 && S_ISREG(st.st_mode) &&
                     st.st_size == 12, "file bind missing");
    TFS_CHECK(t, tfs_is_rdonly(tfs_in(t, "etc/hosts")), "file bind not ro");

    struct brig_mount bad[] = { tfs_mount("/isdir", "bind", src, NULL) };
    tfs_spec(t, &s, bad, 1);
    char msg[1024];
    TFS_FAILS(t, mounts_apply(&rootfd, &s, false, err), msg);
    TFS_CHECK(t, strstr(msg, "mounts[0] (/isdir): create file /isdir") == msg, "message: %s", msg);
}

Test(mounts, bind_file) { tfs_run_in_ns(&T, bind_file); }

/* ---- error format and nothing else mounted ---------------------------- */
static void bad_type(struct tfs *t)
{
    struct brig_mount m[] = {
        tfs_mount("/ok", "tmpfs", "tmpfs", NULL),
        tfs_mount("/x", "nosuchfs", "none", NULL),
    };
    struct brig_spec s;
    tfs_spec(t, &s, m, 2);
    int rootfd = prepare(t, &s);
    char msg[1024];
    TFS_FAILS(t, mounts_apply(&rootfd, &s, false, err), msg);
    TFS_CHECK(t, strcmp(msg, "mounts[1] (/x): mount nosuchfs: No such device") == 0,
              "message: %s", msg);
    struct brig_mount m2[] = { tfs_mount("/y", NULL, "none", NULL) };
    tfs_spec(t, &s, m2, 1);
    TFS_FAILS(t, mounts_apply(&rootfd, &s, false, err), msg);
    TFS_CHECK(t, strstr(msg, "mounts[0] (/y): type: required") == msg, "message: %s", msg);
    struct brig_mount m3[] = { tfs_mount("/z", NULL, "/nonexistent-src", TFS_OPTS("bind")) };
    tfs_spec(t, &s, m3, 1);
    TFS_FAILS(t, mounts_apply(&rootfd, &s, false, err), msg);
    TFS_CHECK(t, strcmp(msg, "mounts[0] (/z): source /nonexistent-src: No such file or directory") == 0,
              "message: %s", msg);
}

Test(mounts, errors_name_the_mount) { tfs_run_in_ns(&T, bad_type); }

/* ---- the usual set: proc, /dev tmpfs, devpts, shm, mqueue, sysfs ------ */
static void usual(struct tfs *t)
{
    struct brig_mount m[] = {
        tfs_mount("/proc", "proc", "proc", NULL),
        tfs_mount("/dev", "tmpfs", "tmpfs", TFS_OPTS("nosuid", "strictatime", "mode=755", "size=65536k")),
        tfs_mount("/dev/pts", "devpts", "devpts", TFS_OPTS("nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5")),
        tfs_mount("/dev/shm", "tmpfs", "shm", TFS_OPTS("nosuid", "noexec", "nodev", "mode=1777", "size=65536k")),
        tfs_mount("/dev/mqueue", "mqueue", "mqueue", TFS_OPTS("nosuid", "noexec", "nodev")),
        tfs_mount("/sys", "sysfs", "sysfs", TFS_OPTS("nosuid", "noexec", "nodev", "ro")),
        tfs_mount("/sys/fs/cgroup", "cgroup2", "cgroup", TFS_OPTS("nosuid", "noexec", "nodev", "relatime")),
    };
    struct brig_spec s;
    tfs_spec(t, &s, m, sizeof(m) / sizeof(m[0]));
    int rootfd = prepare(t, &s);
    TFS_OK(t, mounts_apply(&rootfd, &s, false, err));
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "proc")) == PROC_SUPER_MAGIC, "proc");
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "dev")) == TMPFS_MAGIC, "dev");
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "dev/pts")) == DEVPTS_SUPER_MAGIC, "devpts");
    TFS_CHECK(t, tfs_exists(tfs_in(t, "dev/pts/ptmx")), "devpts ptmx");
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "dev/shm")) == TMPFS_MAGIC, "shm");
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "dev/mqueue")) == 0x19800202, "mqueue");
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "sys")) == SYSFS_MAGIC, "sysfs");
    TFS_CHECK(t, tfs_is_rdonly(tfs_in(t, "sys")), "sysfs ro");
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "sys/fs/cgroup")) == CGROUP2_SUPER_MAGIC, "cgroup2");
    TFS_CHECK(t, tfs_is_rdonly(tfs_in(t, "sys/fs/cgroup")), "cgroup2 is ro without \"rw\"");
    struct stat st;
    TFS_CHECK(t, stat(tfs_in(t, "dev/shm"), &st) == 0 && (st.st_mode & 07777) == 01777, "shm mode");
}

Test(mounts, usual_filesystems) { tfs_run_in_ns(&T, usual); }

/* ---- nothing may be mounted inside /proc except procfs and lxcfs files */
static void proc_guard(struct tfs *t)
{
    char src[256];
    snprintf(src, sizeof(src), "%s/fake", t->base);
    tfs_write(src, "x");
    struct brig_mount m[] = {
        tfs_mount("/proc", "proc", "proc", NULL),
        tfs_mount("/proc/cmdline", "bind", src, TFS_OPTS("bind")),
    };
    struct brig_spec s;
    tfs_spec(t, &s, m, 2);
    int rootfd = prepare(t, &s);
    char msg[1024];
    TFS_FAILS(t, mounts_apply(&rootfd, &s, false, err), msg);
    TFS_CHECK(t, strcmp(msg, "mounts[1] (/proc/cmdline): refusing to mount over "
                             "/proc/cmdline: inside /proc") == 0, "message: %s", msg);
    /* an lxcfs-style file is allowed */
    struct brig_mount ok[] = { tfs_mount("/proc/uptime", "bind", src, TFS_OPTS("bind")) };
    tfs_spec(t, &s, ok, 1);
    TFS_OK(t, mounts_apply(&rootfd, &s, false, err));
    /* and a tmpfs over /proc is not */
    struct brig_mount bad[] = { tfs_mount("/proc", "tmpfs", "tmpfs", NULL) };
    tfs_spec(t, &s, bad, 1);
    TFS_FAILS(t, mounts_apply(&rootfd, &s, false, err), msg);
    TFS_CHECK(t, strstr(msg, "only a procfs may be mounted on /proc") != NULL, "message: %s", msg);
}

Test(mounts, proc_guard) { tfs_run_in_ns(&T, proc_guard); }

/* ---- tmpcopyup ---------------------------------------------------------- */
static void copyup(struct tfs *t)
{
    mkdir(tfs_in(t, "etc"), 0751);
    mkdir(tfs_in(t, "etc/sub"), 0700);
    tfs_write(tfs_in(t, "etc/conf"), "hello");
    sym(t, "conf", "etc/link");
    struct brig_mount m[] = { tfs_mount("/etc", "tmpfs", "tmpfs", TFS_OPTS("tmpcopyup", "ro")) };
    struct brig_spec s;
    tfs_spec(t, &s, m, 1);
    int rootfd = prepare(t, &s);
    TFS_OK(t, mounts_apply(&rootfd, &s, false, err));
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "etc")) == TMPFS_MAGIC, "not a tmpfs");
    char buf[16] = {0};
    int fd = open(tfs_in(t, "etc/conf"), O_RDONLY);
    TFS_CHECK(t, fd >= 0 && read(fd, buf, sizeof(buf) - 1) == 5 && strcmp(buf, "hello") == 0,
              "content not copied");
    struct stat st;
    TFS_CHECK(t, lstat(tfs_in(t, "etc/link"), &st) == 0 && S_ISLNK(st.st_mode), "symlink");
    TFS_CHECK(t, stat(tfs_in(t, "etc/sub"), &st) == 0 && (st.st_mode & 0777) == 0700, "sub mode");
    TFS_CHECK(t, stat(tfs_in(t, "etc"), &st) == 0 && (st.st_mode & 0777) == 0751, "top mode");
    TFS_CHECK(t, tfs_is_rdonly(tfs_in(t, "etc")), "ro after the copy");
}

Test(mounts, tmpcopyup) { tfs_run_in_ns(&T, copyup); }

/* ---- cgroup v1 (hybrid hosts): our own cgroup per hierarchy, read-only */
static void cgroup_v1(struct tfs *t)
{
    struct brig_mount m[] = {
        tfs_mount("/sys/fs/cgroup", "cgroup", "cgroup", TFS_OPTS("nosuid", "noexec", "nodev", "relatime", "ro")),
    };
    struct brig_spec s;
    tfs_spec(t, &s, m, 1);
    int rootfd = prepare(t, &s);
    TFS_OK(t, mounts_apply(&rootfd, &s, false, err));
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "sys/fs/cgroup")) == TMPFS_MAGIC, "tmpfs");
    TFS_CHECK(t, tfs_is_rdonly(tfs_in(t, "sys/fs/cgroup")), "tmpfs ro");
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "sys/fs/cgroup/memory")) == CGROUP_SUPER_MAGIC, "memory");
    TFS_CHECK(t, tfs_is_rdonly(tfs_in(t, "sys/fs/cgroup/memory")), "memory ro");
    TFS_CHECK(t, tfs_exists(tfs_in(t, "sys/fs/cgroup/memory/memory.limit_in_bytes")), "files");
    TFS_CHECK(t, tfs_fstype(tfs_in(t, "sys/fs/cgroup/systemd")) == CGROUP_SUPER_MAGIC, "named");
    /* our own cgroup, not the hierarchy root: same inode as the host's */
    char line[512], path[512] = "";
    FILE *f = fopen("/proc/self/cgroup", "r");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "%*d:memory:%511s", path) == 1) break;
    if (f != NULL) fclose(f);
    char host[700];
    snprintf(host, sizeof(host), "/sys/fs/cgroup/memory%s", path);
    struct stat a, b;
    TFS_CHECK(t, stat(host, &a) == 0 && stat(tfs_in(t, "sys/fs/cgroup/memory"), &b) == 0 &&
                     a.st_ino == b.st_ino, "memory is not our cgroup %s", host);
}

Test(mounts, cgroup_v1)
{
    if (tfs_fstype("/sys/fs/cgroup/memory") != CGROUP_SUPER_MAGIC)
        cr_skip_test("host has no cgroup v1 memory hierarchy");
    tfs_run_in_ns(&T, cgroup_v1);
}

/* ---- idmap not prepared by create (mounts_idmap.c) is refused, never
 * silently made a plain bind ---------------------------------------------- */
static void idmap(struct tfs *t)
{
    struct brig_mount m[] = { tfs_mount("/a", "bind", "/tmp", TFS_OPTS("rbind", "idmap")) };
    struct brig_spec s;
    tfs_spec(t, &s, m, 1);
    int rootfd = prepare(t, &s);
    char msg[1024];
    TFS_FAILS(t, mounts_apply(&rootfd, &s, false, err), msg);
    TFS_CHECK(t, strstr(msg, "idmap") != NULL, "message: %s", msg);
    TFS_CHECK(t, !tfs_exists(tfs_in(t, "a")) || tfs_fstype(tfs_in(t, "a")) == tfs_fstype(t->root),
              "something was mounted");
}

Test(mounts, idmap_refused) { tfs_run_in_ns(&T, idmap); }
