/* The steps of policy_apply that patch process and linux (policy_apply.c
 * does the mounts and the orchestration). Each step only tightens: values
 * already within the policy are kept, so apply is idempotent. */
#include "policy_apply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>

#include "../egress/egress.h"
#include "../runtime/config/spec.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

static void apply_ns_ensure(struct ptree *list, const char *type)
{
    for (size_t i = 0; i < list->n; i++) {
        const char *t = ptree_str(list->vals[i], "type");
        if (t != NULL && strcmp(t, type) == 0) return;
    }
    struct ptree *ns = ptree_new(PT_OBJ);
    ptree_set(ns, "type", ptree_new_str(type));
    ptree_push(list, ns);
}

int apply_namespaces(const struct brig_policy *p, struct ptree *cfg, struct brig_error **err)
{
    struct ptree *list = ptree_arr(ptree_obj(cfg, "linux"), "namespaces");
    static const char *const required[] = { "pid", "ipc", "uts", "mount", "network", "cgroup" };
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) apply_ns_ensure(list, required[i]);
    if (p->user.userns) apply_ns_ensure(list, "user");
    for (size_t i = 0; i < list->n; i++) {
        const char *t = ptree_str(list->vals[i], "type");
        /* A path means joining someone else's namespace: drop it, the
         * container gets a new one. The network is the policy's. */
        if (t != NULL && strcmp(t, "network") == 0 && p->network.mode == POLICY_NET_NETNS)
            ptree_set(list->vals[i], "path", ptree_new_str(p->network.path));
        else
            ptree_del(list->vals[i], "path");
    }
    if (p->user.userns && ptree_get(ptree_get(cfg, "linux"), "uidMappings") == NULL)
        return brig_failx(err, "user.userns: the config has no linux.uidMappings and apply cannot "
                          "choose host ids for it");
    return 0;
}

static void apply_caps_set(const struct brig_policy *p, struct ptree *set)
{
    for (size_t i = set->n; i-- > 0;) {
        cap_value_t c;
        const struct ptree *v = set->vals[i];
        bool keep = v->type == PT_STR && cap_from_name(v->s, &c) == 0 && c < 64 && (p->caps & (1ull << c));
        if (!keep) ptree_remove_at(set, i);
    }
}

