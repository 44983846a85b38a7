/* Run inside a sandbox by t-egress-cred-escape: looks for a credential in
 * every process it can see, the way an agent would: each /proc/PID's
 * environ, cmdline and readable memory (/proc/PID/mem by /proc/PID/maps),
 * and a ptrace attach (PTRACE_SEIZE: it stops nothing). Searches for MARK
 * (the key's fixed beginning, compiled in: this program's own memory has
 * it, so its own pid is left out). Prints one line per process and
 * "hits=N visible=COMMS". It reads every process it can see: it runs only
 * with BRIG_HUNTER_IN_SANDBOX=1, which only the test's sandbox has. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#ifndef MARK
#error "build with -DMARK='\"...\"'"
#endif

static int hits_in(const char *buf, size_t n)
{
    int h = 0;
    for (const char *p = buf; (p = memmem(p, (size_t)(buf + n - p), MARK, strlen(MARK))) != NULL; p++) h++;
    return h;
}

static int scan_file(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    static char buf[1 << 20];
    ssize_t n = read(fd, buf, sizeof(buf));
    close(fd);
    return n > 0 ? hits_in(buf, (size_t)n) : 0;
}

static int scan_mem(int pid, long *bytes, int *err)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", pid);
    FILE *maps = fopen(path, "r");
    snprintf(path, sizeof(path), "/proc/%d/mem", pid);
    int mem = open(path, O_RDONLY);
    if (maps == NULL || mem < 0) {
        *err = errno;
        if (maps) fclose(maps);
        if (mem >= 0) close(mem);
        return 0;
    }
    int h = 0;
    char line[512];
    static char buf[1 << 16];
    while (fgets(line, sizeof(line), maps)) {
        unsigned long a, b;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) != 3 || perms[0] != 'r') continue;
        for (unsigned long at = a; at < b; at += sizeof(buf)) {
            size_t want = b - at < sizeof(buf) ? b - at : sizeof(buf);
            ssize_t n = pread(mem, buf, want, (off_t)at);
            if (n <= 0) break;
            *bytes += n;
            h += hits_in(buf, (size_t)n);
        }
    }
    fclose(maps);
    close(mem);
    return h;
}

int main(void)
{
    const char *guard = getenv("BRIG_HUNTER_IN_SANDBOX");
    if (guard == NULL || strcmp(guard, "1") != 0) {
        fprintf(stderr, "cred-hunter: only inside the test's sandbox (BRIG_HUNTER_IN_SANDBOX=1)\n");
        return 2;
    }
    DIR *d = opendir("/proc");
    if (d == NULL) return 1;
    int total = 0;
    char visible[4096] = "";
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        int pid = atoi(e->d_name);
        if (pid <= 0 || pid == getpid()) continue;
        char path[64], comm[64] = "?";
        snprintf(path, sizeof(path), "/proc/%d/comm", pid);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(comm, sizeof(comm), f)) comm[strcspn(comm, "\n")] = '\0';
            fclose(f);
        }
        strncat(visible, comm, sizeof(visible) - strlen(visible) - 2);
        strcat(visible, ",");
        snprintf(path, sizeof(path), "/proc/%d/environ", pid);
        int h = scan_file(path);
        snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
        h += scan_file(path);
        long bytes = 0;
        int err = 0;
        h += scan_mem(pid, &bytes, &err);
        long pt = ptrace(PTRACE_SEIZE, pid, 0, 0);     /* detached when this program exits */
        int pterr = pt < 0 ? errno : 0;
        printf("pid %d %s: mem %ld bytes%s%s, ptrace %s, hits %d\n", pid, comm, bytes, err ? " " : "",
               err ? strerror(err) : "", pterr ? strerror(pterr) : "attached", h);
        total += h;
    }
    closedir(d);
    printf("hits=%d visible=%s\n", total, visible);
    return 0;
}
