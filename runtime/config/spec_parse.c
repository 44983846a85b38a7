/* config.json -> struct brig_spec: the top level of config.md (ociVersion,
 * root, hostname, mounts, hooks, annotations) and the entry points. The
 * process and linux sections have their own files.
 *
 * Where brig is stricter than the letter of the spec, on purpose (a config
 * that could be read two ways is refused rather than guessed at):
 * duplicate object keys and \u0000 in strings (json.c), relative mount
 * destinations, unknown linux.timeOffsets clocks, soft > hard rlimits,
 * cgroup/sysctl names that could climb out of their directory. More lenient: ociVersion 0.x (the spec's own
 * example) is read as 1.x with a warning, and an absent process.user.uid/gid
 * is 0 as with runc and crun. */
#include "spec_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "mount_options.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/strutil.h"


static const char *const ns_names[BRIG_NS_COUNT] = {
    [BRIG_NS_PID] = "pid",       [BRIG_NS_NETWORK] = "network", [BRIG_NS_MOUNT] = "mount",
    [BRIG_NS_IPC] = "ipc",       [BRIG_NS_UTS] = "uts",         [BRIG_NS_USER] = "user",
    [BRIG_NS_CGROUP] = "cgroup", [BRIG_NS_TIME] = "time",
};

static const char *const hook_names[BRIG_HOOK_KIND_COUNT] = {
    [BRIG_HOOK_PRESTART] = "prestart",
    [BRIG_HOOK_CREATE_RUNTIME] = "createRuntime",
    [BRIG_HOOK_CREATE_CONTAINER] = "createContainer",
    [BRIG_HOOK_START_CONTAINER] = "startContainer",
    [BRIG_HOOK_POSTSTART] = "poststart",
    [BRIG_HOOK_POSTSTOP] = "poststop",
};

bool spec_annotation_is(const struct brig_spec *s, const char *key, const char *value)
{
    for (size_t i = 0; i < s->n_annotations; i++)
        if (strcmp(s->annotations[i].key, key) == 0) return strcmp(s->annotations[i].value, value) == 0;
    return false;
}

const char *spec_ns_name(enum brig_ns_type t)
{
    return (unsigned)t < BRIG_NS_COUNT ? ns_names[t] : "unknown";
}

const char *spec_hook_name(enum brig_hook_kind k)
{
    return (unsigned)k < BRIG_HOOK_KIND_COUNT ? hook_names[k] : "unknown";
}

/* ociVersion: SemVer "MAJOR.MINOR.PATCH[-pre][+build]". Major 1 is the spec
 * brig implements. Major 0 drafts are still accepted with a warning because
 * the spec's own example (and old tools) carry "0.5.0-dev"; a future major
 * version may change meanings, so it is refused. */
static int spec_check_version(const char *v, struct brig_error **err)
{
    unsigned long part[3];
    const char *p = v;
    for (int i = 0; i < 3; i++) {
        if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9'))
            goto bad;
        char *end;
        errno = 0;
        part[i] = strtoul(p, &end, 10);
        if (errno != 0) goto bad;
        p = end;
        if (i < 2) {
            if (*p != '.') goto bad;
            p++;
        }
    }
    if (*p != '\0' && *p != '-' && *p != '+') goto bad;
    if (part[0] == 1) return 0;
    if (part[0] == 0) {
        brig_warn("ociVersion: \"%s\" predates runtime-spec 1.0; reading it as 1.x", v);
        return 0;
    }
    return brig_failx(err, "ociVersion: unsupported major version in \"%s\" (brig implements 1.x)",
                      v);
bad:
    return brig_failx(err, "ociVersion: \"%s\" is not a SemVer version (like \"1.2.0\")", v);
}

/* Join a relative path to dir, dropping "." components and repeated
 * slashes. ".." is kept: lexical removal would be wrong across symlinks. */
static char *spec_abs_path(const char *dir, const char *path)
{
    autofree char *joined = path[0] == '/' ? brig_strdup(path)
                                           : brig_asprintf("%s/%s", dir, path);
    char *out = brig_calloc(strlen(joined) + 2, 1);
    size_t o = 0;
    for (const char *s = joined; *s;) {
        while (*s == '/') s++;
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 0) break;
        if (!(n == 1 && s[0] == '.')) {
            out[o++] = '/';
            memcpy(out + o, s, n);
            o += n;
        }
        s += n;
    }
    if (o == 0) out[o++] = '/';
    out[o] = '\0';
    return out;
}

