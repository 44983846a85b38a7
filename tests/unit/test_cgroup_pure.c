/* runtime/linux/cgroup_*.c, the parts that need no kernel: conversions,
 * cgroupsPath resolution, mountinfo/proc-cgroup parsing, the fail-closed
 * plan against given layouts, and the state format. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>

#include "linux/cgroup/cgroup_internal.h"
#include "util/cleanup.h"
#include "util/error.h"

/* ---- conversions ---- */

Test(cgroup_convert, shares_to_weight)
{
    cr_assert_eq(cg_shares_to_weight(0), 0);
    cr_assert_eq(cg_shares_to_weight(2), 1);
    cr_assert_eq(cg_shares_to_weight(1024), 39);     /* 1 + 1022*9999/262142 */
    cr_assert_eq(cg_shares_to_weight(262144), 10000);
    cr_assert_eq(cg_shares_to_weight(1), 1);           /* clamped, no underflow */
    cr_assert_eq(cg_shares_to_weight(1000000), 10000);
}

Test(cgroup_convert, blkio_weight)
{
    cr_assert_eq(cg_blkio_to_io_weight(0), 0);
    cr_assert_eq(cg_blkio_to_io_weight(10), 1);
    cr_assert_eq(cg_blkio_to_io_weight(1000), 10000);
    cr_assert_eq(cg_blkio_to_io_weight(500), 1 + (490 * 9999) / 990);
}

#define SWAP(v) (&(struct brig_opt_i64){true, (v)})
#define NO_SWAP (&(struct brig_opt_i64){false, 0})

static int64_t swap_ok(const struct brig_opt_i64 *swap, int64_t limit, bool *set)
{
    autoerr struct brig_error *e = NULL;
    int64_t out = 12345;
    cr_assert_eq(cg_swap_to_v2(swap, limit, &out, set, &e), 0, "swap %lld limit %lld: %s",
                 (long long)swap->v, (long long)limit, e ? e->msg : "");
    return out;
}

Test(cgroup_convert, swap_v2)
{
    bool set;
    cr_assert_eq(swap_ok(SWAP(200), 100, &set), 100);
    cr_assert(set);
    cr_assert_eq(swap_ok(SWAP(100), 100, &set), 0);    /* no swap at all */
    cr_assert(set);
    cr_assert_eq(swap_ok(SWAP(-1), 100, &set), -1);
    cr_assert(set);
    swap_ok(NO_SWAP, 100, &set);                        /* not given: left alone */
    cr_assert_not(set);
    cr_assert_eq(swap_ok(NO_SWAP, -1, &set), -1);      /* unlimited memory: swap too */
    cr_assert(set);
    /* An explicit 0 (memory+swap = 0) is "no swap", never "unlimited". */
    cr_assert_eq(swap_ok(SWAP(0), 100, &set), 0);
    cr_assert(set);
    cr_assert_eq(swap_ok(SWAP(0), -1, &set), 0);
    cr_assert(set);
    cr_assert_eq(swap_ok(SWAP(0), 0, &set), 0);
    cr_assert(set);

    autoerr struct brig_error *e = NULL;
    int64_t out;
    cr_assert_eq(cg_swap_to_v2(SWAP(50), 100, &out, &set, &e), -1);
    cr_assert(strstr(e->msg, "linux.resources.memory.swap") != NULL, "%s", e->msg);
    autoerr struct brig_error *e2 = NULL;
    cr_assert_eq(cg_swap_to_v2(SWAP(200), 0, &out, &set, &e2), -1);
    cr_assert(strstr(e2->msg, "without linux.resources.memory.limit") != NULL, "%s", e2->msg);
}

