/* cgroup v1 writers (legacy hosts, and the v1 half of hybrid hosts):
 * linux.resources -> memory.*, pids.max, cpu.*, cpuset.*, blkio.*, hugetlb.*,
 * rdma.max, net_cls/net_prio and the devices allowlist. Only controllers the
 * plan put on v1 are written here. A missing file is a missing feature of
 * this kernel: fail naming the field instead of skipping it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_internal.h"
#include "../../util/cleanup.h"
#include "../../util/log.h"
#include "../../util/strutil.h"

static int need_file(const char *dir, const char *file, const char *field, struct brig_error **err)
{
    if (cg_file_exists(dir, file)) return 0;
    return brig_failx(err, "%s: not supported by this kernel (%s/%s does not exist)", field, dir,
                      file);
}

/* memory.limit_in_bytes reads this (PAGE_COUNTER_MAX pages) or more when
 * unlimited; anything at or above 2^62 is taken as unlimited. */
#define V1_MEMORY_UNLIMITED (1ULL << 62)

/* Swap 0 is "no swap": memory+swap capped at the memory limit, the one
 * given or (update) the cgroup's current one. memsw cannot cap swap alone:
 * without a memory limit it is refused, not left unlimited. */
static int v1_no_swap(const char *d, int64_t limit, int64_t *swap, struct brig_error **err)
{
    uint64_t cur = 0;
    if (limit > 0) {
        *swap = limit;
        return 0;
    }
    autofree char *text = NULL;
    if (limit == 0 && cg_read(d, "memory.limit_in_bytes", &text, NULL) == 0) {
        text[strcspn(text, "\n")] = '\0';
        if (brig_parse_u64(text, &cur) < 0) cur = 0;
    }
    if (cur == 0 || cur >= V1_MEMORY_UNLIMITED)
        return brig_failx(err, "linux.resources.memory.swap: 0 (no swap) needs "
                          "linux.resources.memory.limit on cgroup v1 (%s/memory.memsw."
                          "limit_in_bytes caps memory plus swap)", d);
    *swap = (int64_t)cur;
    return 0;
}

static int v1_memory(const char *d, const struct brig_resources *r, struct brig_error **err)
{
    int64_t limit = r->memory.limit.set ? r->memory.limit.v : 0;
    int64_t swap = r->memory.swap.set ? r->memory.swap.v : 0;
    if (r->memory.swap.set && swap == 0) TRY(v1_no_swap(d, limit, &swap, err));
    /* As runc: an unlimited memory with no explicit swap means unlimited swap. */
    if (limit == -1 && swap == 0) swap = -1;
    /* looked at only when a swap value is to be written */
    bool have_memsw = swap != 0 && cg_file_exists(d, "memory.memsw.limit_in_bytes");
    if (swap > 0 && !have_memsw)
        return brig_failx(err, "linux.resources.memory.swap: swap accounting is not enabled "
                          "(%s/memory.memsw.limit_in_bytes does not exist)", d);
    if (swap == -1 && !have_memsw) swap = 0;   /* unlimited is what we have */
    const char *F = "linux.resources.memory.limit", *S = "linux.resources.memory.swap";
    if (limit != 0 && swap != 0) {
        /* The kernel wants memsw >= limit at every moment: order the two
         * writes so the pair is valid in between (matters for update). */
        autofree char *cur = NULL;
        uint64_t curv = 0;
        if (cg_read(d, "memory.limit_in_bytes", &cur, NULL) == 0) {
            cur[strcspn(cur, "\n")] = '\0';
            brig_parse_u64(cur, &curv);
        }
        if (swap == -1 || curv < (uint64_t)swap) {
            TRY(cg_writef(d, "memory.memsw.limit_in_bytes", S, err, "%lld", (long long)swap));
            TRY(cg_writef(d, "memory.limit_in_bytes", F, err, "%lld", (long long)limit));
        } else {
            TRY(cg_writef(d, "memory.limit_in_bytes", F, err, "%lld", (long long)limit));
            TRY(cg_writef(d, "memory.memsw.limit_in_bytes", S, err, "%lld", (long long)swap));
        }
    } else if (limit != 0) {
        TRY(cg_writef(d, "memory.limit_in_bytes", F, err, "%lld", (long long)limit));
    } else if (swap != 0) {
        TRY(cg_writef(d, "memory.memsw.limit_in_bytes", S, err, "%lld", (long long)swap));
    }
    if (r->memory.reservation.set && r->memory.reservation.v != 0)
        TRY(cg_writef(d, "memory.soft_limit_in_bytes", "linux.resources.memory.reservation", err,
                      "%lld", (long long)r->memory.reservation.v));
    if (r->memory.kernel.set && r->memory.kernel.v != 0) {
        TRY(need_file(d, "memory.kmem.limit_in_bytes", "linux.resources.memory.kernel", err));
        TRY(cg_writef(d, "memory.kmem.limit_in_bytes", "linux.resources.memory.kernel", err,
                      "%lld", (long long)r->memory.kernel.v));
    }
    if (r->memory.kernel_tcp.set && r->memory.kernel_tcp.v != 0) {
        TRY(need_file(d, "memory.kmem.tcp.limit_in_bytes", "linux.resources.memory.kernelTCP", err));
        TRY(cg_writef(d, "memory.kmem.tcp.limit_in_bytes", "linux.resources.memory.kernelTCP",
                      err, "%lld", (long long)r->memory.kernel_tcp.v));
    }
    if (r->memory.swappiness.set) {
        TRY(need_file(d, "memory.swappiness", "linux.resources.memory.swappiness", err));
        TRY(cg_writef(d, "memory.swappiness", "linux.resources.memory.swappiness", err, "%llu",
                      (unsigned long long)r->memory.swappiness.v));
    }
    if (r->memory.has_disable_oom_killer && r->memory.disable_oom_killer)
        TRY(cg_write(d, "memory.oom_control", "linux.resources.memory.disableOOMKiller", "1", err));
    return 0;
}

