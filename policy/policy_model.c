/* The policy model: freeing, the built-in profiles compiled in from
 * policy/profiles/, and loading a policy by name or path. */
#include "policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy_embedded.h"
#include "policy_internal.h"
#include "../egress/egress_rules.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

void policy_free(struct brig_policy *p)
{
    if (p == NULL) return;
    free(p->name);
    free(p->network.path);
    egress_rules_free(p->network.egress);
    for (size_t i = 0; i < p->n_tmpfs; i++) free(p->tmpfs[i].path);
    free(p->tmpfs);
    free(p->workspace.path);
    brig_strv_free(p->cap_names);
    free(p->seccomp.path);
    for (size_t i = 0; i < p->n_rlimits; i++) free(p->rlimits[i].type);
    free(p->rlimits);
    brig_strv_free(p->devices);
    brig_strv_free(p->forbidden_paths);
    brig_strv_free(p->sockets);
    brig_strv_free(p->hooks);
    brig_strv_free(p->sysctl);
    brig_strv_free(p->env_allow);
    brig_strv_free(p->env_deny);
    brig_strv_free(p->env_set);
    free(p->init);
    free(p->audit.path);
    free(p);
}

void policy_freep(struct brig_policy **p)
{
    policy_free(*p);
    *p = NULL;
}

size_t policy_builtin_count(void)
{
    return policy_embedded_count;
}

const char *policy_builtin_name(size_t i)
{
    return i < policy_embedded_count ? policy_embedded_profiles[i].name : NULL;
}

const char *policy_builtin_text(const char *name)
{
    for (size_t i = 0; i < policy_embedded_count; i++)
        if (strcmp(policy_embedded_profiles[i].name, name) == 0) return policy_embedded_profiles[i].text;
    return NULL;
}

const char *policy_seccomp_default_text(void)
{
    return policy_embedded_seccomp;
}

int policy_read(const char *name_or_path, char **text, size_t *len, struct brig_error **err)
{
    return policy_extends_read(name_or_path, text, len, err);
}

int policy_load(const char *name_or_path, struct brig_policy **out, struct brig_error **err)
{
    autofree char *text = NULL;
    size_t len = 0;
    TRY(policy_read(name_or_path, &text, &len, err));
    if (policy_parse(text, len, out, err) < 0) return brig_wrap(err, "policy %s", name_or_path);
    brig_debug("policy: loaded %s (%s)", name_or_path, (*out)->name);
    return 0;
}
