/* Pure conversions between the OCI (cgroup v1 shaped) values and what the
 * kernel files take, with the same formulas as runc so a container gets the
 * same share of the machine under either runtime. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_internal.h"
#include "../../util/cleanup.h"
#include "../../util/strutil.h"

uint64_t cg_shares_to_weight(uint64_t shares)
{
    if (shares == 0) return 0;
    /* Clamp to the v1 kernel range first, so the result stays in 1..10000. */
    if (shares < 2) shares = 2;
    if (shares > 262144) shares = 262144;
    return 1 + ((shares - 2) * 9999) / 262142;
}

uint64_t cg_blkio_to_io_weight(uint64_t w)
{
    if (w == 0) return 0;
    if (w < 10) w = 10;
    if (w > 1000) w = 1000;
    return 1 + ((w - 10) * 9999) / 990;
}

/* runc's ConvertMemorySwapToCgroupV2Value, except for an explicit 0: runc
 * reads it as "not set" (unlimited swap on a fresh cgroup); here it is what
 * memory+swap = 0 can only mean, no swap, as on v1 (memsw = limit). */
int cg_swap_to_v2(const struct brig_opt_i64 *swap_opt, int64_t limit, int64_t *out, bool *set,
                  struct brig_error **err)
{
    int64_t swap = swap_opt->set ? swap_opt->v : 0;
    *set = true;
    if (swap_opt->set && swap == 0) {
        *out = 0;
        return 0;
    }
    if (limit == -1 && swap == 0) {
        /* "memory unlimited, swap not given" means both unlimited, as on v1. */
        *out = -1;
        return 0;
    }
    if (swap == -1) {
        *out = -1;
        return 0;
    }
    if (swap == 0) {
        *set = false;
        *out = 0;
        return 0;
    }
    if (swap < -1)
        return brig_failx(err, "linux.resources.memory.swap: invalid value %lld", (long long)swap);
    if (limit == 0 || limit == -1)
        return brig_failx(err, "linux.resources.memory.swap: cannot limit swap without "
                          "linux.resources.memory.limit");
    if (limit < 0)
        return brig_failx(err, "linux.resources.memory.limit: invalid value %lld", (long long)limit);
    if (swap < limit)
        return brig_failx(err, "linux.resources.memory.swap: memory+swap limit %lld must be >= "
                          "memory limit %lld", (long long)swap, (long long)limit);
    *out = swap - limit;
    return 0;
}

int cg_hugepage_parse(const char *s, uint64_t *kb)
{
    char *end = NULL;
    if (s == NULL || *s < '0' || *s > '9') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || v == 0) return -1;
    uint64_t mul;
    if (strcmp(end, "kB") == 0 || strcmp(end, "KB") == 0) mul = 1;
    else if (strcmp(end, "MB") == 0) mul = 1024;
    else if (strcmp(end, "GB") == 0) mul = 1024 * 1024;
    else return -1;
    if (v > UINT64_MAX / mul) return -1;
    *kb = v * mul;
    return 0;
}

/* Same format as the kernel's hugetlb_cgroup mem_fmt(). */
void cg_hugepage_name(uint64_t kb, char *buf, size_t len)
{
    if (kb >= 1024 * 1024) snprintf(buf, len, "%lluGB", (unsigned long long)(kb / (1024 * 1024)));
    else if (kb >= 1024) snprintf(buf, len, "%lluMB", (unsigned long long)(kb / 1024));
    else snprintf(buf, len, "%lluKB", (unsigned long long)kb);
}

int cg_hugepage_check(const char *field, const char *page_size, const uint64_t *sizes_kb,
                      size_t n_sizes, char *name, size_t len, struct brig_error **err)
{
    uint64_t kb = 0;
    if (cg_hugepage_parse(page_size, &kb) < 0)
        return brig_failx(err, "%s: \"%s\" is not a page size (expected e.g. \"2MB\")", field,
                          page_size ? page_size : "");
    for (size_t i = 0; i < n_sizes; i++) {
        if (sizes_kb[i] == kb) {
            cg_hugepage_name(kb, name, len);
            return 0;
        }
    }
    char have[256] = "";
    for (size_t i = 0; i < n_sizes; i++) {
        char one[32];
        cg_hugepage_name(sizes_kb[i], one, sizeof(one));
        size_t hl = strlen(have);
        snprintf(have + hl, sizeof(have) - hl, "%s%s", hl ? " " : "", one);
    }
    return brig_failx(err, "%s: %s is not a huge page size of this kernel (has: %s)", field,
                      page_size, n_sizes ? have : "none");
}

int cg_hugepage_sizes(uint64_t **sizes_kb, size_t *n, struct brig_error **err)
{
    *sizes_kb = NULL;
    *n = 0;
    DIR *d = opendir("/sys/kernel/mm/hugepages");
    if (d == NULL) {
        if (errno == ENOENT) return 0;   /* no hugetlbfs support: no sizes */
        return brig_fail(err, errno, "open /sys/kernel/mm/hugepages");
    }
    uint64_t *v = NULL;
    size_t cnt = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        unsigned long long kb;
        char tail[8];
        if (sscanf(e->d_name, "hugepages-%llu%7s", &kb, tail) != 2 || strcmp(tail, "kB") != 0)
            continue;
        uint64_t *nv = realloc(v, (cnt + 1) * sizeof(*nv));
        if (nv == NULL) abort();
        v = nv;
        v[cnt++] = kb;
    }
    closedir(d);
    *sizes_kb = v;
    *n = cnt;
    return 0;
}

void cg_throttle_lists(const struct brig_resources *r, struct cg_throttle_list out[4])
{
    out[0] = (struct cg_throttle_list){ "throttleReadBpsDevice", r->block_io.throttle_read_bps,
                                        r->block_io.n_throttle_read_bps };
    out[1] = (struct cg_throttle_list){ "throttleWriteBpsDevice", r->block_io.throttle_write_bps,
                                        r->block_io.n_throttle_write_bps };
    out[2] = (struct cg_throttle_list){ "throttleReadIOPSDevice", r->block_io.throttle_read_iops,
                                        r->block_io.n_throttle_read_iops };
    out[3] = (struct cg_throttle_list){ "throttleWriteIOPSDevice", r->block_io.throttle_write_iops,
                                        r->block_io.n_throttle_write_iops };
}

int cg_hugepage_write(const char *dir, const struct brig_resources *r, const char *suffix,
                      struct brig_error **err)
{
    autofree uint64_t *sizes = NULL;
    size_t n = 0;
    TRY(cg_hugepage_sizes(&sizes, &n, err));
    for (size_t i = 0; i < r->n_hugepage_limits; i++) {
        char field[64], name[32], file[64];
        snprintf(field, sizeof(field), "linux.resources.hugepageLimits[%zu]", i);
        TRY(cg_hugepage_check(field, r->hugepage_limits[i].page_size, sizes, n, name, sizeof(name), err));
        snprintf(file, sizeof(file), "hugetlb.%s.%s", name, suffix);
        TRY(cg_writef(dir, file, field, err, "%llu", (unsigned long long)r->hugepage_limits[i].limit));
    }
    return 0;
}
