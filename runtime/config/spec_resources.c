/* config-linux.md "Control groups" resources: parsed and range-checked
 * here, applied by the cgroup code. */
#include "spec_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/strutil.h"

/* config-linux.md "Allowed Device List". */
static int spec_parse_device_rule(brig_json e, const char *p, struct brig_device_rule *d,
                                  struct brig_error **err)
{
    TRY(json_as_object(e, p, err));
    TRY(json_get_bool(e, p, "allow", true, &d->allow, err));
    autofree char *type = NULL;
    int r = json_get_string(e, p, "type", false, &type, err);
    if (r < 0) return -1;
    d->type = 'a';
    if (r == 0) {
        if (strlen(type) != 1 || strchr("acb", type[0]) == NULL)
            return brig_failx(err, "%s.type: must be one of a, c, b, got \"%.100s\"", p, type);
        d->type = type[0];
    }
    d->major = d->minor = -1;
    TRY(json_get_i64(e, p, "major", false, &d->major, err));
    TRY(json_get_i64(e, p, "minor", false, &d->minor, err));
    if (d->major < -1 || d->minor < -1 || d->major > UINT32_MAX || d->minor > UINT32_MAX)
        return brig_failx(err, "%s: invalid device number %" PRId64 ":%" PRId64, p, d->major,
                          d->minor);

    autofree char *access = NULL;
    r = json_get_string(e, p, "access", false, &access, err);
    if (r < 0) return -1;
    if (r == 0) {
        /* Kept in canonical order so the cgroup code can compare rules. */
        static const char rwm[] = "rwm";
        bool seen[3] = { false, false, false };
        /* An empty string would read as "rwm" downstream: refuse it. */
        if (access[0] == '\0')
            return brig_failx(err, "%s.access: must not be empty (omit it for \"rwm\")", p);
        for (const char *c = access; *c; c++) {
            const char *pos = strchr(rwm, *c);
            if (pos == NULL || seen[pos - rwm])
                return brig_failx(err, "%s.access: must be a subset of \"rwm\", got \"%.100s\"",
                                  p, access);
            seen[pos - rwm] = true;
        }
        size_t n = 0;
        for (int i = 0; i < 3; i++)
            if (seen[i]) d->access[n++] = rwm[i];
        d->access[n] = '\0';
    }
    return 0;
}

static int spec_parse_memory(brig_json res, const char *path, struct brig_resources *r,
                             struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int x = sp_get_object(res, path, "memory", false, &v, q, err);
    if (x != 0) return x < 0 ? -1 : 0;
    static const char *const keys[] = { "limit", "reservation", "swap", "kernel", "kernelTCP" };
    struct brig_opt_i64 *vals[] = { &r->memory.limit, &r->memory.reservation, &r->memory.swap,
                                    &r->memory.kernel, &r->memory.kernel_tcp };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(keys); i++) {
        TRY(sp_get_opt_i64(v, q, keys[i], vals[i], err));
        /* -1 means unlimited; anything below has no meaning. */
        if (vals[i]->set && vals[i]->v < -1)
            return brig_failx(err, "%s.%s: must be -1 (unlimited) or a byte count, got %" PRId64,
                              q, keys[i], vals[i]->v);
    }
    TRY(sp_get_opt_u64(v, q, "swappiness", &r->memory.swappiness, err));
    if (r->memory.swappiness.set && r->memory.swappiness.v > 100)
        return brig_failx(err, "%s.swappiness: must be between 0 and 100, got %" PRIu64, q,
                          r->memory.swappiness.v);
    x = json_get_bool(v, q, "disableOOMKiller", false, &r->memory.disable_oom_killer, err);
    if (x < 0) return -1;
    r->memory.has_disable_oom_killer = x == 0;
    x = json_get_bool(v, q, "useHierarchy", false, &r->memory.use_hierarchy, err);
    if (x < 0) return -1;
    r->memory.has_use_hierarchy = x == 0;
    x = json_get_bool(v, q, "checkBeforeUpdate", false, &r->memory.check_before_update, err);
    if (x < 0) return -1;
    r->memory.has_check_before_update = x == 0;
    return 0;
}

