/* The OCI runtime configuration (config.json) as typed C data.
 *
 * Produced only by spec_load()/spec_parse() (runtime/config/spec_parse*.c),
 * consumed by the Linux setup code, which never sees JSON. Every optional
 * scalar has a has_* flag; strings and arrays are NULL/0 when absent.
 * Arrays of strings are NULL-terminated (n_* is given too for convenience). */
#ifndef BRIG_SPEC_H
#define BRIG_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"

/* Optional scalars. */
struct brig_opt_u64 { bool set; uint64_t v; };
struct brig_opt_i64 { bool set; int64_t v; };

struct brig_kv {
    char *key;
    char *value;
};

/* ---- process ---------------------------------------------------------- */

enum brig_cap_set {
    BRIG_CAP_BOUNDING,
    BRIG_CAP_EFFECTIVE,
    BRIG_CAP_INHERITABLE,
    BRIG_CAP_PERMITTED,
    BRIG_CAP_AMBIENT,
    BRIG_CAP_SET_COUNT
};

/* Each set is a bitmask of capability numbers (CAP_* from linux/capability.h).
 * present[i] is false when the set was absent from the config (absent sets
 * are empty: the spec gives no default). Names unknown to this kernel/libcap
 * are dropped with a warning at parse time: they could only grant more. */
struct brig_caps {
    bool present[BRIG_CAP_SET_COUNT];
    uint64_t sets[BRIG_CAP_SET_COUNT];
};

struct brig_rlimit {
    int resource;           /* RLIMIT_* */
    char *name;             /* "RLIMIT_NOFILE", for messages */
    uint64_t soft, hard;
};

struct brig_user {
    uint32_t uid, gid;
    bool has_umask;
    uint32_t umask;
    uint32_t *additional_gids;
    size_t n_additional_gids;
    char *username;         /* Windows only; kept for completeness */
};

struct brig_scheduler {
    int policy;             /* SCHED_* */
    int32_t nice;
    int32_t priority;
    uint64_t flags;         /* SCHED_FLAG_* bits */
    uint64_t runtime, deadline, period;
};

struct brig_io_priority {
    int klass;              /* IOPRIO_CLASS_RT/BE/IDLE */
    int priority;
};

struct brig_process {
    bool terminal;
    bool has_console_size;
    uint32_t console_height, console_width;
    struct brig_user user;
    char **args;            size_t n_args;      /* required, non-empty on Linux */
    char **env;             size_t n_env;       /* "NAME=value" */
    char *cwd;                                  /* required, absolute */
    bool has_caps;
    struct brig_caps caps;
    struct brig_rlimit *rlimits; size_t n_rlimits;
    bool no_new_privileges;
    bool has_oom_score_adj;
    int oom_score_adj;
    char *apparmor_profile;
    char *selinux_label;
    bool has_io_priority;
    struct brig_io_priority io_priority;
    bool has_scheduler;
    struct brig_scheduler scheduler;
    char *exec_cpu_affinity_initial;            /* execCPUAffinity: cpu lists */
    char *exec_cpu_affinity_final;
};

/* ---- root and mounts -------------------------------------------------- */

struct brig_root {
    char *path;             /* absolute: resolved against the bundle */
    bool readonly;
    /* Set by a policy in force (never by config.json), when /dev is a
     * mount of its own: the root mount is nodev, so a device node the
     * image brings (the host's console, a disk) opens nothing. */
    bool nodev;
    /* Set by create (rootfs_open): the directory opened once (O_PATH), and
     * path is then where it is. The policy judges that path and the init
     * mounts only this directory. Not owned by the spec. */
    bool has_fd;            int fd;
};

/* Mount options turned into syscall arguments (runtime/config/mount_options.c). */
struct brig_mount_opts {
    unsigned long flags;        /* MS_* to set */
    unsigned long clear_flags;  /* MS_* explicitly cleared ("rw", "suid", ...) */
    unsigned long propagation;  /* MS_SHARED/MS_SLAVE/MS_PRIVATE/MS_UNBINDABLE (+MS_REC) or 0 */
    uint64_t attr_set;          /* MOUNT_ATTR_* for recursive options ("rro", "rnosuid", ...) */
    uint64_t attr_clr;
    bool bind;                  /* "bind" or "rbind" (or type "bind") */
    bool recursive_bind;        /* "rbind" */
    bool tmpcopyup;             /* tmpfs populated from the image's directory */
    bool idmap;                 /* "idmap"/"ridmap": idmapped mount requested */
    bool idmap_recursive;       /* "ridmap": the mapping goes on every submount */
    bool idmap_inline;          /* "idmap=uids=...": crun's mappings in the option */
    char *data;                 /* comma-joined fs-specific options, or NULL */
};