/* dir without its last n components */
static char *cpuset_ancestor(const char *dir, unsigned n);

/* With real-time group scheduling a new cgroup has no real-time time
 * (cpu.rt_runtime_us 0), and a child's budget must fit in its parent's:
 * the levels above the container's that this create made get the same
 * period and runtime, top-down, before the container's own. A level that
 * was there already is not ours to change: if its budget is too small the
 * kernel's EINVAL is explained, naming it. */
static int v1_rt_parents(const struct cg_dir *dd, const struct brig_resources *r, struct brig_error **err)
{
    const char *F = "linux.resources.cpu.realtimeRuntime";
    for (unsigned level = dd->created > 0 ? dd->created - 1 : 0; level > 0; level--) {
        autofree char *dir = cpuset_ancestor(dd->path, level);
        if (r->cpu.realtime_period.set && r->cpu.realtime_period.v != 0)
            TRY(cg_writef(dir, "cpu.rt_period_us", "linux.resources.cpu.realtimePeriod", err, "%llu",
                          (unsigned long long)r->cpu.realtime_period.v));
        TRY(cg_writef(dir, "cpu.rt_runtime_us", F, err, "%lld", (long long)r->cpu.realtime_runtime.v));
    }
    return 0;
}

static int v1_rt_runtime(const struct cg_dir *dd, const struct brig_resources *r, struct brig_error **err)
{
    const char *F = "linux.resources.cpu.realtimeRuntime";
    TRY(need_file(dd->path, "cpu.rt_runtime_us", F, err));
    TRY(v1_rt_parents(dd, r, err));
    autoerr struct brig_error *e = NULL;
    if (cg_writef(dd->path, "cpu.rt_runtime_us", F, &e, "%lld", (long long)r->cpu.realtime_runtime.v) == 0)
        return 0;
    if (e->errnum != EINVAL) return brig_failx(err, "%s", e->msg);
    /* the first level brig did not make */
    autofree char *parent = cpuset_ancestor(dd->path, dd->created > 0 ? dd->created : 1);
    char have[32] = "?";
    cg_read_value(parent, "cpu.rt_runtime_us", have, sizeof(have), NULL);
    return brig_failx(err, "%s: %lld us is more than the parent cgroup %s can give (its cpu.rt_runtime_us "
                      "is %s, shared by its children): give it a real-time budget, or ask for less",
                      F, (long long)r->cpu.realtime_runtime.v, parent, have);
}

