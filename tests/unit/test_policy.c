/* The policy file parser (strict: errors name the key), human units, the
 * built-in profiles, the audit log and the judging of a probe report. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../policy/policy.h"
#include "../../policy/policy_internal.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/strutil.h"

static int parse(const char *text, struct brig_policy **p, struct brig_error **err)
{
    return policy_parse(text, strlen(text), p, err);
}

Test(policy_units, sizes)
{
    uint64_t v;
    cr_expect_eq(policy_parse_size("512MiB", &v), 0);
    cr_expect_eq(v, 512ull << 20);
    cr_expect_eq(policy_parse_size("1G", &v), 0);
    cr_expect_eq(v, 1ull << 30);
    cr_expect_eq(policy_parse_size("64k", &v), 0);
    cr_expect_eq(v, 64ull << 10);
    cr_expect_eq(policy_parse_size("4096", &v), 0);
    cr_expect_eq(v, 4096);
    static const char *const bad[] = { "", "1 G", "G", "-1", "1.5G", "1Q", "99999999999999999999", "20000000000T" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect_eq(policy_parse_size(bad[i], &v), -1, "%s", bad[i]);
}

Test(policy_units, durations_and_cpus)
{
    uint64_t v;
    cr_expect_eq(policy_parse_duration("10m", &v), 0);
    cr_expect_eq(v, 600);
    cr_expect_eq(policy_parse_duration("1h30m", &v), 0);
    cr_expect_eq(v, 5400);
    cr_expect_eq(policy_parse_duration("30s", &v), 0);
    cr_expect_eq(v, 30);
    cr_expect_eq(policy_parse_duration("10 minutes", &v), -1);
    cr_expect_eq(policy_parse_duration("", &v), -1);
    cr_expect_eq(policy_parse_duration("5d", &v), -1);
    cr_expect_eq(policy_parse_cpus("0.5", &v), 0);
    cr_expect_eq(v, 500);
    cr_expect_eq(policy_parse_cpus("4", &v), 0);
    cr_expect_eq(v, 4000);
    cr_expect_eq(policy_parse_cpus("1.2345", &v), -1);
    cr_expect_eq(policy_parse_cpus("1.", &v), -1);
}

Test(policy_parse, defaults_are_safe)
{
    autopolicy struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(parse("{}", &p, &err), 0);
    cr_expect_eq(p->mode, POLICY_ENFORCE);
    cr_expect_eq(p->network.mode, POLICY_NET_NONE);
    cr_expect(p->root_readonly);
    cr_expect_eq(p->caps, 0);
    cr_expect(p->no_new_privileges);
    cr_expect_eq(p->user.uid, 1000);
    cr_expect_eq(p->limits.pids, 256);
    cr_expect_eq(p->n_tmpfs, 2);
    cr_expect_null(p->hooks[0]);
    bool has_sock = false;
    for (char **f = p->forbidden_paths; *f; f++) has_sock |= strcmp(*f, "/var/run/docker.sock") == 0;
    cr_expect(has_sock);
}

struct bad_policy {
    const char *json;
    const char *expect;
};

static const struct bad_policy bad[] = {
    { "{\"capabilites\": []}", "capabilites: unknown key" },
    /* a text handed to the parser (a snapshot, a config annotation) never reads a base file */
    { "{\"extends\": \"pi\"}", "extends: resolved only when a policy is read by its name or path" },
    { "{\"limits\": {\"memroy\": \"1G\"}}", "limits.memroy: unknown key" },
    { "{\"limits\": {\"memory\": \"1 GB\"}}", "limits.memory: \"1 GB\" is not a size" },
    { "{\"limits\": {\"memory\": true}}", "limits.memory" },
    { "{\"limits\": {\"pids\": 0}}", "limits.pids" },
    { "{\"limits\": {\"memory\": \"1k\"}}", "limits.memory" },
    { "{\"limits\": {\"cpus\": \"lots\"}}", "limits.cpus" },
    { "{\"mode\": \"lenient\"}", "mode: \"lenient\"" },
    { "{\"network\": {\"mode\": \"host\"}}", "network.mode" },
    { "{\"network\": {\"mode\": \"netns\"}}", "network.path: required" },
    { "{\"network\": {\"mode\": \"none\", \"path\": \"/x\"}}", "network.path" },
    { "{\"tmpfs\": [{\"path\": \"/tmp\"}]}", "tmpfs[0].size: required" },
    { "{\"tmpfs\": [{\"path\": \"tmp\", \"size\": \"1M\"}]}", "tmpfs[0].path" },
    { "{\"tmpfs\": [{\"path\": \"/t\", \"size\": \"1M\"}, {\"path\": \"/t\", \"size\": \"1M\"}]}", "tmpfs[1].path" },
    { "{\"workspace\": {\"path\": \"/\"}}", "workspace.path" },
    { "{\"workspace\": {\"path\": \"/w\", \"maxSize\": \"4 MiB\"}}", "workspace.maxSize" },
    { "{\"workspace\": {\"path\": \"/w\", \"maxSize\": 0}}", "workspace.maxSize: must be more than 0" },
    { "{\"workspace\": {\"path\": \"/w\", \"maxsize\": \"4MiB\"}}", "workspace.maxsize: unknown key" },
    { "{\"workspace\": {\"path\": \"/w\", \"bound\": \"overlay\"}}", "workspace.bound: expected \"watch\" or \"stage\"" },
    { "{\"workspace\": {\"path\": \"/w\", \"bound\": true}}", "workspace.bound" },
    { "{\"sockets\": [\"agent.sock\"]}", "sockets[0]: expected an absolute path" },
    { "{\"sockets\": [\"/var/run/docker.sock\"]}", "sockets[0]: \"/var/run/docker.sock\" is a forbidden host path" },
    { "{\"sockets\": [\"/run/dbus/system_bus_socket\"]}", "sockets[0]" },
    { "{\"forbiddenPaths\": [\"/srv/s\"], \"sockets\": [\"/srv/s/a.sock\"]}", "sockets[0]" },
    { "{\"socket\": []}", "socket: unknown key" },
    { "{\"user\": {\"uid\": 0}}", "user.uid/gid" },
    { "{\"user\": {\"uid\": -1}}", "user.uid" },
    { "{\"capabilities\": [\"CAP_SYS_ADMIM\"]}", "capabilities[0]: unknown capability" },
    { "{\"capabilities\": \"CAP_KILL\"}", "capabilities" },
    { "{\"seccomp\": {\"profile\": \"off\"}}", "seccomp.profile" },
    { "{\"seccomp\": {\"profile\": \"file\"}}", "seccomp.path: required" },
    { "{\"rlimits\": {\"RLIMIT_NOFLIE\": 10}}", "rlimits.RLIMIT_NOFLIE: unknown rlimit" },
    { "{\"env\": {\"deny\": [\"\"]}}", "env.deny[0]" },
    { "{\"env\": {\"denny\": []}}", "env.denny: unknown key" },
    { "{\"hooks\": [\"relative\"]}", "hooks[0]" },
    { "{\"timeouts\": {\"wall\": \"10 min\"}}", "timeouts.wall" },
    { "{\"timeouts\": {\"wall\": 0}}", "timeouts.wall" },
    { "{\"output\": {\"maxBytes\": \"big\"}}", "output.maxBytes" },
    { "{\"audit\": {\"path\": \"log.jsonl\"}}", "audit.path" },
    { "{\"init\": \"tini\"}", "init" },
    { "{\"name\": \"a/b\"}", "name" },
    { "[]", "expected an object" },
    { "{", "" },
};