struct brig_id_mapping {
    uint32_t container_id;
    uint32_t host_id;
    uint32_t size;
};

struct brig_mount {
    char *destination;      /* required, absolute inside the container */
    char *type;             /* may be NULL (then bind if options say so) */
    char *source;           /* a relative bind source is made absolute (bundle) */
    char **options;         size_t n_options;
    struct brig_mount_opts opts;                /* parsed from options */
    struct brig_id_mapping *uid_mappings;       size_t n_uid_mappings;
    struct brig_id_mapping *gid_mappings;       size_t n_gid_mappings;
    /* A bind source opened (O_PATH) by the policy check, which judged what
     * this fd is: the mount uses it, never the path again (a path can be
     * swapped for a symlink in between); -1: it did not exist then, the
     * mount is refused. Not owned by the spec. */
    bool has_source_fd;     int source_fd;
    /* With a new user namespace: the source cloned (open_tree) and its
     * flags set by create while still host root, before the init enters
     * the namespace (where it may not even reach the path); the init only
     * attaches it. Not owned by the spec (mounts_bind_release). */
    bool has_tree_fd;       int tree_fd;
    /* The policy's workspace bound, kept by staging (policy/workspace/):
     * set by create's policy check, the bind becomes an overlay of the
     * source whose upper layer is a tmpfs of stage_bytes, made in the state
     * directory once it exists; then staged, and source/source_fd name the
     * overlay. Its writes reach the source when the container ends. */
    uint64_t stage_bytes;   bool staged;
    /* The same bound kept by a watch (policy/workspace/watch.c): the bind
     * stays a plain one; a watcher started with the container measures the
     * source and stops the container once it holds more than watch_bytes. */
    uint64_t watch_bytes;
};

/* ---- hooks ------------------------------------------------------------ */

enum brig_hook_kind {
    BRIG_HOOK_PRESTART,
    BRIG_HOOK_CREATE_RUNTIME,
    BRIG_HOOK_CREATE_CONTAINER,
    BRIG_HOOK_START_CONTAINER,
    BRIG_HOOK_POSTSTART,
    BRIG_HOOK_POSTSTOP,
    BRIG_HOOK_KIND_COUNT
};

struct brig_hook {
    char *path;             /* required, absolute */
    char **args;            size_t n_args;
    char **env;             size_t n_env;
    bool has_timeout;
    int timeout;            /* seconds, > 0 */
};

struct brig_hook_list {
    struct brig_hook *hooks;
    size_t n;
};

/* ---- linux ------------------------------------------------------------ */

enum brig_ns_type {
    BRIG_NS_PID,
    BRIG_NS_NETWORK,
    BRIG_NS_MOUNT,
    BRIG_NS_IPC,
    BRIG_NS_UTS,
    BRIG_NS_USER,
    BRIG_NS_CGROUP,
    BRIG_NS_TIME,
    BRIG_NS_COUNT
};

struct brig_namespace {
    bool present;           /* listed in linux.namespaces */
    char *path;             /* join this one instead of creating; NULL = new */
};

/* linux.resources, parsed and kept for the cgroup code. */
struct brig_device_rule {
    bool allow;
    char type;              /* 'a', 'c', 'b' ('a' if absent) */
    int64_t major, minor;   /* -1: wildcard */
    char access[4];         /* subset of "rwm", "" if absent (= "rwm") */
};

struct brig_weight_device {
    int64_t major, minor;
    bool has_weight;        uint16_t weight;
    bool has_leaf_weight;   uint16_t leaf_weight;
};

struct brig_throttle_device {
    int64_t major, minor;
    uint64_t rate;
};

struct brig_hugepage_limit {
    char *page_size;        /* "2MB", "1GB" */
    uint64_t limit;
};

struct brig_rdma_limit {
    char *device;
    bool has_hca_handles;   uint32_t hca_handles;
    bool has_hca_objects;   uint32_t hca_objects;
};

struct brig_net_priority {
    char *name;
    uint32_t priority;
};

