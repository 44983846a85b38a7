/* brig_open_in_root / brig_mkdir_in_root / brig_mkfile_in_root against a
 * hostile root: symlinks to "/", to "../../..", to host directories. Every
 * assertion checks where things landed (inside the root) and that the host
 * path the symlink named was not touched. No mounts, no root needed. */
#include "test_rootfs_util.h"

#include <limits.h>

static struct tfs T;
static int rootfd = -1;
static char hostdir[128];     /* a host directory outside the root */

static void setup(void)
{
    tfs_setup(&T);
    /* the host directory the symlinks try to reach */
    snprintf(hostdir, sizeof(hostdir), "%s/host", T.base);
    cr_assert_eq(mkdir(hostdir, 0755), 0);
    char p[256];
    snprintf(p, sizeof(p), "%s/secret", hostdir);
    tfs_write(p, "host\n");
    snprintf(p, sizeof(p), "%s/proc", T.root);
    cr_assert_eq(symlink("/", p), 0);
    snprintf(p, sizeof(p), "%s/etc", T.root);
    cr_assert_eq(symlink("../../..", p), 0);
    snprintf(p, sizeof(p), "%s/dst", T.root);
    cr_assert_eq(symlink("/", p), 0);
    snprintf(p, sizeof(p), "%s/tohost", T.root);
    cr_assert_eq(symlink(hostdir, p), 0);          /* absolute host path */
    snprintf(p, sizeof(p), "%s/dangling", T.root);
    cr_assert_eq(symlink("/nonexistent/x", p), 0);
    snprintf(p, sizeof(p), "%s/file", T.root);
    tfs_write(p, "a file\n");
    snprintf(p, sizeof(p), "%s/secret", T.root);
    tfs_write(p, "inside\n");
    rootfd = open(T.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    cr_assert_geq(rootfd, 0);
}

static void teardown(void)
{
    close(rootfd);
    tfs_teardown(&T);
}

TestSuite(fs_root, .init = setup, .fini = teardown);

static void read_fd(int fd, char *buf, size_t len)
{
    ssize_t n = read(fd, buf, len - 1);
    cr_assert_geq(n, 0, "read: %s", strerror(errno));
    buf[n] = '\0';
}

static bool exists_at(const char *dir, const char *name)
{
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    struct stat st;
    return lstat(p, &st) == 0;
}

Test(fs_root, open_clamps_dotdot_and_absolute_links)
{
    struct brig_error *err = NULL;
    const char *paths[] = { "etc/secret", "/etc/secret", "../../../secret", "proc/secret",
                            "dst/../../secret", "/secret" };
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        int fd = brig_open_in_root(rootfd, paths[i], O_RDONLY, 0, &err);
        cr_assert_geq(fd, 0, "%s: %s", paths[i], err != NULL ? err->msg : "");
        char buf[64];
        read_fd(fd, buf, sizeof(buf));
        cr_assert_str_eq(buf, "inside\n", "%s must resolve inside the root", paths[i]);
        close(fd);
    }
}

Test(fs_root, open_host_symlink_stays_inside)
{
    /* tohost -> <hostdir> (absolute): inside the root that path is missing */
    struct brig_error *err = NULL;
    int fd = brig_open_in_root(rootfd, "tohost/secret", O_RDONLY, 0, &err);
    cr_assert_eq(fd, -1, "the host file must not be reachable");
    cr_assert_not_null(err);
    cr_assert_eq(err->errnum, ENOENT);
    cr_assert_str_eq(err->msg, "open tohost/secret: No such file or directory");
    brig_error_free(err);
}

Test(fs_root, open_refuses_magic_links)
{
    struct brig_error *err = NULL;
    /* a real /proc inside the "root": use the host's / as the root */
    int hostroot = open("/", O_PATH | O_DIRECTORY);
    int fd = brig_open_in_root(hostroot, "/proc/self/root/etc/passwd", O_RDONLY, 0, &err);
    close(hostroot);
    cr_assert_eq(fd, -1, "magic links must be refused");
    cr_assert_eq(err->errnum, ELOOP);
    brig_error_free(err);
}

