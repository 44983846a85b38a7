/* The racer of t-sandbox-exec-exe.sh, run in the sandbox as its user while
 * brig execs commands next to it: for SECONDS it opens /proc/PID/exe of
 * every process it sees (O_PATH: the ptrace check, not the file's mode,
 * decides), and for each it got, reopens it through /proc/self/fd for
 * writing. It reports what it reached:
 *   HIT <pid> <errno of the write reopen>   the file is DEV:INO (brig's)
 *   HIT <pid> 0 view                        INO on another device (brig's
 *                                           read-only view) reopened for writing
 *   SCANS <n> OPENED <n> TRAMPOLINE <n> HITS <n> TWRITABLE <n> VIEWS <n>
 * TRAMPOLINE counts exes that were TDEV:TINO (brig-init): proof that it
 * caught execs mid-flight; TWRITABLE, those it could reopen for writing.
 * Usage: racer SECONDS DEV INO TDEV TINO */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 6) return 2;
    double secs = atof(argv[1]);
    unsigned long long dev = strtoull(argv[2], NULL, 10), ino = strtoull(argv[3], NULL, 10);
    unsigned long long tdev = strtoull(argv[4], NULL, 10), tino = strtoull(argv[5], NULL, 10);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long scans = 0, opened = 0, tramp = 0, hits = 0, twritable = 0, views = 0;
    pid_t self = getpid();
    do {
        DIR *d = opendir("/proc");
        if (d == NULL) return 3;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            int pid = atoi(e->d_name);
            if (pid <= 1 || pid == self) continue;
            char path[64];
            snprintf(path, sizeof(path), "/proc/%d/exe", pid);
            int fd = open(path, O_PATH | O_CLOEXEC);
            if (fd < 0) continue;
            opened++;
            struct stat st;
            snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
            if (fstat(fd, &st) == 0) {
                if ((unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino) {
                    int w = open(path, O_WRONLY | O_CLOEXEC);
                    printf("HIT %d %d\n", pid, w < 0 ? errno : 0);
                    fflush(stdout);
                    if (w >= 0) close(w);
                    hits++;
                } else if ((unsigned long long)st.st_ino == ino) {
                    /* brig's read-only view (runtime/linux/exe_seal.c): its own device */
                    views++;
                    int w = open(path, O_WRONLY | O_CLOEXEC);
                    if (w >= 0) {
                        printf("HIT %d 0 view\n", pid);
                        fflush(stdout);
                        close(w);
                        hits++;
                    }
                }
                if ((unsigned long long)st.st_dev == tdev && (unsigned long long)st.st_ino == tino) {
                    int w = open(path, O_WRONLY | O_CLOEXEC);
                    if (w >= 0) {
                        twritable++;
                        close(w);
                    }
                    tramp++;
                }
            }
            close(fd);
        }
        closedir(d);
        scans++;
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
    printf("SCANS %ld OPENED %ld TRAMPOLINE %ld HITS %ld TWRITABLE %ld VIEWS %ld\n", scans, opened, tramp, hits,
           twritable, views);
    return 0;
}