struct brig_resources {
    bool present;
    struct brig_device_rule *devices;       size_t n_devices;
    struct {
        struct brig_opt_i64 limit, reservation, swap, kernel, kernel_tcp;
        struct brig_opt_u64 swappiness;
        bool has_disable_oom_killer;    bool disable_oom_killer;
        bool has_use_hierarchy;         bool use_hierarchy;
        bool has_check_before_update;   bool check_before_update;
    } memory;
    struct {
        struct brig_opt_u64 shares, period, realtime_period, burst;
        struct brig_opt_i64 quota, realtime_runtime, idle;
        char *cpus;
        char *mems;
    } cpu;
    struct {
        struct brig_opt_i64 limit;
    } pids;
    struct {
        bool has_weight;        uint16_t weight;
        bool has_leaf_weight;   uint16_t leaf_weight;
        struct brig_weight_device *weight_devices;          size_t n_weight_devices;
        struct brig_throttle_device *throttle_read_bps;     size_t n_throttle_read_bps;
        struct brig_throttle_device *throttle_write_bps;    size_t n_throttle_write_bps;
        struct brig_throttle_device *throttle_read_iops;    size_t n_throttle_read_iops;
        struct brig_throttle_device *throttle_write_iops;   size_t n_throttle_write_iops;
    } block_io;
    struct brig_hugepage_limit *hugepage_limits;    size_t n_hugepage_limits;
    struct {
        bool has_class_id;      uint32_t class_id;
        struct brig_net_priority *priorities;       size_t n_priorities;
    } network;
    struct brig_rdma_limit *rdma;           size_t n_rdma;
    struct brig_kv *unified;                size_t n_unified;
};

struct brig_device {
    char *path;             /* absolute inside the container */
    char type;              /* 'c', 'b', 'u', 'p' */
    int64_t major, minor;   /* required for c/b/u */
    bool has_file_mode;     uint32_t file_mode;
    bool has_uid;           uint32_t uid;
    bool has_gid;           uint32_t gid;
};

enum brig_scmp_action {
    BRIG_SCMP_KILL,             /* SCMP_ACT_KILL == KILL_THREAD */
    BRIG_SCMP_KILL_PROCESS,
    BRIG_SCMP_KILL_THREAD,
    BRIG_SCMP_TRAP,
    BRIG_SCMP_ERRNO,
    BRIG_SCMP_TRACE,
    BRIG_SCMP_ALLOW,
    BRIG_SCMP_LOG,
    BRIG_SCMP_NOTIFY,
};

enum brig_scmp_op {
    BRIG_SCMP_CMP_NE,
    BRIG_SCMP_CMP_LT,
    BRIG_SCMP_CMP_LE,
    BRIG_SCMP_CMP_EQ,
    BRIG_SCMP_CMP_GE,
    BRIG_SCMP_CMP_GT,
    BRIG_SCMP_CMP_MASKED_EQ,
};

struct brig_seccomp_arg {
    uint32_t index;
    uint64_t value;
    uint64_t value_two;
    enum brig_scmp_op op;
};

struct brig_seccomp_rule {
    char **names;           size_t n_names;     /* required, non-empty */
    enum brig_scmp_action action;
    bool has_errno_ret;     uint32_t errno_ret;
    struct brig_seccomp_arg *args;              size_t n_args;
};

struct brig_seccomp {
    bool present;
    enum brig_scmp_action default_action;
    bool has_default_errno_ret;     uint32_t default_errno_ret;
    char **architectures;           size_t n_architectures;     /* "SCMP_ARCH_X86_64" */
    char **flags;                   size_t n_flags;             /* "SECCOMP_FILTER_FLAG_LOG" */
    char *listener_path;
    char *listener_metadata;
    struct brig_seccomp_rule *syscalls;         size_t n_syscalls;
};

struct brig_personality {
    bool present;
    unsigned long domain;   /* PER_LINUX or PER_LINUX32 */
    char **flags;           size_t n_flags;     /* none defined by the spec yet */
};

struct brig_time_offset {
    bool set;
    int64_t secs;
    uint32_t nanosecs;
};

/* linux.memoryPolicy: set_mempolicy(2) arguments (values are the kernel's
 * MPOL_* numbers, given here so no NUMA header is needed). */
enum {
    BRIG_MPOL_DEFAULT, BRIG_MPOL_PREFERRED, BRIG_MPOL_BIND, BRIG_MPOL_INTERLEAVE,
    BRIG_MPOL_LOCAL, BRIG_MPOL_PREFERRED_MANY, BRIG_MPOL_WEIGHTED_INTERLEAVE,
};
#define BRIG_MPOL_F_NUMA_BALANCING (1u << 13)
#define BRIG_MPOL_F_RELATIVE_NODES (1u << 14)
#define BRIG_MPOL_F_STATIC_NODES   (1u << 15)
#define BRIG_MPOL_MAX_NODES 1024

