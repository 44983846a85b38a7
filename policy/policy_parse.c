/* Policy file -> struct brig_policy (docs/policy.md, policy.schema.json).
 *
 * Security-critical input, so the parser is strict where config.json's is
 * lenient: an unknown key, a wrong type or an impossible value is an error
 * naming the key. A typo ("capabilites") must fail, never fall back to a
 * default that may be weaker or stronger than what was meant. */
#include "policy.h"
#include "policy_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>

#include "../egress/egress.h"
#include "../runtime/config/json.h"
#include "../runtime/config/spec.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

#define MAX_CAP_BIT 63

/* Host paths no container of a policy may see, whatever the policy adds.
 * A bind is refused when its source is one of them, lies inside one or
 * holds one (binding /run exposes /run/dbus), so each entry is the
 * narrowest directory that holds the secret, never a parent of places
 * engines keep a rootfs (a root.path inside one is allowed). */
static const char *const forbidden_builtin[] = {
    /* Docker: the API socket is root on the host; state, TLS keys. */
    "/var/run/docker.sock", "/run/docker.sock", "/var/run/docker", "/run/docker",
    "/var/lib/docker", "/etc/docker",
    /* containerd (and its CRI): socket, shims, images, config. */
    "/run/containerd", "/var/run/containerd", "/var/lib/containerd", "/etc/containerd",
    /* podman, CRI-O, buildah, skopeo: sockets, image storage (root runs
     * what is written there), registry logins (/run/containers/0/auth.json),
     * signature policy (/etc/containers/policy.json). */
    "/run/podman", "/var/run/podman", "/run/libpod", "/run/crio", "/var/run/crio",
    "/var/lib/crio", "/etc/crio", "/run/containers", "/var/run/containers",
    "/var/lib/containers", "/etc/containers",
    /* k3s and RKE2: their containerd socket, server token, TLS keys, the
     * admin kubeconfig (/etc/rancher/k3s/k3s.yaml). */
    "/run/k3s", "/var/run/k3s", "/var/lib/rancher", "/etc/rancher",
    /* BuildKit: buildkitd.sock builds as root; its cache and state. */
    "/run/buildkit", "/var/run/buildkit", "/var/lib/buildkit",
    /* LXD (snap and deb), Incus, LXC: unix.socket (root on the host),
     * server keys, instances' root filesystems. */
    "/var/snap/lxd", "/var/lib/lxd", "/run/lxd", "/var/lib/incus", "/run/incus",
    "/var/lib/lxc", "/run/lxc",
    /* libvirt: libvirt-sock and virtqemud-sock start VMs with host disks;
     * disk images; qemu hooks run as root. */
    "/run/libvirt", "/var/run/libvirt", "/var/lib/libvirt", "/etc/libvirt",
    /* The system D-Bus (systemd, polkit, NetworkManager, udisks) and
     * systemd's private, notify, journal and varlink sockets. */
    "/run/dbus", "/var/run/dbus", "/run/systemd", "/var/run/systemd",
    /* Kubernetes: kubelet's pod volumes (every pod's secrets), its client
     * certificate, pod-resources and device-plugin sockets; the cluster's
     * CA keys and admin.conf; etcd's data (all cluster secrets). */
    "/var/lib/kubelet", "/etc/kubernetes", "/var/lib/etcd",
    /* Homes, keys, secrets, kernel interfaces, logs, brig itself. */
    "/run/user", "/root", "/home", "/etc/shadow", "/etc/gshadow", "/etc/sudoers",
    "/etc/ssh", "/var/run/secrets", "/run/secrets", "/proc", "/sys", "/dev",
    "/boot", "/var/log", "/etc/brig", "/",
    NULL
};

static const char *const env_deny_default[] = {
    "*_TOKEN", "*_KEY", "*SECRET*", "*PASSWORD*", "AWS_*", NULL
};

static const char *const rlimit_names[] = {
    "RLIMIT_AS", "RLIMIT_CORE", "RLIMIT_CPU", "RLIMIT_DATA", "RLIMIT_FSIZE", "RLIMIT_LOCKS",
    "RLIMIT_MEMLOCK", "RLIMIT_MSGQUEUE", "RLIMIT_NICE", "RLIMIT_NOFILE", "RLIMIT_NPROC",
    "RLIMIT_RSS", "RLIMIT_RTPRIO", "RLIMIT_RTTIME", "RLIMIT_SIGPENDING", "RLIMIT_STACK", NULL
};

