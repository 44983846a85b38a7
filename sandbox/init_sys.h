/* init_sys.h: the system calls of brig-init (brig-init.c), without libc.
 *
 * brig-init is PID 1 of every `brig sandbox run`: static glibc's start-up
 * alone (cpuid traps, IRELATIVE relocations, TLS) cost it ~1-1.5 ms and
 * ~30 page faults on a PVM guest, more than all its own work. With
 * INIT_SYS_FREESTANDING (sandbox/meson.build: x86_64 and aarch64, linked
 * -nostdlib with brig-init's own _start) each call below is the raw
 * instruction; elsewhere the same names go through glibc's syscall(2), so
 * the init itself is written once.
 *
 * Every call returns what the kernel returns: the result, or -errno (there
 * is no errno: no TLS to keep it in). Headers are read for constants and
 * structure layouts only; no libc function is linked in. */
#ifndef BRIG_INIT_SYS_H
#define BRIG_INIT_SYS_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#if INIT_SYS_FREESTANDING
#if defined(__x86_64__) && !defined(__ILP32__)
static inline long sys_call6(long n, long a, long b, long c, long d, long e, long f)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long r;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return r;
}
#elif defined(__aarch64__)
static inline long sys_call6(long n, long a, long b, long c, long d, long e, long f)
{
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc #0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
}
#else
#error "INIT_SYS_FREESTANDING: only x86_64 and aarch64 have a raw system call here (sandbox/meson.build)"
#endif
#else
#include <unistd.h>
static inline long sys_call6(long n, long a, long b, long c, long d, long e, long f)
{
    long r = syscall(n, a, b, c, d, e, f);
    return r < 0 ? -errno : r;
}
#endif

#define SYS3(n, a, b, c) sys_call6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)

/* The kernel's sigset: a bit for each of signals 1.._NSIG-1 (8 bytes but on
 * MIPS), not libc's sigset_t (128 bytes in glibc). */
#define SYS_SIGSET_BYTES ((_NSIG - 1 + 7) / 8)
typedef struct {
    unsigned char bits[SYS_SIGSET_BYTES];
} sys_sigset;

static inline void sys_sigfill(sys_sigset *s)
{
    for (size_t i = 0; i < sizeof(s->bits); i++) s->bits[i] = 0xff;
}

static inline long sys_sigprocmask(int how, const sys_sigset *set, sys_sigset *old)
{
    return sys_call6(__NR_rt_sigprocmask, how, (long)set, (long)old, SYS_SIGSET_BYTES, 0, 0);
}

/* sigwaitinfo: no timeout. */
static inline long sys_sigwaitinfo(const sys_sigset *set, siginfo_t *si)
{
    return sys_call6(__NR_rt_sigtimedwait, (long)set, (long)si, 0, SYS_SIGSET_BYTES, 0, 0);
}

static inline long sys_write(int fd, const void *buf, size_t n) { return SYS3(__NR_write, fd, buf, n); }
static inline long sys_execve(const char *path, char *const argv[], char *const envp[])
{
    return SYS3(__NR_execve, path, argv, envp);
}
static inline long sys_chdir(const char *path) { return SYS3(__NR_chdir, path, 0, 0); }
static inline long sys_setsid(void) { return SYS3(__NR_setsid, 0, 0, 0); }
static inline long sys_getsid(pid_t pid) { return SYS3(__NR_getsid, pid, 0, 0); }
static inline long sys_getpid(void) { return SYS3(__NR_getpid, 0, 0, 0); }
static inline long sys_setpgid(pid_t pid, pid_t pgid) { return SYS3(__NR_setpgid, pid, pgid, 0); }
static inline long sys_prctl(int option, unsigned long arg) { return SYS3(__NR_prctl, option, arg, 0); }
static inline long sys_kill(pid_t pid, int sig) { return SYS3(__NR_kill, pid, sig, 0); }
static inline long sys_waitpid(pid_t pid, int *status, int options)
{
    return sys_call6(__NR_wait4, pid, (long)status, options, 0, 0, 0);
}

/* isatty(3): the tty ioctl libc's tcgetattr makes. The buffer is larger
 * than any kernel struct termios (36 bytes on x86_64 and aarch64). */
static inline bool sys_isatty(int fd)
{
    long t[16];
    return SYS3(__NR_ioctl, fd, TCGETS, t) == 0;
}

static inline long sys_tcsetpgrp(int fd, pid_t pgrp) { return SYS3(__NR_ioctl, fd, TIOCSPGRP, &pgrp); }

static inline __attribute__((noreturn)) void sys_exit(int status)
{
    for (;;) SYS3(__NR_exit_group, status, 0, 0);
}

#if INIT_SYS_FREESTANDING
/* fork(2) as glibc makes it on these two: a clone that only asks for
 * SIGCHLD at the exit (the argument order past flags differs between them,
 * but all are 0). The child goes on with a copy of the same stack. */
static inline long sys_fork(void) { return sys_call6(__NR_clone, SIGCHLD, 0, 0, 0, 0, 0); }
#else
/* glibc's own: clone's arguments differ from one architecture to another,
 * and glibc keeps its state right across it. */
static inline long sys_fork(void)
{
    pid_t p = fork();
    return p < 0 ? -errno : p;
}
#endif

#endif
