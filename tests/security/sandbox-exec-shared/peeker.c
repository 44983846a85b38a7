/* The peeker of t-sandbox-exec-shared.sh, run in a sandbox as its user:
 * for SECONDS it stops every process it may signal (kill -1: its own
 * uid's, brig's exec child among them once that switched uid and before
 * its execve, while it runs in the root brig's memory), then tries to
 * reach the memory of every process of the pid namespace but itself:
 * open /proc/PID/mem for writing and for reading, process_vm_writev and
 * process_vm_readv (EPERM/ESRCH: denied; anything else means the access
 * check passed), then lets them all go on. A process it reached that is
 * brig (the binary's inode in its maps) is a hit; so is brig's maps
 * readable at all.
 *   HIT <pid> <what>                 brig's memory reached
 *   SEEN_BRIG <n> HITS <n>           (n: tries on a brig of our uid)
 * Usage: peeker SECONDS INO (the decoy brig's inode) */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static long hits;

/* brig's memory, judged by what the access reached: its maps (readable
 * only when the access check passes) listing brig's binary. Checked after
 * the try, so an mm replaced by an execve meanwhile is no hit (a mem fd
 * holds the mm of its open, which came before: brig's if this is). */
static int is_brig(int pid, const char *ino_s)
{
    char path[64], buf[16384];
    snprintf(path, sizeof(path), "/proc/%d/maps", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    return strstr(buf, ino_s) != NULL;
}

static void reached(int pid, const char *comm, const char *ino_s, const char *what)
{
    if (!is_brig(pid, ino_s)) return;
    printf("HIT %d %s (comm %.*s)\n", pid, what, (int)strcspn(comm, "\n"), comm);
    hits++;
}

static void probe(int pid, const char *comm, const char *ino_s)
{
    char path[64], byte = 0;
    reached(pid, comm, ino_s, "maps");
    snprintf(path, sizeof(path), "/proc/%d/mem", pid);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd >= 0) {
        reached(pid, comm, ino_s, "mem-rw");
        close(fd);
    }
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        reached(pid, comm, ino_s, "mem-ro");
        close(fd);
    }
    struct iovec local = { &byte, 1 }, remote = { (void *)4096, 1 };
    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) >= 0 || (errno != EPERM && errno != ESRCH))
        reached(pid, comm, ino_s, "process_vm_readv");
    if (process_vm_writev(pid, &local, 1, &remote, 1, 0) >= 0 || (errno != EPERM && errno != ESRCH))
        reached(pid, comm, ino_s, "process_vm_writev");
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    time_t end = time(NULL) + atoi(argv[1]);
    char ino_s[32];
    snprintf(ino_s, sizeof(ino_s), " %llu ", strtoull(argv[2], NULL, 10));
    long seen = 0;
    pid_t self = getpid();
    while (time(NULL) < end) {
        kill(-1, SIGSTOP);
        DIR *d = opendir("/proc");
        if (d == NULL) return 3;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            int pid = atoi(e->d_name);
            if (pid < 1 || pid == self) continue;
            char path[64], comm[32] = "";
            snprintf(path, sizeof(path), "/proc/%d/comm", pid);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0) continue;
            /* brig's child after its uid switch: ours to signal */
            if (read(fd, comm, sizeof(comm) - 1) > 0 && strcmp(comm, "brig\n") == 0 && kill(pid, 0) == 0)
                seen++;
            close(fd);
            probe(pid, comm, ino_s);
        }
        closedir(d);
        kill(-1, SIGCONT);
        usleep(200);
    }
    printf("SEEN_BRIG %ld HITS %ld\n", seen, hits);
    fflush(stdout);
    return 0;
}
