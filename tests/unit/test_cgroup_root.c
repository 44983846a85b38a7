/* runtime/linux/cgroup*.c against the real kernel (root). Uses absolute
 * cgroup paths /brig-unit-<pid>-<n> in every mounted hierarchy, never the
 * caller's own cgroup. Written for any layout: mount points come from
 * mountinfo, the checks pick the v1 or v2 file the layout uses.
 *
 * No test here sets Criterion's .timeout: it starts BoxFort's timeout
 * thread, which frees a request while the runner forks the next worker;
 * the worker then holds a block nothing points to, and LeakSanitizer
 * (CI's sanitizer build) failed the binary on it now and then. meson's
 * per-binary timeout (tests/unit/meson.build) bounds a hang instead. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "linux/cgroup/cgroup_internal.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "util/strutil.h"

static int seq;

static void need_root(void)
{
    if (geteuid() != 0) cr_skip_test("needs root to create cgroups");
    struct cg_layout l;
    if (cg_layout_detect(&l, NULL) < 0) cr_skip_test("no cgroup filesystem mounted");
    cg_layout_clear(&l);
    /* Reap whatever the container children leave behind. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
}

static void reap_all(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0) {}
}

/* After each test, even a failed one: remove what it may have left behind
 * (only our own /brig-unit-<pid>-<n> directories). */
static void leftovers(void)
{
    struct cg_layout l;
    if (cg_layout_detect(&l, NULL) < 0) return;
    for (int n = 1; n <= seq; n++) {
        for (size_t i = 0; i < l.n; i++) {
            autofree char *d = brig_asprintf("%s/brig-unit-%d-%d", l.h[i].mnt, (int)getpid(), n);
            if (access(d, F_OK) < 0) continue;
            autofree pid_t *pids = NULL;
            size_t np = 0;
            if (cg_read_pids(d, &pids, &np, NULL) == 0)
                for (size_t k = 0; k < np; k++) kill(pids[k], SIGKILL);
            if (cg_file_exists(d, "freezer.state")) cgv1_freeze(d, false, NULL);
            if (cg_file_exists(d, "cgroup.freeze")) cgv2_freeze(d, false, NULL);
            cg_rmdir_created(d, 1, NULL);
        }
    }
    cg_layout_clear(&l);
    /* We are the subreaper of the tests' children: reap them all. */
    for (int i = 0; i < 50 && waitpid(-1, NULL, WNOHANG) >= 0; i++) {
        reap_all();
        usleep(2000);
    }
}

TestSuite(cgroup_root, .fini = leftovers);

static char *unit_path(void)
{
    return brig_asprintf("/brig-unit-%d-%d", (int)getpid(), ++seq);
}

static void spec_for(struct brig_spec *s, char *path)
{
    memset(s, 0, sizeof(*s));
    s->has_linux = true;
    s->linux_cfg.cgroups_path = path;
    s->linux_cfg.resources.present = true;
}

/* True when inner exists in no mounted hierarchy. */
static bool nothing_created(const char *inner)
{
    struct cg_layout l;
    cr_assert_eq(cg_layout_detect(&l, NULL), 0);
    bool none = true;
    for (size_t i = 0; i < l.n; i++) {
        autofree char *p = brig_asprintf("%s%s", l.h[i].mnt, inner);
        if (access(p, F_OK) == 0) {
            cr_log_error("left behind: %s", p);
            none = false;
        }
    }
    cg_layout_clear(&l);
    return none;
}

static char *read_value(const char *dir, const char *file)
{
    char *v = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cg_read(dir, file, &v, &e), 0, "%s", e ? e->msg : "");
    v[strcspn(v, "\n")] = '\0';
    return v;
}


/* Child: wait for the go byte, then fork until the kernel refuses; report
 * "<forks> <errno>" and sleep. The forks just sleep. */
static void fork_bomb_child(int go, int report)
{
    char b;
    if (read(go, &b, 1) != 1) _exit(1);
    int n = 0, e = 0;
    for (; n < 1000; n++) {
        pid_t p = fork();
        if (p < 0) {
            e = errno;
            break;
        }
        if (p == 0) {
            pause();
            _exit(0);
        }
    }
    dprintf(report, "%d %d\n", n, e);
    pause();
    _exit(0);
}

