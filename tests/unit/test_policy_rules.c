/* policy_check: every rule has a passing config (the applied one) and a
 * failing one (one mutation of it), and the failure names the rule and the
 * offending JSON path; apply then check passes, and apply is idempotent. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <unistd.h>

#include "../../policy/policy.h"
#include "../../policy/policy_internal.h"
#include "../../policy/policy_tree.h"
#include "config/spec.h"
#include "util/cleanup.h"
#include "util/strutil.h"

/* A minimal, weak config: apply makes it meet the policy. */
static const char *base =
    "{\"ociVersion\":\"1.2.1\",\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\",\"user\":{\"uid\":0,\"gid\":0},"
    "\"env\":[\"PATH=/bin\",\"GITHUB_TOKEN=ghp_x\"],"
    "\"capabilities\":{\"bounding\":[\"CAP_SYS_ADMIN\",\"CAP_KILL\"]}},"
    "\"root\":{\"path\":\"rootfs\"},"
    "\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
    "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\",\"options\":[\"rw\"]},"
    "{\"destination\":\"/run/docker.sock\",\"type\":\"bind\",\"source\":\"/var/run/docker.sock\",\"options\":[\"rbind\"]}],"
    "\"hooks\":{\"prestart\":[{\"path\":\"/usr/bin/evil\"}]},"
    "\"linux\":{\"namespaces\":[{\"type\":\"pid\",\"path\":\"/proc/1/ns/pid\"}],\"sysctl\":{\"kernel.x\":\"1\"},"
    "\"devices\":[{\"path\":\"/dev/kvm\",\"type\":\"c\",\"major\":10,\"minor\":232}],"
    "\"resources\":{\"devices\":[{\"allow\":true,\"access\":\"rwm\"}]}}}";

static struct brig_policy *agent(void)
{
    struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(policy_load("agent", &p, &err), 0, "%s", err ? err->msg : "");
    cr_assert_neq(p->workspace.max_size, 0, "the agent profile bounds its workspace");
    /* the rules, judged on configs whose workspace (/srv/ws) does not
     * exist here: the bound has tests of its own (below, t-workspace-quota) */
    p->workspace.max_size = 0;
    return p;
}

static char *applied(const struct brig_policy *p)
{
    char *out = NULL;
    autoerr struct brig_error *err = NULL;
    struct policy_apply_opts o = { .workspace_source = "/srv/ws" };
    cr_assert_eq(policy_apply(p, base, strlen(base), &o, &out, &err), 0, "%s", err ? err->msg : "");
    return out;
}

static void check_text(const struct brig_policy *p, const char *json, struct policy_report *rep)
{
    autospec struct brig_spec *s = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(spec_parse(json, strlen(json), "/b", &s, &err), 0, "%s\n%s", err ? err->msg : "", json);
    policy_check(p, s, rep);
}

Test(policy_rules, base_config_fails_many_rules)
{
    autopolicy struct brig_policy *p = agent();
    struct policy_report rep;
    check_text(p, base, &rep);
    autofree char *ids = policy_report_failed_ids(&rep);
    static const char *const want[] = { "ns.host", "root.readonly", "caps.none", "user.nonroot",
                                        "seccomp.present", "mounts.forbidden", "mounts.sys", "mounts.tmpfs",
                                        "workspace", "limits.memory", "limits.pids", "limits.cpu",
                                        "rlimits", "devices", "hooks", "sysctl", "env.secrets", "net.none" };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        cr_expect(strstr(ids, want[i]) != NULL, "%s not failed in: %s", want[i], ids);
    /* Never the secret's value, only its name. */
    autofree char *text = policy_report_text(&rep, false);
    cr_expect(strstr(text, "GITHUB_TOKEN") != NULL);
    cr_expect(strstr(text, "ghp_x") == NULL, "%s", text);
    policy_report_free(&rep);
}

Test(policy_rules, apply_then_check_passes_and_is_idempotent)
{
    autopolicy struct brig_policy *p = agent();
    autofree char *once = applied(p);
    struct policy_report rep;
    check_text(p, once, &rep);
    autofree char *text = policy_report_text(&rep, true);
    cr_expect_eq(rep.failed, 0, "%s", text);
    cr_expect_eq(rep.n, policy_rule_count(), "one PASS line per rule");
    policy_report_free(&rep);
    autofree char *twice = NULL;
    autoerr struct brig_error *err = NULL;
    struct policy_apply_opts o = { .workspace_source = "/srv/ws" };
    cr_assert_eq(policy_apply(p, once, strlen(once), &o, &twice, &err), 0, "%s", err ? err->msg : "");
    cr_expect_str_eq(twice, once);
}

/* The options of sandbox run and create: the default profile copied in as
 * its text, the verify left to create. What comes out must still pass every
 * rule, with the same filter as the parsed-and-written one. */
