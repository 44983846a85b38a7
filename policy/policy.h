/* The policy stage (docs/policy.md): a declared sandbox policy as plain
 * data, checked against a struct brig_spec, applied to a config.json,
 * enforced at create, and proven from inside a container (selftest).
 *
 *   policy file --policy_parse--> struct brig_policy
 *   struct brig_policy + struct brig_spec --policy_check--> rule results
 *   struct brig_policy + config.json text --policy_apply--> hardened text
 *
 * Every stage is a pure function but enforcement (reads the policy file,
 * writes the audit log) and selftest (runs a container). */
#ifndef BRIG_POLICY_H
#define BRIG_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../runtime/util/error.h"

struct brig_spec;
struct egress_rules;

enum policy_mode { POLICY_ENFORCE, POLICY_AUDIT };
/* egress: a new, empty namespace (as none) whose only way out is brig's
 * proxy, by the allow-list (docs/egress.md). */
enum policy_net { POLICY_NET_NONE, POLICY_NET_NETNS, POLICY_NET_EGRESS };
enum policy_seccomp { POLICY_SECCOMP_DEFAULT, POLICY_SECCOMP_FILE };

struct policy_tmpfs {
    char *path;             /* inside the container */
    uint64_t size;          /* bytes, > 0 */
};

struct policy_rlimit {
    char *type;             /* "RLIMIT_NOFILE" */
    uint64_t max;           /* hard (and soft) at most this */
};

struct brig_policy {
    char *name;
    enum policy_mode mode;
    struct {
        enum policy_net mode;
        char *path;                         /* netns */
        struct egress_rules *egress;        /* egress */
    } network;
    bool root_readonly;
    struct policy_tmpfs *tmpfs;             size_t n_tmpfs;
    struct {
        char *path;                         /* NULL: no workspace */
        bool required;
        uint64_t max_size;                  /* bytes it may hold; 0: unbounded */
        /* Where neither its filesystem nor a project quota keeps max_size:
         * watched (a live bind, its usage measured and the sandbox stopped
         * past the bound) or staged (an overlay on a tmpfs of the bound). */
        enum policy_ws_bound { POLICY_WS_WATCH, POLICY_WS_STAGE } bound;
    } workspace;
    struct { uint32_t uid, gid; bool userns; } user;
    uint64_t caps;                          /* allowed capabilities (bitmask) */
    char **cap_names;                       /* the same, as names */
    bool no_new_privileges;
    struct { enum policy_seccomp profile; char *path; } seccomp;
    struct {
        uint64_t memory;                    /* bytes */
        uint64_t swap;                      /* bytes beyond memory */
        uint64_t pids;
        uint64_t cpu_milli;                 /* 1000 = one CPU */
    } limits;
    struct policy_rlimit *rlimits;          size_t n_rlimits;
    char **devices;                         /* allowed linux.devices paths */
    char **forbidden_paths;                 /* host paths (built-in list + policy's) */
    char **sockets;                         /* UNIX sockets a bind may expose (exact paths) */
    char **hooks;                           /* allowed hook paths; empty: no hooks */
    char **sysctl;                          /* allowed sysctl name patterns */
    char **env_allow;                       /* NULL/empty: any name not denied */
    char **env_deny;                        /* fnmatch patterns on names */
    char **env_set;                         /* NAME=VALUE a process gets unless it has NAME */
    struct { uint64_t wall_s, idle_s; } timeouts;
    uint64_t output_max;                    /* bytes */
    char *init;                             /* required process.args[0], or NULL */
    struct { char *path; uint64_t max_size; } audit;
    /* Run by a brig without privilege (docs/rootless.md) and no cgroup v2
     * subtree delegated to it: "optional" runs without the limits (the
     * sandbox's result says so), "required" (the default) refuses. */
    struct { bool limits_optional; } rootless;
};

/* ---- model (policy_model.c) ---- */
void policy_free(struct brig_policy *p);
void policy_freep(struct brig_policy **p);
#define autopolicy __attribute__((cleanup(policy_freep)))

/* Built-in profiles (the JSON files of policy/profiles/, compiled in). */
size_t policy_builtin_count(void);
const char *policy_builtin_name(size_t i);
/* The profile's JSON text, NULL if there is no such profile. */
const char *policy_builtin_text(const char *name);
/* The built-in default-deny seccomp profile (linux.seccomp JSON). */
const char *policy_seccomp_default_text(void);

