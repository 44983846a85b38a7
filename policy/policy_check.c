/* policy_check: a pure judgement of a struct brig_spec against a policy.
 * One result per rule that passes, one per offending value for a rule that
 * fails; rule ids are stable (docs/policy.md). Helpers shared with apply. */
#include "policy_internal.h"

#include <fnmatch.h>
#include <limits.h>
#include <linux/mount.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "../runtime/config/spec.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/strutil.h"

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif

const char *const policy_blocked_syscalls[] = {
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "userfaultfd", "socketcall", "unshare", "setns",
    "mount", "umount2", "fsopen", "fsmount", "fspick", "fsconfig", "move_mount", "open_tree",
    "open_tree_attr", "mount_setattr", "pivot_root",
    "ptrace", "process_vm_readv", "process_vm_writev", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "open_by_handle_at", "swapon", "swapoff",
    "reboot", "acct", "quotactl", "quotactl_fd", "lookup_dcookie", "nfsservctl", "vm86", "vm86old",
    "uselib", "ustat", "sysfs", "_sysctl", "clock_settime", "settimeofday", "stime",
    NULL
};

const char *const policy_masked_paths[] = {
    "/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug", "/proc/latency_stats",
    "/proc/acpi", "/proc/scsi", "/sys/firmware", NULL
};

const char *const policy_readonly_paths[] = {
    "/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs", NULL
};

void policy_fail(struct policy_report *rep, const char *rule, const char *path, const char *fmt, ...)
{
    if (rep->n == rep->cap) {
        rep->cap = rep->cap ? rep->cap * 2 : 32;
        rep->r = realloc(rep->r, rep->cap * sizeof(*rep->r));
        if (rep->r == NULL) abort();
    }
    struct policy_result *r = &rep->r[rep->n++];
    *r = (struct policy_result){ .rule = rule, .pass = fmt == NULL };
    r->path = path ? brig_strdup(path) : NULL;
    if (fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        if (vasprintf(&r->value, fmt, ap) < 0) abort();
        va_end(ap);
        rep->failed++;
    }
}

void policy_check(const struct brig_policy *p, const struct brig_spec *s, struct policy_report *out)
{
    *out = (struct policy_report){ 0 };
    for (size_t i = 0; i < policy_n_rules; i++) {
        size_t before = out->failed;
        policy_rules[i].fn(p, s, out, policy_rules[i].id);
        if (out->failed == before) policy_fail(out, policy_rules[i].id, NULL, NULL);
    }
}

void policy_report_free(struct policy_report *rep)
{
    for (size_t i = 0; i < rep->n; i++) {
        free(rep->r[i].path);
        free(rep->r[i].value);
    }
    free(rep->r);
    *rep = (struct policy_report){ 0 };
}

size_t policy_rule_count(void) { return policy_n_rules; }
const char *policy_rule_id(size_t i) { return i < policy_n_rules ? policy_rules[i].id : NULL; }
const char *policy_rule_summary(size_t i) { return i < policy_n_rules ? policy_rules[i].summary : NULL; }

bool policy_glob_any(char *const *patterns, const char *s)
{
    for (; patterns != NULL && *patterns != NULL; patterns++)
        if (fnmatch(*patterns, s, 0) == 0) return true;
    return false;
}

bool policy_env_name_denied(const struct brig_policy *p, const char *name)
{
    if (policy_glob_any(p->env_deny, name)) return true;
    return p->env_allow != NULL && p->env_allow[0] != NULL && !policy_glob_any(p->env_allow, name);
}

/* "/a/b" is "/a/b" or below "/a/b/". "/" only matches itself here: every
 * path is below it, and binding "/" is what the other direction catches. */
