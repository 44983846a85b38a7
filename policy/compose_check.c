/* compose_check: `brig policy check --compose FILE [--service NAME]`. The
 * service becomes the config Docker would make of it (compose_map.c), the
 * policy's rules judge that config with their usual ids, and two rules of
 * the definition itself follow:
 *   compose.keys   every key is one brig maps or one with no bearing on
 *                  isolation; anything else fails (fail closed)
 *   image.pinned   the image (or each FROM of its Dockerfile) names a digest
 * Paths in the report name the compose key and the config path it became. */
#include "compose.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy_internal.h"
#include "../runtime/config/spec.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/strutil.h"

/* Keys compose_map reads. */
static const char *const keys_mapped[] = {
    "image", "build", "user", "cap_add", "cap_drop", "privileged", "security_opt", "read_only", "tmpfs",
    "volumes", "environment", "env_file", "init", "cpus", "cpu_quota", "cpu_period", "mem_limit",
    "memswap_limit", "pids_limit", "deploy", "network_mode", "networks", "pid", "ipc", "uts", "cgroup",
    "devices", "sysctls", "ulimits", "working_dir", "secrets", "configs", NULL
};

/* Keys that change nothing a rule judges: names, restart and logging
 * behaviour, scheduling weights, the command itself. `runtime: brig` is
 * how a service asks for brig. */
static const char *const keys_harmless[] = {
    "command", "entrypoint", "container_name", "hostname", "domainname", "labels", "annotations",
    "logging", "restart", "depends_on", "healthcheck", "stop_signal", "stop_grace_period", "stdin_open",
    "tty", "profiles", "platform", "pull_policy", "extra_hosts", "dns", "dns_search", "dns_opt",
    "scale", "mac_address", "attach", "runtime", "cpu_shares", "cpuset", "cpu_count", "cpu_percent",
    "mem_reservation", "mem_swappiness", "shm_size", "blkio_config", "oom_score_adj", "develop",
    "expose", NULL
};

static bool in_list(const char *const *l, const char *s)
{
    for (; *l; l++)
        if (strcmp(*l, s) == 0) return true;
    return false;
}

bool compose_key_known(const char *key)
{
    /* x-* are extension fields: compose itself ignores them. */
    return brig_str_has_prefix(key, "x-") || in_list(keys_mapped, key) || in_list(keys_harmless, key);
}

/* Why a key outside both lists fails, for the keys people do write. */
static const char *key_reason(const char *key)
{
    static const struct { const char *key, *why; } known[] = {
        { "ports", "publishes ports: inbound connections from outside" },
        { "volumes_from", "mounts another container's volumes, not judged here" },
        { "extends", "takes keys from another file, not judged here: check the merged definition" },
        { "group_add", "adds supplementary groups (a host group such as docker grants its rights)" },
        { "userns_mode", "changes the user namespace Docker sets up" },
        { "cgroup_parent", "places the container in another cgroup, outside the engine's limits" },
        { "device_cgroup_rules", "allows device access beyond the devices listed" },
        { "oom_kill_disable", "the memory limit no longer ends a runaway process" },
        { "links", "legacy links share another container's network names" },
        { "external_links", "legacy links share another container's network names" },
        { "storage_opt", "changes the root filesystem's storage driver options" },
        { "isolation", "changes the isolation technology" },
    };
    for (size_t i = 0; key != NULL && i < BRIG_ARRAY_SIZE(known); i++)
        if (strcmp(known[i].key, key) == 0) return known[i].why;
    return "not a key brig judges: it may change the boundary (fail closed)";
}

static void check_keys(struct compose_doc *d, yaml_node_t *svc, const char *notes, struct policy_report *rep,
                       int depth)
{
    for (size_t i = 0; i < compose_len(svc); i++) {
        yaml_node_t *k, *v;
        compose_pair(d, svc, i, &k, &v);
        const char *key = compose_scalar(k);
        if (key != NULL && strcmp(key, "<<") == 0 && depth < 8) {
            if (compose_is_map(v)) check_keys(d, v, NULL, rep, depth + 1);
            for (size_t j = 0; j < (compose_is_seq(v) ? compose_len(v) : 0); j++)
                check_keys(d, compose_item(d, v, j), NULL, rep, depth + 1);
        } else if (key == NULL || !compose_key_known(key)) {
            policy_fail(rep, "compose.keys", key ? key : "-", "%s", key_reason(key));
        }
    }
    for (const char *l = notes; l != NULL && *l; ) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        size_t klen = strcspn(l, ":");
        autofree char *key = strndup(l, klen < n ? klen : n);
        policy_fail(rep, "compose.keys", key, "%.*s", (int)(n - (klen < n ? klen + 2 : n)),
                    klen + 2 <= n ? l + klen + 2 : "");
        l = nl ? nl + 1 : NULL;
    }
}

