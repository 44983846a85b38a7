/* seccomp_compile + seccomp_bpf_load: filters are loaded in a forked child
 * and judged by what its syscalls return there. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "linux/seccomp.h"
#include "util/error.h"
#include "sec_child.h"

/* Linux UAPI values, without <linux/seccomp.h> (runtime/linux/seccomp.h
 * shadows it on the test include path). */
#define T_FLAG_LOG (1U << 1)
#define T_FLAG_WAIT_KILLABLE_RECV (1U << 5)

#define STRV(...) ((char *[]){ __VA_ARGS__, NULL })
#define STRV_LEN(...) (sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *))
/* Rule initializer: .names and .n_names. */
#define NAMES(...) .names = STRV(__VA_ARGS__), .n_names = STRV_LEN(__VA_ARGS__)
/* Assign an array field and its count. */
#define SET_STRV(obj, field, ...) \
    ((obj).field = STRV(__VA_ARGS__), (obj).n_##field = STRV_LEN(__VA_ARGS__))

static struct brig_seccomp sc_base(enum brig_scmp_action def)
{
    return (struct brig_seccomp){ .present = true, .default_action = def };
}

static struct brig_bpf *compile_ok(const struct brig_seccomp *sc)
{
    struct brig_bpf *bpf = NULL;
    struct brig_error *err = NULL;
    int r = seccomp_compile(sc, &bpf, &err);
    cr_assert_eq(r, 0, "seccomp_compile: %s", err ? err->msg : "?");
    cr_assert_not_null(bpf);
    cr_assert_gt(bpf->n_insns, 0);
    brig_error_free(err);
    return bpf;
}

static void compile_fails(const struct brig_seccomp *sc, const char *expect)
{
    struct brig_bpf *bpf = (struct brig_bpf *)0x1;
    struct brig_error *err = NULL;
    int r = seccomp_compile(sc, &bpf, &err);
    cr_assert_eq(r, -1);
    cr_assert_null(bpf, "no filter on failure");
    cr_assert_not_null(err);
    cr_assert(strstr(err->msg, expect) != NULL, "message \"%s\" lacks \"%s\"", err->msg, expect);
    brig_error_free(err);
}

/* Child side: no_new_privs, load, then the probe. Exit 100+ on setup errors. */
struct probe {
    const struct brig_bpf *bpf;
    void (*fn)(int outfd);
};

static int probe_child(void *arg, int outfd)
{
    struct probe *p = arg;
    struct brig_error *err = NULL;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return 100;
    if (seccomp_bpf_load(p->bpf, &err) < 0) {
        sec_out(outfd, "load: %s", err->msg);
        return 101;
    }
    p->fn(outfd);
    return 0;
}

static void run_probe(const struct brig_bpf *bpf, void (*fn)(int), struct sec_child *r)
{
    struct probe p = { bpf, fn };
    cr_assert_eq(sec_child_run(probe_child, &p, r), 0);
}

/* "ret errno" of a raw syscall, so the filter's answer is not hidden by libc. */
#define REPORT(fd, label, call)                                              \
    do {                                                                     \
        errno = 0;                                                           \
        long r_ = (call);                                                    \
        sec_out(fd, "%s=%ld/%d ", label, r_ < 0 ? -1L : 0L, r_ < 0 ? errno : 0); \
    } while (0)

static void probe_getcwd_keyctl(int fd)
{
    char buf[256];
    REPORT(fd, "getcwd", syscall(SYS_getcwd, buf, sizeof(buf)));
    REPORT(fd, "keyctl", syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
    REPORT(fd, "getppid", syscall(SYS_getppid));
}

Test(seccomp, errno_ret_under_allow)
{
    struct brig_seccomp_rule rules[] = {
        { NAMES("getcwd"), .action = BRIG_SCMP_ERRNO, .has_errno_ret = true, .errno_ret = ENOTSUP },
        { NAMES("keyctl", "add_key"), .action = BRIG_SCMP_ERRNO },
    };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ALLOW);
    sc.syscalls = rules;
    sc.n_syscalls = 2;
    struct brig_bpf *bpf = compile_ok(&sc);
    cr_assert_eq(bpf->flags, 0);
    cr_assert_not(bpf->notify);

    struct sec_child r;
    run_probe(bpf, probe_getcwd_keyctl, &r);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    char expect[128];
    snprintf(expect, sizeof(expect), "getcwd=-1/%d keyctl=-1/%d getppid=0/0 ", ENOTSUP, EPERM);
    cr_assert_str_eq(r.out, expect);
    seccomp_bpf_free(bpf);
}

static void probe_getppid(int fd)
{
    REPORT(fd, "getppid", syscall(SYS_getppid));
    REPORT(fd, "getuid", syscall(SYS_getuid));
}

/* Denying default with an allow list; an unknown name in the allow rule is
 * skipped, not an error. */
Test(seccomp, deny_default_allow_list_skips_unknown)
{
    struct brig_seccomp_rule rules[] = {
        { NAMES("exit_group", "exit", "write", "brig_no_such_syscall", "getuid"),
          .action = BRIG_SCMP_ALLOW },
    };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ERRNO);
    sc.has_default_errno_ret = true;
    sc.default_errno_ret = ENOSYS;
    sc.syscalls = rules;
    sc.n_syscalls = 1;
    struct brig_bpf *bpf = compile_ok(&sc);

    struct sec_child r;
    run_probe(bpf, probe_getppid, &r);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    char expect[128];
    snprintf(expect, sizeof(expect), "getppid=-1/%d getuid=0/0 ", ENOSYS);
    cr_assert_str_eq(r.out, expect);
    seccomp_bpf_free(bpf);
}

