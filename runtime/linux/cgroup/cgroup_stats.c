/* `events --stats`: cpu, memory and pids accounting of the container's
 * cgroup, in runc's units and conventions (libcontainer/cgroups/fs and fs2
 * GetStats), from the v2 leaf where the controller lives there, else from
 * the v1 hierarchy. A controller that is not there is left out (has_* is
 * false), never reported as zero. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_internal.h"
#include "../../util/cleanup.h"
#include "../../util/strutil.h"

/* One number from a file holding one value; "max" reads as max_value. */
static bool stats_read_u64(const char *dir, const char *file, uint64_t max_value, uint64_t *out)
{
    autofree char *t = NULL;
    if (dir == NULL || cg_read(dir, file, &t, NULL) < 0) return false;
    t[strcspn(t, "\n")] = '\0';
    if (strcmp(t, "max") == 0) {
        *out = max_value;
        return true;
    }
    return brig_parse_u64(t, out) == 0;
}

/* "key value" lines (cpu.stat, memory.stat, memory.events): the value of key. */
static bool stats_keyed(const char *text, const char *key, uint64_t *out)
{
    size_t kl = strlen(key);
    for (const char *l = text; l != NULL && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (strncmp(l, key, kl) == 0 && l[kl] == ' ') {
            unsigned long long v;
            if (sscanf(l + kl + 1, "%llu", &v) != 1) return false;
            *out = v;
            return true;
        }
    }
    return false;
}

static bool stats_keyed_file(const char *dir, const char *file, const char *key, uint64_t *out)
{
    autofree char *t = NULL;
    if (dir == NULL || cg_read(dir, file, &t, NULL) < 0) return false;
    return stats_keyed(t, key, out);
}