static bool digest_pinned(const char *ref)
{
    const char *at = strstr(ref, "@sha256:");
    if (at == NULL || strlen(at + 8) != 64) return false;
    for (const char *h = at + 8; *h; h++)
        if (!isxdigit((unsigned char)*h) || isupper((unsigned char)*h)) return false;
    return true;
}

/* Each FROM of the Dockerfile names a digest, an earlier stage, or scratch. */
static void check_dockerfile(struct compose_doc *d, yaml_node_t *build, struct policy_report *rep)
{
    const char *ctx = compose_scalar(build) ? compose_scalar(build) : compose_scalar(compose_get(d, build, "context"));
    const char *df = compose_scalar(compose_get(d, build, "dockerfile"));
    if (ctx == NULL) ctx = ".";
    autofree char *path = brig_asprintf("%s%s%s/%s", ctx[0] == '/' ? "" : d->dir, ctx[0] == '/' ? "" : "/", ctx,
                                        df ? df : "Dockerfile");
    autofree char *text = NULL;
    size_t len = 0;
    autoerr struct brig_error *e = NULL;
    if (brig_read_regular(path, 1u << 20, &text, &len, &e) < 0) {
        policy_fail(rep, "image.pinned", "build", "the Dockerfile cannot be read (%s): its base is not judged", e->msg);
        return;
    }
    char stages[32][64];
    size_t n_stages = 0, line_no = 0;
    for (char *line = text, *next; line != NULL && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        line_no++;
        while (isspace((unsigned char)*line)) line++;
        if (strncasecmp(line, "FROM", 4) != 0 || !isspace((unsigned char)line[4])) continue;
        char *words[8] = { NULL };
        size_t nw = 0;
        for (char *save = NULL, *t = strtok_r(line + 4, " \t\r", &save); t && nw < 8; t = strtok_r(NULL, " \t\r", &save))
            if (!brig_str_has_prefix(t, "--")) words[nw++] = t;
        if (nw == 0) continue;
        bool stage = strcasecmp(words[0], "scratch") == 0;
        for (size_t s = 0; s < n_stages && !stage; s++) stage = strcasecmp(stages[s], words[0]) == 0;
        if (nw >= 3 && strcasecmp(words[1], "AS") == 0 && n_stages < 32)
            snprintf(stages[n_stages++], sizeof(stages[0]), "%s", words[2]);
        if (!stage && !digest_pinned(words[0]))
            policy_fail(rep, "image.pinned", "build", "%s line %zu: FROM without @sha256: digest",
                        df ? df : "Dockerfile", line_no);
    }
}

static void check_image(struct compose_doc *d, yaml_node_t *svc, struct policy_report *rep)
{
    yaml_node_t *build = compose_get(d, svc, "build");
    const char *image = compose_scalar(compose_get(d, svc, "image"));
    if (build != NULL) check_dockerfile(d, build, rep);
    else if (image == NULL) policy_fail(rep, "image.pinned", "image", "no image and no build");
    else if (!digest_pinned(image)) policy_fail(rep, "image.pinned", "image", "not pinned by @sha256: digest");
}

/* The compose keys each config path comes from, for the report. */
static const struct { const char *config, *compose; } path_keys[] = {
    { "process.capabilities", "cap_add/cap_drop/privileged" },
    { "process.noNewPrivileges", "security_opt" },
    { "process.user", "user" },
    { "process.env", "environment/env_file" },
    { "process.args", "init" },
    { "process.rlimits", "ulimits" },
    { "root.readonly", "read_only" },
    { "mounts", "volumes/tmpfs/secrets/configs" },
    { "linux.namespaces", "network_mode/pid/ipc/uts" },
    { "linux.resources.memory", "mem_limit/memswap_limit" },
    { "linux.resources.pids", "pids_limit" },
    { "linux.resources.cpu", "cpus" },
    { "linux.resources.devices", "devices/privileged" },
    { "linux.devices", "devices" },
    { "linux.seccomp", "security_opt seccomp" },
    { "linux.sysctl", "sysctls" },
    { "linux.maskedPaths", "privileged/security_opt systempaths" },
    { "linux.readonlyPaths", "privileged/security_opt systempaths" },
};