static bool strv_has(const char *const *v, const char *s)
{
    for (; v != NULL && *v != NULL; v++)
        if (strcmp(*v, s) == 0) return true;
    return false;
}

struct strv_ref { const char *s; size_t at; };

static int strv_ref_cmp(const void *a, const void *b)
{
    const struct strv_ref *x = a, *y = b;
    int c = strcmp(x->s, y->s);
    return c != 0 ? c : (x->at > y->at) - (x->at < y->at);
}

/* Append to *v every string of add it does not hold yet, in add's order
 * (policies can only add to the built-in lists, never remove from them).
 * Both lists sorted together, each string's first place kept: a search of
 * *v per string made a policy's list of 100,000 names take minutes. */
static void strv_add_missing(char ***v, char *const *add)
{
    size_t n = brig_strv_len(*v), m = add != NULL ? brig_strv_len(add) : 0;
    if (m == 0) return;
    autofree struct strv_ref *r = brig_calloc(n + m, sizeof(*r));
    for (size_t i = 0; i < n; i++) r[i] = (struct strv_ref){ (*v)[i], i };
    for (size_t i = 0; i < m; i++) r[n + i] = (struct strv_ref){ add[i], n + i };
    qsort(r, n + m, sizeof(*r), strv_ref_cmp);
    autofree bool *first = brig_calloc(n + m, sizeof(*first));
    for (size_t k = 0; k < n + m; k++) first[r[k].at] = k == 0 || strcmp(r[k - 1].s, r[k].s) != 0;
    char **nv = realloc(*v, (n + m + 1) * sizeof(char *));
    if (nv == NULL) abort();
    size_t at = n;
    for (size_t i = 0; i < m; i++)
        if (first[n + i]) nv[at++] = brig_strdup(add[i]);
    nv[at] = NULL;
    *v = nv;
}

/* Every key of obj must be in known. */
static int pp_keys(brig_json obj, const char *path, const char *const *known, struct brig_error **err)
{
    TRY(json_as_object(obj, path, err));
    for (size_t i = 0; i < json_object_len(obj); i++) {
        const char *k = json_object_key(obj, i);
        if (strv_has(known, k)) continue;
        char p[256];
        json_path_join(p, sizeof(p), path, k);
        return brig_failx(err, "%s: unknown key (a typo must not weaken a policy; see docs/policy.md)", p);
    }
    return 0;
}

/* A size as a human string ("512MiB") or a number of bytes. 1 if absent. */
static int pp_size(brig_json obj, const char *path, const char *key, bool allow_zero, uint64_t *out,
                   struct brig_error **err)
{
    brig_json v = json_get(obj, key);
    if (v == NULL) return 1;
    char p[256];
    json_path_join(p, sizeof(p), path, key);
    if (json_is_string(v)) {
        const char *s = NULL;
        TRY(json_as_string(v, p, &s, err));
        if (policy_parse_size(s, out) < 0)
            return brig_failx(err, "%s: \"%s\" is not a size (e.g. \"512MiB\", \"1G\", \"64k\")", p, s);
    } else if (json_as_u64(v, p, out, err) < 0) {
        return brig_wrap(err, "(or a size string like \"512MiB\")");
    }
    if (*out == 0 && !allow_zero) return brig_failx(err, "%s: must be more than 0", p);
    return 0;
}

static int pp_duration(brig_json obj, const char *path, const char *key, uint64_t *out,
                       struct brig_error **err)
{
    brig_json v = json_get(obj, key);
    if (v == NULL) return 1;
    char p[256];
    json_path_join(p, sizeof(p), path, key);
    if (json_is_string(v)) {
        const char *s = NULL;
        TRY(json_as_string(v, p, &s, err));
        if (policy_parse_duration(s, out) < 0)
            return brig_failx(err, "%s: \"%s\" is not a duration (e.g. \"10m\", \"30s\", \"1h\")", p, s);
    } else {
        TRY(json_as_u64(v, p, out, err));
    }
    if (*out == 0) return brig_failx(err, "%s: must be more than 0", p);
    return 0;
}

