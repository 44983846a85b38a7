/* Every way a sandboxed process could leave a set-user-ID or set-group-ID
 * file (or a file capability) in DIR, its workspace: each route on a file
 * of its own, reported as "ROUTE allowed" (the bit or attribute is there
 * afterwards), "ROUTE refused ERRNO" or "ROUTE killed SIG". The controls
 * (plain modes, user.* attributes) must be allowed. Static, no libc
 * wrapper needed for the newer calls; the i386 call goes through int 0x80
 * with its path in the binary's low data. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static char dir[256];
static char low_path[512];          /* below 4 GiB in a static non-PIE binary */

static const char *at(const char *name)
{
    static char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return p;
}

static void fresh(const char *name)
{
    unlink(at(name));
    int fd = open(at(name), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd >= 0) close(fd);
}

/* allowed when the file now has one of the bits (or the call succeeded,
 * for want) */
static void report(const char *route, const char *name, long rc, int e, mode_t want)
{
    struct stat st;
    bool has = stat(at(name), &st) == 0 && (st.st_mode & want) != 0;
    if (has || (rc >= 0 && want == 0)) printf("%s allowed\n", route);
    else printf("%s refused %s\n", route, rc < 0 ? strerrorname_np(e) : "(no bit)");
    fflush(stdout);
}

/* A route that may be killed by a filter: in a child. */
static void in_child(const char *route, const char *name, void (*fn)(const char *), mode_t want)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        fn(at(name));
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) {
        printf("%s killed %d\n", route, WTERMSIG(st));
        return;
    }
    report(route, name, 0, 0, want);
}

#if defined(__x86_64__)
static void chmod_i386(const char *p)
{
    snprintf(low_path, sizeof(low_path), "%s", p);
    long ret;
    __asm__ volatile("int $0x80" : "=a"(ret) : "a"(15L), "b"((long)low_path), "c"(04755L) : "memory");
    (void)ret;
}
static void chmod_x32(const char *p)
{
    syscall(0x40000000L | 90, p, 04755);
}
#endif

static void xattr_route(const char *route, const char *name, const char *attr)
{
    /* VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE, CAP_SETUID permitted */
    unsigned int cap[5] = { 0x02000001, 1u << 7, 0, 0, 0 };
    fresh(name);
    int rc = setxattr(at(name), attr, cap, sizeof(cap), 0);
    int e = errno;
    char buf[64];
    bool there = getxattr(at(name), attr, buf, sizeof(buf)) >= 0;
    if (rc == 0 || there) printf("%s allowed\n", route);
    else printf("%s refused %s\n", route, strerrorname_np(e));
    fflush(stdout);
}

/* The set-id file the host left in the workspace (the test puts one
 * there, the workspace owner's, so the command's to write): rewritten
 * through a shared mapping, for which the kernel does not clear the bits
 * (a write() would). */
static void rewrite_mapped(const char *name)
{
    int fd = open(at(name), O_RDWR);
    struct stat st;
    void *p = MAP_FAILED;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size >= 9)
        p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        printf("mapped-rewrite refused %s\n", strerrorname_np(errno));
    } else {
        memcpy(p, "REWRITTEN", 9);
        msync(p, (size_t)st.st_size, MS_SYNC);
        munmap(p, (size_t)st.st_size);
        printf("mapped-rewrite done\n");
    }
    if (fd >= 0) close(fd);
    struct statfs sf;
    printf("workspace-fs %s\n", statfs(dir, &sf) == 0 && sf.f_type == 0x794c7630 ? "overlay" : "other");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    snprintf(dir, sizeof(dir), "%s", argv[1]);
    long rc;
    int fd;
#define TRYR(route, name, call, want) do { errno = 0; rc = (call); report(route, name, rc, errno, want); } while (0)
    fresh("c-plain");
    TRYR("control-chmod-0755", "c-plain", chmod(at("c-plain"), 0755), 0);
    unlink(at("c-create"));
    TRYR("control-open-0644", "c-create", open(at("c-create"), O_CREAT | O_WRONLY, 0644), 0);
    fresh("c-xattr");
    TRYR("control-user-xattr", "c-xattr", setxattr(at("c-xattr"), "user.brig", "x", 1, 0), 0);

    fresh("chmod-u"); TRYR("chmod-u+s", "chmod-u", chmod(at("chmod-u"), 04755), S_ISUID);
    fresh("chmod-g"); TRYR("chmod-g+s", "chmod-g", chmod(at("chmod-g"), 02755), S_ISGID);
    fresh("fchmod");
    fd = open(at("fchmod"), O_RDONLY);
    TRYR("fchmod", "fchmod", fchmod(fd, 06755), S_ISUID | S_ISGID);
    close(fd);
    fresh("fchmodat");
    TRYR("fchmodat", "fchmodat", syscall(SYS_fchmodat, AT_FDCWD, at("fchmodat"), 04755), S_ISUID);
    fresh("fchmodat2");
    TRYR("fchmodat2", "fchmodat2", syscall(452, AT_FDCWD, at("fchmodat2"), 04755, 0), S_ISUID);
    unlink(at("open"));
    TRYR("open-creat", "open", syscall(SYS_open, at("open"), O_CREAT | O_WRONLY, 04755), S_ISUID);
    unlink(at("openat"));
    TRYR("openat-creat", "openat", syscall(SYS_openat, AT_FDCWD, at("openat"), O_CREAT | O_WRONLY, 02755), S_ISGID);
    unlink(at("creat"));
    TRYR("creat", "creat", syscall(SYS_creat, at("creat"), 04755), S_ISUID);
    unlink(at("mknod"));
    TRYR("mknod", "mknod", syscall(SYS_mknod, at("mknod"), S_IFREG | 04755, 0), S_ISUID);
    unlink(at("mknodat"));
    TRYR("mknodat", "mknodat", syscall(SYS_mknodat, AT_FDCWD, at("mknodat"), S_IFREG | 02755, 0), S_ISGID);
    unlink(at("openat2"));
    struct open_how how = { .flags = O_CREAT | O_WRONLY, .mode = 04755 };
    TRYR("openat2", "openat2", syscall(SYS_openat2, AT_FDCWD, at("openat2"), &how, sizeof(how)), S_ISUID);
    /* io_uring: IORING_OP_OPENAT takes a mode without a system call */
    char params[120] = { 0 };
    errno = 0;
    rc = syscall(SYS_io_uring_setup, 1, params);
    printf("io_uring_setup %s\n", rc >= 0 ? "allowed" : "refused");
    if (rc >= 0) printf("io_uring_setup-errno none\n");
    else printf("io_uring_setup-errno %s\n", strerrorname_np(errno));
#if defined(__x86_64__)
    fresh("i386"); in_child("chmod-i386", "i386", chmod_i386, S_ISUID);
    fresh("x32"); in_child("chmod-x32", "x32", chmod_x32, S_ISUID);
#endif
    xattr_route("xattr-security.capability", "x-cap", "security.capability");
    xattr_route("xattr-security.other", "x-sec", "security.brig");
    xattr_route("xattr-trusted", "x-trusted", "trusted.brig");
    rewrite_mapped("host-setid");
    printf("DONE\n");
    return 0;
}
