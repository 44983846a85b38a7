/* config.md "Process": from a prepared process to execve. One copy of the
 * security-critical order, used by the init and by exec'd processes. */
#include "proc_exec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/strutil.h"
#include "caps.h"
#include "identity.h"
#include "process_attrs.h"

/* /etc/passwd larger than this is not read (HOME=/). */
#define PROC_PASSWD_MAX (4u << 20)
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* A path execve would take, opened inside the root (RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS): a relative one from process.cwd, as execve will
 * see it once the cwd is entered. Fills st; -1 with errno (ELOOP for a
 * /proc magic link such as /proc/self/fd/N on the way). */
static int proc_stat_in_root(int rootfd, const struct brig_process *p, const char *path,
                             struct stat *st)
{
    autofree char *rel = NULL;
    if (path[0] != '/') rel = brig_asprintf("%s/%s", p->cwd != NULL ? p->cwd : "/", path);
    /* errno only: in the fresh clone, an error (1 KB) made per PATH miss
     * was a large malloc that consolidated the parent's fastbins, a
     * copy-on-write fault per heap page it wrote. */
    autoclose int fd = brig_open_in_root_errno(rootfd, rel != NULL ? rel : path, O_PATH, 0);
    if (fd < 0) return -1;
    return fstat(fd, st);
}

/* The program is found through the root only, never through a host fd
 * brig holds (a path like /proc/self/fd/N/../../bin/sh): such a path is
 * refused here, before "created". execve then takes the same path by name,
 * not the opened fd (execveat would hand a #! script /dev/fd/N as its $0
 * and need N open in the new program): by then every fd above the
 * preserved ones but the sync socket is closed and the cwd is checked to
 * be inside the root (proc_verify_cwd), so the kernel's own lookup of the
 * path, of a #! interpreter and of PT_INTERP has nothing but the root to
 * walk, with no more rights than the program itself. */
/* A failure of the program itself (the process never runs): 127 when it
 * was not found, 126 when it could not be executed (as a shell says). */
static int proc_exec_failed(struct brig_error **err, int errnum)
{
    if (err != NULL && *err != NULL) (*err)->exec_status = errnum == ENOENT || errnum == ENOTDIR ? 127 : 126;
    return -1;
}

int proc_find_exec(const struct brig_process *p, char **out, struct brig_error **err)
{
    const char *arg0 = p->args[0];
    autoclose int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return brig_fail(err, errno, "exec: open /");
    struct stat st;
    if (strchr(arg0, '/') != NULL) {
        if (proc_stat_in_root(rootfd, p, arg0, &st) < 0) {
            if (errno == ELOOP)
                return brig_fail(err, errno, "process.args[0] %s: a /proc magic link (or a "
                                 "symlink loop) on the way: the program must be a path inside "
                                 "the container's root", arg0);
            int e = errno;
            brig_fail(err, e, "exec: %s", arg0);
            return proc_exec_failed(err, e);
        }
        if (!S_ISREG(st.st_mode)) {
            brig_failx(err, "exec: %s: not a regular file", arg0);
            return proc_exec_failed(err, EACCES);
        }
        *out = brig_strdup(arg0);
        return 0;
    }
    const char *path = DEFAULT_PATH;
    for (size_t i = 0; i < p->n_env; i++)
        if (brig_str_has_prefix(p->env[i], "PATH=")) path = p->env[i] + 5;
    autofree char *dirs = brig_strdup(path);
    char *save = NULL;
    int seen = ENOENT;          /* as execvp: EACCES if one was there but not executable */
    for (char *d = strtok_r(dirs, ":", &save); d != NULL; d = strtok_r(NULL, ":", &save)) {
        autofree char *cand = brig_asprintf("%s/%s", *d ? d : ".", arg0);
        if (proc_stat_in_root(rootfd, p, cand, &st) < 0) continue;
        if (S_ISREG(st.st_mode) && (st.st_mode & 0111)) {
            *out = steal_ptr(&cand);
            return 0;
        }
        seen = EACCES;
    }
    brig_failx(err, "exec: \"%s\": executable file not found in $PATH", arg0);
    return proc_exec_failed(err, seen);
}

/* The home directory of uid in passwd text: field 6 of the first line
 * whose field 3 is uid (as runc's user.GetExecUser), or false. */
