/* brig-probe: a small static program run inside containers. It reports, as
 * one JSON object on stdout, what a process sees from the inside, so that
 * the integration tests (and `brig policy selftest`) can compare it with
 * what the config asked for. No library dependencies beyond libc, so it can
 * be linked -static and copied into any rootfs.
 *
 *   brig-probe report [--read PATH]... [--write DIR]...
 *   brig-probe write PATH | read PATH | syscall NAME | connect HOST PORT
 *   brig-probe sleep SECONDS | exit N | kill-self SIG | fork-bomb N
 *   brig-probe boundaries [--write DIR]... [--tmpfs DIR]... [--fork N]
 *   brig-probe -- CMD [ARG]...     (a minimal init: probe_boundaries.c)
 *
 * Every subcommand but `report` exits with the errno of what it tried
 * (0 = it worked) and prints a short JSON object with the errno's name. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/bpf.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "probe_boundaries.h"

#define MAX_PATHS 64

/* ---- JSON output: compact, one object per run --------------------------- */

static int j_depth;
static bool j_first[32] = { true };
static bool j_after_key;

static void j_sep(void)
{
    if (j_after_key) {
        j_after_key = false;
        return;
    }
    if (!j_first[j_depth]) putchar(',');
    j_first[j_depth] = false;
}

static void j_raw_str(const char *s)
{
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p == '\n') fputs("\\n", stdout);
        else if (*p == '\t') fputs("\\t", stdout);
        else if (*p < 0x20 || *p >= 0x7f) printf("\\u%04x", *p); /* keep output ASCII/valid */
        else putchar(*p);
    }
    putchar('"');
}

static void j_open(char c) { j_sep(); putchar(c); j_first[++j_depth] = true; }
static void j_close(char c) { putchar(c); j_depth--; }
static void j_key(const char *k) { j_sep(); j_raw_str(k); putchar(':'); j_after_key = true; }
static void j_str(const char *s) { j_sep(); if (s) j_raw_str(s); else fputs("null", stdout); }
static void j_int(long long v) { j_sep(); printf("%lld", v); }
static void j_bool(bool v) { j_sep(); fputs(v ? "true" : "false", stdout); }
static void j_kstr(const char *k, const char *v) { j_key(k); j_str(v); }
static void j_kint(const char *k, long long v) { j_key(k); j_int(v); }
static void j_end(void) { putchar('\n'); fflush(stdout); }

/* ---- small helpers ------------------------------------------------------ */

/* "EPERM" for errno values, "ok" for 0: names survive across kernels and
 * architectures better than numbers in test assertions. */
static const char *errname(int e)
{
    static char buf[16];
    if (e == 0) return "ok";
    const char *n = strerrorname_np(e);
    if (n) return n;
    snprintf(buf, sizeof(buf), "E%d", e);
    return buf;
}

static int parse_signal(const char *s)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (*s && *end == '\0') return (n > 0 && n < NSIG) ? (int)n : -1;
    if (strncasecmp(s, "SIG", 3) == 0) s += 3;
    for (int i = 1; i < NSIG; i++) {
        const char *abbrev = sigabbrev_np(i);
        if (abbrev && strcasecmp(abbrev, s) == 0) return i;
    }
    return -1;
}

