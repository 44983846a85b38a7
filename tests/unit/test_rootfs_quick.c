/* rootfs-tools/lib/rootfs_quick.c: a runner rootfs proven unchanged since
 * its last full check (the stamp) from its entries' ctimes, without
 * listing it. The property it must keep: never "proven" for a tree where
 * a full scan and diff find a difference. Each case makes a cache
 * directory as brig keeps it (default-2, default-2.manifest, the stamp
 * after a clean full check), changes it one way, and asks both. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../rootfs-tools/lib/rootfs.h"
#include "../../runtime/util/cleanup.h"

#define STAMP "default-2.verified"

struct cache {
    char dir[64];
    int fd;         /* the cache directory */
    int tree;       /* default-2 */
};

static void put(int dirfd, const char *path, const char *text)
{
    int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    cr_assert(fd >= 0, "create %s", path);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* The stamp is only for filesystems whose ctimes the kernel keeps: where
 * the temp dir is on another (a container's overlay), nothing here can be
 * proven, by design. */
static void need_stamp_fs(void)
{
    struct statfs f;
    cr_assert_eq(statfs("/var/tmp", &f), 0);
    unsigned long t = (unsigned long)f.f_type;
    if (t != 0xEF53UL && t != 0x58465342UL && t != 0x9123683EUL && t != 0x01021994UL)
        cr_skip_test("/var/tmp is on a filesystem that gets no stamp (f_type 0x%lx)", t);
}

static bool ts_later(struct timespec a, struct timespec b)
{
    return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

/* Until the filesystem's clock is past t: a change made at t's own tick
 * is not before the stamp's time, and is scanned (not what is tested). */
static void clock_past(int dirfd, struct timespec t)
{
    for (;;) {
        struct timespec now;
        cr_assert_eq(rootfs_stamp_begin(dirfd, &now), 0);
        if (ts_later(now, t)) return;
    }
}

static void manifest_write(struct cache *c)
{
    struct rootfs_manifest m = {0};
    struct brig_error *err = NULL;
    cr_assert_eq(rootfs_manifest_scan(c->tree, false, &m, &err), 0);
    size_t len = 0;
    char *text = rootfs_manifest_text(&m, &len);
    int fd = openat(c->fd, "default-2.manifest", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    free(text);
    rootfs_manifest_free(&m);
}

/* The full check as brig runs it: the manifest loaded, a stamp begun, a
 * scan and a diff; the stamp written when nothing differs. Returns the
 * number of differences (flags 0). */
static size_t full_check(struct cache *c)
{
    struct rootfs_manifest want = {0}, have = {0};
    struct stat man;
    struct brig_error *err = NULL;
    cr_assert_eq(rootfs_manifest_load_st(c->fd, "default-2.manifest", &want, &man, &err), 0);
    struct timespec ref;
    cr_assert_eq(rootfs_stamp_begin(c->fd, &ref), 0);
    cr_assert_eq(rootfs_manifest_scan(c->tree, false, &have, &err), 0);
    struct rootfs_strv out = {0};
    size_t n = rootfs_manifest_diff(&want, &have, &man.st_ctim, 0, &out, 10);
    if (n == 0) rootfs_stamp_commit(c->fd, STAMP, c->tree, &man, &ref);
    rootfs_strv_free(&out);
    rootfs_manifest_free(&want);
    rootfs_manifest_free(&have);
    return n;
}

static bool proven(struct cache *c)
{
    struct rootfs_manifest want = {0};
    struct stat man;
    struct brig_error *err = NULL;
    if (rootfs_manifest_load_st(c->fd, "default-2.manifest", &want, &man, &err) < 0) return false;
    bool p = rootfs_tree_proven(c->fd, STAMP, c->tree, &man, &want);
    rootfs_manifest_free(&want);
    return p;
}

/* /a/f, /a/b/g, /top, /l -> a/f, the manifest, a clean full check (the
 * stamp) once the filesystem's clock has moved on, and the clock past the
 * stamp's time. Under /var/tmp: a disk
 * filesystem, as /var/lib/brig is (tmpfs keeps ctimes too). */
static void cache_make(struct cache *c)
{
    need_stamp_fs();
    *c = (struct cache){ .fd = -1, .tree = -1 };
    snprintf(c->dir, sizeof(c->dir), "/var/tmp/brig-quick-XXXXXX");
    cr_assert_not_null(mkdtemp(c->dir));
    c->fd = open(c->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    cr_assert(c->fd >= 0);
    cr_assert_eq(mkdirat(c->fd, "default-2", 0755), 0);
    c->tree = openat(c->fd, "default-2", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cr_assert(c->tree >= 0);
    cr_assert_eq(mkdirat(c->tree, "a", 0755), 0);
    cr_assert_eq(mkdirat(c->tree, "a/b", 0755), 0);
    put(c->tree, "a/f", "hello");
    put(c->tree, "a/b/g", "world");
    put(c->tree, "top", "x");
    cr_assert_eq(symlinkat("a/f", c->tree, "l"), 0);
    manifest_write(c);
    /* the tree made before the stamp's tick (else it is scanned again) */
    struct timespec now;
    cr_assert_eq(rootfs_stamp_begin(c->fd, &now), 0);
    clock_past(c->fd, now);
    cr_assert_eq(full_check(c), 0);
    struct stat st;
    cr_assert_eq(fstatat(c->fd, STAMP, &st, 0), 0, "a clean full check leaves a stamp");
    cr_assert_eq(rootfs_stamp_begin(c->fd, &now), 0);
    clock_past(c->fd, now);
}

static void cache_free(struct cache *c)
{
    close(c->tree);
    close(c->fd);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", c->dir);
    cr_assert_eq(system(cmd), 0);
}

/* The differences a fresh scan shows against the manifest, as the sandbox
 * judges them (flags: ROOTFS_DIFF_MOUNTPOINTS or 0). */
static size_t diff_now(struct cache *c, unsigned flags)
{
    struct rootfs_manifest want = {0}, have = {0};
    struct stat man;
    struct brig_error *err = NULL;
    cr_assert_eq(rootfs_manifest_load_st(c->fd, "default-2.manifest", &want, &man, &err), 0);
    cr_assert_eq(rootfs_manifest_scan(c->tree, false, &have, &err), 0);
    struct rootfs_strv out = {0};
    size_t n = rootfs_manifest_diff(&want, &have, &man.st_ctim, flags, &out, 10);
    rootfs_strv_free(&out);
    rootfs_manifest_free(&want);
    rootfs_manifest_free(&have);
    return n;
}

Test(rootfs_quick, an_untouched_tree_is_proven_and_without_a_stamp_it_is_not)
{
    struct cache c;
    cache_make(&c);
    cr_assert(proven(&c));
    cr_assert_eq(unlinkat(c.fd, STAMP, 0), 0);
    cr_assert(!proven(&c), "no stamp: scanned");
    cache_free(&c);
}

enum change { CONTENT, CHMOD, ADD_DEEP, ADD_ROOT, REMOVE, RETARGET, RENAME, MOUNTPOINT, MANIFEST_CHMOD,
              MANIFEST_REWRITTEN, TREE_REPLACED, N_CHANGES };
static const char *const change_names[] = {
    "content",       "chmod",          "add in a subdirectory",    "add at the root",       "remove",
    "retarget a link", "rename",       "a runtime's mount point",  "add, then the manifest chmod'ed",
    "the manifest written again without an entry", "add, then the tree renamed away and back as a copy",
};

/* put(), with the mtime of keep (the file, or its directory) as it was. */
static void put_keeping_mtime(int dirfd, const char *keep, const char *path, const char *text)
{
    struct stat st;
    cr_assert_eq(fstatat(dirfd, keep, &st, 0), 0);
    put(dirfd, path, text);
    const struct timespec t[2] = { { .tv_nsec = UTIME_OMIT }, st.st_mtim };
    cr_assert_eq(utimensat(dirfd, keep, t, 0), 0);
}

static void change(struct cache *c, enum change k)
{
    struct timespec keep[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };
    struct stat st;
    switch (k) {
    case CONTENT:   /* same size, mtime put back: only the ctime tells */
        put_keeping_mtime(c->tree, "a/f", "a/f", "HELLO");
        break;
    case CHMOD:
        cr_assert_eq(fchmodat(c->tree, "a/f", 0755, 0), 0);
        break;
    case ADD_DEEP:  /* and the directory's mtime put back */
        put_keeping_mtime(c->tree, "a/b", "a/b/new", "");
        break;
    case ADD_ROOT:
        cr_assert_eq(symlinkat("top", c->tree, "new"), 0);
        break;
    case REMOVE:
        cr_assert_eq(unlinkat(c->tree, "a/b/g", 0), 0);
        break;
    case RETARGET:  /* a target of the same length, the link's mtime put back */
        cr_assert_eq(fstatat(c->tree, "l", &st, AT_SYMLINK_NOFOLLOW), 0);
        cr_assert_eq(unlinkat(c->tree, "l", 0), 0);
        cr_assert_eq(symlinkat("a/g", c->tree, "l"), 0);
        keep[1] = st.st_mtim;
        cr_assert_eq(utimensat(c->tree, "l", keep, AT_SYMLINK_NOFOLLOW), 0);
        break;
    case RENAME:    /* one file over another of the same size and mode */
        cr_assert_eq(renameat(c->tree, "a/b/g", c->tree, "a/f"), 0);
        put(c->tree, "a/b/g", "world");
        break;
    case MOUNTPOINT:
        cr_assert_eq(mkdirat(c->tree, "a/mnt", 0755), 0);
        break;
    case MANIFEST_CHMOD:        /* the manifest's ctime moves past the addition */
        put(c->tree, "a/b/new", "");
        cr_assert_eq(fchmodat(c->fd, "default-2.manifest", 0600, 0), 0);
        break;
    case MANIFEST_REWRITTEN:    /* the manifest no longer names /top: the tree has one more */
    {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "grep -v ' /top$' %s/default-2.manifest > %s/m.new && mv %s/m.new %s/default-2.manifest",
                 c->dir, c->dir, c->dir, c->dir);
        cr_assert_eq(system(cmd), 0);
        break;
    }
    case TREE_REPLACED:
        put(c->tree, "a/b/new", "");
        {
            char cmd[256];
            snprintf(cmd, sizeof(cmd), "cd %s && cp -a default-2 copy && rm -rf default-2 && mv copy default-2", c->dir);
            cr_assert_eq(system(cmd), 0);
            close(c->tree);
            c->tree = openat(c->fd, "default-2", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            cr_assert(c->tree >= 0);
        }
        break;
    case N_CHANGES:
        break;
    }
}

Test(rootfs_quick, any_change_the_full_check_sees_is_not_proven)
{
    for (enum change k = 0; k < N_CHANGES; k++) {
        struct cache c;
        cache_make(&c);
        change(&c, k);
        bool p = proven(&c);
        cr_expect(diff_now(&c, 0) > 0, "%s: the full check sees it", change_names[k]);
        cr_expect(!p, "%s: the quick check proved a changed tree unchanged", change_names[k]);
        /* A runtime's mount point is still accepted by the full check the
         * quick one falls back to (and is scanned each time: no stamp). */
        if (k == MOUNTPOINT) {
            cr_expect_eq(diff_now(&c, ROOTFS_DIFF_MOUNTPOINTS), 0);
            cr_assert_eq(unlinkat(c.fd, STAMP, 0), 0);
            cr_expect(full_check(&c) > 0);
            cr_expect(faccessat(c.fd, STAMP, F_OK, 0) < 0, "no stamp for a tree with a mount point");
        }
        cache_free(&c);
    }
}

/* An idmapped mount of dir over itself: a user namespace of a child that
 * swaps ids 0 and 1 (uids and gids), so that root's files show as uid 1's. */
static int idmap_mount(const char *dir)
{
    int up[2], down[2];             /* child -> parent: unshared; parent -> child: done */
    if (pipe(up) < 0 || pipe(down) < 0) return -1;
    pid_t u = fork();
    if (u == 0) {
        char x = 0;
        close(up[0]);
        close(down[1]);
        if (unshare(CLONE_NEWUSER) == 0) (void)!write(up[1], "u", 1);
        else (void)!write(up[1], "e", 1);
        close(up[1]);
        (void)!read(down[0], &x, 1);
        _exit(0);
    }
    close(up[1]);
    close(down[0]);
    char x = 0, path[64];
    int rc = -1;
    if (u > 0 && read(up[0], &x, 1) == 1 && x == 'u') {
        static const char map[] = "0 1 1\n1 0 1\n";
        const char *files[] = { "uid_map", "gid_map" };
        rc = 0;
        for (int i = 0; i < 2 && rc == 0; i++) {
            snprintf(path, sizeof(path), "/proc/%d/%s", (int)u, files[i]);
            int fd = open(path, O_WRONLY | O_CLOEXEC);
            rc = fd >= 0 && write(fd, map, sizeof(map) - 1) == (ssize_t)(sizeof(map) - 1) ? 0 : -1;
            if (fd >= 0) close(fd);
        }
        snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)u);
        int ns = rc == 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        int t = ns >= 0 ? (int)syscall(SYS_open_tree, AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC) : -1;
        struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)ns };
        rc = t >= 0 && syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &a, sizeof(a)) == 0 &&
                     syscall(SYS_move_mount, t, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH) == 0
                 ? 0
                 : -1;
        if (t >= 0) close(t);
        if (ns >= 0) close(ns);
    }
    close(down[1]);                 /* EOF: the child ends */
    close(up[0]);
    if (u > 0) waitpid(u, NULL, 0);
    return rc;
}

/* Something mounted over the tree or a part of it is not judged: a bind of
 * /a/b over itself (the same inodes and ctimes, only the mount differs),
 * of the tree over itself, an overlay over the tree whose lower layer
 * adds an entry (its directories show the upper layer's old ctimes), and
 * the cache directory idmapped over itself (the same mount for the cache
 * and the tree, nothing moved, but other owners shown). In a child with a
 * mount namespace of its own: 0 when not proven. */
static int mounted(struct cache *c, int how)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        char tree[128], sub[160], lower[160], evil[192], opts[512];
        snprintf(tree, sizeof(tree), "%s/default-2", c->dir);
        snprintf(sub, sizeof(sub), "%s/a/b", tree);
        snprintf(lower, sizeof(lower), "%s/lower", c->dir);
        snprintf(evil, sizeof(evil), "%s/a/evil", lower);
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) _exit(2);
        if (how == 0 && mount(sub, sub, NULL, MS_BIND, NULL) < 0) _exit(2);
        if (how == 1 && mount(tree, tree, NULL, MS_BIND, NULL) < 0) _exit(2);
        if (how == 3 && idmap_mount(c->dir) < 0) _exit(5);
        if (how == 2) {
            char a[176];
            snprintf(a, sizeof(a), "%s/a", lower);
            snprintf(opts, sizeof(opts), "lowerdir=%s:%s", tree, lower);
            int fd = mkdir(lower, 0755) < 0 || mkdir(a, 0755) < 0 ? -1 : open(evil, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
            if (fd < 0) _exit(2);
            close(fd);
            if (mount("overlay", tree, "overlay", 0, opts) < 0) _exit(2);
        }
        /* opened in this namespace: fds from before see the old one's mounts */
        close(c->tree);
        close(c->fd);
        c->fd = open(c->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        c->tree = open(tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (c->fd < 0 || c->tree < 0) _exit(3);
        if (how == 2 && faccessat(c->tree, "a/evil", F_OK, 0) < 0) _exit(4);
        _exit(proven(c) ? 1 : 0);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status));
    return WEXITSTATUS(status);
}

