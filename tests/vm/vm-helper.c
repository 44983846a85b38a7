/* vm-helper: tiny static workloads for the cgroup v2 smoke tests run in the test VM.
 * busybox cannot really allocate memory or count fork failures, so these do it precisely.
 *
 *   vm-helper alloc MIB   allocate MIB MiB and touch every page; exit 0 when all resident
 *                         (a memory.max below MIB should get this process OOM-killed)
 *   vm-helper fork N      fork N children that wait; print "forked=X failed=Y"; kill and
 *                         reap them; exit 0 if all N forked, 3 if some fork failed with
 *                         EAGAIN (pids.max), 2 on any other error
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int parse_count(const char *s, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 1 || v > max)
        return -1;
    *out = v;
    return 0;
}

static int helper_alloc(long mib)
{
    size_t len = (size_t)mib << 20;
    long page = sysconf(_SC_PAGESIZE);
    /* mmap, not malloc: the pages are only charged to the cgroup once written. */
    unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "vm-helper: mmap %ld MiB: %s\n", mib, strerror(errno));
        return 2;
    }
    for (size_t off = 0; off < len; off += (size_t)page)
        p[off] = 1;
    printf("touched %ld MiB\n", mib);
    return 0;
}

static int helper_fork(long n)
{
    pid_t *kids = calloc((size_t)n, sizeof(*kids));
    long forked = 0, failed = 0;
    int other = 0;

    if (kids == NULL) {
        perror("vm-helper: calloc");
        return 2;
    }
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            pause();
            _exit(0);
        }
        if (pid < 0) {
            if (errno != EAGAIN) {
                fprintf(stderr, "vm-helper: fork: %s\n", strerror(errno));
                other = 1;
            }
            failed++;
            continue;
        }
        kids[forked++] = pid;
    }
    printf("forked=%ld failed=%ld\n", forked, failed);
    fflush(stdout);
    for (long i = 0; i < forked; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    free(kids);
    if (other)
        return 2;
    return failed ? 3 : 0;
}

int main(int argc, char **argv)
{
    long n;

    if (argc == 3 && strcmp(argv[1], "alloc") == 0 && parse_count(argv[2], 1L << 20, &n) == 0)
        return helper_alloc(n);
    if (argc == 3 && strcmp(argv[1], "fork") == 0 && parse_count(argv[2], 4096, &n) == 0)
        return helper_fork(n);
    fprintf(stderr, "usage: vm-helper alloc MIB | vm-helper fork N\n");
    return 2;
}