static int v1_cpu(const struct cg_dir *dd, const struct brig_resources *r, struct brig_error **err)
{
    const char *d = dd->path;
    if (r->cpu.shares.set && r->cpu.shares.v != 0)
        TRY(cg_writef(d, "cpu.shares", "linux.resources.cpu.shares", err, "%llu",
                      (unsigned long long)r->cpu.shares.v));
    /* Period before quota: a quota is checked against the current period. */
    if (r->cpu.period.set && r->cpu.period.v != 0)
        TRY(cg_writef(d, "cpu.cfs_period_us", "linux.resources.cpu.period", err, "%llu",
                      (unsigned long long)r->cpu.period.v));
    if (r->cpu.quota.set && r->cpu.quota.v != 0)
        TRY(cg_writef(d, "cpu.cfs_quota_us", "linux.resources.cpu.quota", err, "%lld",
                      (long long)r->cpu.quota.v));
    if (r->cpu.burst.set) {
        TRY(need_file(d, "cpu.cfs_burst_us", "linux.resources.cpu.burst", err));
        TRY(cg_writef(d, "cpu.cfs_burst_us", "linux.resources.cpu.burst", err, "%llu",
                      (unsigned long long)r->cpu.burst.v));
    }
    if (r->cpu.realtime_period.set && r->cpu.realtime_period.v != 0) {
        TRY(need_file(d, "cpu.rt_period_us", "linux.resources.cpu.realtimePeriod", err));
        TRY(cg_writef(d, "cpu.rt_period_us", "linux.resources.cpu.realtimePeriod", err, "%llu",
                      (unsigned long long)r->cpu.realtime_period.v));
    }
    if (r->cpu.realtime_runtime.set && r->cpu.realtime_runtime.v != 0) TRY(v1_rt_runtime(dd, r, err));
    if (r->cpu.idle.set) {
        TRY(need_file(d, "cpu.idle", "linux.resources.cpu.idle", err));
        TRY(cg_writef(d, "cpu.idle", "linux.resources.cpu.idle", err, "%lld",
                      (long long)r->cpu.idle.v));
    }
    return 0;
}

static int v1_blkio(const char *d, const struct brig_resources *r, struct brig_error **err)
{
    const char *F = "linux.resources.blockIO.weight";
    /* CFQ is gone; with BFQ the file is blkio.bfq.weight. */
    const char *wfile = cg_file_exists(d, "blkio.weight") ? "blkio.weight" : "blkio.bfq.weight";
    const char *wdfile = cg_file_exists(d, "blkio.weight_device") ? "blkio.weight_device"
                                                                   : "blkio.bfq.weight_device";
    if (r->block_io.has_weight && r->block_io.weight != 0) {
        if (!cg_file_exists(d, wfile))
            return brig_failx(err, "%s: no proportional-weight I/O scheduler (neither "
                              "blkio.weight nor blkio.bfq.weight exists in %s)", F, d);
        TRY(cg_writef(d, wfile, F, err, "%u", r->block_io.weight));
    }
    if (r->block_io.has_leaf_weight && r->block_io.leaf_weight != 0) {
        TRY(need_file(d, "blkio.leaf_weight", "linux.resources.blockIO.leafWeight", err));
        TRY(cg_writef(d, "blkio.leaf_weight", "linux.resources.blockIO.leafWeight", err, "%u",
                      r->block_io.leaf_weight));
    }
    for (size_t i = 0; i < r->block_io.n_weight_devices; i++) {
        const struct brig_weight_device *w = &r->block_io.weight_devices[i];
        char field[80];
        snprintf(field, sizeof(field), "linux.resources.blockIO.weightDevice[%zu]", i);
        if (w->has_weight) {
            TRY(need_file(d, wdfile, field, err));
            TRY(cg_writef(d, wdfile, field, err, "%lld:%lld %u", (long long)w->major,
                          (long long)w->minor, w->weight));
        }
        if (w->has_leaf_weight) {
            TRY(need_file(d, "blkio.leaf_weight_device", field, err));
            TRY(cg_writef(d, "blkio.leaf_weight_device", field, err, "%lld:%lld %u",
                          (long long)w->major, (long long)w->minor, w->leaf_weight));
        }
    }
    static const char *const files[4] = {
        "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
        "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device",
    };
    struct cg_throttle_list th[4];
    cg_throttle_lists(r, th);
    for (size_t k = 0; k < 4; k++) {
        for (size_t i = 0; i < th[k].n; i++) {
            const struct brig_throttle_device *t = &th[k].dev[i];
            char field[96];
            snprintf(field, sizeof(field), "linux.resources.blockIO.%s[%zu]", th[k].name, i);
            TRY(need_file(d, files[k], field, err));
            TRY(cg_writef(d, files[k], field, err, "%lld:%lld %llu", (long long)t->major,
                          (long long)t->minor, (unsigned long long)t->rate));
        }
    }
    return 0;
}