Test(rootfs_quick, a_mount_over_the_tree_is_not_proven)
{
    if (geteuid() != 0) cr_skip_test("needs root for a mount namespace");
    static const char *const what[] = { "a bind of /a/b over itself", "a bind of the tree over itself",
                                        "an overlay over the tree adding /a/evil",
                                        "the cache directory idmapped over itself (owners shown as another's)" };
    for (int how = 0; how < 4; how++) {
        struct cache c;
        cache_make(&c);
        int r = mounted(&c, how);
        cr_expect_eq(r, 0, "%s: %s", what[how], r == 1 ? "proven" : "could not be set up");
        cache_free(&c);
    }
}

/* A cache on an overlay (a host whose / is one: a live system, a container)
 * gets no stamp and is scanned every time: a lower layer can add an entry
 * under a directory whose ctime the overlay shows unmoved. */
Test(rootfs_quick, no_stamp_on_an_overlay)
{
    if (geteuid() != 0) cr_skip_test("needs root for a mount namespace");
    char base[64];
    snprintf(base, sizeof(base), "/var/tmp/brig-quick-ovl-XXXXXX");
    cr_assert_not_null(mkdtemp(base));
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        char d[4][96], opts[512];
        static const char *const names[] = { "lower", "upper", "work", "merged" };
        for (int i = 0; i < 4; i++) {
            snprintf(d[i], sizeof(d[i]), "%s/%s", base, names[i]);
            if (mkdir(d[i], 0755) < 0) _exit(2);
        }
        snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s", d[0], d[1], d[2]);
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 ||
            mount("overlay", d[3], "overlay", 0, opts) < 0)
            _exit(2);
        struct cache c = { .fd = open(d[3], O_PATH | O_DIRECTORY | O_CLOEXEC) };
        snprintf(c.dir, sizeof(c.dir), "%s", d[3]);
        if (c.fd < 0 || mkdirat(c.fd, "default-2", 0755) < 0) _exit(2);
        c.tree = openat(c.fd, "default-2", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        put(c.tree, "f", "x");
        manifest_write(&c);
        struct timespec now;
        if (c.tree < 0 || rootfs_stamp_begin(c.fd, &now) < 0) _exit(2);
        clock_past(c.fd, now);
        if (full_check(&c) != 0) _exit(2);
        _exit(faccessat(c.fd, STAMP, F_OK, 0) == 0 ? 1 : proven(&c) ? 1 : 0);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
    cr_assert_eq(system(cmd), 0);
    cr_assert(WIFEXITED(status));
    cr_assert_eq(WEXITSTATUS(status), 0, "%s", WEXITSTATUS(status) == 1 ? "a stamp on an overlay" : "set-up failed");
}

