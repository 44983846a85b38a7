/* Judging `brig-probe boundaries` output against a policy (pure). Each
 * boundary the policy asks for becomes one result: closed (holds) or open,
 * with what the probe saw. Boundaries the policy does not ask for (a
 * writable root under rootReadonly false) are not listed. */
#include "policy_internal.h"
#include "../egress/egress_rules.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/config/json.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

struct bnd_list {
    struct policy_boundary *b;
    size_t n, cap;
};

static void bnd_add(struct bnd_list *l, const char *name, bool closed, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void bnd_add(struct bnd_list *l, const char *name, bool closed, const char *fmt, ...)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->b = realloc(l->b, l->cap * sizeof(*l->b));
        if (l->b == NULL) abort();
    }
    struct policy_boundary *b = &l->b[l->n++];
    b->name = name;
    b->closed = closed;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->detail, sizeof(b->detail), fmt, ap);
    va_end(ap);
}

static const char *str_at(brig_json obj, const char *key)
{
    const char *s = NULL;
    brig_json v = json_get(obj, key);
    if (v == NULL || json_as_string(v, key, &s, NULL) < 0) return "(missing)";
    return s;
}

/* A denied attempt: anything but success. A missing value counts as open:
 * a probe that could not report must not pass. */
static bool denied(const char *r)
{
    return strcmp(r, "ok") != 0 && strcmp(r, "(missing)") != 0;
}

/* Network egress: the proxy inside refuses what the rules refuse, and lets
 * an allowed name through (200, or 502 when this host cannot reach it:
 * either way the rules allowed it). The expectation for the unlisted name
 * comes from the rules themselves ("*:*" allows it). */
static void eval_egress(const struct brig_policy *p, brig_json j, struct bnd_list *l)
{
    brig_json e = json_get(j, "egress");
    char why[256];
    bool unlisted_denied = egress_check_name(p->network.egress, "brig-selftest.invalid", 443, why, sizeof(why)) < 0;
    static const struct { const char *key, *name, *want; } refused[] = {
        { "metadata", "egress.metadata", "403" },
        { "loopback", "egress.loopback", "403" },
        { "decimal", "egress.ip-forms", "400" },
        { "socks_private", "egress.socks-private", "socks-2" },
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        const char *r = str_at(e, refused[i].key);
        bnd_add(l, refused[i].name, strcmp(r, refused[i].want) == 0, "proxy answer: %s (want %s)", r,
                refused[i].want);
    }
    const char *u = str_at(e, "unlisted");
    if (unlisted_denied)
        bnd_add(l, "egress.unlisted", strcmp(u, "403") == 0, "an unlisted name: %s (want 403)", u);
    autofree char *sample = policy_egress_sample(p);
    if (sample != NULL) {
        const char *a = str_at(e, "allowed");
        bnd_add(l, "egress.allowed", strcmp(a, "200") == 0 || strcmp(a, "502") == 0,
                "%s: %s (want 200, or 502 when this host cannot reach it)", sample, a);
    }
}

