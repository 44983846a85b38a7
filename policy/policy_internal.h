/* Shared by the policy_*.c files only. */
#ifndef BRIG_POLICY_INTERNAL_H
#define BRIG_POLICY_INTERNAL_H

#include <stdbool.h>

#include "policy.h"

struct brig_spec;
struct brig_mount;
struct brig_root;

/* Record a failed result for rule: path (may be NULL) and a printf value. */
void policy_fail(struct policy_report *rep, const char *rule, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* One function per rule (policy_check_rules.c), in report order. */
typedef void (*policy_rule_fn)(const struct brig_policy *p, const struct brig_spec *s,
                               struct policy_report *rep, const char *rule);
struct policy_rule {
    const char *id;
    policy_rule_fn fn;
    const char *summary;
};
extern const struct policy_rule policy_rules[];
extern const size_t policy_n_rules;

/* Syscalls the built-in seccomp profile blocks and check requires blocked
 * in any profile (a sample of the kernel's riskiest entry points). */
extern const char *const policy_blocked_syscalls[];
/* Masked and read-only /proc and /sys paths check requires and apply adds. */
extern const char *const policy_masked_paths[];
extern const char *const policy_readonly_paths[];

/* Helpers used by check and apply alike. */
bool policy_path_forbidden(const struct brig_policy *p, const char *source, const char **which);
bool policy_env_name_denied(const struct brig_policy *p, const char *name);
bool policy_glob_any(char *const *patterns, const char *s);
bool policy_root_forbidden(const struct brig_policy *p, const struct brig_root *root, const char **which);
bool policy_mount_is_bind(const struct brig_mount *m);
bool policy_mount_readonly(const struct brig_mount *m);
/* tmpfs "size=" option in bytes: 1 found, 0 absent, -1 unparseable/percent. */
int policy_tmpfs_size(char *const *options, uint64_t *bytes);

#endif
