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
 * child, and a mismatch refuses the run before its command exists. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox.h"
#include "../policy/policy.h"
#include "../runtime/config/spec.h"
#include "../runtime/linux/exe_seal.h"
#include "../runtime/util/cleanup.h"

int sandbox_seal_decide(const struct brig_policy *p, const char *config, bool *unsealed,
                        struct brig_error **err)
{
    /* The key anywhere in the text: a false match only costs the copy. */
    bool plain = strstr(config, "\"hooks\"") == NULL &&
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

int sandbox_seal_verify(const struct brig_spec *s, pid_t pid, const char *init_host, struct brig_error **err)
{
    /* The init's execve takes process.args[0] as the config that ran says. */
    if (!s->has_process || s->process.n_args == 0 || strcmp(s->process.args[0], SANDBOX_INIT_PATH) != 0)
        return brig_failx(err, "sandbox: process.args[0] is not %s: refusing to start it", SANDBOX_INIT_PATH);
    for (size_t k = 0; k < BRIG_HOOK_KIND_COUNT; k++)
        if (s->hooks[k].n > 0) return brig_failx(err, "sandbox: the config has hooks: refusing to start it");
    ino_t ours, its;
    TRY(seal_ns_ino(0, &ours, err));
    TRY(seal_ns_ino(pid, &its, err));
    if (ours == its)
        return brig_failx(err, "sandbox: the init shares brig's pid namespace: refusing to run it "
                               "from brig's unsealed binary");
    char root[64];
    snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
    autoclose int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return brig_fail(err, errno, "sandbox: %s", root);
    /* As the init's execve will find it: no symlink on the way (so nothing
     * renamed on the host can redirect it), no magic link. */
    struct open_how how = {
        .flags = O_PATH | O_CLOEXEC,
        .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    autoclose int in = (int)syscall(SYS_openat2, rootfd, SANDBOX_INIT_PATH, &how, sizeof(how));
    struct stat a, b;
    if (in < 0 || fstat(in, &a) < 0 || stat(init_host, &b) < 0 || !S_ISREG(a.st_mode) ||
        a.st_dev != b.st_dev || a.st_ino != b.st_ino)
        return brig_failx(err, "sandbox: %s in the sandbox is not %s: refusing to start it", SANDBOX_INIT_PATH,
                          init_host);
    return 0;
}