static bool proc_passwd_home(const char *text, uint32_t uid, char *out, size_t len)
{
    for (const char *l = text; *l != '\0';) {
        const char *nl = strchr(l, '\n');
        size_t n = nl != NULL ? (size_t)(nl - l) : strlen(l);
        const char *f[7];
        size_t nf = 0;
        f[nf++] = l;
        for (const char *c = l; c < l + n && nf < 7; c++)
            if (*c == ':') f[nf++] = c + 1;
        char *end = NULL;
        errno = 0;
        unsigned long v = nf == 7 ? strtoul(f[2], &end, 10) : 0;
        if (nf == 7 && errno == 0 && end != f[2] && *end == ':' && v == uid) {
            size_t hl = (size_t)(f[6] - 1 - f[5]);
            if (hl == 0 || hl >= len) return false;
            memcpy(out, f[5], hl);
            out[hl] = '\0';
            return true;
        }
        l += n;
        if (*l == '\n') l++;
    }
    return false;
}

int proc_home_default(int rootfd, const struct brig_process *p, char **home_env,
                      struct brig_error **err)
{
    *home_env = NULL;
    for (size_t i = 0; i < p->n_env; i++)
        if (brig_str_has_prefix(p->env[i], "HOME=")) return 0;
    /* Looked up inside the root (a symlink, as /etc/passwd ->
     * ../usr/share/passwd, is followed there as every runtime follows it,
     * and can never lead out: RESOLVE_IN_ROOT), judged by the O_PATH fd and
     * read only if a regular file (never a device or a fifo), bounded; a
     * passwd that cannot be read, or lacks the uid, gives "/" as runc and
     * crun do. Its content is never echoed. */
    char home[PATH_MAX] = "/";
    autoerr struct brig_error *e = NULL;
    autofree char *text = NULL;
    autoclose int pw = brig_open_in_root(rootfd, "/etc/passwd", O_PATH | O_CLOEXEC, 0, &e);
    if (pw < 0 || brig_read_regular_fd(pw, "/etc/passwd", PROC_PASSWD_MAX, &text, NULL, &e) < 0 ||
        !proc_passwd_home(text, p->user.uid, home, sizeof(home))) {
        brig_debug("HOME: uid %u not found in /etc/passwd (%s): HOME=/", p->user.uid,
                   e != NULL ? e->msg : "not listed");
        snprintf(home, sizeof(home), "/");
    }
    *home_env = brig_asprintf("HOME=%s", home);
    return 0;
}

int cwd_make(int rootfd, const struct brig_process *p, struct brig_error **err)
{
    if (p->cwd == NULL || p->cwd[0] != '/')
        return brig_failx(err, "process.cwd: must be an absolute path");
    /* 0755 whatever brig's umask, owned by the container's root, resolved
     * inside the root (a symlink on the way cannot lead out of it). */
    mode_t old = umask(022);
    int fd = brig_mkdir_in_root(rootfd, p->cwd, 0755, err);
    umask(old);
    if (fd < 0) return brig_wrap(err, "process.cwd (%s)", p->cwd);
    close(fd);
    return 0;
}

/* runc's verifyCwd: getcwd(2) names a cwd outside the root
 * "(unreachable)/...". The cwd was entered by a lookup inside the root
 * (cwd_apply); this proves it at the last moment, since a relative path, a
 * #! interpreter or PT_INTERP is looked up from it. The syscall, not
 * glibc's getcwd: for a path longer than the buffer (ENAMETOOLONG) that
 * falls back to a walk up with opendir, which mallocs after the identity
 * switch (util/noheap.h). */
static int proc_verify_cwd(struct brig_error **err)
{
    char buf[PATH_MAX];
    long n = syscall(SYS_getcwd, buf, sizeof(buf));
    if (n > 0 && buf[0] == '/') return 0;
    if (n >= 0)
        return brig_failx(err, "process.cwd: the working directory is outside the container's "
                               "root");
    return brig_fail(err, errno, "process.cwd: getcwd");
}

/* The cwd is entered again after the identity switch: a uid that may not
 * search it must fail here, as runc's does. When this process entered it
 * already as uid 0 and the new identity is uid 0 too, the second lookup
 * sees the same root, mounts, uid and (not yet dropped) capabilities, so it
 * cannot differ: it is skipped. Only outside a user namespace: there
 * CAP_DAC_OVERRIDE covers every inode, while inside one it covers none
 * whose owner is unmapped, and for those the gid and groups the switch
 * changes decide (entered_as_root is false then). */
