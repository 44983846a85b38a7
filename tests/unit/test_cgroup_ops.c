/* The cgroup parts of pause/update/events that need no kernel: stats read
 * from files laid out like v2 and v1 cgroups in a temp dir (units and
 * runc's conventions), the resources document of `update --resources`, and
 * update refusing a cgroup path that is not on cgroupfs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/spec.h"
#include "linux/cgroup/cgroup_internal.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strutil.h"

static char tmp[64];

static void setup(void)
{
    snprintf(tmp, sizeof(tmp), "/tmp/brig-test-cgops-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
    cr_assert_eq(system(cmd), 0);
}

static void put(const char *dir, const char *file, const char *text)
{
    autofree char *p = brig_asprintf("%s/%s", dir, file);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f, "%s", p);
    fputs(text, f);
    fclose(f);
}

static char *subdir(const char *name)
{
    char *d = brig_asprintf("%s/%s", tmp, name);
    cr_assert_eq(mkdir(d, 0755), 0);
    return d;
}

/* A brig_cgroup over the given directories (v2 first if any). */
static struct brig_cgroup *fake_cg(const char *v2, const char *const *v1_dirs,
                                   const char *const *v1_ctrls, size_t n_v1)
{
    struct brig_cgroup *cg = brig_calloc(1, sizeof(*cg));
    cg->v2_fd = -1;
    cg->layout = v2 && n_v1 ? CG_HYBRID : v2 ? CG_UNIFIED : CG_LEGACY;
    cg->dirs = brig_calloc(n_v1 + 1, sizeof(*cg->dirs));
    if (v2 != NULL) {
        cg->dirs[cg->n_dirs++] = (struct cg_dir){ brig_strdup(v2), true, brig_strdup(""), 1, 0 };
    }
    for (size_t i = 0; i < n_v1; i++)
        cg->dirs[cg->n_dirs++] =
            (struct cg_dir){ brig_strdup(v1_dirs[i]), false, brig_strdup(v1_ctrls[i]), 1, 0 };
    return cg;
}

TestSuite(cgroup_stats, .init = setup, .fini = teardown);

Test(cgroup_stats, v2_files_in_runc_units)
{
    autofree char *d = subdir("leaf");
    put(d, "cpu.max", "20000 100000\n");
    put(d, "cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 10\n"
                       "nr_throttled 4\nthrottled_usec 70\n");
    put(d, "memory.current", "4096\n");
    put(d, "memory.max", "max\n");
    put(d, "memory.peak", "8192\n");
    put(d, "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n");
    put(d, "memory.stat", "anon 4096\nfile 12\nkernel 7\n");
    put(d, "memory.swap.current", "100\n");
    put(d, "memory.swap.max", "1000\n");
    put(d, "pids.current", "3\n");
    put(d, "pids.max", "max\n");
    struct brig_cgroup *cg = fake_cg(d, NULL, NULL, 0);
    struct cgroup_stats s;
    struct brig_error *err = NULL;
    cr_assert_eq(cgroup_stats_read(cg, &s, &err), 0);
    cr_assert(s.has_cpu && s.has_memory && s.has_pids && s.has_oom && s.has_swap);
    cr_assert_eq(s.cpu_total, 1500000);         /* usec -> ns */
    cr_assert_eq(s.cpu_user, 1000000);
    cr_assert_eq(s.cpu_kernel, 500000);
    cr_assert_eq(s.periods, 10);
    cr_assert_eq(s.throttled_periods, 4);
    cr_assert_eq(s.throttled_time, 70000);
    cr_assert_eq(s.mem_usage, 4096);
    cr_assert_eq(s.mem_limit, UINT64_MAX);      /* "max", as runc prints it */
    cr_assert_eq(s.mem_max, 8192);
    cr_assert_eq(s.mem_failcnt, 3);             /* memory.events max */
    cr_assert_eq(s.mem_cache, 12);              /* memory.stat file */
    cr_assert_eq(s.oom_kills, 2);
    cr_assert_eq(s.swap_usage, 4196);           /* memory + swap, as v1's memsw */
    cr_assert_eq(s.swap_limit, UINT64_MAX);     /* memory unlimited */
    cr_assert_eq(s.n_raw, 3);
    cr_assert_str_eq(s.raw_keys[1], "file");
    cr_assert_eq(s.raw_vals[2], 7);
    cr_assert_eq(s.pids_current, 3);
    cr_assert_eq(s.pids_limit, 0);              /* unlimited pids: 0, as runc */
    cgroup_stats_clear(&s);
    cgroup_free(cg);
}