Test(cgroup_convert, hugepage_sizes)
{
    uint64_t kb;
    cr_assert_eq(cg_hugepage_parse("2MB", &kb), 0);
    cr_assert_eq(kb, 2048);
    cr_assert_eq(cg_hugepage_parse("1GB", &kb), 0);
    cr_assert_eq(kb, 1048576);
    cr_assert_eq(cg_hugepage_parse("64kB", &kb), 0);
    cr_assert_eq(kb, 64);
    cr_assert_eq(cg_hugepage_parse("2M", &kb), -1);
    cr_assert_eq(cg_hugepage_parse("MB", &kb), -1);
    char name[32];
    cg_hugepage_name(2048, name, sizeof(name));
    cr_assert_str_eq(name, "2MB");
    cg_hugepage_name(1048576, name, sizeof(name));
    cr_assert_str_eq(name, "1GB");
    cg_hugepage_name(64, name, sizeof(name));
    cr_assert_str_eq(name, "64KB");

    const uint64_t x86[] = {2048, 1048576};
    cr_assert_eq(cg_hugepage_check("f", "2MB", x86, 2, name, sizeof(name), NULL), 0);
    cr_assert_str_eq(name, "2MB");
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cg_hugepage_check("linux.resources.hugepageLimits[0].pageSize", "64kB", x86, 2,
                                   name, sizeof(name), &e), -1);
    cr_assert_str_eq(e->msg, "linux.resources.hugepageLimits[0].pageSize: 64kB is not a huge "
                     "page size of this kernel (has: 2MB 1GB)");
}

/* ---- paths ---- */

static char *resolve(const char *path, const char *id, bool systemd, bool running)
{
    char *inner = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cg_path_resolve(path, id, systemd, running, &inner, &e), 0, "%s: %s",
                 path ? path : "(null)", e ? e->msg : "");
    return inner;
}

static void resolve_fails(const char *path, bool systemd, bool running, const char *needle)
{
    char *inner = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cg_path_resolve(path, "c1", systemd, running, &inner, &e), -1, "%s accepted",
                 path);
    cr_assert(strstr(e->msg, needle) != NULL, "%s: %s", path, e->msg);
}

Test(cgroup_path, cgroupfs_forms)
{
    autofree char *a = resolve("/default/c1", "c1", false, false);
    cr_assert_str_eq(a, "/default/c1");
    autofree char *b = resolve("//x/./y/", "c1", false, false);
    cr_assert_str_eq(b, "/x/y");
    autofree char *c = resolve("pods/c1", "c1", false, false);
    cr_assert_str_eq(c, "pods/c1");
    autofree char *d = resolve(NULL, "myid", false, false);
    cr_assert_str_eq(d, "myid");
    autofree char *e = resolve("", "myid", false, false);
    cr_assert_str_eq(e, "myid");
    resolve_fails("/a/../b", false, false, "\"..\" is not allowed");
    resolve_fails("../escape", false, false, "\"..\" is not allowed");
    resolve_fails("/", false, false, "root cgroup");
    resolve_fails("system.slice:docker:abc", false, false, "needs --systemd-cgroup");
}

/* A component naming a control file: mkdir finds the file (EEXIST) and
 * the walk would take it for a cgroup; refused before anything is made. */
Test(cgroup_path, control_file_names_refused)
{
    resolve_fails("/x/cgroup.procs", false, false,
                  "linux.cgroupsPath: \"/x/cgroup.procs\": \"cgroup.procs\" is the name of a "
                  "cgroup control file");
    resolve_fails("/tasks/c1", false, false, "\"tasks\" is the name of a cgroup control file");
    resolve_fails("a/memory.limit_in_bytes", false, false, "memory.limit_in_bytes");
    resolve_fails("/x/cpuset.cpus", false, false, "cpuset.cpus");
    resolve_fails("/io.max", false, false, "io.max");
    resolve_fails("/x/notify_on_release", false, false, "notify_on_release");
    resolve_fails("/release_agent", false, false, "release_agent");
    char big[300];
    memset(big, 'a', sizeof(big) - 1);
    big[0] = '/';
    big[sizeof(big) - 1] = '\0';
    resolve_fails(big, false, false, "linux.cgroupsPath: a component is 298 bytes long");
    /* dots elsewhere are names like any other (systemd's units have them) */
    autofree char *a = resolve("/system.slice/memory-hog.scope/cgroupx", "c1", false, false);
    cr_assert_str_eq(a, "/system.slice/memory-hog.scope/cgroupx");
    autofree char *b = resolve("/a/cpu/tasks2/memory", "c1", false, false);
    cr_assert_str_eq(b, "/a/cpu/tasks2/memory");
    cr_assert(cg_path_component_is_control("cgroup.kill", 11));
    cr_assert_not(cg_path_component_is_control("cgroup.kill", 6));   /* "cgroup" alone */
}

