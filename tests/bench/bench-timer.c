/* bench-timer: run one command and report how long it took from fork to
 * reap, its peak RSS and its exit status, as one line on stdout:
 *     <nanoseconds> <maxrss_kb> <status>
 * The command's stdin is /dev/null, its stdout goes to /dev/null and its
 * stderr to the file given with -e (so a failure can be shown), so that
 * the caller's pipes never hold a container open.
 * ru_maxrss from wait4 is the largest resident set of the command and of
 * every descendant it reaped (the container's init included). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *errfile = "/dev/null";
    int opt;
    while ((opt = getopt(argc, argv, "+e:")) != -1) {
        if (opt != 'e') {
            fprintf(stderr, "usage: bench-timer [-e STDERR_FILE] CMD [ARG...]\n");
            return 2;
        }
        errfile = optarg;
    }
    if (optind >= argc) {
        fprintf(stderr, "usage: bench-timer [-e STDERR_FILE] CMD [ARG...]\n");
        return 2;
    }
    /* Opened before the clock starts: only the command is timed. */
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = open("/dev/null", O_WRONLY | O_CLOEXEC);
    int errfd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (in < 0 || out < 0 || errfd < 0) {
        fprintf(stderr, "bench-timer: open: %s\n", strerror(errno));
        return 2;
    }
    fflush(stdout);
    long long t0 = now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "bench-timer: fork: %s\n", strerror(errno));
        return 2;
    }
    if (pid == 0) {
        if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(errfd, 2) < 0) _exit(126);
        execvp(argv[optind], argv + optind);
        dprintf(2, "bench-timer: exec %s: %s\n", argv[optind], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "bench-timer: wait4: %s\n", strerror(errno));
            return 2;
        }
    }
    long long t1 = now_ns();
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    printf("%lld %ld %d\n", t1 - t0, ru.ru_maxrss, code);
    return 0;
}