Test(cgroup_root, limits_enforced_kill_destroy)
{
    need_root();
    autofree char *inner = unit_path();
    struct brig_spec s;
    spec_for(&s, inner);
    s.linux_cfg.resources.memory.limit = (struct brig_opt_i64){true, 64 << 20};
    s.linux_cfg.resources.pids.limit = (struct brig_opt_i64){true, 16};

    struct brig_cgroup *cg = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cgroup_create(&s, "c1", false, &cg, &e), 0, "%s", e ? e->msg : "");

    const struct cg_dir *mem = cg_dir_v1(cg, "memory");
    const struct cg_dir *pids = cg_dir_v1(cg, "pids");
    const struct cg_dir *v2 = cg_dir_v2(cg);
    autofree char *ml = mem ? read_value(mem->path, "memory.limit_in_bytes")
                            : read_value(v2->path, "memory.max");
    cr_assert_str_eq(ml, "67108864");
    autofree char *pm = read_value(pids ? pids->path : v2->path, "pids.max");
    cr_assert_str_eq(pm, "16");
    /* The v2 part (all of it on unified hosts) is joined at clone. */
    if (v2 != NULL) cr_assert_geq(cgroup_clone_fd(cg), 0);
    else cr_assert_eq(cgroup_clone_fd(cg), -1);

    int go[2], rep[2];
    cr_assert_eq(pipe(go), 0);
    cr_assert_eq(pipe(rep), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        close(go[1]);
        close(rep[0]);
        fork_bomb_child(go[0], rep[1]);
    }
    close(go[0]);
    close(rep[1]);
    autoerr struct brig_error *ae = NULL;
    cr_assert_eq(cgroup_attach(cg, child, false, &ae), 0, "%s", ae ? ae->msg : "");
    cr_assert_eq(write(go[1], "g", 1), 1);
    char buf[64] = "";
    ssize_t r = read(rep[0], buf, sizeof(buf) - 1);
    cr_assert_gt(r, 0);
    int forks = -1, ferr = -1;
    cr_assert_eq(sscanf(buf, "%d %d", &forks, &ferr), 2);
    /* pids.max 16 counts the child itself: 15 forks, then EAGAIN. */
    cr_assert_eq(ferr, EAGAIN, "fork failed with %s", strerror(ferr));
    cr_assert_eq(forks, 15);

    pid_t *list = NULL;
    size_t n = 0;
    cr_assert_eq(cgroup_pids(cg, &list, &n, NULL), 0);
    cr_assert_eq(n, 16);
    free(list);

    /* Kill and destroy through the state form, as `delete` does. */
    autofree char *text = cgroup_serialize(cg);
    struct brig_cgroup *loaded = NULL;
    cr_assert_eq(cgroup_load(text, &loaded, NULL), 0);
    autoerr struct brig_error *ke = NULL;
    cr_assert_eq(cgroup_kill(loaded, SIGKILL, &ke), 0, "%s", ke ? ke->msg : "");
    int st = 0;
    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    autoerr struct brig_error *de = NULL;
    cr_assert_eq(cgroup_destroy(loaded, &de), 0, "%s", de ? de->msg : "");
    reap_all();
    cr_assert(nothing_created(inner));
    cgroup_free(loaded);
    cgroup_free(cg);
}

/* The init joins its cgroups itself (cgroup_attach_self, v1 "tasks" <- 0):
 * afterwards every hierarchy lists it, v2 too when not cloned into it. */
Test(cgroup_root, attach_self_joins_every_hierarchy)
{
    need_root();
    autofree char *inner = unit_path();
    struct brig_spec s;
    spec_for(&s, inner);
    struct brig_cgroup *cg = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cgroup_create(&s, "c5", false, &cg, &e), 0, "%s", e ? e->msg : "");
    int rep[2];
    cr_assert_eq(pipe(rep), 0);
    pid_t child = fork();
    cr_assert_geq(child, 0);
    if (child == 0) {
        struct brig_error *ce = NULL;
        char r = cgroup_attach_self(cg, false, &ce) == 0 ? 'y' : 'n';
        if (write(rep[1], &r, 1) != 1) _exit(1);
        pause();
        _exit(0);
    }
    close(rep[1]);
    char r = 0;
    cr_assert_eq(read(rep[0], &r, 1), 1);
    cr_assert_eq(r, 'y', "cgroup_attach_self failed");
    for (size_t i = 0; i < cg->n_dirs; i++) {
        autofree pid_t *pids = NULL;
        size_t n = 0;
        cr_assert_eq(cg_read_pids(cg->dirs[i].path, &pids, &n, NULL), 0);
        cr_assert_eq(n, 1, "%s lists %zu pids", cg->dirs[i].path, n);
        cr_assert_eq(pids[0], child, "%s", cg->dirs[i].path);
    }
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    autoerr struct brig_error *de = NULL;
    cr_assert_eq(cgroup_destroy(cg, &de), 0, "%s", de ? de->msg : "");
    cr_assert(nothing_created(inner));
    cgroup_free(cg);
}

