/* Per-user kernel counters, from inside a sandbox or from the host.
 *   hog inotify|mqueue: take every inotify instance (or POSIX message
 *     queue) it can, print "TOOK N ERRNO", then hold them until its stdin
 *     ends (a file the host makes in a staged workspace is not seen inside:
 *     overlayfs keeps the name's lookup).
 *   probe inotify|mqueue: take one; "GOT" (exit 0) or "REFUSED ERRNO" (1).
 * A queue takes its default size (fs.mqueue.msg_default x msgsize_default)
 * of the user's RLIMIT_MSGQUEUE. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

static int take(const char *what, int i)
{
    if (strcmp(what, "inotify") == 0) return inotify_init1(IN_CLOEXEC);
    char name[64];
    snprintf(name, sizeof(name), "/brig-hog-%d-%d", (int)getpid(), i);
    int q = (int)mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, NULL);
    if (q >= 0) mq_unlink(name);        /* held by the descriptor alone */
    return q;
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    if (strcmp(argv[1], "probe") == 0) {
        if (take(argv[2], 0) >= 0) {
            printf("GOT\n");
            return 0;
        }
        printf("REFUSED %s\n", strerrorname_np(errno));
        return 1;
    }
    int n = 0;
    while (n < 100000 && take(argv[2], n) >= 0) n++;
    printf("TOOK %d %s\n", n, strerrorname_np(errno));
    fflush(stdout);
    for (;;) {
        char c;
        ssize_t r = read(0, &c, 1);
        if (r == 0 || (r < 0 && errno != EINTR)) return 0;
    }
}