static void eval_net(const struct brig_policy *p, brig_json j, const struct policy_host_ns *host,
                     struct bnd_list *l)
{
    brig_json ns = json_get(j, "ns");
    uint64_t net = 0;
    json_get_u64(ns, "ns", "net", false, &net, NULL);
    if (p->network.mode != POLICY_NET_NETNS) {
        bnd_add(l, "net.namespace", net != 0 && net != host->net, "net ns %llu, host %llu",
                (unsigned long long)net, (unsigned long long)host->net);
        brig_json ifs = json_get(j, "interfaces");
        bool only_lo = json_is_array(ifs);
        autofree char *names = brig_strdup("");
        for (size_t i = 0; only_lo && i < json_array_len(ifs); i++) {
            const char *n = NULL;
            json_as_string(json_array_at(ifs, i), "", &n, NULL);
            if (n == NULL || strcmp(n, "lo") != 0) only_lo = false;
            char *next = brig_asprintf("%s%s%s", names, names[0] ? "," : "", n ? n : "?");
            free(names);
            names = next;
        }
        bnd_add(l, "net.interfaces", only_lo, "interfaces: %s", names);
        /* EADDRNOTAVAIL: no address of that family at all (Docker disables IPv6). */
        static const char *const unreachable[] = { "ENETUNREACH", "EADDRNOTAVAIL", "EACCES", "EPERM",
                                                   "EAFNOSUPPORT", NULL };
        static const char *const keys[] = { "connect4", "connect6" };
        static const char *const names_[] = { "net.connect4", "net.connect6" };
        for (size_t k = 0; k < 2; k++) {
            const char *r = str_at(j, keys[k]);
            bool closed = false;
            for (const char *const *u = unreachable; *u; u++) closed |= strcmp(r, *u) == 0;
            bnd_add(l, names_[k], closed, "connect to a TEST-NET address: %s", r);
        }
    }
    if (p->network.mode == POLICY_NET_EGRESS) eval_egress(p, j, l);
    static const char *const other[] = { "pid", "ipc", "uts", "mnt" };
    static const char *const names_[] = { "ns.pid", "ns.ipc", "ns.uts", "ns.mnt" };
    const uint64_t hosts[] = { host->pid, host->ipc, host->uts, host->mnt };
    for (size_t i = 0; i < 4; i++) {
        uint64_t v = 0;
        json_get_u64(ns, "ns", other[i], false, &v, NULL);
        bnd_add(l, names_[i], v != 0 && v != hosts[i], "%s ns %llu, host %llu", other[i],
                (unsigned long long)v, (unsigned long long)hosts[i]);
    }
}

static void eval_fs(const struct brig_policy *p, brig_json j, struct bnd_list *l)
{
    brig_json w = json_get(j, "write");
    if (p->root_readonly) {
        /* The mount must be read-only: a root-owned / that uid 1000 cannot
         * write is still writable by any root the container gains. */
        brig_json ro = json_get(j, "readonly");
        bool root_ro = false, usr_ro = false;
        json_get_bool(ro, "readonly", "/", true, &root_ro, NULL);
        json_get_bool(ro, "readonly", "/usr", true, &usr_ro, NULL);
        bnd_add(l, "fs.root.readonly", root_ro && denied(str_at(w, "/")), "write to /: %s, %s mount",
                str_at(w, "/"), root_ro ? "read-only" : "writable");
        bnd_add(l, "fs.usr.readonly", usr_ro && denied(str_at(w, "/usr")), "write to /usr: %s, %s mount",
                str_at(w, "/usr"), usr_ro ? "read-only" : "writable");
    }
    if (p->workspace.path != NULL && json_get(w, p->workspace.path) != NULL) {
        const char *r = str_at(w, p->workspace.path);
        bnd_add(l, "workspace.writable", strcmp(r, "ok") == 0, "write to %s: %s", p->workspace.path, r);
    }
    brig_json fst = json_get(j, "fstype");
    for (size_t i = 0; i < p->n_tmpfs; i++) {
        const char *r = str_at(fst, p->tmpfs[i].path);
        bnd_add(l, "fs.tmpfs", strcmp(r, "tmpfs") == 0, "%s: %s", p->tmpfs[i].path, r);
    }
    const char *kcore = str_at(j, "kcore");
    bnd_add(l, "proc.kcore", strcmp(kcore, "readable") != 0 && strcmp(kcore, "(missing)") != 0,
            "/proc/kcore: %s", kcore);
    bnd_add(l, "proc.sys.readonly", denied(str_at(j, "proc_sys_write")), "open /proc/sys/kernel/hostname "
            "for writing: %s", str_at(j, "proc_sys_write"));
    bool cg_rw = true, sys_rw = true;
    json_get_bool(j, "", "cgroup_writable", true, &cg_rw, NULL);
    json_get_bool(j, "", "sysfs_writable", true, &sys_rw, NULL);
    bnd_add(l, "cgroup.readonly", !cg_rw, "cgroup mounts %s%s", cg_rw ? "writable: " : "read-only",
            cg_rw ? str_at(j, "cgroup_writable_at") : "");
    bnd_add(l, "sysfs.readonly", !sys_rw, "sysfs %s", sys_rw ? "writable" : "read-only");
    brig_json socks = json_get(j, "sockets");
    bool none = json_is_object(socks);
    const char *which = "";
    for (size_t i = 0; none && i < json_object_len(socks); i++) {
        const char *r = NULL;
        json_as_string(json_object_value(socks, i), "", &r, NULL);
        if (r == NULL || strcmp(r, "present") == 0) {
            none = false;
            which = json_object_key(socks, i);
        }
    }
    bnd_add(l, "engine.sockets", none, "%s", none ? "no engine socket" : which);
    brig_json dirs = json_get(j, "host_dirs");
    bool no_home = json_is_array(dirs) && json_array_len(dirs) == 0;
    const char *first = NULL;
    if (!no_home && json_is_array(dirs)) json_as_string(json_array_at(dirs, 0), "", &first, NULL);
    bnd_add(l, "host.home", no_home, "%s", no_home ? "no host home, key or secret directory mounted"
            : first ? first : "(missing)");
}

