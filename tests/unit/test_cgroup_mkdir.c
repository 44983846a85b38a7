/* cg_mkdir_p (runtime/linux/cgroup/cgroup_fs.c) when a parent disappears between
 * two of its mkdirs, as when the delete of the container that made a shared
 * parent removes it, and what a failed walk leaves behind. Deterministic:
 * this binary defines mkdir(), so the calls of the (statically linked)
 * library come here, and a test decides what happens just before the real
 * one. Plain directories: the walk is the same as in a cgroup mount. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "linux/cgroup/cgroup_internal.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strutil.h"

static const char *inject_at;   /* a path whose mkdir is interfered with */
static const char *remove_first;/* ... by removing this directory first */
static int inject_times;        /* ... this many times */
static int inject_errno;        /* or by failing with this errno */
static bool inject_file;        /* or by making a file there (a control file) */

int mkdir(const char *path, mode_t mode)
{
    if (inject_at != NULL && strcmp(path, inject_at) == 0 && inject_times > 0) {
        inject_times--;
        if (inject_errno != 0) {
            errno = inject_errno;
            return -1;
        }
        if (inject_file) close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
        else rmdir(remove_first);
    }
    return (int)syscall(SYS_mkdirat, AT_FDCWD, path, mode);
}

static char *tmp_dir(void)
{
    char tmpl[] = "/tmp/brig-cgmkdir.XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    return brig_strdup(tmpl);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

Test(cgroup_mkdir, parent_removed_once_is_made_again)
{
    autofree char *mnt = tmp_dir();
    autofree char *shared = brig_asprintf("%s/shared", mnt);
    autofree char *leaf = brig_asprintf("%s/leaf", shared);
    cr_assert_eq(syscall(SYS_mkdirat, AT_FDCWD, shared, 0755), 0);   /* another container's */
    inject_at = leaf, remove_first = shared, inject_times = 1;
    unsigned created = 0;
    struct brig_error *e = NULL;
    int r = cg_mkdir_p(mnt, leaf, &created, &e);
    cr_assert_eq(r, 0, "create failed: %s", e != NULL ? e->msg : "?");
    cr_assert(exists(leaf));
    cr_assert_eq(created, 2, "the parent made again is ours now: %u level(s)", created);
    rmdir(leaf), rmdir(shared), rmdir(mnt);
}

Test(cgroup_mkdir, parent_removed_every_time_fails_bounded)
{
    autofree char *mnt = tmp_dir();
    autofree char *shared = brig_asprintf("%s/shared", mnt);
    autofree char *leaf = brig_asprintf("%s/leaf", shared);
    inject_at = leaf, remove_first = shared, inject_times = 1000;
    unsigned created = 7;
    struct brig_error *e = NULL;
    cr_assert_eq(cg_mkdir_p(mnt, leaf, &created, &e), -1);
    cr_assert_eq(e->errnum, ENOENT);
    cr_assert_gt(inject_times, 900, "walked %d times", 1000 - inject_times);
    cr_assert_eq(created, 0);
    cr_assert_not(exists(shared), "a level of the failed walk was left");
    brig_error_free(e);
    rmdir(mnt);
}

Test(cgroup_mkdir, failure_leaves_nothing_it_made)
{
    autofree char *mnt = tmp_dir();
    autofree char *a = brig_asprintf("%s/a", mnt);
    autofree char *b = brig_asprintf("%s/b", a);
    autofree char *leaf = brig_asprintf("%s/leaf", b);
    inject_at = leaf, inject_times = 1, inject_errno = EACCES;
    unsigned created = 0;
    struct brig_error *e = NULL;
    cr_assert_eq(cg_mkdir_p(mnt, leaf, &created, &e), -1);
    cr_assert_eq(e->errnum, EACCES);
    cr_assert(strstr(e->msg, "leaf") != NULL, "the error names the level that failed: %s", e->msg);
    cr_assert_not(exists(b), "%s left behind", b);
    cr_assert_not(exists(a), "%s left behind", a);
    brig_error_free(e);
    rmdir(mnt);
}

/* A leaf that turns out to be a file (as /x/cgroup.procs is in a cgroup
 * mount once /x is made) is refused, and the level made above it removed
 * (in a cgroup mount the control file goes with it; here the test's file
 * keeps /x until it is unlinked, then the undo is done again by hand). */
Test(cgroup_mkdir, leaf_that_is_a_file_is_refused_and_undone)
{
    autofree char *mnt = tmp_dir();
    autofree char *x = brig_asprintf("%s/x", mnt);
    autofree char *leaf = brig_asprintf("%s/cgroup.procs", x);
    inject_at = leaf, inject_times = 1, inject_file = true;
    unsigned created = 0;
    struct brig_error *e = NULL;
    int r = cg_mkdir_p(mnt, leaf, &created, &e);
    inject_file = false;
    cr_assert_eq(r, -1, "a file accepted as the leaf");
    cr_assert_eq(e->errnum, ENOTDIR);
    cr_assert(strstr(e->msg, "linux.cgroupsPath") != NULL, "%s", e->msg);
    cr_assert_eq(created, 0);
    unlink(leaf);
    cr_assert_eq(cg_rmdir_created(x, 1, NULL), 0);
    cr_assert_not(exists(x), "%s left behind", x);
    brig_error_free(e);
    rmdir(mnt);
}

/* Parents made for containers are marked: the delete that empties one
 * removes it, whichever container made it. The admin's stay. */
Test(cgroup_mkdir, marked_parents_go_with_the_last_container)
{
    autofree char *mnt = tmp_dir();
    autofree char *adm = brig_asprintf("%s/adm", mnt);
    cr_assert_eq(syscall(SYS_mkdirat, AT_FDCWD, adm, 0755), 0);
    autofree char *p = brig_asprintf("%s/p", adm);
    autofree char *q = brig_asprintf("%s/q", p);
    autofree char *l1 = brig_asprintf("%s/l1", q);
    autofree char *l2 = brig_asprintf("%s/l2", q);
    unsigned c1 = 0, c2 = 0;
    cr_assert_eq(cg_mkdir_p(mnt, l1, &c1, NULL), 0);
    if (!cg_parent_marked(p)) {
        rmdir(l1), rmdir(q), rmdir(p), rmdir(adm), rmdir(mnt);
        cr_skip_test("no trusted.* xattrs on %s (not root, or the filesystem lacks them)", mnt);
    }
    cr_assert_eq(c1, 3);
    cr_assert(cg_parent_marked(q));
    cr_assert_not(cg_parent_marked(l1), "the leaf needs no mark");
    cr_assert_eq(cg_mkdir_p(mnt, l2, &c2, NULL), 0);
    cr_assert_eq(c2, 1, "the parents were made by the first");
    /* the maker goes first: its parents are busy with the other */
    cr_assert_eq(cg_rmdir_created(l1, c1, NULL), 0);
    cr_assert_not(exists(l1));
    cr_assert(exists(q));
    /* the last one empties them: gone, up to the admin's */
    cr_assert_eq(cg_rmdir_created(l2, c2, NULL), 0);
    cr_assert_not(exists(q));
    cr_assert_not(exists(p));
    cr_assert(exists(adm), "the admin's parent was removed");
    rmdir(adm), rmdir(mnt);
}
