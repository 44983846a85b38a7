/* compose_map: the config.json Docker 20.10 makes of a compose service
 * (moby's oci.DefaultLinuxSpec plus what each key changes), so that the
 * policy rules judge a definition as they would judge the container it
 * becomes. Process and linux sections here; mounts in compose_mounts.c.
 * Values that matter to no rule (env values) are never copied. */
#include "compose_map.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "policy.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/strutil.h"

/* What Docker's default profile allows that brig's does not: syscalls of
 * brig's blocked list, and socket of every netlink protocol (Docker's has
 * no argument rule for socket's protocol). */
const char *const compose_docker_seccomp_extra[] = {
    "ptrace", "process_vm_readv", "process_vm_writev", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "socketcall", "socket", NULL
};

/* moby's defaultCapabilities(). */
static const char *const docker_default_caps[] = {
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
    "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
    "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE", NULL
};

void cmap_note(struct cmap *c, const char *fmt, ...)
{
    autofree char *line = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&line, fmt, ap) < 0) abort();
    va_end(ap);
    size_t old = c->notes ? strlen(c->notes) : 0, n = strlen(line);
    c->notes = realloc(c->notes, old + n + 2);
    if (c->notes == NULL) abort();
    memcpy(c->notes + old, line, n);
    memcpy(c->notes + old + n, "\n", 2);
}

yaml_node_t *cmap_get(struct cmap *c, const char *key)
{
    return compose_get(c->d, c->svc, key);
}

/* compose replaces "$NAME" and "${NAME...}" in every value from the shell
 * and .env before Docker sees the file: "/${S}:/s" is whatever S says
 * (/var/run/docker.sock). brig judges the text as written, so a file that
 * interpolates cannot be judged ("$$" is a literal "$"). The whole
 * document is scanned, node by node: top-level secrets and volumes feed
 * the service too, and no alias is followed twice. */
static void cmap_interpolation(struct cmap *c)
{
    for (yaml_node_t *n = c->d->doc.nodes.start; n < c->d->doc.nodes.top; n++) {
        const char *s = compose_scalar(n);
        for (const char *p = s ? strchr(s, '$') : NULL; p != NULL; p = strchr(p, '$')) {
            if (p[1] == '$') {
                p += 2;
                continue;
            }
            if (p[1] == '{' || p[1] == '_' || isalpha((unsigned char)p[1])) {
                cmap_note(c, "interpolation: a value uses a variable at line %zu (\"$NAME\" is set by the "
                          "shell or .env, not judged by brig): check `docker compose config` output",
                          (size_t)n->start_mark.line + 1);
                return;
            }
            p++;
        }
    }
}

/* compose's own YAML tags change what a value is: `cap_drop: !reset [ALL]`
 * removes the key (so Docker gives its default capabilities) while the
 * text still reads cap_drop: [ALL]. Only the core schema's tags are
 * plain YAML; any other tag cannot be judged. */
static void cmap_tags(struct cmap *c)
{
    for (yaml_node_t *n = c->d->doc.nodes.start; n < c->d->doc.nodes.top; n++) {
        const char *tag = (const char *)n->tag;
        if (tag == NULL || brig_str_has_prefix(tag, "tag:yaml.org,2002:")) continue;
        cmap_note(c, "tags: a YAML tag at line %zu (compose's !reset and !override change the file's "
                  "meaning), not judged by brig", (size_t)n->start_mark.line + 1);
        return;
    }
}

/* deploy.resources.limits.KEY, where compose v3 files keep limits. */
static yaml_node_t *cmap_deploy_limit(struct cmap *c, const char *key)
{
    yaml_node_t *res = compose_get(c->d, cmap_get(c, "deploy"), "resources");
    return compose_get(c->d, compose_get(c->d, res, "limits"), key);
}

/* KEY, or deploy.resources.limits.LIMIT. Docker compose sets KEY, then
 * overwrites it with the deploy limit: given both, the deploy one is what
 * runs, so two different texts cannot be judged as one. */
static yaml_node_t *cmap_limit(struct cmap *c, const char *key, const char *limit)
{
    yaml_node_t *top = cmap_get(c, key), *deploy = cmap_deploy_limit(c, limit);
    const char *t = compose_scalar(top), *d = compose_scalar(deploy);
    if (top != NULL && deploy != NULL && (t == NULL || d == NULL || strcmp(t, d) != 0))
        cmap_note(c, "%s: differs from deploy.resources.limits.%s (Docker runs the deploy one)", key, limit);
    return top ? top : deploy;
}