static void eval_privs(const struct brig_policy *p, brig_json j, struct bnd_list *l)
{
    brig_json sc = json_get(j, "syscalls");
    static const char *const tries[][2] = {
        { "mount", "priv.mount" }, { "unshare-user", "priv.unshare_user" },
        { "ptrace-pid1", "priv.ptrace_pid1" }, { "setuid0", "priv.setuid" },
        { "keyctl", "seccomp.keyctl" }, { "bpf", "seccomp.bpf" },
        { "perf_event_open", "seccomp.perf_event_open" }, { "io_uring_setup", "seccomp.io_uring_setup" },
        { "userfaultfd", "seccomp.userfaultfd" }, { "socketcall32", "seccomp.socketcall32" },
        { "netlink-uevent", "seccomp.netlink" },
    };
    for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
        const char *r = str_at(sc, tries[i][0]);
        /* EFAULT from socketcall means the call reached the kernel. */
        bool closed = denied(r) && !(strcmp(tries[i][0], "socketcall32") == 0 && strcmp(r, "EFAULT") == 0);
        bnd_add(l, tries[i][1], closed, "%s: %s", tries[i][0], r);
    }
    brig_json st = json_get(j, "status");
    static const char *const caps[] = { "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb" };
    for (size_t i = 0; i < 5; i++) {
        const char *v = str_at(st, caps[i]);
        uint64_t mask = strtoull(v, NULL, 16);
        bool ok = strcmp(v, "(missing)") != 0 && (mask & ~p->caps) == 0;
        bnd_add(l, "caps", ok, "%s %s", caps[i], v);
    }
    if (p->no_new_privileges)
        bnd_add(l, "nnp", strcmp(str_at(st, "NoNewPrivs"), "1") == 0, "NoNewPrivs %s", str_at(st, "NoNewPrivs"));
    bnd_add(l, "seccomp.mode", strcmp(str_at(st, "Seccomp"), "2") == 0, "Seccomp %s", str_at(st, "Seccomp"));
    if (!p->user.userns) {
        uint64_t uid = UINT64_MAX, gid = UINT64_MAX;
        json_get_u64(j, "", "uid", false, &uid, NULL);
        json_get_u64(j, "", "gid", false, &gid, NULL);
        bnd_add(l, "user", uid == p->user.uid && gid == p->user.gid, "uid %lld gid %lld",
                uid == UINT64_MAX ? -1ll : (long long)uid, gid == UINT64_MAX ? -1ll : (long long)gid);
    }
}