/* dir without its last n components */
static char *cpuset_ancestor(const char *dir, unsigned n)
{
    char *base = brig_strdup(dir);
    for (unsigned up = 0; up < n; up++) {
        char *s = strrchr(base, '/');
        if (s == NULL || s == base) break;
        *s = '\0';
    }
    return base;
}

/* Fill one file (cpuset.cpus or mems) of the levels below base down to the
 * leaf, from the nearest ancestor (base or above) that has a value. */
static int cpuset_fill(const struct cg_dir *d, unsigned created, const char *file,
                       struct brig_error **err)
{
    /* a cpu list is at most a few KB even on the largest machines */
    autofree char *val = brig_calloc(1, 16384);
    unsigned up = created;
    for (;; up++) {
        autofree char *base = cpuset_ancestor(d->path, up);
        TRY(cg_read_value(base, file, val, 16384, err));
        if (*val != '\0') break;
        /* Empty: a parent another create made a moment ago and has not
         * filled yet (a task cannot join it or anything below it: ENOSPC).
         * The root of the hierarchy always has a value (above it the
         * read fails). */
    }
    /* Top-down, so each level is a subset of its parent when written. Two
     * creates filling the same shared level write the same value. */
    for (unsigned level = up; level-- > 0;) {
        autofree char *dir = cpuset_ancestor(d->path, level);
        TRY(cg_write(dir, file, NULL, val, err));
    }
    return 0;
}

int cgv1_cpuset_init(const struct cg_dir *d, struct brig_error **err)
{
    /* A task can join a cpuset only once it has cpus and mems, and a fresh
     * directory starts empty (or, under cgroup.clone_children, with its
     * parent's values). Each level brig made gets the values of the nearest
     * level it did not make, read once, top-down: what copying each
     * parent's in turn gave, without reading every level back. A level it
     * did not make may be empty too: a parent made at the same moment by a
     * create racing this one, found existing here (EEXIST) before that
     * create filled it. Then the levels are filled from the nearest
     * ancestor that has values: the same values the other create writes. */
    if (d->created == 0) return 0;
    static const char *const files[] = {"cpuset.cpus", "cpuset.mems"};
    for (size_t i = 0; i < 2; i++) TRY(cpuset_fill(d, d->created, files[i], err));
    return 0;
}

static const char *const default_devices[] = {
    /* runc's/crun's default allowlist: mknod of anything (opening it is a
     * separate permission), and the devices every container expects; not
     * runc's c 5:1: the host's console, which an image's own node would
     * open (the container's /dev/console is its pty, 136:N). */
    "c *:* m", "b *:* m",
    "c 1:3 rwm",    /* null */
    "c 1:5 rwm",    /* zero */
    "c 1:7 rwm",    /* full */
    "c 1:8 rwm",    /* random */
    "c 1:9 rwm",    /* urandom */
    "c 5:0 rwm",    /* tty */
    "c 5:2 rwm",    /* ptmx */
    "c 136:* rwm",  /* pts/N */
};

static void dev_rule_text(const struct brig_device_rule *d, char type, char *buf, size_t len)
{
    char maj[24], min[24];
    if (d->major < 0) snprintf(maj, sizeof(maj), "*");
    else snprintf(maj, sizeof(maj), "%lld", (long long)d->major);
    if (d->minor < 0) snprintf(min, sizeof(min), "*");
    else snprintf(min, sizeof(min), "%lld", (long long)d->minor);
    snprintf(buf, len, "%c %s:%s %s", type, maj, min, d->access[0] ? d->access : "rwm");
}