Test(cgroup_path, systemd_forms)
{
    autofree char *a = resolve("system.slice:docker:abc", "c1", true, true);
    cr_assert_str_eq(a, "/system.slice/docker-abc.scope");
    autofree char *b = resolve("machine-pod1.slice:crio:abc", "c1", true, true);
    cr_assert_str_eq(b, "/machine.slice/machine-pod1.slice/crio-abc.scope");
    autofree char *c = resolve(":brig:abc", "c1", true, true);
    cr_assert_str_eq(c, "/system.slice/brig-abc.scope");
    autofree char *d = resolve(NULL, "c9", true, true);
    cr_assert_str_eq(d, "/system.slice/brig-c9.scope");
    autofree char *f = resolve("-.slice:p:n", "c1", true, true);
    cr_assert_str_eq(f, "/p-n.scope");
    resolve_fails("system.slice:docker:abc", true, false, "systemd is not running");
    resolve_fails("/abs/path", true, true, "expected \"slice:prefix:name\"");
    resolve_fails("bad-.slice:p:n", true, true, "invalid slice name");
    resolve_fails("system.slice:p:a/b", true, true, "invalid systemd unit name");
}

Test(cgroup_path, expand_slice)
{
    autofree char *p = NULL;
    cr_assert_eq(cg_path_expand_slice("a-b-c.slice", &p, NULL), 0);
    cr_assert_str_eq(p, "/a.slice/a-b.slice/a-b-c.slice");
    char *q = NULL;
    cr_assert_eq(cg_path_expand_slice("a--b.slice", &q, NULL), -1);
    cr_assert_eq(cg_path_expand_slice("-a.slice", &q, NULL), -1);
    cr_assert_eq(cg_path_expand_slice("a.scope", &q, NULL), -1);
}

/* ---- layout parsing ---- */

static const char hybrid_mountinfo[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    "42 31 0:32 / /mnt/again\\040here rw,relatime - cgroup cgroup rw,memory\n";
static const char hybrid_cgroup[] =
    "9:name=systemd:/user.slice\n8:pids:/user.slice/s1\n4:memory:/process_api/abc\n"
    "1:cpuacct,cpu:/\n0::/user.slice/s1\n";

Test(cgroup_layout, hybrid)
{
    struct cg_layout l;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cg_layout_parse(hybrid_mountinfo, hybrid_cgroup, &l, &e), 0, "%s",
                 e ? e->msg : "");
    cr_assert_eq(l.kind, CG_HYBRID);
    cr_assert_eq(l.n, 5, "bind mount of memory must not count twice (got %zu)", l.n);
    const struct cg_hier *m = cg_layout_v1(&l, "memory");
    cr_assert_not_null(m);
    cr_assert_str_eq(m->mnt, "/sys/fs/cgroup/memory");
    cr_assert_str_eq(m->own, "/process_api/abc");
    const struct cg_hier *c = cg_layout_v1(&l, "cpuacct");
    cr_assert_not_null(c);
    cr_assert_eq(c, cg_layout_v1(&l, "cpu"));
    cr_assert_str_eq(c->own, "/");
    cr_assert_str_eq(cg_layout_v1(&l, "name=systemd")->own, "/user.slice");
    const struct cg_hier *v2 = cg_layout_v2(&l);
    cr_assert_not_null(v2);
    cr_assert_str_eq(v2->mnt, "/sys/fs/cgroup/unified");
    cr_assert_str_eq(v2->own, "/user.slice/s1");

    /* Relative paths: under the caller's cgroup on v1, its parent on v2. */
    autofree char *p1 = cg_path_in_hier(cg_layout_v1(&l, "pids"), "c1");
    cr_assert_str_eq(p1, "/sys/fs/cgroup/pids/user.slice/s1/c1");
    autofree char *p2 = cg_path_in_hier(v2, "c1");
    cr_assert_str_eq(p2, "/sys/fs/cgroup/unified/user.slice/c1");
    autofree char *p3 = cg_path_in_hier(c, "a/c1");
    cr_assert_str_eq(p3, "/sys/fs/cgroup/cpu,cpuacct/a/c1");
    autofree char *p4 = cg_path_in_hier(v2, "/default/c1");
    cr_assert_str_eq(p4, "/sys/fs/cgroup/unified/default/c1");
    cg_layout_clear(&l);
}

