/* The rules of policy_check, one function each, in report order. Each adds
 * one failed result per offending value, with the value's JSON path; never
 * an environment value (only names), never argv beyond args[0]. */
#include "policy_internal.h"

#include <ctype.h>
#include <fnmatch.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "../runtime/config/spec.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

#define RULE(name) \
    static void name(const struct brig_policy *p, const struct brig_spec *s, struct policy_report *rep, \
                     const char *rule)

static const struct brig_namespace *ns_of(const struct brig_spec *s, enum brig_ns_type t)
{
    return &s->linux_cfg.namespaces[t];
}

RULE(rule_net)
{
    const struct brig_namespace *n = ns_of(s, BRIG_NS_NETWORK);
    if (!n->present) {
        policy_fail(rep, rule, "linux.namespaces", "no network namespace: the host's network is shared");
    } else if (p->network.mode != POLICY_NET_NETNS && n->path != NULL) {
        policy_fail(rep, rule, "linux.namespaces[network].path", "\"%s\": joins an existing network "
                    "namespace; the policy asks for a new, empty one (%s)", n->path,
                    p->network.mode == POLICY_NET_EGRESS ? "egress through brig's proxy" : "none");
    } else if (p->network.mode == POLICY_NET_NETNS &&
               (n->path == NULL || strcmp(n->path, p->network.path) != 0)) {
        policy_fail(rep, rule, "linux.namespaces[network].path", "%s%s%s: the policy's network is %s",
                    n->path ? "\"" : "", n->path ? n->path : "a new namespace", n->path ? "\"" : "",
                    p->network.path);
    }
}

RULE(rule_ns_host)
{
    static const enum brig_ns_type required[] = { BRIG_NS_PID, BRIG_NS_IPC, BRIG_NS_UTS, BRIG_NS_MOUNT };
    for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
        if (!ns_of(s, required[i])->present)
            policy_fail(rep, rule, "linux.namespaces", "no %s namespace: the host's is shared",
                        spec_ns_name(required[i]));
    if (p->user.userns && !ns_of(s, BRIG_NS_USER)->present)
        policy_fail(rep, rule, "linux.namespaces", "no user namespace: the policy asks for one");
    for (int t = 0; t < BRIG_NS_COUNT; t++) {
        if (t == BRIG_NS_NETWORK || !ns_of(s, t)->present || ns_of(s, t)->path == NULL) continue;
        char path[64];
        snprintf(path, sizeof(path), "linux.namespaces[%s].path", spec_ns_name(t));
        policy_fail(rep, rule, path, "\"%s\": joins an existing namespace", ns_of(s, t)->path);
    }
}

RULE(rule_root_readonly)
{
    if (p->root_readonly && !s->root.readonly)
        policy_fail(rep, rule, "root.readonly", "false");
}

static char *caps_names(uint64_t mask)
{
    autofree char *out = brig_strdup("");
    for (int c = 0; c < 64; c++) {
        if (!(mask & (1ull << c))) continue;
        char *name = cap_to_name((cap_value_t)c);
        /* libcap says "cap_kill"; configs and policies say "CAP_KILL". */
        for (char *q = name; q && *q; q++) *q = (char)toupper((unsigned char)*q);
        char *next = brig_asprintf("%s%s%s", out, out[0] ? "," : "", name ? name : "?");
        cap_free(name);
        free(out);
        out = next;
    }
    return steal_ptr(&out);
}

RULE(rule_caps)
{
    static const char *const sets[] = { "bounding", "effective", "inheritable", "permitted", "ambient" };
    if (!s->process.has_caps) return;   /* absent: every set is empty */
    for (int i = 0; i < BRIG_CAP_SET_COUNT; i++) {
        uint64_t extra = s->process.caps.sets[i] & ~p->caps;
        if (extra == 0) continue;
        char path[64];
        snprintf(path, sizeof(path), "process.capabilities.%s", sets[i]);
        autofree char *names = caps_names(extra);
        policy_fail(rep, rule, path, "%s", names);
    }
}

RULE(rule_nnp)
{
    if (p->no_new_privileges && !s->process.no_new_privileges)
        policy_fail(rep, rule, "process.noNewPrivileges", "false");
}