void apply_process(const struct brig_policy *p, struct ptree *cfg)
{
    static const char *const sets[] = { "bounding", "effective", "inheritable", "permitted", "ambient" };
    struct ptree *proc = ptree_obj(cfg, "process");
    struct ptree *caps = ptree_get(proc, "capabilities");
    if (caps != NULL && caps->type == PT_OBJ)
        for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
            struct ptree *set = ptree_get(caps, sets[i]);
            if (set != NULL && set->type == PT_ARR) apply_caps_set(p, set);
        }
    if (p->no_new_privileges) ptree_set(proc, "noNewPrivileges", ptree_new_bool(true));
    if (!p->user.userns) {
        struct ptree *user = ptree_obj(proc, "user");
        ptree_set(user, "uid", ptree_new_u64(p->user.uid));
        ptree_set(user, "gid", ptree_new_u64(p->user.gid));
        struct ptree *gids = ptree_get(user, "additionalGids");
        for (size_t i = gids ? gids->n : 0; i-- > 0;) {
            int64_t g;
            if (gids->vals[i]->type == PT_NUM && brig_parse_i64(gids->vals[i]->s, &g) == 0 && g >= 0 &&
                g <= POLICY_SYSTEM_ID_MAX)
                ptree_remove_at(gids, i);
        }
    }
    /* Environment: names only decide; denied entries go. */
    struct ptree *env = ptree_get(proc, "env");
    for (size_t i = env ? env->n : 0; i-- > 0;) {
        const struct ptree *e = env->vals[i];
        if (e->type != PT_STR) continue;
        autofree char *name = strndup(e->s, strcspn(e->s, "="));
        if (name != NULL && (policy_env_name_denied(p, name) ||
                             (p->network.mode == POLICY_NET_EGRESS && egress_env_name(name))))
            ptree_remove_at(env, i);
    }
    /* env.set: added where the process does not name the variable itself. */
    for (char **set = p->env_set; set != NULL && *set != NULL; set++) {
        size_t nl = strcspn(*set, "=") + 1;
        struct ptree *arr = ptree_arr(proc, "env");
        bool named = false;
        for (size_t i = 0; i < arr->n && !named; i++)
            named = arr->vals[i]->type == PT_STR && strncmp(arr->vals[i]->s, *set, nl) == 0;
        if (!named) ptree_push(arr, ptree_new_str(*set));
    }
    /* Egress: the proxy's addresses, as every client reads them (docs/egress.md). */
    for (size_t i = 0; p->network.mode == POLICY_NET_EGRESS && egress_env[i]; i++)
        ptree_push(ptree_arr(proc, "env"), ptree_new_str(egress_env[i]));
    /* rlimits: at most the policy's, added when missing. */
    struct ptree *rl = ptree_arr(proc, "rlimits");
    for (size_t i = 0; i < p->n_rlimits; i++) {
        struct ptree *found = NULL;
        for (size_t j = 0; j < rl->n; j++) {
            const char *t = ptree_str(rl->vals[j], "type");
            if (t != NULL && strcmp(t, p->rlimits[i].type) == 0) found = rl->vals[j];
        }
        if (found == NULL) {
            found = ptree_new(PT_OBJ);
            ptree_set(found, "type", ptree_new_str(p->rlimits[i].type));
            ptree_push(rl, found);
        }
        static const char *const keys[] = { "soft", "hard" };
        for (size_t k = 0; k < 2; k++) {
            const struct ptree *v = ptree_get(found, keys[k]);
            uint64_t cur;
            if (v == NULL || v->type != PT_NUM || brig_parse_u64(v->s, &cur) < 0 || cur > p->rlimits[i].max)
                ptree_set(found, keys[k], ptree_new_u64(p->rlimits[i].max));
        }
    }
    /* The init runs the command: tini's and docker-init's "init -- cmd". */
    struct ptree *args = ptree_arr(proc, "args");
    if (p->init != NULL && (args->n == 0 || args->vals[0]->type != PT_STR ||
                            strcmp(args->vals[0]->s, p->init) != 0)) {
        struct ptree *n = ptree_new(PT_ARR);
        ptree_push(n, ptree_new_str(p->init));
        ptree_push(n, ptree_new_str("--"));
        for (size_t i = 0; i < args->n; i++) ptree_push(n, ptree_copy(args->vals[i]));
        ptree_set(proc, "args", n);
    }
}

/* Set key to v when absent, not an integer, <= 0 (unlimited) or above max. */
static uint64_t apply_cap_u64(struct ptree *obj, const char *key, uint64_t max)
{
    int64_t cur;
    if (ptree_i64(obj, key, &cur) && cur > 0 && (uint64_t)cur <= max) return (uint64_t)cur;
    ptree_set(obj, key, ptree_new_u64(max));
    return max;
}

void apply_resources(const struct brig_policy *p, struct ptree *cfg)
{
    struct ptree *res = ptree_obj(ptree_obj(cfg, "linux"), "resources");
    struct ptree *mem = ptree_obj(res, "memory");
    uint64_t lim = apply_cap_u64(mem, "limit", p->limits.memory);
    int64_t swap;
    /* memory.swap is memory + swap and must not be below the limit. */
    if (!ptree_i64(mem, "swap", &swap) || swap < (int64_t)lim || (uint64_t)swap > lim + p->limits.swap)
        ptree_set(mem, "swap", ptree_new_u64(lim + p->limits.swap));
    apply_cap_u64(ptree_obj(res, "pids"), "limit", p->limits.pids);
    struct ptree *cpu = ptree_obj(res, "cpu");
    int64_t period;
    if (!ptree_i64(cpu, "period", &period) || period <= 0) {
        period = 100000;
        ptree_set(cpu, "period", ptree_new_u64((uint64_t)period));
    }
    uint64_t quota_max = p->limits.cpu_milli * (uint64_t)period / 1000;
    if (quota_max < 1000) quota_max = 1000;     /* the kernel's minimum quota is 1ms */
    apply_cap_u64(cpu, "quota", quota_max);
    /* Wildcard device access goes, and so does a device that is neither a
     * default nor the policy's; the cgroup then denies what is not listed. */
    struct ptree *devs = ptree_get(res, "devices");
    for (size_t i = devs ? devs->n : 0; i-- > 0;) {
        const struct ptree *d = devs->vals[i];
        const struct ptree *allow = ptree_get(d, "allow");
        if (allow == NULL || allow->type != PT_BOOL || !allow->b) continue;
        const char *type = ptree_str(d, "type");
        const char *access = ptree_str(d, "access");
        struct brig_device_rule r = { .allow = true, .type = type && strlen(type) == 1 ? type[0] : 'a' };
        bool wild = type == NULL || strcmp(type, "a") == 0 || !ptree_i64(d, "major", &r.major) ||
                    !ptree_i64(d, "minor", &r.minor) || r.major < 0 || r.minor < 0;
        snprintf(r.access, sizeof(r.access), "%s", access && strlen(access) < sizeof(r.access) ? access : "rwm");
        if (wild || !policy_device_rule_allowed(p, &r)) ptree_remove_at(devs, i);
    }
}

