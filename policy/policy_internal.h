/* Shared by the policy_*.c files only. */
#ifndef BRIG_POLICY_INTERNAL_H
#define BRIG_POLICY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "../runtime/config/json.h"

struct brig_spec;
struct brig_mount;
struct brig_root;

/* The host's system accounts and groups (login.defs SYS_UID_MAX,
 * SYS_GID_MAX): user.nonroot keeps them from the container's files. */
#define POLICY_SYSTEM_ID_MAX 999

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
/* policy_seccomp.c: seccomp.present and seccomp.netlink. */
void policy_rule_seccomp(const struct brig_policy *p, const struct brig_spec *s, struct policy_report *rep,
                         const char *rule);
void policy_rule_seccomp_netlink(const struct brig_policy *p, const struct brig_spec *s,
                                 struct policy_report *rep, const char *rule);
extern const size_t policy_n_rules;

/* Syscalls the built-in seccomp profile blocks and check requires blocked
 * in any profile (a sample of the kernel's riskiest entry points). */
extern const char *const policy_blocked_syscalls[];
/* Masked and read-only /proc and /sys paths check requires and apply adds. */
extern const char *const policy_masked_paths[];
extern const char *const policy_readonly_paths[];

/* Helpers used by check and apply alike. */
bool policy_path_forbidden(const struct brig_policy *p, const char *source, const char **which);
/* policy_engine.c: what engines add to every container (Docker's setkey
 * hook and net sysctls, the engines' per-container hosts/resolv.conf). */
struct brig_hook;
/* policy_selftest*.c */
struct ptree;
struct policy_selftest_opts;
struct ptree *policy_selftest_args(const struct brig_policy *p, bool with_init);
int policy_selftest_spawn(char *const *argv, const char *out, const char *errf, int *status,
                          struct brig_error **err);
int policy_selftest_engine(const struct brig_policy *p, const struct policy_selftest_opts *o, const char *dir,
                           const char *id, const char *out, const char *errf, int *status,
                           struct brig_error **err);
bool policy_engine_hook(const struct brig_hook *h);
bool policy_engine_sysctl(const char *key, const char *value);
bool policy_engine_file(const char *path);
struct brig_device;
struct brig_device_rule;
/* A linux.devices entry that is one of the default nodes, exactly. */
bool policy_engine_device(const struct brig_device *d);
/* An allow rule of the engines' defaults: mknod only, the default nodes,
 * the pty slaves (c 136:*), containerd's /dev/net/tun. */
bool policy_engine_device_rule(const struct brig_device_rule *r);
/* policy_devices.c: NULL if the policy allows the linux.devices entry, else
 * why not ("is not an allowed device"); *by_path: its path is what fails. */
const char *policy_device_refused(const struct brig_policy *p, const struct brig_device *d, bool *by_path);
/* A deny rule, an engine default or exactly the host's node at one of the
 * policy's device paths. */
bool policy_device_rule_allowed(const struct brig_policy *p, const struct brig_device_rule *r);
/* The index of a mount at /dev (its destination cleaned, as the runtime
 * reads it), -1 if /dev is the image's own directory on the root. */
int policy_dev_mount_index(const struct brig_spec *s);
/* "/dev/sda" for b 8:0 on this host (its uevent's DEVNAME), "" if unknown. */
void policy_device_host_name(char type, int64_t major, int64_t minor, char *buf, size_t len);
bool policy_env_name_denied(const struct brig_policy *p, const char *name);
bool policy_glob_any(char *const *patterns, const char *s);
bool policy_root_forbidden(const struct brig_policy *p, const struct brig_root *root, const char **which);
bool policy_mount_is_bind(const struct brig_mount *m);
bool policy_mount_readonly(const struct brig_mount *m);
/* A bind source that is a UNIX socket, judged by what fd (>= 0) or else
 * the path followed as the mount would is, whose real path (in real) is
 * not on the policy's sockets list. */
bool policy_socket_refused(const struct brig_policy *p, const char *source, int fd, char *real,
                           size_t len);

/* workspace.maxSize (policy_quota.c): how the host can keep the bound on
 * the workspace bind m, or why it cannot (why). */
enum policy_quota_how { POLICY_QUOTA_NONE, POLICY_QUOTA_FS_SIZE, POLICY_QUOTA_PROJECT, POLICY_QUOTA_STAGED,
                        POLICY_QUOTA_WATCHED };
enum policy_quota_how policy_quota_judge(const struct brig_policy *p, const struct brig_spec *s,
                                         const struct brig_mount *m, char *why, size_t len);
/* At create, on the pinned source: set the project id and limit (or find
 * the filesystem small enough); an error says why the bound cannot hold. */
int policy_quota_apply(const struct brig_policy *p, const struct brig_spec *s, struct brig_mount *m,
                       struct brig_error **err);
/* The mount the container sees at the policy's workspace path, or NULL. */
const struct brig_mount *policy_workspace_mount(const struct brig_policy *p, const struct brig_spec *s,
                                                size_t *idx);

/* policy_extends.c: the text of a policy by name or path, its "extends"
 * resolved (merged into one object without "extends"); without one, the
 * text exactly as read. */
int policy_extends_read(const char *name_or_path, char **text, size_t *len, struct brig_error **err);

/* tmpfs "size=" option in bytes: 1 found, 0 absent, -1 unparseable/percent. */
int policy_tmpfs_size(char *const *options, uint64_t *bytes);

/* network {"mode":"egress", "allow", "deny", "privateRanges",
 * "maxConnections", "maxBytes"} (policy_network.c): each rule checked,
 * errors name it (network.allow[2]). */
int policy_parse_egress(struct brig_policy *p, brig_json v, struct brig_error **err);
/* policy_credentials.c: network.credentials and network.tlsCA into r,
 * whose allow and deny rules are parsed already. */
struct egress_rules;
int policy_parse_credentials(struct egress_rules *r, brig_json v, struct brig_error **err);
/* The first allowed name with a port ("api.example.com:443", malloc'd), for
 * selftest to prove an allowed destination is not refused; NULL if none. */
char *policy_egress_sample(const struct brig_policy *p);

#endif