/* An idmapped mount maps ids on disk (containerID) to ids of the host
 * (hostID). Host uid 0 on either side is host root's: hostID 0 makes the
 * mount's files root's to whoever runs in the container; containerID 0
 * stores what the container makes there as host root's (a setuid-root
 * file left on the host), even from root inside a user namespace. Any
 * other system id on disk is as bad: what the container makes there is
 * that account's, and it may set the setgid bit on its own group as it
 * sees it: a setgid-disk (6) or -shadow program left on the host for any
 * host user to run. "idmap" without mappings takes the container's,
 * containerID 0 included. Under brig's set-id filter (spec.h,
 * BRIG_NO_SETID_ANNOTATION: every process of the container has it) no
 * set-id bit can be set, and without CAP_SETFCAP, CAP_SYS_ADMIN and
 * CAP_MKNOD in any set no file capability, other security.* attribute or
 * device node either: then a system id on disk makes only plain files
 * that account's (a sandbox's workspace owned by root). */
static void policy_idmap_side(const struct brig_id_mapping *m, size_t n, const char *path,
                              const char *what, bool setid_filtered, struct policy_report *rep,
                              const char *rule)
{
    for (size_t k = 0; k < n; k++) {
        if (m[k].host_id == 0)
            policy_fail(rep, rule, path, "host %s 0 is mapped onto the mount", what);
        else if (setid_filtered)
            continue;
        else if (m[k].container_id == 0)
            policy_fail(rep, rule, path, "%s 0 on disk is mapped: files made there would be "
                        "host root's", what);
        else if (m[k].container_id <= POLICY_SYSTEM_ID_MAX)
            policy_fail(rep, rule, path, "%s %u on disk is mapped: a system id (below %u), files "
                        "made there (setuid or setgid programs among them) would be that account's",
                        what, m[k].container_id, POLICY_SYSTEM_ID_MAX + 1);
    }
}

static void policy_user_idmap(const struct brig_spec *s, size_t i, struct policy_report *rep,
                              const char *rule)
{
    const struct brig_mount *m = &s->mounts[i];
    char path[64];
    uint64_t held = 0;
    for (int k = 0; s->process.has_caps && k < BRIG_CAP_SET_COUNT; k++) held |= s->process.caps.sets[k];
    const uint64_t marking = (1ull << CAP_SETFCAP) | (1ull << CAP_SYS_ADMIN) | (1ull << CAP_MKNOD);
    bool filtered = spec_annotation_is(s, BRIG_NO_SETID_ANNOTATION, "true") && !(held & marking);
    if (m->n_uid_mappings > 0 || m->n_gid_mappings > 0) {
        snprintf(path, sizeof(path), "mounts[%zu].uidMappings", i);
        policy_idmap_side(m->uid_mappings, m->n_uid_mappings, path, "uid", filtered, rep, rule);
        snprintf(path, sizeof(path), "mounts[%zu].gidMappings", i);
        policy_idmap_side(m->gid_mappings, m->n_gid_mappings, path, "gid", filtered, rep, rule);
    } else if (m->opts.idmap) {
        snprintf(path, sizeof(path), "mounts[%zu].options", i);
        policy_idmap_side(s->linux_cfg.uid_mappings, s->linux_cfg.n_uid_mappings, path,
                          "uid (idmap: linux.uidMappings)", filtered, rep, rule);
        policy_idmap_side(s->linux_cfg.gid_mappings, s->linux_cfg.n_gid_mappings, path,
                          "gid (idmap: linux.gidMappings)", filtered, rep, rule);
    }
}