static int spec_parse_cpu(brig_json res, const char *path, struct brig_resources *r,
                          struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int x = sp_get_object(res, path, "cpu", false, &v, q, err);
    if (x != 0) return x < 0 ? -1 : 0;
    TRY(sp_get_opt_u64(v, q, "shares", &r->cpu.shares, err));
    TRY(sp_get_opt_u64(v, q, "period", &r->cpu.period, err));
    TRY(sp_get_opt_u64(v, q, "realtimePeriod", &r->cpu.realtime_period, err));
    TRY(sp_get_opt_u64(v, q, "burst", &r->cpu.burst, err));
    TRY(sp_get_opt_i64(v, q, "quota", &r->cpu.quota, err));
    TRY(sp_get_opt_i64(v, q, "realtimeRuntime", &r->cpu.realtime_runtime, err));
    TRY(sp_get_opt_i64(v, q, "idle", &r->cpu.idle, err));
    TRY(json_get_string(v, q, "cpus", false, &r->cpu.cpus, err));
    TRY(json_get_string(v, q, "mems", false, &r->cpu.mems, err));
    /* config-linux.md: burst MUST be no larger than a positive quota. */
    if (r->cpu.burst.set && r->cpu.quota.set && r->cpu.quota.v > 0 &&
        r->cpu.burst.v > (uint64_t)r->cpu.quota.v)
        return brig_failx(err, "%s.burst: %" PRIu64 " is larger than quota %" PRId64, q,
                          r->cpu.burst.v, r->cpu.quota.v);
    return 0;
}

static int spec_parse_throttle(brig_json bio, const char *path, const char *key,
                               struct brig_throttle_device **out, size_t *n,
                               struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json arr;
    int x = sp_get_array(bio, path, key, false, &arr, q, err);
    if (x != 0) return x < 0 ? -1 : 0;
    *n = json_array_len(arr);
    *out = brig_calloc(*n, sizeof(**out));
    for (size_t i = 0; i < *n; i++) {
        char pi[SP_PATH_MAX];
        sp_idx(pi, q, i);
        brig_json e = json_array_at(arr, i);
        struct brig_throttle_device *t = &(*out)[i];
        TRY(json_as_object(e, pi, err));
        TRY(json_get_i64(e, pi, "major", true, &t->major, err));
        TRY(json_get_i64(e, pi, "minor", true, &t->minor, err));
        TRY(json_get_u64(e, pi, "rate", true, &t->rate, err));
        if (t->major < 0 || t->minor < 0)
            return brig_failx(err, "%s: invalid device number", pi);
    }
    return 0;
}

static int spec_parse_block_io(brig_json res, const char *path, struct brig_resources *r,
                               struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int x = sp_get_object(res, path, "blockIO", false, &v, q, err);
    if (x != 0) return x < 0 ? -1 : 0;
    x = sp_get_u16(v, q, "weight", false, &r->block_io.weight, err);
    if (x < 0) return -1;
    r->block_io.has_weight = x == 0;
    x = sp_get_u16(v, q, "leafWeight", false, &r->block_io.leaf_weight, err);
    if (x < 0) return -1;
    r->block_io.has_leaf_weight = x == 0;

    char qa[SP_PATH_MAX];
    brig_json arr;
    x = sp_get_array(v, q, "weightDevice", false, &arr, qa, err);
    if (x < 0) return -1;
    if (x == 0) {
        size_t n = json_array_len(arr);
        r->block_io.n_weight_devices = n;
        r->block_io.weight_devices = brig_calloc(n, sizeof(struct brig_weight_device));
        for (size_t i = 0; i < n; i++) {
            char pi[SP_PATH_MAX];
            sp_idx(pi, qa, i);
            brig_json e = json_array_at(arr, i);
            struct brig_weight_device *w = &r->block_io.weight_devices[i];
            TRY(json_as_object(e, pi, err));
            TRY(json_get_i64(e, pi, "major", true, &w->major, err));
            TRY(json_get_i64(e, pi, "minor", true, &w->minor, err));
            if (w->major < 0 || w->minor < 0)
                return brig_failx(err, "%s: invalid device number", pi);
            x = sp_get_u16(e, pi, "weight", false, &w->weight, err);
            if (x < 0) return -1;
            w->has_weight = x == 0;
            x = sp_get_u16(e, pi, "leafWeight", false, &w->leaf_weight, err);
            if (x < 0) return -1;
            w->has_leaf_weight = x == 0;
            if (!w->has_weight && !w->has_leaf_weight)
                return brig_failx(err, "%s: weight or leafWeight is required", pi);
        }
    }
    TRY(spec_parse_throttle(v, q, "throttleReadBpsDevice", &r->block_io.throttle_read_bps,
                            &r->block_io.n_throttle_read_bps, err));
    TRY(spec_parse_throttle(v, q, "throttleWriteBpsDevice", &r->block_io.throttle_write_bps,
                            &r->block_io.n_throttle_write_bps, err));
    TRY(spec_parse_throttle(v, q, "throttleReadIOPSDevice", &r->block_io.throttle_read_iops,
                            &r->block_io.n_throttle_read_iops, err));
    TRY(spec_parse_throttle(v, q, "throttleWriteIOPSDevice", &r->block_io.throttle_write_iops,
                            &r->block_io.n_throttle_write_iops, err));
    return 0;
}

