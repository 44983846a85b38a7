/* A child sharing our memory until its execve (spawn_vm.h). */
#include "spawn_vm.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/log.h"
#include "../util/raw_syscall.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

/* Room for the child's deepest path (a 64 KiB struct sync_msg on the stack
 * when it reports an error, PATH_MAX buffers, vsnprintf): only the pages
 * it touches cost anything. */
#define SPAWN_VM_STACK (512u << 10)

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

struct spawn_vm_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
        set_tid, set_tid_size, cgroup;
};

#if RAW_SYSCALL_NATIVE
long spawn_vm_sys(long nr, long a, long b, long c, long d, long e)
{
    return raw_syscall6(nr, a, b, c, d, e, 0);
}
bool spawn_vm_available(void) { return true; }
#else
long spawn_vm_sys(long nr, long a, long b, long c, long d, long e)
{
    (void)nr; (void)a; (void)b; (void)c; (void)d; (void)e;
    return -ENOSYS;
}
bool spawn_vm_available(void) { return false; }
#endif

#if defined(__x86_64__)
/* clone3 on a stack of the child's own, which glibc does not offer: the
 * child comes back from the syscall on that stack (rax 0) with our
 * registers, calls fn(arg) and never returns into our frames. -errno on
 * failure. */
#define SPAWN_VM_CLONE3 1
static long spawn_vm_clone3(struct spawn_vm_clone_args *a, int (*fn)(void *), void *arg)
{
    register long r8 __asm__("r8") = (long)fn;     /* kept across the syscall */
    register long r9 __asm__("r9") = (long)arg;
    long ret;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "xor %%ebp, %%ebp\n\t"      /* the end of the child's frame chain */
                     "mov %%r9, %%rdi\n\t"
                     "call *%%r8\n\t"
                     "mov %%eax, %%edi\n\t"      /* not reached: fn ends in execve or _exit */
                     "mov %[exit], %%eax\n\t"
                     "syscall\n\t"
                     "hlt\n\t"
                     "1:"
                     : "=a"(ret)
                     : "a"((long)SYS_clone3), "D"(a), "S"(sizeof(*a)), "r"(r8), "r"(r9),
                       [exit] "i"(SYS_exit)
                     : "rcx", "r11", "memory");
    return ret;
}
#endif

/* Born in cgroup_fd's v2 cgroup where it can be (no cgroup.procs write by
 * the child, which waits for an RCU grace period on a quiet host); else
 * glibc's clone. *cloned_into is the child's to read: set before each
 * try, it is right when the child starts. */
static pid_t spawn_vm_clone(struct spawn_vm *s, int cgroup_fd, int (*fn)(void *), void *arg,
                            bool *cloned_into)
{
    char *top = (char *)s->map + s->map_len;
#ifdef SPAWN_VM_CLONE3
    long page = sysconf(_SC_PAGESIZE);
    struct spawn_vm_clone_args a = {
        .flags = CLONE_VM, .exit_signal = SIGCHLD,
        .stack = (uint64_t)(uintptr_t)s->map + (uint64_t)page, .stack_size = s->map_len - (size_t)page,
    };
    if (cgroup_fd >= 0) {
        a.flags |= CLONE_INTO_CGROUP;
        a.cgroup = (uint64_t)cgroup_fd;
        *cloned_into = true;
        long pid = spawn_vm_clone3(&a, fn, arg);
        if (pid >= 0) return (pid_t)pid;
        brig_debug("clone3 CLONE_VM | CLONE_INTO_CGROUP: %s; falling back", strerror((int)-pid));
        a.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
        a.cgroup = 0;
    }
    *cloned_into = false;
    long pid = spawn_vm_clone3(&a, fn, arg);
    if (pid >= 0) return (pid_t)pid;
    if (pid != -ENOSYS) {
        errno = (int)-pid;
        return -1;
    }
#else
    (void)cgroup_fd;
#endif
    *cloned_into = false;
    return clone(fn, top, CLONE_VM | SIGCHLD, arg);
}