Test(cgroup_layout, unified_and_legacy)
{
    struct cg_layout l;
    cr_assert_eq(cg_layout_parse("25 1 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n",
                                 "0::/init.scope\n", &l, NULL), 0);
    cr_assert_eq(l.kind, CG_UNIFIED);
    autofree char *p = cg_path_in_hier(cg_layout_v2(&l), "c1");
    cr_assert_str_eq(p, "/sys/fs/cgroup/c1");
    cg_layout_clear(&l);

    cr_assert_eq(cg_layout_parse("32 31 0:29 / /cg/mem rw - cgroup cgroup rw,memory\n",
                                 "4:memory:/\n", &l, NULL), 0);
    cr_assert_eq(l.kind, CG_LEGACY);
    cr_assert_null(cg_layout_v2(&l));
    cg_layout_clear(&l);

    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cg_layout_parse("1 0 0:1 / / rw - ext4 /dev/sda rw\n", "", &l, &e), -1);
    cr_assert(strstr(e->msg, "no cgroup filesystem") != NULL);
}

Test(cgroup_layout, covered_mount_is_ignored)
{
    /* A tmpfs later mounted over the v2 mount point hides it: the host is
     * then legacy as far as anyone can reach (crun's hybrid workaround). */
    static const char mi[] =
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
        "90 41 0:90 / /sys/fs/cgroup/unified rw,relatime - tmpfs none rw\n";
    struct cg_layout l;
    cr_assert_eq(cg_layout_parse(mi, "4:memory:/\n0::/\n", &l, NULL), 0);
    cr_assert_eq(l.kind, CG_LEGACY);
    cr_assert_null(cg_layout_v2(&l));
    cr_assert_not_null(cg_layout_v1(&l, "memory"));
    cg_layout_clear(&l);
}

/* ---- plan: fail closed before anything exists ---- */

static void hybrid_layout(struct cg_layout *l, const char *v2_controllers)
{
    cr_assert_eq(cg_layout_parse(hybrid_mountinfo, hybrid_cgroup, l, NULL), 0);
    struct cg_hier *v2 = (struct cg_hier *)cg_layout_v2(l);
    free(v2->controllers);
    v2->controllers = strdup(v2_controllers);
}

static void unified_layout(struct cg_layout *l, const char *controllers)
{
    cr_assert_eq(cg_layout_parse("25 1 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/\n",
                                 l, NULL), 0);
    struct cg_hier *v2 = (struct cg_hier *)cg_layout_v2(l);
    free(v2->controllers);
    v2->controllers = strdup(controllers);
}

static const char *plan_fails(struct cg_layout *l, struct brig_resources *r)
{
    static char msg[1024];
    struct cg_plan p;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cg_plan_make(l, r, &p, &e), -1, "plan accepted");
    snprintf(msg, sizeof(msg), "%s", e->msg);
    return msg;
}