RULE(rule_user)
{
    const struct brig_user *u = &s->process.user;
    /* Whatever the policy's mode: a mapping of host root makes the uid the
     * rules judge (1000 inside) root on every file it touches. */
    for (size_t i = 0; i < s->linux_cfg.n_uid_mappings; i++)
        if (s->linux_cfg.uid_mappings[i].host_id == 0)
            policy_fail(rep, rule, "linux.uidMappings", "host uid 0 is mapped into the container");
    for (size_t i = 0; i < s->linux_cfg.n_gid_mappings; i++)
        if (s->linux_cfg.gid_mappings[i].host_id == 0)
            policy_fail(rep, rule, "linux.gidMappings", "host gid 0 is mapped into the container");
    for (size_t i = 0; i < s->n_mounts; i++) policy_user_idmap(s, i, rep, rule);
    if (p->user.userns) {
        if (s->linux_cfg.n_uid_mappings == 0)
            policy_fail(rep, rule, "linux.uidMappings", "none: the user namespace maps nobody");
        return;
    }
    if (u->uid != p->user.uid)
        policy_fail(rep, rule, "process.user.uid", "%u (the policy runs as %u)", u->uid, p->user.uid);
    if (u->gid != p->user.gid)
        policy_fail(rep, rule, "process.user.gid", "%u (the policy runs as %u)", u->gid, p->user.gid);
    /* A supplementary group is one the command may chgrp its files to and
     * set the setgid bit on: a system group's (disk, shadow, docker) would
     * be a setgid program of it left in the workspace for host users. */
    for (size_t i = 0; i < u->n_additional_gids; i++)
        if (u->additional_gids[i] == 0)
            policy_fail(rep, rule, "process.user.additionalGids", "0 (the root group)");
        else if (u->additional_gids[i] <= POLICY_SYSTEM_ID_MAX)
            policy_fail(rep, rule, "process.user.additionalGids", "%u (a system group, below %u: "
                        "the command could leave a setgid program of it on the host)",
                        u->additional_gids[i], POLICY_SYSTEM_ID_MAX + 1);
}

/* Filesystems made from nothing on the host. Any other type (overlay with
 * lowerdir=/root, ext4 of a host block device, devtmpfs: the host's device
 * nodes) shows host storage whose paths the forbidden list cannot judge. */
static bool mount_type_pseudo(const char *type)
{
    static const char *const pseudo[] = { "proc", "sysfs", "tmpfs", "devpts", "mqueue", "cgroup",
                                          "cgroup2", NULL };
    for (const char *const *t = pseudo; type != NULL && *t != NULL; t++)
        if (strcmp(type, *t) == 0) return true;
    return false;
}

/* "/", "//", "/./": the container's root itself. */
static bool dest_is_root(const char *d)
{
    if (d == NULL || d[0] != '/') return false;
    for (; *d != '\0'; d++)
        if (*d != '/' && !(*d == '.' && (d[1] == '/' || d[1] == '\0') && d[-1] == '/')) return false;
    return true;
}

RULE(rule_mounts_forbidden)
{
    const char *rwhich = NULL;
    if (policy_root_forbidden(p, &s->root, &rwhich))
        policy_fail(rep, rule, "root.path", "\"%s\" (holds the forbidden host path %s)", s->root.path, rwhich);
    for (size_t i = 0; i < s->n_mounts; i++) {
        const struct brig_mount *m = &s->mounts[i];
        const char *which = NULL;
        /* A bind onto "/" replaces the root the checks above judged (and
         * the root.readonly and sticky-directory ones): never under a policy. */
        if (dest_is_root(m->destination)) {
            char path[64];
            snprintf(path, sizeof(path), "mounts[%zu].destination", i);
            policy_fail(rep, rule, path, "\"%s\": a mount over the container's root replaces root.path",
                        m->destination);
            continue;
        }
        if (!policy_mount_is_bind(m) && !mount_type_pseudo(m->type)) {
            char path[64];
            snprintf(path, sizeof(path), "mounts[%zu].type", i);
            policy_fail(rep, rule, path, "\"%s\" at %s (only binds, judged by source, and "
                        "proc/sysfs/tmpfs/devpts/mqueue/cgroup may be mounted)",
                        m->type ? m->type : "", m->destination);
            continue;
        }
        if (!policy_mount_is_bind(m) || !policy_path_forbidden(p, m->source, &which)) continue;
        char path[64];
        snprintf(path, sizeof(path), "mounts[%zu].source", i);
        policy_fail(rep, rule, path, "\"%s\" (forbidden host path %s)", m->source, which);
    }
}

/* A world-writable sticky directory (/tmp, /var/tmp) is where every
 * user's services put their sockets (an SSH agent, tmux, X11): bound, a
 * container of the same uid connects to them, network "none" or not. It is
 * judged by what it is, whatever it is called. */