static int proc_reenter_cwd(const struct brig_process *p, bool entered_as_root,
                            struct brig_error **err)
{
    if (entered_as_root && p->user.uid == 0) return 0;
    return cwd_apply(p, err);
}

/* Identity and cwd first in both orders: the cwd is entered again, by a
 * lookup inside the root (openat2), before a filter may deny openat2 or
 * getcwd (a profile without openat2 would kill every non-root process at
 * "process.cwd: open /"). What runs after the filter is what runc runs
 * after it too: capset/prctl, the startContainer hooks, signal resets and
 * execve.
 *
 * From identity_apply on, `brig exec`'s child may share brig's memory
 * (lifecycle/exec.c) and be killed or stopped by the container at any
 * instruction: this and proc_execve touch no heap (util/noheap.h), which
 * holds for every call made here: identity_apply (prctl, glibc's
 * setgroups/setresgid/setresuid, direct syscalls in a process glibc knows
 * as single-threaded, umask; the /proc/self/setgroups read only in a user
 * namespace, never shared), prctl, cwd_apply (open, openat2, fchdir),
 * proc_verify_cwd (getcwd's syscall), caps_plan_apply (capget, capset,
 * prctl), no_new_privs_apply, seccomp_bpf_load (seccomp, prctl), and on
 * failure brig_fail/brig_wrap (the static error, vsnprintf of %s %d %u %x
 * %zu into buffers on the stack, strerrordesc_np) and brig_debug (the
 * same, then write). */
static int proc_confine_cwd(const struct brig_process *p, const struct brig_bpf *bpf,
                            bool in_userns, bool entered_as_root, const struct proc_launch *l,
                            struct brig_error **err)
{
    TRY(identity_apply(&p->user, in_userns, err));
    /* The uid/gid switch made us as dumpable as fs.suid_dumpable says
     * (commit_creds): non-dumpable again before anything else, so that the
     * container's processes of that uid cannot open our /proc/<pid>/exe
     * (brig's binary) or ptrace us. The capset calls below only drop
     * permitted caps, which leaves it as it is. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) return brig_fail(err, errno, "prctl PR_SET_DUMPABLE");
    TRY(proc_reenter_cwd(p, entered_as_root, err));
    TRY(proc_verify_cwd(err));
    /* The set-id filter first: the process's own may refuse seccomp(2). */
    if (p->no_new_privileges) {
        TRY(caps_plan_apply(&l->caps, err));
        TRY(no_new_privs_apply(p, err));
        if (l->setid) TRY(seccomp_bpf_load(l->setid, err));
        if (bpf) TRY(seccomp_bpf_load(bpf, err));               /* last: fewest syscalls after */
    } else {
        /* Without no_new_privs only CAP_SYS_ADMIN may load a filter: load
         * it while the permitted set kept across the uid switch is still
         * whole (runc does the same), then narrow the capabilities. */
        if (bpf || l->setid) TRY(caps_raise_effective_all(err));
        if (l->setid) TRY(seccomp_bpf_load(l->setid, err));
        if (bpf) TRY(seccomp_bpf_load(bpf, err));
        TRY(caps_plan_apply(&l->caps, err));
    }
    return 0;
}

int proc_confine(const struct brig_process *p, const struct brig_bpf *bpf, bool in_userns,
                 const struct proc_launch *l, struct brig_error **err)
{
    return proc_confine_cwd(p, bpf, in_userns, false, l, err);
}

int proc_confine_in_cwd(const struct brig_process *p, const struct brig_bpf *bpf,
                        bool in_userns, const struct proc_launch *l, struct brig_error **err)
{
    return proc_confine_cwd(p, bpf, in_userns, !in_userns && geteuid() == 0, l, err);
}

/* The signals this process ignores (SigIgn of /proc/self/status, read only
 * from a real procfs), or all of them when that cannot be read. */
