/* raw_syscall.h: a system call as the bare instruction. It returns what the
 * kernel returns (the result, or -errno) and touches no libc state: no
 * errno, no TLS, no cancellation point. For code that may not use libc:
 * brig-init without libc (sandbox/init_sys.h) and a parent whose child
 * shares its memory, errno included (linux/spawn_vm.c). Header only: brig-
 * init includes it without linking anything of libbrig.
 *
 * RAW_SYSCALL_NATIVE is 1 where it is written (x86_64, aarch64), else 0
 * and raw_syscall6 is not defined. */
#ifndef BRIG_RAW_SYSCALL_H
#define BRIG_RAW_SYSCALL_H

#if defined(__x86_64__) && !defined(__ILP32__)
#define RAW_SYSCALL_NATIVE 1
static inline long raw_syscall6(long n, long a, long b, long c, long d, long e, long f)
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
#define RAW_SYSCALL_NATIVE 1
static inline long raw_syscall6(long n, long a, long b, long c, long d, long e, long f)
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
#define RAW_SYSCALL_NATIVE 0
#endif

#endif