/* A string or a list of strings, as one list (NULL-terminated, malloc'd;
 * the strings belong to the document). */
const char **cmap_strings(struct cmap *c, yaml_node_t *n, const char *key)
{
    size_t len = compose_is_seq(n) ? compose_len(n) : 1;
    const char **v = brig_calloc(len + 1, sizeof(*v));
    if (n == NULL) return v;
    if (!compose_is_seq(n)) {
        if (compose_scalar(n) != NULL) v[0] = compose_scalar(n);
        else cmap_note(c, "%s: expected a string or a list of strings", key);
        return v;
    }
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        const char *s = compose_scalar(compose_item(c->d, n, i));
        if (s != NULL) v[o++] = s;
        else cmap_note(c, "%s[%zu]: expected a string", key, i);
    }
    return v;
}

/* ---- process ---- */

static void cmap_user(struct cmap *c, struct ptree *proc)
{
    struct ptree *u = ptree_obj(proc, "user");
    const char *s = compose_scalar(cmap_get(c, "user"));
    unsigned long uid = 0, gid = 0;
    if (s != NULL) {
        char *end;
        errno = 0;
        uid = strtoul(s, &end, 10);
        if (end != s && *end == ':') gid = strtoul(end + 1, &end, 10);
        else gid = uid;
        /* uid without gid: Docker takes the gid from the image; the uid's
         * own number is the usual one, and the rules judge the uid. */
        if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || uid > UINT32_MAX || gid > UINT32_MAX) {
            cmap_note(c, "user: not a numeric uid[:gid]: a name resolves in the image's /etc/passwd, "
                      "which this check does not read (write \"UID:GID\")");
            uid = gid = 0;
        }
    } else if (cmap_get(c, "user") != NULL) {
        cmap_note(c, "user: expected a string \"UID:GID\"");
    }
    ptree_set(u, "uid", ptree_new_u64(uid));
    ptree_set(u, "gid", ptree_new_u64(gid));
}

static bool cmap_cap_name(const char *in, char *out, size_t len)
{
    snprintf(out, len, "%s%s", strncasecmp(in, "CAP_", 4) == 0 ? "" : "CAP_", in);
    for (char *p = out; *p; p++) *p = (char)toupper((unsigned char)*p);
    cap_value_t v;
    return cap_from_name(out, &v) == 0;
}

static bool strv_has_ci(const char **v, const char *s)
{
    for (; v && *v; v++)
        if (strcasecmp(*v, s) == 0) return true;
    return false;
}

/* moby's caps.TweakCapabilities: privileged is everything; ALL in cap_add
 * is everything but cap_drop; ALL in cap_drop is only cap_add; otherwise
 * the default set plus cap_add minus cap_drop. */
static void cmap_caps(struct cmap *c, struct ptree *proc, bool privileged)
{
    autofree const char **add = cmap_strings(c, cmap_get(c, "cap_add"), "cap_add");
    autofree const char **drop = cmap_strings(c, cmap_get(c, "cap_drop"), "cap_drop");
    struct ptree *set = ptree_new(PT_ARR);
    bool all = privileged || strv_has_ci(add, "ALL");
    char name[64];
    if (all) {
        for (cap_value_t v = 0; v <= CAP_LAST_CAP; v++) {
            char *n = cap_to_name(v);      /* libcap's: cap_free, not free */
            snprintf(name, sizeof(name), "%s", n ? n : "");
            cap_free(n);
            for (char *p = name; *p; p++) *p = (char)toupper((unsigned char)*p);
            if (!privileged && strv_has_ci(drop, name)) continue;
            if (!privileged && strv_has_ci(drop, name + 4)) continue;
            ptree_push(set, ptree_new_str(name));
        }
    } else {
        if (!strv_has_ci(drop, "ALL"))
            for (const char *const *d = docker_default_caps; *d; d++)
                if (!strv_has_ci(drop, *d) && !strv_has_ci(drop, *d + 4)) ptree_push(set, ptree_new_str(*d));
        for (const char **a = add; *a; a++) {
            if (!cmap_cap_name(*a, name, sizeof(name))) {
                cmap_note(c, "cap_add: \"%s\" is not a capability this host knows", *a);
                continue;
            }
            if (!ptree_arr_has_str(set, name)) ptree_push(set, ptree_new_str(name));
        }
    }
    for (const char **d = drop; *d; d++)
        if (strcasecmp(*d, "ALL") != 0 && !cmap_cap_name(*d, name, sizeof(name)))
            cmap_note(c, "cap_drop: \"%s\" is not a capability this host knows", *d);
    struct ptree *caps = ptree_obj(proc, "capabilities");
    ptree_set(caps, "bounding", ptree_copy(set));
    ptree_set(caps, "effective", ptree_copy(set));
    ptree_set(caps, "permitted", set);
}