Test(policy_parse, errors_name_the_key)
{
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        autopolicy struct brig_policy *p = NULL;
        autoerr struct brig_error *err = NULL;
        cr_expect_eq(parse(bad[i].json, &p, &err), -1, "%s parsed", bad[i].json);
        if (err != NULL)
            cr_expect(strstr(err->msg, bad[i].expect) != NULL, "%s: got \"%s\", want \"%s\"", bad[i].json,
                      err->msg, bad[i].expect);
    }
}

/* Each engine's and orchestrator's socket and credential store, by the
 * entry that holds it (docs/policy.md lists why each is there). */
Test(policy_parse, builtin_forbidden_paths_cover_the_other_engines)
{
    autopolicy struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(parse("{}", &p, &err), 0);
    static const char *const want[] = {
        "/run/k3s", "/var/lib/rancher", "/etc/rancher", "/run/buildkit", "/var/lib/buildkit",
        "/var/snap/lxd", "/var/lib/lxd", "/var/lib/incus", "/run/incus", "/run/libvirt",
        "/var/run/libvirt", "/var/lib/libvirt", "/etc/libvirt", "/run/dbus", "/var/run/dbus",
        "/var/lib/kubelet", "/etc/kubernetes", "/var/lib/etcd", "/var/lib/containers", "/run/containers",
        "/etc/containers", "/etc/docker", "/etc/containerd", "/var/lib/crio", "/run/systemd",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        bool found = false;
        for (char **f = p->forbidden_paths; *f; f++) found |= strcmp(*f, want[i]) == 0;
        cr_expect(found, "%s is not forbidden", want[i]);
    }
}