static void report_rename(struct policy_report *rep, size_t from)
{
    for (size_t i = from; i < rep->n; i++) {
        char *p = rep->r[i].path;
        if (p == NULL) continue;
        for (size_t k = 0; k < BRIG_ARRAY_SIZE(path_keys); k++) {
            if (!brig_str_has_prefix(p, path_keys[k].config)) continue;
            rep->r[i].path = brig_asprintf("%s (%s)", path_keys[k].compose, p);
            free(p);
            break;
        }
    }
}

static int pick_service(struct compose_doc *d, const char *name, yaml_node_t **svc, const char **picked,
                        struct brig_error **err)
{
    yaml_node_t *services = compose_get(d, compose_root(d), "services");
    if (!compose_is_map(services)) return brig_failx(err, "services: expected a mapping of services");
    if (name != NULL) {
        *svc = compose_get(d, services, name);
        *picked = name;
        if (!compose_is_map(*svc)) return brig_failx(err, "services.%s: no such service", name);
        return 0;
    }
    if (compose_len(services) != 1)
        return brig_failx(err, "services: %zu services; name one with --service NAME", compose_len(services));
    yaml_node_t *k;
    compose_pair(d, services, 0, &k, svc);
    *picked = compose_scalar(k) ? compose_scalar(k) : "?";
    if (!compose_is_map(*svc)) return brig_failx(err, "services.%s: expected a mapping", *picked);
    return 0;
}

/* `docker compose` run on compose.yaml (or docker-compose.yml) also reads an
 * override file beside it, merged over it, without being told: a service
 * that passes here could be privileged there. FILE is NULL for text. */
static void check_override(const char *dir, const char *file, struct policy_report *rep)
{
    static const char *const mains[] = { "compose.yaml", "compose.yml", "docker-compose.yaml",
                                         "docker-compose.yml", NULL };
    static const char *const overrides[] = { "compose.override.yaml", "compose.override.yml",
                                             "docker-compose.override.yaml", "docker-compose.override.yml", NULL };
    if (file == NULL) return;
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    bool is_main = false;
    for (const char *const *m = mains; *m; m++) is_main = is_main || strcmp(base, *m) == 0;
    for (const char *const *o = overrides; is_main && *o; o++) {
        autofree char *path = brig_asprintf("%s/%s", dir, *o);
        if (access(path, F_OK) == 0)
            policy_fail(rep, "compose.keys", *o, "beside %s: compose merges it over this file without being "
                        "asked, and it is not judged here (check `docker compose config` output)", base);
    }
}

static int compose_check_doc(const struct brig_policy *p, struct compose_doc *d, const char *file,
                             const char *service, struct policy_report *rep, char **service_out,
                             struct brig_error **err)
{
    yaml_node_t *svc = NULL;
    const char *picked = NULL;
    autofree char *config = NULL, *notes = NULL;
    autospec struct brig_spec *s = NULL;
    TRY(pick_service(d, service, &svc, &picked, err));
    TRY(compose_map(d, svc, &config, &notes, err));
    TRY(spec_parse(config, strlen(config), d->dir, &s, err));
    policy_check(p, s, rep);
    report_rename(rep, 0);
    size_t before = rep->failed;
    check_keys(d, svc, notes, rep, 0);
    check_override(d->dir, file, rep);
    if (rep->failed == before) policy_fail(rep, "compose.keys", NULL, NULL);
    before = rep->failed;
    check_image(d, svc, rep);
    if (rep->failed == before) policy_fail(rep, "image.pinned", NULL, NULL);
    *service_out = brig_strdup(picked);
    return 0;
}

int policy_compose_check(const struct brig_policy *p, const char *file, const char *service,
                         struct policy_report *rep, char **service_out, struct brig_error **err)
{
    struct compose_doc d;
    *rep = (struct policy_report){ 0 };
    if (compose_load(file, &d, err) < 0) return -1;     /* its errors name the file */
    int r = compose_check_doc(p, &d, file, service, rep, service_out, err);
    compose_doc_free(&d);
    if (r < 0) {
        policy_report_free(rep);
        return brig_wrap(err, "%s", file);
    }
    return 0;
}

int policy_compose_check_text(const struct brig_policy *p, const char *text, size_t len, const char *dir,
                              const char *service, struct policy_report *rep, char **service_out,
                              struct brig_error **err)
{
    struct compose_doc d;
    *rep = (struct policy_report){ 0 };
    TRY(compose_parse(text, len, dir, &d, err));
    int r = compose_check_doc(p, &d, NULL, service, rep, service_out, err);
    compose_doc_free(&d);
    if (r < 0) policy_report_free(rep);
    return r;
}
