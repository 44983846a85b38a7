/* cgroup v2 writers (unified hosts, and the v2 half of hybrid hosts):
 * controller delegation through cgroup.subtree_control, linux.resources ->
 * memory.max/low/swap.max, pids.max, cpu.weight/max/max.burst/idle, cpuset,
 * io.weight/io.max, hugetlb.<size>.max, rdma.max and the unified map; and
 * cgroup.freeze. (Documentation/admin-guide/cgroup-v2.rst) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_internal.h"
#include "../../util/cleanup.h"
#include "../../util/log.h"
#include "../../util/strutil.h"

static int enable_in(const char *dir, const char *ctrl, bool required, const char *field,
                     struct brig_error **err)
{
    autofree char *cur = NULL;
    if (cg_read(dir, "cgroup.subtree_control", &cur, err) < 0) return -1;
    if (cg_list_has(cur, ctrl)) return 0;
    autoerr struct brig_error *e = NULL;
    if (cg_writef(dir, "cgroup.subtree_control", NULL, &e, "+%s", ctrl) == 0) return 0;
    if (!required) {
        brig_debug("cgroup: cannot enable %s in %s: %s", ctrl, dir, e->msg);
        return 0;
    }
    /* EBUSY: the ancestor has processes of its own ("no internal processes"). */
    return brig_failx(err, "%s: cannot enable the %s controller in %s/cgroup.subtree_control: "
                      "%s%s", field, ctrl, dir, e->msg,
                      e->errnum == EBUSY ? " (that cgroup has processes of its own)" : "");
}

/* The controllers the plan put on v2. The device filter is an eBPF program,
 * not a controller: nothing to enable for it. */
static int enable_planned(const char *dir, const struct cg_plan *p, struct brig_error **err)
{
    for (int c = 0; c < CG_CTRL_COUNT; c++) {
        if (p->where[c] != CG_V2 || cg_ctrl_v2_name(c) == NULL) continue;
        TRY(enable_in(dir, cg_ctrl_v2_name(c), true, p->field[c], err));
    }
    return 0;
}

/* Append " +name" to out (capacity cap) unless cur has name or out has it. */
static void add_missing(char *out, size_t cap, const char *cur, const char *name)
{
    char plus[64];
    snprintf(plus, sizeof(plus), "+%s", name);
    if (cg_list_has(cur, name) || cg_list_has(out, plus)) return;
    size_t n = strlen(out);
    snprintf(out + n, cap - n, "%s%s", n > 0 ? " " : "", plus);
}

/* "+a +b" of the controllers the plan needs and the available ones that
 * cur (the level's cgroup.subtree_control) does not have yet; "" if none. */