/* Read a small file into buf; returns bytes read or -1 with errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t off = 0;
    while (off + 1 < size) {
        ssize_t n = read(fd, buf + off, size - 1 - off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) { int e = errno; close(fd); errno = e; return -1; }
        if (n == 0) break;
        off += (size_t)n;
    }
    buf[off] = '\0';
    close(fd);
    return (ssize_t)off;
}

/* The value of "Key:" in /proc/self/status, whitespace-trimmed, or NULL. */
static const char *status_field(const char *status, const char *key, char *out, size_t outlen)
{
    size_t klen = strlen(key);
    for (const char *line = status; line && *line; line = strchr(line, '\n')) {
        if (*line == '\n') line++;
        if (strncmp(line, key, klen) != 0 || line[klen] != ':') continue;
        const char *v = line + klen + 1;
        while (*v == ' ' || *v == '\t') v++;
        size_t n = strcspn(v, "\n");
        if (n >= outlen) n = outlen - 1;
        memcpy(out, v, n);
        out[n] = '\0';
        return out;
    }
    return NULL;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* ---- report sections ---------------------------------------------------- */

static void report_identity(void)
{
    struct utsname u;
    if (uname(&u) == 0) {
        j_kstr("hostname", u.nodename);
        j_kstr("domainname", u.domainname);
    }
    j_kint("uid", getuid());
    j_kint("gid", getgid());
    j_kint("euid", geteuid());
    j_kint("egid", getegid());
    gid_t groups[256];
    int n = getgroups(256, groups);
    j_key("groups");
    j_open('[');
    for (int i = 0; i < n; i++) j_int(groups[i]);
    j_close(']');
    mode_t old = umask(0);
    umask(old);
    char um[8];
    snprintf(um, sizeof(um), "%04o", (unsigned)old);
    j_kstr("umask", um);
    char cwd[4096];
    j_kstr("cwd", getcwd(cwd, sizeof(cwd)) ? cwd : NULL);
    j_kint("pid", getpid());
    j_kint("ppid", getppid());
}

static void report_status(void)
{
    static char status[16384];
    if (read_small("/proc/self/status", status, sizeof(status)) < 0) {
        j_kstr("status_error", errname(errno));
        return;
    }
    static const char *const caps[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
    char v[128];
    j_key("caps");
    j_open('{');
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
        j_kstr(caps[i], status_field(status, caps[i], v, sizeof(v)));
    j_close('}');
    /* Numbers, so that tests can compare with jq directly. */
    static const char *const nums[][2] = {
        { "NoNewPrivs", "no_new_privs" }, { "Seccomp", "seccomp" },
        { "Seccomp_filters", "seccomp_filters" },
    };
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
        j_key(nums[i][1]);
        if (status_field(status, nums[i][0], v, sizeof(v))) j_int(atoll(v));
        else j_str(NULL);
    }
    char adj[32];
    j_key("oom_score_adj");
    if (read_small("/proc/self/oom_score_adj", adj, sizeof(adj)) > 0) j_int(atoll(adj));
    else j_str(NULL);
}

static void report_namespaces(void)
{
    static const char *const ns[] = {
        "cgroup", "ipc", "mnt", "net", "pid", "pid_for_children",
        "time", "time_for_children", "user", "uts",
    };
    j_key("namespaces");
    j_open('{');
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        char path[64], link[128];
        snprintf(path, sizeof(path), "/proc/self/ns/%s", ns[i]);
        ssize_t n = readlink(path, link, sizeof(link) - 1);
        j_key(ns[i]);
        if (n < 0) { j_str(NULL); continue; }
        link[n] = '\0';
        char *lb = strchr(link, '[');  /* "pid:[4026531836]" */
        if (lb) j_int(strtoll(lb + 1, NULL, 10));
        else j_str(link);
    }
    j_close('}');
}

