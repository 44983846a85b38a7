/* The seccomp rules of policy_check: seccomp.present (a default-deny filter
 * that blocks the risky syscalls) and seccomp.netlink (netlink sockets of
 * NETLINK_ROUTE only). The filter is judged as linux/seccomp.c loads it:
 * a rule's conditions are ANDed, unless two name the same argument, when
 * each condition is a rule of its own (ORed, as runc); a rule with the
 * default action adds nothing. */
#include "policy_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/config/spec.h"
#include "../runtime/util/strutil.h"

#define RULE(name) \
    void name(const struct brig_policy *p, const struct brig_spec *s, struct policy_report *rep, \
              const char *rule)

/* A notifier may answer "continue" and a tracer may let the call go on:
 * for a blocked syscall both are as good as an allow. */
static bool seccomp_lets_run(enum brig_scmp_action a)
{
    return a == BRIG_SCMP_ALLOW || a == BRIG_SCMP_LOG || a == BRIG_SCMP_NOTIFY || a == BRIG_SCMP_TRACE;
}

/* clone with namespace flags is unshare by another name: an allow rule for
 * clone must carry the condition "arg 0 masked by every CLONE_NEW* flag is
 * 0" (rule conditions are ANDed). clone3 passes its flags in memory, which
 * seccomp cannot read, so allowing it at all allows new namespaces. */
#define POLICY_CLONE_NS_FLAGS 0x7E020000ull   /* NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET */
static bool seccomp_clone_creates_ns(const struct brig_seccomp_rule *r, const char *name)
{
    if (strcmp(name, "clone3") == 0) return true;
    if (strcmp(name, "clone") != 0) return false;
    for (size_t k = 0; k < r->n_args; k++) {
        const struct brig_seccomp_arg *a = &r->args[k];
        if (a->index == 0 && a->op == BRIG_SCMP_CMP_MASKED_EQ &&
            (a->value & POLICY_CLONE_NS_FLAGS) == POLICY_CLONE_NS_FLAGS &&
            (a->value_two & POLICY_CLONE_NS_FLAGS) == 0)
            return false;
    }
    return true;
}

static int seccomp_name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* policy_blocked_syscalls sorted, once: a filter's ~350 allowed names are
 * each looked up by bisection, not against the whole list. */
static const char *seccomp_blocked(const char *name)
{
    static const char **sorted;
    static size_t n;
    if (sorted == NULL) {
        while (policy_blocked_syscalls[n] != NULL) n++;
        const char **v = brig_calloc(n ? n : 1, sizeof(*v));
        memcpy(v, policy_blocked_syscalls, n * sizeof(*v));
        qsort(v, n, sizeof(*v), seccomp_name_cmp);
        sorted = v;
    }
    const char *const *hit = bsearch(&name, sorted, n, sizeof(*sorted), seccomp_name_cmp);
    return hit != NULL ? *hit : NULL;
}

RULE(policy_rule_seccomp)
{
    (void)p;
    const struct brig_seccomp *sc = &s->linux_cfg.seccomp;
    if (!sc->present) {
        policy_fail(rep, rule, "linux.seccomp", "absent: every syscall is allowed");
        return;
    }
    if (seccomp_lets_run(sc->default_action))
        policy_fail(rep, rule, "linux.seccomp.defaultAction",
                    "lets unlisted syscalls run (the policy needs a default-deny allowlist)");
    for (size_t i = 0; i < sc->n_syscalls; i++) {
        const struct brig_seccomp_rule *r = &sc->syscalls[i];
        if (!seccomp_lets_run(r->action)) continue;
        for (size_t j = 0; j < r->n_names; j++) {
            if (seccomp_clone_creates_ns(r, r->names[j])) {
                char path[96];
                snprintf(path, sizeof(path), "linux.seccomp.syscalls[%zu].names[%zu]", i, j);
                policy_fail(rep, rule, path, "\"%s\" is allowed without a condition excluding "
                            "the CLONE_NEW* flags (new namespaces, as unshare)", r->names[j]);
            }
            const char *b = seccomp_blocked(r->names[j]);
            if (b != NULL) {
                char path[96];
                snprintf(path, sizeof(path), "linux.seccomp.syscalls[%zu].names[%zu]", i, j);
                policy_fail(rep, rule, path, "\"%s\" is allowed%s", b,
                            r->n_args ? " (with argument conditions)" : "");
            }
        }
    }
}