static bool full_access(const char *a)
{
    return a[0] == '\0' || (strchr(a, 'r') && strchr(a, 'w') && strchr(a, 'm'));
}

/* devices.deny and devices.allow, each opened once for all the rules: the
 * kernel parses every write() on the fd as one rule, as it does one write
 * per open. last_deny_all: the previous write was "deny a", so another one
 * (the config's usual first rule, after our default deny) changes nothing. */
struct v1_devfiles {
    const char *dir;
    int fd[2];                  /* [0] devices.deny, [1] devices.allow */
    bool last_deny_all;
};

static int v1_dev_write(struct v1_devfiles *f, bool allow, const char *field, const char *value,
                        struct brig_error **err)
{
    bool deny_all = !allow && strcmp(value, "a") == 0;
    if (deny_all && f->last_deny_all) return 0;
    const char *file = allow ? "devices.allow" : "devices.deny";
    int *fd = &f->fd[allow];
    if (*fd < 0) {
        autofree char *path = brig_asprintf("%s/%s", f->dir, file);
        *fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (*fd < 0) return brig_fail(err, errno, "%s: write %s \"%s\"", field, path, value);
    }
    /* cgroupfs parses each write() as one value: never split it. */
    ssize_t w = write(*fd, value, strlen(value));
    if (w < 0 || (size_t)w != strlen(value))
        return brig_fail(err, w < 0 ? errno : EIO, "%s: write %s/%s \"%s\"", field, f->dir,
                         file, value);
    brig_debug("cgroup: %s/%s <- %s", f->dir, file, value);
    f->last_deny_all = deny_all;
    return 0;
}

/* The kernel reads any "a ..." line as "every device, rwm": only a rule that
 * really means that may use it; others are written as a c and a b line, so
 * "allow a 1:3 r" never grants more than it says. */
static int v1_device_rule(struct v1_devfiles *f, const struct brig_device_rule *r,
                          const char *field, struct brig_error **err)
{
    char type = r->type ? r->type : 'a';
    if (type != 'a' && type != 'c' && type != 'b')
        return brig_failx(err, "%s.type: \"%c\" is not one of a, c, b", field, type);
    char rule[96];
    if (type != 'a') {
        dev_rule_text(r, type, rule, sizeof(rule));
        return v1_dev_write(f, r->allow, field, rule, err);
    }
    if (r->major < 0 && r->minor < 0 && full_access(r->access))
        return v1_dev_write(f, r->allow, field, "a", err);
    dev_rule_text(r, 'c', rule, sizeof(rule));
    TRY(v1_dev_write(f, r->allow, field, rule, err));
    dev_rule_text(r, 'b', rule, sizeof(rule));
    return v1_dev_write(f, r->allow, field, rule, err);
}

static int v1_devices(const char *d, const struct brig_resources *r, struct brig_error **err)
{
    struct v1_devfiles f = {.dir = d, .fd = {-1, -1}};
    int ret = -1;
    /* Default deny, then the config's rules in order, then the defaults
     * (appended last, as runc does). */
    if (v1_dev_write(&f, false, "linux.resources.devices", "a", err) < 0) goto out;
    for (size_t i = 0; r != NULL && r->present && i < r->n_devices; i++) {
        char field[64];
        snprintf(field, sizeof(field), "linux.resources.devices[%zu]", i);
        if (v1_device_rule(&f, &r->devices[i], field, err) < 0) goto out;
    }
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(default_devices); i++)
        if (v1_dev_write(&f, true, "linux.resources.devices (default)", default_devices[i],
                         err) < 0)
            goto out;
    ret = 0;
out:
    for (int i = 0; i < 2; i++)
        if (f.fd[i] >= 0) close(f.fd[i]);
    return ret;
}

