/* runc's cgroup commands: pause, resume, update (--resources FILE|- or the
 * individual flags) and events (--stats, --interval). Flags in, calls to
 * lifecycle/cgroup_ops.h out; the resources JSON goes to the config
 * module's parser, the same one config.json's linux.resources uses. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "../config/spec.h"
#include "../lifecycle/cgroup_ops.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strutil.h"

#define CG_POS_ARRAY(name) autofree char **name = brig_calloc((size_t)argc + 1, sizeof(char *))

static int cgcli_parse(const char *cmd, const char *args_syntax, const char *summary,
                       const struct cli_flag *flags, size_t n_flags, const bool *help, int argc,
                       char **argv, char **pos, int *npos, struct brig_error **err)
{
    if (cli_parse(flags, n_flags, argc, argv, false, NULL, pos, npos, err) < 0)
        return brig_wrap(err, "%s", cmd);
    if (*help) {
        cli_usage(cmd, args_syntax, summary, flags, n_flags);
        return 1;
    }
    if (*npos != 1)
        return brig_failx(err, "\"%s\" requires exactly 1 argument(s): %s", cmd, args_syntax);
    return 0;
}

static int cgcli_freeze(bool pause, const struct brig_globals *g, int argc, char **argv,
                        struct brig_error **err)
{
    bool help = false;
    const struct cli_flag flags[] = {
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    CG_POS_ARRAY(pos);
    int npos = 0;
    int r = cgcli_parse(pause ? "pause" : "resume", "CONTAINER_ID",
                        pause ? "Suspend every process of the container (cgroup freezer)."
                              : "Resume every process of a paused container.",
                        flags, BRIG_ARRAY_SIZE(flags), &help, argc, argv, pos, &npos, err);
    if (r != 0) return r < 0 ? -1 : 0;
    return pause ? container_pause(g, pos[0], err) : container_resume(g, pos[0], err);
}

int cmd_pause(const struct brig_globals *g, int argc, char **argv, int *status,
              struct brig_error **err)
{
    return cgcli_freeze(true, g, argc, argv, err);
}

int cmd_resume(const struct brig_globals *g, int argc, char **argv, int *status,
               struct brig_error **err)
{
    return cgcli_freeze(false, g, argc, argv, err);
}

/* Docker's RAMInBytes, as runc's --memory: "-1", "1024", "64k", "64M",
 * "1.5g", "64MB", "64MiB" (binary multiples, case-insensitive). */
static int cgcli_parse_bytes(const char *flag, const char *s, int64_t *out, struct brig_error **err)
{
    if (strcmp(s, "-1") == 0) {
        *out = -1;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || v < 0 || !isdigit((unsigned char)s[0]))
        return brig_failx(err, "--%s %s: expected a size such as 64M, 1g, 1048576 or -1", flag, s);
    static const char units[] = "bkmgtp";
    double mul = 1;
    if (*end != '\0') {
        const char *u = strchr(units, tolower((unsigned char)*end));
        if (u == NULL) goto bad;
        for (long i = 0; i < u - units; i++) mul *= 1024;
        end++;
        if (u != units && (strcasecmp(end, "b") == 0 || strcasecmp(end, "ib") == 0)) end += strlen(end);
        if (*end != '\0') goto bad;
    }
    v *= mul;
    if (v > 9.2e18) goto bad;
    *out = (int64_t)v;
    return 0;
bad:
    return brig_failx(err, "--%s %s: expected a size such as 64M, 1g, 1048576 or -1", flag, s);
}

/* Go's time.ParseDuration subset runc's --interval takes: "5s", "100ms",
 * "1m30s", "1.5s", "2h". */