Test(cgroup_root, sigterm_freezes_and_thaws)
{
    need_root();
    autofree char *inner = unit_path();
    struct brig_spec s;
    spec_for(&s, inner);
    struct brig_cgroup *cg = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cgroup_create(&s, "c2", false, &cg, &e), 0, "%s", e ? e->msg : "");
    pid_t child = fork();
    if (child == 0) {
        for (;;) pause();
    }
    cr_assert_eq(cgroup_attach(cg, child, false, NULL), 0);
    cr_assert_eq(cgroup_kill(cg, SIGTERM, NULL), 0);
    int st = 0;
    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM, "status %x", st);
    const struct cg_dir *v2 = cg_dir_v2(cg), *fz = cg_dir_v1(cg, "freezer");
    if (v2) cr_assert_not(cgv2_frozen(v2->path), "left frozen");
    if (fz) cr_assert_not(cgv1_frozen(fz->path), "left frozen");
    cr_assert_eq(cgroup_destroy(cg, NULL), 0);
    cr_assert(nothing_created(inner));
    cgroup_free(cg);
}

Test(cgroup_root, missing_controller_fails_closed)
{
    need_root();
    struct cg_layout l;
    cr_assert_eq(cg_layout_detect(&l, NULL), 0);
    bool have_net_cls = cg_layout_v1(&l, "net_cls") != NULL;
    cg_layout_clear(&l);
    if (have_net_cls) cr_skip_test("net_cls is mounted here: nothing is missing");
    autofree char *inner = unit_path();
    struct brig_spec s;
    spec_for(&s, inner);
    s.linux_cfg.resources.memory.limit = (struct brig_opt_i64){true, 64 << 20};
    s.linux_cfg.resources.network.has_class_id = true;
    s.linux_cfg.resources.network.class_id = 0x100001;
    struct brig_cgroup *cg = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cgroup_create(&s, "c3", false, &cg, &e), -1);
    cr_assert(strstr(e->msg, "linux.resources.network.classID: net_cls") != NULL, "%s", e->msg);
    cr_assert(nothing_created(inner));
}

Test(cgroup_root, bad_hugepage_size_fails_closed)
{
    need_root();
    autofree char *inner = unit_path();
    struct brig_spec s;
    spec_for(&s, inner);
    struct brig_hugepage_limit hl = {.page_size = "64kB", .limit = 1 << 20};
    s.linux_cfg.resources.hugepage_limits = &hl;
    s.linux_cfg.resources.n_hugepage_limits = 1;
    uint64_t *sizes = NULL;
    size_t n = 0;
    cr_assert_eq(cg_hugepage_sizes(&sizes, &n, NULL), 0);
    for (size_t i = 0; i < n; i++)
        if (sizes[i] == 64) cr_skip_test("this kernel offers 64kB huge pages");
    free(sizes);
    struct brig_cgroup *cg = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cgroup_create(&s, "c4", false, &cg, &e), -1);
    cr_assert(strstr(e->msg, "hugepageLimits[0].pageSize: 64kB is not a huge page size") != NULL
              || strstr(e->msg, "linux.resources.hugepageLimits: hugetlb controller not") != NULL,
              "%s", e->msg);
    cr_assert(nothing_created(inner));
}

Test(cgroup_root, failure_after_mkdir_is_undone)
{
    need_root();
    autofree char *inner = unit_path();
    struct brig_spec s;
    spec_for(&s, inner);
    /* Passes every check before mkdir; the kernel refuses the write. */
    s.linux_cfg.resources.cpu.cpus = "4095";
    struct brig_cgroup *cg = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cgroup_create(&s, "c5", false, &cg, &e), -1);
    cr_assert(strstr(e->msg, "linux.resources.cpu.cpus") != NULL, "%s", e->msg);
    cr_assert(nothing_created(inner));
}

