/* brig sandbox (docs/sandbox.md): run one agent-authored command in a fresh
 * container built in memory from a policy, bounded in time and output, and
 * report what happened as one result.
 *
 *   opts + policy --sandbox_config--> config.json text (policy_apply'd)
 *   config --sandbox_run--> create, start, drain, wait, delete --> result
 *   result --sandbox_result_json--> the JSON of sandbox/result.schema.json */
#ifndef BRIG_SANDBOX_H
#define BRIG_SANDBOX_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../runtime/util/error.h"

struct brig_policy;

/* Where the init appears inside the sandbox when the policy names none:
 * under the /dev tmpfs, so nothing is created in the (read-only) rootfs. */
#define SANDBOX_INIT_PATH "/dev/.brig-init"
/* Private state root and cgroup parent of one-shot sandboxes. */
#define SANDBOX_STATE_ROOT "/run/brig-sandbox"
#define SANDBOX_CGROUP_PARENT "/brig-sandbox"

/* The policy (NAME or absolute FILE) of a long-lived sandbox, in its config. */
#define SANDBOX_POLICY_ANNOTATION "org.brig.sandbox.policy"
/* Its JSON as create read it: what every exec is judged and bounded by,
 * whatever the file holds later (kept in the root-owned state). */
#define SANDBOX_POLICY_TEXT_ANNOTATION "org.brig.sandbox.policy-text"

struct sandbox_opts {
    const char *session;            /* create: the long-lived sandbox's NAME; exec: the target */
    const char *policy;             /* NAME or FILE; NULL: "agent" */
    const char *policy_text;        /* create: that policy's JSON, as read */
    const char *rootfs;             /* NULL: sandbox_rootfs_default */
    const char *workspace;          /* host dir bound at the policy's workspace path */
    const char *timeout;            /* DUR, tightens timeouts.wall */
    const char *idle_timeout;       /* DUR, tightens timeouts.idle */
    const char *output_limit;       /* SIZE, tightens output.maxBytes */
    char **env;                     /* K=V, NULL-terminated */
    const char *cwd;
    const char *stdin_path;         /* NULL: /dev/null; "-": brig's stdin */
    const char *state_root;         /* NULL: SANDBOX_STATE_ROOT (the CLI gives a rootless brig's) */
    bool rootless;                  /* brig has no privilege on the host (docs/rootless.md) */
    bool stream;                    /* copy output live to brig's stdout/stderr */
    struct sandbox_events *events;  /* --events: JSON lines on brig's stdout (sandbox_events.c) */
    bool tty;                       /* the command's stdio is a pty of the sandbox's own */
    unsigned short tty_rows, tty_cols;  /* its size; 0: 24x80 */
    char **argv;                    /* the command, NULL-terminated */
};

/* The bounds in force: the policy's, tightened by the flags. */
struct sandbox_limits {
    uint64_t wall_ms, idle_ms;      /* 0: none */
    uint64_t output_max;            /* bytes kept per stream (head + tail) */
};

/* One stream's bounded capture (sandbox_output.c). */
struct sandbox_stream {
    char *head; size_t head_len, head_cap;
    char *tail; size_t tail_len, tail_cap, tail_pos;    /* ring */
    uint64_t bytes;
};
void sandbox_stream_init(struct sandbox_stream *s, uint64_t limit);
void sandbox_stream_add(struct sandbox_stream *s, const char *buf, size_t n);
void sandbox_stream_free(struct sandbox_stream *s);
/* The previews as valid UTF-8 (malloc'd, their lengths beside them: a NUL
 * of the stream stays one): cut on character boundaries, invalid bytes
 * replaced by U+FFFD; binary when the stream held NUL or invalid UTF-8.
 * Not truncated: everything is in head, tail is "". */
struct sandbox_preview {
    char *head, *tail;
    size_t head_len, tail_len;
    bool truncated, binary;
};
void sandbox_stream_previews(const struct sandbox_stream *s, struct sandbox_preview *pv);
/* buf as valid UTF-8 (malloc'd, *len bytes), invalid bytes U+FFFD; with
 * hold_cut a character cut by the end is left out: *used says how many
 * bytes of buf were taken (the rest starts the next chunk). */
char *sandbox_utf8_chunk(const char *buf, size_t n, bool hold_cut, size_t *len, size_t *used);

