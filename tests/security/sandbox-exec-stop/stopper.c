/* The stopper of t-sandbox-exec-stop.sh, run in a sandbox as its user:
 * for SECONDS it sends SIGSTOP to every process it may signal (kill -1:
 * its own uid's), so that a `brig sandbox exec` started meanwhile has its
 * child stopped between the uid switch and the execve, while its brig
 * still waits for that execve. Each process it finds stopped it then
 * probes at leisure: /proc/PID/exe and /proc/PID/maps must never show the
 * brig binary (DEV:INO), however long brig's child stays there.
 *   HIT <pid> <what>                 brig's binary reached
 *   STOPPED_BRIG <n> HITS <n>        (n: stopped processes still named brig)
 * Usage: stopper SECONDS DEV INO */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long hits;

static void probe(int pid, unsigned long long dev, unsigned long long ino, const char *ino_s)
{
    char path[64], buf[8192];
    snprintf(path, sizeof(path), "/proc/%d/exe", pid);
    int fd = open(path, O_PATH | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && (unsigned long long)st.st_dev == dev &&
        (unsigned long long)st.st_ino == ino) {
        printf("HIT %d exe\n", pid);
        hits++;
    }
    if (fd >= 0) close(fd);
    snprintf(path, sizeof(path), "/proc/%d/maps", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (n > 0) {
        buf[n] = '\0';
        if (strstr(buf, ino_s) != NULL) {
            printf("HIT %d maps\n", pid);
            hits++;
        }
    }
    if (fd >= 0) close(fd);
}

int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    time_t end = time(NULL) + atoi(argv[1]);
    unsigned long long dev = strtoull(argv[2], NULL, 10), ino = strtoull(argv[3], NULL, 10);
    char ino_s[32];
    snprintf(ino_s, sizeof(ino_s), " %llu ", ino);
    long stopped = 0;
    pid_t self = getpid();
    while (time(NULL) < end) {
        kill(-1, SIGSTOP);
        DIR *d = opendir("/proc");
        if (d == NULL) return 3;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            int pid = atoi(e->d_name);
            if (pid <= 1 || pid == self) continue;
            char path[64], comm[32] = "";
            snprintf(path, sizeof(path), "/proc/%d/comm", pid);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0) continue;
            if (read(fd, comm, sizeof(comm) - 1) > 0 && strcmp(comm, "brig\n") == 0) stopped++;
            close(fd);
            probe(pid, dev, ino, ino_s);
        }
        closedir(d);
    }
    printf("STOPPED_BRIG %ld HITS %ld\n", stopped, hits);
    fflush(stdout);
    return 0;
}