static void report_mounts(void)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    j_key("mounts");
    j_open('[');
    if (!f) { j_close(']'); j_kstr("mounts_error", errname(errno)); return; }
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        /* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
        char *fields[6] = { 0 }, *save = NULL, *tok = strtok_r(line, " ", &save);
        int nf = 0;
        while (tok && nf < 6) { fields[nf++] = tok; tok = strtok_r(NULL, " ", &save); }
        while (tok && strcmp(tok, "-") != 0) tok = strtok_r(NULL, " ", &save);
        if (nf < 6 || !tok) continue;
        char *fstype = strtok_r(NULL, " ", &save);
        char *source = strtok_r(NULL, " ", &save);
        char *super = strtok_r(NULL, " ", &save);
        unescape_octal(fields[3]);
        unescape_octal(fields[4]);
        if (source) unescape_octal(source);
        j_open('{');
        j_kint("id", atoll(fields[0]));
        j_kint("parent", atoll(fields[1]));
        j_kstr("root", fields[3]);
        j_kstr("mount_point", fields[4]);
        j_kstr("fstype", fstype);
        j_kstr("source", source);
        j_kstr("options", fields[5]);
        j_kstr("super_options", super);
        j_close('}');
    }
    free(line);
    fclose(f);
    j_close(']');
}

static void report_net(void)
{
    j_key("interfaces");
    j_open('[');
    struct if_nameindex *ifs = if_nameindex();
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    for (struct if_nameindex *i = ifs; i && i->if_index; i++) {
        struct ifreq ifr = { 0 };
        snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", i->if_name);
        bool ok = s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0;
        j_open('{');
        j_kstr("name", i->if_name);
        j_key("up");
        j_bool(ok && (ifr.ifr_flags & IFF_UP));
        j_key("loopback");
        j_bool(ok && (ifr.ifr_flags & IFF_LOOPBACK));
        j_close('}');
    }
    if (ifs) if_freenameindex(ifs);
    if (s >= 0) close(s);
    j_close(']');
}

/* listen + connect + accept on 127.0.0.1: does loopback actually work? */
static int tcp_loopback(void)
{
    int l = -1, c = -1, a = -1, e = 0;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(sa);
    if ((l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(l, 1) < 0 ||
        getsockname(l, (struct sockaddr *)&sa, &len) < 0 ||
        (c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
        connect(c, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        (a = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0 || write(c, "x", 1) != 1)
        e = errno ? errno : EIO;
    char b;
    if (!e && read(a, &b, 1) != 1) e = errno ? errno : EIO;
    if (a >= 0) close(a);
    if (c >= 0) close(c);
    if (l >= 0) close(l);
    return e;
}

static void report_rlimits(void)
{
    static const struct { const char *name; int res; } lims[] = {
        { "as", RLIMIT_AS }, { "core", RLIMIT_CORE }, { "cpu", RLIMIT_CPU },
        { "data", RLIMIT_DATA }, { "fsize", RLIMIT_FSIZE }, { "locks", RLIMIT_LOCKS },
        { "memlock", RLIMIT_MEMLOCK }, { "msgqueue", RLIMIT_MSGQUEUE }, { "nice", RLIMIT_NICE },
        { "nofile", RLIMIT_NOFILE }, { "nproc", RLIMIT_NPROC }, { "rss", RLIMIT_RSS },
        { "rtprio", RLIMIT_RTPRIO }, { "rttime", RLIMIT_RTTIME },
        { "sigpending", RLIMIT_SIGPENDING }, { "stack", RLIMIT_STACK },
    };
    j_key("rlimits");
    j_open('{');
    for (size_t i = 0; i < sizeof(lims) / sizeof(lims[0]); i++) {
        struct rlimit rl;
        if (getrlimit(lims[i].res, &rl) < 0) continue;
        j_key(lims[i].name);
        j_open('{');
        /* "unlimited" rather than 2^64-1, which jq cannot represent exactly. */
        j_key("soft");
        if (rl.rlim_cur == RLIM_INFINITY) j_str("unlimited"); else j_int((long long)rl.rlim_cur);
        j_key("hard");
        if (rl.rlim_max == RLIM_INFINITY) j_str("unlimited"); else j_int((long long)rl.rlim_max);
        j_close('}');
    }
    j_close('}');
}

static void report_fds(void)
{
    j_key("fds");
    j_open('[');
    DIR *d = opendir("/proc/self/fd");
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (de->d_name[0] == '.') continue;
            int fd = atoi(de->d_name);
            if (fd == dirfd(d)) continue;   /* our own listing fd is not a leak */
            char target[4096];
            ssize_t n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
            target[n < 0 ? 0 : n] = '\0';
            j_open('{');
            j_kint("fd", fd);
            j_kstr("target", target);
            j_close('}');
        }
        closedir(d);
    }
    j_close(']');
}

/* Create (and remove again) a file in dir: can this process write there? */
static int try_write_in(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s%s.brig-probe.%d", dir,
             dir[strlen(dir) - 1] == '/' ? "" : "/", (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    int e = write(fd, "x", 1) == 1 ? 0 : errno;
    close(fd);
    unlink(path);
    return e;
}

/* Open a path and read it all (files) or list it (directories): masked
 * paths are expected to fail or to look empty. */
static void report_read(const char *path)
{
    j_key(path);
    j_open('{');
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        j_kstr("result", errname(errno));
        if (fd >= 0) close(fd);
        j_close('}');
        return;
    }
    long long count = 0;
    int e = 0;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = fdopendir(fd);
        struct dirent *de;
        while (d && (de = readdir(d)))
            if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) count++;
        if (d) closedir(d); else close(fd);
        j_kstr("type", "dir");
    } else {
        char buf[65536], head[129] = "";
        ssize_t n;
        /* Cap the read: /dev/zero or /proc/kcore must not hang the probe. */
        while (count < (1 << 20) && (n = read(fd, buf, sizeof(buf))) != 0) {
            if (n < 0) { if (errno == EINTR) continue; e = errno; break; }
            if (count == 0) {   /* the start, for sysctl values and small files */
                size_t h = (size_t)n < sizeof(head) - 1 ? (size_t)n : sizeof(head) - 1;
                memcpy(head, buf, h);
                head[h] = '\0';
            }
            count += n;
        }
        close(fd);
        j_kstr("type", S_ISREG(st.st_mode) ? "file" : S_ISCHR(st.st_mode) ? "char" : "other");
        j_kstr("head", head);
    }
    j_kstr("result", errname(e));
    j_kint(S_ISDIR(st.st_mode) ? "entries" : "bytes", count);
    j_close('}');
}