Test(policy_rules, apply_for_create_passes_with_the_same_filter)
{
    autopolicy struct brig_policy *p = agent();
    autofree char *plain = applied(p);
    autofree char *fast = NULL;
    autoerr struct brig_error *err = NULL;
    struct policy_apply_opts o = { .workspace_source = "/srv/ws", .profile_as_text = true,
                                   .checked_by_create = true };
    cr_assert_eq(policy_apply(p, base, strlen(base), &o, &fast, &err), 0, "%s", err ? err->msg : "");
    cr_expect_str_neq(fast, plain, "the profile went in as its text");
    /* compact: only create reads it (the final newline the one line break) */
    cr_expect_eq(strchr(fast, '\n'), fast + strlen(fast) - 1, "the text for create is not compact");
    struct policy_report rep;
    check_text(p, fast, &rep);
    autofree char *text = policy_report_text(&rep, true);
    cr_expect_eq(rep.failed, 0, "%s", text);
    policy_report_free(&rep);
    autospec struct brig_spec *a = NULL;
    autospec struct brig_spec *b = NULL;
    cr_assert_eq(spec_parse(plain, strlen(plain), "/b", &a, &err), 0);
    cr_assert_eq(spec_parse(fast, strlen(fast), "/b", &b, &err), 0);
    const struct brig_seccomp *sa = &a->linux_cfg.seccomp, *sb = &b->linux_cfg.seccomp;
    cr_assert(sa->present && sb->present);
    cr_expect_eq(sb->default_action, sa->default_action);
    cr_assert_eq(sb->n_syscalls, sa->n_syscalls);
    for (size_t i = 0; i < sa->n_syscalls; i++) {
        cr_assert_eq(sb->syscalls[i].n_names, sa->syscalls[i].n_names, "syscalls[%zu]", i);
        cr_expect_eq(sb->syscalls[i].action, sa->syscalls[i].action, "syscalls[%zu]", i);
        for (size_t j = 0; j < sa->syscalls[i].n_names; j++)
            cr_expect_str_eq(sb->syscalls[i].names[j], sa->syscalls[i].names[j]);
    }
}

/* Sandbox run and create mark the config as brig's own (config_ours): it
 * is not parsed before it is patched, yet what comes out is the same text,
 * for a config without a filter of its own and for one whose filter must
 * be judged (kept when it passes, as for any caller's). */
Test(policy_rules, apply_of_brigs_own_config_is_the_same_text)
{
    autopolicy struct brig_policy *p = agent();
    autofree char *with_filter = applied(p);
    const char *inputs[] = { base, with_filter };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(inputs); i++) {
        autofree char *theirs = NULL;
        autofree char *ours = NULL;
        autoerr struct brig_error *err = NULL;
        struct policy_apply_opts o = { .workspace_source = "/srv/ws", .profile_as_text = true,
                                       .checked_by_create = true };
        cr_assert_eq(policy_apply(p, inputs[i], strlen(inputs[i]), &o, &theirs, &err), 0, "%s", err ? err->msg : "");
        o.config_ours = true;
        cr_assert_eq(policy_apply(p, inputs[i], strlen(inputs[i]), &o, &ours, &err), 0, "%s", err ? err->msg : "");
        cr_expect_str_eq(ours, theirs, "input %zu", i);
    }
}

Test(policy_rules, apply_needs_a_workspace_source)
{
    autopolicy struct brig_policy *p = agent();
    char *out = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(policy_apply(p, base, strlen(base), NULL, &out, &err), -1);
    cr_expect(strstr(err->msg, "--workspace") != NULL, "%s", err->msg);
    autoerr struct brig_error *err2 = NULL;
    struct policy_apply_opts o = { .workspace_source = "/home/me/project" };
    cr_assert_eq(policy_apply(p, base, strlen(base), &o, &out, &err2), -1);
    cr_expect(strstr(err2->msg, "forbidden") != NULL, "%s", err2->msg);
}

/* workspace.maxSize depends on the host's filesystem, which apply cannot
 * patch: it names the flag and why, never "still violates" (fuzz_policy
 * found that). A 1 MiB tmpfs directory is one it can bound. */
Test(policy_rules, apply_names_a_workspace_it_cannot_bound)
{
    struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    static const char pol[] = "{\"workspace\":{\"path\":\"/workspace\",\"maxSize\":\"16MiB\"}}";
    cr_assert_eq(policy_parse(pol, strlen(pol), &p, &err), 0, "%s", err ? err->msg : "");
    char *out = NULL;
    struct policy_apply_opts o = { .workspace_source = "/nonexistent/ws" };
    cr_assert_eq(policy_apply(p, base, strlen(base), &o, &out, &err), -1);
    cr_expect(strstr(err->msg, "--workspace /nonexistent/ws: workspace.maxSize 16777216 bytes cannot be "
                     "enforced") != NULL, "%s", err->msg);
    cr_expect(strstr(err->msg, "still violates") == NULL, "%s", err->msg);
    policy_free(p);
}

/* ---- one mutation per rule -------------------------------------------- */

static struct ptree *obj(struct ptree *t, const char *k) { return ptree_obj(t, k); }

static struct ptree *find_mount(struct ptree *cfg, const char *dst)
{
    struct ptree *m = ptree_get(cfg, "mounts");
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(ptree_str(m->vals[i], "destination"), dst) == 0) return m->vals[i];
    cr_assert_fail("no mount at %s", dst);
    return NULL;
}

