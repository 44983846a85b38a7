/* Enforcement at create (and exec): the policy comes only from the trusted
 * side (--policy, /etc/brig/policy.json), never from the bundle or its
 * annotations. With neither, nothing is enforced. In enforce mode a
 * violation refuses the operation with the violations listed; in audit
 * mode it proceeds and the violations are logged. Every decision goes to
 * the audit log; a log that cannot be written refuses in enforce mode. */
#include "policy.h"
#include "policy_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>

#include "../runtime/config/spec.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

int policy_resolve(const char *flag, struct brig_policy **out, struct brig_error **err)
{
    *out = NULL;
    if (flag != NULL && flag[0] != '\0') return policy_load(flag, out, err);
    if (access(POLICY_SYSTEM_FILE, F_OK) == 0) return policy_load(POLICY_SYSTEM_FILE, out, err);
    if (errno != ENOENT) return brig_fail(err, errno, "policy %s", POLICY_SYSTEM_FILE);
    return 0;
}

int policy_resolve_text(const char *flag, const char *text, struct brig_policy **out, struct brig_error **err)
{
    if (text == NULL) return policy_resolve(flag, out, err);
    *out = NULL;
    if (policy_parse(text, strlen(text), out, err) < 0)
        return brig_wrap(err, "policy %s (as read before)", flag ? flag : "?");
    return 0;
}

/* Check what is mounted, not a path: a bind source is opened once here
 * (following symlinks, as the mount would), its source becomes the path of
 * what was opened, and the mount uses the fd. A container that owns a
 * directory on the way (its workspace) can no longer swap it for a symlink
 * between this check and the mount. The fds are close-on-exec and live as
 * long as this brig process. */
static int policy_pin_bind_sources(struct brig_spec *s, struct brig_error **err)
{
    for (size_t i = 0; i < s->n_mounts; i++) {
        struct brig_mount *m = &s->mounts[i];
        if (!policy_mount_is_bind(m) || m->source == NULL || m->source[0] != '/' || m->has_source_fd)
            continue;
        int fd = open(m->source, O_PATH | O_CLOEXEC);
        if (fd < 0) {
            /* Judged by its spelling; the mount refuses it (source_fd -1)
             * rather than take whatever appears there later. */
            brig_debug("policy: mounts[%zu].source %s: %s", i, m->source, strerror(errno));
            m->has_source_fd = true;
            m->source_fd = -1;
            continue;
        }
        char link[64], real[PATH_MAX];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, real, sizeof(real) - 1);
        if (n <= 0 || real[0] != '/') {
            int e = n < 0 ? errno : ENOENT;
            close(fd);
            return brig_fail(err, e, "mounts[%zu].source %s: where it leads", i, m->source);
        }
        real[n] = '\0';
        brig_debug("policy: mounts[%zu].source %s is %s (fd %d)", i, m->source, real, fd);
        free(m->source);
        m->source = brig_strdup(real);
        m->has_source_fd = true;
        m->source_fd = fd;
    }
    return 0;
}

/* workspace.maxSize is set on the host only for a create the policy
 * allows (or audits): a refused config changes nothing. A bound that
 * cannot be set is one more failed result, so enforce mode refuses it
 * like any violation and audit mode logs it. */
static void policy_enforce_quota(const struct brig_policy *p, struct brig_spec *s, struct policy_report *rep)
{
    size_t idx = 0;
    struct brig_mount *m = (struct brig_mount *)policy_workspace_mount(p, s, &idx);
    if (p->workspace.max_size == 0 || m == NULL || !m->has_source_fd || m->source_fd < 0) return;
    for (size_t i = 0; i < rep->n; i++)     /* audit mode: already judged unenforceable */
        if (!rep->r[i].pass && strcmp(rep->r[i].rule, "workspace.quota") == 0) return;
    autoerr struct brig_error *qerr = NULL;
    if (policy_quota_apply(p, s, m, &qerr) == 0) {
        if (m->watch_bytes > 0) policy_seccomp_no_fallocate(&s->linux_cfg.seccomp);
        return;
    }
    char path[64];
    snprintf(path, sizeof(path), "mounts[%zu].source", idx);
    policy_fail(rep, "workspace.quota", path, "workspace.maxSize %llu bytes cannot be enforced: %s",
                (unsigned long long)p->workspace.max_size, qerr->msg);
}

int policy_enforce(const char *flag, const char *text, struct brig_spec *s, const char *op, const char *id,
                   struct brig_error **err)
{
    autopolicy struct brig_policy *p = NULL;
    TRY(policy_resolve_text(flag, text, &p, err));
    return policy_enforce_resolved(p, s, op, id, err);
}

/* Under a policy the image's own device nodes open nothing: engines allow
 * c 5:1 (the host's console) in the device cgroup, and a node of it in the
 * image would be the host's console. Only where /dev is a mount of its own,
 * which then keeps the nodes the runtime makes there. */