static int cgcli_parse_duration_ms(const char *flag, const char *s, long *out, struct brig_error **err)
{
    static const struct { const char *u; double ms; } units[] = {
        {"ms", 1}, {"us", 0.001}, {"µs", 0.001}, {"ns", 0.000001}, {"s", 1000}, {"m", 60000},
        {"h", 3600000},
    };
    double total = 0;
    const char *p = s;
    if (*p == '\0') goto bad;
    while (*p != '\0') {
        char *end = NULL;
        if (!isdigit((unsigned char)*p) && *p != '.') goto bad;
        double v = strtod(p, &end);
        if (end == p) goto bad;
        size_t i;
        for (i = 0; i < BRIG_ARRAY_SIZE(units); i++)
            if (strncmp(end, units[i].u, strlen(units[i].u)) == 0) break;
        if (i == BRIG_ARRAY_SIZE(units)) goto bad;
        total += v * units[i].ms;
        p = end + strlen(units[i].u);
    }
    if (total < 1 || total > 86400000.0 * 365) goto bad;
    *out = (long)total;
    return 0;
bad:
    return brig_failx(err, "--%s %s: expected a duration such as 5s, 500ms or 1m (at least 1ms)",
                      flag, s);
}

static int cgcli_u64(const char *flag, const char *s, uint64_t *out, struct brig_error **err)
{
    if (brig_parse_u64(s, out) < 0)
        return brig_failx(err, "--%s %s: expected a non-negative integer", flag, s);
    return 0;
}

static int cgcli_i64(const char *flag, const char *s, int64_t *out, struct brig_error **err)
{
    if (brig_parse_i64(s, out) < 0) return brig_failx(err, "--%s %s: expected an integer", flag, s);
    return 0;
}

struct update_flags {
    const char *resources, *blkio_weight, *cpu_period, *cpu_quota, *cpu_share, *cpu_shares,
        *cpu_rt_period, *cpu_rt_runtime, *cpuset_cpus, *cpuset_mems, *kernel_memory,
        *kernel_memory_tcp, *memory, *memory_reservation, *memory_swap, *pids_limit, *cpu_idle,
        *l3_cache_schema, *mem_bw_schema;
};

static bool cgcli_any_flag(const struct update_flags *f)
{
    const char *const v[] = {f->blkio_weight, f->cpu_period, f->cpu_quota, f->cpu_share,
                             f->cpu_shares, f->cpu_rt_period, f->cpu_rt_runtime, f->cpuset_cpus,
                             f->cpuset_mems, f->kernel_memory, f->kernel_memory_tcp, f->memory,
                             f->memory_reservation, f->memory_swap, f->pids_limit, f->cpu_idle};
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(v); i++)
        if (v[i] != NULL) return true;
    return false;
}

