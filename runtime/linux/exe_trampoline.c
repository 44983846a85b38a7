/* `brig run` from brig's unsealed binary (docs/security.md, "run without
 * the sealed copy"). Why brig re-executes itself from a sealed copy before
 * a container process exists: a process of the container could reach
 * brig's binary through /proc/<pid>/exe of a process that runs it, and
 * write it once brig is idle. Two ways in, each closed for a run:
 *  - the kernel runs /proc/self/exe for the process's own execve, in the
 *    task that still runs brig (a `#!/proc/self/exe` script, an ELF whose
 *    PT_INTERP is /proc/self/exe): that task no longer execs the process,
 *    it execs brig-init --exec-sync from a sealed memfd (this file), which
 *    execs the process: /proc/self/exe is then that copy, and brig-init
 *    refuses to be run as that interpreter;
 *  - a process of the container opens /proc/<pid>/exe (or ptraces) a brig
 *    process it can see: the only one ever inside is the init, from its
 *    clone to its execve of the trampoline, and nothing else is in its pid
 *    namespace by then: one of the container's own (brig outside is not in
 *    its /proc), no hooks (a hook is brig's child running in the
 *    container's namespaces), and run holds the state dir's lock until
 *    that execve (lifecycle/run.c), so no `brig exec` joins before. The
 *    init is non-dumpable from its birth besides, and stays so across its
 *    uid switch (fs.suid_dumpable not 1), and its process holds no
 *    CAP_SYS_PTRACE.
 * `create` stays sealed: its init waits in brig's binary until `start`,
 * and a `brig exec` may join it meanwhile. So does anything else. */
#include "exe_trampoline.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "caps.h"
#include "exe_seal.h"

/* sandbox/embed_init.py */
extern const unsigned char brig_init_image[];
extern const size_t brig_init_image_size;

bool exe_trampoline_available(void)
{
    return brig_init_image_size > 0;
}

int exe_trampoline_open(int *out, struct brig_error **err)
{
    static const char what[] = "brig's exec trampoline";
    *out = -1;
    if (!exe_trampoline_available()) return brig_failx(err, "this build of brig has no exec trampoline");
    autoclose int fd = exe_memfd_open(EXE_TRAMPOLINE_NAME, what, err);
    if (fd < 0) return -1;
    for (size_t done = 0; done < brig_init_image_size;) {
        ssize_t n = write(fd, brig_init_image + done, brig_init_image_size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return brig_fail(err, n < 0 ? errno : EIO, "write %s into its memfd", what);
        done += (size_t)n;
    }
    TRY(exe_memfd_seal(fd, what, err));
    *out = steal_fd(&fd);
    return 0;
}

bool exe_filter_allows(const struct brig_seccomp *f, const char *name)
{
    if (!f->present) return true;
    bool allowed = f->default_action == BRIG_SCMP_ALLOW;
    for (size_t i = 0; i < f->n_syscalls; i++) {
        const struct brig_seccomp_rule *r = &f->syscalls[i];
        for (size_t k = 0; k < r->n_names; k++) {
            if (strcmp(r->names[k], name) != 0) continue;
            if (r->action != BRIG_SCMP_ALLOW || r->n_args > 0) return false;
            allowed = true;
        }
    }
    return allowed;
}

bool exe_suid_dumpable_safe(void)
{
    autoclose int fd = open("/proc/sys/fs/suid_dumpable", O_RDONLY | O_CLOEXEC);
    char buf[8] = "";
    return fd >= 0 && read(fd, buf, sizeof(buf) - 1) >= 1 && (buf[0] == '0' || buf[0] == '2') &&
           (buf[1] == '\n' || buf[1] == '\0');
}

/* vm.memfd_noexec 2 refuses an executable memfd (kernels before 6.3 have
 * no such sysctl: 0). */
static bool exe_memfd_exec_allowed(void)
{
    autoclose int fd = open("/proc/sys/vm/memfd_noexec", O_RDONLY | O_CLOEXEC);
    char buf[8] = "";
    if (fd < 0) return errno == ENOENT;
    return read(fd, buf, sizeof(buf) - 1) >= 1 && (buf[0] == '0' || buf[0] == '1');
}

/* The process's argv and env leave room for the trampoline's own words
 * (its name, --exec-sync FD, the path, "--", and a HOME brig may add) in
 * what execve takes (fs/exec.c: a quarter of RLIMIT_STACK, at least 32
 * pages, at most 6 MiB, pointers counted): an exec that only just fits
 * runs sealed, never fails unsealed with E2BIG. */
static bool exe_args_leave_room(const struct brig_process *p)
{
    struct rlimit rl;
    uint64_t stack = getrlimit(RLIMIT_STACK, &rl) == 0 ? rl.rlim_cur : 8u << 20;
    for (size_t i = 0; i < p->n_rlimits; i++)
        if (p->rlimits[i].resource == RLIMIT_STACK) stack = p->rlimits[i].soft;
    uint64_t limit = stack / 4;
    if (limit < 32 * 4096) limit = 32 * 4096;
    if (limit > (6u << 20)) limit = 6u << 20;
    uint64_t used = (p->n_args + p->n_env + 6) * sizeof(char *);
    for (size_t i = 0; i < p->n_args; i++) used += strlen(p->args[i]) + 1;
    for (size_t i = 0; i < p->n_env; i++) used += strlen(p->env[i]) + 1;
    return used + 2 * PATH_MAX + 256 <= limit;
}

bool exe_trampoline_suffices(const struct brig_spec *s, const char **why)
{
    static const char *const calls[] = { "execveat", "execve", "fcntl", "sendto" };
    const struct brig_namespace *ns = s->linux_cfg.namespaces;
    *why = NULL;
    if (!exe_trampoline_available())
        *why = "this build has no exec trampoline";
    else if (!s->has_process)
        *why = "the config has no process";
    else if (!ns[BRIG_NS_PID].present || ns[BRIG_NS_PID].path != NULL)
        *why = "the container has no pid namespace of its own";
    else if (ns[BRIG_NS_USER].present && ns[BRIG_NS_USER].path != NULL)
        *why = "the container joins a user namespace by path";
    else if (caps_in_any_set(&s->process.caps, CAP_SYS_PTRACE))
        *why = "CAP_SYS_PTRACE is in a capability set of its process";
    else if (s->process.apparmor_profile != NULL || s->process.selinux_label != NULL)
        *why = "its process has an AppArmor profile or SELinux label (applied at the trampoline's exec)";
    for (size_t k = 0; *why == NULL && k < BRIG_HOOK_KIND_COUNT; k++)
        if (s->hooks[k].n > 0) *why = "the config has hooks";
    for (size_t i = 0; *why == NULL && i < sizeof(calls) / sizeof(calls[0]); i++)
        if (!exe_filter_allows(&s->linux_cfg.seccomp, calls[i]))
            *why = "its seccomp filter does not allow the trampoline's system calls";
    if (*why == NULL && !exe_args_leave_room(&s->process))
        *why = "its arguments and environment leave no room for the trampoline's in execve's limit";
    if (*why == NULL && !exe_suid_dumpable_safe()) *why = "fs.suid_dumpable is 1 (or unreadable)";
    if (*why == NULL && !exe_memfd_exec_allowed()) *why = "vm.memfd_noexec is 2 (or unreadable)";
    return *why == NULL;
}