Test(cgroup_plan, hybrid_routes_by_controller)
{
    struct cg_layout l;
    hybrid_layout(&l, "hugetlb");
    struct brig_resources r = {.present = true};
    r.memory.limit = (struct brig_opt_i64){true, 64 << 20};
    r.pids.limit = (struct brig_opt_i64){true, 16};
    r.cpu.shares = (struct brig_opt_u64){true, 512};
    struct cg_plan p;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cg_plan_make(&l, &r, &p, &e), 0, "%s", e ? e->msg : "");
    cr_assert_eq(p.where[CG_MEMORY], CG_V1);
    cr_assert_eq(p.where[CG_PIDS], CG_V1);
    cr_assert_eq(p.where[CG_CPU], CG_V1);
    cr_assert_eq(p.where[CG_IO], CG_NONE);
    /* v1-only memory fields are fine when memory is on v1. */
    r.memory.has_disable_oom_killer = r.memory.disable_oom_killer = true;
    cr_assert_eq(cg_plan_make(&l, &r, &p, NULL), 0);
    cg_layout_clear(&l);
}

Test(cgroup_plan, missing_controller_names_field)
{
    struct cg_layout l;
    hybrid_layout(&l, "hugetlb");
    struct brig_resources r = {.present = true};
    r.block_io.has_weight = true;
    r.block_io.weight = 500;
    cr_assert_str_eq(plan_fails(&l, &r),
                     "linux.resources.blockIO.weight: io controller not available (cgroup v2 at "
                     "/sys/fs/cgroup/unified has: hugetlb; no cgroup v1 hierarchy mounts it either)");
    r = (struct brig_resources){.present = true};
    r.network.has_class_id = true;
    cr_assert(strstr(plan_fails(&l, &r), "linux.resources.network.classID: net_cls is a cgroup "
                     "v1 controller") != NULL);
    cg_layout_clear(&l);

    unified_layout(&l, "hugetlb");
    r = (struct brig_resources){.present = true};
    r.memory.limit = (struct brig_opt_i64){true, 1 << 20};
    cr_assert_str_eq(plan_fails(&l, &r), "linux.resources.memory.limit: memory controller not "
                     "available (cgroup v2 at /sys/fs/cgroup has: hugetlb)");
    cg_layout_clear(&l);
}

Test(cgroup_plan, v2_refuses_v1_only_fields)
{
    struct cg_layout l;
    unified_layout(&l, "cpuset cpu io memory hugetlb pids rdma");
    struct brig_resources r = {.present = true};
    r.memory.limit = (struct brig_opt_i64){true, 1 << 20};
    r.memory.has_disable_oom_killer = r.memory.disable_oom_killer = true;
    cr_assert(strstr(plan_fails(&l, &r), "linux.resources.memory.disableOOMKiller: not "
                     "supported by cgroup v2") != NULL);
    r.memory.disable_oom_killer = false;
    r.memory.kernel = (struct brig_opt_i64){true, 1 << 20};
    cr_assert(strstr(plan_fails(&l, &r), "linux.resources.memory.kernel:") != NULL);
    r.memory.kernel = (struct brig_opt_i64){true, 0};   /* zero: not a request */
    struct cg_plan p;
    cr_assert_eq(cg_plan_make(&l, &r, &p, NULL), 0);
    cr_assert_eq(p.where[CG_MEMORY], CG_V2);
    r = (struct brig_resources){.present = true};
    r.cpu.realtime_runtime = (struct brig_opt_i64){true, 1000};
    cr_assert(strstr(plan_fails(&l, &r), "linux.resources.cpu.realtimeRuntime") != NULL);
    cg_layout_clear(&l);
}

/* Swap 0 is "no swap": it needs the memory controller like any limit,
 * and on v1 (memsw caps memory + swap) a memory limit to cap it at. */