Test(policy_parse, sockets_and_workspace_max_size)
{
    autopolicy struct brig_policy *p = NULL, *d = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(parse("{\"sockets\": [\"/run/agent.sock\"], "
                       "\"workspace\": {\"path\": \"/w\", \"maxSize\": \"4MiB\"}}", &p, &err), 0,
                 "%s", err ? err->msg : "");
    cr_expect_str_eq(p->sockets[0], "/run/agent.sock");
    cr_expect_null(p->sockets[1]);
    cr_expect_eq(p->workspace.max_size, 4ull << 20);
    cr_assert_eq(parse("{}", &d, &err), 0);
    cr_expect_null(d->sockets[0], "no socket is allowed by default");
    cr_expect_eq(d->workspace.max_size, 0, "unbounded unless asked");
    cr_expect_eq(p->workspace.bound, POLICY_WS_WATCH, "watched unless a stage is asked for");
    autopolicy struct brig_policy *st = NULL;
    cr_assert_eq(parse("{\"workspace\": {\"path\": \"/w\", \"maxSize\": \"4MiB\", \"bound\": \"stage\"}}", &st, &err), 0,
                 "%s", err ? err->msg : "");
    cr_expect_eq(st->workspace.bound, POLICY_WS_STAGE);
}

Test(policy_parse, lists_only_add_to_the_builtin_ones)
{
    autopolicy struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(parse("{\"env\": {\"deny\": [\"*_PAT\"]}, \"forbiddenPaths\": [\"/srv/secret\"]}", &p, &err), 0);
    bool aws = false, pat = false, docker = false, srv = false;
    for (char **d = p->env_deny; *d; d++) { aws |= !strcmp(*d, "AWS_*"); pat |= !strcmp(*d, "*_PAT"); }
    for (char **f = p->forbidden_paths; *f; f++) { docker |= !strcmp(*f, "/run/docker.sock"); srv |= !strcmp(*f, "/srv/secret"); }
    cr_expect(aws && pat && docker && srv);
}

/* The built-in list, then the policy's names in their order, each once
 * (a name the built-in list holds is not added again). */
Test(policy_parse, lists_merge_each_name_once_in_order)
{
    autopolicy struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    autopolicy struct brig_policy *d = NULL;
    cr_assert_eq(parse("{}", &d, &err), 0);
    size_t builtin = brig_strv_len(d->env_deny);
    cr_assert_eq(parse("{\"env\": {\"deny\": [\"B_*\", \"AWS_*\", \"A_*\", \"B_*\", \"C_*\", \"A_*\"]}}",
                       &p, &err), 0);
    cr_assert_eq(brig_strv_len(p->env_deny), builtin + 3);
    for (size_t i = 0; i < builtin; i++) cr_expect_str_eq(p->env_deny[i], d->env_deny[i]);
    cr_expect_str_eq(p->env_deny[builtin], "B_*");
    cr_expect_str_eq(p->env_deny[builtin + 1], "A_*");
    cr_expect_str_eq(p->env_deny[builtin + 2], "C_*");
}