/* The stamp itself: a FIFO in its place must not hang the check, and a
 * stamp whose time is after its own ctime (forged: a stamp is written
 * after its scan) is not taken. */
Test(rootfs_quick, a_stamp_that_is_not_one_is_not_taken)
{
    struct cache c;
    cache_make(&c);
    cr_assert(proven(&c));
    cr_assert_eq(unlinkat(c.fd, STAMP, 0), 0);
    cr_assert_eq(mkfifoat(c.fd, STAMP, 0644), 0);
    cr_assert(!proven(&c), "a FIFO for a stamp");
    cr_assert_eq(unlinkat(c.fd, STAMP, 0), 0);
    cr_assert_eq(full_check(&c), 0);
    cr_assert(proven(&c));
    /* the same stamp with its time moved past its own ctime */
    char path[128], text[512];
    snprintf(path, sizeof(path), "%s/" STAMP, c.dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    char *last = strrchr(text, ' ');
    cr_assert_not_null(last);
    snprintf(last, sizeof(text) - (size_t)(last - text), " 4000000000.0\n");
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    cr_assert(!proven(&c), "a stamp with a time in the future");
    /* of another boot: the filesystem may have been written offline */
    cr_assert_eq(unlinkat(c.fd, STAMP, 0), 0);
    cr_assert_eq(full_check(&c), 0);
    cr_assert(proven(&c));
    f = fopen(path, "r");
    cr_assert_not_null(f);
    n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    char *boot = strchr(text, '\n');
    cr_assert_not_null(boot);
    boot[1] = boot[1] == '0' ? '1' : '0';
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    cr_assert(!proven(&c), "a stamp of another boot");
    cache_free(&c);
}

/* Where the stamp is written first (NAME.tmp-PID): a FIFO planted there
 * must not hang the check, nor a hard link there get its target written. */
Test(rootfs_quick, what_is_planted_at_the_stamps_temp_name_is_not_written)
{
    struct cache c;
    cache_make(&c);
    char tmp[96];
    snprintf(tmp, sizeof(tmp), STAMP ".tmp-%d", (int)getpid());
    cr_assert_eq(unlinkat(c.fd, STAMP, 0), 0);
    cr_assert_eq(mkfifoat(c.fd, tmp, 0644), 0);
    cr_assert_eq(full_check(&c), 0);            /* returns: not opened */
    cr_assert(proven(&c));
    put(c.fd, "victim", "keep");
    cr_assert_eq(unlinkat(c.fd, STAMP, 0), 0);
    cr_assert_eq(linkat(c.fd, "victim", c.fd, tmp, 0), 0);
    cr_assert_eq(full_check(&c), 0);
    char buf[16] = "";
    int fd = openat(c.fd, "victim", O_RDONLY | O_CLOEXEC);
    cr_assert(fd >= 0);
    cr_assert_eq(read(fd, buf, sizeof(buf) - 1), 4);
    close(fd);
    cr_assert_str_eq(buf, "keep");
    cr_assert(proven(&c));
    cache_free(&c);
}
