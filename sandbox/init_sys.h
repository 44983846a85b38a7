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
#include "../runtime/util/raw_syscall.h"
#if !RAW_SYSCALL_NATIVE
#error "INIT_SYS_FREESTANDING: only x86_64 and aarch64 have a raw system call here (sandbox/meson.build)"
#endif
static inline long sys_call6(long n, long a, long b, long c, long d, long e, long f)
{
    return raw_syscall6(n, a, b, c, d, e, f);
}
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
static inline long sys_fcntl(int fd, int cmd, long arg) { return SYS3(__NR_fcntl, fd, cmd, arg); }
/* send(2) as glibc makes it: sendto without an address. */
static inline long sys_send(int fd, const void *buf, size_t n, int flags)
{
    return sys_call6(__NR_sendto, fd, (long)buf, (long)n, flags, 0, 0);
}
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

/* As glibc's _exit: exit_group, then exit (a seccomp filter may answer
 * either with an errno), then a trap the kernel ends the process on; never
 * a loop that spins. */
static inline __attribute__((noreturn)) void sys_exit(int status)
{
    SYS3(__NR_exit_group, status, 0, 0);
    SYS3(__NR_exit, status, 0, 0);
    for (;;) __builtin_trap();
}

/* sys_spawn(fn, arg): a child process that runs fn(arg), which is to execve,
 * and exits with what fn returns if it does not. Returns the child's pid,
 * or -errno.
 *
 * Freestanding it is glibc's posix_spawn's clone: CLONE_VM | CLONE_VFORK.
 * No copy of this process's memory is made for the child to throw away at
 * its execve (on a PVM guest an mm costs more than all the rest of a
 * fork), and this process sleeps until the child's execve has succeeded or
 * it has exited. The child runs in this memory on a stack of its own: the
 * part of ours below the caller's frames, which nothing live is in. fn must
 * only make system calls and write to its own stack: no handler could run
 * in it (brig-init installs none) and nothing of ours is left changed. */
#if INIT_SYS_FREESTANDING
long sys_spawn(int (*fn)(void *), void *arg);
#if defined(__x86_64__)
/* fn and arg are put on the child's stack: after the clone the child has
 * only its registers and that stack. 0x4111: CLONE_VM | CLONE_VFORK | SIGCHLD. */
__asm__(".text\n"
        ".type sys_spawn, @function\n"
        "sys_spawn:\n"
        "    lea -256(%rsp), %rdx\n"           /* past our red zone */
        "    and $-16, %rdx\n"
        "    mov %rdi, 0(%rdx)\n"
        "    mov %rsi, 8(%rdx)\n"
        "    mov %rdx, %rsi\n"                 /* the child's stack */
        "    mov $0x4111, %edi\n"
        "    xor %edx, %edx\n"
        "    xor %r10d, %r10d\n"
        "    xor %r8d, %r8d\n"
        "    mov $56, %eax\n"                  /* __NR_clone */
        "    syscall\n"
        "    test %rax, %rax\n"
        "    jz 1f\n"
        "    ret\n"
        "1:  xor %ebp, %ebp\n"
        "    pop %rax\n"
        "    pop %rdi\n"
        "    call *%rax\n"
        "    mov %eax, %edi\n"
        "    mov $231, %eax\n"                 /* __NR_exit_group */
        "    syscall\n"
        "    hlt\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".type sys_spawn, %function\n"
        "sys_spawn:\n"
        "    mov x2, sp\n"
        "    sub x2, x2, #256\n"
        "    and x2, x2, #-16\n"
        "    stp x0, x1, [x2, #-16]!\n"
        "    mov x1, x2\n"                     /* the child's stack */
        "    mov x0, #0x4111\n"
        "    mov x2, xzr\n"
        "    mov x3, xzr\n"
        "    mov x4, xzr\n"
        "    mov x8, #220\n"                   /* __NR_clone */
        "    svc #0\n"
        "    cbz x0, 1f\n"
        "    ret\n"
        "1:  ldp x9, x0, [sp], #16\n"
        "    mov x29, xzr\n"
        "    mov x30, xzr\n"
        "    blr x9\n"
        "    mov x8, #94\n"                    /* __NR_exit_group */
        "    svc #0\n"
        "    brk #0\n");
#endif
#else
/* glibc's fork: clone's arguments differ from one architecture to another,
 * and glibc keeps its own state right across it. */
static inline long sys_spawn(int (*fn)(void *), void *arg)
{
    pid_t p = fork();
    if (p == 0) sys_exit(fn(arg));
    return p < 0 ? -errno : p;
}
#endif

#endif