/* An array of non-empty strings; absent leaves *out unchanged. */
static int pp_strv(brig_json obj, const char *path, const char *key, bool absolute, char ***out,
                   struct brig_error **err)
{
    brig_json v = json_get(obj, key);
    if (v == NULL) return 1;
    char p[256];
    json_path_join(p, sizeof(p), path, key);
    char **list = NULL;
    size_t n = 0;
    TRY(json_as_strv(v, p, &list, &n, err));
    for (size_t i = 0; i < n; i++) {
        if (list[i][0] == '\0' || (absolute && list[i][0] != '/')) {
            brig_strv_free(list);
            return brig_failx(err, "%s[%zu]: %s", p, i, absolute ? "expected an absolute path" : "empty");
        }
    }
    brig_strv_free(*out);
    *out = list;
    return 0;
}

static int pp_abs_path(brig_json obj, const char *path, const char *key, bool required, char **out,
                       struct brig_error **err)
{
    char *s = NULL;
    int r = json_get_string(obj, path, key, required, &s, err);
    if (r != 0) return r;
    if (s[0] != '/') {
        char p[256];
        json_path_join(p, sizeof(p), path, key);
        brig_failx(err, "%s: \"%s\" is not an absolute path", p, s);
        free(s);
        return -1;
    }
    free(*out);
    *out = s;
    return 0;
}

static void pp_defaults(struct brig_policy *p)
{
    p->name = brig_strdup("custom");
    p->mode = POLICY_ENFORCE;
    p->network.mode = POLICY_NET_NONE;
    p->root_readonly = true;
    p->n_tmpfs = 2;
    p->tmpfs = brig_calloc(2, sizeof(*p->tmpfs));
    p->tmpfs[0] = (struct policy_tmpfs){ brig_strdup("/tmp"), 64ull << 20 };
    p->tmpfs[1] = (struct policy_tmpfs){ brig_strdup("/var/tmp"), 64ull << 20 };
    p->workspace.path = brig_strdup("/workspace");
    p->workspace.required = false;
    p->user.uid = 1000;
    p->user.gid = 1000;
    p->cap_names = brig_calloc(1, sizeof(char *));
    p->no_new_privileges = true;
    p->seccomp.profile = POLICY_SECCOMP_DEFAULT;
    p->limits.memory = 1ull << 30;
    p->limits.swap = 0;
    p->limits.pids = 256;
    p->limits.cpu_milli = 1000;
    p->n_rlimits = 2;
    p->rlimits = brig_calloc(2, sizeof(*p->rlimits));
    p->rlimits[0] = (struct policy_rlimit){ brig_strdup("RLIMIT_NOFILE"), 1024 };
    p->rlimits[1] = (struct policy_rlimit){ brig_strdup("RLIMIT_CORE"), 0 };
    p->devices = brig_calloc(1, sizeof(char *));
    p->sockets = brig_calloc(1, sizeof(char *));
    p->forbidden_paths = brig_strv_dup((char *const *)forbidden_builtin);
    p->hooks = brig_calloc(1, sizeof(char *));
    p->sysctl = brig_calloc(1, sizeof(char *));
    p->env_allow = brig_calloc(1, sizeof(char *));
    p->env_deny = brig_strv_dup((char *const *)env_deny_default);
    p->env_set = brig_calloc(1, sizeof(char *));
    p->timeouts.wall_s = 600;
    p->timeouts.idle_s = 120;
    p->output_max = 1ull << 20;
    p->audit.path = brig_strdup("/var/log/brig/audit.jsonl");
    p->audit.max_size = 16ull << 20;
}

/* {"<key>": "<plain>"} or {"<key>": "<with_path>", "path": "/abs"}: the
 * shape of network and seccomp. *uses_path tells which one was given. */
static int pp_choice_with_path(brig_json v, const char *section, const char *key,
                               const char *plain, const char *with_path, bool *uses_path,
                               char **path, struct brig_error **err)
{
    const char *const keys[] = { key, "path", NULL };
    TRY(pp_keys(v, section, keys, err));
    autofree char *val = NULL;
    TRY(json_get_string(v, section, key, true, &val, err));
    if (strcmp(val, plain) == 0) {
        if (json_get(v, "path") != NULL)
            return brig_failx(err, "%s.path: only with %s.%s \"%s\"", section, section, key,
                              with_path);
        *uses_path = false;
        return 0;
    }
    if (strcmp(val, with_path) != 0)
        return brig_failx(err, "%s.%s: \"%s\": expected \"%s\" or \"%s\"%s", section, key, val,
                          plain, with_path, strcmp(section, "network") == 0 ? " or \"egress\"" : "");
    *uses_path = true;
    return pp_abs_path(v, section, "path", true, path, err) < 0 ? -1 : 0;
}

