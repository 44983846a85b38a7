/* config-linux.md, except resources and seccomp (spec_resources.c,
 * spec_seccomp.c): namespaces, id mappings, sysctl, devices, propagation,
 * masked/readonly paths, personality, time offsets, and the presence of
 * what brig refuses later (intelRdt, netDevices, memoryPolicy). */
#include "spec_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>

#include "mount_options.h"
#include "../util/cleanup.h"
#include "../util/strutil.h"

static const struct sp_name ns_types[] = {
    { "pid", BRIG_NS_PID },   { "network", BRIG_NS_NETWORK }, { "mount", BRIG_NS_MOUNT },
    { "ipc", BRIG_NS_IPC },   { "uts", BRIG_NS_UTS },         { "user", BRIG_NS_USER },
    { "cgroup", BRIG_NS_CGROUP }, { "time", BRIG_NS_TIME },   { NULL, 0 },
};

/* config-linux.md "Namespaces": duplicates MUST be an error. */
static int spec_parse_namespaces(brig_json lx, struct brig_linux *l, struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json arr;
    int r = sp_get_array(lx, "linux", "namespaces", false, &arr, q, err);
    if (r != 0) return r < 0 ? -1 : 0;
    for (size_t i = 0; i < json_array_len(arr); i++) {
        char pi[SP_PATH_MAX];
        sp_idx(pi, q, i);
        brig_json e = json_array_at(arr, i);
        TRY(json_as_object(e, pi, err));
        autofree char *type = NULL;
        TRY(json_get_string(e, pi, "type", true, &type, err));
        long t;
        if (sp_lookup(ns_types, type, &t) < 0)
            return brig_failx(err, "%s.type: unknown namespace type \"%.100s\"", pi, type);
        struct brig_namespace *ns = &l->namespaces[t];
        if (ns->present)
            return brig_failx(err, "%s.type: duplicate namespace \"%s\"", pi, type);
        ns->present = true;
        TRY(json_get_string(e, pi, "path", false, &ns->path, err));
        if (ns->path != NULL && ns->path[0] != '/')
            return brig_failx(err, "%s.path: must be an absolute path, got \"%.200s\"", pi,
                              ns->path);
    }
    return 0;
}

/* sysctl names become paths under /proc/sys ("net.ipv4.ip_forward" ->
 * net/ipv4/ip_forward); a name must not climb out of it. */
static int spec_parse_sysctl(brig_json lx, struct brig_linux *l, struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(lx, "linux", "sysctl", false, &v, q, err);
    if (r != 0) return r < 0 ? -1 : 0;
    TRY(json_as_kv(v, q, &l->sysctl, &l->n_sysctl, err));
    for (size_t i = 0; i < l->n_sysctl; i++) {
        const char *k = l->sysctl[i].key;
        if (k[0] == '\0' || k[0] == '.' || k[0] == '/' || strstr(k, "..") != NULL ||
            strstr(k, "/.") != NULL)
            return brig_failx(err, "%s: invalid sysctl name \"%.100s\"", q, k);
    }
    return 0;
}

