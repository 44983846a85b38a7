/* egress-filter-replay PID NAME...: the seccomp filter the process PID
 * runs under (the real egress proxy's, confined), taken from the kernel
 * with PTRACE_SECCOMP_GET_FILTER (the proxy stopped for that moment,
 * then let go), and run by the kernel again: for each NAME a child loads
 * that exact filter and makes that one system call. One line each:
 *   NAME killed      the filter killed it (SIGSYS)
 *   NAME errno E     the call failed with errno E (the filter's answer,
 *                    or the kernel's once the filter let it through)
 *   NAME ok          the call succeeded
 * So t-egress-confined proves what the proxy may not do (open a file for
 * writing, fork, exec, bind, listen, signal another process, trace), not
 * only that a filter is there. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif

static struct sock_fprog filter_of(pid_t pid)
{
    if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0) { perror("PTRACE_SEIZE"); exit(2); }
    if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0) { perror("PTRACE_INTERRUPT"); exit(2); }
    int st;
    if (waitpid(pid, &st, __WALL) < 0) { perror("waitpid"); exit(2); }
    long n = ptrace(PTRACE_SECCOMP_GET_FILTER, pid, 0, NULL);
    if (n <= 0) { perror("PTRACE_SECCOMP_GET_FILTER"); exit(2); }
    struct sock_filter *f = calloc((size_t)n, sizeof(*f));
    if (f == NULL || ptrace(PTRACE_SECCOMP_GET_FILTER, pid, 0, f) != n) { perror("PTRACE_SECCOMP_GET_FILTER"); exit(2); }
    /* A second filter would run too: this one alone would not be all. */
    if (ptrace(PTRACE_SECCOMP_GET_FILTER, pid, 1, NULL) >= 0) { fprintf(stderr, "more than one filter\n"); exit(2); }
    ptrace(PTRACE_DETACH, pid, 0, 0);
    return (struct sock_fprog){ .len = (unsigned short)n, .filter = f };
}

static long attempt(const char *name)
{
    struct sockaddr_in lo = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (!strcmp(name, "openat-rdonly")) return syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY);
    if (!strcmp(name, "openat-wronly")) return syscall(SYS_openat, AT_FDCWD, "/dev/null", O_WRONLY);
    if (!strcmp(name, "openat-rdwr")) return syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);
    if (!strcmp(name, "openat-creat")) return syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CREAT, 0600);
    if (!strcmp(name, "openat-trunc")) return syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_TRUNC);
    if (!strcmp(name, "openat-append")) return syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_APPEND);
    if (!strcmp(name, "openat-tmpfile")) return syscall(SYS_openat, AT_FDCWD, "/tmp", O_RDONLY | __O_TMPFILE | O_DIRECTORY);
    if (!strcmp(name, "open-wronly")) return syscall(SYS_open, "/dev/null", O_WRONLY);
    if (!strcmp(name, "creat")) return syscall(SYS_creat, "/dev/null", 0600);
    if (!strcmp(name, "openat2")) return syscall(SYS_openat2, AT_FDCWD, "/dev/null", NULL, 0);
    if (!strcmp(name, "fork")) return syscall(SYS_fork);
    if (!strcmp(name, "vfork")) return syscall(SYS_vfork);
    if (!strcmp(name, "clone-process")) return syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
    if (!strcmp(name, "clone3")) return syscall(SYS_clone3, NULL, 0);
    if (!strcmp(name, "execve")) return syscall(SYS_execve, "/nonexistent", NULL, NULL);
    if (!strcmp(name, "execveat")) return syscall(SYS_execveat, AT_FDCWD, "/nonexistent", NULL, NULL, 0);
    if (!strcmp(name, "socket-inet")) return syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
    if (!strcmp(name, "socket-unix")) return syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0);
    if (!strcmp(name, "socket-netlink")) return syscall(SYS_socket, AF_NETLINK, SOCK_RAW, 0);
    if (!strcmp(name, "bind") || !strcmp(name, "listen")) {
        /* The socket before the filter (main), the call after it. */
        return !strcmp(name, "bind") ? syscall(SYS_bind, 3, &lo, sizeof(lo)) : syscall(SYS_listen, 3, 1);
    }
    if (!strcmp(name, "kill")) return syscall(SYS_kill, getppid(), 0);
    if (!strcmp(name, "tgkill")) return syscall(SYS_tgkill, getppid(), getppid(), 0);
    if (!strcmp(name, "ptrace")) return syscall(SYS_ptrace, PTRACE_TRACEME, 0, 0, 0);
    if (!strcmp(name, "mmap-exec")) return (long)syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!strcmp(name, "mprotect-exec")) return syscall(SYS_mprotect, (void *)((unsigned long)&lo & ~4095ul), 4096, PROT_READ | PROT_EXEC);
    if (!strcmp(name, "setuid")) return syscall(SYS_setuid, 0);
    if (!strcmp(name, "unshare")) return syscall(SYS_unshare, CLONE_NEWUSER);
    if (!strcmp(name, "getpid")) return syscall(SYS_getpid);
    fprintf(stderr, "unknown call %s\n", name);
    _exit(3);
}

int main(int argc, char **argv)
{
    if (argc < 3) { fprintf(stderr, "usage: egress-filter-replay PID NAME...\n"); return 2; }
    struct sock_fprog prog = filter_of(atoi(argv[1]));
    for (int i = 2; i < argc; i++) {
        int out[2];
        if (pipe(out) < 0) return 2;
        fflush(stdout);
        pid_t c = fork();
        if (c == 0) {
            close(out[0]);
            struct rlimit none = { 0, 0 };
            setrlimit(RLIMIT_CORE, &none);      /* SIGSYS dumps core: not here */
            int s = socket(AF_INET, SOCK_STREAM, 0);
            if (s != 3) { dup2(s, 3); close(s); }
            if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                _exit(4);
            long r = attempt(argv[i]);
            if (r == 0 && (!strcmp(argv[i], "fork") || !strcmp(argv[i], "vfork") || !strcmp(argv[i], "clone-process")))
                _exit(0);       /* the forked copy: only the parent reports */
            char line[64];
            int n = r < 0 && r > -4096 ? snprintf(line, sizeof(line), "errno %s", strerrorname_np(errno))
                                       : snprintf(line, sizeof(line), "ok");
            (void)!write(out[1], line, (size_t)n);
            _exit(0);
        }
        close(out[1]);
        char buf[64] = "";
        ssize_t n = read(out[0], buf, sizeof(buf) - 1);
        close(out[0]);
        int st;
        waitpid(c, &st, 0);
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS) printf("%s killed\n", argv[i]);
        else if (WIFEXITED(st) && WEXITSTATUS(st) == 4) { fprintf(stderr, "cannot load the filter\n"); return 2; }
        else printf("%s %s\n", argv[i], n > 0 ? buf : "?");
    }
    return 0;
}
