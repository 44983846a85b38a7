/* Before any directory is made: decide which hierarchy enforces each
 * requested field of linux.resources, and refuse with the field's name what
 * nothing mounted can enforce (fail closed: never run with less isolation
 * than asked). v2 is preferred; on hybrid hosts a controller bound to a v1
 * hierarchy is used there. Value checks that need no kernel are done here
 * too, so bad input changes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_internal.h"
#include "../../util/cleanup.h"
#include "../../util/log.h"
#include "../../util/strutil.h"

static const char *const v1_names[CG_CTRL_COUNT] = {
    [CG_MEMORY] = "memory", [CG_PIDS] = "pids", [CG_CPU] = "cpu", [CG_CPUSET] = "cpuset",
    [CG_IO] = "blkio", [CG_HUGETLB] = "hugetlb", [CG_RDMA] = "rdma", [CG_NET_CLS] = "net_cls",
    [CG_NET_PRIO] = "net_prio", [CG_DEVICES] = "devices",
};
/* net_cls/net_prio have no v2 counterpart; v2 devices are an eBPF program. */
static const char *const v2_names[CG_CTRL_COUNT] = {
    [CG_MEMORY] = "memory", [CG_PIDS] = "pids", [CG_CPU] = "cpu", [CG_CPUSET] = "cpuset",
    [CG_IO] = "io", [CG_HUGETLB] = "hugetlb", [CG_RDMA] = "rdma",
};

const char *cg_ctrl_v1_name(enum cg_ctrl c) { return v1_names[c]; }
const char *cg_ctrl_v2_name(enum cg_ctrl c) { return v2_names[c]; }

static void need(struct cg_plan *p, enum cg_ctrl c, const char *field)
{
    if (p->field[c] == NULL) p->field[c] = field;
}

static void collect(const struct brig_resources *r, struct cg_plan *p)
{
    if (r->memory.limit.set && r->memory.limit.v != 0) need(p, CG_MEMORY, "linux.resources.memory.limit");
    if (r->memory.reservation.set && r->memory.reservation.v != 0)
        need(p, CG_MEMORY, "linux.resources.memory.reservation");
    /* 0 too: "no swap" is a limit to enforce */
    if (r->memory.swap.set) need(p, CG_MEMORY, "linux.resources.memory.swap");
    if (r->memory.kernel.set && r->memory.kernel.v != 0) need(p, CG_MEMORY, "linux.resources.memory.kernel");
    if (r->memory.kernel_tcp.set && r->memory.kernel_tcp.v != 0)
        need(p, CG_MEMORY, "linux.resources.memory.kernelTCP");
    if (r->memory.swappiness.set) need(p, CG_MEMORY, "linux.resources.memory.swappiness");
    if (r->memory.has_disable_oom_killer && r->memory.disable_oom_killer)
        need(p, CG_MEMORY, "linux.resources.memory.disableOOMKiller");
    if (r->pids.limit.set && r->pids.limit.v > 0) need(p, CG_PIDS, "linux.resources.pids.limit");
    if (r->cpu.shares.set && r->cpu.shares.v != 0) need(p, CG_CPU, "linux.resources.cpu.shares");
    if (r->cpu.quota.set && r->cpu.quota.v != 0) need(p, CG_CPU, "linux.resources.cpu.quota");
    if (r->cpu.period.set && r->cpu.period.v != 0) need(p, CG_CPU, "linux.resources.cpu.period");
    if (r->cpu.burst.set) need(p, CG_CPU, "linux.resources.cpu.burst");
    if (r->cpu.idle.set) need(p, CG_CPU, "linux.resources.cpu.idle");
    if (r->cpu.realtime_runtime.set && r->cpu.realtime_runtime.v != 0)
        need(p, CG_CPU, "linux.resources.cpu.realtimeRuntime");
    if (r->cpu.realtime_period.set && r->cpu.realtime_period.v != 0)
        need(p, CG_CPU, "linux.resources.cpu.realtimePeriod");
    if (r->cpu.cpus != NULL && *r->cpu.cpus) need(p, CG_CPUSET, "linux.resources.cpu.cpus");
    if (r->cpu.mems != NULL && *r->cpu.mems) need(p, CG_CPUSET, "linux.resources.cpu.mems");
    if (r->block_io.has_weight && r->block_io.weight != 0) need(p, CG_IO, "linux.resources.blockIO.weight");
    if (r->block_io.has_leaf_weight && r->block_io.leaf_weight != 0)
        need(p, CG_IO, "linux.resources.blockIO.leafWeight");
    if (r->block_io.n_weight_devices) need(p, CG_IO, "linux.resources.blockIO.weightDevice");
    if (r->block_io.n_throttle_read_bps) need(p, CG_IO, "linux.resources.blockIO.throttleReadBpsDevice");
    if (r->block_io.n_throttle_write_bps) need(p, CG_IO, "linux.resources.blockIO.throttleWriteBpsDevice");
    if (r->block_io.n_throttle_read_iops) need(p, CG_IO, "linux.resources.blockIO.throttleReadIOPSDevice");
    if (r->block_io.n_throttle_write_iops)
        need(p, CG_IO, "linux.resources.blockIO.throttleWriteIOPSDevice");
    if (r->n_hugepage_limits) need(p, CG_HUGETLB, "linux.resources.hugepageLimits");
    if (r->n_rdma) need(p, CG_RDMA, "linux.resources.rdma");
    if (r->network.has_class_id) need(p, CG_NET_CLS, "linux.resources.network.classID");
    if (r->network.n_priorities) need(p, CG_NET_PRIO, "linux.resources.network.priorities");
    if (r->n_devices) need(p, CG_DEVICES, "linux.resources.devices");
}