/* The individual flags as a linux.resources with only those fields set. */
static int cgcli_flags_to_resources(const struct update_flags *f, struct brig_resources *r,
                                    struct brig_error **err)
{
    r->present = true;
    const struct { const char *v, *name; struct brig_opt_i64 *out; } bytes[] = {
        {f->memory, "memory", &r->memory.limit},
        {f->memory_reservation, "memory-reservation", &r->memory.reservation},
        {f->memory_swap, "memory-swap", &r->memory.swap},
        {f->kernel_memory, "kernel-memory", &r->memory.kernel},
        {f->kernel_memory_tcp, "kernel-memory-tcp", &r->memory.kernel_tcp},
    };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(bytes); i++) {
        if (bytes[i].v == NULL) continue;
        TRY(cgcli_parse_bytes(bytes[i].name, bytes[i].v, &bytes[i].out->v, err));
        bytes[i].out->set = true;
    }
    const char *shares = f->cpu_share != NULL ? f->cpu_share : f->cpu_shares;
    const struct { const char *v, *name; struct brig_opt_u64 *out; } u64s[] = {
        {shares, "cpu-share", &r->cpu.shares},
        {f->cpu_period, "cpu-period", &r->cpu.period},
        {f->cpu_rt_period, "cpu-rt-period", &r->cpu.realtime_period},
    };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(u64s); i++) {
        if (u64s[i].v == NULL) continue;
        TRY(cgcli_u64(u64s[i].name, u64s[i].v, &u64s[i].out->v, err));
        u64s[i].out->set = true;
    }
    const struct { const char *v, *name; struct brig_opt_i64 *out; } i64s[] = {
        {f->cpu_quota, "cpu-quota", &r->cpu.quota},
        {f->cpu_rt_runtime, "cpu-rt-runtime", &r->cpu.realtime_runtime},
        {f->pids_limit, "pids-limit", &r->pids.limit},
        {f->cpu_idle, "cpu-idle", &r->cpu.idle},
    };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(i64s); i++) {
        if (i64s[i].v == NULL) continue;
        TRY(cgcli_i64(i64s[i].name, i64s[i].v, &i64s[i].out->v, err));
        i64s[i].out->set = true;
    }
    /* runc: 0 leaves the pids limit alone, -1 (or below) lifts it. */
    if (r->pids.limit.set && r->pids.limit.v < 0) r->pids.limit.v = -1;
    if (f->blkio_weight != NULL) {
        uint64_t w;
        TRY(cgcli_u64("blkio-weight", f->blkio_weight, &w, err));
        if (w != 0 && (w < 10 || w > 1000))
            return brig_failx(err, "--blkio-weight %s: must be between 10 and 1000", f->blkio_weight);
        r->block_io.has_weight = true;
        r->block_io.weight = (uint16_t)w;
    }
    if (f->cpuset_cpus != NULL) r->cpu.cpus = brig_strdup(f->cpuset_cpus);
    if (f->cpuset_mems != NULL) r->cpu.mems = brig_strdup(f->cpuset_mems);
    if (r->memory.swap.set && r->memory.limit.set && r->memory.swap.v > 0 &&
        r->memory.limit.v > 0 && r->memory.swap.v < r->memory.limit.v)
        return brig_failx(err, "--memory-swap %s: must be at least --memory %s (it is memory plus "
                          "swap)", f->memory_swap, f->memory);
    return 0;
}

static int cgcli_read_resources(const char *file, struct brig_resources *r, struct brig_error **err)
{
    autofree char *text = NULL;
    size_t len = 0;
    if (strcmp(file, "-") == 0) {
        FILE *in = stdin;
        size_t cap = 4096;
        text = brig_calloc(cap, 1);
        size_t n;
        while ((n = fread(text + len, 1, cap - len - 1, in)) > 0) {
            len += n;
            if (len + 1 == cap) {
                if (cap >= (16u << 20)) return brig_failx(err, "--resources -: more than 16 MiB");
                cap *= 2;
                char *t = realloc(text, cap);
                if (t == NULL) abort();
                text = t;
            }
        }
        if (ferror(in)) return brig_fail(err, errno, "--resources -: read stdin");
        text[len] = '\0';
    } else if (brig_read_regular_at(AT_FDCWD, file, 16u << 20, &text, &len, err) < 0) {
        return brig_wrap(err, "--resources");
    }
    if (spec_parse_resources_text(text, len, r, err) < 0)
        return brig_wrap(err, "--resources %s", file);
    return 0;
}