int spawn_vm_start(struct spawn_vm *s, int cgroup_fd, int (*fn)(void *), void *arg, bool *cloned_into,
                   struct brig_error **err)
{
    long page = sysconf(_SC_PAGESIZE);
    s->map_len = SPAWN_VM_STACK + (size_t)page;
    s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (s->map == MAP_FAILED) {
        s->map = NULL;
        return brig_fail(err, errno, "exec: mmap a stack for the process");
    }
    /* The lowest page a guard: an overflow faults instead of writing into
     * whatever mapping lies below, which is ours too. */
    if (mprotect(s->map, (size_t)page, PROT_NONE) < 0) {
        int e = errno;
        spawn_vm_release(s);
        return brig_fail(err, e, "exec: guard page");
    }
    /* Not CLONE_VFORK: the child may be stopped by the container's
     * processes once it has their uid, and our wait for it must stay
     * bounded (an uninterruptible vfork wait would not be). Not CLONE_FILES
     * nor CLONE_FS nor CLONE_SIGHAND: its fds, cwd, root and signal
     * dispositions are its own, as a fork's. */
    s->pid = spawn_vm_clone(s, cgroup_fd, fn, arg, cloned_into);
    if (s->pid < 0) {
        int e = errno;
        spawn_vm_release(s);
        return brig_fail(err, e, "exec: clone");
    }
    return 0;
}

/* The child is out of our memory when its end of sync_fd closes: execve
 * switches to the new mm (exec_mmap, called by begin_new_exec in
 * fs/exec.c) before it closes close-on-exec fds (do_close_on_exec, later
 * in begin_new_exec), and do_exit (kernel/exit.c) leaves the mm (exit_mm)
 * before it closes the files (exit_files). The child shares no fd table
 * with anyone (no CLONE_FILES): its end is closed by nothing else. */
enum spawn_vm_end spawn_vm_wait_gone(const struct spawn_vm *s, int sync_fd, struct sync_msg *m,
                                     int *recv_errno)
{
    enum spawn_vm_end end = SPAWN_VM_EXECED;
    bool killed = false;
    for (;;) {
        long r = spawn_vm_sys(SYS_recvfrom, sync_fd, (long)m, (long)sizeof(*m), 0, 0);
        if (r == 0) return end;
        if (r == -EINTR) continue;
        if (r < 0) {
            /* A timeout (SO_RCVTIMEO) or a failed receive: it must not run
             * on in our memory while we go back to the heap. Then wait for
             * the EOF without a timeout: SIGKILL cannot be ignored. */
            if (killed) {
                /* Cannot read the socket at all: wait for the process. */
                siginfo_t si;
                spawn_vm_sys(SYS_waitid, P_PID, s->pid, (long)&si, WEXITED | WNOWAIT, 0);
                return end;
            }
            end = r == -EAGAIN || r == -EWOULDBLOCK ? SPAWN_VM_TIMEOUT : SPAWN_VM_RECV_FAILED;
            if (recv_errno != NULL) *recv_errno = (int)-r;
            spawn_vm_sys(SYS_kill, s->pid, SIGKILL, 0, 0, 0);
            struct timeval none = { 0 };
            spawn_vm_sys(SYS_setsockopt, sync_fd, SOL_SOCKET, SO_RCVTIMEO, (long)&none, sizeof(none));
            killed = true;
            continue;
        }
        /* Only the first message counts (the child sends one, then exits). */
        if (end == SPAWN_VM_EXECED && (size_t)r >= offsetof(struct sync_msg, payload) &&
            m->type == SYNC_ERROR) {
            size_t plen = (size_t)r - offsetof(struct sync_msg, payload);
            m->payload[plen < SYNC_MAX_PAYLOAD ? plen : SYNC_MAX_PAYLOAD - 1] = '\0';
            end = SPAWN_VM_ERROR;
        }
        /* Later messages would overwrite *m: read them elsewhere. */
        if (end == SPAWN_VM_ERROR) {
            char sink[256];
            for (;;) {
                long n = spawn_vm_sys(SYS_recvfrom, sync_fd, (long)sink, sizeof(sink), 0, 0);
                if (n == 0) return end;
                if (n == -EINTR || n > 0) continue;
                spawn_vm_sys(SYS_kill, s->pid, SIGKILL, 0, 0, 0);
                siginfo_t si;
                spawn_vm_sys(SYS_waitid, P_PID, s->pid, (long)&si, WEXITED | WNOWAIT, 0);
                return end;
            }
        }
    }
}

void spawn_vm_release(struct spawn_vm *s)
{
#ifdef __SANITIZE_ADDRESS__
    /* ASan's shadow is ours too: the child's frames left their redzones
     * poisoned there, which a later mapping at this address would inherit. */
    if (s->map != NULL) ASAN_UNPOISON_MEMORY_REGION(s->map, s->map_len);
#endif
    if (s->map != NULL) munmap(s->map, s->map_len);
    s->map = NULL;
}