static void cmap_env_name(struct ptree *env, const char *entry)
{
    /* The name only: a value may be the secret the check exists for. */
    size_t n = strcspn(entry, "=");
    autofree char *e = brig_calloc(n + 2, 1);
    memcpy(e, entry, n);
    memcpy(e + n, "=", 2);
    ptree_push(env, ptree_new_str(e));
}

/* env_file lines are NAME=VALUE, comments and blank lines; only names. */
static void cmap_env_file(struct cmap *c, struct ptree *env, const char *file)
{
    autofree char *path = file[0] == '/' ? brig_strdup(file) : brig_asprintf("%s/%s", c->d->dir, file);
    autofree char *text = NULL;
    size_t len = 0;
    struct brig_error *e = NULL;
    if (brig_read_regular(path, 1u << 20, &text, &len, &e) < 0) {
        cmap_note(c, "env_file: %s cannot be read (%s): its names cannot be judged", file, e->msg);
        brig_error_free(e);
        return;
    }
    for (char *line = text, *next; line != NULL && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        while (*line == ' ' || *line == '\t') line++;
        if (*line == '#' || *line == '\0') continue;
        if (brig_str_has_prefix(line, "export ")) line += 7;
        cmap_env_name(env, line);
    }
}

static void cmap_env(struct cmap *c, struct ptree *proc)
{
    struct ptree *env = ptree_arr(proc, "env");
    ptree_push(env, ptree_new_str("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"));
    yaml_node_t *n = cmap_get(c, "environment");
    if (compose_is_map(n)) {
        for (size_t i = 0; i < compose_len(n); i++) {
            yaml_node_t *k, *v;
            compose_pair(c->d, n, i, &k, &v);
            if (compose_scalar(k)) cmap_env_name(env, compose_scalar(k));
        }
    } else {
        autofree const char **list = cmap_strings(c, n, "environment");
        for (const char **e = list; *e; e++) cmap_env_name(env, *e);
    }
    yaml_node_t *files = cmap_get(c, "env_file");
    for (size_t i = 0; i < (compose_is_seq(files) ? compose_len(files) : files ? 1 : 0); i++) {
        yaml_node_t *f = compose_is_seq(files) ? compose_item(c->d, files, i) : files;
        /* Long syntax: {path: F, required: false}. */
        yaml_node_t *p = compose_is_map(f) ? compose_get(c->d, f, "path") : f;
        if (compose_scalar(p) != NULL) cmap_env_file(c, env, compose_scalar(p));
        else cmap_note(c, "env_file[%zu]: expected a path", i);
    }
}

/* Docker mounts its init (tini) at /sbin/docker-init: moby's inContainerInitPath. */
static void cmap_args(struct cmap *c, struct ptree *proc)
{
    struct ptree *args = ptree_arr(proc, "args");
    if (compose_bool(cmap_get(c, "init")) == 1) {
        ptree_push(args, ptree_new_str("/sbin/docker-init"));
        ptree_push(args, ptree_new_str("--"));
    } else if (cmap_get(c, "init") != NULL && compose_bool(cmap_get(c, "init")) < 0) {
        cmap_note(c, "init: expected true or false");
    }
    ptree_push(args, ptree_new_str("CMD"));
}

static const struct { const char *compose, *oci; } ulimit_names[] = {
    { "core", "RLIMIT_CORE" }, { "cpu", "RLIMIT_CPU" }, { "data", "RLIMIT_DATA" },
    { "fsize", "RLIMIT_FSIZE" }, { "locks", "RLIMIT_LOCKS" }, { "memlock", "RLIMIT_MEMLOCK" },
    { "msgqueue", "RLIMIT_MSGQUEUE" }, { "nice", "RLIMIT_NICE" }, { "nofile", "RLIMIT_NOFILE" },
    { "nproc", "RLIMIT_NPROC" }, { "rss", "RLIMIT_RSS" }, { "rtprio", "RLIMIT_RTPRIO" },
    { "rttime", "RLIMIT_RTTIME" }, { "sigpending", "RLIMIT_SIGPENDING" }, { "stack", "RLIMIT_STACK" },
    { "as", "RLIMIT_AS" },
};