static int v1_other(const struct brig_cgroup *cg, const struct cg_plan *p,
                    const struct brig_resources *r, struct brig_error **err)
{
    const struct cg_dir *dd;
    if (p->where[CG_PIDS] == CG_V1 && (dd = cg_dir_v1(cg, "pids")) != NULL) {
        int64_t v = r->pids.limit.v;
        if (v > 0) TRY(cg_writef(dd->path, "pids.max", "linux.resources.pids.limit", err, "%lld",
                                 (long long)v));
    }
    if (p->where[CG_CPUSET] == CG_V1 && (dd = cg_dir_v1(cg, "cpuset")) != NULL) {
        if (r->cpu.cpus && *r->cpu.cpus)
            TRY(cg_write(dd->path, "cpuset.cpus", "linux.resources.cpu.cpus", r->cpu.cpus, err));
        if (r->cpu.mems && *r->cpu.mems)
            TRY(cg_write(dd->path, "cpuset.mems", "linux.resources.cpu.mems", r->cpu.mems, err));
    }
    if (p->where[CG_HUGETLB] == CG_V1 && (dd = cg_dir_v1(cg, "hugetlb")) != NULL)
        TRY(cg_hugepage_write(dd->path, r, "limit_in_bytes", err));
    if (p->where[CG_RDMA] == CG_V1 && (dd = cg_dir_v1(cg, "rdma")) != NULL) {
        for (size_t i = 0; i < r->n_rdma; i++) {
            const struct brig_rdma_limit *l = &r->rdma[i];
            char field[48], hh[40] = "", ho[40] = "";
            snprintf(field, sizeof(field), "linux.resources.rdma[%zu]", i);
            if (l->has_hca_handles) snprintf(hh, sizeof(hh), " hca_handle=%u", l->hca_handles);
            if (l->has_hca_objects) snprintf(ho, sizeof(ho), " hca_object=%u", l->hca_objects);
            TRY(cg_writef(dd->path, "rdma.max", field, err, "%s%s%s", l->device, hh, ho));
        }
    }
    if (p->where[CG_NET_CLS] == CG_V1 && (dd = cg_dir_v1(cg, "net_cls")) != NULL)
        TRY(cg_writef(dd->path, "net_cls.classid", "linux.resources.network.classID", err, "%u",
                      r->network.class_id));
    if (p->where[CG_NET_PRIO] == CG_V1 && (dd = cg_dir_v1(cg, "net_prio")) != NULL) {
        for (size_t i = 0; i < r->network.n_priorities; i++) {
            char field[64];
            snprintf(field, sizeof(field), "linux.resources.network.priorities[%zu]", i);
            TRY(cg_writef(dd->path, "net_prio.ifpriomap", field, err, "%s %u",
                          r->network.priorities[i].name, r->network.priorities[i].priority));
        }
    }
    return 0;
}

int cgv1_apply(const struct brig_cgroup *cg, const struct cg_plan *p,
               const struct brig_resources *r, struct brig_error **err)
{
    const struct cg_dir *dd;
    if ((dd = cg_dir_v1(cg, "cpuset")) != NULL) TRY(cgv1_cpuset_init(dd, err));
    if (p->where[CG_DEVICES] == CG_V1 && (dd = cg_dir_v1(cg, "devices")) != NULL)
        TRY(v1_devices(dd->path, r, err));
    if (r == NULL || !r->present) return 0;
    if (p->where[CG_MEMORY] == CG_V1 && (dd = cg_dir_v1(cg, "memory")) != NULL)
        TRY(v1_memory(dd->path, r, err));
    if (p->where[CG_CPU] == CG_V1 && (dd = cg_dir_v1(cg, "cpu")) != NULL)
        TRY(v1_cpu(dd, r, err));
    if (p->where[CG_IO] == CG_V1 && (dd = cg_dir_v1(cg, "blkio")) != NULL)
        TRY(v1_blkio(dd->path, r, err));
    return v1_other(cg, p, r, err);
}

bool cgv1_frozen(const char *dir)
{
    autofree char *s = NULL;
    if (cg_read(dir, "freezer.state", &s, NULL) < 0) return false;
    return strncmp(s, "FROZEN", 6) == 0;
}

int cgv1_freeze(const char *dir, bool freeze, struct brig_error **err)
{
    /* The state reads FREEZING until every task stopped (as runc waits). */
    if (!freeze) return cg_write(dir, "freezer.state", NULL, "THAWED", err);
    return cg_freeze_wait(dir, "freezer.state", "FROZEN", "THAWED", cgv1_frozen, err);
}