/* config-linux.md "Devices". */
static int spec_parse_device(brig_json e, const char *p, struct brig_device *d,
                             struct brig_error **err)
{
    TRY(json_as_object(e, p, err));
    TRY(json_get_string(e, p, "path", true, &d->path, err));
    if (d->path[0] != '/')
        return brig_failx(err, "%s.path: must be an absolute path, got \"%.200s\"", p, d->path);
    autofree char *type = NULL;
    TRY(json_get_string(e, p, "type", true, &type, err));
    if (strlen(type) != 1 || strchr("cbup", type[0]) == NULL)
        return brig_failx(err, "%s.type: must be one of c, b, u, p, got \"%.100s\"", p, type);
    d->type = type[0];
    bool need = d->type != 'p';
    d->major = d->minor = 0;
    TRY(json_get_i64(e, p, "major", need, &d->major, err));
    TRY(json_get_i64(e, p, "minor", need, &d->minor, err));
    if (d->major < 0 || d->minor < 0 || d->major > UINT32_MAX || d->minor > UINT32_MAX)
        return brig_failx(err, "%s: invalid device number %" PRId64 ":%" PRId64, p, d->major,
                          d->minor);
    int r = json_get_u32(e, p, "fileMode", false, &d->file_mode, err);
    if (r < 0) return -1;
    d->has_file_mode = r == 0;
    /* The schema's FileMode: permission bits only, in decimal. */
    if (d->has_file_mode && d->file_mode > 0777)
        return brig_failx(err, "%s.fileMode: must be at most 511 (0777), got %" PRIu32, p,
                          d->file_mode);
    r = json_get_u32(e, p, "uid", false, &d->uid, err);
    if (r < 0) return -1;
    d->has_uid = r == 0;
    r = json_get_u32(e, p, "gid", false, &d->gid, err);
    if (r < 0) return -1;
    d->has_gid = r == 0;
    return 0;
}

static int spec_parse_devices(brig_json lx, struct brig_linux *l, struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json arr;
    int r = sp_get_array(lx, "linux", "devices", false, &arr, q, err);
    if (r != 0) return r < 0 ? -1 : 0;
    l->n_devices = json_array_len(arr);
    l->devices = brig_calloc(l->n_devices, sizeof(*l->devices));
    for (size_t i = 0; i < l->n_devices; i++) {
        char pi[SP_PATH_MAX];
        sp_idx(pi, q, i);
        TRY(spec_parse_device(json_array_at(arr, i), pi, &l->devices[i], err));
    }
    return 0;
}

static int spec_parse_personality(brig_json lx, struct brig_linux *l, struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(lx, "linux", "personality", false, &v, q, err);
    if (r != 0) return r < 0 ? -1 : 0;
    autofree char *domain = NULL;
    TRY(json_get_string(v, q, "domain", true, &domain, err));
    if (strcmp(domain, "LINUX") == 0) l->personality.domain = PER_LINUX;
    else if (strcmp(domain, "LINUX32") == 0) l->personality.domain = PER_LINUX32;
    else return brig_failx(err, "%s.domain: unknown domain \"%.100s\" (LINUX or LINUX32)", q,
                           domain);
    TRY(sp_get_strv(v, q, "flags", &l->personality.flags, &l->personality.n_flags, err));
    l->personality.present = true;
    return 0;
}

/* config-linux.md "Offset for Time Namespace": only these two clocks can be
 * offset by the kernel; another key is a request brig cannot honour. */
static int spec_parse_time_offsets(brig_json lx, struct brig_linux *l, struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(lx, "linux", "timeOffsets", false, &v, q, err);
    if (r != 0) return r < 0 ? -1 : 0;
    for (size_t i = 0; i < json_object_len(v); i++) {
        const char *k = json_object_key(v, i);
        brig_json e = json_object_value(v, i);
        char pk[SP_PATH_MAX];
        sp_key(pk, q, k);
        struct brig_time_offset *o;
        if (strcmp(k, "monotonic") == 0) o = &l->time_offsets[0];
        else if (strcmp(k, "boottime") == 0) o = &l->time_offsets[1];
        else return brig_failx(err, "%s: unknown clock (only monotonic and boottime)", pk);
        TRY(json_as_object(e, pk, err));
        TRY(json_get_i64(e, pk, "secs", false, &o->secs, err));
        TRY(json_get_u32(e, pk, "nanosecs", false, &o->nanosecs, err));
        if (o->nanosecs >= 1000000000u)
            return brig_failx(err, "%s.nanosecs: must be below 1000000000, got %" PRIu32, pk,
                              o->nanosecs);
        o->set = true;
    }
    return 0;
}

/* Parsed only to be refused by spec_check_supported(); the types are still
 * checked so that a malformed config is reported as such. */