int cmd_update(const struct brig_globals *g, int argc, char **argv, int *status,
               struct brig_error **err)
{
    struct update_flags f = {0};
    bool help = false;
    const struct cli_flag flags[] = {
        { "resources", 'r', CLI_STRING, &f.resources, "FILE",
          "linux.resources JSON from FILE, or - for stdin (the other flags are then refused)" },
        { "memory", 0, CLI_STRING, &f.memory, "BYTES", "memory limit (64M, 1g, -1 for none)" },
        { "memory-swap", 0, CLI_STRING, &f.memory_swap, "BYTES", "memory plus swap limit" },
        { "memory-reservation", 0, CLI_STRING, &f.memory_reservation, "BYTES", "memory soft limit" },
        { "kernel-memory", 0, CLI_STRING, &f.kernel_memory, "BYTES", "kernel memory limit (v1, deprecated)" },
        { "kernel-memory-tcp", 0, CLI_STRING, &f.kernel_memory_tcp, "BYTES",
          "kernel TCP buffer limit (v1, deprecated)" },
        { "pids-limit", 0, CLI_STRING, &f.pids_limit, "N", "maximum number of processes (-1: none)" },
        { "cpu-quota", 0, CLI_STRING, &f.cpu_quota, "USEC", "CPU time per period (-1: none)" },
        { "cpu-period", 0, CLI_STRING, &f.cpu_period, "USEC", "CFS period" },
        { "cpu-share", 0, CLI_STRING, &f.cpu_share, "N", "CPU shares (relative weight)" },
        { "cpu-shares", 0, CLI_STRING, &f.cpu_shares, "N", "same as --cpu-share" },
        { "cpu-rt-period", 0, CLI_STRING, &f.cpu_rt_period, "USEC", "realtime period (v1)" },
        { "cpu-rt-runtime", 0, CLI_STRING, &f.cpu_rt_runtime, "USEC", "realtime runtime (v1)" },
        { "cpu-idle", 0, CLI_STRING, &f.cpu_idle, "0|1", "SCHED_IDLE for the cgroup" },
        { "cpuset-cpus", 0, CLI_STRING, &f.cpuset_cpus, "LIST", "CPUs to run on (0-3,5)" },
        { "cpuset-mems", 0, CLI_STRING, &f.cpuset_mems, "LIST", "memory nodes to use" },
        { "blkio-weight", 0, CLI_STRING, &f.blkio_weight, "N", "block I/O weight (10-1000)" },
        { "l3-cache-schema", 0, CLI_STRING, &f.l3_cache_schema, "S", "refused: brig has no Intel RDT" },
        { "mem-bw-schema", 0, CLI_STRING, &f.mem_bw_schema, "S", "refused: brig has no Intel RDT" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    CG_POS_ARRAY(pos);
    int npos = 0;
    int r = cgcli_parse("update", "CONTAINER_ID", "Change the resource limits of a running container.",
                        flags, BRIG_ARRAY_SIZE(flags), &help, argc, argv, pos, &npos, err);
    if (r != 0) return r < 0 ? -1 : 0;
    if (f.l3_cache_schema != NULL || f.mem_bw_schema != NULL)
        return brig_failx(err, "update: --l3-cache-schema/--mem-bw-schema: linux.intelRdt is not "
                          "supported by brig");
    if (f.cpu_share != NULL && f.cpu_shares != NULL)
        return brig_failx(err, "update: give --cpu-share or --cpu-shares, not both");
    struct brig_resources res = {0};
    int rc;
    if (f.resources != NULL) {
        if (cgcli_any_flag(&f))
            return brig_failx(err, "update: --resources cannot be combined with the individual "
                              "limit flags");
        rc = cgcli_read_resources(f.resources, &res, err);
    } else if (!cgcli_any_flag(&f)) {
        return brig_failx(err, "update: nothing to change (give --resources FILE or a limit flag)");
    } else {
        rc = cgcli_flags_to_resources(&f, &res, err);
        if (rc < 0) brig_wrap(err, "update");
    }
    if (rc == 0) rc = container_update(g, pos[0], &res, err);
    spec_resources_clear(&res);
    return rc;
}

int cmd_events(const struct brig_globals *g, int argc, char **argv, int *status,
               struct brig_error **err)
{
    const char *interval = "5s";
    bool stats = false, help = false;
    const struct cli_flag flags[] = {
        { "interval", 0, CLI_STRING, &interval, "DURATION", "time between stats events (default 5s)" },
        { "stats", 0, CLI_BOOL, &stats, NULL, "print the container's stats once and exit" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    CG_POS_ARRAY(pos);
    int npos = 0;
    int r = cgcli_parse("events", "CONTAINER_ID",
                        "Print the container's events as JSON lines: stats every --interval and "
                        "one {\"type\":\"oom\"} per OOM kill, until the container stops.",
                        flags, BRIG_ARRAY_SIZE(flags), &help, argc, argv, pos, &npos, err);
    if (r != 0) return r < 0 ? -1 : 0;
    long ms = 0;
    if (cgcli_parse_duration_ms("interval", interval, &ms, err) < 0) return brig_wrap(err, "events");
    return container_events(g, pos[0], stats, ms, err);
}