/* ---- parse (policy_parse.c) ---- */
/* Strict: an unknown key, a wrong type or an impossible value fails with
 * the key's path ("limits.memory: ..."). Absent fields get safe defaults. */
int policy_parse(const char *text, size_t len, struct brig_policy **out, struct brig_error **err);
/* NAME of a built-in profile, or a file path (anything with a '/'). */
int policy_load(const char *name_or_path, struct brig_policy **out, struct brig_error **err);
/* The same policy's JSON text, read once (malloc'd): what a caller parses
 * and hands on (policy_resolve_text) so that every later step judges by
 * the same policy even if the file changes meanwhile. "extends" is resolved
 * here (policy_extends.c): the text is then the merged policy, with no
 * reference left to a file to read again. */
int policy_read(const char *name_or_path, char **text, size_t *len, struct brig_error **err);

/* ---- units (policy_units.c) ---- */
/* "512MiB", "1G", "64k", "4096" (IEC or SI-looking suffixes are all powers
 * of 1024, as Docker reads them). */
int policy_parse_size(const char *s, uint64_t *out);
/* "10m", "30s", "1h", "2h30m", "45" (seconds). */
int policy_parse_duration(const char *s, uint64_t *seconds);
/* "2", "0.5", "1.25" CPUs -> thousandths. */
int policy_parse_cpus(const char *s, uint64_t *milli);

/* ---- check (policy_check*.c) ---- */
struct policy_result {
    const char *rule;       /* stable id: "net.none" */
    bool pass;
    char *path;             /* JSON path of the offending value, or NULL */
    char *value;            /* the offending value / what is missing */
};

struct policy_report {
    struct policy_result *r;
    size_t n, cap;
    size_t failed;
};

/* Every rule's result (one line per rule; several lines for a rule with
 * several offending values). Never fails: a config that parsed as a spec
 * can always be judged. */
void policy_check(const struct brig_policy *p, const struct brig_spec *s, struct policy_report *out);
void policy_report_free(struct policy_report *rep);
/* Stable rule ids, in report order, with a one-line description. */
size_t policy_rule_count(void);
const char *policy_rule_id(size_t i);
const char *policy_rule_summary(size_t i);
/* "rule1,rule2" of the failed rules (each once), malloc'd. */
char *policy_report_failed_ids(const struct policy_report *rep);
/* Text (one line per result) or JSON (an object) of a report, malloc'd. */
char *policy_report_text(const struct policy_report *rep, bool only_failed);
char *policy_report_json(const struct brig_policy *p, const struct policy_report *rep);

/* A compose service judged as the config Docker makes of it, plus the
 * definition's own rules (compose.keys, image.pinned): compose_check.c.
 * SERVICE NULL: the file's only service. *service_out: the one judged. */
int policy_compose_check(const struct brig_policy *p, const char *file, const char *service,
                         struct policy_report *rep, char **service_out, struct brig_error **err);
/* The same from text (fuzzing, tests); relative paths resolve under DIR. */
int policy_compose_check_text(const struct brig_policy *p, const char *text, size_t len, const char *dir,
                              const char *service, struct policy_report *rep, char **service_out,
                              struct brig_error **err);

/* ---- apply (policy_apply.c) ---- */
struct policy_apply_opts {
    const char *workspace_source;   /* host directory for the workspace mount */
    /* The text goes to create, not to a reader (sandbox run, create): the
     * default seccomp profile is copied in as brig's own text instead of
     * parsed and written back (~15 KB, a third of the work of an apply),
     * and the whole text is compact, so the output is not byte for byte
     * `policy apply`'s. */
    bool profile_as_text;
    /* The text goes to create under this same policy (its text passed as
     * brig_globals.policy_text), whose policy_enforce_resolved checks it
     * before anything is made: in enforce mode the verify is left to it. */
    bool checked_by_create;
    /* The config is brig's own (sandbox_config's), not a caller's: not
     * parsed as a spec before it is patched (create parses the result), only
     * when a seccomp filter of its own must be judged (it has none). */
    bool config_ours;
    /* The workspace mount (workspace_source) idmapped, as a sandbox's is:
     * its owner on disk (disk_uid:disk_gid) is host_uid:host_gid to the
     * container, and what the container makes as those is the owner's. */
    bool workspace_idmap;
    uint32_t disk_uid, disk_gid, host_uid, host_gid;
};
/* Patch config.json text so that it meets the policy; the result passes
 * policy_check. Idempotent. Fields brig does not model are kept as they are. */