static int cmd_report(int argc, char **argv)
{
    const char *reads[MAX_PATHS], *writes[MAX_PATHS] = { "/", "/tmp" };
    int n_reads = 0, n_writes = 2;
    struct stat st;
    if (stat("/workspace", &st) == 0 && S_ISDIR(st.st_mode)) writes[n_writes++] = "/workspace";
    for (int i = 0; i < argc; i++) {
        bool more = i + 1 < argc;
        if (!strcmp(argv[i], "--read") && more && n_reads < MAX_PATHS) reads[n_reads++] = argv[++i];
        else if (!strcmp(argv[i], "--write") && more && n_writes < MAX_PATHS) writes[n_writes++] = argv[++i];
        else { fprintf(stderr, "brig-probe report: bad argument %s\n", argv[i]); return EINVAL; }
    }
    j_open('{');
    report_identity();
    report_status();
    report_namespaces();
    report_mounts();
    report_net();
    j_kstr("tcp_loopback", errname(tcp_loopback()));
    report_rlimits();
    report_fds();
    j_key("writes");
    j_open('{');
    for (int i = 0; i < n_writes; i++) j_kstr(writes[i], errname(try_write_in(writes[i])));
    j_close('}');
    j_key("reads");
    j_open('{');
    for (int i = 0; i < n_reads; i++) report_read(reads[i]);
    j_close('}');
    static char cg[8192];
    j_kstr("cgroup", read_small("/proc/self/cgroup", cg, sizeof(cg)) >= 0 ? cg : NULL);
    j_key("env");
    j_open('[');
    for (char **e = environ; *e; e++) j_str(*e);
    j_close(']');
    j_close('}');
    j_end();
    return 0;
}

/* ---- single-action subcommands: exit status = errno -------------------- */

/* Print {"op":op,"arg":arg,"result":"EPERM",...extra} and return e. */
static int finish(const char *op, const char *arg, int e)
{
    j_kstr("op", op);
    if (arg) j_kstr("arg", arg);
    j_kstr("result", errname(e));
    j_kint("errno", e);
    j_close('}');
    j_end();
    return e;
}

static int cmd_write(const char *path)
{
    j_open('{');
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int e = fd < 0 ? errno : 0;
    if (fd >= 0) {
        if (write(fd, "brig-probe\n", 11) != 11) e = errno ? errno : EIO;
        if (close(fd) < 0 && !e) e = errno;
    }
    return finish("write", path, e);
}

static int cmd_read(const char *path)
{
    j_open('{');
    static char buf[4097];
    ssize_t n = read_small(path, buf, sizeof(buf));
    int e = n < 0 ? errno : 0;
    if (n >= 0) {
        j_kint("bytes", n);
        j_kstr("data", buf);    /* first 4 KiB: enough for /etc/hostname and friends */
    }
    return finish("read", path, e);
}

/* Each entry tries one syscall in a way that succeeds on an unconfined
 * root process (where the kernel allows it) and returns the errno. */