static int pp_network(struct brig_policy *p, brig_json v, struct brig_error **err)
{
    brig_json mode = json_get(v, "mode");
    const char *m = NULL;
    if (mode != NULL && json_is_string(mode) && json_as_string(mode, "network.mode", &m, err) == 0 &&
        strcmp(m, "egress") == 0)
        return policy_parse_egress(p, v, err);
    bool netns = false;
    TRY(pp_choice_with_path(v, "network", "mode", "none", "netns", &netns, &p->network.path, err));
    p->network.mode = netns ? POLICY_NET_NETNS : POLICY_NET_NONE;
    return 0;
}

static int pp_tmpfs(struct brig_policy *p, brig_json v, struct brig_error **err)
{
    static const char *const keys[] = { "path", "size", NULL };
    TRY(json_as_array(v, "tmpfs", err));
    for (size_t i = 0; i < p->n_tmpfs; i++) free(p->tmpfs[i].path);
    free(p->tmpfs);
    p->n_tmpfs = 0;
    p->tmpfs = brig_calloc(json_array_len(v) + 1, sizeof(*p->tmpfs));
    for (size_t i = 0; i < json_array_len(v); i++) {
        char path[64];
        snprintf(path, sizeof(path), "tmpfs[%zu]", i);
        brig_json t = json_array_at(v, i);
        TRY(pp_keys(t, path, keys, err));
        struct policy_tmpfs *m = &p->tmpfs[p->n_tmpfs++];
        TRY(pp_abs_path(t, path, "path", true, &m->path, err));
        if (strcmp(m->path, "/") == 0) return brig_failx(err, "%s.path: \"/\" cannot be a tmpfs", path);
        for (size_t j = 0; j + 1 < p->n_tmpfs; j++)
            if (strcmp(p->tmpfs[j].path, m->path) == 0)
                return brig_failx(err, "%s.path: \"%s\" listed twice", path, m->path);
        if (pp_size(t, path, "size", false, &m->size, err) != 0)
            return brig_failx(err, "%s.size: required (a tmpfs without a size may fill memory)", path);
    }
    return 0;
}

static int pp_workspace(struct brig_policy *p, brig_json v, struct brig_error **err)
{
    static const char *const keys[] = { "path", "required", "maxSize", "bound", NULL };
    free(p->workspace.path);
    p->workspace.path = NULL;
    if (json_is_null(v)) return 0;      /* no workspace at all */
    TRY(pp_keys(v, "workspace", keys, err));
    TRY(pp_abs_path(v, "workspace", "path", true, &p->workspace.path, err));
    if (strcmp(p->workspace.path, "/") == 0)
        return brig_failx(err, "workspace.path: \"/\" would make the root writable");
    if (pp_size(v, "workspace", "maxSize", false, &p->workspace.max_size, err) < 0) return -1;
    p->workspace.bound = POLICY_WS_WATCH;
    brig_json b = json_get(v, "bound");
    const char *how = NULL;
    if (b != NULL && json_as_string(b, "workspace.bound", &how, err) < 0) return -1;
    if (how != NULL && strcmp(how, "stage") == 0) p->workspace.bound = POLICY_WS_STAGE;
    else if (how != NULL && strcmp(how, "watch") != 0)
        return brig_failx(err, "workspace.bound: expected \"watch\" or \"stage\", got \"%.64s\"", how);
    return json_get_bool(v, "workspace", "required", false, &p->workspace.required, err) < 0 ? -1 : 0;
}

static int pp_user(struct brig_policy *p, brig_json v, struct brig_error **err)
{
    static const char *const keys[] = { "uid", "gid", "userns", NULL };
    TRY(pp_keys(v, "user", keys, err));
    if (json_get_u32(v, "user", "uid", false, &p->user.uid, err) < 0 ||
        json_get_u32(v, "user", "gid", false, &p->user.gid, err) < 0 ||
        json_get_bool(v, "user", "userns", false, &p->user.userns, err) < 0)
        return -1;
    if ((p->user.uid == 0 || p->user.gid == 0) && !p->user.userns)
        return brig_failx(err, "user.uid/gid: 0 is root on the host; set user.userns to true "
                          "or use an unprivileged id");
    return 0;
}