static int spec_parse_unsupported(brig_json lx, struct brig_linux *l, struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(lx, "linux", "netDevices", false, &v, q, err);
    if (r < 0) return -1;
    if (r == 0) {
        l->has_net_devices = true;
        for (size_t i = 0; i < json_object_len(v); i++) {
            char pk[SP_PATH_MAX];
            sp_key(pk, q, json_object_key(v, i));
            brig_json d = json_object_value(v, i);
            TRY(json_as_object(d, pk, err));
            autofree char *name = NULL;
            TRY(json_get_string(d, pk, "name", false, &name, err));
        }
    }
    r = sp_get_object(lx, "linux", "intelRdt", false, &v, q, err);
    if (r < 0) return -1;
    l->has_intel_rdt = r == 0;
    return 0;
}

int spec_parse_linux(brig_json lx, struct brig_linux *l, struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    TRY(spec_parse_namespaces(lx, l, err));
    int r = sp_get_array(lx, "linux", "uidMappings", false, &v, q, err);
    if (r < 0) return -1;
    if (r == 0) TRY(sp_parse_id_mappings(v, q, &l->uid_mappings, &l->n_uid_mappings, err));
    r = sp_get_array(lx, "linux", "gidMappings", false, &v, q, err);
    if (r < 0) return -1;
    if (r == 0) TRY(sp_parse_id_mappings(v, q, &l->gid_mappings, &l->n_gid_mappings, err));
    TRY(spec_parse_sysctl(lx, l, err));

    r = sp_get_object(lx, "linux", "resources", false, &v, q, err);
    if (r < 0) return -1;
    if (r == 0) TRY(spec_parse_resources(v, q, &l->resources, err));
    TRY(json_get_string(lx, "linux", "cgroupsPath", false, &l->cgroups_path, err));
    TRY(spec_parse_devices(lx, l, err));
    r = sp_get_object(lx, "linux", "seccomp", false, &v, q, err);
    if (r < 0) return -1;
    if (r == 0) TRY(spec_parse_seccomp(v, q, &l->seccomp, err));

    autofree char *prop = NULL;
    r = json_get_string(lx, "linux", "rootfsPropagation", false, &prop, err);
    if (r < 0) return -1;
    if (r == 0) {
        if (mount_propagation_parse(prop, &l->rootfs_propagation) < 0)
            return brig_failx(err, "linux.rootfsPropagation: unknown propagation \"%.100s\"",
                              prop);
        l->has_rootfs_propagation = true;
    }
    TRY(sp_get_abs_paths(lx, "linux", "maskedPaths", &l->masked_paths, &l->n_masked_paths, err));
    TRY(sp_get_abs_paths(lx, "linux", "readonlyPaths", &l->readonly_paths, &l->n_readonly_paths,
                         err));
    TRY(json_get_string(lx, "linux", "mountLabel", false, &l->mount_label, err));
    TRY(spec_parse_personality(lx, l, err));
    TRY(spec_parse_time_offsets(lx, l, err));
    r = sp_get_object(lx, "linux", "memoryPolicy", false, &v, q, err);
    if (r < 0) return -1;
    if (r == 0) TRY(spec_parse_mempolicy(v, q, &l->memory_policy, err));
    TRY(spec_parse_unsupported(lx, l, err));
    return 0;
}

void spec_free_linux(struct brig_linux *l)
{
    for (int i = 0; i < BRIG_NS_COUNT; i++) free(l->namespaces[i].path);
    free(l->uid_mappings);
    free(l->gid_mappings);
    for (size_t i = 0; i < l->n_sysctl; i++) {
        free(l->sysctl[i].key);
        free(l->sysctl[i].value);
    }
    free(l->sysctl);
    spec_free_resources(&l->resources);
    free(l->cgroups_path);
    for (size_t i = 0; i < l->n_devices; i++) free(l->devices[i].path);
    free(l->devices);
    spec_free_seccomp(&l->seccomp);
    brig_strv_free(l->masked_paths);
    brig_strv_free(l->readonly_paths);
    free(l->mount_label);
    brig_strv_free(l->personality.flags);
}
