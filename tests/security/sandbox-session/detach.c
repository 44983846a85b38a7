/* Hostile command for t-sandbox-session: exec'd into a long-lived sandbox,
 * it tries to outlive its own exec's timeout (double fork, setsid, every
 * catchable signal ignored, a heartbeat into the workspace) and to leave
 * its exec's cgroup (writing its pid into every cgroup.procs it can reach,
 * mounting a cgroup filesystem, also from a new user namespace). Writes
 * one line per attempt to /workspace/attempts: "MOVED ..." or "MOUNTED
 * ..." mark a success. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static FILE *out;

static void try_procs(const char *dir, int depth)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
    int fd = open(path, O_WRONLY);
    if (fd >= 0 && dprintf(fd, "%d\n", (int)getpid()) > 0) fprintf(out, "MOVED %s\n", path);
    else fprintf(out, "refused %s\n", path);
    if (fd >= 0) close(fd);
    DIR *d = depth > 0 ? opendir(dir) : NULL;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        try_procs(path, depth - 1);
    }
    if (d) closedir(d);
}

static void try_mount(const char *tag)
{
    mkdir("/tmp/cg2", 0755);
    mkdir("/tmp/cg1", 0755);
    if (mount("none", "/tmp/cg2", "cgroup2", 0, NULL) == 0) {
        fprintf(out, "MOUNTED cgroup2 %s\n", tag);
        try_procs("/tmp/cg2", 2);
    } else {
        fprintf(out, "refused mount cgroup2 %s\n", tag);
    }
    if (mount("none", "/tmp/cg1", "cgroup", 0, "memory") == 0) {
        fprintf(out, "MOUNTED cgroup memory %s\n", tag);
        try_procs("/tmp/cg1", 2);
    } else {
        fprintf(out, "refused mount cgroup %s\n", tag);
    }
}

static void survivor(void)
{
    for (int s = 1; s < 65; s++) signal(s, SIG_IGN);
    out = fopen("/workspace/attempts", "a");
    if (out == NULL) out = stderr;
    setvbuf(out, NULL, _IOLBF, 0);
    try_procs("/sys/fs/cgroup", 3);
    try_mount("in place");
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWCGROUP) == 0) try_mount("in a new userns");
    else fprintf(out, "refused unshare\n");
    fprintf(out, "done\n");
    for (;;) {
        int fd = open("/workspace/heartbeat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) { dprintf(fd, "%ld\n", (long)time(NULL)); close(fd); }
        usleep(100000);
    }
}

int main(void)
{
    for (int s = 1; s < 65; s++) signal(s, SIG_IGN);
    if (fork() == 0) {
        setsid();
        if (fork() == 0) survivor();
        _exit(0);
    }
    printf("started\n");
    fflush(stdout);
    for (;;) pause();
}
