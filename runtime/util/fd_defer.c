/* Batched closes of O_PATH-like fds in the container's init (fd_defer.h). */
#include "fd_defer.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cleanup.h"

/* A bounded list: the init's busiest phase defers ~40 fds. */
#define DEFER_MAX 64

static int deferred[DEFER_MAX];
static size_t n_deferred;
static bool deferring;
/* Only fds well below RLIMIT_NOFILE wait, so deferring can never make an
 * open fail with EMFILE. */
static int defer_below;

void brig_fd_defer_start(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur < 2 * DEFER_MAX) return;
    defer_below = rl.rlim_cur > 4 * DEFER_MAX ? 2 * DEFER_MAX : (int)rl.rlim_cur - DEFER_MAX;
    deferring = true;
}

static int cmp_fd(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

void brig_fd_defer_flush(void)
{
    qsort(deferred, n_deferred, sizeof(deferred[0]), cmp_fd);
    brig_close_all(deferred, n_deferred);
    n_deferred = 0;
}

void brig_fd_defer_closep(int *fd)
{
    if (*fd < 0) return;
    if (deferring && *fd < defer_below && n_deferred < DEFER_MAX) {
        deferred[n_deferred++] = *fd;
    } else {
        int saved = errno;
        close(*fd);
        errno = saved;
    }
    *fd = -1;
}