Test(cgroup_plan, swap_zero_is_a_limit)
{
    struct cg_layout l;
    hybrid_layout(&l, "hugetlb");
    struct brig_resources r = {.present = true};
    r.memory.swap = (struct brig_opt_i64){true, 0};
    struct cg_plan p;
    cr_assert_eq(cg_plan_make(&l, &r, &p, NULL), 0);
    cr_assert_eq(p.where[CG_MEMORY], CG_V1);
    cr_assert_str_eq(p.field[CG_MEMORY], "linux.resources.memory.swap");
    r.memory.limit = (struct brig_opt_i64){true, -1};
    cr_assert(strstr(plan_fails(&l, &r), "linux.resources.memory.swap: 0 (no swap) cannot be "
                     "enforced with an unlimited linux.resources.memory.limit on cgroup v1") != NULL);
    r.memory.limit = (struct brig_opt_i64){true, 1 << 20};
    cr_assert_eq(cg_plan_make(&l, &r, &p, NULL), 0);
    cg_layout_clear(&l);
    /* v2 has a swap-only knob: memory.swap.max = 0, with or without a limit */
    unified_layout(&l, "hugetlb");
    r = (struct brig_resources){.present = true};
    r.memory.swap = (struct brig_opt_i64){true, 0};
    cr_assert_str_eq(plan_fails(&l, &r), "linux.resources.memory.swap: memory controller not "
                     "available (cgroup v2 at /sys/fs/cgroup has: hugetlb)");
    cg_layout_clear(&l);
    unified_layout(&l, "memory");
    r.memory.limit = (struct brig_opt_i64){true, -1};
    cr_assert_eq(cg_plan_make(&l, &r, &p, NULL), 0);
    cr_assert_eq(p.where[CG_MEMORY], CG_V2);
    cg_layout_clear(&l);
}

Test(cgroup_plan, devices_where)
{
    struct cg_layout l;
    struct brig_device_rule dev = {.allow = true, .type = 'c', .major = 1, .minor = 3};
    struct brig_resources r = {.present = true, .devices = &dev, .n_devices = 1};
    struct cg_plan p;
    /* Unified: the eBPF filter, also with no rules (default allowlist). */
    unified_layout(&l, "memory");
    cr_assert_eq(cg_plan_make(&l, &r, &p, NULL), 0);
    cr_assert_eq(p.where[CG_DEVICES], CG_V2);
    cr_assert_eq(cg_plan_make(&l, NULL, &p, NULL), 0);
    cr_assert_eq(p.where[CG_DEVICES], CG_V2);
    cg_layout_clear(&l);
    /* Legacy without a devices hierarchy: rules cannot be enforced. */
    cr_assert_eq(cg_layout_parse("32 31 0:29 / /cg/mem rw - cgroup cgroup rw,memory\n",
                                 "4:memory:/\n", &l, NULL), 0);
    cr_assert(strstr(plan_fails(&l, &r), "linux.resources.devices: no cgroup v1 devices") != NULL);
    cr_assert_eq(cg_plan_make(&l, NULL, &p, NULL), 0);
    cr_assert_eq(p.where[CG_DEVICES], CG_NONE);
    cg_layout_clear(&l);
}

Test(cgroup_devices, compile_shape)
{
    /* Last rule is checked first; each block ends in exit; default deny. */
    struct brig_device_rule rules[2] = {
        {.allow = false, .type = 'a', .major = -1, .minor = -1, .access = "rwm"},
        {.allow = true, .type = 'c', .major = 10, .minor = 229, .access = "rw"},
    };
    struct bpf_insn *insns = NULL;
    size_t n = 0;
    cr_assert_eq(cg_devices_compile(rules, 2, &insns, &n, NULL), 0);
    cr_assert_gt(n, 8);
    /* The leading deny-all matches everything: it is the last block, and
     * nothing follows it (the verifier refuses unreachable code). */
    cr_assert_eq(insns[n - 1].code, BPF_JMP | BPF_EXIT);
    cr_assert_eq(insns[n - 2].code, BPF_ALU | BPF_MOV | BPF_K);
    cr_assert_eq(insns[n - 2].imm, 0, "deny-all must deny");
    cr_assert_eq(insns[n - 3].code, BPF_JMP | BPF_EXIT);
    cr_assert_eq(insns[n - 4].imm, 1, "rule 1 (c 10:229 rw) allows");
    /* Without a catch-all the program ends in the default deny. */
    struct bpf_insn *i2 = NULL;
    size_t n2 = 0;
    cr_assert_eq(cg_devices_compile(rules + 1, 1, &i2, &n2, NULL), 0);
    cr_assert_eq(i2[n2 - 2].imm, 0);
    cr_assert_eq(i2[n2 - 3].code, BPF_JMP | BPF_EXIT);
    free(i2);
    /* Every jump lands inside the program. */
    for (size_t i = 0; i < n; i++)
        if ((insns[i].code & 0x07) == BPF_JMP && (insns[i].code & 0xf0) == BPF_JNE)
            cr_assert_lt(i + 1 + (size_t)insns[i].off, n);
    free(insns);
    struct brig_device_rule bad = {.allow = true, .type = 'x', .major = 1, .minor = 1};
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cg_devices_compile(&bad, 1, &insns, &n, &e), -1);
    cr_assert(strstr(e->msg, "linux.resources.devices[0].type") != NULL, "%s", e->msg);
}