Test(policy_profiles, each_builtin_parses_and_shows)
{
    cr_assert_geq(policy_builtin_count(), 4);
    static const char *const names[] = { "agent", "pygent", "pi", "pi-egress" };
    for (size_t i = 0; i < 4; i++) {
        const char *text = policy_builtin_text(names[i]);
        cr_assert_not_null(text, "%s", names[i]);
        autopolicy struct brig_policy *p = NULL;
        autoerr struct brig_error *err = NULL;
        cr_expect_eq(policy_load(names[i], &p, &err), 0, "%s: %s", names[i], err ? err->msg : "");
        if (p) cr_expect_str_eq(p->name, names[i]);
    }
    autopolicy struct brig_policy *pg = NULL, *pi = NULL, *nope = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(policy_load("pygent", &pg, &err), 0);
    cr_expect_eq(pg->limits.memory, 512ull << 20);
    cr_expect_eq(pg->limits.pids, 256);
    cr_assert_eq(policy_load("pi", &pi, &err), 0);
    cr_expect_eq(pi->limits.memory, 8ull << 30);
    cr_expect_eq(pi->limits.pids, 512);
    cr_expect_eq(pi->limits.cpu_milli, 4000);
    cr_expect_not_null(pi->init);
    autopolicy struct brig_policy *pe = NULL;
    cr_assert_eq(policy_load("pi-egress", &pe, &err), 0);
    cr_expect_eq(pe->limits.memory, pi->limits.memory, "pi's limits");
    cr_expect_eq(pe->network.mode, POLICY_NET_EGRESS);
    cr_expect_str_eq(pe->env_set[0], "ANTHROPIC_BASE_URL=http://api.anthropic.com");
    cr_expect(policy_env_name_denied(pe, "ANTHROPIC_API_KEY"), "the key stays refused in the sandbox's env");
    cr_expect_eq(policy_load("agnet", &nope, &err), -1);
    cr_expect_not_null(policy_seccomp_default_text());
}

Test(policy_audit, one_line_per_event_rotated_without_values)
{
    char dir[] = "/tmp/test_policy_audit.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    autopolicy struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(parse("{\"name\": \"t\", \"audit\": {\"maxSize\": \"4KiB\"}}", &p, &err), 0);
    free(p->audit.path);
    p->audit.path = brig_asprintf("%s/audit.jsonl", dir);
    struct policy_audit_event ev = { .op = "create", .id = "c1", .decision = "deny",
                                     .rules = "net.none,env.secrets", .has_exit_status = true,
                                     .exit_status = 3, .has_duration = true, .duration_ms = 12 };
    cr_assert_eq(policy_audit(p, &ev, &err), 0, "%s", err ? err->msg : "");
    autofree char *text = NULL;
    size_t len = 0;
    cr_assert_eq(brig_read_file(p->audit.path, 1 << 20, &text, &len, &err), 0);
    cr_expect(strstr(text, "\"op\":\"create\"") && strstr(text, "\"id\":\"c1\"") &&
              strstr(text, "\"rules\":[\"net.none\",\"env.secrets\"]") && strstr(text, "\"exit_status\":3"), "%s", text);
    cr_expect_eq(text[len - 1], '\n');
    cr_expect_eq(strchr(text, '\n'), text + len - 1, "one line");
    for (int i = 0; i < 100; i++) cr_assert_eq(policy_audit(p, &ev, &err), 0);
    struct stat st;
    cr_assert_eq(stat(p->audit.path, &st), 0);
    cr_expect_leq(st.st_size, 4096, "bounded: %lld", (long long)st.st_size);
    autofree char *rotated = brig_asprintf("%s.1", p->audit.path);
    cr_expect_eq(stat(rotated, &st), 0, "rotated to .1");
    unlink(rotated);
    unlink(p->audit.path);
    rmdir(dir);
}