Test(seccomp, unknown_syscall_in_deny_rule_under_allow_fails)
{
    struct brig_seccomp_rule rules[] = {
        { NAMES("getcwd"), .action = BRIG_SCMP_ERRNO },
        { NAMES("keyctl"), .action = BRIG_SCMP_ALLOW },   /* same as default: skipped */
        { NAMES("getppid"), .action = BRIG_SCMP_KILL },
        { NAMES("mount", "foo"), .action = BRIG_SCMP_ERRNO },
    };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ALLOW);
    sc.syscalls = rules;
    sc.n_syscalls = 4;
    compile_fails(&sc, "linux.seccomp.syscalls[3].names[1]: unknown syscall \"foo\"");
    sc.default_action = BRIG_SCMP_LOG;   /* LOG allows too */
    compile_fails(&sc, "linux.seccomp.syscalls[3].names[1]: unknown syscall \"foo\"");
}

Test(seccomp, rule_with_default_action_is_skipped_even_if_unknown)
{
    struct brig_seccomp_rule rules[] = {
        { NAMES("brig_no_such_syscall"), .action = BRIG_SCMP_ALLOW },
        { NAMES("also_unknown"), .action = BRIG_SCMP_LOG },   /* allowing too: skipped */
    };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ALLOW);
    sc.syscalls = rules;
    sc.n_syscalls = 2;
    seccomp_bpf_free(compile_ok(&sc));

    /* Under ERRNO, a deny rule with another errno naming an unknown syscall
     * is skipped: the syscall is denied by the default anyway. */
    struct brig_seccomp_rule deny[] = {
        { NAMES("nope"), .action = BRIG_SCMP_ERRNO, .has_errno_ret = true, .errno_ret = 1 },
    };
    sc = sc_base(BRIG_SCMP_ERRNO);
    sc.syscalls = deny;
    sc.n_syscalls = 1;
    seccomp_bpf_free(compile_ok(&sc));
}

static void probe_personality(int fd)
{
    REPORT(fd, "query", syscall(SYS_personality, 0xffffffffUL));
    REPORT(fd, "linux", syscall(SYS_personality, (unsigned long)PER_LINUX));
    REPORT(fd, "one", syscall(SYS_personality, 1UL));
    REPORT(fd, "two", syscall(SYS_personality, 2UL));
    REPORT(fd, "masked", syscall(SYS_personality, 0x0123UL));
    REPORT(fd, "masked_no", syscall(SYS_personality, 0x0223UL));
    REPORT(fd, "prio_both", syscall(SYS_getpriority, PRIO_PROCESS, 999999));
    REPORT(fd, "prio_one", syscall(SYS_getpriority, PRIO_PROCESS, 0));
}

/* EQ on one argument; two conditions on the same index are ORed; two on
 * different indexes are ANDed; MASKED_EQ takes value as the mask. */