static char *missing_controllers(const char *cur, const struct cg_plan *p, const char *available)
{
    size_t cap = 16 + 65 * (CG_CTRL_COUNT + (available != NULL ? strlen(available) : 0));
    char *out = brig_calloc(1, cap);
    for (int c = 0; c < CG_CTRL_COUNT; c++)
        if (p->where[c] == CG_V2 && cg_ctrl_v2_name(c) != NULL)
            add_missing(out, cap, cur, cg_ctrl_v2_name(c));
    autofree char *copy = brig_strdup(available != NULL ? available : "");
    char *save = NULL;
    for (char *t = strtok_r(copy, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
        add_missing(out, cap, cur, t);
    return out;
}

/* One ancestor: the controllers the plan needs (fail closed), then, best
 * effort, every other available one (for later update/stats). Usually one
 * read and one write: the kernel applies the tokens of one write to
 * cgroup.subtree_control all or none, so when it refuses them together
 * they are enabled one by one, which names the one that fails. */
static int enable_level(const char *dir, const struct cg_plan *p, const char *available,
                        struct brig_error **err)
{
    autofree char *cur = NULL;
    if (cg_read(dir, "cgroup.subtree_control", &cur, err) < 0) return -1;
    autofree char *want = missing_controllers(cur, p, available);
    if (want[0] == '\0') return 0;
    autoerr struct brig_error *e = NULL;
    if (cg_write(dir, "cgroup.subtree_control", NULL, want, &e) == 0) return 0;
    brig_debug("cgroup: \"%s\" refused in %s (%s): one by one", want, dir, e->msg);
    TRY(enable_planned(dir, p, err));
    if (available == NULL) return 0;
    autofree char *copy = brig_strdup(available);
    char *save = NULL;
    for (char *t = strtok_r(copy, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
        TRY(enable_in(dir, t, false, NULL, err));
    return 0;
}

int cgv2_enable_controllers(const char *mnt, const char *leaf, const char *available,
                            const struct cg_plan *p, struct brig_error **err)
{
    size_t ml = strlen(mnt);
    autofree char *dir = brig_strdup(mnt);
    const char *rest = leaf + ml;
    /* Walk mnt, mnt/a, mnt/a/b ... up to the leaf's parent. */
    for (;;) {
        while (*rest == '/') rest++;
        const char *next = strchr(rest, '/');
        if (next == NULL) break;   /* rest is the leaf's own name */
        TRY(enable_level(dir, p, available, err));
        char *nd = brig_asprintf("%s/%.*s", dir, (int)(next - rest), rest);
        free(dir);
        dir = nd;
        rest = next;
    }
    /* The leaf's parent was the last one: enable there too. */
    return enable_level(dir, p, available, err);
}

static void fmt_max(int64_t v, char *buf, size_t len)
{
    if (v < 0) snprintf(buf, len, "max");
    else snprintf(buf, len, "%lld", (long long)v);
}

static int v2_memory(const char *d, const struct brig_resources *r, struct brig_error **err)
{
    char v[32];
    int64_t sw = 0;
    bool sw_set = false;
    TRY(cg_swap_to_v2(&r->memory.swap, r->memory.limit.set ? r->memory.limit.v : 0, &sw,
                      &sw_set, err));
    if (sw_set) {
        if (!cg_file_exists(d, "memory.swap.max")) {
            if (sw != -1)
                return brig_failx(err, "linux.resources.memory.swap: swap accounting is not "
                                  "available (%s/memory.swap.max does not exist)", d);
        } else {
            fmt_max(sw, v, sizeof(v));
            TRY(cg_write(d, "memory.swap.max", "linux.resources.memory.swap", v, err));
        }
    }
    if (r->memory.limit.set && r->memory.limit.v != 0) {
        fmt_max(r->memory.limit.v, v, sizeof(v));
        TRY(cg_write(d, "memory.max", "linux.resources.memory.limit", v, err));
    }
    if (r->memory.reservation.set && r->memory.reservation.v != 0) {
        fmt_max(r->memory.reservation.v, v, sizeof(v));
        TRY(cg_write(d, "memory.low", "linux.resources.memory.reservation", v, err));
    }
    return 0;
}

static int v2_cpu(const char *d, const struct brig_resources *r, struct brig_error **err)
{
    if (r->cpu.shares.set && r->cpu.shares.v != 0)
        TRY(cg_writef(d, "cpu.weight", "linux.resources.cpu.shares", err, "%llu",
                      (unsigned long long)cg_shares_to_weight(r->cpu.shares.v)));
    bool quota = r->cpu.quota.set && r->cpu.quota.v != 0;
    bool period = r->cpu.period.set && r->cpu.period.v != 0;
    if (quota || period) {
        /* "max" or "<quota>"; "<quota> <period>" when a period is given. */
        char q[32];
        fmt_max(quota ? r->cpu.quota.v : -1, q, sizeof(q));
        if (period)
            TRY(cg_writef(d, "cpu.max", "linux.resources.cpu.quota", err, "%s %llu", q,
                          (unsigned long long)r->cpu.period.v));
        else
            TRY(cg_write(d, "cpu.max", "linux.resources.cpu.quota", q, err));
    }
    if (r->cpu.burst.set) {
        if (!cg_file_exists(d, "cpu.max.burst"))
            return brig_failx(err, "linux.resources.cpu.burst: not supported by this kernel");
        TRY(cg_writef(d, "cpu.max.burst", "linux.resources.cpu.burst", err, "%llu",
                      (unsigned long long)r->cpu.burst.v));
    }
    if (r->cpu.idle.set) {
        if (!cg_file_exists(d, "cpu.idle"))
            return brig_failx(err, "linux.resources.cpu.idle: not supported by this kernel");
        TRY(cg_writef(d, "cpu.idle", "linux.resources.cpu.idle", err, "%lld",
                      (long long)r->cpu.idle.v));
    }
    return 0;
}

static int v2_io(const char *d, const struct brig_resources *r, struct brig_error **err)
{
    /* With BFQ, io.bfq.weight takes the v1 range as is; io.weight needs the
     * 1..10000 conversion (as runc). */
    bool bfq = cg_file_exists(d, "io.bfq.weight");
    const char *wf = bfq ? "io.bfq.weight" : "io.weight";
    if (r->block_io.has_weight && r->block_io.weight != 0) {
        if (!cg_file_exists(d, wf))
            return brig_failx(err, "linux.resources.blockIO.weight: no proportional-weight I/O "
                              "control (neither io.bfq.weight nor io.weight exists in %s)", d);
        TRY(cg_writef(d, wf, "linux.resources.blockIO.weight", err, "%llu",
                      (unsigned long long)(bfq ? r->block_io.weight
                                               : cg_blkio_to_io_weight(r->block_io.weight))));
    }
    for (size_t i = 0; i < r->block_io.n_weight_devices; i++) {
        const struct brig_weight_device *w = &r->block_io.weight_devices[i];
        char field[80];
        snprintf(field, sizeof(field), "linux.resources.blockIO.weightDevice[%zu]", i);
        if (!w->has_weight) continue;
        if (!cg_file_exists(d, wf))
            return brig_failx(err, "%s: no proportional-weight I/O control in %s", field, d);
        TRY(cg_writef(d, wf, field, err, "%lld:%lld %llu", (long long)w->major, (long long)w->minor,
                      (unsigned long long)(bfq ? w->weight : cg_blkio_to_io_weight(w->weight))));
    }
    static const char *const keys[4] = { "rbps", "wbps", "riops", "wiops" };
    struct cg_throttle_list th[4];
    cg_throttle_lists(r, th);
    for (size_t k = 0; k < 4; k++) {
        for (size_t i = 0; i < th[k].n; i++) {
            const struct brig_throttle_device *t = &th[k].dev[i];
            char field[96];
            snprintf(field, sizeof(field), "linux.resources.blockIO.%s[%zu]", th[k].name, i);
            TRY(cg_writef(d, "io.max", field, err, "%lld:%lld %s=%llu", (long long)t->major,
                          (long long)t->minor, keys[k], (unsigned long long)t->rate));
        }
    }
    return 0;
}

static int v2_unified(const char *d, const struct brig_resources *r, struct brig_error **err)
{
    for (size_t i = 0; i < r->n_unified; i++) {
        const char *k = r->unified[i].key;
        char field[300];
        snprintf(field, sizeof(field), "linux.resources.unified.%s", k);
        /* cg_plan_make checked the key's form; the file must exist now that
         * the controllers are enabled. */
        if (!cg_file_exists(d, k))
            return brig_failx(err, "%s: no such file in the container's cgroup %s", field, d);
        TRY(cg_write(d, k, field, r->unified[i].value ? r->unified[i].value : "", err));
    }
    return 0;
}

int cgv2_apply(const struct brig_cgroup *cg, const struct cg_plan *p,
               const struct brig_resources *r, struct brig_error **err)
{
    const struct cg_dir *dd = cg_dir_v2(cg);
    if (dd == NULL) return 0;
    const char *d = dd->path;
    if (p->where[CG_DEVICES] == CG_V2) TRY(cgv2_devices_apply(d, r, err));
    if (r == NULL || !r->present) return 0;
    if (p->where[CG_MEMORY] == CG_V2) TRY(v2_memory(d, r, err));
    if (p->where[CG_PIDS] == CG_V2 && r->pids.limit.v > 0)
        TRY(cg_writef(d, "pids.max", "linux.resources.pids.limit", err, "%lld",
                      (long long)r->pids.limit.v));
    if (p->where[CG_CPU] == CG_V2) TRY(v2_cpu(d, r, err));
    if (p->where[CG_CPUSET] == CG_V2) {
        if (r->cpu.cpus && *r->cpu.cpus)
            TRY(cg_write(d, "cpuset.cpus", "linux.resources.cpu.cpus", r->cpu.cpus, err));
        if (r->cpu.mems && *r->cpu.mems)
            TRY(cg_write(d, "cpuset.mems", "linux.resources.cpu.mems", r->cpu.mems, err));
    }
    if (p->where[CG_IO] == CG_V2) TRY(v2_io(d, r, err));
    if (p->where[CG_HUGETLB] == CG_V2) TRY(cg_hugepage_write(d, r, "max", err));
    if (p->where[CG_RDMA] == CG_V2) {
        for (size_t i = 0; i < r->n_rdma; i++) {
            const struct brig_rdma_limit *l = &r->rdma[i];
            char field[48], hh[40] = "", ho[40] = "";
            snprintf(field, sizeof(field), "linux.resources.rdma[%zu]", i);
            if (l->has_hca_handles) snprintf(hh, sizeof(hh), " hca_handle=%u", l->hca_handles);
            if (l->has_hca_objects) snprintf(ho, sizeof(ho), " hca_object=%u", l->hca_objects);
            TRY(cg_writef(d, "rdma.max", field, err, "%s%s%s", l->device, hh, ho));
        }
    }
    return v2_unified(d, r, err);
}

bool cgv2_frozen(const char *dir)
{
    autofree char *s = NULL;
    if (cg_read(dir, "cgroup.events", &s, NULL) < 0) return false;
    return strstr(s, "frozen 1") != NULL;
}

int cgv2_freeze(const char *dir, bool freeze, struct brig_error **err)
{
    /* The write only starts freezing: cgroup.events says when it is done. */
    if (!freeze) return cg_write(dir, "cgroup.freeze", NULL, "0", err);
    return cg_freeze_wait(dir, "cgroup.freeze", "1", "0", cgv2_frozen, err);
}
