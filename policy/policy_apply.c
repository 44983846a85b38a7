/* policy_apply: config.json text -> config.json text that meets the
 * policy. The config is patched as a JSON tree (policy_tree.h) rather than
 * regenerated from struct brig_spec: what brig does not model is kept
 * byte-for-byte in meaning, and nothing the caller wrote silently vanishes
 * but what the policy forbids. The result is checked before it is
 * returned: apply never hands out a config that check would refuse. */
#include "policy_apply.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/config/spec.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

static void opts_remove(struct ptree *opts, const char *const *names)
{
    for (size_t i = opts->n; i-- > 0;) {
        const struct ptree *o = opts->vals[i];
        for (const char *const *n = names; o->type == PT_STR && *n; n++)
            if (strcmp(o->s, *n) == 0) {
                ptree_remove_at(opts, i);
                break;
            }
    }
}

static void opts_ensure(struct ptree *opts, const char *name)
{
    if (!ptree_arr_has_str(opts, name)) ptree_push(opts, ptree_new_str(name));
}

static struct ptree *mount_new(const char *dst, const char *type, const char *src, const char *const *opts)
{
    struct ptree *m = ptree_new(PT_OBJ);
    ptree_set(m, "destination", ptree_new_str(dst));
    ptree_set(m, "type", ptree_new_str(type));
    ptree_set(m, "source", ptree_new_str(src));
    ptree_set(m, "options", ptree_new_strv((char *const *)opts));
    return m;
}

/* [{"containerID": disk, "hostID": host, "size": 1}]: one id of a mount's
 * mapping (runtime/linux/rootfs/mounts_idmap.c reads it so). */
static struct ptree *mapping_new(uint32_t disk, uint32_t host)
{
    struct ptree *e = ptree_new(PT_OBJ);
    ptree_set(e, "containerID", ptree_new_u64(disk));
    ptree_set(e, "hostID", ptree_new_u64(host));
    ptree_set(e, "size", ptree_new_u64(1));
    struct ptree *a = ptree_new(PT_ARR);
    ptree_push(a, e);
    return a;
}

static bool mount_is_bind(const struct ptree *m)
{
    const char *type = ptree_str(m, "type");
    const struct ptree *o = ptree_get(m, "options");
    return (type && strcmp(type, "bind") == 0) || ptree_arr_has_str(o, "bind") || ptree_arr_has_str(o, "rbind");
}

/* Remove every mount at dst; returns the index of the first (or n). */
static size_t mounts_take(struct ptree *mounts, const char *dst)
{
    size_t first = mounts->n;
    for (size_t i = mounts->n; i-- > 0;) {
        const char *d = ptree_str(mounts->vals[i], "destination");
        if (d == NULL || strcmp(d, dst) != 0) continue;
        ptree_remove_at(mounts, i);
        first = i;
    }
    return first;
}

static void mounts_insert(struct ptree *mounts, size_t at, struct ptree *m)
{
    ptree_push(mounts, m);
    if (at >= mounts->n - 1) return;
    memmove(&mounts->vals[at + 1], &mounts->vals[at], (mounts->n - 1 - at) * sizeof(*mounts->vals));
    mounts->vals[at] = m;
}

/* workspace.maxSize is met by the host's filesystem, not by the config:
 * apply cannot patch it, so it says which directory cannot be bounded
 * (rather than "still violates" after the fact). The user namespace is
 * the patched config's (apply_namespaces has run). */
static int apply_workspace_quota(const struct brig_policy *p, const struct ptree *cfg, const char *src,
                                 const char *flag, struct brig_error **err)
{
    if (p->workspace.max_size == 0 || src == NULL) return 0;
    struct brig_spec s = { 0 };
    const struct ptree *ns = ptree_get(ptree_get(cfg, "linux"), "namespaces");
    for (size_t i = 0; ns != NULL && ns->type == PT_ARR && i < ns->n; i++) {
        const char *type = ptree_str(ns->vals[i], "type");
        if (type && strcmp(type, "user") == 0) s.linux_cfg.namespaces[BRIG_NS_USER].present = true;
    }
    /* A relative source is the bundle's, which apply spells "/" (spec_parse). */
    autofree char *abs = src[0] == '/' ? strdup(src) : brig_asprintf("/%s", src);
    if (abs == NULL) return brig_fail(err, ENOMEM, "workspace");
    struct brig_mount m = { .source = abs };
    char why[PATH_MAX + 256];
    if (policy_quota_judge(p, &s, &m, why, sizeof(why)) != POLICY_QUOTA_NONE) return 0;
    return brig_failx(err, "%s %s: workspace.maxSize %llu bytes cannot be enforced: %s", flag, src,
                      (unsigned long long)p->workspace.max_size, why);
}