Test(cgroup_root, unified_map_refused_on_v1_controllers)
{
    need_root();
    struct cg_layout l;
    cr_assert_eq(cg_layout_detect(&l, NULL), 0);
    const struct cg_hier *v2 = cg_layout_v2(&l);
    bool memory_on_v2 = v2 != NULL && cg_list_has(v2->controllers, "memory");
    cg_layout_clear(&l);
    if (memory_on_v2) cr_skip_test("memory is on cgroup v2 here: the map is allowed");
    autofree char *inner = unit_path();
    struct brig_spec s;
    spec_for(&s, inner);
    struct brig_kv kv = {.key = "memory.max", .value = "1000000"};
    s.linux_cfg.resources.unified = &kv;
    s.linux_cfg.resources.n_unified = 1;
    struct brig_cgroup *cg = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cgroup_create(&s, "c6", false, &cg, &e), -1);
    cr_assert(strstr(e->msg, "linux.resources.unified") != NULL, "%s", e->msg);
    cr_assert(nothing_created(inner));
}

Test(cgroup_root, v1_device_allowlist)
{
    need_root();
    struct cg_layout l;
    cr_assert_eq(cg_layout_detect(&l, NULL), 0);
    bool v1dev = cg_layout_v1(&l, "devices") != NULL;
    cg_layout_clear(&l);
    if (!v1dev) cr_skip_test("no cgroup v1 devices hierarchy");
    autofree char *inner = unit_path();
    struct brig_spec s;
    spec_for(&s, inner);
    struct brig_device_rule rules[3] = {
        {.allow = false, .type = 'a', .major = -1, .minor = -1, .access = "rwm"},
        {.allow = true, .type = 'c', .major = 10, .minor = 229, .access = "rw"},
        /* "a" with numbers: must not become the kernel's "a" (= everything). */
        {.allow = true, .type = 'a', .major = 7, .minor = -1, .access = "r"},
    };
    s.linux_cfg.resources.devices = rules;
    s.linux_cfg.resources.n_devices = 3;
    struct brig_cgroup *cg = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cgroup_create(&s, "c7", false, &cg, &e), 0, "%s", e ? e->msg : "");
    autofree char *list = NULL;
    cr_assert_eq(cg_read(cg_dir_v1(cg, "devices")->path, "devices.list", &list, NULL), 0);
    cr_assert(strstr(list, "c 10:229 rw\n") != NULL, "%s", list);
    cr_assert(strstr(list, "c 7:* r\n") != NULL, "%s", list);
    cr_assert(strstr(list, "b 7:* r\n") != NULL, "%s", list);
    cr_assert(strstr(list, "c 1:3 rwm\n") != NULL, "%s", list);
    cr_assert(strstr(list, "a *:* rwm") == NULL, "still allows everything: %s", list);
    cr_assert(strstr(list, "c 1:1 ") == NULL, "/dev/mem allowed: %s", list);
    cr_assert(strstr(list, "c 5:1 ") == NULL, "the host's console allowed: %s", list);
    cr_assert_eq(cgroup_destroy(cg, NULL), 0);
    cr_assert(nothing_created(inner));
    cgroup_free(cg);
}

/* ---- v2 eBPF device filter, on the v2 hierarchy alone ---- */

/* Child: open each path with its flags, write one errno per line. */
static void try_opens(int go, int report, const char *const *paths, const int *flags, size_t n)
{
    char b;
    if (read(go, &b, 1) != 1) _exit(1);
    for (size_t i = 0; i < n; i++) {
        int fd = open(paths[i], flags[i] | O_CLOEXEC);
        dprintf(report, "%d\n", fd < 0 ? errno : 0);
        if (fd >= 0) close(fd);
    }
    _exit(0);
}

/* Run the opens in a child placed in a fresh v2 cgroup carrying the filter
 * for rules; results[i] is the errno of open i (0: allowed). */