static void drop_ns(struct ptree *cfg, const char *type)
{
    struct ptree *l = ptree_get(obj(cfg, "linux"), "namespaces");
    for (size_t i = l->n; i-- > 0;)
        if (strcmp(ptree_str(l->vals[i], "type"), type) == 0) ptree_remove_at(l, i);
}

static void m_net(struct ptree *c) { drop_ns(c, "network"); }
static void m_ns_host(struct ptree *c)
{
    struct ptree *l = ptree_get(obj(c, "linux"), "namespaces");
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(ptree_str(l->vals[i], "type"), "ipc") == 0) ptree_set(l->vals[i], "path", ptree_new_str("/proc/1/ns/ipc"));
}
static void m_root(struct ptree *c) { ptree_set(obj(c, "root"), "readonly", ptree_new_bool(false)); }
static void m_caps(struct ptree *c)
{
    struct ptree *caps = obj(obj(c, "process"), "capabilities");
    struct ptree *b = ptree_arr(caps, "bounding");
    ptree_push(b, ptree_new_str("CAP_NET_RAW"));
}
static void m_nnp(struct ptree *c) { ptree_set(obj(c, "process"), "noNewPrivileges", ptree_new_bool(false)); }
static void m_user(struct ptree *c) { ptree_set(obj(obj(c, "process"), "user"), "uid", ptree_new_u64(0)); }
static void m_seccomp(struct ptree *c)
{
    struct ptree *sc = obj(obj(c, "linux"), "seccomp");
    struct ptree *rule = ptree_new(PT_OBJ);
    char *names[] = { "bpf", NULL };
    ptree_set(rule, "names", ptree_new_strv(names));
    ptree_set(rule, "action", ptree_new_str("SCMP_ACT_ALLOW"));
    ptree_push(ptree_arr(sc, "syscalls"), rule);
}
static void m_seccomp_absent(struct ptree *c) { ptree_del(obj(c, "linux"), "seccomp"); }
/* socket allowed for AF_NETLINK with a protocol condition that lets 15 in. */
static void m_netlink(struct ptree *c)
{
    const char *rule = "{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":["
                       "{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},"
                       "{\"index\":2,\"value\":14,\"op\":\"SCMP_CMP_GT\"}]}";
    struct ptree *r = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(ptree_parse(rule, strlen(rule), &r, &err), 0);
    ptree_push(ptree_arr(obj(obj(c, "linux"), "seccomp"), "syscalls"), r);
}
static void add_bind(struct ptree *c, const char *src, const char *dst)
{
    struct ptree *m = ptree_new(PT_OBJ);
    ptree_set(m, "destination", ptree_new_str(dst));
    ptree_set(m, "type", ptree_new_str("bind"));
    ptree_set(m, "source", ptree_new_str(src));
    char *opts[] = { "rbind", NULL };
    ptree_set(m, "options", ptree_new_strv(opts));
    ptree_push(ptree_get(c, "mounts"), m);
}
static void m_docker_sock(struct ptree *c) { add_bind(c, "/var/run/docker.sock", "/var/run/docker.sock"); }
static void m_ssh(struct ptree *c) { add_bind(c, "/root/.ssh", "/keys"); }
static void m_var(struct ptree *c) { add_bind(c, "/var", "/hostvar"); }
static void m_k3s(struct ptree *c) { add_bind(c, "/run/k3s/containerd/containerd.sock", "/run/containerd.sock"); }
/* /run holds /run/dbus: binding the parent exposes the bus. */
static void m_run(struct ptree *c) { add_bind(c, "/var/snap", "/snap"); }
static void m_sys(struct ptree *c)
{
    struct ptree *o = ptree_get(find_mount(c, "/sys"), "options");
    for (size_t i = o->n; i-- > 0;)
        if (strcmp(o->vals[i]->s, "ro") == 0) ptree_remove_at(o, i);
}
static void m_masked(struct ptree *c)
{
    struct ptree *l = ptree_get(obj(c, "linux"), "maskedPaths");
    for (size_t i = l->n; i-- > 0;)
        if (strcmp(l->vals[i]->s, "/proc/kcore") == 0) ptree_remove_at(l, i);
}
static void m_tmpfs(struct ptree *c)
{
    char *opts[] = { "nosuid", "size=2g", NULL };
    ptree_set(find_mount(c, "/tmp"), "options", ptree_new_strv(opts));
}
static void m_workspace(struct ptree *c)
{
    char *opts[] = { "rbind", "ro", NULL };
    ptree_set(find_mount(c, "/workspace"), "options", ptree_new_strv(opts));
}
static void m_memory(struct ptree *c)
{
    ptree_set(obj(obj(obj(c, "linux"), "resources"), "memory"), "limit", ptree_new_u64(64ull << 30));
}
static void m_swap(struct ptree *c)
{
    ptree_set(obj(obj(obj(c, "linux"), "resources"), "memory"), "swap", ptree_new_i64(-1));
}
static void m_pids(struct ptree *c) { ptree_del(obj(obj(c, "linux"), "resources"), "pids"); }
static void m_cpu(struct ptree *c)
{
    ptree_set(obj(obj(obj(c, "linux"), "resources"), "cpu"), "quota", ptree_new_u64(800000));
}
static void m_rlimits(struct ptree *c) { ptree_del(obj(c, "process"), "rlimits"); }
static void m_devices(struct ptree *c)
{
    struct ptree *d = ptree_new(PT_OBJ);
    ptree_set(d, "path", ptree_new_str("/dev/kvm"));
    ptree_set(d, "type", ptree_new_str("c"));
    ptree_set(d, "major", ptree_new_u64(10));
    ptree_set(d, "minor", ptree_new_u64(232));
    ptree_push(ptree_arr(obj(c, "linux"), "devices"), d);
}
static void m_devices_wild(struct ptree *c)
{
    struct ptree *d = ptree_new(PT_OBJ);
    ptree_set(d, "allow", ptree_new_bool(true));
    ptree_set(d, "access", ptree_new_str("rwm"));
    ptree_push(ptree_arr(obj(obj(c, "linux"), "resources"), "devices"), d);
}
static void m_hooks(struct ptree *c)
{
    struct ptree *h = ptree_new(PT_OBJ);
    ptree_set(h, "path", ptree_new_str("/usr/bin/evil"));
    ptree_push(ptree_arr(obj(c, "hooks"), "createRuntime"), h);
}
static void m_sysctl(struct ptree *c) { ptree_set(obj(obj(c, "linux"), "sysctl"), "kernel.shmmax", ptree_new_str("1")); }
static void m_env(struct ptree *c) { ptree_push(ptree_get(obj(c, "process"), "env"), ptree_new_str("AWS_SECRET_ACCESS_KEY=abc")); }

struct mutation {
    const char *rule;
    void (*fn)(struct ptree *);
    const char *path;       /* expected in the failing result's path */
};

static const struct mutation mutations[] = {
    { "net.none", m_net, "linux.namespaces" },
    { "ns.host", m_ns_host, "linux.namespaces[ipc].path" },
    { "root.readonly", m_root, "root.readonly" },
    { "caps.none", m_caps, "process.capabilities.bounding" },
    { "nnp", m_nnp, "process.noNewPrivileges" },
    { "user.nonroot", m_user, "process.user.uid" },
    { "seccomp.present", m_seccomp, "linux.seccomp.syscalls[" },
    { "seccomp.present", m_seccomp_absent, "linux.seccomp" },
    { "seccomp.netlink", m_netlink, "linux.seccomp.syscalls[" },
    { "mounts.forbidden", m_docker_sock, "].source" },
    { "mounts.forbidden", m_ssh, "].source" },
    { "mounts.forbidden", m_var, "].source" },
    { "mounts.sys", m_sys, "].options" },
    { "mounts.sys", m_masked, "linux.maskedPaths" },
    { "mounts.tmpfs", m_tmpfs, "].options" },
    { "workspace", m_workspace, "mounts[" },
    { "limits.memory", m_memory, "linux.resources.memory.limit" },
    { "limits.memory", m_swap, "linux.resources.memory.swap" },
    { "limits.pids", m_pids, "linux.resources.pids.limit" },
    { "limits.cpu", m_cpu, "linux.resources.cpu.quota" },
    { "rlimits", m_rlimits, "process.rlimits" },
    { "devices", m_devices, "linux.devices[0].path" },
    { "devices", m_devices_wild, "linux.resources.devices[" },
    { "hooks", m_hooks, "hooks.createRuntime[0].path" },
    { "sysctl", m_sysctl, "linux.sysctl.kernel.shmmax" },
    { "mounts.forbidden", m_k3s, "].source" },
    { "mounts.forbidden", m_run, "].source" },
    { "env.secrets", m_env, "process.env[" },
};

Test(policy_rules, each_rule_has_a_failing_mutation)
{
    autopolicy struct brig_policy *p = agent();
    autofree char *good = applied(p);
    for (size_t i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
        const struct mutation *m = &mutations[i];
        autoptree struct ptree *cfg = NULL;
        autoerr struct brig_error *err = NULL;
        cr_assert_eq(ptree_parse(good, strlen(good), &cfg, &err), 0);
        m->fn(cfg);
        autofree char *text = NULL;
        cr_assert_eq(ptree_write(cfg, &text, &err), 0);
        struct policy_report rep;
        check_text(p, text, &rep);
        bool found = false;
        for (size_t j = 0; j < rep.n; j++) {
            if (rep.r[j].pass) {
                cr_expect(strcmp(rep.r[j].rule, m->rule) != 0, "%s passed after mutation %zu", m->rule, i);
                continue;
            }
            /* Only the mutated rule fails. */
            cr_expect_str_eq(rep.r[j].rule, m->rule, "mutation %zu: %s: %s", i, rep.r[j].path, rep.r[j].value);
            if (strcmp(rep.r[j].rule, m->rule) == 0 && rep.r[j].path && strstr(rep.r[j].path, m->path))
                found = true;
        }
        cr_expect(found, "mutation %zu (%s): no failure at %s", i, m->rule, m->path);
        autofree char *ids = policy_report_failed_ids(&rep);
        cr_expect(strstr(ids, m->rule) != NULL);
        policy_report_free(&rep);
        /* apply repairs every single violation. */
        autofree char *fixed = NULL;
        autoerr struct brig_error *aerr = NULL;
        struct policy_apply_opts o = { .workspace_source = "/srv/ws" };
        cr_expect_eq(policy_apply(p, text, strlen(text), &o, &fixed, &aerr), 0, "mutation %zu: %s", i,
                     aerr ? aerr->msg : "");
    }
}

Test(policy_rules, init_rule_and_netns_policy)
{
    autopolicy struct brig_policy *pi = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(policy_load("pi", &pi, &err), 0);
    autofree char *out = NULL;
    cr_assert_eq(policy_apply(pi, base, strlen(base), NULL, &out, &err), 0, "%s", err ? err->msg : "");
    cr_expect(strstr(out, "\"/sbin/docker-init\"") != NULL);
    struct policy_report rep;
    check_text(pi, base, &rep);
    autofree char *ids = policy_report_failed_ids(&rep);
    cr_expect(strstr(ids, "init") != NULL);
    policy_report_free(&rep);

    const char *netns = "{\"name\":\"n\",\"network\":{\"mode\":\"netns\",\"path\":\"/run/netns/box\"}}";
    autopolicy struct brig_policy *np = NULL;
    cr_assert_eq(policy_parse(netns, strlen(netns), &np, &err), 0);
    autofree char *applied_ns = NULL;
    cr_assert_eq(policy_apply(np, base, strlen(base), NULL, &applied_ns, &err), 0, "%s", err ? err->msg : "");
    cr_expect(strstr(applied_ns, "/run/netns/box") != NULL);
    check_text(np, base, &rep);
    autofree char *ids2 = policy_report_failed_ids(&rep);
    cr_expect(strstr(ids2, "net.none") != NULL);
    policy_report_free(&rep);
}

/* ---- mounts.sockets and workspace.quota judge what the source is ------- */

static char *with_bind(const char *cfg, const char *src, const char *dst)
{
    autoptree struct ptree *t = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(ptree_parse(cfg, strlen(cfg), &t, &err), 0);
    add_bind(t, src, dst);
    char *text = NULL;
    cr_assert_eq(ptree_write(t, &text, &err), 0);
    return text;
}

/* The failed rule ids of cfg under p, and the first failure's value. */
static char *failed_ids(const struct brig_policy *p, const char *cfg, char **value)
{
    struct policy_report rep;
    check_text(p, cfg, &rep);
    char *ids = policy_report_failed_ids(&rep);
    for (size_t i = 0; value != NULL && i < rep.n; i++)
        if (!rep.r[i].pass && *value == NULL) *value = brig_strdup(rep.r[i].value);
    policy_report_free(&rep);
    return ids;
}

__attribute__((format(printf, 1, 2))) static struct brig_policy *parsed(const char *fmt, ...)
{
    autofree char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    cr_assert_geq(vasprintf(&text, fmt, ap), 0);
    va_end(ap);
    struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(policy_parse(text, strlen(text), &p, &err), 0, "%s: %s", text, err ? err->msg : "");
    return p;
}

Test(policy_rules, a_socket_is_judged_by_what_it_is)
{
    char dir[] = "/tmp/test_policy_sock.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    autofree char *sock = brig_asprintf("%s/notes.txt", dir);
    autofree char *link = brig_asprintf("%s/link", dir);
    autofree char *file = brig_asprintf("%s/file", dir);
    autoclose int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
    cr_assert_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    cr_assert_eq(symlink(sock, link), 0);
    autoclose int f = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    cr_assert_geq(f, 0);

    autopolicy struct brig_policy *p = agent();
    autofree char *good = applied(p);
    autofree char *by_sock = with_bind(good, sock, "/run/a.sock");
    autofree char *by_link = with_bind(good, link, "/run/a.sock");
    autofree char *by_file = with_bind(good, file, "/run/a.sock");
    autofree char *v1 = NULL, *v2 = NULL;
    autofree char *ids1 = failed_ids(p, by_sock, &v1);
    cr_expect_str_eq(ids1, "mounts.sockets");
    cr_expect(v1 && strstr(v1, "is a UNIX socket"), "%s", v1);
    autofree char *ids2 = failed_ids(p, by_link, &v2);
    cr_expect_str_eq(ids2, "mounts.sockets", "a symlink is judged by where it leads");
    cr_expect(v2 && strstr(v2, sock), "%s names the socket", v2);
    autofree char *ids3 = failed_ids(p, by_file, NULL);
    cr_expect_str_eq(ids3, "", "a plain file is not a socket");

    /* Allowed by its real path only. */
    autopolicy struct brig_policy *ok = parsed("{\"sockets\": [\"%s\"], \"workspace\": {\"path\": \"/workspace\"}}", sock);
    autopolicy struct brig_policy *bylink = parsed("{\"sockets\": [\"%s\"], \"workspace\": {\"path\": \"/workspace\"}}", link);
    autofree char *ids4 = failed_ids(ok, by_sock, NULL), *ids5 = failed_ids(ok, by_link, NULL);
    autofree char *ids6 = failed_ids(bylink, by_link, NULL);
    cr_expect(strstr(ids4, "mounts.sockets") == NULL, "%s", ids4);
    cr_expect(strstr(ids5, "mounts.sockets") == NULL, "%s", ids5);
    cr_expect(strstr(ids6, "mounts.sockets") != NULL, "naming the symlink is not naming the socket");

    /* At create the pinned fd is what is judged, not the path's spelling. */
    autospec struct brig_spec *spec = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(spec_parse(by_file, strlen(by_file), "/b", &spec, &err), 0);
    autoclose int sfd = open(sock, O_PATH | O_CLOEXEC);
    struct brig_mount *m = &spec->mounts[spec->n_mounts - 1];
    m->has_source_fd = true;
    m->source_fd = sfd;
    struct policy_report rep;
    policy_check(p, spec, &rep);
    autofree char *ids7 = policy_report_failed_ids(&rep);
    policy_report_free(&rep);
    cr_expect_str_eq(ids7, "mounts.sockets", "the fd is a socket");

    /* A forbidden socket is one finding, mounts.forbidden, not two. */
    autopolicy struct brig_policy *fb = parsed("{\"forbiddenPaths\": [\"%s\"]}", dir);
    autofree char *ids8 = failed_ids(fb, by_sock, NULL);
    cr_expect(strstr(ids8, "mounts.forbidden") && !strstr(ids8, "mounts.sockets"), "%s", ids8);

    /* apply drops the bind, as it drops a forbidden one. */
    autofree char *fixed = NULL;
    struct policy_apply_opts o = { .workspace_source = "/srv/ws" };
    cr_expect_eq(policy_apply(p, by_sock, strlen(by_sock), &o, &fixed, &err), 0, "%s", err ? err->msg : "");
    cr_expect(fixed && strstr(fixed, sock) == NULL);
    unlink(sock);
    unlink(link);
    unlink(file);
    rmdir(dir);
}

Test(policy_rules, workspace_max_size_is_enforceable_or_fails)
{
    char dir[] = "/tmp/test_policy_ws.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    autopolicy struct brig_policy *p = parsed("{\"workspace\": {\"path\": \"/workspace\", \"maxSize\": \"%s\"}}", "4MiB");
    autofree char *cfg = NULL;
    /* A config made elsewhere; check judges the workspace it names. */
    autopolicy struct brig_policy *plain = parsed("{\"workspace\": {\"path\": \"%s\"}}", "/workspace");
    autoerr struct brig_error *err = NULL;
    struct policy_apply_opts o = { .workspace_source = dir };
    cr_assert_eq(policy_apply(plain, base, strlen(base), &o, &cfg, &err), 0, "%s", err ? err->msg : "");
    struct statfs sf;
    cr_assert_eq(statfs(dir, &sf), 0);
    bool big = (uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize > (4ull << 20) || sf.f_blocks == 0;
    autofree char *value = NULL;
    autofree char *ids = failed_ids(p, cfg, &value);
    if (big) {
        /* /tmp here is no filesystem of 4MiB: create watches the workspace
         * (policy/workspace/), so check passes and apply hands it out. */
        cr_expect_str_eq(ids, "", "%s", value);
        autofree char *out = NULL;
        autoerr struct brig_error *aerr = NULL;
        cr_expect_eq(policy_apply(p, cfg, strlen(cfg), &o, &out, &aerr), 0, "%s", aerr ? aerr->msg : "");
    }
    /* A filesystem no bigger than the bound keeps it by itself. */
    autofree char *huge = brig_asprintf("%lluT", 1ull << 20);
    autopolicy struct brig_policy *roomy = parsed("{\"workspace\": {\"path\": \"/workspace\", \"maxSize\": \"%s\"}}", huge);
    autofree char *ids2 = failed_ids(roomy, cfg, NULL);
    if (sf.f_blocks > 0 && (sf.f_type == 0xEF53 || sf.f_type == 0x01021994))
        cr_expect_str_eq(ids2, "", "a filesystem within the bound passes");
    /* Another writable bind would go around the bound; apply makes it ro. */
    autofree char *extra = with_bind(cfg, "/srv/cache", "/workspace/cache");
    autofree char *v2 = NULL;
    autofree char *ids4 = failed_ids(roomy, extra, &v2);
    cr_expect_str_eq(ids4, "workspace.quota");
    cr_expect(v2 && strstr(v2, "besides the workspace"), "%s", v2);
    autofree char *fixed = NULL;
    autoerr struct brig_error *ferr = NULL;
    if (strcmp(ids2, "") == 0) {
        cr_expect_eq(policy_apply(roomy, extra, strlen(extra), NULL, &fixed, &ferr), 0, "%s", ferr ? ferr->msg : "");
        autofree char *ids5 = fixed ? failed_ids(roomy, fixed, NULL) : NULL;
        cr_expect(ids5 && strcmp(ids5, "") == 0, "%s", ids5);
    }
    /* A missing workspace cannot be bounded. */
    autofree char *gone = brig_asprintf("%s/gone", dir);
    struct policy_apply_opts og = { .workspace_source = gone };
    autofree char *cfg2 = NULL;
    cr_assert_eq(policy_apply(plain, base, strlen(base), &og, &cfg2, &err), 0);
    autofree char *ids3 = failed_ids(p, cfg2, NULL);
    cr_expect_str_eq(ids3, "workspace.quota");
    rmdir(dir);
}

/* memory.swap is judged as the runtime writes it: 0 is "no swap" (memsw =
 * the limit), within any policy; -1 or absent is unlimited. */
Test(policy_rules, swap_zero_is_judged_as_no_swap)
{
    autopolicy struct brig_policy *p = agent();
    autofree char *good = applied(p);
    const int64_t swaps[] = { 0, -1 };
    for (size_t i = 0; i < 2; i++) {
        autoptree struct ptree *cfg = NULL;
        autoerr struct brig_error *err = NULL;
        cr_assert_eq(ptree_parse(good, strlen(good), &cfg, &err), 0);
        ptree_set(ptree_obj(ptree_obj(ptree_obj(cfg, "linux"), "resources"), "memory"), "swap",
                  ptree_new_i64(swaps[i]));
        autofree char *text = NULL;
        cr_assert_eq(ptree_write(cfg, &text, &err), 0);
        struct policy_report rep;
        check_text(p, text, &rep);
        bool mem_pass = true;
        for (size_t j = 0; j < rep.n; j++)
            if (strcmp(rep.r[j].rule, "limits.memory") == 0 && !rep.r[j].pass) mem_pass = false;
        cr_expect_eq(mem_pass, swaps[i] == 0, "swap %lld", (long long)swaps[i]);
        policy_report_free(&rep);
    }
}

/* seccomp.netlink judges the filter as the kernel runs it: conditions ANDed
 * (ORed when two name one argument, as brig loads them), 64-bit values of
 * which the kernel reads the low 32 bits of socket's int arguments. */
Test(policy_rules, netlink_protocols_judged_as_the_filter_runs)
{
    static const struct { const char *args; bool lets; } cases[] = {
        { "[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"}]", true },
        { "[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},{\"index\":2,\"value\":0,\"op\":\"SCMP_CMP_EQ\"}]", false },
        { "[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},{\"index\":2,\"value\":1,\"op\":\"SCMP_CMP_LT\"}]", false },
        { "[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},{\"index\":2,\"value\":1,\"op\":\"SCMP_CMP_LE\"}]", true },
        /* protocol 15 with high bits the kernel drops */
        { "[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},{\"index\":2,\"value\":4294967311,\"op\":\"SCMP_CMP_EQ\"}]", true },
        /* 2^32 and above only: low half 0 at 2^32, 1 at 2^32+1 */
        { "[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},{\"index\":2,\"value\":4294967295,\"op\":\"SCMP_CMP_GT\"}]", true },
        /* family with high bits set, protocol bits beyond the mask free */
        { "[{\"index\":0,\"value\":4294967295,\"valueTwo\":16,\"op\":\"SCMP_CMP_MASKED_EQ\"},"
          "{\"index\":2,\"value\":15,\"valueTwo\":0,\"op\":\"SCMP_CMP_MASKED_EQ\"}]", true },
        /* ... but none of 1-31 when the low 8 bits must be 0 (256 is no protocol) */
        { "[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},"
          "{\"index\":2,\"value\":255,\"valueTwo\":0,\"op\":\"SCMP_CMP_MASKED_EQ\"}]", false },
        /* a range within one high half that holds protocol 9 in its low half */
        { "[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},{\"index\":2,\"value\":21474836480,\"op\":\"SCMP_CMP_GE\"},"
          "{\"index\":2,\"value\":21474836489,\"op\":\"SCMP_CMP_LE\"},{\"index\":2,\"value\":21474836480,\"op\":\"SCMP_CMP_NE\"}]", true },
        /* ORed: two conditions on argument 0, so "family 16" alone allows */
        { "[{\"index\":0,\"value\":4294967295,\"valueTwo\":16,\"op\":\"SCMP_CMP_MASKED_EQ\"},"
          "{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},{\"index\":2,\"value\":0,\"op\":\"SCMP_CMP_EQ\"}]", true },
        { "[{\"index\":0,\"value\":2,\"op\":\"SCMP_CMP_EQ\"},{\"index\":0,\"value\":10,\"op\":\"SCMP_CMP_EQ\"},"
          "{\"index\":2,\"value\":0,\"op\":\"SCMP_CMP_EQ\"}]", false },
        { "[{\"index\":0,\"value\":2,\"op\":\"SCMP_CMP_EQ\"}]", false },
        { "[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_NE\"}]", true },
        /* only a type netlink refuses */
        { "[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},{\"index\":1,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]", false },
        { "[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},{\"index\":1,\"value\":524291,\"op\":\"SCMP_CMP_EQ\"}]", true },
        /* contradictory masks: nothing */
        { "[{\"index\":0,\"value\":16,\"op\":\"SCMP_CMP_EQ\"},{\"index\":2,\"value\":3,\"valueTwo\":4,\"op\":\"SCMP_CMP_MASKED_EQ\"}]", false },
    };
    autopolicy struct brig_policy *p = agent();
    autofree char *good = applied(p);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        autoptree struct ptree *cfg = NULL, *r = NULL;
        autoerr struct brig_error *err = NULL;
        cr_assert_eq(ptree_parse(good, strlen(good), &cfg, &err), 0);
        autofree char *rule = brig_asprintf("{\"names\":[\"socket\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":%s}",
                                            cases[i].args);
        cr_assert_eq(ptree_parse(rule, strlen(rule), &r, &err), 0, "%s", rule);
        ptree_push(ptree_arr(ptree_obj(ptree_obj(cfg, "linux"), "seccomp"), "syscalls"), r);
        r = NULL;
        autofree char *text = NULL;
        cr_assert_eq(ptree_write(cfg, &text, &err), 0);
        autofree char *ids = failed_ids(p, text, NULL);
        cr_expect_eq(strstr(ids, "seccomp.netlink") != NULL, cases[i].lets, "case %zu: %s -> %s", i,
                     cases[i].args, ids);
    }
}