/* The log's directory is made (0700, one level) when the first line finds
 * it missing, and a path whose directory cannot be made is refused. */
Test(policy_audit, missing_directory_made_once)
{
    char dir[] = "/tmp/test_policy_audit.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    autopolicy struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(parse("{\"name\": \"t\"}", &p, &err), 0);
    free(p->audit.path);
    p->audit.path = brig_asprintf("%s/log/audit.jsonl", dir);
    struct policy_audit_event ev = { .op = "create", .id = "c1", .decision = "allow" };
    cr_assert_eq(policy_audit(p, &ev, &err), 0, "%s", err ? err->msg : "");
    cr_assert_eq(policy_audit(p, &ev, &err), 0, "%s", err ? err->msg : "");
    struct stat st;
    autofree char *sub = brig_asprintf("%s/log", dir);
    cr_assert_eq(stat(sub, &st), 0);
    cr_expect_eq(st.st_mode & 07777, 0700);
    cr_assert_eq(stat(p->audit.path, &st), 0);
    cr_expect_gt(st.st_size, 0);
    autofree char *made = p->audit.path;
    p->audit.path = brig_asprintf("%s/no/such/audit.jsonl", dir);
    cr_expect_eq(policy_audit(p, &ev, &err), -1);
    cr_expect(err != NULL && strstr(err->msg, "audit.path: mkdir") != NULL, "%s", err ? err->msg : "");
    unlink(made);
    rmdir(sub);
    rmdir(dir);
}

static const char *probe_ok =
    "{\"op\":\"boundaries\",\"uid\":1000,\"gid\":1000,\"ns\":{\"net\":2,\"pid\":3,\"ipc\":4,\"uts\":5,\"mnt\":6},"
    "\"status\":{\"CapInh\":\"0000000000000000\",\"CapPrm\":\"0000000000000000\",\"CapEff\":\"0000000000000000\","
    "\"CapBnd\":\"0000000000000000\",\"CapAmb\":\"0000000000000000\",\"NoNewPrivs\":\"1\",\"Seccomp\":\"2\"},"
    "\"interfaces\":[\"lo\"],\"connect4\":\"ENETUNREACH\",\"connect6\":\"ENETUNREACH\","
    "\"write\":{\"/\":\"EROFS\",\"/usr\":\"EROFS\",\"/workspace\":\"ok\"},"
    "\"readonly\":{\"/\":true,\"/usr\":true,\"/workspace\":false},"
    "\"fstype\":{\"/tmp\":\"tmpfs\",\"/var/tmp\":\"tmpfs\"},"
    "\"syscalls\":{\"mount\":\"EPERM\",\"unshare-user\":\"EPERM\",\"ptrace-pid1\":\"EPERM\",\"setuid0\":\"EPERM\","
    "\"keyctl\":\"EPERM\",\"bpf\":\"EPERM\",\"perf_event_open\":\"EPERM\",\"io_uring_setup\":\"EPERM\","
    "\"userfaultfd\":\"EPERM\",\"socketcall32\":\"signal SYS\",\"netlink-uevent\":\"EPERM\"},"
    "\"kcore\":\"ENOENT\",\"proc_sys_write\":\"EACCES\",\"host_dirs\":[],\"cgroup_writable\":false,"
    "\"cgroup_writable_at\":\"\",\"sysfs_writable\":false,"
    "\"sockets\":{\"/var/run/docker.sock\":\"ENOENT\"},\"env_names\":[\"PATH\",\"HOME\"],"
    "\"cgroup_limits\":{\"memory\":\"2147483648\",\"pids\":\"256\",\"cpu\":\"200000\",\"cpu_period\":\"100000\"},"
    "\"pids\":{\"requested\":272,\"forked\":255,\"result\":\"EAGAIN\"}}";