static void opens_under_filter(const struct brig_device_rule *rules, size_t nr,
                               const char *const *paths, const int *flags, size_t n, int *results)
{
    struct cg_layout l;
    cr_assert_eq(cg_layout_detect(&l, NULL), 0);
    const struct cg_hier *v2 = cg_layout_v2(&l);
    if (v2 == NULL) {
        cg_layout_clear(&l);
        cr_skip_test("no cgroup v2 mount");
    }
    autofree char *dir = brig_asprintf("%s/brig-unit-%d-%d", v2->mnt, (int)getpid(), ++seq);
    cg_layout_clear(&l);
    cr_assert_eq(mkdir(dir, 0755), 0, "mkdir %s: %s", dir, strerror(errno));
    struct brig_resources r = {.present = true, .devices = (struct brig_device_rule *)rules,
                               .n_devices = nr};
    autoerr struct brig_error *e = NULL;
    int rc = cgv2_devices_apply(dir, &r, &e);
    if (rc < 0) rmdir(dir);
    cr_assert_eq(rc, 0, "%s", e ? e->msg : "");
    int go[2], rep[2];
    cr_assert_eq(pipe(go), 0);
    cr_assert_eq(pipe(rep), 0);
    pid_t child = fork();
    if (child == 0) {
        close(go[1]);
        close(rep[0]);
        try_opens(go[0], rep[1], paths, flags, n);
    }
    close(go[0]);
    close(rep[1]);
    autoerr struct brig_error *we = NULL;
    cr_assert_eq(cg_writef(dir, "cgroup.procs", NULL, &we, "%d", (int)child), 0, "%s",
                 we ? we->msg : "");
    cr_assert_eq(write(go[1], "g", 1), 1);
    int st;
    cr_assert_eq(waitpid(child, &st, 0), child);
    char buf[256] = "";
    ssize_t got = read(rep[0], buf, sizeof(buf) - 1);
    cr_assert_gt(got, 0);
    char *save = NULL, *t = strtok_r(buf, "\n", &save);
    for (size_t i = 0; i < n; i++, t = strtok_r(NULL, "\n", &save)) {
        cr_assert_not_null(t);
        results[i] = atoi(t);
    }
    cr_assert_eq(rmdir(dir), 0, "rmdir %s: %s", dir, strerror(errno));
}

Test(cgroup_root, v2_device_filter_defaults)
{
    need_root();
    if (access("/dev/kmsg", F_OK) < 0) cr_skip_test("no /dev/kmsg to be denied");
    const char *const paths[] = {"/dev/null", "/dev/full", "/dev/kmsg"};
    const int flags[] = {O_RDWR, O_RDONLY, O_RDONLY};
    int res[3];
    opens_under_filter(NULL, 0, paths, flags, 3, res);
    cr_assert_eq(res[0], 0, "/dev/null: %s", strerror(res[0]));
    cr_assert_eq(res[1], 0, "/dev/full: %s", strerror(res[1]));
    cr_assert_eq(res[2], EPERM, "/dev/kmsg (1:11) not in the allowlist: %s", strerror(res[2]));
}

Test(cgroup_root, v2_device_filter_rules_last_wins)
{
    need_root();
    if (access("/dev/kmsg", F_OK) < 0) cr_skip_test("no /dev/kmsg");
    const struct brig_device_rule rules[] = {
        {.allow = false, .type = 'a', .major = -1, .minor = -1, .access = "rwm"},
        {.allow = true, .type = 'c', .major = 1, .minor = 11, .access = "rw"},
        {.allow = false, .type = 'c', .major = 1, .minor = 11, .access = "w"},
        {.allow = false, .type = 'c', .major = 1, .minor = 7, .access = ""},
    };
    const char *const paths[] = {"/dev/kmsg", "/dev/kmsg", "/dev/null", "/dev/full"};
    const int flags[] = {O_RDONLY, O_WRONLY, O_RDWR, O_RDONLY};
    int res[4];
    opens_under_filter(rules, 4, paths, flags, 4, res);
    cr_assert_eq(res[0], 0, "read of 1:11 allowed by rule 1: %s", strerror(res[0]));
    cr_assert_eq(res[1], EPERM, "write of 1:11 denied by the later rule 2: %s", strerror(res[1]));
    cr_assert_eq(res[2], 0, "/dev/null stays allowed (defaults): %s", strerror(res[2]));
    /* The defaults come after the config's rules, so /dev/full (1:7) is
     * allowed again, as with runc. */
    cr_assert_eq(res[3], 0, "/dev/full: %s", strerror(res[3]));
}