static bool cmap_u64(yaml_node_t *n, uint64_t *v)
{
    const char *s = compose_scalar(n);
    char *end;
    if (s == NULL || s[0] == '-' || s[0] == '\0') return false;
    errno = 0;
    *v = strtoull(s, &end, 10);
    return errno == 0 && *end == '\0';
}

static void cmap_rlimits(struct cmap *c, struct ptree *proc)
{
    yaml_node_t *u = cmap_get(c, "ulimits");
    if (u == NULL) return;
    struct ptree *list = ptree_arr(proc, "rlimits");
    for (size_t i = 0; i < compose_len(u); i++) {
        yaml_node_t *k, *v;
        compose_pair(c->d, u, i, &k, &v);
        const char *name = compose_scalar(k), *oci = NULL;
        for (size_t j = 0; name && j < BRIG_ARRAY_SIZE(ulimit_names); j++)
            if (strcmp(name, ulimit_names[j].compose) == 0) oci = ulimit_names[j].oci;
        uint64_t soft = 0, hard = 0;
        bool ok = compose_is_map(v) ? cmap_u64(compose_get(c->d, v, "soft"), &soft) &&
                                          cmap_u64(compose_get(c->d, v, "hard"), &hard)
                                    : cmap_u64(v, &soft) && ((hard = soft), true);
        if (oci == NULL || !ok) {
            cmap_note(c, "ulimits.%s: expected a known limit with a number or {soft, hard}", name ? name : "?");
            continue;
        }
        struct ptree *r = ptree_new(PT_OBJ);
        ptree_set(r, "type", ptree_new_str(oci));
        ptree_set(r, "soft", ptree_new_u64(soft));
        ptree_set(r, "hard", ptree_new_u64(hard));
        ptree_push(list, r);
    }
}

/* security_opt: no-new-privileges[:true|=true], seccomp=unconfined|FILE,
 * systempaths=unconfined; label and apparmor do not concern these rules. */
static void cmap_security_opt(struct cmap *c, bool *nnp, const char **seccomp, bool *systempaths)
{
    autofree const char **opts = cmap_strings(c, cmap_get(c, "security_opt"), "security_opt");
    for (const char **o = opts; *o; o++) {
        const char *v = *o + strcspn(*o, ":=");
        size_t klen = (size_t)(v - *o);
        if (*v) v++;
        if (klen == 17 && strncmp(*o, "no-new-privileges", 17) == 0) {
            *nnp = *v == '\0' || strcmp(v, "true") == 0;
        } else if (klen == 7 && strncmp(*o, "seccomp", 7) == 0) {
            *seccomp = v;
        } else if (klen == 11 && strncmp(*o, "systempaths", 11) == 0) {
            *systempaths = strcmp(v, "unconfined") != 0;
        } else if (!(klen == 5 && strncmp(*o, "label", 5) == 0) &&
                   !(klen == 8 && strncmp(*o, "apparmor", 8) == 0)) {
            cmap_note(c, "security_opt: \"%.*s\" is not judged by brig", (int)klen, *o);
        }
    }
}

/* ---- linux ---- */

/* network_mode / pid / ipc / uts: a new namespace, the host's (no entry)
 * or another container's (a path, as Docker joins it). */
static void cmap_ns(struct cmap *c, struct ptree *nss, const char *type, const char *mode, bool dflt_join)
{
    if (mode != NULL && strcmp(mode, "host") == 0) return;
    struct ptree *ns = ptree_new(PT_OBJ);
    ptree_set(ns, "type", ptree_new_str(type));
    const char *other = mode && (brig_str_has_prefix(mode, "service:") || brig_str_has_prefix(mode, "container:"))
                            ? strchr(mode, ':') + 1 : NULL;
    if (other != NULL) {
        autofree char *p = brig_asprintf("/proc/<%s of %s>/ns/%s", type, other, type);
        ptree_set(ns, "path", ptree_new_str(p));
    } else if (dflt_join) {
        /* A bridge network: Docker's netns with a veth to docker0. */
        ptree_set(ns, "path", ptree_new_str("/var/run/docker/netns/<bridge network>"));
    }
    ptree_push(nss, ns);
}

