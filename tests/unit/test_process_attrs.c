/* identity_apply and the per-process attributes, applied in forked
 * children; sysctl/hostname validation as pure checks. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "linux/identity.h"
#include "linux/process_attrs.h"
#include "util/error.h"
#include "sec_child.h"

static void need_root(void)
{
    if (geteuid() != 0) cr_skip_test("needs root");
}

static void expect_err(int r, struct brig_error *err, const char *expect)
{
    cr_assert_eq(r, -1, "expected failure with \"%s\"", expect);
    cr_assert_not_null(err);
    cr_assert(strstr(err->msg, expect) != NULL, "message \"%s\" lacks \"%s\"", err->msg, expect);
    brig_error_free(err);
}

static void expect_ok(int r, struct brig_error *err)
{
    cr_assert_eq(r, 0, "unexpected error: %s", err ? err->msg : "?");
}

/* ---- identity ----------------------------------------------------------- */

static int identity_child(void *arg, int fd)
{
    struct brig_user *u = arg;
    struct brig_error *err = NULL;
    if (identity_apply(u, false, &err) < 0) {
        sec_out(fd, "ERR %s", err->msg);
        return 1;
    }
    uid_t ru, eu, su;
    gid_t rg, eg, sg;
    gid_t groups[16];
    getresuid(&ru, &eu, &su);
    getresgid(&rg, &eg, &sg);
    int n = getgroups(16, groups);
    mode_t old = umask(0);
    sec_out(fd, "uid=%u/%u/%u gid=%u/%u/%u groups=", ru, eu, su, rg, eg, sg);
    for (int i = 0; i < n; i++) sec_out(fd, "%s%u", i ? "," : "", groups[i]);
    sec_out(fd, " umask=%04o keepcaps=%d", old, prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0));
    return 0;
}