static bool path_at_or_below(const char *path, const char *top)
{
    size_t n = strlen(top);
    if (strcmp(top, "/") == 0) return strcmp(path, "/") == 0;
    return strncmp(path, top, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool path_forbidden_1(const struct brig_policy *p, const char *src, const char **which)
{
    if (policy_engine_file(src)) return false;
    for (char **f = p->forbidden_paths; f != NULL && *f != NULL; f++) {
        /* The source is the forbidden path, is inside it, or contains it. */
        if (path_at_or_below(src, *f) || path_at_or_below(*f, src)) {
            *which = *f;
            return true;
        }
    }
    return false;
}

bool policy_path_forbidden(const struct brig_policy *p, const char *source, const char **which)
{
    static const char *unclean = "(a path with . or .. components)";
    if (source == NULL || source[0] != '/') return false;
    if (strstr(source, "/../") || strstr(source, "/./") || strcmp(source, "/..") == 0 ||
        (strlen(source) >= 3 && strcmp(source + strlen(source) - 3, "/..") == 0) ||
        (strlen(source) >= 2 && strcmp(source + strlen(source) - 2, "/.") == 0)) {
        *which = unclean;
        return true;
    }
    autofree char *clean = brig_strdup(source);
    /* "//var/run/docker.sock" is the socket too; realpath cannot say so
     * while it does not exist yet, so repeated slashes go here. */
    size_t o = 0;
    for (size_t i = 0; clean[i] != '\0'; i++)
        if (clean[i] != '/' || o == 0 || clean[o - 1] != '/') clean[o++] = clean[i];
    clean[o] = '\0';
    for (size_t n = strlen(clean); n > 1 && clean[n - 1] == '/'; n--) clean[n - 1] = '\0';
    if (path_forbidden_1(p, clean, which)) return true;
    /* A symlink on the host (/tmp/x -> /var/run/docker.sock) is judged by
     * where it leads, as the mount would follow it. */
    char real[PATH_MAX];
    if (brig_realpath(clean, real) != NULL && strcmp(real, clean) != 0) return path_forbidden_1(p, real, which);
    return false;
}

/* root.path is refused when it is or holds a forbidden path ("/", "/home",
 * "/run"): the container would see it all. A root inside one is allowed:
 * engines keep their rootfs under /run/containerd and /var/lib/docker. */
bool policy_root_forbidden(const struct brig_policy *p, const struct brig_root *root, const char **which)
{
    if (root->path == NULL || root->path[0] != '/') return false;
    /* Opened by create (rootfs_open): the path is where the directory the
     * init will use is, judged as it is. Otherwise (policy check of a
     * config) where the path leads now. */
    char real[PATH_MAX];
    const char *r = root->has_fd || brig_realpath(root->path, real) == NULL ? root->path : real;
    for (char **f = p->forbidden_paths; f != NULL && *f != NULL; f++) {
        if (path_at_or_below(*f, r)) {
            *which = *f;
            return true;
        }
    }
    return false;
}

bool policy_socket_refused(const struct brig_policy *p, const char *source, int fd, char *real,
                           size_t len)
{
    struct stat st;
    if (fd >= 0 ? fstat(fd, &st) < 0 : stat(source, &st) < 0) return false;
    if (!S_ISSOCK(st.st_mode)) return false;
    char buf[PATH_MAX];
    /* Pinned at create: source is already the path of what the fd is. */
    const char *r = fd >= 0 ? source : brig_realpath(source, buf) != NULL ? buf : source;
    snprintf(real, len, "%s", r);
    for (char **a = p->sockets; a != NULL && *a != NULL; a++)
        if (strcmp(*a, r) == 0) return false;
    return true;
}

bool policy_mount_is_bind(const struct brig_mount *m)
{
    return m->opts.bind || (m->type != NULL && strcmp(m->type, "bind") == 0);
}

bool policy_mount_readonly(const struct brig_mount *m)
{
    return (m->opts.flags & MS_RDONLY) != 0 || (m->opts.attr_set & MOUNT_ATTR_RDONLY) != 0;
}

int policy_tmpfs_size(char *const *options, uint64_t *bytes)
{
    int found = 0;
    for (; options != NULL && *options != NULL; options++) {
        if (!brig_str_has_prefix(*options, "size=")) continue;
        /* The kernel takes the last size= given. */
        if (policy_parse_size(*options + 5, bytes) < 0) return -1;
        found = 1;
    }
    return found;
}