Test(cgroup_root, freeze_stops_and_thaw_resumes)
{
    need_root();
    autofree char *inner = unit_path();
    struct brig_spec s;
    spec_for(&s, inner);
    struct brig_cgroup *cg = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cgroup_create(&s, "c8", false, &cg, &e), 0, "%s", e ? e->msg : "");
    int p[2];
    cr_assert_eq(pipe2(p, O_NONBLOCK), 0);
    pid_t child = fork();
    if (child == 0) {
        /* Tick every 10 ms. */
        for (;;) {
            (void)!write(p[1], "t", 1);
            usleep(10000);
        }
    }
    close(p[1]);
    cr_assert_eq(cgroup_attach(cg, child, false, NULL), 0);
    autoerr struct brig_error *fe = NULL;
    cr_assert_eq(cgroup_freeze(cg, true, &fe), 0, "%s", fe ? fe->msg : "");
    cr_assert(cgroup_frozen(cg));
    char buf[4096];
    while (read(p[0], buf, sizeof(buf)) > 0) {}   /* drain ticks from before */
    usleep(200000);
    cr_assert_eq(read(p[0], buf, sizeof(buf)), -1, "a frozen process ticked");
    cr_assert_eq(cgroup_freeze(cg, false, NULL), 0);
    cr_assert_not(cgroup_frozen(cg));
    usleep(200000);
    cr_assert_gt(read(p[0], buf, sizeof(buf)), 0, "no tick after thaw");
    /* Destroy kills a frozen container too. */
    cr_assert_eq(cgroup_freeze(cg, true, NULL), 0);
    autoerr struct brig_error *de = NULL;
    cr_assert_eq(cgroup_destroy(cg, &de), 0, "%s", de ? de->msg : "");
    int st;
    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    cr_assert(nothing_created(inner));
    cgroup_free(cg);
}

Test(cgroup_root, memory_limit_oom_kills)
{
    need_root();
    autofree char *inner = unit_path();
    struct brig_spec s;
    spec_for(&s, inner);
    int64_t lim = 16 << 20;
    s.linux_cfg.resources.memory.limit = (struct brig_opt_i64){true, lim};
    /* memory+swap == memory: no swapping out of the limit. */
    s.linux_cfg.resources.memory.swap = (struct brig_opt_i64){true, lim};
    struct brig_cgroup *cg = NULL;
    autoerr struct brig_error *e = NULL;
    if (cgroup_create(&s, "c9", false, &cg, &e) < 0) {
        if (strstr(e->msg, "swap accounting") != NULL) cr_skip_test("%s", e->msg);
        cr_assert_fail("%s", e->msg);
    }
    int go[2];
    cr_assert_eq(pipe(go), 0);
    pid_t child = fork();
    if (child == 0) {
        close(go[1]);
        char b;
        if (read(go[0], &b, 1) != 1) _exit(1);
        size_t n = 64 << 20;
        volatile char *m = malloc(n);
        if (m == NULL) _exit(2);
        for (size_t i = 0; i < n; i += 4096) m[i] = 1;   /* volatile: not optimized out */
        _exit(0);
    }
    close(go[0]);
    cr_assert_eq(cgroup_attach(cg, child, false, NULL), 0);
    cr_assert_eq(write(go[1], "g", 1), 1);
    int st;
    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "64 MiB under a 16 MiB limit: status %x",
              st);
    uint64_t kills = 0;
    autoerr struct brig_error *oe = NULL;
    cr_assert_eq(cgroup_oom_kills(cg, &kills, &oe), 0, "%s", oe ? oe->msg : "");
    cr_assert_geq(kills, 1);
    cr_assert_eq(cgroup_destroy(cg, NULL), 0);
    cr_assert(nothing_created(inner));
    cgroup_free(cg);
}

/* Exists in every hierarchy of cg (true) or in none (false). */
static bool dirs_exist(const struct brig_cgroup *cg, const char *suffix, bool want)
{
    for (size_t i = 0; i < cg->n_dirs; i++) {
        autofree char *p = brig_asprintf("%s%s", cg->dirs[i].path, suffix);
        if ((access(p, F_OK) == 0) != want) {
            cr_log_error("%s %s", p, want ? "missing" : "still there");
            return false;
        }
    }
    return true;
}

