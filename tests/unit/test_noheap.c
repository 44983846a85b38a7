/* The no-heap stretch of `brig exec`'s child (util/noheap.h): from its
 * identity switch to its execve, success or failure, not one malloc,
 * calloc, realloc or free, also inside glibc; errors in the static object;
 * brig's allocators end the process when called there. malloc is
 * interposed here to count the calls (glibc's own calls go through it). */
#include <criterion/criterion.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdlib.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/proc_exec.h"
#include "util/error.h"
#include "util/log.h"
#include "util/noheap.h"
#include "util/strutil.h"
#include "sec_child.h"

#ifndef __SANITIZE_ADDRESS__
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static volatile int counting;
static volatile unsigned long heap_calls;
void *malloc(size_t n) { if (counting) heap_calls++; return __libc_malloc(n); }
void *calloc(size_t n, size_t s) { if (counting) heap_calls++; return __libc_calloc(n, s); }
void *realloc(void *p, size_t n) { if (counting) heap_calls++; return __libc_realloc(p, n); }
void free(void *p) { if (counting && p != NULL) heap_calls++; __libc_free(p); }
#define COUNTING_SKIP() ((void)0)
#else
static volatile int counting;
static volatile unsigned long heap_calls;
#define COUNTING_SKIP() cr_skip_test("malloc is ASan's here: counted in the plain build")
#endif

static void need_root(void)
{
    if (geteuid() != 0) cr_skip_test("needs root (setresuid, capset)");
}

struct confine_arg {
    const char *cwd;
    const char *exe;
};

/* As exec_child_run: prepared, heap off, confined as uid 1000 with
 * CAP_CHOWN kept, then execve of a missing file (or a cwd it may not
 * enter): the error comes back through the static object. */
static int confine_child(void *arg, int fd)
{
    const struct confine_arg *a = arg;
    char *args[] = { (char *)a->exe, NULL };
    char *env[] = { "A=b", NULL };
    struct brig_process p = {
        .user = { .uid = 1000, .gid = 1000 },
        .args = args, .n_args = 1, .env = env, .n_env = 1, .cwd = (char *)a->cwd,
        .no_new_privileges = true,
    };
    for (int s = 0; s < BRIG_CAP_SET_COUNT; s++)
        if (s != BRIG_CAP_INHERITABLE && s != BRIG_CAP_AMBIENT) p.caps.sets[s] = UINT64_C(1) << CAP_CHOWN;
    struct brig_error *err = NULL;
    struct proc_launch l;
    if (proc_launch_prepare(&p, a->exe, "HOME=/", -1, NULL, -1, &l, &err) < 0) {
        sec_out(fd, "prepare: %s", err->msg);
        return 1;
    }
    brig_noheap_set(true);
    counting = 1;
    int rc = proc_confine(&p, NULL, false, &l, &err);
    if (rc == 0) proc_execve(&l, &err);
    struct brig_error *seen = err;
    brig_error_freep(&err);         /* the static one: not freed */
    counting = 0;
    sec_out(fd, "calls=%lu rc=%d msg=%s", heap_calls, rc, seen != NULL ? seen->msg : "(none)");
    return 0;
}

Test(noheap, confine_and_failed_execve_touch_no_heap)
{
    need_root();
    COUNTING_SKIP();
    struct confine_arg a = { .cwd = "/", .exe = "/nonexistent-brig-noheap" };
    struct sec_child r;
    cr_assert_eq(sec_child_run(confine_child, &a, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "%s", r.out);
    cr_expect(strstr(r.out, "calls=0 rc=0 msg=exec /nonexistent-brig-noheap: No such file or directory") != NULL,
              "%s", r.out);
}

Test(noheap, a_cwd_refused_after_the_switch_touches_no_heap)
{
    need_root();
    COUNTING_SKIP();
    char dir[] = "/tmp/brig-noheap-XXXXXX";      /* 0700, root's */
    cr_assert_not_null(mkdtemp(dir));
    struct confine_arg a = { .cwd = dir, .exe = "/nonexistent-brig-noheap" };
    struct sec_child r;
    cr_assert_eq(sec_child_run(confine_child, &a, &r), 0);
    rmdir(dir);
    cr_assert_eq(sec_exit_code(&r), 0, "%s", r.out);
    cr_expect(strstr(r.out, "calls=0 rc=-1 msg=process.cwd (") != NULL, "%s", r.out);
    cr_expect(strstr(r.out, "Permission denied") != NULL, "%s", r.out);
}

static int errors_child(void *arg, int fd)
{
    (void)arg;
    brig_noheap_set(true);
    struct brig_error *e = NULL;
    brig_fail(&e, 4242, "first");
    struct brig_error *first = e;
    brig_wrap(&e, "ctx");
    sec_out(fd, "[%s]", e->msg);
    brig_error_freep(&e);
    brig_fail(&e, ENOENT, "second");
    sec_out(fd, "[%s] same=%d", e->msg, e == first);
    brig_error_free(e);
    return 0;
}

Test(noheap, errors_are_the_static_object)
{
    struct sec_child r;
    cr_assert_eq(sec_child_run(errors_child, NULL, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "%s", r.out);
    cr_expect_str_eq(r.out, "[ctx: first: Unknown error 4242][second: No such file or directory] same=1");
}

static int alloc_child(void *arg, int fd)
{
    (void)arg;
    (void)fd;
    brig_noheap_set(true);
    char *s = brig_strdup("x");
    return s != NULL ? 0 : 1;
}

Test(noheap, an_allocation_helper_ends_the_process)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    int saved = dup(2);
    dup2(p[1], 2);
    struct sec_child r;
    int rc = sec_child_run(alloc_child, NULL, &r);
    dup2(saved, 2);
    close(saved);
    close(p[1]);
    char buf[512] = "";
    ssize_t n = read(p[0], buf, sizeof(buf) - 1);
    close(p[0]);
    if (n > 0) buf[n] = '\0';
    cr_assert_eq(rc, 0);
    cr_expect_eq(sec_exit_code(&r), 127);
    cr_expect(strstr(buf, "brig: BUG: brig_strdup called where the heap is off limits") != NULL, "%s", buf);
}

/* An error nobody is given (err NULL) is made only to be logged: under
 * --debug its line is written, with its cause; without, nothing is made
 * (a path search makes one per directory tried) and nothing written. */
Test(noheap, unreported_errors_logged_only_under_debug)
{
    for (int debug = 0; debug < 2; debug++) {
        char path[] = "/tmp/brig-unit-log-XXXXXX";
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        close(fd);
        cr_assert_eq(brig_log_init(path, BRIG_LOG_TEXT, debug), 0);
        cr_assert_eq(brig_fail(NULL, ENOENT, "open %s", "/usr/local/bin/x"), -1);
        cr_assert_eq(brig_failx(NULL, "invalid container id \"%s\"", ".roots"), -1);
        cr_assert_eq(brig_wrap(NULL, "ctx %d", 1), -1);
        char buf[1024] = "";
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f);
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        unlink(path);
        buf[n] = '\0';
        if (debug) {
            cr_expect(strstr(buf, "error (unreported): open /usr/local/bin/x: No such file or directory") != NULL, "%s", buf);
            cr_expect(strstr(buf, "error (unreported): invalid container id \".roots\"") != NULL, "%s", buf);
        } else {
            cr_expect_eq(n, 0, "without --debug nothing is written: %s", buf);
        }
    }
}