/* config.md "Root". */
static int spec_parse_root(brig_json obj, struct brig_spec *s, struct brig_error **err)
{
    char p[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(obj, "", "root", false, &v, p, err);
    if (r != 0) return r < 0 ? -1 : 0;
    autofree char *path = NULL;
    TRY(json_get_string(v, "root", "path", true, &path, err));
    if (path[0] == '\0') return brig_failx(err, "root.path: must not be empty");
    TRY(json_get_bool(v, "root", "readonly", false, &s->root.readonly, err));
    s->root.path = spec_abs_path(s->bundle, path);
    return 0;
}

/* config.md "Mounts". */
static int spec_parse_mount(brig_json v, const char *p, const char *bundle, struct brig_mount *m,
                            struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json a;
    TRY(json_as_object(v, p, err));
    TRY(json_get_string(v, p, "destination", true, &m->destination, err));
    /* config.md still allows relative destinations for old tools, but they
     * are deprecated and ambiguous; brig wants to know where a mount goes. */
    if (m->destination[0] != '/')
        return brig_failx(err, "%s.destination: must be an absolute path, got \"%.200s\"", p,
                          m->destination);
    TRY(json_get_string(v, p, "type", false, &m->type, err));
    TRY(json_get_string(v, p, "source", false, &m->source, err));
    TRY(sp_get_strv(v, p, "options", &m->options, &m->n_options, err));

    int r = sp_get_array(v, p, "uidMappings", false, &a, q, err);
    if (r < 0) return -1;
    if (r == 0) TRY(sp_parse_id_mappings(a, q, &m->uid_mappings, &m->n_uid_mappings, err));
    r = sp_get_array(v, p, "gidMappings", false, &a, q, err);
    if (r < 0) return -1;
    if (r == 0) TRY(sp_parse_id_mappings(a, q, &m->gid_mappings, &m->n_gid_mappings, err));
    if ((m->uid_mappings == NULL) != (m->gid_mappings == NULL))
        return brig_failx(err, "%s: uidMappings and gidMappings must be given together", p);

    sp_key(q, p, "options");
    TRY(mount_options_parse(m->options, m->n_options, m->type, q, &m->opts, err));
    /* config.md: bind sources may be relative to the bundle. Resolve them
     * here so the mount code never depends on the process's cwd. */
    if (m->opts.bind && m->source != NULL && m->source[0] != '/' && m->source[0] != '\0') {
        char *abs = spec_abs_path(bundle, m->source);
        free(m->source);
        m->source = abs;
    }
    return 0;
}

/* crun's "idmap=uids=...;gids=..." (mount_options.h): the mappings it
 * carries become the mount's uidMappings/gidMappings, once linux is
 * parsed ("@" ranges are relative to linux.uidMappings/gidMappings). */
static int spec_mount_idmap_option(struct brig_spec *s, size_t i, struct brig_error **err)
{
    struct brig_mount *m = &s->mounts[i];
    const char *value = NULL;
    size_t at = 0;
    for (size_t k = 0; k < m->n_options; k++) {
        const char *o = m->options[k];
        const char *eq = strchr(o, '=');
        if (eq == NULL || eq[1] == '\0' ||
            !(brig_str_has_prefix(o, "idmap=") || brig_str_has_prefix(o, "ridmap=")))
            continue;
        if (value != NULL)
            return brig_failx(err, "mounts[%zu].options[%zu]: a second idmap option with mappings", i, k);
        value = eq + 1;
        at = k;
    }
    char jpath[64];
    snprintf(jpath, sizeof(jpath), "mounts[%zu].options[%zu]", i, at);
    if (m->n_uid_mappings > 0 || m->n_gid_mappings > 0)
        return brig_failx(err, "%s: idmap=... and mounts[%zu].uidMappings/gidMappings both give "
                          "mappings: give them once", jpath, i);
    return mount_idmap_parse(value, jpath, &s->linux_cfg, &m->uid_mappings, &m->n_uid_mappings,
                             &m->gid_mappings, &m->n_gid_mappings, err);
}

static int spec_parse_mounts(brig_json obj, struct brig_spec *s, struct brig_error **err)
{
    char p[SP_PATH_MAX];
    brig_json arr;
    int r = sp_get_array(obj, "", "mounts", false, &arr, p, err);
    if (r != 0) return r < 0 ? -1 : 0;
    s->n_mounts = json_array_len(arr);
    s->mounts = brig_calloc(s->n_mounts, sizeof(*s->mounts));
    for (size_t i = 0; i < s->n_mounts; i++) {
        sp_idx(p, "mounts", i);
        TRY(spec_parse_mount(json_array_at(arr, i), p, s->bundle, &s->mounts[i], err));
    }
    return 0;
}

/* config.md "POSIX-platform Hooks". */
static int spec_parse_hook(brig_json v, const char *p, struct brig_hook *h,
                           struct brig_error **err)
{
    TRY(json_as_object(v, p, err));
    TRY(json_get_string(v, p, "path", true, &h->path, err));
    if (h->path[0] != '/')
        return brig_failx(err, "%s.path: must be an absolute path, got \"%.200s\"", p, h->path);
    TRY(sp_get_strv(v, p, "args", &h->args, &h->n_args, err));
    TRY(sp_get_strv(v, p, "env", &h->env, &h->n_env, err));
    int64_t t;
    int r = json_get_i64(v, p, "timeout", false, &t, err);
    if (r < 0) return -1;
    if (r == 0) {
        if (t <= 0 || t > INT_MAX)
            return brig_failx(err, "%s.timeout: must be greater than 0 (seconds), got %" PRId64,
                              p, t);
        h->has_timeout = true;
        h->timeout = (int)t;
    }
    return 0;
}

static int spec_parse_hooks(brig_json obj, struct brig_spec *s, struct brig_error **err)
{
    char p[SP_PATH_MAX];
    brig_json hooks;
    int r = sp_get_object(obj, "", "hooks", false, &hooks, p, err);
    if (r != 0) return r < 0 ? -1 : 0;
    for (int k = 0; k < BRIG_HOOK_KIND_COUNT; k++) {
        brig_json arr;
        char q[SP_PATH_MAX];
        r = sp_get_array(hooks, "hooks", hook_names[k], false, &arr, q, err);
        if (r < 0) return -1;
        if (r > 0) continue;
        struct brig_hook_list *l = &s->hooks[k];
        l->n = json_array_len(arr);
        l->hooks = brig_calloc(l->n, sizeof(*l->hooks));
        for (size_t i = 0; i < l->n; i++) {
            sp_idx(p, q, i);
            TRY(spec_parse_hook(json_array_at(arr, i), p, &l->hooks[i], err));
        }
    }
    return 0;
}

static int spec_parse_annotations(brig_json obj, struct brig_spec *s, struct brig_error **err)
{
    char p[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(obj, "", "annotations", false, &v, p, err);
    if (r != 0) return r < 0 ? -1 : 0;
    TRY(json_as_kv(v, "annotations", &s->annotations, &s->n_annotations, err));
    for (size_t i = 0; i < s->n_annotations; i++)
        if (s->annotations[i].key[0] == '\0')
            return brig_failx(err, "annotations: keys must not be empty");
    return 0;
}

static int spec_parse_tree(brig_json doc, struct brig_spec *s, struct brig_error **err)
{
    if (!json_is_object(doc)) {
        char got[96];
        json_describe(doc, got, sizeof(got));
        return brig_failx(err, "expected a JSON object at the top level, got %s", got);
    }
    TRY(json_get_string(doc, "", "ociVersion", true, &s->oci_version, err));
    TRY(spec_check_version(s->oci_version, err));
    TRY(spec_parse_root(doc, s, err));
    TRY(json_get_string(doc, "", "hostname", false, &s->hostname, err));
    TRY(json_get_string(doc, "", "domainname", false, &s->domainname, err));

    char p[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(doc, "", "process", false, &v, p, err);
    if (r < 0) return -1;
    if (r == 0) {
        s->has_process = true;
        TRY(spec_parse_process(v, &s->process, err));
    }
    TRY(spec_parse_mounts(doc, s, err));
    TRY(spec_parse_hooks(doc, s, err));
    TRY(spec_parse_annotations(doc, s, err));
    r = sp_get_object(doc, "", "linux", false, &v, p, err);
    if (r < 0) return -1;
    if (r == 0) {
        s->has_linux = true;
        TRY(spec_parse_linux(v, &s->linux_cfg, err));
    }
    for (size_t i = 0; i < s->n_mounts; i++)
        if (s->mounts[i].opts.idmap_inline) TRY(spec_mount_idmap_option(s, i, err));
    return 0;
}

int spec_parse(const char *json, size_t len, const char *bundle_dir, struct brig_spec **out,
               struct brig_error **err)
{
    *out = NULL;
    autojson brig_json doc = NULL;
    TRY(json_parse(json, len, &doc, err));

    autospec struct brig_spec *s = brig_calloc(1, sizeof(*s));
    if (bundle_dir != NULL) {
        s->bundle = spec_abs_path("/", bundle_dir);
        if (bundle_dir[0] != '/') {
            char cwd[PATH_MAX];
            if (getcwd(cwd, sizeof(cwd)) == NULL) return brig_fail(err, errno, "getcwd");
            free(s->bundle);
            s->bundle = spec_abs_path(cwd, bundle_dir);
        }
    } else {
        char cwd[PATH_MAX];
        if (getcwd(cwd, sizeof(cwd)) == NULL) return brig_fail(err, errno, "getcwd");
        s->bundle = brig_strdup(cwd);
    }
    TRY(spec_parse_tree(doc, s, err));
    brig_debug("config: ociVersion %s, %zu mounts, process %s, root %s", s->oci_version,
               s->n_mounts, s->has_process ? "yes" : "no", s->root.path ? s->root.path : "-");
    *out = steal_ptr(&s);
    return 0;
}

int spec_load(const char *bundle_dir, struct brig_spec **out, struct brig_error **err)
{
    *out = NULL;
    struct brig_bundle b;
    if (bundle_open(bundle_dir, "config.json", &b, err) < 0) return -1;
    int r = spec_parse(b.config, b.config_len, b.path, out, err);
    bundle_close(&b);
    return r < 0 ? brig_wrap(err, "config.json") : 0;
}