static bool strv_has(char *const *v, const char *s)
{
    for (; v != NULL && *v != NULL; v++)
        if (strcmp(*v, s) == 0) return true;
    return false;
}

void apply_linux_misc(const struct brig_policy *p, struct ptree *cfg)
{
    struct ptree *lx = ptree_obj(cfg, "linux");
    struct ptree *devs = ptree_get(lx, "devices");
    for (size_t i = devs ? devs->n : 0; i-- > 0;) {
        const char *path = ptree_str(devs->vals[i], "path");
        if (path == NULL || !strv_has(p->devices, path)) ptree_remove_at(devs, i);
    }
    struct ptree *sysctl = ptree_get(lx, "sysctl");
    for (size_t i = sysctl && sysctl->type == PT_OBJ ? sysctl->n : 0; i-- > 0;)
        if (!policy_glob_any(p->sysctl, sysctl->keys[i])) ptree_del(sysctl, sysctl->keys[i]);
    struct ptree *masked = ptree_arr(lx, "maskedPaths");
    for (const char *const *m = policy_masked_paths; *m; m++)
        if (!ptree_arr_has_str(masked, *m)) ptree_push(masked, ptree_new_str(*m));
    struct ptree *ro = ptree_arr(lx, "readonlyPaths");
    for (const char *const *r = policy_readonly_paths; *r; r++)
        if (!ptree_arr_has_str(ro, *r) && !ptree_arr_has_str(masked, *r)) ptree_push(ro, ptree_new_str(*r));
    /* Hooks run on the host: only the allowlisted ones stay. */
    struct ptree *hooks = ptree_get(cfg, "hooks");
    for (size_t k = 0; hooks != NULL && hooks->type == PT_OBJ && k < hooks->n; k++) {
        struct ptree *list = hooks->vals[k];
        for (size_t i = list->type == PT_ARR ? list->n : 0; i-- > 0;) {
            const char *path = ptree_str(list->vals[i], "path");
            if (path == NULL || !strv_has(p->hooks, path)) ptree_remove_at(list, i);
        }
    }
}

int apply_seccomp(const struct brig_policy *p, struct ptree *cfg, bool current_ok, bool as_text,
                  struct brig_error **err)
{
    if (p->seccomp.profile == POLICY_SECCOMP_DEFAULT && current_ok) return 0;
    autofree char *file_text = NULL;
    const char *text = policy_seccomp_default_text();
    /* brig's own profile, checked by its tests; the verify below and
     * create parse the whole config again. A file is parsed here. */
    if (as_text && p->seccomp.profile == POLICY_SECCOMP_DEFAULT) {
        ptree_set(ptree_obj(cfg, "linux"), "seccomp", ptree_new_raw(text));
        return 0;
    }
    size_t len = strlen(text);
    if (p->seccomp.profile == POLICY_SECCOMP_FILE) {
        if (brig_read_regular(p->seccomp.path, 4u << 20, &file_text, &len, err) < 0)
            return brig_wrap(err, "seccomp.path");
        text = file_text;
    }
    struct ptree *prof = NULL;
    if (ptree_parse(text, len, &prof, err) < 0) return brig_wrap(err, "seccomp profile");
    ptree_set(ptree_obj(cfg, "linux"), "seccomp", prof);
    return 0;
}
