/* catcher SECS MARK: run on the host as the sandbox's uid. brig-init starts the
 * command with clone(CLONE_VM | CLONE_VFORK): until its execve the child
 * runs in PID 1's own memory. Catch that child (a brig-init whose parent
 * is a brig-init), SIGSTOP it (kill(2) allows the same uid) and try to
 * reach that shared memory through it: /proc/PID/mem, /proc/PID/maps,
 * process_vm_readv. Prints "stopped PID" per catch and "EXPOSED what PID"
 * for anything that opened; the child is left stopped (PID 1 waits for it
 * in its clone: brig's limits must still end the run). Only a child whose
 * command line (brig-init's, until its execve) holds MARK: the test's own
 * sandboxes, never another run's on the same host (whose command it would
 * hold stopped until that run's timeout).
 * catcher probe PID: the same probes of one process (the test's control). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* The comm and ppid of PID from /proc/PID/stat; -1 if gone. */
static int stat_of(int pid, char comm[64], int *ppid, char *state)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return -1;
    char *ok = fgets(buf, sizeof buf, f);
    fclose(f);
    char *l = ok ? strchr(buf, '(') : NULL, *r = ok ? strrchr(buf, ')') : NULL;
    if (l == NULL || r == NULL) return -1;
    *r = '\0';
    snprintf(comm, 64, "%s", l + 1);
    return sscanf(r + 2, "%c %d", state, ppid) == 2 ? 0 : -1;
}

/* PID's command line (NUL-separated arguments) holds mark as one argument. */
static int cmdline_has(int pid, const char *mark)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    for (char *a = buf; a < buf + n; a += strlen(a) + 1)
        if (strcmp(a, mark) == 0) return 1;
    return 0;
}

static void probe(int pid)
{
    char path[64], buf[64];
    snprintf(path, sizeof path, "/proc/%d/mem", pid);
    int fd = open(path, O_RDONLY);
    if (fd >= 0) { printf("EXPOSED mem %d\n", pid); close(fd); }
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    fd = open(path, O_RDONLY);
    if (fd >= 0 && read(fd, buf, sizeof buf) > 0) printf("EXPOSED maps %d\n", pid);
    if (fd >= 0) close(fd);
    /* brig-init's text and its stack: the init's memory, shared */
    struct iovec l = { buf, sizeof buf }, r = { (void *)0x400000, sizeof buf };
    if (process_vm_readv(pid, &l, 1, &r, 1, 0) > 0) printf("EXPOSED process_vm_readv %d\n", pid);
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "probe") == 0) {  /* the control: any process of ours */
        probe(atoi(argv[2]));
        return 0;
    }
    time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 5);
    const char *mark = argc > 2 ? argv[2] : NULL;
    if (mark == NULL) {
        fprintf(stderr, "usage: catcher SECS MARK | catcher probe PID\n");
        return 2;
    }
    while (time(NULL) < end) {
        DIR *d = opendir("/proc");
        if (d == NULL) return 2;
        for (struct dirent *e; (e = readdir(d)) != NULL;) {
            int pid = atoi(e->d_name), ppid, pp;
            char comm[64], pcomm[64], st, pst;
            if (pid <= 0 || stat_of(pid, comm, &ppid, &st) < 0 || strstr(comm, "brig-init") == NULL) continue;
            if (stat_of(ppid, pcomm, &pp, &pst) < 0 || strstr(pcomm, "brig-init") == NULL) continue;
            if (!cmdline_has(pid, mark)) continue;
            if (kill(pid, SIGSTOP) != 0) continue;
            /* stopped only at its return to user space: an execve under
             * way completes first, and then it is the command (ours) */
            for (int i = 0; i < 1000 && stat_of(pid, comm, &ppid, &st) == 0 && st != 'T'; i++) usleep(100);
            if (stat_of(pid, comm, &ppid, &st) < 0 || st != 'T' || strstr(comm, "brig-init") == NULL) {
                kill(pid, SIGCONT);
                continue;
            }
            printf("stopped %d\n", pid);
            probe(pid);
            fflush(stdout);
        }
        closedir(d);
    }
    return 0;
}