static int apply_mounts(const struct brig_policy *p, struct ptree *cfg, const struct policy_apply_opts *o,
                        struct brig_error **err)
{
    static const char *const writable[] = { "rw", "rrw", NULL };
    struct ptree *mounts = ptree_arr(cfg, "mounts");
    for (size_t i = mounts->n; i-- > 0;) {
        struct ptree *m = mounts->vals[i];
        const char *type = ptree_str(m, "type");
        const char *src = ptree_str(m, "source");
        const char *dst = ptree_str(m, "destination");
        const char *which = NULL;
        bool is_ws = dst && p->workspace.path && strcmp(dst, p->workspace.path) == 0;
        if (mount_is_bind(m) && !is_ws && policy_path_forbidden(p, src, &which)) {
            brig_debug("policy apply: drop mount of %s (forbidden %s)", src, which);
            ptree_remove_at(mounts, i);
            continue;
        }
        char real[PATH_MAX];
        if (mount_is_bind(m) && src != NULL && src[0] == '/' &&
            policy_socket_refused(p, src, -1, real, sizeof(real))) {
            brig_debug("policy apply: drop mount of %s (a socket not in sockets)", src);
            ptree_remove_at(mounts, i);
            continue;
        }
        if (p->workspace.max_size > 0 && mount_is_bind(m) && !is_ws) {
            /* Under a workspace bound the workspace is the only writable bind. */
            struct ptree *opts = ptree_arr(m, "options");
            opts_remove(opts, writable);
            opts_ensure(opts, "ro");
        }
        bool sysfs = (type && strcmp(type, "sysfs") == 0) || (mount_is_bind(m) && src && brig_str_has_prefix(src, "/sys"));
        bool cgroup = type && (strcmp(type, "cgroup") == 0 || strcmp(type, "cgroup2") == 0);
        if (sysfs || cgroup) {
            struct ptree *opts = ptree_arr(m, "options");
            opts_remove(opts, writable);
            opts_ensure(opts, "ro");
        }
    }
    for (size_t i = 0; i < p->n_tmpfs; i++) {
        autofree char *size = brig_asprintf("size=%llu", (unsigned long long)p->tmpfs[i].size);
        const char *opts[] = { "nosuid", "nodev", "mode=1777", size, NULL };
        size_t at = mounts_take(mounts, p->tmpfs[i].path);
        mounts_insert(mounts, at, mount_new(p->tmpfs[i].path, "tmpfs", "tmpfs", opts));
    }
    if (p->workspace.path == NULL) return 0;
    struct ptree *ws = NULL;
    for (size_t i = 0; i < mounts->n; i++) {
        const char *d = ptree_str(mounts->vals[i], "destination");
        if (d && strcmp(d, p->workspace.path) == 0) ws = mounts->vals[i];
    }
    if (o != NULL && o->workspace_source != NULL) {
        const char *which = NULL;
        if (o->workspace_source[0] != '/')
            return brig_failx(err, "--workspace %s: expected an absolute host path", o->workspace_source);
        if (policy_path_forbidden(p, o->workspace_source, &which))
            return brig_failx(err, "--workspace %s: a forbidden host path (%s): the policy's forbiddenPaths "
                              "may not be bound; use a directory outside them, such as one under /srv",
                              o->workspace_source, which);
        TRY(apply_workspace_quota(p, cfg, o->workspace_source, "--workspace", err));
        static const char *const opts[] = { "rbind", "rw", "nosuid", "nodev", NULL };
        size_t at = mounts_take(mounts, p->workspace.path);
        struct ptree *m = mount_new(p->workspace.path, "bind", o->workspace_source, opts);
        if (o->workspace_idmap) {
            ptree_set(m, "uidMappings", mapping_new(o->disk_uid, o->host_uid));
            ptree_set(m, "gidMappings", mapping_new(o->disk_gid, o->host_gid));
        }
        mounts_insert(mounts, at, m);
        return 0;
    }
    if (ws == NULL) {
        if (!p->workspace.required) return 0;
        return brig_failx(err, "workspace: the policy needs a writable mount at %s; pass the host "
                          "directory with --workspace DIR", p->workspace.path);
    }
    if (!mount_is_bind(ws))
        return brig_failx(err, "workspace: the mount at %s is not a bind mount; pass the host "
                          "directory with --workspace DIR", p->workspace.path);
    static const char *const ro[] = { "ro", "rro", NULL };
    struct ptree *opts = ptree_arr(ws, "options");
    opts_remove(opts, ro);
    opts_ensure(opts, "rw");
    const char *which = NULL;
    if (policy_path_forbidden(p, ptree_str(ws, "source"), &which))
        return brig_failx(err, "workspace: its source %s is a forbidden host path (%s)",
                          ptree_str(ws, "source"), which);
    return apply_workspace_quota(p, cfg, ptree_str(ws, "source"), "workspace: the mount's source", err);
}