Test(fs_root, mkdir_nested_and_existing)
{
    struct brig_error *err = NULL;
    int fd = brig_mkdir_in_root(rootfd, "/a/b//c/", 0750, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    struct stat st, want;
    cr_assert_eq(fstat(fd, &st), 0);
    char p[256];
    snprintf(p, sizeof(p), "%s/a/b/c", T.root);
    cr_assert_eq(stat(p, &want), 0);
    cr_assert_eq(st.st_ino, want.st_ino, "the fd is the created directory");
    cr_assert(S_ISDIR(st.st_mode));
    close(fd);
    /* again: existing directories are fine */
    fd = brig_mkdir_in_root(rootfd, "a/b/c", 0750, &err);
    cr_assert_geq(fd, 0);
    close(fd);
    /* the root itself */
    fd = brig_mkdir_in_root(rootfd, "/", 0755, &err);
    cr_assert_geq(fd, 0);
    cr_assert_eq(fstat(fd, &st), 0);
    cr_assert_eq(stat(T.root, &want), 0);
    cr_assert_eq(st.st_ino, want.st_ino);
    close(fd);
}

Test(fs_root, mkdir_through_symlinks_stays_inside)
{
    struct brig_error *err = NULL;
    /* dst -> "/", etc -> "../../..": both are the root itself */
    int fd = brig_mkdir_in_root(rootfd, "dst/made1", 0755, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    close(fd);
    cr_assert(exists_at(T.root, "made1"), "created inside the root");
    cr_assert_not(exists_at("/", "made1"), "not on the host");
    fd = brig_mkdir_in_root(rootfd, "etc/made2/x", 0755, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    close(fd);
    cr_assert(exists_at(T.root, "made2/x"));
    cr_assert_not(exists_at(T.base, "made2"));
    cr_assert_not(exists_at("/", "made2"));
    fd = brig_mkdir_in_root(rootfd, "../../../../made3", 0755, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    close(fd);
    cr_assert(exists_at(T.root, "made3"));
    cr_assert_not(exists_at("/", "made3"));
}

Test(fs_root, mkdir_host_symlink_fails_closed)
{
    /* tohost -> <hostdir>, missing inside the root: refuse rather than
     * create anything by following the link */
    struct brig_error *err = NULL;
    int fd = brig_mkdir_in_root(rootfd, "tohost/new", 0755, &err);
    cr_assert_eq(fd, -1);
    cr_assert_not_null(err);
    cr_assert(strstr(err->msg, "tohost") != NULL && strstr(err->msg, "dangling symlink") != NULL,
              "clear error, got: %s", err->msg);
    brig_error_free(err);
    cr_assert_not(exists_at(hostdir, "new"), "nothing created on the host");
    err = NULL;
    fd = brig_mkdir_in_root(rootfd, "dangling", 0755, &err);
    cr_assert_eq(fd, -1);
    cr_assert_not(exists_at("/", "nonexistent"));
    brig_error_free(err);
}

Test(fs_root, mkdir_host_symlink_resolves_inside_when_target_exists)
{
    /* with <hostdir> also present inside the root, the link is scoped */
    char p[512];
    snprintf(p, sizeof(p), "%s%s", T.root, hostdir);
    struct brig_error *err = NULL;
    int fd = brig_mkdir_in_root(rootfd, hostdir, 0755, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    close(fd);
    fd = brig_mkdir_in_root(rootfd, "tohost/new", 0755, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    close(fd);
    cr_assert(exists_at(p, "new"), "created in the root's copy of the path");
    cr_assert_not(exists_at(hostdir, "new"), "not in the host directory");
}

Test(fs_root, mkdir_over_file_fails)
{
    struct brig_error *err = NULL;
    int fd = brig_mkdir_in_root(rootfd, "file/sub", 0755, &err);
    cr_assert_eq(fd, -1);
    cr_assert_eq(err->errnum, ENOTDIR, "%s", err->msg);
    brig_error_free(err);
    err = NULL;
    fd = brig_mkdir_in_root(rootfd, "file", 0755, &err);
    cr_assert_eq(fd, -1);
    cr_assert_eq(err->errnum, ENOTDIR, "%s", err->msg);
    brig_error_free(err);
}

Test(fs_root, mkfile_creates_inside)
{
    struct brig_error *err = NULL;
    int fd = brig_mkfile_in_root(rootfd, "/dst/x/y/newfile", 0600, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    cr_assert(S_ISREG(st.st_mode));
    cr_assert_eq(st.st_mode & 0777, 0600);
    close(fd);
    cr_assert(exists_at(T.root, "x/y/newfile"));
    cr_assert_not(exists_at("/", "x/y/newfile"));
    /* existing file: returned as is */
    fd = brig_mkfile_in_root(rootfd, "secret", 0600, &err);
    cr_assert_geq(fd, 0);
    cr_assert_eq(fstat(fd, &st), 0);
    cr_assert_eq(st.st_size, 7, "not truncated");
    close(fd);
    /* a file directly under the root */
    fd = brig_mkfile_in_root(rootfd, "top", 0644, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    close(fd);
    cr_assert(exists_at(T.root, "top"));
}

Test(fs_root, mkfile_refuses_dirs_and_dangling_links)
{
    struct brig_error *err = NULL;
    int fd = brig_mkfile_in_root(rootfd, "dst", 0644, &err);
    cr_assert_eq(fd, -1, "dst -> / is a directory");
    cr_assert_eq(err->errnum, EISDIR, "%s", err->msg);
    brig_error_free(err);
    err = NULL;
    fd = brig_mkfile_in_root(rootfd, "dangling", 0644, &err);
    cr_assert_eq(fd, -1);
    cr_assert(strstr(err->msg, "dangling symlink") != NULL, "%s", err->msg);
    brig_error_free(err);
    cr_assert_not(exists_at("/", "nonexistent"));
    err = NULL;
    fd = brig_mkfile_in_root(rootfd, "tohost/secret2", 0644, &err);
    cr_assert_eq(fd, -1);
    brig_error_free(err);
    cr_assert_not(exists_at(hostdir, "secret2"));
    err = NULL;
    fd = brig_mkfile_in_root(rootfd, "/", 0644, &err);
    cr_assert_eq(fd, -1);
    brig_error_free(err);
}

Test(fs_root, mkdir_ex_tells_plain_paths)
{
    /* no symlink on the way: plain, existing or with the last one created */
    struct brig_error *err = NULL;
    bool plain = false;
    int fd = brig_mkdir_in_root_ex(rootfd, "/plain/a", 0755, 0, &plain, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    close(fd); /* through the walk: plain not told (false is always safe) */
    plain = false;
    fd = brig_mkdir_in_root_ex(rootfd, "/plain/a/b", 0755, 0, &plain, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    cr_assert(plain, "last component created");
    close(fd);
    plain = false;
    fd = brig_mkdir_in_root_ex(rootfd, "/plain/a/b", 0755, 0, &plain, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    cr_assert(plain, "existing");
    close(fd);
    /* through a symlink: resolved inside the root, not plain */
    plain = true;
    fd = brig_mkdir_in_root_ex(rootfd, "/dst/plain", 0755, 0, &plain, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    cr_assert_not(plain, "dst -> / is a symlink");
    close(fd);
    plain = true;
    fd = brig_mkdir_in_root_ex(rootfd, "/dst/plain/new", 0755, 0, &plain, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    cr_assert_not(plain, "created below a symlink");
    close(fd);
    cr_assert(exists_at(T.root, "plain/new"), "inside the root");
}

Test(fs_root, mkdir_ex_nofollow_refuses_a_last_symlink)
{
    struct brig_error *err = NULL;
    bool plain = true;
    /* proc -> "/": followed, it would be the root itself */
    int fd = brig_mkdir_in_root_ex(rootfd, "/proc", 0755, BRIG_IN_ROOT_NOFOLLOW, &plain, &err);
    cr_assert_eq(fd, -1);
    cr_assert_eq(err->errnum, ELOOP, "%s", err->msg);
    cr_assert_str_eq(err->msg, "/proc is a symlink");
    brig_error_free(err);
    err = NULL;
    fd = brig_mkdir_in_root_ex(rootfd, "dangling", 0755, BRIG_IN_ROOT_NOFOLLOW, &plain, &err);
    cr_assert_eq(fd, -1);
    cr_assert_eq(err->errnum, ELOOP, "%s", err->msg);
    brig_error_free(err);
    err = NULL;
    cr_assert_not(exists_at("/", "nonexistent"));
    /* a symlink before the last component is still followed in the root */
    fd = brig_mkdir_in_root_ex(rootfd, "/dst/nf", 0755, BRIG_IN_ROOT_NOFOLLOW, &plain, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    cr_assert_not(plain);
    close(fd);
    cr_assert(exists_at(T.root, "nf"));
    /* a file stays "not a directory" */
    fd = brig_mkdir_in_root_ex(rootfd, "file", 0755, BRIG_IN_ROOT_NOFOLLOW, &plain, &err);
    cr_assert_eq(fd, -1);
    cr_assert_eq(err->errnum, ENOTDIR, "%s", err->msg);
    brig_error_free(err);
}

Test(fs_root, make_target_of_dangling_links_inside)
{
    /* BRIG_IN_ROOT_MAKE_TARGET (mount destinations, as runc): the target
     * of a dangling link is made, inside the root whatever it says */
    char p[512];
    snprintf(p, sizeof(p), "%s/rel", T.root);
    char tgt[512];
    snprintf(tgt, sizeof(tgt), "../../../../../../..%s/relfile", hostdir);
    cr_assert_eq(symlink(tgt, p), 0);
    struct brig_error *err = NULL;
    int fd = brig_mkfile_in_root_ex(rootfd, "/rel", 0644, BRIG_IN_ROOT_MAKE_TARGET, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    close(fd);
    snprintf(p, sizeof(p), "%s%s", T.root, hostdir);
    cr_assert(exists_at(p, "relfile"), "made in the root's copy of the path");
    cr_assert_not(exists_at(hostdir, "relfile"), "not on the host");
    /* "dangling" -> /nonexistent/x (absolute): a directory, parents made */
    bool plain = true;
    fd = brig_mkdir_in_root_ex(rootfd, "dangling", 0755, BRIG_IN_ROOT_MAKE_TARGET, &plain, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    close(fd);
    cr_assert_not(plain, "a link was followed: the path is not plain");
    snprintf(p, sizeof(p), "%s/nonexistent", T.root);
    cr_assert(exists_at(p, "x"));
    cr_assert_not(exists_at("/", "nonexistent"));
    /* a dangling link in the middle of the path: tohost -> <hostdir> */
    fd = brig_mkfile_in_root_ex(rootfd, "tohost/deeper/f", 0644, BRIG_IN_ROOT_MAKE_TARGET, &err);
    cr_assert_geq(fd, 0, "%s", err != NULL ? err->msg : "");
    close(fd);
    snprintf(p, sizeof(p), "%s%s/deeper", T.root, hostdir);
    cr_assert(exists_at(p, "f"));
    cr_assert_not(exists_at(hostdir, "deeper"));
}

Test(fs_root, make_target_stops_at_loops)
{
    char a[512], b[512];
    snprintf(a, sizeof(a), "%s/la", T.root);
    snprintf(b, sizeof(b), "%s/lb", T.root);
    cr_assert_eq(symlink("lb", a), 0);
    cr_assert_eq(symlink("la", b), 0);
    struct brig_error *err = NULL;
    int fd = brig_mkfile_in_root_ex(rootfd, "la", 0644, BRIG_IN_ROOT_MAKE_TARGET, &err);
    cr_assert_eq(fd, -1);
    cr_assert_eq(err->errnum, ELOOP, "%s", err->msg);
    brig_error_free(err);
    err = NULL;
    fd = brig_mkdir_in_root_ex(rootfd, "la/sub", 0755, BRIG_IN_ROOT_MAKE_TARGET, NULL, &err);
    cr_assert_eq(fd, -1);
    cr_assert_eq(err->errnum, ELOOP, "%s", err->msg);
    brig_error_free(err);
}

/* brig_realpath: what realpath(3) says, for links, "..", a file, and the
 * same errors (a dangling link, a missing path). */
Test(fs_root, realpath_matches_libc, .init = setup, .fini = teardown)
{
    const char *rel[] = { "tohost", "tohost/secret", "proc", "file", "etc", "tohost/../rootfs/file", "." };
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        char p[512], want[PATH_MAX], got[PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", T.root, rel[i]);
        cr_assert_not_null(realpath(p, want), "%s", p);
        cr_assert_not_null(brig_realpath(p, got), "%s", p);
        cr_assert_str_eq(got, want, "%s", p);
    }
    char p[512], got[PATH_MAX];
    snprintf(p, sizeof(p), "%s/dangling", T.root);
    errno = 0;
    cr_assert_null(brig_realpath(p, got));
    cr_assert_eq(errno, ENOENT);
    snprintf(p, sizeof(p), "%s/file/below", T.root);
    errno = 0;
    cr_assert_null(brig_realpath(p, got));
    cr_assert_eq(errno, ENOTDIR);
}
