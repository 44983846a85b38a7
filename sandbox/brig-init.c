/* brig-init: PID 1 of a `brig sandbox run` (the role of Docker's
 * docker-init / tini). Usage: brig-init -- CMD [ARGS...]
 *
 * It runs CMD in its own process group, forwards the signals it gets to
 * that group, reaps every zombie reparented to it, and exits with CMD's
 * status (128+N when CMD died of signal N). Its exit is what ends the
 * sandbox: when the init of a pid namespace exits, the kernel SIGKILLs every
 * other process in it, so nothing CMD left behind (daemons, setsid'd or
 * double-forked children) outlives it.
 *
 * --exec PATH -- ARGV0 [ARGS...]: not an init. The trampoline of `brig
 * sandbox exec` run from brig's unsealed binary (docs/security.md, "sandbox
 * exec without the sealed copy"): brig's exec child execs this file, by fd,
 * instead of the command, so that whatever the kernel runs for the
 * command's execve as /proc/self/exe (a `#!/proc/self/exe` script, a
 * PT_INTERP of /proc/self/exe) is this read-only bind, never brig. It only
 * execv's PATH (found inside the root by brig, no PATH search) with ARGV0
 * as the caller gave it and the environment as is: no fork, no setsid, no
 * signal change; on x86_64 from its entry point, before static glibc
 * starts (init_fast_exec). A failed execv is reported as brig-init's CMD's
 * would be: on stderr, exit 127 (ENOENT) or 126.
 *
 * --cwd DIR: CMD's working directory, entered by CMD's own process (the
 * sandbox's user, inside the sandbox) and never made. As process.cwd the
 * runtime would create it as root before the read-only root is sealed: in
 * the host's rootfs, on the say-so of a caller through sudo.
 *
 * brig-init --idle: PID 1 of a long-lived sandbox (`brig sandbox create`).
 * It runs nothing: it reaps what the exec'd commands orphan, until SIGTERM
 * (or `sandbox rm`'s SIGKILL) ends it and, with it, the namespace. It does
 * not die with its parent: the brig that created it exits at once.
 *
 * Static and self-contained (no libbrig): it is bind-mounted read-only into
 * rootfs images that may have no libc at all. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int init_status(int status)
{
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 255;
}

/* Reap until told to stop from outside. A blocked signal reaches even a
 * namespace's init from inside it (the kernel drops only unblocked ones it
 * would take by default): a SIGTERM from a command (the same uid) carries
 * that command's pid and must not end the sandbox; one from the host (an
 * ancestor namespace) comes with si_pid 0. Only kill/tgkill's codes count:
 * rt_sigqueueinfo (SI_QUEUE and the other codes a sender may choose) lets
 * the command write si_pid 0 itself. */
static bool init_from_host(const siginfo_t *si)
{
    return si->si_pid == 0 && (si->si_code == SI_USER || si->si_code == SI_TKILL);
}

static int init_idle(void)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&all, &si);
        if ((sig == SIGTERM || sig == SIGINT) && init_from_host(&si)) return 0;
        while (waitpid(-1, NULL, WNOHANG) > 0) {}
    }
}

#if defined(__x86_64__)
/* The trampoline's fast path: brig-init's entry point (sandbox/meson.build
 * links it as such on x86_64) execs before static glibc sets itself up
 * (its start costs ~1.5 ms and ~25 page faults, more than the rest of the
 * trampoline), with the kernel's own argv and envp from the stack. Nothing
 * of libc runs before it: no TLS (no stack protector), no IFUNC (no
 * strcmp). Anything else, or a failed execve, goes on into glibc's _start
 * with the stack as the kernel left it: main() then reports the failure. */
static __attribute__((no_stack_protector, used)) bool init_fast_eq(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

static __attribute__((no_stack_protector, used)) void init_fast_exec(long *sp)
{
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    if (argc < 5 || !init_fast_eq(argv[1], "--exec") || !init_fast_eq(argv[3], "--")) return;
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(59L), "D"(argv[2]), "S"(argv + 4), "d"(argv + argc + 1)
                     : "rcx", "r11", "memory");
}

