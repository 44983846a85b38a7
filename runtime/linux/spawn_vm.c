/* A child sharing our memory until its execve (spawn_vm.h). */
#include "spawn_vm.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* Room for the child's deepest path (a 64 KiB struct sync_msg on the stack
 * when it reports an error, PATH_MAX buffers, vsnprintf): only the pages
 * it touches cost anything. */
#define SPAWN_VM_STACK (512u << 10)

#if defined(__x86_64__)
long spawn_vm_sys(long nr, long a, long b, long c, long d, long e)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8)
                     : "rcx", "r11", "memory");
    return ret;
}
bool spawn_vm_available(void) { return true; }
#elif defined(__aarch64__)
long spawn_vm_sys(long nr, long a, long b, long c, long d, long e)
{
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4) : "memory");
    return x0;
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

int spawn_vm_start(struct spawn_vm *s, int (*fn)(void *), void *arg, struct brig_error **err)
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
    s->pid = clone(fn, (char *)s->map + s->map_len, CLONE_VM | SIGCHLD, arg);
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
    if (s->map != NULL) munmap(s->map, s->map_len);
    s->map = NULL;
}