static bool shared_sticky(bool has_fd, int fd, const char *path)
{
    struct stat st;
    if (has_fd ? fstat(fd, &st) < 0 : path == NULL || stat(path, &st) < 0) return false;
    return S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH);
}

/* A socket is a service's front door (the Docker API, a D-Bus bus, an
 * SSH agent): judged by what the source is, whatever it is called, and
 * allowed only by its exact path in the policy's sockets list. A directory
 * is judged by the forbidden list, not by the sockets it may hold, but for
 * a shared sticky one (above). */
RULE(rule_mounts_sockets)
{
    if (shared_sticky(s->root.has_fd, s->root.fd, s->root.path))
        policy_fail(rep, rule, "root.path", "\"%s\" is a world-writable sticky directory (like /tmp): "
                    "it holds other users' sockets", s->root.path);
    for (size_t i = 0; i < s->n_mounts; i++) {
        const struct brig_mount *m = &s->mounts[i];
        if (!policy_mount_is_bind(m) || m->source == NULL || m->source[0] != '/') continue;
        if (m->has_source_fd && m->source_fd < 0) continue;     /* the mount refuses it */
        const char *which = NULL;
        if (policy_path_forbidden(p, m->source, &which)) continue;  /* mounts.forbidden says so */
        char path[64];
        snprintf(path, sizeof(path), "mounts[%zu].source", i);
        if (shared_sticky(m->has_source_fd, m->source_fd, m->source)) {
            policy_fail(rep, rule, path, "\"%s\" is a world-writable sticky directory (like /tmp): "
                        "it holds other users' sockets", m->source);
            continue;
        }
        char real[PATH_MAX];
        if (!policy_socket_refused(p, m->source, m->has_source_fd ? m->source_fd : -1, real, sizeof(real)))
            continue;
        bool same = strcmp(real, m->source) == 0;
        policy_fail(rep, rule, path, "\"%s\"%s%s is a UNIX socket not in the policy's sockets",
                    m->source, same ? "" : " -> ", same ? "" : real);
    }
}

static bool strv_has(char *const *v, const char *s)
{
    for (; v != NULL && *v != NULL; v++)
        if (strcmp(*v, s) == 0) return true;
    return false;
}

RULE(rule_mounts_sys)
{
    bool proc = false, sys = false;
    for (size_t i = 0; i < s->n_mounts; i++) {
        const struct brig_mount *m = &s->mounts[i];
        const char *type = m->type ? m->type : "";
        bool bind = policy_mount_is_bind(m);
        bool sysfs = strcmp(type, "sysfs") == 0 || (bind && m->source && brig_str_has_prefix(m->source, "/sys"));
        bool cgroup = strcmp(type, "cgroup") == 0 || strcmp(type, "cgroup2") == 0;
        if (strcmp(type, "proc") == 0) proc = true;
        /* The masks and read-only paths are applied at /proc only: a proc
         * instance elsewhere would show /proc/kcore and a writable sys. */
        if (strcmp(type, "proc") == 0 && strcmp(m->destination, "/proc") != 0) {
            char path[64];
            snprintf(path, sizeof(path), "mounts[%zu].destination", i);
            policy_fail(rep, rule, path, "proc at %s: only /proc gets the masked and read-only paths",
                        m->destination);
        }
        if (sysfs) sys = true;
        if ((sysfs || cgroup) && !policy_mount_readonly(m)) {
            char path[64];
            snprintf(path, sizeof(path), "mounts[%zu].options", i);
            policy_fail(rep, rule, path, "%s at %s is writable", cgroup ? "cgroup fs" : "sysfs", m->destination);
        }
    }
    for (const char *const *mp = policy_masked_paths; proc && *mp; mp++) {
        if (brig_str_has_prefix(*mp, "/sys") && !sys) continue;
        if (!strv_has(s->linux_cfg.masked_paths, *mp))
            policy_fail(rep, rule, "linux.maskedPaths", "%s is not masked", *mp);
    }
    for (const char *const *rp = policy_readonly_paths; proc && *rp; rp++)
        if (!strv_has(s->linux_cfg.readonly_paths, *rp) && !strv_has(s->linux_cfg.masked_paths, *rp))
            policy_fail(rep, rule, "linux.readonlyPaths", "%s is neither read-only nor masked", *rp);
}