Test(seccomp, argument_comparisons)
{
    struct brig_seccomp_arg query[] = { { .index = 0, .op = BRIG_SCMP_CMP_EQ, .value = 0xffffffff } };
    struct brig_seccomp_arg either[] = {
        { .index = 0, .op = BRIG_SCMP_CMP_EQ, .value = 1 },
        { .index = 0, .op = BRIG_SCMP_CMP_EQ, .value = 2 },
    };
    struct brig_seccomp_arg masked[] = {
        { .index = 0, .op = BRIG_SCMP_CMP_MASKED_EQ, .value = 0xff00, .value_two = 0x0100 },
    };
    struct brig_seccomp_arg both[] = {
        { .index = 0, .op = BRIG_SCMP_CMP_EQ, .value = PRIO_PROCESS },
        { .index = 1, .op = BRIG_SCMP_CMP_GE, .value = 999999 },
    };
    struct brig_seccomp_rule rules[] = {
        { NAMES("personality"), .action = BRIG_SCMP_ERRNO, .has_errno_ret = true,
          .errno_ret = EACCES, .args = query, .n_args = 1 },
        { NAMES("personality"), .action = BRIG_SCMP_ERRNO, .has_errno_ret = true,
          .errno_ret = EDOM, .args = either, .n_args = 2 },
        { NAMES("personality"), .action = BRIG_SCMP_ERRNO, .has_errno_ret = true,
          .errno_ret = ERANGE, .args = masked, .n_args = 1 },
        { NAMES("getpriority"), .action = BRIG_SCMP_ERRNO, .has_errno_ret = true,
          .errno_ret = EBADE, .args = both, .n_args = 2 },
    };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ALLOW);
    sc.syscalls = rules;
    sc.n_syscalls = 4;
    struct brig_bpf *bpf = compile_ok(&sc);

    struct sec_child r;
    run_probe(bpf, probe_personality, &r);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    char expect[256];
    snprintf(expect, sizeof(expect),
             "query=-1/%d linux=0/0 one=-1/%d two=-1/%d masked=-1/%d masked_no=0/0 "
             "prio_both=-1/%d prio_one=0/0 ", EACCES, EDOM, EDOM, ERANGE, EBADE);
    cr_assert_str_eq(r.out, expect);
    seccomp_bpf_free(bpf);
}

Test(seccomp, argument_errors_name_the_field)
{
    struct brig_seccomp_arg bad[] = { { .index = 6, .op = BRIG_SCMP_CMP_EQ, .value = 1 } };
    struct brig_seccomp_rule rules[] = {
        { NAMES("personality"), .action = BRIG_SCMP_ERRNO, .args = bad, .n_args = 1 },
    };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ALLOW);
    sc.syscalls = rules;
    sc.n_syscalls = 1;
    compile_fails(&sc, "linux.seccomp.syscalls[0].args[0].index: 6 is out of range");
}

static void probe_kill(int fd)
{
    sec_out(fd, "before ");
    syscall(SYS_getppid);
    sec_out(fd, "survived");
}

static void expect_sigsys(enum brig_scmp_action action)
{
    struct brig_seccomp_rule rules[] = { { NAMES("getppid"), .action = action } };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ALLOW);
    sc.syscalls = rules;
    sc.n_syscalls = 1;
    struct brig_bpf *bpf = compile_ok(&sc);
    struct sec_child r;
    run_probe(bpf, probe_kill, &r);
    cr_assert_eq(sec_signal(&r), SIGSYS, "action %d: status 0x%x out \"%s\"", action, r.status,
                 r.out);
    cr_assert_str_eq(r.out, "before ");
    seccomp_bpf_free(bpf);
}

Test(seccomp, kill_and_trap_actions)
{
    expect_sigsys(BRIG_SCMP_KILL);
    expect_sigsys(BRIG_SCMP_KILL_THREAD);
    expect_sigsys(BRIG_SCMP_KILL_PROCESS);
    expect_sigsys(BRIG_SCMP_TRAP);   /* SIGSYS, default disposition: dies */
}

Test(seccomp, trace_and_log_actions)
{
    /* Without a tracer, SECCOMP_RET_TRACE fails the syscall with ENOSYS. */
    struct brig_seccomp_rule rules[] = {
        { NAMES("getppid"), .action = BRIG_SCMP_TRACE },
        { NAMES("getuid"), .action = BRIG_SCMP_LOG },
    };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ALLOW);
    sc.syscalls = rules;
    sc.n_syscalls = 2;
    struct brig_bpf *bpf = compile_ok(&sc);
    struct sec_child r;
    run_probe(bpf, probe_getppid, &r);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    char expect[128];
    snprintf(expect, sizeof(expect), "getppid=-1/%d getuid=0/0 ", ENOSYS);
    cr_assert_str_eq(r.out, expect);
    seccomp_bpf_free(bpf);
}