/* rsp is 16-aligned at entry; the call makes it a function's entry state. */
__asm__(".text\n"
        ".globl brig_init_start\n"
        ".type brig_init_start, @function\n"
        "brig_init_start:\n"
        "    mov %rsp, %rdi\n"
        "    call init_fast_exec\n"
        "    xor %edx, %edx\n"                  /* _start takes rdx as rtld_fini: 0 as the kernel gave it */
        "    jmp _start\n");
#endif

/* The trampoline (--exec, above): whatever fails, nothing else ran. */
static int init_exec(const char *path, char **args)
{
    execv(path, args);
    int e = errno;
    fprintf(stderr, "brig-init: %s: %s\n", path, strerror(e));
    return e == ENOENT ? 127 : 126;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--exec") == 0) {
        if (argc >= 5 && strcmp(argv[3], "--") == 0) return init_exec(argv[2], argv + 4);
        fprintf(stderr, "brig-init: usage: brig-init --exec PATH -- ARGV0 [ARGS...]\n");
        return 125;             /* never an init running "--exec" as its command */
    }
    bool idle = argc == 2 && strcmp(argv[1], "--idle") == 0;
    int first = 1;
    const char *cwd = NULL;
    if (argc > 2 && strcmp(argv[1], "--cwd") == 0) {
        cwd = argv[2];
        first = 3;
    }
    if (argc > first && strcmp(argv[first], "--") == 0) first++;
    if (first >= argc && !idle) {
        fprintf(stderr, "brig-init: usage: brig-init [--cwd DIR] -- CMD [ARGS...] | brig-init --idle | "
                        "brig-init --exec PATH -- ARGV0 [ARGS...]\n");
        return 125;
    }
    /* A session of our own, before anything else runs: the caller's
     * controlling terminal (inherited from brig through the clone) must not
     * be reachable as /dev/tty, to write to, read from or push input into
     * (TIOCSTI). brig never passes a terminal as stdio either. */
    if (setsid() < 0 && getsid(0) != getpid()) {
        fprintf(stderr, "brig-init: setsid: %s\n", strerror(errno));
        return 125;
    }
    /* brig (our parent, outside the namespace) killed: we go too, and the
     * kernel takes the whole namespace with us. A signal from an ancestor
     * namespace reaches a namespace's init even without a handler. */
    if (!idle) prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* Not ptrace-able by the command (the same uid): it could otherwise
     * keep PID 1 alive past its own exit, or forge the status it reports.
     * execve makes the command dumpable again. */
    prctl(PR_SET_DUMPABLE, 0);
    if (idle) return init_idle();
    /* Everything blocked before the fork: no signal is lost between the
     * fork and sigwaitinfo; the command gets the mask it would have had. */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);

    pid_t child = fork();
    if (child < 0) {
        fprintf(stderr, "brig-init: fork: %s\n", strerror(errno));
        return 125;
    }
    if (child == 0) {
        setpgid(0, 0);
        /* --tty: our session's terminal; CMD's group must be its foreground
         * or its first read or write stops it (SIGTTIN/SIGTTOU). Allowed
         * from the background here: everything is still blocked. */
        if (isatty(0)) tcsetpgrp(0, getpid());
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (cwd != NULL && chdir(cwd) < 0) {
            fprintf(stderr, "brig-init: --cwd %s: %s (brig does not create it)\n", cwd, strerror(errno));
            _exit(125);
        }
        execvp(argv[first], argv + first);
        int e = errno;
        fprintf(stderr, "brig-init: %s: %s\n", argv[first], strerror(e));
        _exit(e == ENOENT ? 127 : 126);
    }
    setpgid(child, child);      /* also here: no race with the first forwarded signal */
    if (isatty(0)) tcsetpgrp(0, child);

    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&all, &si);
        if (sig < 0) continue;
        if (sig != SIGCHLD) {
            /* SIGSTOP/SIGKILL never arrive here; the rest goes to CMD's group. */
            if (kill(-child, sig) < 0) kill(child, sig);
            continue;
        }
        int status;
        pid_t p;
        while ((p = waitpid(-1, &status, WNOHANG)) > 0)
            if (p == child) return init_status(status);
    }
}