static void cmap_namespaces(struct cmap *c, struct ptree *lin)
{
    struct ptree *nss = ptree_arr(lin, "namespaces");
    const char *net = compose_scalar(cmap_get(c, "network_mode"));
    bool bridge = net == NULL ? true : strcmp(net, "none") != 0 && strcmp(net, "host") != 0 &&
                                       !strchr(net, ':');
    cmap_ns(c, nss, "network", net, bridge);
    cmap_ns(c, nss, "pid", compose_scalar(cmap_get(c, "pid")), false);
    const char *ipc = compose_scalar(cmap_get(c, "ipc"));
    cmap_ns(c, nss, "ipc", ipc, false);
    cmap_ns(c, nss, "uts", compose_scalar(cmap_get(c, "uts")), false);
    struct ptree *mnt = ptree_new(PT_OBJ);
    ptree_set(mnt, "type", ptree_new_str("mount"));
    ptree_push(nss, mnt);
    const char *cg = compose_scalar(cmap_get(c, "cgroup"));
    if (cg != NULL && strcmp(cg, "private") == 0) {
        struct ptree *ns = ptree_new(PT_OBJ);
        ptree_set(ns, "type", ptree_new_str("cgroup"));
        ptree_push(nss, ns);
    }
    /* Networks of the compose file are bridges too. */
    if (net != NULL && cmap_get(c, "networks") != NULL)
        cmap_note(c, "networks: given with network_mode (Docker refuses the pair)");
}

static bool cmap_size(struct cmap *c, yaml_node_t *n, const char *key, uint64_t *v)
{
    const char *s = compose_scalar(n);
    if (s == NULL) return false;
    if (policy_parse_size(s, v) == 0) return true;
    cmap_note(c, "%s: \"%s\" is not a size", key, s);
    return false;
}

static void cmap_resources(struct cmap *c, struct ptree *lin, bool privileged)
{
    struct ptree *res = ptree_obj(lin, "resources");
    uint64_t mem = 0, memsw = 0;
    yaml_node_t *m = cmap_limit(c, "mem_limit", "memory");
    if (cmap_size(c, m, "mem_limit", &mem) && mem > 0) {
        struct ptree *mo = ptree_obj(res, "memory");
        ptree_set(mo, "limit", ptree_new_u64(mem));
        const char *sw = compose_scalar(cmap_get(c, "memswap_limit"));
        /* Unset: Docker gives as much swap as memory (memsw = 2x). */
        if (sw == NULL) ptree_set(mo, "swap", ptree_new_u64(mem * 2));
        else if (strcmp(sw, "-1") == 0) ptree_set(mo, "swap", ptree_new_i64(-1));
        else if (cmap_size(c, cmap_get(c, "memswap_limit"), "memswap_limit", &memsw))
            ptree_set(mo, "swap", ptree_new_u64(memsw));
    }
    uint64_t pids = 0;
    yaml_node_t *pn = cmap_limit(c, "pids_limit", "pids");
    if (pn != NULL && !cmap_u64(pn, &pids) && strcmp(compose_scalar(pn) ? compose_scalar(pn) : "", "-1") != 0)
        cmap_note(c, "pids_limit: expected a number");
    if (pids > 0) ptree_set(ptree_obj(res, "pids"), "limit", ptree_new_u64(pids));
    uint64_t milli = 0;
    yaml_node_t *cn = cmap_limit(c, "cpus", "cpus");
    const char *cs = compose_scalar(cn);
    if (cs != NULL && policy_parse_cpus(cs, &milli) < 0) cmap_note(c, "cpus: \"%s\" is not a CPU count", cs);
    struct ptree *cpu = ptree_obj(res, "cpu");
    if (milli > 0) {
        ptree_set(cpu, "quota", ptree_new_u64(milli * 100));
        ptree_set(cpu, "period", ptree_new_u64(100000));
    }
    uint64_t q, per;
    if (cmap_u64(cmap_get(c, "cpu_quota"), &q)) ptree_set(cpu, "quota", ptree_new_u64(q));
    if (cmap_u64(cmap_get(c, "cpu_period"), &per)) ptree_set(cpu, "period", ptree_new_u64(per));
    cmap_devices(c, lin, res, privileged);
}

static void cmap_sysctls(struct cmap *c, struct ptree *lin)
{
    yaml_node_t *n = cmap_get(c, "sysctls");
    struct ptree *out = ptree_obj(lin, "sysctl");
    if (compose_is_map(n)) {
        for (size_t i = 0; i < compose_len(n); i++) {
            yaml_node_t *k, *v;
            compose_pair(c->d, n, i, &k, &v);
            if (compose_scalar(k)) ptree_set(out, compose_scalar(k), ptree_new_str(compose_scalar(v) ? compose_scalar(v) : ""));
        }
        return;
    }
    autofree const char **list = cmap_strings(c, n, "sysctls");
    for (const char **s = list; *s; s++) {
        autofree char *k = strndup(*s, strcspn(*s, "="));
        if (k == NULL) abort();
        ptree_set(out, k, ptree_new_str(strchr(*s, '=') ? strchr(*s, '=') + 1 : ""));
    }
}