static uint64_t proc_ignored_signals(void)
{
    autoclose int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    struct statfs sfs;
    if (fd < 0 || fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC) return UINT64_MAX;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    if (n <= 0) return UINT64_MAX;
    buf[n] = '\0';
    const char *l = strstr(buf, "\nSigIgn:");
    if (l == NULL) return UINT64_MAX;
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(l + 8, &end, 16);
    if (errno != 0 || end == l + 8) return UINT64_MAX;
    return v;
}

/* Signals as execve expects them: nothing blocked, nothing ignored. execve
 * itself resets caught signals; only ignored ones survive it, so only those
 * are reset (a few syscalls instead of one per signal). */
static void proc_reset_signals(void)
{
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    uint64_t ignored = proc_ignored_signals();
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP) continue;
        if (sig <= 64 && !(ignored & (UINT64_C(1) << (sig - 1)))) continue;
        signal(sig, SIG_DFL);
    }
}

int proc_launch_prepare(const struct brig_process *p, const char *exe, const char *home_env,
                        int via_fd, const char *via_name, int report_fd, struct proc_launch *l,
                        struct brig_error **err)
{
    /* p->env plus home_env (may be NULL); the strings are p's. */
    l->envp = brig_calloc(p->n_env + 2, sizeof(char *));
    for (size_t i = 0; i < p->n_env; i++) l->envp[i] = p->env[i];
    if (home_env != NULL) l->envp[p->n_env] = (char *)home_env;
    l->exe = exe;
    l->setid = NULL;
    l->via_fd = via_fd;
    l->via_name = via_name;
    l->report_fd = via_fd >= 0 ? report_fd : -1;
    l->argv = p->args;
    if (via_fd >= 0) {
        size_t k = 0;
        l->argv = brig_calloc(p->n_args + 6, sizeof(char *));
        l->argv[k++] = (char *)via_name;
        if (l->report_fd >= 0) {
            snprintf(l->report_arg, sizeof(l->report_arg), "%d", l->report_fd);
            l->argv[k++] = "--exec-sync";
            l->argv[k++] = l->report_arg;
        } else {
            l->argv[k++] = "--exec";
        }
        l->argv[k++] = (char *)exe;
        l->argv[k++] = "--";
        for (size_t i = 0; i < p->n_args; i++) l->argv[k++] = p->args[i];
    }
    return caps_plan(&p->caps, &l->caps, err);
}

int proc_execve(const struct proc_launch *l, struct brig_error **err)
{
    proc_reset_signals();
    if (l->via_fd < 0) {
        brig_debug("execve %s", l->exe);
        execve(l->exe, l->argv, l->envp);
        int e = errno;
        brig_fail(err, e, "exec %s", l->exe);
        return proc_exec_failed(err, e);
    }
    /* The trampoline tells a failed execve on the sync socket (which it
     * then closes on exec, as this one would have): kept open across its
     * execveat. The fcntl syscall itself: the one the caller checked the
     * filter allows. */
    if (l->report_fd >= 0) {
        if (syscall(SYS_fcntl, l->report_fd, F_SETFD, 0) < 0)
            return brig_fail(err, errno, "exec %s: keep the sync socket for %s", l->exe, l->via_name);
        brig_debug("execve %s through %s (sealed copy)", l->exe, l->via_name);
        syscall(SYS_execveat, l->via_fd, "", l->argv, l->envp, AT_EMPTY_PATH);
        int e = errno;
        syscall(SYS_fcntl, l->report_fd, F_SETFD, FD_CLOEXEC);
        brig_debug("execve of %s (the trampoline) failed", l->via_name);
        brig_fail(err, e, "exec %s", l->exe);
        return proc_exec_failed(err, e);
    }
    /* What brig's own execve reported before anything ran (a file the
     * user may not execute, a noexec mount) is still reported so; other
     * failures are the trampoline's, on the command's stderr. The faccessat
     * syscall itself, not libc's choice of faccessat2: the one the caller
     * checked the filter allows. */
    if (syscall(SYS_faccessat, AT_FDCWD, l->exe, X_OK) < 0 && errno == EACCES) {
        brig_fail(err, EACCES, "exec %s", l->exe);
        return proc_exec_failed(err, EACCES);
    }
    brig_debug("execve %s through %s", l->exe, l->via_name);
    syscall(SYS_execveat, l->via_fd, "", l->argv, l->envp, AT_EMPTY_PATH);
    return brig_fail(err, errno, "exec %s through %s", l->exe, l->via_name);
}
