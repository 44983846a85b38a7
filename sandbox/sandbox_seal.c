/* Whether a one-shot sandbox (`sandbox run`) needs brig's sealed re-exec
 * (linux/exe_seal.h, the CVE-2019-5736 class), and the check, after the
 * create and before the start, that running from brig's binary as is was
 * sound (docs/security.md, "sandbox run without the sealed copy").
 *
 * The attack needs a container process that opens /proc/<pid>/exe of a
 * process running brig's binary. In a one-shot sandbox the only such
 * process ever inside is the runtime child between its clone and its one
 * execve (non-dumpable, child.c), and it is alone there:
 *  - no hooks: a hook would run in the container before that execve;
 *  - a new pid namespace: brig outside is not in the sandbox's /proc;
 *  - that execve is of brig-init, bound read-only from the host at
 *    /dev/.brig-init on brig's own /dev tmpfs: not a #! script, so it can
 *    never make the kernel run /proc/self/exe (brig) inside;
 *  - the state dir stays locked until it ran (sandbox_run.c): no `brig
 *    exec` joins before.
 * Anything else (a hook in the config, another init path) re-executes
 * sealed as before; the namespace and the init are checked on the live
 * child, and a mismatch refuses the run before its command exists.
 *
 * `sandbox exec` joins a sandbox that already holds the command's own
 * processes, so its argument differs (docs/security.md, "sandbox exec
 * without the sealed copy"): brig's exec child is non-dumpable from its
 * clone to its last execve, its mm made in brig's user namespace, of
 * which the sandbox's own (sandbox_ids.c) is a child, and nothing in the
 * sandbox may hold CAP_SYS_PTRACE, so no process there passes the ptrace
 * check on it (its /proc/<pid>/exe); and that last execve is of brig-init --exec, never of
 * the command, so what the kernel runs as /proc/self/exe for the command
 * (#!, PT_INTERP) is brig-init's read-only bind. Judged from the sandbox's
 * root-owned state before anything is made; lifecycle/exec.c holds the
 * exec to it again, and refuses what no longer holds. The config parsed
 * here is handed to the exec, which uses it only if the file it reads
 * under the state's lock has the same bytes (struct brig_exec_parsed). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/capability.h>

#include "sandbox.h"
#include "../policy/policy.h"
#include "../runtime/config/spec.h"
#include "../runtime/lifecycle/exec.h"
#include "../runtime/lifecycle/state.h"
#include "../runtime/linux/caps.h"
#include "../runtime/linux/exe_seal.h"
#include "../runtime/linux/exe_trampoline.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/log.h"

int sandbox_seal_decide(const struct brig_policy *p, const char *config, bool rootless, bool *unsealed,
                        struct brig_error **err)
{
    /* The key anywhere in the text: a false match only costs the copy.
     * Rootless, always sealed: the check on the live child reads its
     * /proc/<pid>/ns and root, which a non-dumpable process keeps from a
     * caller without CAP_SYS_PTRACE on the host. */
    bool plain = !rootless && strstr(config, "\"hooks\"") == NULL &&
                 (p->init == NULL || strcmp(p->init, SANDBOX_INIT_PATH) == 0);
    *unsealed = false;
    if (!plain) return exe_seal_deferred(err);
    *unsealed = true;
    return 0;
}

static int seal_ns_ino(pid_t pid, ino_t *ino, struct brig_error **err)
{
    char path[64];
    snprintf(path, sizeof(path), pid > 0 ? "/proc/%d/ns/pid" : "/proc/self/ns/pid", (int)pid);
    struct stat st;
    if (stat(path, &st) < 0) return brig_fail(err, errno, "sandbox: %s", path);
    *ino = st.st_ino;
    return 0;
}

/* SANDBOX_INIT_PATH in pid's root, as an execve there finds it (no
 * symlink on the way, so nothing renamed on the host can redirect it, no
 * magic link), is the host's brig-init itself. */
static bool seal_init_in(pid_t pid, const char *init_host)
{
    char root[64];
    snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
    autoclose int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat host;
    if (rootfd < 0 || stat(init_host, &host) < 0) return false;
    autoclose int in = brig_open_exact_in_root(rootfd, SANDBOX_INIT_PATH, host.st_dev, host.st_ino);
    return in >= 0;
}

