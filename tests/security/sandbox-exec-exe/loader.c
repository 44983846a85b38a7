/* The hostile dynamic loader of t-sandbox-exec-exe.sh: the rootfs ships it
 * at /lib64/ld-linux-x86-64.so.2, so it runs whenever the kernel runs a
 * dynamically linked program in the sandbox as its loader, brig included
 * (a `#!/proc/self/exe` command makes the kernel run /proc/self/exe of the
 * process that execs it). It reports what /proc/self/exe is:
 *   EXE <dev> <ino> <errno of open(O_WRONLY)>
 * and exits. No libc (it runs as an ELF interpreter); x86_64 only. */
typedef unsigned long u64;

static long sys(long n, long a, long b, long c)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return r;
}

static char *num(char *p, u64 v)
{
    char t[24];
    int n = 0;
    do t[n++] = (char)('0' + v % 10); while ((v /= 10) != 0);
    while (n) *p++ = t[--n];
    return p;
}

void _start(void)
{
    u64 st[18] = { 0 };     /* struct stat: st_dev, st_ino first */
    long fd = sys(2, (long)"/proc/self/exe", 0, 0);             /* open O_RDONLY */
    if (fd >= 0) sys(5, fd, (long)st, 0);                       /* fstat */
    long w = sys(2, (long)"/proc/self/exe", 1, 0);              /* open O_WRONLY */
    char buf[96], *p = buf;
    const char *s = "EXE ";
    while (*s) *p++ = *s++;
    p = num(p, st[0]);
    *p++ = ' ';
    p = num(p, st[1]);
    *p++ = ' ';
    p = num(p, w < 0 ? (u64)-w : 0);
    *p++ = '\n';
    sys(1, 1, (long)buf, p - buf);
    sys(60, 0, 0, 0);
}