int policy_apply(const struct brig_policy *p, const char *config, size_t len,
                 const struct policy_apply_opts *o, char **out, struct brig_error **err);

/* ---- enforce (policy_enforce.c) ---- */
#define POLICY_SYSTEM_FILE "/etc/brig/policy.json"
/* The policy in force: `flag` (--policy), else POLICY_SYSTEM_FILE if it
 * exists, else none (*out NULL, returns 0). */
int policy_resolve(const char *flag, struct brig_policy **out, struct brig_error **err);
/* TEXT (a policy read earlier: a long-lived sandbox's snapshot) if not
 * NULL, parsed and named FLAG in errors; else policy_resolve(FLAG). */
int policy_resolve_text(const char *flag, const char *text, struct brig_policy **out, struct brig_error **err);
/* Called by create (and exec) after the config parsed, under
 * policy_resolve_text(flag, text): check the spec, log
 * the decision to the audit log, and in enforce mode refuse a violation.
 * At create, each absolute bind source is opened first and judged by what
 * the fd is; the mount then uses that fd (brig_mount.source_fd). */
int policy_enforce(const char *flag, const char *text, struct brig_spec *s, const char *op, const char *id,
                   struct brig_error **err);
/* The same under a policy already resolved (NULL: none), so that one
 * operation (run: create, its exit, its delete) reads it once. */
int policy_enforce_resolved(const struct brig_policy *p, struct brig_spec *s, const char *op,
                            const char *id, struct brig_error **err);

/* For the other lifecycle operations (start, kill, delete, run's exit):
 * one audit line {op, id, exit status, duration} under the policy in force;
 * a no-op without one. Never fails the operation (a warning at most). */
void policy_audit_op(const char *flag, const char *op, const char *id, bool has_status, int exit_status,
                     bool has_duration, uint64_t duration_ms);
void policy_audit_op_resolved(const struct brig_policy *p, const char *op, const char *id,
                              bool has_status, int exit_status, bool has_duration,
                              uint64_t duration_ms);

/* ---- audit (policy_audit.c) ---- */
struct policy_audit_event {
    const char *op;             /* create, start, exec, kill, delete, policy */
    const char *id;
    const char *decision;       /* allow, deny, audit, pass, fail, or NULL */
    const char *rules;          /* comma-separated rule ids, or NULL */
    bool has_exit_status;       int exit_status;
    bool has_duration;          uint64_t duration_ms;
    bool has_memory_peak;       uint64_t memory_peak;
    bool has_pids_peak;         uint64_t pids_peak;
    /* sandbox run: the command's argv[0] only, the limits that fired
     * ("wall", "idle", "oom"; comma-separated), the output byte counts */
    const char *argv0;
    const char *limits_hit;
    bool has_bytes;             uint64_t stdout_bytes, stderr_bytes;
};
/* One JSON line appended in a single O_APPEND write; the file is rotated
 * to PATH.1 past p->audit.max_size. Never argv, env values or output. */
int policy_audit(const struct brig_policy *p, const struct policy_audit_event *ev,
                 struct brig_error **err);
/* Append one line (a JSON object, no newline) the same way: the egress
 * proxy's connection lines (egress/egress_audit.c). */
int policy_audit_write(const struct brig_policy *p, const char *line, struct brig_error **err);
/* A rootless brig (docs/rootless.md) writes every audit line to PATH, a file
 * of the user's own, instead of the policy's audit.path (root's). NULL:
 * the policy's again. */
void policy_audit_redirect(const char *path);
/* The line itself (no newline), malloc'd: for tests. */
char *policy_audit_line(const struct brig_policy *p, const struct policy_audit_event *ev);

/* ---- selftest (policy_selftest*.c) ---- */
struct policy_selftest_opts {
    const char *runtime;        /* NULL: this brig (/proc/self/exe) */
    const char *engine;         /* "docker": the probe run by the engine instead */
    char **engine_args;         /* the engine's run flags (NULL-terminated) */
    const char *probe;          /* static brig-probe */
    const char *busybox;        /* optional static busybox for the rootfs */
    const char *base_config;    /* config.json text the policy is applied to */
    bool as_is;                 /* base_config is tested without apply */
    const char *policy_flag;    /* passed as --policy to brig runtimes */
    const char *workdir;        /* where the bundle is built (temp if NULL) */
    bool keep;
    bool json;
};
/* Builds the bundle, runs the probe, prints the report on stdout. *open
 * is the number of open boundaries (and failed runs). */
