/* bench-floor: the least a container start can cost on this machine, the
 * floor the runtimes are compared against. It clones into new mount, pid,
 * network, ipc and uts namespaces, makes the root filesystem private,
 * pivots into ROOTFS and execs the command; the parent waits and returns
 * its exit status. No cgroup, no /proc, no security settings: a
 * lower bound, not a container.
 *     bench-floor ROOTFS CMD [ARG...] */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int die(const char *what)
{
    dprintf(2, "bench-floor: %s: %s\n", what, strerror(errno));
    return 127;
}

static int child(const char *rootfs, char **argv)
{
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) return die("make / private");
    if (mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0) return die("bind rootfs");
    if (chdir(rootfs) < 0) return die("chdir rootfs");
    if (syscall(SYS_pivot_root, ".", ".") < 0) return die("pivot_root");
    if (umount2(".", MNT_DETACH) < 0) return die("umount old root");
    if (chdir("/") < 0) return die("chdir /");
    char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
    execve(argv[0], argv, envp);
    return die("execve");
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench-floor ROOTFS CMD [ARG...]\n");
        return 2;
    }
    pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
                                          CLONE_NEWUTS | SIGCHLD, 0, 0, 0, 0);
    if (pid < 0) return die("clone");
    if (pid == 0) _exit(child(argv[1], argv + 2));
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return die("waitpid");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