Test(identity, switch_uid_gid_groups_umask)
{
    need_root();
    uint32_t gids[] = { 1000, 2000, 3000 };
    struct brig_user u = { .uid = 1000, .gid = 1001, .additional_gids = gids,
                           .n_additional_gids = 3, .has_umask = true, .umask = 0077 };
    struct sec_child r;
    cr_assert_eq(sec_child_run(identity_child, &u, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert_str_eq(r.out, "uid=1000/1000/1000 gid=1001/1001/1001 groups=1000,2000,3000 "
                            "umask=0077 keepcaps=0");
}

Test(identity, no_groups_clears_root_groups_default_umask)
{
    need_root();
    struct brig_user u = { .uid = 0, .gid = 0 };
    struct sec_child r;
    cr_assert_eq(sec_child_run(identity_child, &u, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert_str_eq(r.out, "uid=0/0/0 gid=0/0/0 groups= umask=0022 keepcaps=0");
}

/* A user namespace with setgroups "deny": skipped when no groups are asked,
 * a clear error when some are. */
static int userns_child(void *arg, int fd)
{
    struct brig_user *u = arg;
    struct brig_error *err = NULL;
    char map[64];
    if (unshare(CLONE_NEWUSER) < 0) return 77;
    int f = open("/proc/self/setgroups", O_WRONLY);
    if (f < 0 || write(f, "deny", 4) != 4) return 78;
    close(f);
    snprintf(map, sizeof(map), "0 %u 1", (unsigned)0);
    f = open("/proc/self/uid_map", O_WRONLY);
    if (f < 0 || write(f, map, strlen(map)) < 0) return 79;
    close(f);
    f = open("/proc/self/gid_map", O_WRONLY);
    if (f < 0 || write(f, map, strlen(map)) < 0) return 80;
    close(f);
    if (identity_apply(u, true, &err) < 0) {
        sec_out(fd, "ERR %s", err->msg);
        return 1;
    }
    sec_out(fd, "ok uid=%u", getuid());
    return 0;
}

Test(identity, userns_setgroups_denied)
{
    need_root();
    struct brig_user u = { .uid = 0, .gid = 0 };
    struct sec_child r;
    cr_assert_eq(sec_child_run(userns_child, &u, &r), 0);
    if (sec_exit_code(&r) == 77) cr_skip_test("user namespaces unavailable");
    cr_assert_eq(sec_exit_code(&r), 0, "child: status %d %s", r.status, r.out);
    cr_assert_str_eq(r.out, "ok uid=0");

    uint32_t gids[] = { 0 };
    u.additional_gids = gids;
    u.n_additional_gids = 1;
    cr_assert_eq(sec_child_run(userns_child, &u, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 1, "child: status %d %s", r.status, r.out);
    cr_assert(strstr(r.out, "ERR process.user.additionalGids: setgroups is denied") != NULL,
              "%s", r.out);
}

/* ---- sysctl and hostname validation ------------------------------------- */

static struct brig_spec spec_with(struct brig_kv *kv, size_t n)
{
    struct brig_spec s = { .has_linux = true };
    s.linux_cfg.sysctl = kv;
    s.linux_cfg.n_sysctl = n;
    return s;
}

static void sysctl_one(const char *key, const enum brig_ns_type *ns, size_t n_ns,
                       const char *expect)
{
    struct brig_kv kv = { (char *)key, "1" };
    struct brig_spec s = spec_with(&kv, 1);
    for (size_t i = 0; i < n_ns; i++) s.linux_cfg.namespaces[ns[i]].present = true;
    struct brig_error *err = NULL;
    int r = sysctl_validate(&s, &err);
    if (expect == NULL)
        expect_ok(r, err);
    else
        expect_err(r, err, expect);
}

Test(sysctl, validate)
{
    enum brig_ns_type ipc[] = { BRIG_NS_IPC }, net[] = { BRIG_NS_NETWORK }, uts[] = { BRIG_NS_UTS };
    sysctl_one("kernel.shmmax", ipc, 1, NULL);
    sysctl_one("kernel.msgmnb", ipc, 1, NULL);
    sysctl_one("kernel.sem", ipc, 1, NULL);
    sysctl_one("kernel.shm_rmid_forced", ipc, 1, NULL);
    sysctl_one("fs.mqueue.queues_max", ipc, 1, NULL);
    sysctl_one("kernel.shmmax", net, 1, "linux.sysctl.kernel.shmmax: needs a private ipc namespace");
    sysctl_one("fs.mqueue.msg_max", NULL, 0, "linux.sysctl.fs.mqueue.msg_max: needs a private ipc");
    sysctl_one("net.ipv4.ip_forward", net, 1, NULL);
    sysctl_one("net.ipv4.ip_forward", ipc, 1, "linux.sysctl.net.ipv4.ip_forward: needs a private network");
    sysctl_one("kernel.domainname", uts, 1, NULL);
    /* as runc: the hostname field is the one way to set it */
    sysctl_one("kernel.hostname", uts, 1, "linux.sysctl.kernel.hostname: not allowed, it conflicts "
               "with the \"hostname\" field");
    sysctl_one("kernel.domainname", ipc, 1, "linux.sysctl.kernel.domainname: needs a private uts");
    sysctl_one("vm.swappiness", ipc, 1, "linux.sysctl.vm.swappiness: not namespaced");
    sysctl_one("kernel.pid_max", ipc, 1, "linux.sysctl.kernel.pid_max: not namespaced");
    sysctl_one("net/ipv4/ip_forward", net, 1, "invalid key");
    sysctl_one("net.ipv4..ip_forward", net, 1, "invalid key");
    sysctl_one("net.ipv4.", net, 1, "invalid key");
    sysctl_one("", net, 1, "linux.sysctl: empty key");
}

Test(sysctl, joined_host_namespace_is_not_private)
{
    int r;
    struct brig_kv kv = { "net.ipv4.ip_forward", "1" };
    struct brig_spec s = spec_with(&kv, 1);
    s.linux_cfg.namespaces[BRIG_NS_NETWORK].present = true;
    s.linux_cfg.namespaces[BRIG_NS_NETWORK].path = "/proc/self/ns/net";
    struct brig_error *err = NULL;
    r = sysctl_validate(&s, &err);
    expect_err(r, err, "needs a private network namespace");
}

Test(sysctl, hostname_conflicts_with_kernel_hostname)
{
    int r;
    struct brig_kv kv = { "kernel.hostname", "a" };
    struct brig_spec s = spec_with(&kv, 1);
    s.linux_cfg.namespaces[BRIG_NS_UTS].present = true;
    s.hostname = "b";
    struct brig_error *err = NULL;
    r = sysctl_validate(&s, &err);
    expect_err(r, err, "linux.sysctl.kernel.hostname: not allowed, it conflicts with the \"hostname\" field");
    /* as crun: kernel.domainname beside another domainname is a conflict */
    kv.key = "kernel.domainname";
    s.hostname = NULL;
    s.domainname = "c";
    err = NULL;
    r = sysctl_validate(&s, &err);
    expect_err(r, err, "linux.sysctl.kernel.domainname: \"a\" conflicts with the \"domainname\" field (\"c\")");
    /* the same value in both is no conflict */
    s.domainname = "a";
    err = NULL;
    r = sysctl_validate(&s, &err);
    expect_ok(r, err);
}

Test(hostname, validate)
{
    int r;
    struct brig_spec s = { .has_linux = true, .hostname = "box" };
    struct brig_error *err = NULL;
    r = hostname_validate(&s, &err);
    expect_err(r, err, "hostname: needs a private uts namespace");
    err = NULL;
    s.hostname = NULL;
    s.domainname = "example.org";
    r = hostname_validate(&s, &err);
    expect_err(r, err, "domainname: needs a private uts namespace");
    err = NULL;
    s.linux_cfg.namespaces[BRIG_NS_UTS].present = true;
    r = hostname_validate(&s, &err);
    expect_ok(r, err);
    s.linux_cfg.namespaces[BRIG_NS_UTS].path = "/proc/self/ns/uts";
    r = hostname_validate(&s, &err);
    expect_err(r, err, "domainname: needs a private uts namespace");
    err = NULL;
    s.linux_cfg.namespaces[BRIG_NS_UTS].path = "/run/netns-like/uts";   /* joined: must exist */
    r = hostname_validate(&s, &err);
    expect_err(r, err, "linux.namespaces (uts): stat /run/netns-like/uts");
    err = NULL;
    s.linux_cfg.namespaces[BRIG_NS_UTS].path = NULL;
    s.hostname = "a-very-long-hostname-that-is-longer-than-sixty-four-bytes-for-sure-yes";
    r = hostname_validate(&s, &err);
    expect_err(r, err, "hostname: longer than 64 bytes");
    err = NULL;
    s.hostname = "";
    s.domainname = NULL;
    s.linux_cfg.namespaces[BRIG_NS_UTS].present = false;
    r = hostname_validate(&s, &err);
    expect_ok(r, err);
}

/* ---- sysctl and hostname applied in new namespaces ---------------------- */

static void read_trim(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (f == NULL) return;
    if (fgets(buf, (int)len, f) == NULL) buf[0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

static int ns_apply_child(void *arg, int fd)
{
    struct brig_spec *s = arg;
    struct brig_error *err = NULL;
    if (unshare(CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET) < 0) return 77;
    if (sysctl_validate(s, &err) < 0 || sysctl_apply(s, &err) < 0 ||
        hostname_validate(s, &err) < 0 || hostname_apply(s, &err) < 0) {
        sec_out(fd, "ERR %s", err->msg);
        return 1;
    }
    char a[64], b[64];
    struct utsname un;
    uname(&un);
    read_trim("/proc/sys/kernel/shmmni", a, sizeof(a));
    read_trim("/proc/sys/net/ipv4/ip_forward", b, sizeof(b));
    sec_out(fd, "shmmni=%s ip_forward=%s host=%s domain=%s", a, b, un.nodename, un.domainname);
    return 0;
}

Test(sysctl, apply_in_new_namespaces)
{
    need_root();
    char host_shmmni[64], host_fwd[64], host_name[256];
    read_trim("/proc/sys/kernel/shmmni", host_shmmni, sizeof(host_shmmni));
    read_trim("/proc/sys/net/ipv4/ip_forward", host_fwd, sizeof(host_fwd));
    gethostname(host_name, sizeof(host_name));

    struct brig_kv kv[] = { { "kernel.shmmni", "1234" }, { "net.ipv4.ip_forward", "1" } };
    struct brig_spec s = spec_with(kv, 2);
    s.linux_cfg.namespaces[BRIG_NS_IPC].present = true;
    s.linux_cfg.namespaces[BRIG_NS_NETWORK].present = true;
    s.linux_cfg.namespaces[BRIG_NS_UTS].present = true;
    s.hostname = "brig-test";
    s.domainname = "brig.example";
    struct sec_child r;
    cr_assert_eq(sec_child_run(ns_apply_child, &s, &r), 0);
    if (sec_exit_code(&r) == 77) cr_skip_test("cannot unshare ipc/uts/net here");
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert_str_eq(r.out, "shmmni=1234 ip_forward=1 host=brig-test domain=brig.example");

    /* The host kept its values. */
    char now[256];
    read_trim("/proc/sys/kernel/shmmni", now, sizeof(now));
    cr_assert_str_eq(now, host_shmmni);
    read_trim("/proc/sys/net/ipv4/ip_forward", now, sizeof(now));
    cr_assert_str_eq(now, host_fwd);
    gethostname(now, sizeof(now));
    cr_assert_str_eq(now, host_name);
}

/* ---- rlimits, oom, personality, scheduler, ioprio, nnp ------------------ */

static int rlimit_child(void *arg, int fd)
{
    struct brig_process *p = arg;
    struct brig_error *err = NULL;
    if (rlimits_apply(p, &err) < 0) {
        sec_out(fd, "ERR %s", err->msg);
        return 1;
    }
    struct rlimit a, b;
    getrlimit(RLIMIT_NOFILE, &a);
    getrlimit(RLIMIT_CORE, &b);
    sec_out(fd, "nofile=%llu/%llu core=%llu/%s", (unsigned long long)a.rlim_cur,
            (unsigned long long)a.rlim_max, (unsigned long long)b.rlim_cur,
            b.rlim_max == RLIM_INFINITY ? "inf" : "finite");
    return 0;
}

Test(rlimits, applied_and_errors_named)
{
    need_root();
    struct brig_rlimit rl[] = {
        { .resource = RLIMIT_CORE, .name = "RLIMIT_CORE", .soft = 0, .hard = UINT64_MAX },
        { .resource = RLIMIT_NOFILE, .name = "RLIMIT_NOFILE", .soft = 123, .hard = 456 },
    };
    struct brig_process p = { .rlimits = rl, .n_rlimits = 2 };
    struct sec_child r;
    cr_assert_eq(sec_child_run(rlimit_child, &p, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert_str_eq(r.out, "nofile=123/456 core=0/inf");

    /* Above fs.nr_open: the kernel refuses, the message names the entry. */
    rl[1].soft = rl[1].hard = UINT64_C(1) << 40;
    cr_assert_eq(sec_child_run(rlimit_child, &p, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 1, "child: %s", r.out);
    cr_assert(strstr(r.out, "ERR process.rlimits[1] (RLIMIT_NOFILE): setrlimit: ") != NULL,
              "%s", r.out);

    rl[1].soft = 10;
    rl[1].hard = 5;
    cr_assert_eq(sec_child_run(rlimit_child, &p, &r), 0);
    cr_assert(strstr(r.out, "ERR process.rlimits[1] (RLIMIT_NOFILE): soft limit 10 above hard") !=
              NULL, "%s", r.out);
}

static int attrs_child(void *arg, int fd)
{
    struct brig_spec *s = arg;
    struct brig_error *err = NULL;
    if (oom_score_adj_apply(&s->process, &err) < 0 || personality_apply(&s->linux_cfg, &err) < 0 ||
        scheduler_apply(&s->process, 0, &err) < 0 || io_priority_apply(&s->process, &err) < 0 ||
        no_new_privs_apply(&s->process, &err) < 0) {
        sec_out(fd, "ERR %s", err->msg);
        return 1;
    }
    char oom[32];
    read_trim("/proc/self/oom_score_adj", oom, sizeof(oom));
    errno = 0;
    int nice = getpriority(PRIO_PROCESS, 0);
    long io = syscall(SYS_ioprio_get, 1 /* IOPRIO_WHO_PROCESS */, 0);
    sec_out(fd, "oom=%s pers=%d sched=%d nice=%d ioprio=%ld/%ld nnp=%d", oom,
            personality(0xffffffff), sched_getscheduler(0), nice, io >> 13, io & 0xff,
            prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
    return 0;
}

Test(process_attrs, oom_personality_scheduler_ioprio_nnp)
{
    need_root();
    struct brig_spec s = { .has_linux = true };
    s.process.has_oom_score_adj = true;
    s.process.oom_score_adj = 500;
    s.linux_cfg.personality.present = true;
    s.linux_cfg.personality.domain = PER_LINUX32;
    s.process.has_scheduler = true;
    s.process.scheduler.policy = SCHED_BATCH;
    s.process.scheduler.nice = 5;
    s.process.has_io_priority = true;
    s.process.io_priority.klass = 2; /* IOPRIO_CLASS_BE */
    s.process.io_priority.priority = 6;
    s.process.no_new_privileges = true;
    struct sec_child r;
    cr_assert_eq(sec_child_run(attrs_child, &s, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    char expect[128];
    snprintf(expect, sizeof(expect), "oom=500 pers=%d sched=%d nice=5 ioprio=2/6 nnp=1",
             PER_LINUX32, SCHED_BATCH);
    cr_assert_str_eq(r.out, expect);
}

Test(process_attrs, bad_values_name_the_field)
{
    int r;
    struct brig_error *err = NULL;
    struct brig_process p = { .has_scheduler = true };
    p.scheduler.policy = SCHED_FIFO;
    p.scheduler.priority = 0;
    r = scheduler_apply(&p, 0, &err);
    expect_err(r, err, "process.scheduler.priority: 0 is out of range");
    err = NULL;
    p.scheduler.policy = SCHED_OTHER;
    p.scheduler.nice = 40;
    r = scheduler_apply(&p, 0, &err);
    expect_err(r, err, "process.scheduler.nice: 40 is out of range");
    err = NULL;
    p = (struct brig_process){ .has_io_priority = true };
    p.io_priority.klass = 9;
    r = io_priority_apply(&p, &err);
    expect_err(r, err, "process.ioPriority.class: unknown class 9");
    err = NULL;
    p = (struct brig_process){ .has_oom_score_adj = true, .oom_score_adj = 2000 };
    r = oom_score_adj_apply(&p, &err);
    expect_err(r, err, "process.oomScoreAdj: 2000 is out of range");
    err = NULL;
    struct brig_linux l = { .personality = { .present = true, .domain = 0x42 } };
    r = personality_apply(&l, &err);
    expect_err(r, err, "linux.personality.domain: unsupported");
    err = NULL;
    l.personality.domain = PER_LINUX;
    l.personality.flags = (char *[]){ "SOME_FLAG", NULL };
    l.personality.n_flags = 1;
    r = personality_apply(&l, &err);
    expect_err(r, err, "linux.personality.flags[0]: unknown flag");
}

/* ---- cwd ---------------------------------------------------------------- */

struct cwd_arg {
    const char *root;
    const char *cwd;
};

static int cwd_child(void *arg, int fd)
{
    struct cwd_arg *a = arg;
    struct brig_error *err = NULL;
    if (chroot(a->root) < 0 || chdir("/") < 0) return 77;
    struct brig_process p = { .cwd = (char *)a->cwd };
    if (cwd_apply(&p, &err) < 0) {
        sec_out(fd, "ERR %s", err->msg);
        return 1;
    }
    char buf[256];
    sec_out(fd, "cwd=%s", getcwd(buf, sizeof(buf)) ? buf : "?");
    return 0;
}

static void cwd_case(const char *root, const char *cwd, const char *expect)
{
    struct cwd_arg a = { root, cwd };
    struct sec_child r;
    cr_assert_eq(sec_child_run(cwd_child, &a, &r), 0);
    cr_assert_neq(sec_exit_code(&r), 77, "chroot failed");
    cr_assert(strstr(r.out, expect) != NULL, "cwd %s: \"%s\" lacks \"%s\"", cwd, r.out, expect);
}

Test(process_attrs, cwd_inside_root)
{
    need_root();
    char root[] = "/tmp/brig-cwd-XXXXXX";
    cr_assert_not_null(mkdtemp(root));
    char p[256];
    snprintf(p, sizeof(p), "%s/data", root);
    cr_assert_eq(mkdir(p, 0755), 0);
    snprintf(p, sizeof(p), "%s/file", root);
    close(open(p, O_CREAT | O_WRONLY, 0644));
    snprintf(p, sizeof(p), "%s/up", root);
    cr_assert_eq(symlink("../../../..", p), 0);   /* must stay at the root */
    snprintf(p, sizeof(p), "%s/dlink", root);
    cr_assert_eq(symlink("/data", p), 0);

    cwd_case(root, "/data", "cwd=/data");
    cwd_case(root, "/dlink", "cwd=/data");
    cwd_case(root, "/up", "cwd=/");
    cwd_case(root, "/missing", "ERR process.cwd (/missing): ");
    cwd_case(root, "/file", "ERR process.cwd (/file): ");
    cwd_case(root, "relative", "ERR process.cwd: must be an absolute path");

    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}

/* ---- fds ---------------------------------------------------------------- */

static int fds_child(void *arg, int fd)
{
    struct brig_error *err = NULL;
    /* fd 40 below first must be left alone; 41..43 from first on are
     * closed, but 42, kept (close-on-exec, as the sync socket is). */
    for (int i = 40; i <= 43; i++) {
        if (dup2(fd, i) < 0) return 77;
        fcntl(i, F_SETFD, i == 42 ? FD_CLOEXEC : 0);
    }
    if (dup2(fd, 1) < 0) return 77;
    if (fds_close_from(41, 42, &err) < 0) {
        sec_out(fd, "ERR %s", err->msg);
        return 1;
    }
    for (int i = 40; i <= 43; i++) {
        int fl = fcntl(i, F_GETFD);
        sec_out(fd, "%d:%s ", i, fl < 0 ? "closed" : (fl & FD_CLOEXEC) ? "cloexec" : "inherit");
    }
    /* What survives execve: only fd 40 of these (and 0-2). */
    char *argv[] = { "/bin/sh", "-c",
                     "for f in 40 41 42 43; do [ -e /proc/self/fd/$f ] && printf 'exec:%s ' $f; "
                     "done; exit 0", NULL };
    execv("/bin/sh", argv);
    return 2;
}

Test(process_attrs, fds_closed_from_first)
{
    if (access("/bin/sh", X_OK) < 0) cr_skip_test("no /bin/sh to exec");
    struct sec_child r;
    cr_assert_eq(sec_child_run(fds_child, NULL, &r), 0);
    cr_assert_eq(sec_exit_code(&r), 0, "child: %s", r.out);
    cr_assert_str_eq(r.out, "40:inherit 41:closed 42:cloexec 43:closed exec:40 ");
}