static int fd_result(long fd)
{
    if (fd < 0) return errno;
    close((int)fd);
    return 0;
}
static int sys_getcwd(void)
{
    char b[4096];
    return syscall(SYS_getcwd, b, sizeof(b)) < 0 ? errno : 0;
}
int sys_keyctl(void)
{
    return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0) < 0 ? errno : 0;
}
int sys_bpf(void)
{
    union bpf_attr a;
    memset(&a, 0, sizeof(a));
    a.map_type = BPF_MAP_TYPE_ARRAY;
    a.key_size = 4;
    a.value_size = 4;
    a.max_entries = 1;
    return fd_result(syscall(SYS_bpf, BPF_MAP_CREATE, &a, sizeof(a)));
}
int sys_perf_event_open(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.type = PERF_TYPE_SOFTWARE;
    a.size = sizeof(a);
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.disabled = 1;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return fd_result(syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
}
int sys_io_uring_setup(void)
{
    char params[120];   /* struct io_uring_params; zeroed means defaults */
    memset(params, 0, sizeof(params));
    return fd_result(syscall(SYS_io_uring_setup, 1, params));
}
int sys_userfaultfd(void) { return fd_result(syscall(SYS_userfaultfd, O_CLOEXEC)); }
static int sys_unshare_user(void)
{
    return unshare(CLONE_NEWUSER) < 0 ? errno : 0;
}
static int sys_mount(void)
{
    if (mount("brig-probe", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") < 0) return errno;
    umount2("/tmp", MNT_DETACH);
    return 0;
}
/* PTRACE_SEIZE does not stop the tracee, and the tracer's exit detaches it.
 * When the probe is itself pid 1, a child tries, since nobody may trace
 * itself. */
static int sys_ptrace_pid1(void)
{
    if (getpid() != 1) return ptrace(PTRACE_SEIZE, 1, 0, 0) < 0 ? errno : 0;
    pid_t c = fork();
    if (c < 0) return errno;
    if (c == 0) _exit(ptrace(PTRACE_SEIZE, 1, 0, 0) < 0 ? errno : 0);
    int st;
    if (waitpid(c, &st, 0) < 0) return errno;
    return WIFEXITED(st) ? WEXITSTATUS(st) : EINTR;
}
/* ADDR_NO_RANDOMIZE is what an exploit would ask for (Docker's profile
 * denies it); the old persona is restored straight away. */
static int sys_personality(void)
{
    int old = personality(0xffffffff);
    if (old < 0) return errno;
    if (personality((unsigned long)old | ADDR_NO_RANDOMIZE) < 0) return errno;
    personality((unsigned long)old);
    return 0;
}

static const struct { const char *name; int (*fn)(void); } syscalls[] = {
    { "getcwd", sys_getcwd }, { "keyctl", sys_keyctl }, { "bpf", sys_bpf },
    { "perf_event_open", sys_perf_event_open }, { "io_uring_setup", sys_io_uring_setup },
    { "userfaultfd", sys_userfaultfd }, { "unshare-user", sys_unshare_user },
    { "mount", sys_mount }, { "ptrace-pid1", sys_ptrace_pid1 },
    { "personality", sys_personality },
};

static int cmd_syscall(const char *name)
{
    for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++) {
        if (strcmp(syscalls[i].name, name) == 0) {
            errno = 0;
            int e = syscalls[i].fn();
            j_open('{');
            return finish("syscall", name, e);
        }
    }
    fprintf(stderr, "brig-probe syscall: unknown name %s; known:", name);
    for (size_t i = 0; i < sizeof(syscalls) / sizeof(syscalls[0]); i++)
        fprintf(stderr, " %s", syscalls[i].name);
    fputc('\n', stderr);
    return EINVAL;
}

/* Numeric addresses only: a static glibc cannot use NSS, and the tests
 * care about reachability, not name resolution. 3 s timeout. */
static int cmd_connect(const char *host, const char *port)
{
    struct sockaddr_storage ss = { 0 };
    socklen_t len;
    int p = atoi(port);
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    j_open('{');
    if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)p);
        len = sizeof(*s4);
    } else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)p);
        len = sizeof(*s6);
    } else {
        return finish("connect", host, EINVAL);
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return finish("connect", host, errno);
    int e = 0;
    if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
        e = errno;
        if (e == EINPROGRESS) {
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            int r = poll(&pfd, 1, 3000);
            socklen_t el = sizeof(e);
            if (r == 0) e = ETIMEDOUT;
            else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0) e = errno;
        }
    }
    close(fd);
    j_kint("port", p);
    return finish("connect", host, e);
}

static volatile sig_atomic_t got_signal;
static void on_signal(int sig) { got_signal = sig; }

