/* brig sandbox (docs/sandbox.md): run one agent-authored command in a fresh
 * container built in memory from a policy, bounded in time and output, and
 * report what happened as one result.
 *
 *   opts + policy --sandbox_config--> config.json text (policy_apply'd)
 *   config --sandbox_run--> create, start, drain, wait, delete --> result
 *   result --sandbox_result_json--> the JSON of sandbox/result.schema.json */
#ifndef BRIG_SANDBOX_H
#define BRIG_SANDBOX_H

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

struct sandbox_opts {
    const char *policy;             /* NAME or FILE; NULL: "agent" */
    const char *rootfs;             /* required for now */
    const char *workspace;          /* host dir bound at the policy's workspace path */
    const char *timeout;            /* DUR, tightens timeouts.wall */
    const char *idle_timeout;       /* DUR, tightens timeouts.idle */
    const char *output_limit;       /* SIZE, tightens output.maxBytes */
    char **env;                     /* K=V, NULL-terminated */
    const char *cwd;
    const char *stdin_path;         /* NULL: /dev/null; "-": brig's stdin */
    const char *state_root;         /* NULL: SANDBOX_STATE_ROOT */
    bool stream;                    /* copy output live to brig's stdout/stderr */
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
/* The previews as valid UTF-8 (malloc'd): cut on character boundaries,
 * invalid bytes replaced by U+FFFD; *binary when the stream held NUL or
 * invalid UTF-8. Not truncated: everything is in *head, *tail is "". */
void sandbox_stream_previews(const struct sandbox_stream *s, char **head, char **tail,
                             bool *truncated, bool *binary);

struct sandbox_result {
    char id[32];
    char *policy;
    bool ran;                       /* the command was started */
    bool has_exit_code; int exit_code;
    int signal;                     /* 0: none */
    bool timed_out, idle_timed_out, oom_killed;
    uint64_t wall_ms;
    bool has_cpu; uint64_t cpu_user_ms, cpu_system_ms;
    bool has_memory_peak; uint64_t memory_peak_bytes;
    bool has_pids_peak; uint64_t pids_peak;
    struct sandbox_stream out, err;
    char *error;                    /* set: brig failed, nothing (more) ran */
};
void sandbox_result_free(struct sandbox_result *r);
/* 124 timeout, 125 brig failed, 128+N signal N, else the exit code. */
int sandbox_exit_status(const struct sandbox_result *r);
/* The result as one JSON document (malloc'd, with a trailing newline). */
char *sandbox_result_json(const struct sandbox_result *r);
/* "exit 0 in 12 ms; stdout 3 B, stderr 0 B" for the human summary. */
char *sandbox_result_summary(const struct sandbox_result *r);

/* sandbox_config.c: the limits in force and the config text. */
int sandbox_limits(const struct brig_policy *p, const struct sandbox_opts *o, struct sandbox_limits *out,
                   struct brig_error **err);
int sandbox_config(const struct brig_policy *p, const struct sandbox_opts *o, const char *id,
                   const char *init_host_path, char **out, struct brig_error **err);
/* The host path of brig-init: next to brig (build tree), else libexecdir. */
int sandbox_find_init(char **out, struct brig_error **err);

/* sandbox_cgroup.c: make the shared cgroup parent once and keep it. */
int sandbox_cgroup_parent(struct brig_error **err);

/* sandbox_stale.c: remove what the runs of dead brigs left (state, cgroup,
 * processes). A run holds its owner lock from before its state exists until
 * after its delete. */
struct sandbox_owner { int rootfd, fd; char name[64]; };
int sandbox_owner_claim(const char *state_root, const char *id, struct sandbox_owner *ow,
                        struct brig_error **err);
void sandbox_owner_release(struct sandbox_owner *ow);
void sandbox_reap_stale(const char *state_root);

/* sandbox_sudo.c: under sudo (SUDO_UID, or a real uid not root), the
 * host's sandbox.conf fixes the policy, state root, rootfs and workspaces;
 * the flags that would choose them are refused. owned[4] receives what o
 * now points at (the caller frees it). */
int sandbox_sudo_apply(struct sandbox_opts *o, char **owned, struct brig_error **err);
bool sandbox_sudo_caller(void);

/* sandbox_run.c: the whole one-shot. Returns -1 only when r->error could
 * not even be set (never, but for allocation); r is always filled. */
int sandbox_run(const struct sandbox_opts *o, struct sandbox_result *r);

#endif