static const struct brig_mount *mount_at(const struct brig_spec *s, const char *dst, size_t *idx)
{
    const struct brig_mount *found = NULL;
    /* The last mount at a destination is the one the container sees. */
    for (size_t i = 0; i < s->n_mounts; i++) {
        if (strcmp(s->mounts[i].destination, dst) == 0) {
            found = &s->mounts[i];
            *idx = i;
        }
    }
    return found;
}

const struct brig_mount *policy_workspace_mount(const struct brig_policy *p, const struct brig_spec *s,
                                                size_t *idx)
{
    return p->workspace.path == NULL ? NULL : mount_at(s, p->workspace.path, idx);
}

RULE(rule_mounts_tmpfs)
{
    for (size_t i = 0; i < p->n_tmpfs; i++) {
        size_t idx = 0;
        const struct brig_mount *m = mount_at(s, p->tmpfs[i].path, &idx);
        if (m == NULL || m->type == NULL || strcmp(m->type, "tmpfs") != 0) {
            policy_fail(rep, rule, "mounts", "no tmpfs at %s", p->tmpfs[i].path);
            continue;
        }
        char path[64];
        snprintf(path, sizeof(path), "mounts[%zu].options", idx);
        uint64_t size = 0;
        int r = policy_tmpfs_size(m->options, &size);
        if (r <= 0)
            policy_fail(rep, rule, path, "tmpfs at %s: %s", m->destination,
                        r == 0 ? "no size= (half the host's memory)" : "size= not in bytes/k/m/g");
        else if (size > p->tmpfs[i].size)
            policy_fail(rep, rule, path, "tmpfs at %s: size %llu bytes, more than %llu", m->destination,
                        (unsigned long long)size, (unsigned long long)p->tmpfs[i].size);
        if (policy_mount_readonly(m))
            policy_fail(rep, rule, path, "tmpfs at %s is read-only", m->destination);
    }
}

RULE(rule_workspace)
{
    if (p->workspace.path == NULL) return;
    size_t idx = 0;
    const struct brig_mount *m = mount_at(s, p->workspace.path, &idx);
    if (m == NULL) {
        if (p->workspace.required) policy_fail(rep, rule, "mounts", "no mount at %s", p->workspace.path);
        return;
    }
    char path[64];
    snprintf(path, sizeof(path), "mounts[%zu]", idx);
    if (!policy_mount_is_bind(m))
        policy_fail(rep, rule, path, "%s is a %s mount, not a bind of a host directory", m->destination,
                    m->type ? m->type : "typeless");
    else if (policy_mount_readonly(m))
        policy_fail(rep, rule, path, "%s is read-only (the workspace is writable)", m->destination);
}

/* A bind that holds no data: a UNIX socket (judged by what create opened,
 * else by where the path leads, as the mount would). */
static bool mount_is_socket(const struct brig_mount *o)
{
    struct stat st;
    if (o->has_source_fd) return o->source_fd >= 0 && fstat(o->source_fd, &st) == 0 && S_ISSOCK(st.st_mode);
    return o->source != NULL && stat(o->source, &st) == 0 && S_ISSOCK(st.st_mode);
}