static int pp_caps(struct brig_policy *p, brig_json v, struct brig_error **err)
{
    char **names = NULL;
    size_t n = 0;
    TRY(json_as_strv(v, "capabilities", &names, &n, err));
    brig_strv_free(p->cap_names);
    p->cap_names = names;
    p->caps = 0;
    for (size_t i = 0; i < n; i++) {
        cap_value_t c;
        if (!brig_str_has_prefix(names[i], "CAP_") || cap_from_name(names[i], &c) < 0 || c > MAX_CAP_BIT)
            return brig_failx(err, "capabilities[%zu]: unknown capability \"%s\"", i, names[i]);
        p->caps |= 1ull << c;
    }
    return 0;
}

static int pp_seccomp(struct brig_policy *p, brig_json v, struct brig_error **err)
{
    bool file = false;
    TRY(pp_choice_with_path(v, "seccomp", "profile", "default", "file", &file, &p->seccomp.path,
                            err));
    p->seccomp.profile = file ? POLICY_SECCOMP_FILE : POLICY_SECCOMP_DEFAULT;
    return 0;
}

static int pp_limits(struct brig_policy *p, brig_json v, struct brig_error **err)
{
    static const char *const keys[] = { "memory", "swap", "pids", "cpus", NULL };
    TRY(pp_keys(v, "limits", keys, err));
    if (pp_size(v, "limits", "memory", false, &p->limits.memory, err) < 0 ||
        pp_size(v, "limits", "swap", true, &p->limits.swap, err) < 0 ||
        json_get_u64(v, "limits", "pids", false, &p->limits.pids, err) < 0)
        return -1;
    if (p->limits.memory < (4ull << 20))
        return brig_failx(err, "limits.memory: %llu bytes is too small to run anything (at least 4MiB)",
                          (unsigned long long)p->limits.memory);
    if (p->limits.pids == 0 || p->limits.pids > (1ull << 22))
        return brig_failx(err, "limits.pids: %llu: expected 1 to 4194304", (unsigned long long)p->limits.pids);
    brig_json c = json_get(v, "cpus");
    if (c == NULL) return 0;
    if (json_is_string(c)) {
        const char *s = NULL;
        TRY(json_as_string(c, "limits.cpus", &s, err));
        if (policy_parse_cpus(s, &p->limits.cpu_milli) < 0)
            return brig_failx(err, "limits.cpus: \"%s\" is not a CPU count (e.g. \"2\", \"0.5\")", s);
    } else {
        uint64_t n;
        TRY(json_as_u64(c, "limits.cpus", &n, err));
        if (n > 1000000) return brig_failx(err, "limits.cpus: %llu: too many", (unsigned long long)n);
        p->limits.cpu_milli = n * 1000;
    }
    if (p->limits.cpu_milli < 10) return brig_failx(err, "limits.cpus: must be at least 0.01");
    return 0;
}

static int pp_rlimits(struct brig_policy *p, brig_json v, struct brig_error **err)
{
    TRY(json_as_object(v, "rlimits", err));
    for (size_t i = 0; i < p->n_rlimits; i++) free(p->rlimits[i].type);
    free(p->rlimits);
    p->n_rlimits = json_object_len(v);
    p->rlimits = brig_calloc(p->n_rlimits + 1, sizeof(*p->rlimits));
    for (size_t i = 0; i < p->n_rlimits; i++) {
        const char *k = json_object_key(v, i);
        char path[128];
        json_path_join(path, sizeof(path), "rlimits", k);
        if (!strv_has(rlimit_names, k)) return brig_failx(err, "%s: unknown rlimit", path);
        p->rlimits[i].type = brig_strdup(k);
        TRY(json_as_u64(json_object_value(v, i), path, &p->rlimits[i].max, err));
    }
    return 0;
}

/* env.set: values every process gets unless its own env names them (a
 * base URL, a locale). Visible inside, so never a secret: a name the
 * policy would refuse is refused here, and so are the proxy's variables. */
