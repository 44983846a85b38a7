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
 * signal change. A failed execv is reported as brig-init's CMD's would be:
 * on stderr, exit 127 (ENOENT) or 126. Loaded as such an interpreter,
 * brig-init runs as a program of its own on the command's arguments (its
 * usage, exit 125, as a rule): nothing the command could not run itself.
 *
 * --exec-sync FD PATH -- ARGV0 [ARGS...]: the same for an OCI container's
 * process started from brig's unsealed binary (`brig run`), from a sealed
 * memfd copy of this program compiled into brig; FD is brig's sync
 * socket, which gets a failed execve's error as brig's own child sent it,
 * and is closed by a good one (init_exec_sync).
 *
 * Not under a name in /proc or /dev/fd (init_misnamed): as the interpreter
 * of a `#!/proc/self/exe` file it refuses (125) instead of running the file.
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
 * rootfs images that may have no libc at all. On x86_64 and aarch64 it has
 * none itself either (init_sys.h): a few KB, its own _start, no start-up
 * cost before PID 1's first system call. So: no errno (calls return
 * -errno), no stdio, no strerror (init_strerror), no execvp (init_execvp,
 * glibc's rules), no stack protector or anything else that needs TLS. */

#include <fcntl.h>
#include <linux/limits.h>
#include <stdarg.h>
#include <sys/socket.h>

#include "init_report.h"
#include "init_sys.h"

/* ---- what glibc gave it: strings, messages, execvp ---- */

static bool init_eq(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

static size_t init_len(const char *s)
{
    size_t n = 0;
    while (s[n] != '\0') n++;
    return n;
}

/* glibc's strerror texts for what the calls here fail with: messages stay
 * what they were with glibc (tests and users grep them). */
static const struct {
    int errnum;
    char text[40];              /* not a pointer: no relocation, read-only */
} init_errors[] = {
    { EPERM, "Operation not permitted" },
    { ENOENT, "No such file or directory" },
    { EIO, "Input/output error" },
    { E2BIG, "Argument list too long" },
    { ENOEXEC, "Exec format error" },
    { EAGAIN, "Resource temporarily unavailable" },
    { ENOMEM, "Cannot allocate memory" },
    { EACCES, "Permission denied" },
    { EFAULT, "Bad address" },
    { ENOTDIR, "Not a directory" },
    { EISDIR, "Is a directory" },
    { EINVAL, "Invalid argument" },
    { ENFILE, "Too many open files in system" },
    { EMFILE, "Too many open files" },
    { ETXTBSY, "Text file busy" },
    { ENAMETOOLONG, "File name too long" },
    { ENOSYS, "Function not implemented" },
    { ELOOP, "Too many levels of symbolic links" },
    { ELIBBAD, "Accessing a corrupted shared library" },
};

/* Into buf (32 bytes): the text, or glibc's "Unknown error N". */
static const char *init_strerror(int e, char *buf)
{
    for (size_t i = 0; i < sizeof(init_errors) / sizeof(init_errors[0]); i++)
        if (init_errors[i].errnum == e) return init_errors[i].text;
    char digits[12];
    int n = 0;
    unsigned u = e < 0 ? 0u - (unsigned)e : (unsigned)e;
    do digits[n++] = (char)('0' + u % 10); while ((u /= 10) != 0);
    char *p = buf;
    for (const char *s = "Unknown error "; *s != '\0'; s++) *p++ = *s;
    if (e < 0) *p++ = '-';
    while (n > 0) *p++ = digits[--n];
    *p = '\0';
    return buf;
}

/* Appends s to buf[n..max), as much as fits. */
static size_t init_put(char *buf, size_t n, size_t max, const char *s)
{
    while (*s != '\0' && n < max) buf[n++] = *s++;
    return n;
}

/* One line on stderr, "brig-init: " and the pieces up to NULL, in one
 * write as stderr's fprintf made it (truncated past the buffer). */
static __attribute__((sentinel)) void init_say(const char *piece, ...)
{
    char line[4096];
    size_t n = init_put(line, 0, sizeof(line) - 1, "brig-init: ");
    va_list ap;
    va_start(ap, piece);
    for (; piece != NULL; piece = va_arg(ap, const char *)) n = init_put(line, n, sizeof(line) - 1, piece);
    va_end(ap);
    line[n++] = '\n';
    sys_write(2, line, n);
}

static const char *init_getenv(char **envp, const char *name)
{
    size_t n = init_len(name);
    for (char **e = envp; e != NULL && *e != NULL; e++) {
        size_t i = 0;
        while (i < n && (*e)[i] == name[i]) i++;
        if (i == n && (*e)[n] == '=') return *e + n + 1;
    }
    return NULL;
}

/* execvp's fallback for a file the kernel does not know how to run (no #!):
 * /bin/sh runs it, with the caller's arguments after it. */
static int init_exec_script(const char *path, char **argv, char **envp)
{
    size_t argc = 0;
    while (argv[argc] != NULL) argc++;
    char *sh_argv[argc > 1 ? argc + 2 : 3];
    sh_argv[0] = (char *)"/bin/sh";
    sh_argv[1] = (char *)path;
    for (size_t i = 1; i <= argc; i++) sh_argv[i + 1] = argv[i];
    if (argc <= 1) sh_argv[2] = NULL;
    return (int)-sys_execve(sh_argv[0], sh_argv, envp);
}

/* One execve of execvp's: the errno it left. */
static int init_exec_one(const char *path, char **argv, char **envp)
{
    int e = (int)-sys_execve(path, argv, envp);
    if (e == ENOEXEC) e = init_exec_script(path, argv, envp);
    return e;
}

/* execvp(3) as glibc 2.36 does it (posix/execvpe.c), over the command's own
 * environment: a name with a '/' as is, else each directory of PATH
 * (/bin:/usr/bin without one; an empty entry is the working directory) in
 * turn, past the ones where it is missing or not ours to run; EACCES if any
 * was, else the last error. Returns the errno; only returns on failure. */
static int init_execvp(const char *file, char **argv, char **envp)
{
    if (*file == '\0') return ENOENT;
    for (const char *c = file; *c != '\0'; c++)
        if (*c == '/') return init_exec_one(file, argv, envp);
    size_t file_len = init_len(file);
    if (file_len > NAME_MAX) return ENAMETOOLONG;
    const char *path = init_getenv(envp, "PATH");
    if (path == NULL) path = "/bin:/usr/bin";
    /* Sized as glibc's (a VLA, not PATH_MAX): the stack the command's
     * process touches is what it needs. */
    size_t path_len = 1;
    while (path_len < PATH_MAX && path[path_len - 1] != '\0') path_len++;
    char buf[path_len + file_len + 2];
    bool got_eacces = false;
    int e = ENOENT;
    for (const char *p = path;; p++) {
        const char *end = p;
        while (*end != '\0' && *end != ':') end++;
        if ((size_t)(end - p) < path_len) {     /* glibc skips what would not fit */
            char *b = buf;
            for (const char *s = p; s < end; s++) *b++ = *s;
            if (end > p) *b++ = '/';
            for (size_t i = 0; i <= file_len; i++) *b++ = file[i];
            e = init_exec_one(buf, argv, envp);
            switch (e) {
            case EACCES:
                got_eacces = true;
                break;
            case ENOENT: case ESTALE: case ENOTDIR: case ENODEV: case ETIMEDOUT:
                break;
            default:
                return e;                       /* found, but it would not run */
            }
        }
        p = end;
        if (*p == '\0') break;
    }
    return got_eacces ? EACCES : e;
}

/* ---- the init ---- */

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
    sys_sigset all;
    sys_sigfill(&all);
    sys_sigprocmask(SIG_BLOCK, &all, NULL);
    for (;;) {
        siginfo_t si;
        long sig = sys_sigwaitinfo(&all, &si);
        if ((sig == SIGTERM || sig == SIGINT) && init_from_host(&si)) return 0;
        while (sys_waitpid(-1, NULL, WNOHANG) > 0) {}
    }
}

/* CMD's execve failed with e: told to brig by our own name (init_report.h),
 * which nothing but this process can set. */
static void init_report(int e)
{
    char name[16];
    size_t n = init_put(name, 0, sizeof(name) - 4, INIT_EXEC_FAILED_COMM);
    if (e >= 100) name[n++] = (char)('0' + e / 100 % 10);
    if (e >= 10) name[n++] = (char)('0' + e / 10 % 10);
    name[n++] = (char)('0' + e % 10);
    name[n] = '\0';
    sys_prctl(PR_SET_NAME, (unsigned long)name);
}

/* Said on stderr too; the status a shell gives: 127 not found, 126 found
 * but not run. */
static int init_exec_failed(const char *cmd, int e)
{
    init_report(e);
    char buf[32];
    init_say(cmd, ": ", init_strerror(e, buf), NULL);
    return e == ENOENT ? 127 : 126;
}

/* The trampoline (--exec, in the header): whatever fails, nothing else ran. */
static int init_exec(int argc, char **argv, char **envp)
{
    if (argc < 5 || !init_eq(argv[3], "--")) {
        init_say("usage: brig-init --exec PATH -- ARGV0 [ARGS...]", NULL);
        return 125;             /* never an init running "--exec" as its command */
    }
    return init_exec_failed(argv[2], (int)-sys_execve(argv[2], argv + 4, envp));
}

/* --exec-sync FD PATH -- ARGV0 [ARGS...]: the trampoline of an OCI
 * container's process, started from brig's unsealed binary (`brig run`:
 * docs/security.md): as --exec, but FD is brig's
 * sync socket, kept open across brig's execveat of this file. PATH's
 * execve closes it (close-on-exec, set here): brig sees EOF, the process
 * runs. A failed execve is told to brig on it, as brig's own child told
 * it before ("exec PATH: TEXT", the errno, 127 or 126), and brig reports
 * it: nothing on the command's stderr. */
static int init_exec_sync(int argc, char **argv, char **envp)
{
    long fd = 0;
    const char *d = argc >= 6 ? argv[2] : "";
    for (; *d >= '0' && *d <= '9' && fd < (1L << 20); d++) fd = fd * 10 + (*d - '0');
    if (argc < 6 || *d != '\0' || d == argv[2] || !init_eq(argv[4], "--")) {
        init_say("usage: brig-init --exec-sync FD PATH -- ARGV0 [ARGS...]", NULL);
        return 125;
    }
    const char *path = argv[3];
    long e = -sys_fcntl((int)fd, F_SETFD, FD_CLOEXEC);
    const char *what = "exec ";
    if (e == 0) {
        e = -sys_execve(path, argv + 5, envp);
    } else {
        what = "exec (the trampoline could not close brig's socket) ";
    }
    int status = e == ENOENT || e == ENOTDIR ? 127 : 126;
    /* Header and text in one message, built in place (no memcpy: no libc). */
    union {
        struct init_sync_head head;
        char bytes[sizeof(struct init_sync_head) + PATH_MAX + 160];
    } m;
    char buf[32];
    size_t max = sizeof(m.bytes) - 1, n = sizeof(m.head);
    n = init_put(m.bytes, n, max, what);
    n = init_put(m.bytes, n, max, path);
    n = init_put(m.bytes, n, max, ": ");
    n = init_put(m.bytes, n, max, init_strerror((int)e, buf));
    m.bytes[n++] = '\0';
    m.head.type = INIT_SYNC_ERROR;
    m.head.errnum = (int)((e & 0xffff) | (status & 0xff) << 16);
    m.head.len = (unsigned int)(n - sizeof(m.head));
    sys_send((int)fd, m.bytes, n, MSG_NOSIGNAL);
    return status;
}

/* What CMD's process needs, read from brig-init's memory (sys_spawn). */
struct init_cmd {
    const char *cwd;
    char **argv;
    char **envp;
    sys_sigset mask;            /* brig-init's own, before it blocked everything */
    /* Set by the child when CMD's execve failed. Freestanding, sys_spawn's
     * child runs in our memory and we resume once it is gone: we read it
     * then (as glibc's posix_spawn reads its child's error). With glibc's
     * fork it stays 0. */
    int exec_errno;
};

/* CMD's process: its own group, the terminal's foreground if there is one,
 * the signal mask brig-init was given, then CMD. It runs in brig-init's
 * memory until its execve (sys_spawn): nothing is written but its stack. */
static int init_child(void *arg)
{
    struct init_cmd *c = arg;
    sys_setpgid(0, 0);
    /* --tty: our session's terminal; CMD's group must be its foreground
     * or its first read or write stops it (SIGTTIN/SIGTTOU). Allowed
     * from the background here: everything is still blocked. */
    if (sys_isatty(0)) sys_tcsetpgrp(0, (pid_t)sys_getpid());
    sys_sigprocmask(SIG_SETMASK, &c->mask, NULL);
    char buf[32];
    long r = c->cwd != NULL ? sys_chdir(c->cwd) : 0;
    if (r < 0) {
        init_say("--cwd ", c->cwd, ": ", init_strerror((int)-r, buf), " (brig does not create it)", NULL);
        return 125;
    }
    int e = init_execvp(c->argv[0], c->argv, c->envp);
    init_say(c->argv[0], ": ", init_strerror(e, buf), NULL);
    c->exec_errno = e;          /* init_run reports it: our name is not PID 1's */
    return e == ENOENT ? 127 : 126;
}

/* Forward what comes to CMD's group until CMD ends; reap whatever else
 * ends meanwhile. */
static int init_wait(pid_t child, const sys_sigset *all)
{
    for (;;) {
        siginfo_t si;
        long sig = sys_sigwaitinfo(all, &si);
        if (sig < 0) continue;
        if (sig != SIGCHLD) {
            /* SIGSTOP/SIGKILL never arrive here; the rest goes to CMD's group. */
            if (sys_kill(-child, (int)sig) < 0) sys_kill(child, (int)sig);
            continue;
        }
        int status;
        long p;
        while ((p = sys_waitpid(-1, &status, WNOHANG)) > 0)
            if (p == child) return init_status(status);
    }
}

static int init_run(const char *cwd, char **argv, char **envp)
{
    /* Everything blocked before the child: no signal is lost between its
     * start and sigwaitinfo; the command gets the mask it would have had. */
    sys_sigset all;
    struct init_cmd c = { .cwd = cwd, .argv = argv, .envp = envp };
    sys_sigfill(&all);
    sys_sigprocmask(SIG_BLOCK, &all, &c.mask);
    long child = sys_spawn(init_child, &c);
    if (child < 0) {
        char buf[32];
        init_say("fork: ", init_strerror((int)-child, buf), NULL);
        return 125;
    }
    /* Also here for a fork (glibc's sys_spawn), where we may run before the
     * child: no race with the first forwarded signal. After a vfork the
     * child has done both (setpgid then fails: it has exec'd). */
    sys_setpgid((pid_t)child, (pid_t)child);
    if (sys_isatty(0)) sys_tcsetpgrp(0, (pid_t)child);
    if (c.exec_errno != 0) init_report(c.exec_errno);
    return init_wait((pid_t)child, &all);
}

/* Started by brig (as /dev/.brig-init, a policy's init path, or as
 * brig-init from its sealed copy) or by hand, never under a name in /proc
 * or /dev/fd. The kernel runs us under such a name as the interpreter of a
 * file whose first line is `#!/proc/self/exe` while we are a process's exe
 * (the trampoline, between its exec and the command's): in init mode we
 * would run that file as our command, which would run us again, without
 * end. Refused, as brig refused to be that interpreter. */
static bool init_misnamed(const char *argv0)
{
    static const char *const dirs[] = { "/proc/", "/dev/fd/" };
    for (unsigned i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        const char *a = argv0, *d = dirs[i];
        while (*d != '\0' && *a == *d) a++, d++;
        if (*d == '\0') return true;
    }
    return false;
}

static int init_main(int argc, char **argv, char **envp)
{
    if (argc < 1 || init_misnamed(argv[0])) {
        init_say("run as ", argc < 1 ? "(nothing)" : argv[0],
                 ", not as brig-init (an interpreter line naming /proc/self/exe?): refusing", NULL);
        return 125;
    }
    if (argc >= 2 && init_eq(argv[1], "--exec")) return init_exec(argc, argv, envp);
    if (argc >= 2 && init_eq(argv[1], "--exec-sync")) return init_exec_sync(argc, argv, envp);
    bool idle = argc == 2 && init_eq(argv[1], "--idle");
    int first = 1;
    const char *cwd = NULL;
    if (argc > 2 && init_eq(argv[1], "--cwd")) {
        cwd = argv[2];
        first = 3;
    }
    if (argc > first && init_eq(argv[first], "--")) first++;
    if (first >= argc && !idle) {
        init_say("usage: brig-init [--cwd DIR] -- CMD [ARGS...] | brig-init --idle | "
                 "brig-init --exec PATH -- ARGV0 [ARGS...]", NULL);
        return 125;
    }
    /* A session of our own, before anything else runs: the caller's
     * controlling terminal (inherited from brig through the clone) must not
     * be reachable as /dev/tty, to write to, read from or push input into
     * (TIOCSTI). brig never passes a terminal as stdio either. */
    long r = sys_setsid();
    if (r < 0 && sys_getsid(0) != sys_getpid()) {
        char buf[32];
        init_say("setsid: ", init_strerror((int)-r, buf), NULL);
        return 125;
    }
    /* brig (our parent, outside the namespace) killed: we go too, and the
     * kernel takes the whole namespace with us. A signal from an ancestor
     * namespace reaches a namespace's init even without a handler. */
    if (!idle) sys_prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* Not ptrace-able by the command (the same uid): it could otherwise
     * keep PID 1 alive past its own exit, or forge the status it reports.
     * execve makes the command dumpable again. */
    sys_prctl(PR_SET_DUMPABLE, 0);
    if (idle) return init_idle();
    return init_run(cwd, argv + first, envp);
}

#if INIT_SYS_FREESTANDING
/* The kernel's stack at the entry point: argc, argv..., NULL, envp...,
 * NULL. Nothing runs before init_main: no libc to start. */
__attribute__((noreturn, used)) static void init_start(long *sp)
{
    int argc = (int)sp[0];
    char **argv = (char **)(sp + 1);
    sys_exit(init_main(argc, argv, argv + argc + 1));
}

#if defined(__x86_64__)
/* rsp is 16-aligned at entry; the call makes it a function's entry state. */
__asm__(".text\n"
        ".globl _start\n"
        ".type _start, @function\n"
        "_start:\n"
        "    xor %ebp, %ebp\n"
        "    mov %rsp, %rdi\n"
        "    and $-16, %rsp\n"
        "    call init_start\n"
        "    hlt\n");
#elif defined(__aarch64__)
__asm__(".text\n"
        ".globl _start\n"
        ".type _start, %function\n"
        "_start:\n"
        "    mov x29, #0\n"
        "    mov x30, #0\n"
        "    mov x0, sp\n"
        "    bl init_start\n"
        "    brk #0\n");
#endif
#else
int main(int argc, char **argv, char **envp)
{
    return init_main(argc, argv, envp);
}
#endif