RULE(rule_workspace_quota)
{
    if (p->workspace.max_size == 0 || p->workspace.path == NULL) return;
    size_t idx = 0;
    const struct brig_mount *m = policy_workspace_mount(p, s, &idx);
    /* The bound is on what the container can write to disk: another
     * writable bind (/workspace/cache from a big disk) would go around it.
     * An engine's per-container hosts/hostname/resolv.conf is made
     * read-only by create under a bound (policy_enforce.c); a socket holds
     * nothing. */
    for (size_t i = 0; i < s->n_mounts; i++) {
        const struct brig_mount *o = &s->mounts[i];
        if (!policy_mount_is_bind(o) || policy_mount_readonly(o) ||
            strcmp(o->destination, p->workspace.path) == 0 ||    /* it, or shadowed by it */
            (o->source != NULL && policy_engine_file(o->source)) || mount_is_socket(o))
            continue;
        char opath[64];
        snprintf(opath, sizeof(opath), "mounts[%zu].options", i);
        policy_fail(rep, rule, opath, "a writable bind of %s at %s besides the workspace (workspace.maxSize "
                    "bounds the workspace only: make it read-only)", o->source ? o->source : "", o->destination);
    }
    /* No workspace, or not a bind: rule workspace says so. */
    if (m == NULL || !policy_mount_is_bind(m) || m->source == NULL) return;
    if (m->has_source_fd && m->source_fd < 0) return;   /* the mount refuses it */
    char why[PATH_MAX + 256];
    if (policy_quota_judge(p, s, m, why, sizeof(why)) != POLICY_QUOTA_NONE) return;
    char path[64];
    snprintf(path, sizeof(path), "mounts[%zu].source", idx);
    policy_fail(rep, rule, path, "workspace.maxSize %llu bytes cannot be enforced: %s",
                (unsigned long long)p->workspace.max_size, why);
}

RULE(rule_limits_memory)
{
    const struct brig_resources *r = &s->linux_cfg.resources;
    if (!r->memory.limit.set || r->memory.limit.v <= 0) {
        policy_fail(rep, rule, "linux.resources.memory.limit", "unlimited");
        return;
    }
    uint64_t lim = (uint64_t)r->memory.limit.v;
    if (lim > p->limits.memory)
        policy_fail(rep, rule, "linux.resources.memory.limit", "%llu bytes, more than %llu",
                    (unsigned long long)lim, (unsigned long long)p->limits.memory);
    /* memory.swap is memory + swap, as cgroup v1's memsw. Judged as the
     * runtime writes it: 0 is "no swap" (memsw = the limit, v2 swap.max 0),
     * absent leaves swap unlimited. */
    uint64_t swap_max = (lim < p->limits.memory ? lim : p->limits.memory) + p->limits.swap;
    if (!r->memory.swap.set || r->memory.swap.v < 0) {
        policy_fail(rep, rule, "linux.resources.memory.swap", "unlimited");
        return;
    }
    uint64_t memsw = r->memory.swap.v == 0 ? lim : (uint64_t)r->memory.swap.v;
    if (memsw > swap_max)
        policy_fail(rep, rule, "linux.resources.memory.swap", "%llu bytes, more than %llu",
                    (unsigned long long)memsw, (unsigned long long)swap_max);
}

RULE(rule_limits_pids)
{
    const struct brig_resources *r = &s->linux_cfg.resources;
    if (!r->pids.limit.set || r->pids.limit.v <= 0)
        policy_fail(rep, rule, "linux.resources.pids.limit", "unlimited");
    else if ((uint64_t)r->pids.limit.v > p->limits.pids)
        policy_fail(rep, rule, "linux.resources.pids.limit", "%lld, more than %llu",
                    (long long)r->pids.limit.v, (unsigned long long)p->limits.pids);
}

RULE(rule_limits_cpu)
{
    const struct brig_resources *r = &s->linux_cfg.resources;
    /* Realtime and deadline tasks are not bound by the CFS quota: without
     * RT group scheduling they take 95% of every CPU they run on. */
    int sp = s->process.scheduler.policy;
    if (s->process.has_scheduler && (sp == SCHED_FIFO || sp == SCHED_RR || sp == SCHED_DEADLINE))
        policy_fail(rep, rule, "process.scheduler.policy", "%s: a realtime class escapes the CPU quota",
                    sp == SCHED_FIFO ? "SCHED_FIFO" : sp == SCHED_RR ? "SCHED_RR" : "SCHED_DEADLINE");
    uint64_t period = r->cpu.period.set && r->cpu.period.v > 0 ? r->cpu.period.v : 100000;
    if (!r->cpu.quota.set || r->cpu.quota.v <= 0) {
        policy_fail(rep, rule, "linux.resources.cpu.quota", "unlimited");
        return;
    }
    uint64_t milli = (uint64_t)r->cpu.quota.v * 1000 / period;
    if (milli > p->limits.cpu_milli)
        policy_fail(rep, rule, "linux.resources.cpu.quota", "%lld/%llu: %llu.%03llu CPUs, more than %llu.%03llu",
                    (long long)r->cpu.quota.v, (unsigned long long)period,
                    (unsigned long long)(milli / 1000), (unsigned long long)(milli % 1000),
                    (unsigned long long)(p->limits.cpu_milli / 1000),
                    (unsigned long long)(p->limits.cpu_milli % 1000));
}