Test(cgroup_plan, unified_map)
{
    struct cg_layout l;
    struct brig_kv kv = {.key = "memory.high", .value = "1000000"};
    struct brig_resources r = {.present = true, .unified = &kv, .n_unified = 1};

    cr_assert_eq(cg_layout_parse("32 31 0:29 / /cg/mem rw - cgroup cgroup rw,memory\n",
                                 "4:memory:/\n", &l, NULL), 0);
    cr_assert(strstr(plan_fails(&l, &r), "linux.resources.unified: needs cgroup v2") != NULL);
    cg_layout_clear(&l);

    hybrid_layout(&l, "hugetlb");
    cr_assert(strstr(plan_fails(&l, &r), "linux.resources.unified.memory.high: memory controller "
                     "not available on cgroup v2") != NULL);
    kv.key = "hugetlb.2MB.max";
    struct cg_plan p;
    cr_assert_eq(cg_plan_make(&l, &r, &p, NULL), 0);
    kv.key = "../memory.max";
    cr_assert(strstr(plan_fails(&l, &r), "invalid key") != NULL);
    kv.key = "hugetlb/x.max";
    cr_assert(strstr(plan_fails(&l, &r), "invalid key") != NULL);
    kv.key = "cgroup.procs";
    cr_assert(strstr(plan_fails(&l, &r), "managed by brig") != NULL);
    cg_layout_clear(&l);
}

/* ---- state ---- */

Test(cgroup_state, roundtrip_and_validation)
{
    struct cg_dir dirs[2] = {
        {.path = "/sys/fs/cgroup/memory/a/c1", .v2 = false, .controllers = "memory", .created = 2},
        {.path = "/sys/fs/cgroup/unified/a/c1", .v2 = true, .controllers = "", .created = 1},
    };
    struct brig_cgroup cg = {.layout = CG_HYBRID, .dirs = dirs, .n_dirs = 2, .v2_fd = -1};
    autofree char *text = cgroup_serialize(&cg);
    cr_assert_not_null(text);
    struct brig_cgroup *back = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cgroup_load(text, &back, &e), 0, "%s", e ? e->msg : "");
    cr_assert_eq(back->layout, CG_HYBRID);
    cr_assert_eq(back->n_dirs, 2);
    cr_assert_str_eq(back->dirs[0].path, dirs[0].path);
    cr_assert_eq(back->dirs[0].created, 2);
    cr_assert_not(back->dirs[0].v2);
    cr_assert(back->dirs[1].v2);
    cr_assert_eq(cgroup_clone_fd(back), -1);
    cgroup_free(back);

    struct brig_cgroup *bad = NULL;
    autoerr struct brig_error *e2 = NULL;
    cr_assert_eq(cgroup_load("{\"layout\":\"hybrid\",\"dirs\":[{\"path\":\"/sys/fs/cgroup/../etc\","
                             "\"created\":1}]}", &bad, &e2), -1);
    cr_assert(strstr(e2->msg, "not a clean absolute path") != NULL, "%s", e2->msg);
}