struct brig_mempolicy {
    bool present;
    int mode;
    unsigned flags;
    uint64_t nodes[BRIG_MPOL_MAX_NODES / 64];
};

/* Names of the modes and flags brig knows, by index (NULL past the end). */
const char *spec_mempolicy_mode_name(size_t i);
const char *spec_mempolicy_flag_name(size_t i);

struct brig_linux {
    struct brig_namespace namespaces[BRIG_NS_COUNT];
    struct brig_id_mapping *uid_mappings;   size_t n_uid_mappings;
    struct brig_id_mapping *gid_mappings;   size_t n_gid_mappings;
    struct brig_kv *sysctl;                 size_t n_sysctl;
    struct brig_resources resources;
    char *cgroups_path;
    struct brig_device *devices;            size_t n_devices;
    struct brig_seccomp seccomp;
    bool has_rootfs_propagation;
    unsigned long rootfs_propagation;       /* MS_SHARED|MS_REC etc. */
    char **masked_paths;                    size_t n_masked_paths;
    char **readonly_paths;                  size_t n_readonly_paths;
    char *mount_label;
    struct brig_personality personality;
    struct brig_time_offset time_offsets[2];    /* [0] monotonic, [1] boottime */
    struct brig_mempolicy memory_policy;
    /* Present in the config; brig cannot enforce them (spec_check_supported). */
    bool has_intel_rdt, has_net_devices;
};

struct brig_spec {
    char *oci_version;
    char *bundle;           /* absolute path of the bundle directory */
    struct brig_root root;
    char *hostname;
    char *domainname;
    struct brig_process process;
    bool has_process;       /* required for create/start */
    struct brig_mount *mounts;              size_t n_mounts;
    struct brig_hook_list hooks[BRIG_HOOK_KIND_COUNT];
    struct brig_kv *annotations;            size_t n_annotations;
    struct brig_linux linux_cfg;     /* "linux" (a predefined macro in gnu11) */
    bool has_linux;
};

/* Parse config.json text. bundle_dir (absolute) is used to resolve a
 * relative root.path. Unknown properties are ignored (spec requirement);
 * missing required fields, wrong types and invalid values fail with the
 * JSON path in the message: "linux.seccomp.syscalls[3].action: ...". */
/* RLIMIT_* by its config name ("RLIMIT_NOFILE"), -1 if unknown. */
int spec_rlimit_resource(const char *name);
int spec_parse(const char *json, size_t len, const char *bundle_dir,
               struct brig_spec **out, struct brig_error **err);

/* Read <bundle>/config.json (at most 16 MiB) and parse it. Parse errors
 * are prefixed with "config.json: ". */
int spec_load(const char *bundle_dir, struct brig_spec **out, struct brig_error **err);

/* Refuse, naming the field, what brig cannot enforce on this host
 * (runtime/config/spec_validate.c), e.g. "process.apparmorProfile: AppArmor
 * is not enabled on this host", and what create needs but parse accepts
 * absent (process, root). Reads /sys only for the LSM checks. */
int spec_check_supported(const struct brig_spec *s, struct brig_error **err);

/* `update --resources`: a linux.resources object on its own (runc's
 * format), checked like config.json's; errors name linux.resources.*.
 * spec_resources_clear frees what it holds (the struct itself is the
 * caller's). */
int spec_parse_resources_text(const char *text, size_t len, struct brig_resources *r,
                              struct brig_error **err);
void spec_resources_clear(struct brig_resources *r);

void spec_free(struct brig_spec *s);
void spec_freep(struct brig_spec **s);
#define autospec __attribute__((cleanup(spec_freep)))

/* annotations[key] is value. */
bool spec_annotation_is(const struct brig_spec *s, const char *key, const char *value);
/* "true": brig stacks its set-id filter under the config's own in every
 * process of the container, the init's and every exec's
 * (linux/seccomp.h, seccomp_setid_filter). It only takes away: no set-uid
 * or set-gid mode bit can be set on any file from inside. */
#define BRIG_NO_SETID_ANNOTATION "org.brig.no-setid"

/* Names for messages: "pid", "network", ... and "linux.namespaces" types. */
const char *spec_ns_name(enum brig_ns_type t);
const char *spec_hook_name(enum brig_hook_kind k);  /* "createRuntime", ... */

#endif