static void stats_raw(struct cgroup_stats *st, const char *dir, const char *file)
{
    autofree char *t = NULL;
    if (cg_read(dir, file, &t, NULL) < 0) return;
    size_t cap = 0;
    for (char *save = NULL, *l = strtok_r(t, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char key[128];
        unsigned long long v;
        if (sscanf(l, "%127s %llu", key, &v) != 2) continue;
        if (st->n_raw == cap) {
            cap = cap ? cap * 2 : 32;
            st->raw_keys = realloc(st->raw_keys, cap * sizeof(char *));
            st->raw_vals = realloc(st->raw_vals, cap * sizeof(uint64_t));
            if (st->raw_keys == NULL || st->raw_vals == NULL) abort();
        }
        st->raw_keys[st->n_raw] = brig_strdup(key);
        st->raw_vals[st->n_raw++] = v;
    }
}

/* The controller's directory: the v2 leaf if the controller is enabled
 * there (its interface files exist), else its v1 hierarchy. */
static const char *stats_dir(const struct brig_cgroup *cg, const char *v1, const char *v2_file,
                             bool *v2)
{
    const struct cg_dir *d = cg_dir_v2(cg);
    if (d != NULL && cg_file_exists(d->path, v2_file)) {
        *v2 = true;
        return d->path;
    }
    *v2 = false;
    d = cg_dir_v1(cg, v1);
    return d != NULL && access(d->path, F_OK) == 0 ? d->path : NULL;
}

/* brief: the totals only (cpu usage, user and system; memory usage and
 * peak; OOM kills): no per-cpu, throttling, limits, swap or memory.stat. */
static void stats_cpu(const struct brig_cgroup *cg, struct cgroup_stats *st, bool brief)
{
    bool v2;
    /* Throttling needs the cpu controller: v2 when it is enabled there,
     * else v1 cpuacct; failing both, cpu.stat's usage lines, which are core
     * v2 files present without +cpu. */
    const char *d = stats_dir(cg, "cpuacct", "cpu.max", &v2);
    const struct cg_dir *v2d = cg_dir_v2(cg);
    if (d == NULL && v2d != NULL && cg_file_exists(v2d->path, "cpu.stat")) {
        d = v2d->path;
        v2 = true;
    }
    if (d == NULL) return;
    if (v2) {
        autofree char *t = NULL;
        if (cg_read(d, "cpu.stat", &t, NULL) < 0) return;
        uint64_t v;
        st->has_cpu = stats_keyed(t, "usage_usec", &v);
        st->cpu_total = v * 1000;
        if (stats_keyed(t, "user_usec", &v)) st->cpu_user = v * 1000;
        if (stats_keyed(t, "system_usec", &v)) st->cpu_kernel = v * 1000;
        stats_keyed(t, "nr_periods", &st->periods);
        stats_keyed(t, "nr_throttled", &st->throttled_periods);
        if (stats_keyed(t, "throttled_usec", &v)) st->throttled_time = v * 1000;
        return;
    }
    st->has_cpu = stats_read_u64(d, "cpuacct.usage", 0, &st->cpu_total);
    if (!st->has_cpu) return;
    if (!stats_read_u64(d, "cpuacct.usage_user", 0, &st->cpu_user) ||
        !stats_read_u64(d, "cpuacct.usage_sys", 0, &st->cpu_kernel)) {
        /* Older kernels: cpuacct.stat in clock ticks. */
        uint64_t u = 0, s = 0, hz = (uint64_t)sysconf(_SC_CLK_TCK);
        if (hz == 0) hz = 100;
        stats_keyed_file(d, "cpuacct.stat", "user", &u);
        stats_keyed_file(d, "cpuacct.stat", "system", &s);
        st->cpu_user = u * (1000000000ULL / hz);
        st->cpu_kernel = s * (1000000000ULL / hz);
    }
    if (brief) return;
    autofree char *pc = NULL;
    if (cg_read(d, "cpuacct.usage_percpu", &pc, NULL) == 0) {
        size_t cap = 8;
        st->percpu = brig_calloc(cap, sizeof(uint64_t));
        for (char *save = NULL, *tok = strtok_r(pc, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
            uint64_t v;
            if (brig_parse_u64(tok, &v) < 0) continue;
            if (st->n_percpu == cap) {
                cap *= 2;
                st->percpu = realloc(st->percpu, cap * sizeof(uint64_t));
                if (st->percpu == NULL) abort();
            }
            st->percpu[st->n_percpu++] = v;
        }
    }
    /* Throttling lives in the cpu controller (mounted with cpuacct here,
     * but not necessarily). */
    const struct cg_dir *cpu = cg_dir_v1(cg, "cpu");
    if (cpu != NULL) {
        autofree char *t = NULL;
        if (cg_read(cpu->path, "cpu.stat", &t, NULL) == 0) {
            stats_keyed(t, "nr_periods", &st->periods);
            stats_keyed(t, "nr_throttled", &st->throttled_periods);
            stats_keyed(t, "throttled_time", &st->throttled_time);
        }
    }
}

static void stats_memory(const struct brig_cgroup *cg, struct cgroup_stats *st, bool brief)
{
    bool v2;
    const char *d = stats_dir(cg, "memory", "memory.current", &v2);
    if (d == NULL) return;
    if (v2) {
        st->has_memory = stats_read_u64(d, "memory.current", 0, &st->mem_usage);
        if (!st->has_memory) return;
        stats_read_u64(d, "memory.peak", 0, &st->mem_max);
        if (brief) {
            st->has_oom = stats_keyed_file(d, "memory.events", "oom_kill", &st->oom_kills);
            return;
        }
        stats_read_u64(d, "memory.max", UINT64_MAX, &st->mem_limit);
        /* v2 has no failcnt: runc reports memory.events "max" (times the
         * limit was hit). */
        stats_keyed_file(d, "memory.events", "max", &st->mem_failcnt);
        stats_raw(st, d, "memory.stat");
        stats_keyed_file(d, "memory.stat", "file", &st->mem_cache);
        uint64_t sw = 0, swmax = 0;
        if (stats_read_u64(d, "memory.swap.current", 0, &sw)) {
            /* As runc: swap is reported as memory+swap, like v1's memsw. */
            st->has_swap = true;
            st->swap_usage = sw + st->mem_usage;
            stats_read_u64(d, "memory.swap.max", UINT64_MAX, &swmax);
            st->swap_limit = swmax == UINT64_MAX || st->mem_limit == UINT64_MAX
                                 ? UINT64_MAX : swmax + st->mem_limit;
            if (stats_read_u64(d, "memory.swap.peak", 0, &sw)) st->swap_max = sw + st->mem_max;
            stats_keyed_file(d, "memory.swap.events", "max", &st->swap_failcnt);
        }
        st->has_oom = stats_keyed_file(d, "memory.events", "oom_kill", &st->oom_kills);
        return;
    }
    st->has_memory = stats_read_u64(d, "memory.usage_in_bytes", 0, &st->mem_usage);
    if (!st->has_memory) return;
    stats_read_u64(d, "memory.max_usage_in_bytes", 0, &st->mem_max);
    if (brief) {
        st->has_oom = stats_keyed_file(d, "memory.oom_control", "oom_kill", &st->oom_kills);
        return;
    }
    stats_read_u64(d, "memory.limit_in_bytes", 0, &st->mem_limit);
    stats_read_u64(d, "memory.failcnt", 0, &st->mem_failcnt);
    stats_raw(st, d, "memory.stat");
    stats_keyed_file(d, "memory.stat", "cache", &st->mem_cache);
    st->has_swap = stats_read_u64(d, "memory.memsw.usage_in_bytes", 0, &st->swap_usage);
    if (st->has_swap) {
        stats_read_u64(d, "memory.memsw.limit_in_bytes", 0, &st->swap_limit);
        stats_read_u64(d, "memory.memsw.max_usage_in_bytes", 0, &st->swap_max);
        stats_read_u64(d, "memory.memsw.failcnt", 0, &st->swap_failcnt);
    }
    st->has_oom = stats_keyed_file(d, "memory.oom_control", "oom_kill", &st->oom_kills);
}

static void stats_pids(const struct brig_cgroup *cg, struct cgroup_stats *st)
{
    bool v2;
    const char *d = stats_dir(cg, "pids", "pids.current", &v2);
    if (d == NULL) return;
    st->has_pids = stats_read_u64(d, "pids.current", 0, &st->pids_current);
    /* runc prints an unlimited pids.max as 0. */
    if (st->has_pids) stats_read_u64(d, "pids.max", 0, &st->pids_limit);
}

int cgroup_stats_read(const struct brig_cgroup *cg, struct cgroup_stats *st,
                      struct brig_error **err)
{
    memset(st, 0, sizeof(*st));
    bool any = false;
    for (size_t i = 0; i < cg->n_dirs; i++)
        if (access(cg->dirs[i].path, F_OK) == 0) any = true;
    if (!any) return brig_failx(err, "cgroup: the container's cgroup is gone");
    stats_cpu(cg, st, false);
    stats_memory(cg, st, false);
    stats_pids(cg, st);
    return 0;
}

void cgroup_stats_brief(const struct brig_cgroup *cg, struct cgroup_stats *st)
{
    /* No check that the cgroup is there first: a file that cannot be read
     * leaves its has_* false, which is all a caller can act on. */
    memset(st, 0, sizeof(*st));
    stats_cpu(cg, st, true);
    stats_memory(cg, st, true);
    /* v2 only (kernels with pids.peak): the v1 controller keeps no peak */
    bool v2;
    const char *d = stats_dir(cg, "pids", "pids.current", &v2);
    if (d != NULL && v2) st->has_pids_peak = stats_read_u64(d, "pids.peak", 0, &st->pids_peak);
}

void cgroup_stats_clear(struct cgroup_stats *st)
{
    for (size_t i = 0; i < st->n_raw; i++) free(st->raw_keys[i]);
    free(st->raw_keys);
    free(st->raw_vals);
    free(st->percpu);
    memset(st, 0, sizeof(*st));
}