Test(seccomp, errno_ret_only_with_errno_or_trace)
{
    struct brig_seccomp_rule rules[] = {
        { NAMES("getcwd"), .action = BRIG_SCMP_KILL, .has_errno_ret = true, .errno_ret = 1 },
    };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ALLOW);
    sc.syscalls = rules;
    sc.n_syscalls = 1;
    compile_fails(&sc, "linux.seccomp.syscalls[0].errnoRet: only valid with");

    sc = sc_base(BRIG_SCMP_ALLOW);
    sc.has_default_errno_ret = true;
    sc.default_errno_ret = 1;
    compile_fails(&sc, "linux.seccomp.defaultErrnoRet: only valid with");

    sc = sc_base(BRIG_SCMP_ERRNO);
    sc.has_default_errno_ret = true;
    sc.default_errno_ret = 70000;
    compile_fails(&sc, "linux.seccomp.defaultErrnoRet: 70000 is out of range");
}

Test(seccomp, architectures)
{
    struct brig_seccomp_rule rules[] = { { NAMES("getcwd"), .action = BRIG_SCMP_ERRNO } };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ALLOW);
    sc.syscalls = rules;
    sc.n_syscalls = 1;
    struct brig_bpf *native = compile_ok(&sc);

    SET_STRV(sc, architectures, "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32");
    struct brig_bpf *multi = compile_ok(&sc);
    /* The x86 (i386) syscall numbers need their own checks. */
    cr_assert_gt(multi->n_insns, native->n_insns);

    struct sec_child r;
    run_probe(multi, probe_getcwd_keyctl, &r);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert(strncmp(r.out, "getcwd=-1/1 ", 12) == 0, "%s", r.out);
    seccomp_bpf_free(native);
    seccomp_bpf_free(multi);

    SET_STRV(sc, architectures, "SCMP_ARCH_X86_64", "SCMP_ARCH_VAX");
    compile_fails(&sc, "linux.seccomp.architectures[1]: architecture \"SCMP_ARCH_VAX\"");
    SET_STRV(sc, architectures, "x86_64");
    compile_fails(&sc, "linux.seccomp.architectures[0]");
}

/* An arch whose calls never reach this kernel (aarch64 on x86_64, as brig's
 * default profile lists both) compiles to no section: the same program as
 * without it, instruction for instruction. Its compat arches are kept. */
Test(seccomp, unreachable_arch_adds_nothing)
{
#if defined(__x86_64__) || defined(__aarch64__)
    struct brig_seccomp_rule rules[] = { { NAMES("getcwd", "arm_fadvise64_64", "_llseek"),
                                           .action = BRIG_SCMP_ALLOW } };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ERRNO);
    sc.syscalls = rules;
    sc.n_syscalls = 1;
#if defined(__x86_64__)
#define T_NATIVE "SCMP_ARCH_X86_64"
#define T_FOREIGN "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM", "SCMP_ARCH_PPC64LE"
#define T_COMPAT "SCMP_ARCH_X86"
#else
#define T_NATIVE "SCMP_ARCH_AARCH64"
#define T_FOREIGN "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_PPC64LE"
#define T_COMPAT "SCMP_ARCH_ARM"
#endif
    SET_STRV(sc, architectures, T_NATIVE);
    struct brig_bpf *native = compile_ok(&sc);
    SET_STRV(sc, architectures, T_NATIVE, T_FOREIGN);
    struct brig_bpf *foreign = compile_ok(&sc);
    SET_STRV(sc, architectures, T_NATIVE, T_COMPAT);
    cr_assert_eq(foreign->n_insns, native->n_insns, "a foreign arch compiled a section");
    cr_assert_eq(memcmp(foreign->insns, native->insns, native->n_insns * 8), 0);   /* struct sock_filter */
    struct brig_bpf *compat = compile_ok(&sc);
    cr_assert_gt(compat->n_insns, native->n_insns, "the compat arch's section is gone");
    /* still an arch libseccomp knows, or the config is refused as before */
    SET_STRV(sc, architectures, T_NATIVE, T_FOREIGN, "SCMP_ARCH_VAX");
    compile_fails(&sc, "linux.seccomp.architectures[4]: architecture \"SCMP_ARCH_VAX\"");
    /* nor one libseccomp refuses beside the native arch (another byte order:
     * a review found it accepted once its section was skipped) */
    SET_STRV(sc, architectures, T_NATIVE, "SCMP_ARCH_PPC64");
    compile_fails(&sc, "linux.seccomp.architectures[1] (SCMP_ARCH_PPC64)");
    seccomp_bpf_free(native);
    seccomp_bpf_free(foreign);
    seccomp_bpf_free(compat);