/* Every name on the blocked list, allowed alone, fails seccomp.present at
 * the path naming it (the lookup is a bisection of the sorted list: a name
 * it misses would pass). */
Test(policy_rules, every_blocked_syscall_allowed_fails)
{
    autopolicy struct brig_policy *p = agent();
    autofree char *good = applied(p);
    size_t n = 0;
    for (const char *const *b = policy_blocked_syscalls; *b; b++, n++) {
        autoptree struct ptree *cfg = NULL;
        autoerr struct brig_error *err = NULL;
        cr_assert_eq(ptree_parse(good, strlen(good), &cfg, &err), 0);
        struct ptree *rule = ptree_new(PT_OBJ);
        char *names[] = { (char *)*b, NULL };
        ptree_set(rule, "names", ptree_new_strv(names));
        ptree_set(rule, "action", ptree_new_str("SCMP_ACT_ALLOW"));
        ptree_push(ptree_arr(obj(obj(cfg, "linux"), "seccomp"), "syscalls"), rule);
        autofree char *text = NULL;
        cr_assert_eq(ptree_write(cfg, &text, &err), 0);
        struct policy_report rep;
        check_text(p, text, &rep);
        bool failed = false;
        for (size_t j = 0; j < rep.n; j++)
            if (!rep.r[j].pass && strcmp(rep.r[j].rule, "seccomp.present") == 0 && rep.r[j].value &&
                strstr(rep.r[j].value, *b) != NULL)
                failed = true;
        cr_expect(failed, "allowing %s passed seccomp.present", *b);
        policy_report_free(&rep);
    }
    cr_expect_gt(n, 10);
}