static int unavailable(const struct cg_layout *l, enum cg_ctrl c, const char *field,
                       struct brig_error **err)
{
    const struct cg_hier *v2 = cg_layout_v2(l);
    const char *has = v2 && v2->controllers && *v2->controllers ? v2->controllers : "none";
    if (c == CG_DEVICES)
        return brig_failx(err, "%s: no cgroup v1 devices hierarchy and no cgroup v2 mount to "
                          "attach a device filter to", field);
    if (v2_names[c] == NULL)
        return brig_failx(err, "%s: %s is a cgroup v1 controller and no cgroup v1 hierarchy "
                          "mounts it%s", field, v1_names[c], v2 ? " (not supported by cgroup v2)" : "");
    if (v2 == NULL)
        return brig_failx(err, "%s: %s controller not available (no cgroup v1 hierarchy mounts "
                          "it)", field, v1_names[c]);
    return brig_failx(err, "%s: %s controller not available (cgroup v2 at %s has: %s%s)", field,
                      v2_names[c], v2->mnt, has,
                      l->kind == CG_HYBRID ? "; no cgroup v1 hierarchy mounts it either" : "");
}

/* Fields that exist only in the cgroup v1 interface. */
static int check_v2_fields(const struct brig_resources *r, const struct cg_plan *p,
                           struct brig_error **err)
{
    if (p->where[CG_MEMORY] == CG_V2) {
        if (r->memory.has_disable_oom_killer && r->memory.disable_oom_killer)
            return brig_failx(err, "linux.resources.memory.disableOOMKiller: not supported by "
                              "cgroup v2 (the kernel OOM killer cannot be disabled there)");
        if (r->memory.kernel.set && r->memory.kernel.v != 0)
            return brig_failx(err, "linux.resources.memory.kernel: kernel memory limits are "
                              "deprecated and not supported by cgroup v2");
        if (r->memory.kernel_tcp.set && r->memory.kernel_tcp.v != 0)
            return brig_failx(err, "linux.resources.memory.kernelTCP: kernel TCP memory limits "
                              "are deprecated and not supported by cgroup v2");
        if (r->memory.swappiness.set)
            return brig_failx(err, "linux.resources.memory.swappiness: not supported by cgroup v2");
        int64_t sw;
        bool set;
        TRY(cg_swap_to_v2(&r->memory.swap, r->memory.limit.set ? r->memory.limit.v : 0, &sw,
                          &set, err));
    }
    if (p->where[CG_MEMORY] == CG_V1 && r->memory.swap.set && r->memory.swap.v == 0 &&
        r->memory.limit.set && r->memory.limit.v < 0)
        return brig_failx(err, "linux.resources.memory.swap: 0 (no swap) cannot be enforced with "
                          "an unlimited linux.resources.memory.limit on cgroup v1 "
                          "(memory.memsw.limit_in_bytes caps memory plus swap)");
    if (p->where[CG_CPU] == CG_V2) {
        if (r->cpu.realtime_runtime.set && r->cpu.realtime_runtime.v != 0)
            return brig_failx(err, "linux.resources.cpu.realtimeRuntime: not supported by cgroup v2");
        if (r->cpu.realtime_period.set && r->cpu.realtime_period.v != 0)
            return brig_failx(err, "linux.resources.cpu.realtimePeriod: not supported by cgroup v2");
    }
    if (p->where[CG_IO] == CG_V2) {
        if (r->block_io.has_leaf_weight && r->block_io.leaf_weight != 0)
            return brig_failx(err, "linux.resources.blockIO.leafWeight: not supported by cgroup v2");
        for (size_t i = 0; i < r->block_io.n_weight_devices; i++)
            if (r->block_io.weight_devices[i].has_leaf_weight)
                return brig_failx(err, "linux.resources.blockIO.weightDevice[%zu].leafWeight: "
                                  "not supported by cgroup v2", i);
    }
    return 0;
}