int sandbox_seal_verify(const struct brig_spec *s, pid_t pid, const char *init_host, struct brig_error **err)
{
    /* The init's execve takes process.args[0] as the config that ran says. */
    if (!s->has_process || s->process.n_args == 0 || strcmp(s->process.args[0], SANDBOX_INIT_PATH) != 0)
        return brig_failx(err, "sandbox: process.args[0] is not %s: refusing to start it", SANDBOX_INIT_PATH);
    for (size_t k = 0; k < BRIG_HOOK_KIND_COUNT; k++)
        if (s->hooks[k].n > 0) return brig_failx(err, "sandbox: the config has hooks: refusing to start it");
    ino_t ours = 0, its = 0;
    TRY(seal_ns_ino(0, &ours, err));
    TRY(seal_ns_ino(pid, &its, err));
    if (ours == its)
        return brig_failx(err, "sandbox: the init shares brig's pid namespace: refusing to run it "
                               "from brig's unsealed binary");
    if (!seal_init_in(pid, init_host))
        return brig_failx(err, "sandbox: %s in the sandbox is not %s: refusing to start it", SANDBOX_INIT_PATH,
                          init_host);
    return 0;
}

/* What create made: brig-init idling as PID 1 of a pid namespace of its
 * own, no user namespace in the config (the sandbox's own is brig's,
 * entered by its init: lifecycle/exec.c checks that it is a child of
 * brig's), no hooks. */
static bool seal_exec_plain(const struct brig_spec *s)
{
    const struct brig_process *p = &s->process;
    if (!s->has_process || p->n_args != 2 || strcmp(p->args[0], SANDBOX_INIT_PATH) != 0 ||
        strcmp(p->args[1], "--idle") != 0)
        return false;
    for (size_t k = 0; k < BRIG_HOOK_KIND_COUNT; k++)
        if (s->hooks[k].n > 0) return false;
    const struct brig_namespace *ns = s->linux_cfg.namespaces;
    return ns[BRIG_NS_PID].present && ns[BRIG_NS_PID].path == NULL && !ns[BRIG_NS_USER].present &&
           /* the command reaches a non-dumpable brig child only with
            * CAP_SYS_PTRACE: in no set (the bounding one all inherit) */
           !caps_in_any_set(&p->caps, CAP_SYS_PTRACE) &&
           exe_filter_allows(&s->linux_cfg.seccomp, "execveat") &&
           exe_filter_allows(&s->linux_cfg.seccomp, "faccessat");
}

int sandbox_seal_exec_decide(int dirfd, const struct brig_state *st, struct brig_exec_trampoline *t,
                             struct brig_exec_parsed *parsed, bool *unsealed, struct brig_error **err)
{
    *unsealed = false;
    *parsed = (struct brig_exec_parsed){ 0 };
    /* Re-executed sealed by this decision (or sealed by the admin): the
     * seal holds whatever the sandbox is. */
    if (exe_seal_active()) return 0;
    autoerr struct brig_error *e = NULL;
    autofree char *text = NULL;
    autofree char *init = NULL;
    size_t len = 0;
    struct brig_spec *s = NULL;
    struct stat host;
    /* Cheapest first (a sandbox made before brig-init was upgraded fails
     * at its inode); then the saved config, written by create into the
     * root-owned state. */
    bool plain = exe_suid_dumpable_safe() && sandbox_find_init(&init, &e) == 0 && stat(init, &host) == 0 &&
                 seal_init_in(st->pid, init) &&
                 brig_read_file_at(dirfd, "config.json", 16u << 20, &text, &len, &e) == 0 &&
                 spec_parse(text, len, st->bundle, &s, &e) == 0 && seal_exec_plain(s);
    if (!plain) {
        spec_free(s);
        brig_debug("sandbox exec: sealed (%s)", e != NULL ? e->msg : "the sandbox does not allow it unsealed");
        return exe_seal_deferred(err);
    }
    /* The exec takes this parse if the file is the same under its lock. */
    *parsed = (struct brig_exec_parsed){ .text = steal_ptr(&text), .len = len, .bundle = st->bundle, .spec = s };
    *t = (struct brig_exec_trampoline){ .path = SANDBOX_INIT_PATH, .dev = host.st_dev, .ino = host.st_ino };
    *unsealed = true;
    return 0;
}

void sandbox_exec_parsed_clear(struct brig_exec_parsed *parsed)
{
    free(parsed->text);
    spec_free(parsed->spec);
    *parsed = (struct brig_exec_parsed){ 0 };
}