/* brig's default filter plus what Docker's own default lets through of
 * it: the rules then name exactly those syscalls. */
static int cmap_seccomp(struct cmap *c, struct ptree *lin, const char *opt, bool privileged,
                        struct brig_error **err)
{
    if (privileged || (opt != NULL && strcmp(opt, "unconfined") == 0)) return 0;
    struct ptree *prof = NULL;
    if (opt != NULL) {
        autofree char *path = opt[0] == '/' ? brig_strdup(opt) : brig_asprintf("%s/%s", c->d->dir, opt);
        autofree char *text = NULL;
        size_t len = 0;
        if (brig_read_regular(path, 4u << 20, &text, &len, err) < 0 || ptree_parse(text, len, &prof, err) < 0)
            return brig_wrap(err, "security_opt seccomp=%s", opt);
    } else {
        const char *text = policy_seccomp_default_text();
        TRY(ptree_parse(text, strlen(text), &prof, err));
        struct ptree *rule = ptree_new(PT_OBJ);
        ptree_set(rule, "names", ptree_new_strv((char *const *)compose_docker_seccomp_extra));
        ptree_set(rule, "action", ptree_new_str("SCMP_ACT_ALLOW"));
        ptree_push(ptree_arr(prof, "syscalls"), rule);
    }
    ptree_set(lin, "seccomp", prof);
    return 0;
}

static void cmap_paths(struct ptree *lin, bool confined)
{
    static const char *const masked[] = {
        "/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
        "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", NULL
    };
    static const char *const readonly[] = {
        "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", NULL
    };
    if (!confined) return;
    ptree_set(lin, "maskedPaths", ptree_new_strv((char *const *)masked));
    ptree_set(lin, "readonlyPaths", ptree_new_strv((char *const *)readonly));
}

int compose_map(struct compose_doc *d, yaml_node_t *svc, char **config,
                char **unjudged, struct brig_error **err)
{
    struct cmap c = { .d = d, .svc = svc };
    autoptree struct ptree *cfg = ptree_new(PT_OBJ);
    c.cfg = cfg;
    int priv = compose_bool(cmap_get(&c, "privileged"));
    if (cmap_get(&c, "privileged") != NULL && priv < 0) cmap_note(&c, "privileged: expected true or false");
    bool privileged = priv != 0 && cmap_get(&c, "privileged") != NULL;
    bool nnp = false, systempaths = true;
    const char *seccomp = NULL;
    cmap_security_opt(&c, &nnp, &seccomp, &systempaths);
    cmap_interpolation(&c);
    cmap_tags(&c);

    ptree_set(cfg, "ociVersion", ptree_new_str("1.0.2-dev"));
    struct ptree *proc = ptree_obj(cfg, "process");
    cmap_user(&c, proc);
    cmap_args(&c, proc);
    cmap_env(&c, proc);
    const char *wd = compose_scalar(cmap_get(&c, "working_dir"));
    ptree_set(proc, "cwd", ptree_new_str(wd && wd[0] == '/' ? wd : "/"));
    cmap_caps(&c, proc, privileged);
    ptree_set(proc, "noNewPrivileges", ptree_new_bool(nnp));
    cmap_rlimits(&c, proc);
    struct ptree *root = ptree_obj(cfg, "root");
    ptree_set(root, "path", ptree_new_str("rootfs"));
    int ro = compose_bool(cmap_get(&c, "read_only"));
    if (cmap_get(&c, "read_only") != NULL && ro < 0) cmap_note(&c, "read_only: expected true or false");
    ptree_set(root, "readonly", ptree_new_bool(ro == 1));
    cmap_mounts(&c, ptree_arr(cfg, "mounts"), privileged);
    struct ptree *lin = ptree_obj(cfg, "linux");
    cmap_namespaces(&c, lin);
    cmap_resources(&c, lin, privileged);
    cmap_sysctls(&c, lin);
    cmap_paths(lin, !privileged && systempaths);
    if (cmap_seccomp(&c, lin, seccomp, privileged, err) < 0) {
        free(c.notes);
        return -1;
    }
    if (ptree_write(cfg, config, err) < 0) {
        free(c.notes);
        return -1;
    }
    *unjudged = c.notes;
    return 0;
}
