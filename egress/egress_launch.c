/* Egress for every container brig launches under an egress policy (create,
 * run, sandbox run), not only sandboxes: whoever calls brig (containerd,
 * podman) gets the same proxy. Three steps in the launch (create.c):
 *   egress_prepare: the proxy environment into process.env, before the
 *                   clone (the container's process is execve'd with it);
 *   egress_start:   the proxy forked into its cgroup, before the clone;
 *   egress_attach:  the proxy listening in the init's network namespace,
 *                   before `start` can run anything in it.
 * The launch then detaches it (create, run -d: it serves until the init
 * exits, so `delete` ends it) or stops it (run, sandbox run, undo). */
#include "egress.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../policy/policy.h"
#include "../runtime/config/spec.h"
#include "../runtime/util/strutil.h"

/* Whether keep (NAME=VALUE entries) names the variable of entry. */
static bool launch_kept(char *const *keep, const char *entry)
{
    size_t n = strcspn(entry, "=");
    for (size_t i = 0; keep != NULL && keep[i] != NULL; i++)
        if (strncmp(keep[i], entry, n) == 0 && keep[i][n] == '=') return true;
    return false;
}

/* The proxy variables replace the process's own, except those keep names. */
static int launch_env(const struct brig_policy *p, struct brig_process *proc, char *const *keep,
                      struct brig_error **err)
{
    if (p == NULL || p->network.mode != POLICY_NET_EGRESS) return 0;
    size_t n = 0;
    for (size_t i = 0; i < proc->n_env; i++) {
        if (egress_env_name(proc->env[i]) && !launch_kept(keep, proc->env[i])) free(proc->env[i]);
        else proc->env[n++] = proc->env[i];
    }
    size_t add = 0;
    while (egress_env[add] != NULL) add++;
    char **env = realloc(proc->env, (n + add + 1) * sizeof(char *));
    if (env == NULL) return brig_fail(err, ENOMEM, "network egress: environment");
    for (size_t i = 0; i < add; i++)
        if (!launch_kept(keep, egress_env[i])) env[n++] = brig_strdup(egress_env[i]);
    env[n] = NULL;
    proc->env = env;
    proc->n_env = n;
    return 0;
}

int egress_prepare(const struct brig_policy *p, struct brig_spec *s, struct brig_error **err)
{
    return launch_env(p, &s->process, NULL, err);
}

int egress_exec_env(const struct brig_policy *p, struct brig_spec *s, char *const *keep, struct brig_error **err)
{
    return launch_env(p, &s->process, keep, err);
}