#else
    cr_skip_test("the compat arches are known for x86_64 and aarch64 only");
#endif
}

Test(seccomp, flags)
{
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ALLOW);
    SET_STRV(sc, flags, "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV");
    struct brig_bpf *bpf = compile_ok(&sc);
    /* WAIT_KILLABLE_RECV changes nothing without a NOTIFY rule: dropped. */
    cr_assert_eq(bpf->flags, T_FLAG_LOG);
    struct sec_child r;
    run_probe(bpf, probe_getppid, &r);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    seccomp_bpf_free(bpf);

    SET_STRV(sc, flags, "SECCOMP_FILTER_FLAG_SPEC_ALLOW", "SECCOMP_FILTER_FLAG_BOGUS");
    compile_fails(&sc, "linux.seccomp.flags[1]: unknown flag \"SECCOMP_FILTER_FLAG_BOGUS\"");
}

static int notify_child(void *arg, int outfd)
{
    const struct brig_bpf *bpf = arg;
    struct brig_error *err = NULL;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) return 100;
    if (seccomp_bpf_load(bpf, &err) == 0) return 101;   /* must refuse: fd would be lost */
    sec_out(outfd, "%s|", err->msg);
    int fd = -1;
    err = NULL;
    if (seccomp_bpf_load_listener(bpf, &fd, &err) < 0) {
        sec_out(outfd, "load: %s", err->msg);
        return 102;
    }
    sec_out(outfd, "fd=%s", fd >= 0 ? "ok" : "none");
    return 0;
}

