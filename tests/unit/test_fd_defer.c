/* util/fd_defer: autoclose_path closes at once until brig_fd_defer_start(),
 * then waits for brig_fd_defer_flush(); bounded by a list and the fd limit.
 * Criterion runs each test in its own process, so the global state of one
 * test never reaches another. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "util/fd_defer.h"

static bool fd_open(int fd)
{
    return fcntl(fd, F_GETFD) >= 0;
}

/* Opens an O_PATH fd and lets it go out of scope; returns its number. */
static int scoped_path_fd(void)
{
    autoclose_path int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    cr_assert_geq(fd, 0);
    return fd;
}

Test(fd_defer, closes_at_once_when_not_started)
{
    int fd = scoped_path_fd();
    cr_assert_not(fd_open(fd), "fd %d still open without brig_fd_defer_start", fd);
}

Test(fd_defer, waits_for_the_flush_then_closes_all)
{
    brig_fd_defer_start();
    int fds[10];
    for (int i = 0; i < 10; i++) fds[i] = scoped_path_fd();
    for (int i = 0; i < 10; i++) {
        cr_assert(fd_open(fds[i]), "fd %d closed before the flush", fds[i]);
        for (int j = 0; j < i; j++) cr_assert_neq(fds[i], fds[j], "an fd number was reused");
    }
    /* a non-adjacent one in the middle: runs are closed, nothing else */
    int keep = open("/", O_PATH | O_CLOEXEC);
    int after = scoped_path_fd();
    brig_fd_defer_flush();
    for (int i = 0; i < 10; i++) cr_assert_not(fd_open(fds[i]), "fd %d left open", fds[i]);
    cr_assert_not(fd_open(after));
    cr_assert(fd_open(keep), "an fd that was not deferred was closed");
    close(keep);
}

Test(fd_defer, bounded_by_its_list)
{
    int base = scoped_path_fd();    /* the lowest free fd */
    brig_fd_defer_start();
    int last = -1;
    for (int i = 0; i < 200; i++) last = scoped_path_fd();
    /* at most 64 wait: the numbers stay low and the 200th was closed */
    /* (+16: fds the test runner holds above the lowest free one) */
    cr_assert_leq(last, base + 64 + 16, "deferred fds grew to %d (from %d)", last, base);
    cr_assert_not(fd_open(last));
    brig_fd_defer_flush();
}

Test(fd_defer, nothing_deferred_under_a_low_fd_limit)
{
    struct rlimit rl = { .rlim_cur = 64, .rlim_max = 64 };
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
    brig_fd_defer_start();
    int fd = scoped_path_fd();
    cr_assert_not(fd_open(fd), "fd %d deferred although the limit is 64", fd);
}