/* The schema's pattern ^[1-9][0-9]*[KMG]B$: the size is part of a cgroup
 * file name (hugetlb.2MB.limit_in_bytes), so nothing else may get through. */
static bool spec_valid_page_size(const char *s)
{
    if (s[0] < '1' || s[0] > '9') return false;
    size_t d = strspn(s, "0123456789");
    return d <= 12 && strchr("KMG", s[d]) != NULL && s[d] != '\0' && s[d + 1] == 'B' &&
           s[d + 2] == '\0';
}

static int spec_parse_hugepages(brig_json res, const char *path, struct brig_resources *r,
                                struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json arr;
    int x = sp_get_array(res, path, "hugepageLimits", false, &arr, q, err);
    if (x != 0) return x < 0 ? -1 : 0;
    r->n_hugepage_limits = json_array_len(arr);
    r->hugepage_limits = brig_calloc(r->n_hugepage_limits, sizeof(*r->hugepage_limits));
    for (size_t i = 0; i < r->n_hugepage_limits; i++) {
        char pi[SP_PATH_MAX];
        sp_idx(pi, q, i);
        brig_json e = json_array_at(arr, i);
        struct brig_hugepage_limit *h = &r->hugepage_limits[i];
        TRY(json_as_object(e, pi, err));
        TRY(json_get_string(e, pi, "pageSize", true, &h->page_size, err));
        if (!spec_valid_page_size(h->page_size))
            return brig_failx(err, "%s.pageSize: invalid page size \"%.100s\" (like \"2MB\")", pi,
                              h->page_size);
        TRY(json_get_u64(e, pi, "limit", true, &h->limit, err));
    }
    return 0;
}

static int spec_parse_network(brig_json res, const char *path, struct brig_resources *r,
                              struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int x = sp_get_object(res, path, "network", false, &v, q, err);
    if (x != 0) return x < 0 ? -1 : 0;
    x = json_get_u32(v, q, "classID", false, &r->network.class_id, err);
    if (x < 0) return -1;
    r->network.has_class_id = x == 0;
    char qa[SP_PATH_MAX];
    brig_json arr;
    x = sp_get_array(v, q, "priorities", false, &arr, qa, err);
    if (x != 0) return x < 0 ? -1 : 0;
    r->network.n_priorities = json_array_len(arr);
    r->network.priorities = brig_calloc(r->network.n_priorities, sizeof(struct brig_net_priority));
    for (size_t i = 0; i < r->network.n_priorities; i++) {
        char pi[SP_PATH_MAX];
        sp_idx(pi, qa, i);
        brig_json e = json_array_at(arr, i);
        TRY(json_as_object(e, pi, err));
        TRY(json_get_string(e, pi, "name", true, &r->network.priorities[i].name, err));
        TRY(json_get_u32(e, pi, "priority", true, &r->network.priorities[i].priority, err));
    }
    return 0;
}