/* A watched workspace's filter (policy/workspace/watch_fallocate.c): the
 * config's allowing rule loses fallocate, which then gets EOPNOTSUPP; a
 * filter that already stops it keeps its own action; none: one of its own. */
static struct brig_spec *fallocate_spec(const char *seccomp)
{
    char json[1024];
    snprintf(json, sizeof(json), "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"rootfs\"},"
             "\"process\":{\"args\":[\"/bin/true\"],\"cwd\":\"/\"},\"linux\":{%s}}", seccomp);
    struct brig_spec *s = NULL;
    struct brig_error *err = NULL;
    cr_assert_eq(spec_parse(json, strlen(json), "/b", &s, &err), 0, "%s", err ? err->msg : "");
    policy_seccomp_no_fallocate(&s->linux_cfg.seccomp);
    return s;
}

/* The one rule of the filter that names fallocate (asserted: exactly one). */
static const struct brig_seccomp_rule *fallocate_rule(const struct brig_seccomp *sc)
{
    const struct brig_seccomp_rule *found = NULL;
    size_t rules_naming = 0;
    for (size_t i = 0; i < sc->n_syscalls; i++)
        for (size_t j = 0; j < sc->syscalls[i].n_names; j++)
            if (strcmp(sc->syscalls[i].names[j], "fallocate") == 0) found = &sc->syscalls[i], rules_naming++;
    cr_assert_eq(rules_naming, 1);
    return found;
}