Test(cgroup_root, destroy_removes_only_what_it_created)
{
    need_root();
    autofree char *outer = unit_path();
    struct brig_spec s;
    spec_for(&s, outer);
    struct brig_cgroup *a = NULL, *b = NULL, *c = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cgroup_create(&s, "a", false, &a, &e), 0, "%s", e ? e->msg : "");
    for (size_t i = 0; i < a->n_dirs; i++) cr_assert_eq(a->dirs[i].created, 1);

    /* b lives inside a's directory, which brig did not create for b. */
    autofree char *inner = brig_asprintf("%s/sub", outer);
    spec_for(&s, inner);
    cr_assert_eq(cgroup_create(&s, "b", false, &b, NULL), 0);
    for (size_t i = 0; i < b->n_dirs; i++) cr_assert_eq(b->dirs[i].created, 1);
    cr_assert_eq(cgroup_destroy(b, NULL), 0);
    cr_assert(dirs_exist(a, "", true), "destroying b removed a's directory");
    cr_assert(dirs_exist(a, "/sub", false));

    /* A brand-new nested path: every level is brig's and goes away. */
    autofree char *deep = brig_asprintf("%s/p/q/r", outer);
    spec_for(&s, deep);
    cr_assert_eq(cgroup_create(&s, "c", false, &c, NULL), 0);
    for (size_t i = 0; i < c->n_dirs; i++) cr_assert_eq(c->dirs[i].created, 3);
    cr_assert_eq(cgroup_destroy(c, NULL), 0);
    cr_assert(dirs_exist(a, "/p", false));
    cr_assert(dirs_exist(a, "", true));

    /* A leaf that already holds processes is someone else's: refused. */
    pid_t child = fork();
    if (child == 0) {
        for (;;) pause();
    }
    cr_assert_eq(cgroup_attach(a, child, false, NULL), 0);
    spec_for(&s, outer);
    struct brig_cgroup *dup = NULL;
    autoerr struct brig_error *de = NULL;
    cr_assert_eq(cgroup_create(&s, "dup", false, &dup, &de), -1);
    cr_assert(strstr(de->msg, "already has 1 process") != NULL, "%s", de->msg);
    cr_assert(dirs_exist(a, "", true), "the refused create removed a's directories");

    cr_assert_eq(cgroup_destroy(a, NULL), 0);
    int st;
    cr_assert_eq(waitpid(child, &st, 0), child);
    cr_assert(nothing_created(outer));
    cgroup_free(a);
    cgroup_free(b);
    cgroup_free(c);
}

/* A process forked and joined to cg by itself (cgroup_attach_self); it
 * sleeps until killed. */
static pid_t joined_sleeper(const struct brig_cgroup *cg)
{
    int rep[2];
    cr_assert_eq(pipe(rep), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char r = cgroup_attach_self(cg, false, NULL) == 0 ? 'y' : 'n';
        if (write(rep[1], &r, 1) != 1) _exit(1);
        for (;;) pause();
    }
    close(rep[1]);
    char r = 0;
    cr_assert_eq(read(rep[0], &r, 1), 1);
    close(rep[0]);
    cr_assert_eq(r, 'y', "cgroup_attach_self failed");
    return pid;
}

static bool lists(const char *dir, pid_t pid)
{
    autofree pid_t *pids = NULL;
    size_t n = 0;
    if (cg_read_pids(dir, &pids, &n, NULL) < 0) return false;
    for (size_t i = 0; i < n; i++)
        if (pids[i] == pid) return true;
    return false;
}

/* An exec's lean child cgroup (cgroup_child.c) has a directory of its own
 * where it is killed, measured, listed and locked (v2, freezer, memory,
 * cpuacct, pids, the container's first hierarchy);
 * in the other v1 hierarchies its process joins the container's own
 * directory, never stays where it was. Killing the child kills only it,
 * and removing it leaves the container's cgroup and its init. */