/* As pid 1 of a namespace, signals without a handler are ignored, so the
 * usual termination signals get one: the probe then exits 128+N. */
static int cmd_sleep(const char *secs)
{
    static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
    struct sigaction sa = { .sa_handler = on_signal };
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) sigaction(sigs[i], &sa, NULL);
    double s = atof(secs);
    j_open('{');
    j_kstr("op", "sleep");
    j_kint("pid", getpid());
    j_close('}');
    j_end();
    struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !got_signal) {}
    if (got_signal) {
        fprintf(stderr, "brig-probe: got signal %d\n", (int)got_signal);
        return 128 + got_signal;
    }
    return 0;
}

/* Die by sig. pid 1 cannot signal itself to death, but a real fault is
 * forced on it, so fault signals are produced as faults. No core dump. */
static int cmd_kill_self(const char *name)
{
    int sig = parse_signal(name);
    if (sig < 0) {
        fprintf(stderr, "brig-probe kill-self: unknown signal %s\n", name);
        return EINVAL;
    }
    struct rlimit no_core = { 0, 0 };
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    fflush(stdout);
    kill(getpid(), sig);
    if (sig == SIGSEGV) { volatile uintptr_t nowhere = 8; *(volatile int *)nowhere = 1; }
    if (sig == SIGFPE) { volatile int num = 1, zero = 0; zero = num / zero; }
    if (sig == SIGILL) __builtin_trap();
    j_open('{');
    j_kstr("note", "still alive: pid 1 ignores this signal from itself");
    return finish("kill-self", name, EPERM);
}

/* Fork n children that wait on a pipe, count how many forks worked, then
 * release and reap them all. A pids limit shows up as EAGAIN. */
static int cmd_fork_bomb(const char *count)
{
    long n = atol(count);
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        j_open('{');
        return finish("fork-bomb", count, errno);
    }
    long ok = 0;
    int first = 0;
    for (long i = 0; i < n; i++) {
        pid_t c = fork();
        if (c < 0) { if (!first) first = errno; continue; }
        if (c == 0) {
            char b;
            close(p[1]);
            while (read(p[0], &b, 1) < 0 && errno == EINTR) {}
            _exit(0);
        }
        ok++;
    }
    close(p[1]);    /* EOF releases every child */
    close(p[0]);
    while (wait(NULL) > 0 || errno == EINTR) {}
    j_open('{');
    j_kint("requested", n);
    j_kint("forked", ok);
    return finish("fork-bomb", count, first);
}

static int usage(void)
{
    fputs("usage: brig-probe report [--read PATH]... [--write DIR]...\n"
          "       brig-probe write PATH | read PATH | syscall NAME | connect HOST PORT\n"
          "       brig-probe sleep SECONDS | exit N | kill-self SIG | fork-bomb N\n"
          "       brig-probe boundaries [--write DIR]... [--tmpfs DIR]... [--fork N]\n"
          "       brig-probe -- CMD [ARG]...\n", stderr);
    return EINVAL;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage();
    const char *cmd = argv[1];
    if (!strcmp(cmd, "report")) return cmd_report(argc - 2, argv + 2);
    if (!strcmp(cmd, "boundaries")) return probe_boundaries(argc - 2, argv + 2);
    if (!strcmp(cmd, "--")) return probe_init(argc - 2, argv + 2);
    if (argc == 3 && !strcmp(cmd, "write")) return cmd_write(argv[2]);
    if (argc == 3 && !strcmp(cmd, "read")) return cmd_read(argv[2]);
    if (argc == 3 && !strcmp(cmd, "syscall")) return cmd_syscall(argv[2]);
    if (argc == 4 && !strcmp(cmd, "connect")) return cmd_connect(argv[2], argv[3]);
    if (argc == 3 && !strcmp(cmd, "sleep")) return cmd_sleep(argv[2]);
    if (argc == 3 && !strcmp(cmd, "exit")) {
        j_open('{');
        j_kstr("op", "exit");
        j_kint("code", atoi(argv[2]));
        j_close('}');
        j_end();
        return atoi(argv[2]);
    }
    if (argc == 3 && !strcmp(cmd, "kill-self")) return cmd_kill_self(argv[2]);
    if (argc == 3 && !strcmp(cmd, "fork-bomb")) return cmd_fork_bomb(argv[2]);
    return usage();
}