static int pp_env_set(struct brig_policy *p, brig_json v, struct brig_error **err)
{
    brig_json set = json_get(v, "set");
    if (set == NULL) return 0;
    struct brig_kv *kv = NULL;
    size_t n = 0;
    TRY(json_as_kv(set, "env.set", &kv, &n, err));
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const char *k = kv[i].key;
        bool name_ok = (isalpha((unsigned char)k[0]) || k[0] == '_');
        for (const char *c = k; name_ok && *c; c++) name_ok = isalnum((unsigned char)*c) || *c == '_';
        if (!name_ok)
            rc = brig_failx(err, "env.set.%.80s: expected a variable name ([A-Za-z_][A-Za-z0-9_]*)", k);
        else if (policy_env_name_denied(p, k))
            rc = brig_failx(err, "env.set.%s: the policy's env rules refuse this name (%s): a value set here is "
                            "readable inside; a secret goes to network.credentials", k,
                            policy_glob_any(p->env_deny, k) ? "env.deny" : "not in env.allow");
        else if (egress_env_name(k))
            rc = brig_failx(err, "env.set.%s: the egress proxy's variable (brig sets it under network "
                            "\"egress\")", k);
    }
    for (size_t i = 0; i < n; i++) {
        if (rc == 0) {
            char *e = brig_asprintf("%s=%s", kv[i].key, kv[i].value);
            char *one[] = { e, NULL };
            strv_add_missing(&p->env_set, one);
            free(e);
        }
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);
    return rc;
}

static int pp_env(struct brig_policy *p, brig_json v, struct brig_error **err)
{
    static const char *const keys[] = { "allow", "deny", "set", NULL };
    TRY(pp_keys(v, "env", keys, err));
    if (pp_strv(v, "env", "allow", false, &p->env_allow, err) < 0) return -1;
    /* The deny list adds to the built-in one: a policy cannot re-allow
     * AWS_* by listing fewer patterns. */
    char **deny = NULL;
    if (pp_strv(v, "env", "deny", false, &deny, err) < 0) return -1;
    strv_add_missing(&p->env_deny, deny);
    brig_strv_free(deny);
    return pp_env_set(p, v, err);       /* judged by the rules above */
}

static int pp_forbidden(struct brig_policy *p, brig_json obj, struct brig_error **err)
{
    char **extra = NULL;
    int r = pp_strv(obj, "", "forbiddenPaths", true, &extra, err);
    if (r != 0) return r < 0 ? -1 : 0;
    strv_add_missing(&p->forbidden_paths, extra);
    brig_strv_free(extra);
    return 0;
}

/* Sockets are allowed by exact path: a socket on the forbidden list (the
 * Docker API) stays forbidden, and saying so here beats a policy that
 * reads as if it allowed it. */
static int pp_sockets(struct brig_policy *p, brig_json obj, struct brig_error **err)
{
    if (pp_strv(obj, "", "sockets", true, &p->sockets, err) < 0) return -1;
    for (size_t i = 0; p->sockets[i] != NULL; i++) {
        const char *which = NULL;
        if (policy_path_forbidden(p, p->sockets[i], &which))
            return brig_failx(err, "sockets[%zu]: \"%s\" is a forbidden host path (%s)", i,
                              p->sockets[i], which);
    }
    return 0;
}

static int pp_small_objects(struct brig_policy *p, brig_json root, struct brig_error **err)
{
    brig_json v;
    if ((v = json_get(root, "timeouts")) != NULL) {
        static const char *const keys[] = { "wall", "idle", NULL };
        TRY(pp_keys(v, "timeouts", keys, err));
        if (pp_duration(v, "timeouts", "wall", &p->timeouts.wall_s, err) < 0 ||
            pp_duration(v, "timeouts", "idle", &p->timeouts.idle_s, err) < 0)
            return -1;
    }
    if ((v = json_get(root, "output")) != NULL) {
        static const char *const keys[] = { "maxBytes", NULL };
        TRY(pp_keys(v, "output", keys, err));
        if (pp_size(v, "output", "maxBytes", false, &p->output_max, err) < 0) return -1;
    }
    if ((v = json_get(root, "rootless")) != NULL) {
        static const char *const keys[] = { "limits", NULL };
        TRY(pp_keys(v, "rootless", keys, err));
        autofree char *limits = NULL;
        if (json_get_string(v, "rootless", "limits", false, &limits, err) < 0) return -1;
        if (limits != NULL && strcmp(limits, "optional") == 0) p->rootless.limits_optional = true;
        else if (limits != NULL && strcmp(limits, "required") != 0)
            return brig_failx(err, "rootless.limits: \"%s\": expected \"required\" or \"optional\"", limits);
    }
    if ((v = json_get(root, "audit")) != NULL) {
        static const char *const keys[] = { "path", "maxSize", NULL };
        TRY(pp_keys(v, "audit", keys, err));
        if (pp_abs_path(v, "audit", "path", false, &p->audit.path, err) < 0 ||
            pp_size(v, "audit", "maxSize", false, &p->audit.max_size, err) < 0)
            return -1;
        if (p->audit.max_size < 4096) return brig_failx(err, "audit.maxSize: at least 4KiB");
    }
    return 0;
}

