/* rootfs_manifest_quick (rootfs-tools/lib/rootfs_quick.c): a runner
 * rootfs proven unchanged from its entries' ctimes, without listing it.
 * Each case builds a small tree, writes its manifest's time, changes the
 * tree one way, and checks that the quick check says "not proven" whenever
 * the full scan and diff find a difference (the property it must keep),
 * and "unchanged" for an untouched tree. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../rootfs-tools/lib/rootfs.h"
#include "../../runtime/util/cleanup.h"

struct tree {
    char dir[64];
    int fd;
    struct rootfs_manifest want;
    struct timespec written;
};

static void put(int dirfd, const char *path, const char *text)
{
    int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    cr_assert(fd >= 0, "create %s", path);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* The ctime a file made now gets: past the manifest's once it is later. */
static struct timespec ctime_now(int dirfd)
{
    put(dirfd, ".stamp", "");
    struct stat st;
    cr_assert_eq(fstatat(dirfd, ".stamp", &st, 0), 0);
    unlinkat(dirfd, ".stamp", 0);
    return st.st_ctim;
}

static bool later(struct timespec a, struct timespec b)
{
    return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

/* /a/f, /a/b/g, /top, /l -> a/f; the manifest scanned, its time taken, and
 * the clock past it (a change made within the manifest's own tick would
 * not show: it does not for the full check either). The stamp lives
 * beside the tree, not in it. */
static void tree_make(struct tree *t)
{
    *t = (struct tree){ .fd = -1 };
    snprintf(t->dir, sizeof(t->dir), "/tmp/brig-quick-XXXXXX");
    cr_assert_not_null(mkdtemp(t->dir));
    int base = open(t->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    cr_assert(base >= 0);
    cr_assert_eq(mkdirat(base, "t", 0755), 0);
    t->fd = openat(base, "t", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cr_assert(t->fd >= 0);
    cr_assert_eq(mkdirat(t->fd, "a", 0755), 0);
    cr_assert_eq(mkdirat(t->fd, "a/b", 0755), 0);
    put(t->fd, "a/f", "hello");
    put(t->fd, "a/b/g", "world");
    put(t->fd, "top", "x");
    cr_assert_eq(symlinkat("a/f", t->fd, "l"), 0);
    struct brig_error *err = NULL;
    cr_assert_eq(rootfs_manifest_scan(t->fd, false, &t->want, &err), 0);
    t->written = ctime_now(base);
    while (!later(ctime_now(base), t->written)) {}
    close(base);
}

static void tree_free(struct tree *t)
{
    rootfs_manifest_free(&t->want);
    close(t->fd);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", t->dir);
    cr_assert_eq(system(cmd), 0);
}

/* The full check's verdict: the number of differences a fresh scan shows. */
static size_t full_diff(struct tree *t, unsigned flags)
{
    struct rootfs_manifest have = {0};
    struct brig_error *err = NULL;
    cr_assert_eq(rootfs_manifest_scan(t->fd, false, &have, &err), 0);
    struct rootfs_strv out = {0};
    size_t n = rootfs_manifest_diff(&t->want, &have, &t->written, flags, &out, 10);
    rootfs_strv_free(&out);
    rootfs_manifest_free(&have);
    return n;
}

Test(rootfs_quick, an_untouched_tree_is_proven_unchanged)
{
    struct tree t;
    tree_make(&t);
    cr_assert_eq(full_diff(&t, 0), 0);
    cr_assert(rootfs_manifest_quick(t.fd, &t.want, &t.written));
    tree_free(&t);
}

enum change { CONTENT, CHMOD, ADD_DEEP, ADD_ROOT, REMOVE, RETARGET, RENAME, MOUNTPOINT, N_CHANGES };
static const char *const change_names[] = { "content", "chmod", "add in a subdirectory", "add at the root",
                                            "remove", "retarget a link", "rename", "a runtime's mount point" };

static void change(struct tree *t, enum change c)
{
    struct timespec keep[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };
    struct stat st;
    switch (c) {
    case CONTENT:   /* same size, mtime put back: only the ctime tells */
        cr_assert_eq(fstatat(t->fd, "a/f", &st, 0), 0);
        put(t->fd, "a/f", "HELLO");
        keep[1] = st.st_mtim;
        cr_assert_eq(utimensat(t->fd, "a/f", keep, 0), 0);
        break;
    case CHMOD:
        cr_assert_eq(fchmodat(t->fd, "a/f", 0755, 0), 0);
        break;
    case ADD_DEEP:  /* and the directory's mtime put back */
        cr_assert_eq(fstatat(t->fd, "a/b", &st, 0), 0);
        put(t->fd, "a/b/new", "");
        keep[1] = st.st_mtim;
        cr_assert_eq(utimensat(t->fd, "a/b", keep, 0), 0);
        break;
    case ADD_ROOT:
        cr_assert_eq(symlinkat("top", t->fd, "new"), 0);
        break;
    case REMOVE:
        cr_assert_eq(unlinkat(t->fd, "a/b/g", 0), 0);
        break;
    case RETARGET:  /* a target of the same length */
        cr_assert_eq(unlinkat(t->fd, "l", 0), 0);
        cr_assert_eq(symlinkat("a/g", t->fd, "l"), 0);
        break;
    case RENAME:    /* one file over another of the same size and mode */
        cr_assert_eq(renameat(t->fd, "a/b/g", t->fd, "a/f"), 0);
        put(t->fd, "a/b/g", "world");
        break;
    case MOUNTPOINT:
        cr_assert_eq(mkdirat(t->fd, "a/mnt", 0755), 0);
        break;
    case N_CHANGES:
        break;
    }
}

Test(rootfs_quick, any_change_the_full_check_sees_is_not_proven)
{
    for (enum change c = 0; c < N_CHANGES; c++) {
        struct tree t;
        tree_make(&t);
        change(&t, c);
        bool quick = rootfs_manifest_quick(t.fd, &t.want, &t.written);
        size_t strict = full_diff(&t, 0);
        cr_expect(strict > 0, "%s: the full check sees it", change_names[c]);
        cr_expect(!quick, "%s: the quick check proved a changed tree unchanged", change_names[c]);
        /* A runtime's mount point is still accepted, by the full check the
         * quick one falls back to. */
        if (c == MOUNTPOINT) cr_expect_eq(full_diff(&t, ROOTFS_DIFF_MOUNTPOINTS), 0);
        tree_free(&t);
    }
}

/* Something mounted over a part of the tree: not judged by the quick
 * check. Here /a/b bound over itself, so that the mount is all that
 * differs (the same inodes, ctimes and entries). In a child with a mount
 * namespace of its own. */
Test(rootfs_quick, a_mount_over_the_tree_is_not_proven)
{
    if (geteuid() != 0) cr_skip_test("needs root for a mount namespace");
    struct tree t;
    tree_make(&t);
    char path[128];
    snprintf(path, sizeof(path), "%s/t/a/b", t.dir);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0 ||
            mount(path, path, NULL, MS_BIND, NULL) < 0)
            _exit(2);
        /* opened in this namespace: t.fd's walk sees the old one's mounts */
        snprintf(path, sizeof(path), "%s/t", t.dir);
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) _exit(3);
        _exit(rootfs_manifest_quick(fd, &t.want, &t.written) ? 1 : 0);
    }
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status));
    cr_assert_eq(WEXITSTATUS(status), 0, "quick check through a mount: %d", WEXITSTATUS(status));
    tree_free(&t);
}

/* A link replaced after the scan but before the manifest's time (its
 * ctime then says nothing): the target itself is compared. */
Test(rootfs_quick, a_link_target_is_read_not_trusted_to_its_ctime)
{
    struct tree t;
    tree_make(&t);
    struct stat st;
    cr_assert_eq(fstatat(t.fd, "l", &st, AT_SYMLINK_NOFOLLOW), 0);
    cr_assert_eq(unlinkat(t.fd, "l", 0), 0);
    cr_assert_eq(symlinkat("a/g", t.fd, "l"), 0);
    const struct timespec keep[2] = { { .tv_nsec = UTIME_OMIT }, st.st_mtim };     /* and its mtime put back */
    cr_assert_eq(utimensat(t.fd, "l", keep, AT_SYMLINK_NOFOLLOW), 0);
    t.written = ctime_now(t.fd);
    cr_assert(full_diff(&t, 0) > 0);
    cr_assert(!rootfs_manifest_quick(t.fd, &t.want, &t.written));
    tree_free(&t);
}