Test(watch_fallocate, allowing_rule_loses_it)
{
    struct brig_spec *s = fallocate_spec("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":["
                                         "{\"names\":[\"read\",\"fallocate\"],\"action\":\"SCMP_ACT_ALLOW\"}]}");
    const struct brig_seccomp_rule *r = fallocate_rule(&s->linux_cfg.seccomp);
    cr_assert_eq(r->action, BRIG_SCMP_ERRNO);
    cr_assert_eq(r->errno_ret, EOPNOTSUPP);
    cr_assert_eq(s->linux_cfg.seccomp.syscalls[0].n_names, 1, "read stays allowed");
    spec_free(s);
}

Test(watch_fallocate, a_stricter_denial_is_kept)
{
    struct brig_spec *s = fallocate_spec("\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
                                         "{\"names\":[\"fallocate\"],\"action\":\"SCMP_ACT_KILL\"}]}");
    cr_assert_eq(fallocate_rule(&s->linux_cfg.seccomp)->action, BRIG_SCMP_KILL);
    spec_free(s);
}

Test(watch_fallocate, no_filter_gets_one)
{
    struct brig_spec *s = fallocate_spec("\"namespaces\":[]");
    cr_assert(s->linux_cfg.seccomp.present);
    cr_assert_eq(s->linux_cfg.seccomp.default_action, BRIG_SCMP_ALLOW);
    cr_assert_eq(fallocate_rule(&s->linux_cfg.seccomp)->errno_ret, EOPNOTSUPP);
    spec_free(s);
}