static int check_values(const struct brig_resources *r, struct brig_error **err)
{
    if (r->memory.swappiness.set && r->memory.swappiness.v > 100)
        return brig_failx(err, "linux.resources.memory.swappiness: %llu is out of range 0..100",
                          (unsigned long long)r->memory.swappiness.v);
    if (r->memory.swap.set && r->memory.swap.v > 0 && r->memory.limit.set &&
        r->memory.limit.v > 0 && r->memory.swap.v < r->memory.limit.v)
        return brig_failx(err, "linux.resources.memory.swap: memory+swap limit %lld must be >= "
                          "memory limit %lld", (long long)r->memory.swap.v,
                          (long long)r->memory.limit.v);
    if (r->n_hugepage_limits) {
        autofree uint64_t *sizes = NULL;
        size_t n = 0;
        TRY(cg_hugepage_sizes(&sizes, &n, err));
        for (size_t i = 0; i < r->n_hugepage_limits; i++) {
            char field[64], name[32];
            snprintf(field, sizeof(field), "linux.resources.hugepageLimits[%zu].pageSize", i);
            TRY(cg_hugepage_check(field, r->hugepage_limits[i].page_size, sizes, n, name,
                                  sizeof(name), err));
        }
    }
    return 0;
}

/* The unified map is cgroup v2 only: keys are file names of the container's
 * v2 cgroup, whose controller must be on the v2 hierarchy. */
static int check_unified(const struct cg_layout *l, const struct brig_resources *r,
                         struct brig_error **err)
{
    if (r->n_unified == 0) return 0;
    const struct cg_hier *v2 = cg_layout_v2(l);
    if (v2 == NULL)
        return brig_failx(err, "linux.resources.unified: needs cgroup v2 (this host mounts only "
                          "cgroup v1)");
    for (size_t i = 0; i < r->n_unified; i++) {
        const char *k = r->unified[i].key;
        const char *dot = k ? strchr(k, '.') : NULL;
        if (k == NULL || dot == NULL || dot == k || dot[1] == '\0' || strchr(k, '/') != NULL ||
            strstr(k, "..") != NULL)
            return brig_failx(err, "linux.resources.unified: invalid key \"%s\" (must name a "
                              "file of the container's cgroup)", k ? k : "");
        autofree char *ctrl = strndup(k, (size_t)(dot - k));
        if (ctrl == NULL) abort();
        if (strcmp(ctrl, "cgroup") == 0) {
            /* Only limits: placement, freezing and killing are brig's job. */
            if (strcmp(k, "cgroup.max.depth") != 0 && strcmp(k, "cgroup.max.descendants") != 0)
                return brig_failx(err, "linux.resources.unified.%s: this file is managed by "
                                  "brig and cannot be set", k);
            continue;
        }
        if (!cg_list_has(v2->controllers, ctrl))
            return brig_failx(err, "linux.resources.unified.%s: %s controller not available on "
                              "cgroup v2 at %s (has: %s)%s", k, ctrl, v2->mnt,
                              *v2->controllers ? v2->controllers : "none",
                              l->kind == CG_HYBRID ? "; the unified map cannot set cgroup v1 "
                              "controllers" : "");
    }
    return 0;
}

int cg_plan_make(const struct cg_layout *l, const struct brig_resources *r, struct cg_plan *p,
                 struct brig_error **err)
{
    *p = (struct cg_plan){0};
    const struct cg_hier *v2 = cg_layout_v2(l);
    if (r != NULL && r->present) collect(r, p);
    for (int c = 0; c < CG_CTRL_COUNT; c++) {
        if (c == CG_DEVICES) {
            /* Every container gets a device allowlist (runc's defaults)
             * even when the config lists no rules. */
            if (cg_layout_v1(l, "devices") != NULL) p->where[c] = CG_V1;
            else if (v2 != NULL) p->where[c] = CG_V2;   /* eBPF device filter */
            else if (p->field[c] != NULL) return unavailable(l, CG_DEVICES, p->field[c], err);
            continue;
        }
        if (p->field[c] == NULL) continue;
        if (v2 != NULL && v2_names[c] != NULL && cg_list_has(v2->controllers, v2_names[c]))
            p->where[c] = CG_V2;
        else if (cg_layout_v1(l, v1_names[c]) != NULL)
            p->where[c] = CG_V1;
        else
            return unavailable(l, (enum cg_ctrl)c, p->field[c], err);
        brig_debug("cgroup plan: %s via cgroup %s (%s)", v1_names[c],
                   p->where[c] == CG_V2 ? "v2" : "v1", p->field[c]);
    }
    if (r != NULL && r->present) {
        TRY(check_v2_fields(r, p, err));
        TRY(check_values(r, err));
        TRY(check_unified(l, r, err));
    }
    return 0;
}