RULE(rule_rlimits)
{
    for (size_t i = 0; i < p->n_rlimits; i++) {
        const struct brig_rlimit *found = NULL;
        size_t idx = 0;
        for (size_t j = 0; j < s->process.n_rlimits; j++)
            if (strcmp(s->process.rlimits[j].name, p->rlimits[i].type) == 0) {
                found = &s->process.rlimits[j];
                idx = j;
            }
        if (found == NULL) {
            policy_fail(rep, rule, "process.rlimits", "no %s (the host's limit is inherited)", p->rlimits[i].type);
            continue;
        }
        char path[64];
        snprintf(path, sizeof(path), "process.rlimits[%zu]", idx);
        if (found->hard > p->rlimits[i].max || found->soft > p->rlimits[i].max)
            policy_fail(rep, rule, path, "%s soft %llu hard %llu, more than %llu", found->name,
                        (unsigned long long)found->soft, (unsigned long long)found->hard,
                        (unsigned long long)p->rlimits[i].max);
    }
}

RULE(rule_devices)
{
    for (size_t i = 0; i < s->linux_cfg.n_devices; i++) {
        const struct brig_device *dev = &s->linux_cfg.devices[i];
        bool by_path;
        const char *why = policy_device_refused(p, dev, &by_path);
        if (why == NULL) continue;
        char path[64];
        snprintf(path, sizeof(path), "linux.devices[%zu]%s", i, by_path ? ".path" : "");
        policy_fail(rep, rule, path, "\"%s\" as %c %lld:%lld %s", dev->path, dev->type, (long long)dev->major,
                    (long long)dev->minor, why);
    }
    const struct brig_resources *r = &s->linux_cfg.resources;
    for (size_t i = 0; i < r->n_devices; i++) {
        const struct brig_device_rule *d = &r->devices[i];
        if (policy_device_rule_allowed(p, d)) {
            /* Docker's c 5:1 passes because the root is then nodev; without
             * a /dev mount of its own the root keeps its nodes, and an
             * image's c 5:1 node would be the host's console. */
            if (d->allow && d->type == 'c' && d->major == 5 && d->minor == 1 && policy_dev_mount_index(s) < 0) {
                char path[64];
                snprintf(path, sizeof(path), "linux.resources.devices[%zu]", i);
                policy_fail(rep, rule, path, "allows c 5:1 (the host's console) and /dev is not a mount of "
                            "its own: an image's node would open it");
            }
            continue;
        }
        char path[64], name[80], maj[24], min[24];
        snprintf(path, sizeof(path), "linux.resources.devices[%zu]", i);
        if (d->major < 0) snprintf(maj, sizeof(maj), "*");
        else snprintf(maj, sizeof(maj), "%lld", (long long)d->major);
        if (d->minor < 0) snprintf(min, sizeof(min), "*");
        else snprintf(min, sizeof(min), "%lld", (long long)d->minor);
        policy_device_host_name(d->type, d->major, d->minor, name, sizeof(name));
        bool wild = d->type == 'a' || d->major < 0 || d->minor < 0;
        policy_fail(rep, rule, path, "allows %c %s:%s %s (%s%s%s)", d->type ? d->type : 'a', maj, min,
                    d->access[0] ? d->access : "rwm",
                    wild ? "a wildcard" : "not a default device nor one the policy's devices list",
                    name[0] ? ": the host's " : "", name);
    }
}

RULE(rule_hooks)
{
    for (int k = 0; k < BRIG_HOOK_KIND_COUNT; k++) {
        for (size_t i = 0; i < s->hooks[k].n; i++) {
            const char *h = s->hooks[k].hooks[i].path;
            if (strv_has(p->hooks, h)) continue;
            if (k == BRIG_HOOK_PRESTART && policy_engine_hook(&s->hooks[k].hooks[i])) continue;
            char path[64];
            snprintf(path, sizeof(path), "hooks.%s[%zu].path", spec_hook_name(k), i);
            policy_fail(rep, rule, path, "\"%s\" (hooks run on the host as root)", h);
        }
    }
}