int policy_selftest(const struct brig_policy *p, const struct policy_selftest_opts *o,
                    int *open, struct brig_error **err);

/* Judge the probe's JSON (pure, for tests): one result per boundary. */
struct policy_boundary {
    const char *name;
    bool closed;
    char detail[160];
};
struct policy_host_ns { uint64_t net, pid, ipc, uts, mnt; };
int policy_boundaries_eval(const struct brig_policy *p, const char *probe_json,
                           const struct policy_host_ns *host, struct policy_boundary **out,
                           size_t *n, struct brig_error **err);

/* ---- the staged workspace (policy/workspace/) ----
 * Where workspace.maxSize can be kept neither by the workspace's own
 * filesystem nor by a project quota, create's policy check marks the mount
 * (stage_bytes) and the workspace is staged: an overlay whose writes land
 * on a tmpfs of the bound's size in the state directory, written back into
 * the workspace when the container ends (docs/policy.md). */
/* After the state directory exists: each marked mount becomes its overlay
 * (the spec's mount then names it); *any when one did. */
int policy_stage_make(struct brig_spec *s, int state_dirfd, bool *any, struct brig_error **err);
/* Write what the container wrote back into the workspace (no stage: 0);
 * finish: the container has ended: then unmount the stage. An error names
 * what could not be written; the caller discards the stage. */
int policy_stage_commit(int state_dirfd, bool finish, struct brig_error **err);
/* Unmount the stage without writing back (a create that failed, a commit
 * that did). */
void policy_stage_discard(int state_dirfd);
/* The staged tmpfs is full: the bound stopped a write. */
bool policy_stage_full(int state_dirfd);
/* ---- the watched workspace (policy/workspace/watch.c) ----
 * Where workspace.maxSize can be kept neither by the workspace's own
 * filesystem nor by a project quota and the policy asks for no stage,
 * create's policy check marks the mount (watch_bytes): the bind stays a
 * live one, and a watcher in the container's cgroup measures it and kills
 * the container once it holds more than the bound. */
struct policy_watch;
struct brig_cgroup;
/* Before the init is cloned (cg: the container's cgroup, or NULL): fork
 * the watcher of the marked mount, which measures what the workspace holds
 * meanwhile; *out NULL when none is marked. later (a run whose brig stays
 * to supervise it): brig measures it now and the watcher is forked only
 * when policy_watch_due says, by policy_watch_spawn. */
int policy_watch_start(const struct brig_spec *s, const char *id, int state_dirfd, const struct brig_cgroup *cg,
                       bool later, struct policy_watch **out, struct brig_error **err);
/* The init exists: the watcher takes its pidfd and starts measuring (a
 * later one: its first look is due WATCH_MIN_MS from now). */
int policy_watch_attach(struct policy_watch *w, pid_t init_pid, struct brig_error **err);
/* ms until a later watcher must be forked (0: now), -1: none to fork. */
long policy_watch_due(const struct policy_watch *w);
/* Fork the later watcher (nothing when there is none, or it runs): it
 * looks at once, and on as one forked at create. A failure: the caller
 * stops the container (it must not go on unwatched). */
int policy_watch_spawn(struct policy_watch *w, struct brig_error **err);
/* create, run -d: the watcher lives on as long as the init. */
void policy_watch_detach(struct policy_watch *w);
/* run, sandbox run, undo: killed (and what brig held of it released). */
void policy_watch_stop(struct policy_watch *w);
/* A watched workspace's container: fallocate(2) answered EOPNOTSUPP by its
 * filter (the config's, or one of its own), since it takes blocks faster
 * than the watch looks (watch_fallocate.c). */
struct brig_seccomp;
void policy_seccomp_no_fallocate(struct brig_seccomp *sc);
/* The container of the state dir has a watched workspace (create made its
 * record). */
bool policy_watch_active(int state_dirfd);
/* The watch fired: the workspace passed workspace.maxSize and the
 * container was killed; _record: what it measured (JSON), or NULL. */
bool policy_watch_fired(int state_dirfd);
char *policy_watch_record(int state_dirfd);
/* The workspace bound fired: its staged tmpfs or its own filesystem of at
 * most the bound is full (s: the spec create judged, with its pinned
 * sources). */
bool policy_workspace_full(const struct brig_policy *p, const struct brig_spec *s, int state_dirfd);

#endif