struct sandbox_result {
    char id[32];
    char *sandbox;                  /* exec: the long-lived sandbox's NAME */
    char *policy;
    bool ran;                       /* the command was started */
    bool has_exit_code; int exit_code;
    int signal;                     /* 0: none */
    bool timed_out, idle_timed_out, oom_killed;
    bool workspace_full;            /* workspace.maxSize stopped a write */
    uint64_t wall_ms;
    bool has_cpu; uint64_t cpu_user_ms, cpu_system_ms;
    bool has_memory_peak; uint64_t memory_peak_bytes;
    bool has_pids_peak; uint64_t pids_peak;
    struct sandbox_stream out, err;
    char *error;                    /* set: brig failed, nothing (more) ran */
    /* 127: the command was not found, 126: found but it could not be
     * executed (error says why, ran is false); as a shell's status. */
    int exec_status;
    int exec_errno;                 /* brig-init's report of the failed execve */
    /* The live copy left brig's stderr (or a stdout on the same file) in
     * the middle of a line: the summary starts a new one. */
    bool echo_mid_line;
    /* Rootless without a cgroup, the policy letting its limits go
     * (rootless.limits optional): why they were not applied. */
    char *limits_skipped;
};
void sandbox_result_free(struct sandbox_result *r);
/* 124 timeout, 125 brig failed, 126/127 the command could not be
 * executed / was not found, 128+N signal N, else the exit code. */
int sandbox_exit_status(const struct sandbox_result *r);
/* The result as one JSON document (malloc'd, with a trailing newline). */
char *sandbox_result_json(const struct sandbox_result *r);
/* "exit 0 in 12 ms; stdout 3 B, stderr 0 B" for the human summary. */
char *sandbox_result_summary(const struct sandbox_result *r);

/* sandbox_events.c: --events, one JSON object per line on fd as things
 * happen; queued, and written from sandbox_io_wait's poll loop. */
struct sandbox_events {
    int fd;                         /* -1: the reader went away */
    char *q; size_t q_len, q_off, q_cap;    /* lines not yet written */
    uint64_t started;               /* the start event's time; 0 before it */
    uint64_t limit;                 /* output bytes shown per stream */
    uint64_t shown[2];
    bool truncated[2];
    char pend[2][4]; size_t pend_len[2];    /* a character cut by a read's end */
};
void sandbox_events_init(struct sandbox_events *ev, int fd);
void sandbox_events_free(struct sandbox_events *ev);
/* limit: the output bytes shown per stream (the output limit in force) */
void sandbox_events_start(struct sandbox_events *ev, const struct sandbox_result *r, uint64_t started,
                          uint64_t limit);
/* stream: 0 stdout, 1 stderr (-1 for a limit of no stream) */
void sandbox_events_output(struct sandbox_events *ev, int stream, const char *buf, size_t n, uint64_t now);
void sandbox_events_eof(struct sandbox_events *ev, int stream, uint64_t now);
void sandbox_events_limit(struct sandbox_events *ev, const char *limit, int stream, uint64_t now);
/* The fd to poll for POLLOUT (-1: nothing queued), and one write after it. */
int sandbox_events_pollfd(const struct sandbox_events *ev);
void sandbox_events_write(struct sandbox_events *ev);
/* The result event last, and everything queued written out (blocking). */
void sandbox_events_finish(struct sandbox_events *ev, const struct sandbox_result *r);

/* sandbox_config.c: the limits in force and the config text. */
int sandbox_limits(const struct brig_policy *p, const struct sandbox_opts *o, struct sandbox_limits *out,
                   struct brig_error **err);
/* ids_base: the first host id of the sandbox's slot (sandbox_ids.c). */
int sandbox_config(const struct brig_policy *p, const struct sandbox_opts *o, const char *id,
                   const char *init_host_path, uint32_t ids_base, char **out, struct brig_error **err);

/* sandbox_rootless.c: a rootless sandbox's user namespace: the caller is
 * the policy's user (and group), the other ids of 0-65535 its subordinate
 * ranges where it has them (and newuidmap): at most three mappings each. */
struct sandbox_rootless_map { uint32_t inside, host, size; };
struct sandbox_rootless_maps {
    struct sandbox_rootless_map uid[3], gid[3];
    size_t n_uid, n_gid;
};
int sandbox_rootless_maps(const struct brig_policy *p, struct sandbox_rootless_maps *out, struct brig_error **err);
/* --env entries: NAME=VALUE each, no name the policy denies. */
int sandbox_env_check(const struct brig_policy *p, char **env, struct brig_error **err);
/* The host path of brig-init: next to brig (build tree), else libexecdir. */
int sandbox_find_init(char **out, struct brig_error **err);

/* sandbox_rootfs.c: the default runner rootfs (built on first use,
 * verified before each), its path malloc'd into *out: NAME in
 * /var/lib/brig/rootfs (or BRIG_ROOTFS_DIR); rootless, root's there if
 * built, else in the user's cache (~/.cache/brig/rootfs). */
#define SANDBOX_ROOTFS_DEFAULT "default-2"
int sandbox_rootfs_default(bool rootless, char **out, struct brig_error **err);