/* ---- can an argument take a value the conditions allow? ----
 * One argument's conditions (ANDed) become an interval [lo, hi], bits that
 * must hold given values (mask, bits) and values it must not be (ne): the
 * smallest value >= lo with those bits that is no excluded one answers
 * exactly, in at most (number of NE conditions + 1) steps. */
struct arg_set {
    uint64_t lo, hi, mask, bits;
    uint64_t ne[6];
    size_t n_ne;
    bool empty;
};

static void arg_set_fix(struct arg_set *a, uint64_t mask, uint64_t bits)
{
    if ((bits & ~mask) != 0 || ((a->bits ^ bits) & a->mask & mask) != 0) a->empty = true;
    a->mask |= mask;
    a->bits |= bits & mask;
}

static void arg_set_add(struct arg_set *a, const struct brig_seccomp_arg *c)
{
    uint64_t v = c->value;
    switch (c->op) {
    case BRIG_SCMP_CMP_NE: if (a->n_ne < 6) a->ne[a->n_ne++] = v; break;
    case BRIG_SCMP_CMP_LT: if (v == 0) a->empty = true; else if (v - 1 < a->hi) a->hi = v - 1; break;
    case BRIG_SCMP_CMP_LE: if (v < a->hi) a->hi = v; break;
    case BRIG_SCMP_CMP_GT: if (v == UINT64_MAX) a->empty = true; else if (v + 1 > a->lo) a->lo = v + 1; break;
    case BRIG_SCMP_CMP_GE: if (v > a->lo) a->lo = v; break;
    case BRIG_SCMP_CMP_EQ: arg_set_fix(a, UINT64_MAX, v); break;
    case BRIG_SCMP_CMP_MASKED_EQ: arg_set_fix(a, v, c->value_two); break;
    }
}

/* The smallest f >= t whose set bits are all in free, if any. */
static bool submask_at_least(uint64_t free, uint64_t t, uint64_t *f)
{
    if ((t & ~free) == 0) { *f = t; return true; }
    int h = 63 - __builtin_clzll(t & ~free);    /* a bit of t that f cannot have */
    for (int i = h + 1; i < 64; i++) {
        uint64_t bit = 1ull << i, above = i == 63 ? 0 : t & ~((bit << 1) - 1);
        if ((t & bit) == 0 && (free & bit) != 0 && (above & ~free) == 0) {
            *f = above | bit;
            return true;
        }
    }
    return false;
}

static bool arg_set_inhabited(const struct arg_set *a)
{
    if (a->empty) return false;
    uint64_t from = a->lo;
    for (size_t step = 0; step <= a->n_ne; step++) {
        if (from > a->hi) return false;
        uint64_t f, x;
        if (from <= a->bits) f = 0;
        else if (!submask_at_least(~a->mask, from - a->bits, &f)) return false;
        x = a->bits | f;
        if (x > a->hi) return false;
        bool excluded = false;
        for (size_t k = 0; k < a->n_ne; k++) excluded |= a->ne[k] == x;
        if (!excluded) return true;
        if (x == UINT64_MAX) return false;
        from = x + 1;
    }
    return false;
}

/* Can the conditions conds[0..n) (ANDed) hold for a call whose argument i
 * has the low 32 bits want_low[i] (when fixed[i]; the kernel reads int
 * arguments from the low half and ignores the rest)? */
static bool conds_satisfiable(const struct brig_seccomp_arg *conds, size_t n, const bool fixed[6],
                              const uint32_t want_low[6])
{
    for (unsigned i = 0; i < 6; i++) {
        struct arg_set a = { .hi = UINT64_MAX };
        if (fixed[i]) arg_set_fix(&a, 0xFFFFFFFFull, want_low[i]);
        bool any = false;
        for (size_t k = 0; k < n; k++)
            if (conds[k].index == i) { arg_set_add(&a, &conds[k]); any = true; }
        if ((any || fixed[i]) && !arg_set_inhabited(&a)) return false;
    }
    return true;
}

/* Does rule r, as brig loads it, let a call with these arguments run? */
static bool rule_lets_call(const struct brig_seccomp_rule *r, const bool fixed[6], const uint32_t want_low[6])
{
    bool or_args = false;
    unsigned seen = 0;
    for (size_t k = 0; k < r->n_args; k++) {
        if (r->args[k].index > 5) return false;     /* refused at load */
        if (seen & (1u << r->args[k].index)) or_args = true;
        seen |= 1u << r->args[k].index;
    }
    if (!or_args || r->n_args == 0) return conds_satisfiable(r->args, r->n_args, fixed, want_low);
    for (size_t k = 0; k < r->n_args; k++)
        if (conds_satisfiable(&r->args[k], 1, fixed, want_low)) return true;
    return false;
}