static int spec_parse_rdma(brig_json res, const char *path, struct brig_resources *r,
                           struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int x = sp_get_object(res, path, "rdma", false, &v, q, err);
    if (x != 0) return x < 0 ? -1 : 0;
    r->n_rdma = json_object_len(v);
    r->rdma = brig_calloc(r->n_rdma, sizeof(*r->rdma));
    for (size_t i = 0; i < r->n_rdma; i++) {
        char pk[SP_PATH_MAX];
        sp_key(pk, q, json_object_key(v, i));
        brig_json e = json_object_value(v, i);
        struct brig_rdma_limit *l = &r->rdma[i];
        l->device = brig_strdup(json_object_key(v, i));
        TRY(json_as_object(e, pk, err));
        x = json_get_u32(e, pk, "hcaHandles", false, &l->hca_handles, err);
        if (x < 0) return -1;
        l->has_hca_handles = x == 0;
        x = json_get_u32(e, pk, "hcaObjects", false, &l->hca_objects, err);
        if (x < 0) return -1;
        l->has_hca_objects = x == 0;
        if (!l->has_hca_handles && !l->has_hca_objects)
            return brig_failx(err, "%s: hcaHandles or hcaObjects is required", pk);
    }
    return 0;
}

/* unified keys are cgroup v2 file names written in the container's cgroup
 * directory: a '/' or a leading '.' could reach another cgroup's files. */
static int spec_parse_unified(brig_json res, const char *path, struct brig_resources *r,
                              struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int x = sp_get_object(res, path, "unified", false, &v, q, err);
    if (x != 0) return x < 0 ? -1 : 0;
    TRY(json_as_kv(v, q, &r->unified, &r->n_unified, err));
    for (size_t i = 0; i < r->n_unified; i++) {
        const char *k = r->unified[i].key;
        if (k[0] == '\0' || k[0] == '.' || strchr(k, '/') != NULL)
            return brig_failx(err, "%s: invalid cgroup file name \"%.100s\"", q, k);
    }
    return 0;
}

int spec_parse_resources(brig_json res, const char *path, struct brig_resources *r,
                         struct brig_error **err)
{
    r->present = true;
    char q[SP_PATH_MAX];
    brig_json arr;
    int x = sp_get_array(res, path, "devices", false, &arr, q, err);
    if (x < 0) return -1;
    if (x == 0) {
        r->n_devices = json_array_len(arr);
        r->devices = brig_calloc(r->n_devices, sizeof(*r->devices));
        for (size_t i = 0; i < r->n_devices; i++) {
            char pi[SP_PATH_MAX];
            sp_idx(pi, q, i);
            TRY(spec_parse_device_rule(json_array_at(arr, i), pi, &r->devices[i], err));
        }
    }
    TRY(spec_parse_memory(res, path, r, err));
    TRY(spec_parse_cpu(res, path, r, err));

    brig_json v;
    x = sp_get_object(res, path, "pids", false, &v, q, err);
    if (x < 0) return -1;
    if (x == 0) {
        TRY(json_get_i64(v, q, "limit", true, &r->pids.limit.v, err));
        r->pids.limit.set = true;
        if (r->pids.limit.v < -1)
            return brig_failx(err, "%s.limit: must be -1 (unlimited) or a count, got %" PRId64,
                              q, r->pids.limit.v);
    }
    TRY(spec_parse_block_io(res, path, r, err));
    TRY(spec_parse_hugepages(res, path, r, err));
    TRY(spec_parse_network(res, path, r, err));
    TRY(spec_parse_rdma(res, path, r, err));
    TRY(spec_parse_unified(res, path, r, err));
    return 0;
}

void spec_free_resources(struct brig_resources *r)
{
    free(r->devices);
    free(r->cpu.cpus);
    free(r->cpu.mems);
    free(r->block_io.weight_devices);
    free(r->block_io.throttle_read_bps);
    free(r->block_io.throttle_write_bps);
    free(r->block_io.throttle_read_iops);
    free(r->block_io.throttle_write_iops);
    for (size_t i = 0; i < r->n_hugepage_limits; i++) free(r->hugepage_limits[i].page_size);
    free(r->hugepage_limits);
    for (size_t i = 0; i < r->network.n_priorities; i++) free(r->network.priorities[i].name);
    free(r->network.priorities);
    for (size_t i = 0; i < r->n_rdma; i++) free(r->rdma[i].device);
    free(r->rdma);
    for (size_t i = 0; i < r->n_unified; i++) {
        free(r->unified[i].key);
        free(r->unified[i].value);
    }
    free(r->unified);
}
