/* Helpers for the filesystem tests: a temporary bundle under /tmp, and a
 * forked child in its own mount namespace (made rslave first, so nothing it
 * mounts can reach the host) that reports back through shared memory.
 * The temporary tree is removed by the parent after the child is gone, so
 * the removal never walks into a mount. */
#ifndef BRIG_TEST_ROOTFS_UTIL_H
#define BRIG_TEST_ROOTFS_UTIL_H

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fs.h"

struct tfs_result {
    int failed;
    char msg[2048];
};

struct tfs {
    char base[64];      /* /tmp/brig-fs-XXXXXX: the "bundle" */
    char root[128];     /* base/rootfs */
    struct tfs_result *res;
};

/* Record a failure from inside the child and leave. */
static inline __attribute__((noreturn, format(printf, 2, 3))) void
tfs_fail(struct tfs *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->res->msg, sizeof(t->res->msg), fmt, ap);
    va_end(ap);
    t->res->failed = 1;
    _exit(1);
}

#define TFS_CHECK(t, cond, fmt, ...)                                         \
    do {                                                                     \
        if (!(cond)) tfs_fail((t), "line %d: " fmt, __LINE__, ##__VA_ARGS__); \
    } while (0)

/* A brig call that must succeed. */
#define TFS_OK(t, call)                                                      \
    do {                                                                     \
        struct brig_error *e_ = NULL;                                        \
        struct brig_error **err = &e_;                                       \
        if ((call) < 0)                                                      \
            tfs_fail((t), "line %d: %s failed: %s", __LINE__, #call,         \
                     e_ != NULL ? e_->msg : "(no error)");                   \
        brig_error_free(e_);                                                 \
    } while (0)

/* A brig call that must fail; the message is copied into buf. */
#define TFS_FAILS(t, call, buf)                                              \
    do {                                                                     \
        struct brig_error *e_ = NULL;                                        \
        struct brig_error **err = &e_;                                       \
        if ((call) >= 0) tfs_fail((t), "line %d: %s succeeded", __LINE__, #call); \
        snprintf((buf), sizeof(buf), "%s", e_ != NULL ? e_->msg : "");       \
        brig_error_free(e_);                                                 \
    } while (0)

static inline void tfs_write(const char *path, const char *content)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "create %s: %s", path, strerror(errno));
    fputs(content, f);
    fclose(f);
}

static inline void tfs_skip_unless_root(void)
{
    if (geteuid() != 0) cr_skip_test("needs root (mount namespaces, mknod)");
}

static inline void tfs_setup(struct tfs *t)
{
    snprintf(t->base, sizeof(t->base), "/tmp/brig-fs-XXXXXX");
    cr_assert_not_null(mkdtemp(t->base));
    snprintf(t->root, sizeof(t->root), "%s/rootfs", t->base);
    cr_assert_eq(mkdir(t->root, 0755), 0);
    t->res = mmap(NULL, sizeof(*t->res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(t->res, MAP_FAILED);
    memset(t->res, 0, sizeof(*t->res));
}

static inline void tfs_teardown(struct tfs *t)
{
    int fd = open("/tmp", O_RDONLY | O_DIRECTORY);
    brig_rm_rf_at(fd, t->base + strlen("/tmp/"), NULL);
    close(fd);
    munmap(t->res, sizeof(*t->res));
}

/* Run fn in a forked child with a private (rslave) mount namespace. */
static inline void tfs_run_in_ns(struct tfs *t, void (*fn)(struct tfs *t))
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        if (unshare(CLONE_NEWNS) < 0) tfs_fail(t, "unshare(CLONE_NEWNS): %s", strerror(errno));
        if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
            tfs_fail(t, "make / rslave: %s", strerror(errno));
        fn(t);
        _exit(0);
    }
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st), "child died (status %#x): %s", st, t->res->msg);
    cr_assert_eq(t->res->failed, 0, "%s", t->res->msg);
    cr_assert_eq(WEXITSTATUS(st), 0, "child exit %d: %s", WEXITSTATUS(st), t->res->msg);
}

#endif

/* ---- building specs --------------------------------------------------- */
#include <sys/statfs.h>
#include <sys/statvfs.h>

#include "config/spec.h"
#include "linux/rootfs/rootfs.h"

static inline size_t tfs_strv_len(char **v)
{
    size_t n = 0;
    while (v != NULL && v[n] != NULL) n++;
    return n;
}

static inline struct brig_mount tfs_mount(const char *dst, const char *type, const char *src,
                                          char **opts)
{
    struct brig_mount m = {
        .destination = (char *)dst,
        .type = (char *)type,
        .source = (char *)src,
        .options = opts,
        .n_options = tfs_strv_len(opts),
    };
    return m;
}

#define TFS_OPTS(...) ((char *[]){ __VA_ARGS__, NULL })

static inline void tfs_spec(struct tfs *t, struct brig_spec *s, struct brig_mount *m, size_t n)
{
    memset(s, 0, sizeof(*s));
    s->root.path = t->root;
    s->bundle = t->base;
    s->mounts = m;
    s->n_mounts = n;
}

static inline long tfs_fstype(const char *path)
{
    struct statfs sf;
    if (statfs(path, &sf) < 0) return -1;
    return (long)sf.f_type;
}

static inline bool tfs_is_rdonly(const char *path)
{
    struct statvfs sv;
    return statvfs(path, &sv) == 0 && (sv.f_flag & ST_RDONLY);
}

static inline bool tfs_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

/* "<root>/<rel>" into a static rotating buffer (the child is one thread). */
static inline const char *tfs_in(struct tfs *t, const char *rel)
{
    static char bufs[8][512];
    static int i;
    char *b = bufs[i++ % 8];
    snprintf(b, 512, "%s/%s", t->root, rel[0] == '/' ? rel + 1 : rel);
    return b;
}