/* sandbox_cgroup.c: make the shared cgroup parent once and keep it. */
int sandbox_cgroup_parent(struct brig_error **err);

/* sandbox_stale.c: remove what the runs of dead brigs left (state, cgroup,
 * processes). A run holds its owner lock from before its state exists until
 * after its delete. */
struct sandbox_owner { int rootfd, fd; char name[64]; };
int sandbox_owner_claim(const char *state_root, const char *id, struct sandbox_owner *ow,
                        struct brig_error **err);
void sandbox_owner_release(struct sandbox_owner *ow);
/* The entries of dead runs, then the ownerless cgroup leaves
 * (sandbox_gc_leaves). _entries: those only, returning how many went. */
void sandbox_reap_stale(const char *state_root);
size_t sandbox_reap_stale_entries(const char *state_root);

/* sandbox_gc.c: `brig sandbox gc`. A state root other than the default is
 * recorded (SANDBOX_STATE_ROOT/.roots) before a run or create in it makes
 * anything, so that gc finds its leftovers. */
int sandbox_root_record(const char *state_root, struct brig_error **err);
struct sandbox_gc_report { size_t entries_removed, leaves_removed, leaves_left, errors; };
/* Sweep every known state root (or only STATE_ROOT's entries, if given),
 * then every ownerless leaf under SANDBOX_CGROUP_PARENT; rootless, only
 * STATE_ROOT (the user's). */
int sandbox_gc(const char *state_root, bool rootless, struct sandbox_gc_report *rep, struct brig_error **err);
/* The leaves only (what each run's stale sweep does). */
void sandbox_gc_leaves(void);

/* sandbox_ids.c: the host identity of each sandbox (docs/sandbox.md): a
 * user namespace mapping its ids 0-65535 onto a slot of SANDBOX_IDS_SLOT
 * host ids, owned by the slot's first, from the range brig owns
 * (BRIG_SANDBOX_IDS_CONF, or the file named by BRIG_SANDBOX_IDS). */
#define SANDBOX_IDS_SLOT 65536u
#define SANDBOX_IDS_FIRST 0x70000000u      /* 1879048192 */
#define SANDBOX_IDS_COUNT 1024u
#define SANDBOX_IDS_DIR "/run/brig-ids"
struct sandbox_ids { uint32_t first, count; char source[4096]; };
/* The range in force, checked to be no one else's on this host. */
int sandbox_ids_range(struct sandbox_ids *r, struct brig_error **err);
/* A free slot, held (fd locked) until release; born (a brig_userns_own
 * callback, arg the slot) records the init that keeps it taken after
 * release; clear: forget it now (its init is gone, or never ran). */
struct sandbox_slot { int fd; uint32_t base; };
/* EAGAIN: every slot is taken */
int sandbox_slot_claim(struct sandbox_slot *s, struct brig_error **err);
int sandbox_slot_born(void *arg, pid_t pid, struct brig_error **err);
void sandbox_slot_release(struct sandbox_slot *s, bool clear);

/* sandbox_io.c: the command's stdio, clocks, signals, stats and audit line,
 * shared by run and exec. */
struct sandbox_io {
    int in, out[2], err[2];         /* stdin; pipes: [0] brig's read end */
    int sigfd;
    int saved[3];                   /* brig's own 0-2 during the launch */
    sigset_t old_mask;
    bool masked;
};
/* How the command and everything it started is killed: called at a
 * timeout, and also when the command exits if at_exit. */
struct sandbox_kill {
    void (*fn)(void *arg);
    void *arg;
    bool at_exit;
};
uint64_t sandbox_now_ms(void);
void sandbox_new_id(const char *prefix, char *id, size_t len);
/* stdin, the pipes, and the forwarded signals blocked (into a signalfd). */
int sandbox_io_open(struct sandbox_io *io, const char *stdin_path, struct brig_error **err);
/* Around the launch of the command: brig's 0-2 are the command's, then
 * brig's again (restore also drops brig's copies of the write ends). */
int sandbox_io_swap(struct sandbox_io *io, struct brig_error **err);
void sandbox_io_restore(struct sandbox_io *io);
/* How the output is shown while it comes, and what pid is. */
struct policy_watch;
struct sandbox_live {
    bool echo;                      /* copied to brig's stdout and stderr */
    struct sandbox_events *events;  /* --events, or NULL */
    /* pid is brig-init (run's PID 1, exec's trampoline): its name tells a
     * failed execve (init_report.h) */
    bool init_reports;
    /* the workspace's watcher, forked when its first look is due (a
     * command that ends before never has one: policy.h), or NULL */
    struct policy_watch *watch;
};
/* Drain and time pid (a child of brig) until it is reaped and the pipes
 * closed; fills the exit, clocks and streams of r. */
