/* Egress for every container brig launches under an egress policy (create,
 * run, sandbox run), not only sandboxes: whoever calls brig (containerd,
 * podman) gets the same proxy. Two steps in the launch (create.c):
 *   egress_prepare: the proxy environment into process.env, before the
 *                   clone (the container's process is execve'd with it);
 *   egress_launch:  the proxy, listening in the init's network namespace,
 *                   before `start` can run anything in it.
 * The launch then detaches it (create, run: it serves until the init
 * exits, so `delete` ends it) or stops it (sandbox run, undo). */
#include "egress.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../policy/policy.h"
#include "../runtime/config/spec.h"
#include "../runtime/util/strutil.h"

int egress_prepare(const struct brig_policy *p, struct brig_spec *s, struct brig_error **err)
{
    if (p == NULL || p->network.mode != POLICY_NET_EGRESS) return 0;
    struct brig_process *proc = &s->process;
    size_t n = 0;
    for (size_t i = 0; i < proc->n_env; i++) {
        if (egress_env_name(proc->env[i])) free(proc->env[i]);
        else proc->env[n++] = proc->env[i];
    }
    size_t add = 0;
    while (egress_env[add] != NULL) add++;
    char **env = realloc(proc->env, (n + add + 1) * sizeof(char *));
    if (env == NULL) return brig_fail(err, ENOMEM, "network egress: environment");
    for (size_t i = 0; i < add; i++) env[n + i] = brig_strdup(egress_env[i]);
    env[n + add] = NULL;
    proc->env = env;
    proc->n_env = n + add;
    return 0;
}

int egress_launch(const struct brig_policy *p, const char *id, pid_t init_pid, struct egress **out,
                  struct brig_error **err)
{
    *out = NULL;
    struct egress *e = NULL;
    TRY(egress_start(p, id, &e, err));
    if (egress_attach(e, init_pid, err) < 0) {
        egress_stop(e);
        return brig_wrap(err, "network (policy %s)", p->name);
    }
    *out = e;
    return 0;
}