static void policy_root_nodev(struct brig_spec *s)
{
    /* A bind brings a host directory's nodes the same way (an image's
     * subdirectory, a volume the engine filled from the image): every bind
     * is nodev too. Device nodes are not bound under a policy (/dev is a
     * denied source); they are linux.devices, made in /dev. */
    for (size_t b = 0; b < s->n_mounts; b++) {
        struct brig_mount *m = &s->mounts[b];
        if (!policy_mount_is_bind(m)) continue;
        /* as an option, last (it wins over a "dev"): the init parses the
         * options again; "rnodev" for an rbind's submounts too */
        char **opts = brig_calloc(m->n_options + 2, sizeof(*opts));
        for (size_t j = 0; j < m->n_options; j++) opts[j] = m->options[j];
        opts[m->n_options] = brig_strdup(m->opts.recursive_bind ? "rnodev" : "nodev");
        free(m->options);
        m->options = opts;
        m->n_options++;
        m->opts.flags |= MS_NODEV;
        m->opts.clear_flags &= ~(unsigned long)MS_NODEV;
    }
    int i = policy_dev_mount_index(s);
    if (i < 0) return;
    s->root.nodev = true;
    brig_debug("policy: / will be nodev (/dev is mounts[%d])", i);
}

/* Under a workspace bound an engine's per-container files (hosts,
 * hostname, resolv.conf, .containerenv: bound from the engine's state on
 * the host's disk) are read-only: appended to, they would take the writes
 * the bound stops. The engine still changes them from outside. */
static void policy_engine_files_ro(const struct brig_policy *p, struct brig_spec *s)
{
    if (p->workspace.max_size == 0) return;
    for (size_t i = 0; i < s->n_mounts; i++) {
        struct brig_mount *m = &s->mounts[i];
        if (!policy_mount_is_bind(m) || m->source == NULL || !policy_engine_file(m->source) ||
            policy_mount_readonly(m))
            continue;
        char **opts = brig_calloc(m->n_options + 2, sizeof(*opts));
        for (size_t j = 0; j < m->n_options; j++) opts[j] = m->options[j];
        opts[m->n_options] = brig_strdup("ro");
        free(m->options);
        m->options = opts;
        m->n_options++;
        m->opts.flags |= MS_RDONLY;
        m->opts.clear_flags &= ~(unsigned long)MS_RDONLY;
        brig_debug("policy: %s read-only under workspace.maxSize", m->destination);
    }
}

int policy_enforce_resolved(const struct brig_policy *p, struct brig_spec *s, const char *op,
                            const char *id, struct brig_error **err)
{
    if (p == NULL) {
        brig_debug("policy: none (no --policy, no %s)", POLICY_SYSTEM_FILE);
        return 0;
    }
    if (strcmp(op, "create") == 0) {
        TRY(policy_pin_bind_sources(s, err));
        policy_root_nodev(s);
        policy_engine_files_ro(p, s);
    }
    struct policy_report rep;
    policy_check(p, s, &rep);
    if (strcmp(op, "create") == 0 && (rep.failed == 0 || p->mode == POLICY_AUDIT))
        policy_enforce_quota(p, s, &rep);
    /* An exec'd process is not started through the init (PID 1 already
     * is): the init rule judges the container's own process only. */
    for (size_t i = 0; strcmp(op, "exec") == 0 && i < rep.n; i++) {
        if (rep.r[i].pass || strcmp(rep.r[i].rule, "init") != 0) continue;
        rep.r[i].pass = true;
        rep.failed--;
    }
    autofree char *ids = policy_report_failed_ids(&rep);
    bool deny = rep.failed > 0 && p->mode == POLICY_ENFORCE;
    struct policy_audit_event ev = {
        .op = op, .id = id, .rules = ids[0] ? ids : NULL,
        .decision = rep.failed == 0 ? "allow" : deny ? "deny" : "audit",
    };
    autoerr struct brig_error *aerr = NULL;
    int arc = policy_audit(p, &ev, &aerr);
    if (rep.failed == 0) {
        policy_report_free(&rep);
        brig_debug("policy %s: %s %s allowed", p->name, op, id);
        if (arc < 0 && p->mode == POLICY_ENFORCE)
            return brig_failx(err, "policy %s: %s (an unlogged decision is refused in enforce mode)",
                              p->name, aerr->msg);
        if (arc < 0) brig_warn("%s", aerr->msg);
        return 0;
    }
    autofree char *text = policy_report_text(&rep, true);
    policy_report_free(&rep);
    if (!deny) {
        brig_warn("policy %s (audit mode): %s %s violates %s", p->name, op, id, ids);
        if (arc < 0) brig_warn("%s", aerr->msg);
        return 0;
    }
    /* Drop the final newline of the listing. */
    size_t n = strlen(text);
    if (n > 0 && text[n - 1] == '\n') text[n - 1] = '\0';
    return brig_failx(err, "policy %s refuses %s: %s\n%s", p->name, op, ids, text);
}

void policy_audit_op(const char *flag, const char *op, const char *id, bool has_status, int exit_status,
                     bool has_duration, uint64_t duration_ms)
{
    autopolicy struct brig_policy *p = NULL;
    autoerr struct brig_error *err = NULL;
    if (policy_resolve(flag, &p, &err) < 0 || p == NULL) return;
    policy_audit_op_resolved(p, op, id, has_status, exit_status, has_duration, duration_ms);
}

void policy_audit_op_resolved(const struct brig_policy *p, const char *op, const char *id,
                              bool has_status, int exit_status, bool has_duration,
                              uint64_t duration_ms)
{
    autoerr struct brig_error *err = NULL;
    if (p == NULL) return;
    struct policy_audit_event ev = {
        .op = op, .id = id, .has_exit_status = has_status, .exit_status = exit_status,
        .has_duration = has_duration, .duration_ms = duration_ms,
    };
    if (policy_audit(p, &ev, &err) < 0) brig_warn("%s", err->msg);
}