int sandbox_io_wait(struct sandbox_io *io, pid_t pid, const struct sandbox_kill *k, const struct sandbox_limits *lim,
                    const struct sandbox_live *live, uint64_t started, struct sandbox_result *r,
                    struct brig_error **err);
/* r->error for a command brig-init could not execute (exec_status set by
 * sandbox_io_wait from its report), and for 126/127 found by brig itself
 * the message a shell would print, in the stderr preview (and on brig's
 * stderr when echo). */
void sandbox_not_run(struct sandbox_result *r, const char *argv0, bool echo);
void sandbox_io_close(struct sandbox_io *io);
struct brig_cgroup;
/* What the command's cgroup can tell (cpu, memory peak, OOM kills). */
void sandbox_stats(const struct brig_cgroup *cg, struct sandbox_result *r);
/* One audit line (op, id, argv[0] only, exit, limits hit, duration, byte
 * counts): never argv in full, env values or output. */
void sandbox_audit(const struct brig_policy *p, const char *op, const char *id, const char *argv0,
                   const struct sandbox_result *r);
/* r->error (and exec_status) from e; returns 0. */
int sandbox_fail(struct sandbox_result *r, struct brig_error *e);

/* sandbox_session.c: long-lived sandboxes (docs/sandbox.md). */
/* NAME: [A-Za-z0-9][A-Za-z0-9_.-]{0,62}, not "sb-..." (one-shot ids). */
int sandbox_name_check(const char *name, struct brig_error **err);
/* The init idles under the policy's limits; brig returns once it runs. */
int sandbox_create(const struct sandbox_opts *o, struct brig_error **err);
/* One command in o->session, in a child cgroup of its own; r as for run. */
int sandbox_exec(const struct sandbox_opts *o, struct sandbox_result *r);
int sandbox_list(const char *state_root, bool json, struct brig_error **err);
/* Kills the init and every exec, removes cgroups and state; not the
 * workspace. Without force, refused while execs run. */
int sandbox_remove(const char *state_root, const char *name, bool force, struct brig_error **err);
/* gc of one entry of a state root: a long-lived sandbox whose init is dead
 * (or whose create died) is removed as rm --force does (1), and so is a
 * directory a create left before writing its state; a live one loses its
 * orphaned execs' cgroups (0); anything else is left (0), a damaged state
 * too. -1 when a removal failed (warned). */
int sandbox_session_gc(const char *state_root, const char *name);
/* sandbox_sudo.c: under sudo (SUDO_UID, or a real uid not root), the
 * host's sandbox.conf fixes the policy, state root, rootfs and workspaces;
 * the flags that would choose them are refused. owned[4] receives what o
 * now points at (the caller frees it). */
int sandbox_sudo_apply(struct sandbox_opts *o, char **owned, struct brig_error **err);
bool sandbox_sudo_caller(void);

/* sandbox_seal.c: `sandbox run` from brig's binary as is, or sealed.
 * decide: re-executes sealed (returns only on error) unless the config has
 * no hooks and the default init path; *unsealed then. verify: on the
 * created init PID, before its start: S's process.args[0] is
 * SANDBOX_INIT_PATH, the init has a pid namespace of its own and
 * SANDBOX_INIT_PATH in its root is INIT_HOST itself. */
int sandbox_seal_decide(const struct brig_policy *p, const char *config, bool rootless, bool *unsealed,
                        struct brig_error **err);
struct brig_spec;
int sandbox_seal_verify(const struct brig_spec *s, pid_t pid, const char *init_host, struct brig_error **err);

/* sandbox exec from brig's binary as is, or sealed: re-executes sealed
 * (returns only on error) unless the sandbox's saved config and live init
 * allow it (docs/security.md); dirfd is its state dir (unlocked), st the
 * state read from it. *unsealed then, *t is the trampoline
 * (brig-init --exec at SANDBOX_INIT_PATH) the exec must go through, and
 * *parsed the saved config as read and parsed for the decision (the
 * caller's to free: sandbox_exec_parsed_clear). */
struct brig_state;
struct brig_exec_trampoline;
struct brig_exec_parsed;
int sandbox_seal_exec_decide(int dirfd, const struct brig_state *st, struct brig_exec_trampoline *t,
                             struct brig_exec_parsed *parsed, bool *unsealed, struct brig_error **err);
void sandbox_exec_parsed_clear(struct brig_exec_parsed *parsed);

/* sandbox_run.c: the whole one-shot. Returns -1 only when r->error could
 * not even be set (never, but for allocation); r is always filled. */
int sandbox_run(const struct sandbox_opts *o, struct sandbox_result *r);

#endif