static bool seccomp_passes(const struct brig_policy *p, const struct brig_spec *s)
{
    /* Only a default profile keeps a passing filter of the config's own;
     * an absent one fails the rule (policy_rule_seccomp): no whole check for it. */
    if (p->seccomp.profile != POLICY_SECCOMP_DEFAULT || !s->linux_cfg.seccomp.present) return false;
    struct policy_report rep;
    policy_check(p, s, &rep);
    bool ok = true;
    for (size_t i = 0; i < rep.n; i++)
        if (!rep.r[i].pass && strncmp(rep.r[i].rule, "seccomp.", 8) == 0) ok = false;
    policy_report_free(&rep);
    return ok;
}

int policy_apply(const struct brig_policy *p, const char *config, size_t len,
                 const struct policy_apply_opts *o, char **out, struct brig_error **err)
{
    /* Bad input is refused before anything is patched (exit 2 in the CLI). */
    autospec struct brig_spec *before = NULL;
    bool ours = o != NULL && o->config_ours;
    if (!ours && spec_parse(config, len, "/", &before, err) < 0) return brig_wrap(err, "config.json");
    autoptree struct ptree *cfg = NULL;
    TRY(ptree_parse(config, len, &cfg, err));
    if (ours && ptree_get(ptree_get(cfg, "linux"), "seccomp") != NULL && spec_parse(config, len, "/", &before, err) < 0)
        return brig_wrap(err, "config.json");

    struct ptree *root = ptree_get(cfg, "root");
    if (p->root_readonly && root != NULL && root->type == PT_OBJ)
        ptree_set(root, "readonly", ptree_new_bool(true));
    TRY(apply_namespaces(p, cfg, err));
    apply_process(p, cfg);
    TRY(apply_mounts(p, cfg, o, err));
    apply_linux_misc(p, cfg);
    apply_resources(p, cfg);
    TRY(apply_seccomp(p, cfg, before != NULL && seccomp_passes(p, before), o != NULL && o->profile_as_text, err));

    autofree char *text = NULL;
    /* compact where it goes to create (profile_as_text), not to a reader */
    TRY(ptree_write_as(cfg, o == NULL || !o->profile_as_text, &text, err));
    /* Verify: what apply hands out must pass check. Create's own check of
     * the same text under the same policy comes next, before anything is
     * made, and refuses as this would (enforce mode): done once, there. */
    if (o != NULL && o->checked_by_create && p->mode == POLICY_ENFORCE) {
        *out = steal_ptr(&text);
        return 0;
    }
    autospec struct brig_spec *after = NULL;
    if (spec_parse(text, strlen(text), "/", &after, err) < 0)
        return brig_wrap(err, "policy apply produced a config brig cannot parse (a bug)");
    struct policy_report rep;
    policy_check(p, after, &rep);
    if (rep.failed > 0) {
        autofree char *why = policy_report_text(&rep, true);
        policy_report_free(&rep);
        return brig_failx(err, "policy apply: the config still violates the policy:\n%s", why);
    }
    policy_report_free(&rep);
    *out = steal_ptr(&text);
    return 0;
}