Test(cgroup_root, lean_child_owns_kill_stat_and_lock_hierarchies_and_joins_the_rest)
{
    need_root();
    autofree char *inner = unit_path();
    struct brig_spec s;
    spec_for(&s, inner);
    struct brig_cgroup *cg = NULL, *child = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(cgroup_create(&s, "c9", false, &cg, &e), 0, "%s", e ? e->msg : "");
    pid_t init = joined_sleeper(cg);
    cr_assert_eq(cgroup_child_create(cg, "x-0123456789ab", true, &child, &e), 0, "%s", e ? e->msg : "");
    pid_t cmd = joined_sleeper(child);

    size_t owned = 0, joined = 0;
    for (size_t i = 0; i < cg->n_dirs; i++) {
        const struct cg_dir *d = &cg->dirs[i];
        autofree char *own = brig_asprintf("%s/x-0123456789ab", d->path);
        bool kills_or_measures = i == 0 /* the lock */ || d->v2 || cg_list_has(d->controllers, "freezer") ||
                                 cg_list_has(d->controllers, "memory") || cg_list_has(d->controllers, "cpuacct") ||
                                 cg_list_has(d->controllers, "pids");
        cr_assert(lists(d->path, init), "%s: the init left the container's cgroup", d->path);
        if (kills_or_measures) {
            owned++;
            cr_assert(lists(own, cmd), "%s: the command is not in the child", own);
            cr_assert(!lists(d->path, cmd), "%s: the command is in the container's own", d->path);
        } else {
            joined++;
            cr_assert(access(own, F_OK) < 0 && errno == ENOENT, "%s: made where nothing needs it", own);
            cr_assert(lists(d->path, cmd), "%s: the command did not join the container's own", d->path);
        }
    }
    cr_log_info("child: own directory in %zu hierarchies, the container's in %zu", owned, joined);
    cr_assert_gt(owned, 0);
    cr_assert_eq(child->n_dirs, owned);
    cr_assert_eq(child->n_joins, joined);
    /* locked where every brig locks and reaps it: the container's first */
    autofree char *lockdir = brig_asprintf("%s/x-0123456789ab", cg->dirs[0].path);
    cr_assert_str_eq(child->dirs[0].path, lockdir);

    /* The exec's lock and reaper look where it was made. */
    char **names = NULL;
    size_t n = 0;
    cr_assert_eq(cgroup_child_list_lockable(cg, "x-", &names, &n, NULL), 0);
    cr_assert_eq(n, 1);
    cr_assert_str_eq(names[0], "x-0123456789ab");
    brig_strv_free(names);
    cr_assert(cgroup_child_busy(cg, "x-0123456789ab"));

    autoerr struct brig_error *de = NULL;
    cr_assert_eq(cgroup_destroy(child, &de), 0, "%s", de ? de->msg : "");
    int st;
    cr_assert_eq(waitpid(cmd, &st, 0), cmd);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    cr_assert_eq(waitpid(init, &st, WNOHANG), 0, "the container's init was killed with the child");
    cr_assert(!cgroup_child_busy(cg, "x-0123456789ab"));
    cgroup_free(child);

    /* A helper's (not lean): a directory in every hierarchy, none joined. */
    struct brig_cgroup *helper = NULL;
    cr_assert_eq(cgroup_child_create(cg, "brig-wswatch", false, &helper, NULL), 0);
    cr_assert_eq(helper->n_dirs, cg->n_dirs);
    cr_assert_eq(helper->n_joins, 0);
    cr_assert(dirs_exist(cg, "/brig-wswatch", true));
    cr_assert_eq(cgroup_destroy(helper, NULL), 0);
    cgroup_free(helper);
    cr_assert(dirs_exist(cg, "/brig-wswatch", false));

    /* One made by an older brig, in every hierarchy: opened, it is
     * removed from all of them. */
    for (size_t i = 0; i < cg->n_dirs; i++) {
        autofree char *old = brig_asprintf("%s/x-ba9876543210", cg->dirs[i].path);
        cr_assert_eq(mkdir(old, 0755), 0, "%s", old);
    }
    cr_assert_eq(cgroup_child_open(cg, "x-ba9876543210", &child, NULL), 0);
    cr_assert_eq(cgroup_destroy(child, NULL), 0);
    cgroup_free(child);
    cr_assert(dirs_exist(cg, "/x-ba9876543210", false));

    kill(init, SIGKILL);
    waitpid(init, NULL, 0);
    cr_assert_eq(cgroup_destroy(cg, NULL), 0);
    cr_assert(nothing_created(inner));
    cgroup_free(cg);
}