static size_t open_count(const struct brig_policy *p, const char *json, const char *which)
{
    struct policy_host_ns host = { 1, 1, 1, 1, 1 };
    struct policy_boundary *b = NULL;
    size_t n = 0, open = 0;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(policy_boundaries_eval(p, json, &host, &b, &n, &err), 0, "%s", err ? err->msg : "");
    for (size_t i = 0; i < n; i++) {
        if (b[i].closed) continue;
        open++;
        if (which) cr_expect_str_eq(b[i].name, which, "%s: %s", b[i].name, b[i].detail);
    }
    free(b);
    return open;
}

static char *replace(const char *s, const char *old, const char *new)
{
    const char *at = strstr(s, old);
    cr_assert_not_null(at, "%s", old);
    return brig_asprintf("%.*s%s%s", (int)(at - s), s, new, at + strlen(old));
}

Test(policy_boundaries, a_closed_report_passes_and_each_hole_shows)
{
    autopolicy struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(policy_load("agent", &p, &err), 0);
    cr_expect_eq(open_count(p, probe_ok, NULL), 0);
    static const char *const holes[][3] = {
        { "\"interfaces\":[\"lo\"]", "\"interfaces\":[\"lo\",\"eth0\"]", "net.interfaces" },
        { "\"connect4\":\"ENETUNREACH\"", "\"connect4\":\"ETIMEDOUT\"", "net.connect4" },
        { "\"net\":2", "\"net\":1", "net.namespace" },
        { "\"/\":\"EROFS\"", "\"/\":\"ok\"", "fs.root.readonly" },
        { "\"/\":true", "\"/\":false", "fs.root.readonly" },
        { "\"/workspace\":\"ok\"", "\"/workspace\":\"EROFS\"", "workspace.writable" },
        { "\"CapBnd\":\"0000000000000000\"", "\"CapBnd\":\"0000000000200000\"", "caps" },
        { "\"NoNewPrivs\":\"1\"", "\"NoNewPrivs\":\"0\"", "nnp" },
        { "\"bpf\":\"EPERM\"", "\"bpf\":\"ok\"", "seccomp.bpf" },
        { "\"socketcall32\":\"signal SYS\"", "\"socketcall32\":\"EFAULT\"", "seccomp.socketcall32" },
        { "\"netlink-uevent\":\"EPERM\"", "\"netlink-uevent\":\"ok\"", "seccomp.netlink" },
        { "\"kcore\":\"ENOENT\"", "\"kcore\":\"readable\"", "proc.kcore" },
        { "\"cgroup_writable\":false", "\"cgroup_writable\":true", "cgroup.readonly" },
        { "\"/var/run/docker.sock\":\"ENOENT\"", "\"/var/run/docker.sock\":\"present\"", "engine.sockets" },
        { "\"host_dirs\":[]", "\"host_dirs\":[\"/root/.ssh\"]", "host.home" },
        { "\"HOME\"", "\"AWS_SECRET_ACCESS_KEY\"", "env.secrets" },
        { "\"forked\":255", "\"forked\":272", "limits.pids" },
        { "\"uid\":1000", "\"uid\":0", "user" },
        { "\"memory\":\"2147483648\"", "\"memory\":\"max\"", "limits.memory" },
        { "\"pids\":\"256\"", "\"pids\":\"4096\"", "limits.pids.cgroup" },
        { "\"cpu\":\"200000\"", "\"cpu\":\"-1\"", "limits.cpu" },
    };
    for (size_t i = 0; i < sizeof(holes) / sizeof(holes[0]); i++) {
        autofree char *j = replace(probe_ok, holes[i][0], holes[i][1]);
        cr_expect_eq(open_count(p, j, holes[i][2]), 1, "%s", holes[i][2]);
    }
    /* A report that lacks a field never passes for it. */
    autofree char *missing = replace(probe_ok, "\"kcore\":\"ENOENT\",", "");
    cr_expect_eq(open_count(p, missing, "proc.kcore"), 1);
    struct policy_boundary *b = NULL;
    size_t n = 0;
    struct policy_host_ns host = { 0 };
    cr_expect_eq(policy_boundaries_eval(p, "{\"op\":\"report\"}", &host, &b, &n, &err), -1);
}