/* A cgroup value: "max" is unlimited (UINT64_MAX), "" unknown (0). */
static uint64_t cg_value(const char *s)
{
    if (strcmp(s, "max") == 0) return UINT64_MAX;
    return strtoull(s, NULL, 10);
}

static void eval_limits(const struct brig_policy *p, brig_json j, struct bnd_list *l)
{
    brig_json c = json_get(j, "cgroup_limits");
    const char *mem = str_at(c, "memory"), *pids = str_at(c, "pids");
    uint64_t m = cg_value(mem), n = cg_value(pids);
    bnd_add(l, "limits.memory", m > 0 && m <= p->limits.memory, "memory limit %s (at most %llu)",
            mem[0] ? mem : "unknown", (unsigned long long)p->limits.memory);
    bnd_add(l, "limits.pids.cgroup", n > 0 && n <= p->limits.pids, "pids.max %s (at most %llu)",
            pids[0] ? pids : "unknown", (unsigned long long)p->limits.pids);
    /* cgroup v2 "QUOTA PERIOD", or v1 quota with its period file. */
    const char *cpu = str_at(c, "cpu");
    uint64_t quota = 0, per = 0;
    if (strncmp(cpu, "max", 3) == 0) quota = UINT64_MAX;
    else if (sscanf(cpu, "%" SCNu64 " %" SCNu64, &quota, &per) < 2) per = cg_value(str_at(c, "cpu_period"));
    if (cpu[0] == '-') quota = UINT64_MAX;      /* v1: -1 is unlimited */
    bool ok = quota != UINT64_MAX && quota > 0 && per > 0 && quota * 1000 / per <= p->limits.cpu_milli;
    bnd_add(l, "limits.cpu", ok, "cpu quota %s%s%s", cpu[0] ? cpu : "unknown", per ? " per " : "",
            per ? str_at(c, "cpu_period") : "");
}

static void eval_env_pids(const struct brig_policy *p, brig_json j, struct bnd_list *l)
{
    brig_json env = json_get(j, "env_names");
    autofree char *bad = brig_strdup("");
    for (size_t i = 0; json_is_array(env) && i < json_array_len(env); i++) {
        const char *n = NULL;
        if (json_as_string(json_array_at(env, i), "", &n, NULL) < 0 || !policy_env_name_denied(p, n)) continue;
        char *next = brig_asprintf("%s%s%s", bad, bad[0] ? "," : "", n);
        free(bad);
        bad = next;
    }
    bnd_add(l, "env.secrets", json_is_array(env) && bad[0] == '\0', "%s",
            bad[0] ? bad : json_is_array(env) ? "no secret-looking names" : "(missing)");
    brig_json pids = json_get(j, "pids");
    uint64_t req = 0, forked = UINT64_MAX;
    json_get_u64(pids, "pids", "requested", false, &req, NULL);
    json_get_u64(pids, "pids", "forked", false, &forked, NULL);
    bnd_add(l, "limits.pids", req > 0 && forked < req, "forked %lld of %llu (%s)",
            forked == UINT64_MAX ? -1ll : (long long)forked, (unsigned long long)req, str_at(pids, "result"));
}

int policy_boundaries_eval(const struct brig_policy *p, const char *probe_json,
                           const struct policy_host_ns *host, struct policy_boundary **out,
                           size_t *n, struct brig_error **err)
{
    autojson brig_json j = NULL;
    if (json_parse(probe_json, strlen(probe_json), &j, err) < 0) return brig_wrap(err, "probe output");
    if (!json_is_object(j) || strcmp(str_at(j, "op"), "boundaries") != 0)
        return brig_failx(err, "probe output: not a boundaries report");
    struct bnd_list l = { 0 };
    eval_net(p, j, host, &l);
    eval_fs(p, j, &l);
    eval_privs(p, j, &l);
    eval_limits(p, j, &l);
    eval_env_pids(p, j, &l);
    *out = l.b;
    *n = l.n;
    return 0;
}