RULE(rule_sysctl)
{
    for (size_t i = 0; i < s->linux_cfg.n_sysctl; i++) {
        const char *k = s->linux_cfg.sysctl[i].key;
        if (policy_glob_any(p->sysctl, k) || policy_engine_sysctl(k, s->linux_cfg.sysctl[i].value)) continue;
        char path[160];
        snprintf(path, sizeof(path), "linux.sysctl.%s", k);
        policy_fail(rep, rule, path, "\"%s\" is not an allowed sysctl", k);
    }
}

RULE(rule_env)
{
    for (size_t i = 0; i < s->process.n_env; i++) {
        const char *e = s->process.env[i];
        size_t n = strcspn(e, "=");
        autofree char *name = strndup(e, n);
        if (name == NULL || !policy_env_name_denied(p, name)) continue;
        char path[64];
        snprintf(path, sizeof(path), "process.env[%zu]", i);
        /* The name only: the value may be the secret itself. */
        policy_fail(rep, rule, path, "%s (%s)", name,
                    policy_glob_any(p->env_deny, name) ? "a secret-looking name" : "not in env.allow");
    }
}

RULE(rule_init)
{
    if (p->init == NULL) return;
    if (s->process.n_args == 0 || strcmp(s->process.args[0], p->init) != 0)
        policy_fail(rep, rule, "process.args[0]", "\"%s\" (the policy runs %s as PID 1)",
                    s->process.n_args ? s->process.args[0] : "", p->init);
}

const struct policy_rule policy_rules[] = {
    { "net.none", rule_net, "a new, empty network namespace (or the policy's netns path)" },
    { "ns.host", rule_ns_host, "new pid/ipc/uts/mount namespaces; no joins of existing ones" },
    { "root.readonly", rule_root_readonly, "the root filesystem is read-only" },
    { "caps.none", rule_caps, "no capability outside the policy's list (default: none)" },
    { "nnp", rule_nnp, "process.noNewPrivileges is true" },
    { "user.nonroot", rule_user, "runs as the policy's uid/gid, or root only inside a user namespace" },
    { "seccomp.present", policy_rule_seccomp, "a default-deny seccomp filter that blocks the risky syscalls" },
    { "seccomp.netlink", policy_rule_seccomp_netlink, "netlink sockets of NETLINK_ROUTE only (no host device events, audit, connector)" },
    { "mounts.forbidden", rule_mounts_forbidden, "no bind of a forbidden host path" },
    { "mounts.sockets", rule_mounts_sockets, "no bind of a UNIX socket but the policy's sockets" },
    { "mounts.sys", rule_mounts_sys, "sysfs and cgroup fs read-only, /proc paths masked or read-only" },
    { "mounts.tmpfs", rule_mounts_tmpfs, "the policy's tmpfs mounts, with bounded sizes" },
    { "workspace", rule_workspace, "the workspace is a writable bind mount" },
    { "workspace.quota", rule_workspace_quota, "the host can bound the workspace to workspace.maxSize" },
    { "limits.memory", rule_limits_memory, "memory and swap limits within the policy's" },
    { "limits.pids", rule_limits_pids, "a pids limit within the policy's" },
    { "limits.cpu", rule_limits_cpu, "a CPU quota within the policy's" },
    { "rlimits", rule_rlimits, "the policy's rlimits, at most its values" },
    { "devices", rule_devices, "only the default devices and the policy's own; no other device access" },
    { "hooks", rule_hooks, "no hooks but the policy's allowlist (hooks run on the host)" },
    { "sysctl", rule_sysctl, "only allowed sysctls" },
    { "env.secrets", rule_env, "no secret-looking environment names; only allowed names" },
    { "init", rule_init, "the policy's init runs as PID 1" },
};
const size_t policy_n_rules = sizeof(policy_rules) / sizeof(policy_rules[0]);