Test(seccomp, notify)
{
    struct brig_seccomp_rule rules[] = { { NAMES("getppid"), .action = BRIG_SCMP_NOTIFY } };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ALLOW);
    sc.syscalls = rules;
    sc.n_syscalls = 1;
    compile_fails(&sc, "linux.seccomp.listenerPath: required");

    sc.listener_path = "/run/agent.sock";
    SET_STRV(sc, flags, "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV");
    struct brig_bpf *bpf = compile_ok(&sc);
    cr_assert(bpf->notify);
    cr_assert_eq(bpf->flags, T_FLAG_WAIT_KILLABLE_RECV);
    struct sec_child r;
    cr_assert_eq(sec_child_run(notify_child, bpf, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert(strstr(r.out, "SCMP_ACT_NOTIFY") != NULL && strstr(r.out, "|fd=ok") != NULL,
              "%s", r.out);
    seccomp_bpf_free(bpf);

    rules[0].names = STRV("write");
    compile_fails(&sc, "linux.seccomp.syscalls[0].names[0]: SCMP_ACT_NOTIFY cannot be used");
    sc = sc_base(BRIG_SCMP_NOTIFY);
    sc.listener_path = "/run/agent.sock";
    compile_fails(&sc, "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY");
}

/* A Docker-sized allow list compiles well within what `create` can afford
 * (the bound is loose on purpose: it catches pathologies, not jitter). */
Test(seccomp, large_profile_compiles_fast)
{
    static const char *const names[] = {
        "accept", "accept4", "access", "bind", "brk", "capget", "capset", "chdir", "chmod",
        "chown", "clock_getres", "clock_gettime", "clock_nanosleep", "close", "connect",
        "copy_file_range", "creat", "dup", "dup2", "dup3", "epoll_create", "epoll_create1",
        "epoll_ctl", "epoll_pwait", "epoll_wait", "eventfd", "eventfd2", "execve", "execveat",
        "exit", "exit_group", "faccessat", "fadvise64", "fallocate", "fchdir", "fchmod",
        "fchmodat", "fchown", "fchownat", "fcntl", "fdatasync", "fgetxattr", "flistxattr",
        "flock", "fork", "fstat", "fstatfs", "fsync", "ftruncate", "futex", "getcwd",
        "getdents", "getdents64", "getegid", "geteuid", "getgid", "getgroups", "getpeername",
        "getpgid", "getpgrp", "getpid", "getppid", "getpriority", "getrandom", "getresgid",
        "getresuid", "getrlimit", "getrusage", "getsid", "getsockname", "getsockopt", "gettid",
        "gettimeofday", "getuid", "getxattr", "ioctl", "kill", "lchown", "link", "linkat",
        "listen", "lseek", "lstat", "madvise", "mkdir", "mkdirat", "mmap", "mprotect", "mremap",
        "munmap", "nanosleep", "newfstatat", "open", "openat", "pipe", "pipe2", "poll", "ppoll",
        "prctl", "pread64", "prlimit64", "pselect6", "pwrite64", "read", "readlink",
        "readlinkat", "readv", "recvfrom", "recvmsg", "rename", "renameat", "renameat2",
        "rmdir", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sched_yield", "select",
        "sendmsg", "sendto", "set_robust_list", "set_tid_address", "setgid", "setgroups",
        "setsockopt", "setuid", "shutdown", "sigaltstack", "socket", "socketpair", "stat",
        "statfs", "statx", "symlink", "symlinkat", "sysinfo", "tgkill", "umask", "uname",
        "unlink", "unlinkat", "utimensat", "vfork", "wait4", "waitid", "write", "writev",
        NULL,
    };
    struct brig_seccomp_arg pers[] = {
        { .index = 0, .op = BRIG_SCMP_CMP_EQ, .value = 0 },
        { .index = 0, .op = BRIG_SCMP_CMP_EQ, .value = 8 },
        { .index = 0, .op = BRIG_SCMP_CMP_EQ, .value = 0xffffffff },
    };
    struct brig_seccomp_arg clone_flags[] = {
        { .index = 0, .op = BRIG_SCMP_CMP_MASKED_EQ, .value = 0x7e020000, .value_two = 0 },
    };
    struct brig_seccomp_rule rules[] = {
        { .names = (char **)names, .n_names = sizeof(names) / sizeof(names[0]) - 1,
          .action = BRIG_SCMP_ALLOW },
        { NAMES("personality"), .action = BRIG_SCMP_ALLOW, .args = pers, .n_args = 3 },
        { NAMES("clone"), .action = BRIG_SCMP_ALLOW, .args = clone_flags, .n_args = 1 },
    };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ERRNO);
    SET_STRV(sc, architectures, "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32");
    sc.syscalls = rules;
    sc.n_syscalls = 3;

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct brig_bpf *bpf = compile_ok(&sc);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    cr_log_info("compiled %zu names for 3 arches into %zu insns in %.2f ms",
                rules[0].n_names + 2, bpf->n_insns, ms);
    cr_assert_lt(ms, 500.0, "compile took %.1f ms", ms);
    seccomp_bpf_free(bpf);
}

/* Docker's profile names syscalls that exist on other arches only
 * ("_llseek", "socketcall", "arm_fadvise64_64"); with several arches they
 * must compile, and argument rules on syscalls multiplexed on x86
 * (socket via socketcall) too. */
Test(seccomp, arch_specific_names_multiarch)
{
    struct brig_seccomp_arg not_vsock[] = { { .index = 0, .op = BRIG_SCMP_CMP_NE, .value = 40 } };
    struct brig_seccomp_rule rules[] = {
        { NAMES("_llseek", "socketcall", "ipc", "arm_fadvise64_64", "s390_pci_mmio_read",
                "riscv_flush_icache", "exit_group", "write"), .action = BRIG_SCMP_ALLOW },
        { NAMES("socket"), .action = BRIG_SCMP_ALLOW, .args = not_vsock, .n_args = 1 },
    };
    struct brig_seccomp sc = sc_base(BRIG_SCMP_ERRNO);
    SET_STRV(sc, architectures, "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32");
    sc.syscalls = rules;
    sc.n_syscalls = 2;
    seccomp_bpf_free(compile_ok(&sc));

    /* The same under an allowing default with deny rules: known somewhere,
     * so not "unknown", and no error. */
    rules[0].action = BRIG_SCMP_ERRNO;
    rules[1].action = BRIG_SCMP_ERRNO;
    sc.default_action = BRIG_SCMP_ALLOW;
    seccomp_bpf_free(compile_ok(&sc));
}