static int pp_root(struct brig_policy *p, brig_json root, struct brig_error **err)
{
    if (json_is_object(root) && json_get(root, "extends") != NULL)
        return brig_failx(err, "extends: resolved only when a policy is read by its name or path "
                          "(brig policy show FILE prints the result)");
    static const char *const keys[] = {
        "name", "description", "mode", "network", "rootReadonly", "tmpfs", "workspace", "user",
        "capabilities", "noNewPrivileges", "seccomp", "limits", "rlimits", "devices",
        "forbiddenPaths", "sockets", "hooks", "sysctl", "env", "timeouts", "output", "init", "audit",
        "rootless", NULL
    };
    TRY(pp_keys(root, "", keys, err));
    brig_json v;
    autofree char *mode = NULL, *desc = NULL, *name = NULL;
    if (json_get_string(root, "", "name", false, &name, err) < 0 ||
        json_get_string(root, "", "description", false, &desc, err) < 0 ||
        json_get_string(root, "", "mode", false, &mode, err) < 0)
        return -1;
    if (name != NULL) {
        free(p->name);
        p->name = steal_ptr(&name);
    }
    if (p->name[0] == '\0' || strchr(p->name, '/') != NULL)
        return brig_failx(err, "name: \"%s\": expected a non-empty name without '/'", p->name);
    if (mode != NULL && strcmp(mode, "enforce") == 0) p->mode = POLICY_ENFORCE;
    else if (mode != NULL && strcmp(mode, "audit") == 0) p->mode = POLICY_AUDIT;
    else if (mode != NULL) return brig_failx(err, "mode: \"%s\": expected \"enforce\" or \"audit\"", mode);
    if ((v = json_get(root, "network")) != NULL) TRY(pp_network(p, v, err));
    if (json_get_bool(root, "", "rootReadonly", false, &p->root_readonly, err) < 0) return -1;
    if ((v = json_get(root, "tmpfs")) != NULL) TRY(pp_tmpfs(p, v, err));
    if ((v = json_get(root, "workspace")) != NULL) TRY(pp_workspace(p, v, err));
    if ((v = json_get(root, "user")) != NULL) TRY(pp_user(p, v, err));
    if ((v = json_get(root, "capabilities")) != NULL) TRY(pp_caps(p, v, err));
    if (json_get_bool(root, "", "noNewPrivileges", false, &p->no_new_privileges, err) < 0) return -1;
    if ((v = json_get(root, "seccomp")) != NULL) TRY(pp_seccomp(p, v, err));
    if ((v = json_get(root, "limits")) != NULL) TRY(pp_limits(p, v, err));
    if ((v = json_get(root, "rlimits")) != NULL) TRY(pp_rlimits(p, v, err));
    if (pp_strv(root, "", "devices", true, &p->devices, err) < 0 ||
        pp_strv(root, "", "hooks", true, &p->hooks, err) < 0 ||
        pp_strv(root, "", "sysctl", false, &p->sysctl, err) < 0)
        return -1;
    TRY(pp_forbidden(p, root, err));
    TRY(pp_sockets(p, root, err));
    if ((v = json_get(root, "env")) != NULL) TRY(pp_env(p, v, err));
    TRY(pp_small_objects(p, root, err));
    if (pp_abs_path(root, "", "init", false, &p->init, err) < 0) return -1;
    return 0;
}

int policy_parse(const char *text, size_t len, struct brig_policy **out, struct brig_error **err)
{
    autojson brig_json root = NULL;
    TRY(json_parse(text, len, &root, err));
    autopolicy struct brig_policy *p = brig_calloc(1, sizeof(*p));
    pp_defaults(p);
    TRY(pp_root(p, root, err));
    /* Values that make no sense together. */
    if (p->workspace.path != NULL) {
        for (size_t i = 0; i < p->n_tmpfs; i++)
            if (strcmp(p->tmpfs[i].path, p->workspace.path) == 0)
                return brig_failx(err, "workspace.path: \"%s\" is also a tmpfs", p->workspace.path);
    }
    *out = steal_ptr(&p);
    return 0;
}