Test(cgroup_stats, v2_without_controllers_has_usage_only)
{
    /* A leaf without +cpu/+memory/+pids: core cpu.stat only. */
    autofree char *d = subdir("bare");
    put(d, "cpu.stat", "usage_usec 42\nuser_usec 40\nsystem_usec 2\n");
    struct brig_cgroup *cg = fake_cg(d, NULL, NULL, 0);
    struct cgroup_stats s;
    cr_assert_eq(cgroup_stats_read(cg, &s, NULL), 0);
    cr_assert(s.has_cpu);
    cr_assert_eq(s.cpu_total, 42000);
    cr_assert_not(s.has_memory, "memory must be left out, not reported as 0");
    cr_assert_not(s.has_pids);
    cr_assert_not(s.has_oom);
    cgroup_stats_clear(&s);
    cgroup_free(cg);
}

Test(cgroup_stats, v1_hierarchies_on_a_hybrid_layout)
{
    autofree char *v2 = subdir("unified");
    put(v2, "cpu.stat", "usage_usec 1\n");       /* no cpu.max: cpu is a v1 controller */
    autofree char *mem = subdir("memory");
    put(mem, "memory.usage_in_bytes", "1000\n");
    put(mem, "memory.limit_in_bytes", "16777216\n");
    put(mem, "memory.max_usage_in_bytes", "2000\n");
    put(mem, "memory.failcnt", "5\n");
    put(mem, "memory.memsw.usage_in_bytes", "1100\n");
    put(mem, "memory.memsw.limit_in_bytes", "16777216\n");
    put(mem, "memory.stat", "cache 9\nrss 1000\n");
    put(mem, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
    autofree char *cpu = subdir("cpu");
    put(cpu, "cpuacct.usage", "777\n");
    put(cpu, "cpuacct.usage_user", "700\n");
    put(cpu, "cpuacct.usage_sys", "77\n");
    put(cpu, "cpuacct.usage_percpu", "700 77 \n");
    put(cpu, "cpu.stat", "nr_periods 8\nnr_throttled 6\nthrottled_time 123456\n");
    autofree char *pids = subdir("pids");
    put(pids, "pids.current", "2\n");
    put(pids, "pids.max", "10\n");
    const char *dirs[] = {mem, cpu, pids};
    const char *ctrls[] = {"memory", "cpu,cpuacct", "pids"};
    struct brig_cgroup *cg = fake_cg(v2, dirs, ctrls, 3);
    struct cgroup_stats s;
    cr_assert_eq(cgroup_stats_read(cg, &s, NULL), 0);
    cr_assert_eq(s.cpu_total, 777, "v1 cpuacct wins over the v2 core usage");
    cr_assert_eq(s.cpu_user, 700);
    cr_assert_eq(s.cpu_kernel, 77);
    cr_assert_eq(s.n_percpu, 2);
    cr_assert_eq(s.percpu[1], 77);
    cr_assert_eq(s.throttled_periods, 6);
    cr_assert_eq(s.throttled_time, 123456);
    cr_assert_eq(s.mem_limit, 16777216);
    cr_assert_eq(s.mem_max, 2000);
    cr_assert_eq(s.mem_failcnt, 5);
    cr_assert_eq(s.mem_cache, 9);
    cr_assert_eq(s.swap_usage, 1100);
    cr_assert_eq(s.oom_kills, 1);
    cr_assert_eq(s.pids_limit, 10);
    cgroup_stats_clear(&s);
    cgroup_free(cg);
}

Test(cgroup_stats, gone_cgroup_is_an_error)
{
    autofree char *d = brig_asprintf("%s/never-made", tmp);
    struct brig_cgroup *cg = fake_cg(d, NULL, NULL, 0);
    struct cgroup_stats s;
    struct brig_error *err = NULL;
    cr_assert_eq(cgroup_stats_read(cg, &s, &err), -1);
    cr_assert_not_null(strstr(err->msg, "gone"), "%s", err->msg);
    brig_error_free(err);
    cgroup_free(cg);
}

TestSuite(cgroup_update, .init = setup, .fini = teardown);

Test(cgroup_update, refuses_a_path_that_is_not_a_cgroup)
{
    /* A tampered state file must not turn update into a file writer. */
    autofree char *d = subdir("notcg");
    put(d, "pids.max", "max\n");
    struct brig_cgroup *cg = fake_cg(d, NULL, NULL, 0);
    struct brig_resources r = {0};
    r.present = true;
    r.pids.limit = (struct brig_opt_i64){ true, 5 };
    struct brig_error *err = NULL;
    cr_assert_eq(cgroup_update(cg, &r, &err), -1);
    cr_assert_not_null(strstr(err->msg, "not a cgroup"), "%s", err->msg);
    autofree char *p = brig_asprintf("%s/pids.max", d);
    FILE *f = fopen(p, "r");
    char buf[16] = "";
    cr_assert_not_null(fgets(buf, sizeof(buf), f));
    fclose(f);
    cr_assert_str_eq(buf, "max\n", "nothing may be written");
    brig_error_free(err);
    cgroup_free(cg);
}

Test(update_resources, parses_like_config_json)
{
    const char *j = "{\"memory\": {\"limit\": -1, \"swap\": 2048}, \"pids\": {\"limit\": 5},"
                    " \"cpu\": {\"quota\": 20000, \"period\": 100000, \"cpus\": \"0\"}}";
    struct brig_resources r;
    struct brig_error *err = NULL;
    cr_assert_eq(spec_parse_resources_text(j, strlen(j), &r, &err), 0, "%s", err ? err->msg : "");
    cr_assert(r.present);
    cr_assert(r.memory.limit.set && r.memory.limit.v == -1);
    cr_assert(r.memory.swap.set && r.memory.swap.v == 2048);
    cr_assert(r.pids.limit.set && r.pids.limit.v == 5);
    cr_assert(r.cpu.quota.set && r.cpu.quota.v == 20000);
    cr_assert_str_eq(r.cpu.cpus, "0");
    cr_assert_not(r.cpu.shares.set, "absent fields stay unset: update leaves them alone");
    spec_resources_clear(&r);
}

Test(update_resources, errors_name_the_field)
{
    static const struct { const char *json, *want; } cases[] = {
        {"{\"memory\": {\"limit\": \"1g\"}}", "linux.resources.memory.limit"},
        {"{\"pids\": {\"limit\": -7}}", "linux.resources.pids.limit"},
        {"{\"devices\": [{\"allow\": true, \"access\": \"rwx\"}]}", "linux.resources.devices[0].access"},
        {"[1, 2]", "resources"},
        {"{\"memory\": ", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct brig_resources r;
        struct brig_error *err = NULL;
        cr_assert_eq(spec_parse_resources_text(cases[i].json, strlen(cases[i].json), &r, &err), -1,
                     "%s", cases[i].json);
        cr_assert_not_null(strstr(err->msg, cases[i].want), "%s: %s", cases[i].json, err->msg);
        cr_assert_null(r.cpu.cpus);
        brig_error_free(err);
    }
}