#define AF_NETLINK_ 16
#define NETLINK_PROTOCOLS 32    /* the kernel's MAX_LINKS */
static const char *netlink_name(unsigned proto)
{
    static const char *const names[NETLINK_PROTOCOLS] = {
        [0] = "NETLINK_ROUTE", [2] = "NETLINK_USERSOCK", [4] = "NETLINK_SOCK_DIAG",
        [5] = "NETLINK_NFLOG", [6] = "NETLINK_XFRM", [7] = "NETLINK_SELINUX", [8] = "NETLINK_ISCSI",
        [9] = "NETLINK_AUDIT", [10] = "NETLINK_FIB_LOOKUP", [11] = "NETLINK_CONNECTOR",
        [12] = "NETLINK_NETFILTER", [13] = "NETLINK_IP6_FW", [14] = "NETLINK_DNRTMSG",
        [15] = "NETLINK_KOBJECT_UEVENT", [16] = "NETLINK_GENERIC", [18] = "NETLINK_SCSITRANSPORT",
        [19] = "NETLINK_ECRYPTFS", [20] = "NETLINK_RDMA", [21] = "NETLINK_CRYPTO", [22] = "NETLINK_SMC",
    };
    return proto < NETLINK_PROTOCOLS && names[proto] ? names[proto] : "unnamed";
}

/* Netlink families other than NETLINK_ROUTE reach host-wide state from any
 * network namespace: device events (KOBJECT_UEVENT), the audit stream,
 * the process connector, generic netlink families that are not
 * namespaced. A sandbox needs only its own namespace's interfaces. Judged
 * only in a default-deny filter (seccomp.present fails the others). */
RULE(policy_rule_seccomp_netlink)
{
    (void)p;
    const struct brig_seccomp *sc = &s->linux_cfg.seccomp;
    if (!sc->present || seccomp_lets_run(sc->default_action)) return;
    for (size_t i = 0; i < sc->n_syscalls; i++) {
        const struct brig_seccomp_rule *r = &sc->syscalls[i];
        if (!seccomp_lets_run(r->action) || r->action == sc->default_action) continue;
        bool names_socket = false;
        for (size_t j = 0; j < r->n_names; j++) names_socket |= strcmp(r->names[j], "socket") == 0;
        if (!names_socket) continue;
        /* socket(AF_NETLINK, SOCK_RAW or SOCK_DGRAM [| CLOEXEC | NONBLOCK], protocol) */
        static const uint32_t types[] = { 2, 3, 2 | 0x800, 3 | 0x800, 2 | 0x80000, 3 | 0x80000,
                                          2 | 0x80800, 3 | 0x80800 };
        const bool fixed[6] = { true, true, true, false, false, false };
        /* An argument left free only widens what a rule lets through (each
         * argument's conditions are judged alone, ANDed or ORed): a rule
         * that lets no AF_NETLINK socket, or none of a protocol, whatever
         * the type, lets none of each type. One look for the rule and one
         * per protocol before the eight types (the profile's other socket
         * rules, of families 1, 2, 10 and 17, end at the first). */
        const bool family_only[6] = { true, false, false, false, false, false };
        const bool family_proto[6] = { true, false, true, false, false, false };
        const uint32_t netlink[6] = { AF_NETLINK_, 0, 0, 0, 0, 0 };
        if (!rule_lets_call(r, family_only, netlink)) continue;
        for (unsigned proto = 1; proto < NETLINK_PROTOCOLS; proto++) {
            const uint32_t any_type[6] = { AF_NETLINK_, 0, proto, 0, 0, 0 };
            if (!rule_lets_call(r, family_proto, any_type)) continue;
            bool lets = false;
            for (size_t t = 0; t < sizeof(types) / sizeof(types[0]) && !lets; t++) {
                const uint32_t want[6] = { AF_NETLINK_, types[t], proto, 0, 0, 0 };
                lets = rule_lets_call(r, fixed, want);
            }
            if (!lets) continue;
            char path[64];
            snprintf(path, sizeof(path), "linux.seccomp.syscalls[%zu]", i);
            policy_fail(rep, rule, path, "lets AF_NETLINK sockets of protocol %u (%s) be made: "
                        "host-wide netlink families (device events, audit) reach the container; "
                        "allow only protocol 0, NETLINK_ROUTE", proto, netlink_name(proto));
            break;
        }
    }
}
