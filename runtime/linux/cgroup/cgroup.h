/* Cgroups for one container: layout detection (unified / hybrid / legacy),
 * creation, limits from linux.resources, placement, kill and removal.
 * Fail closed: a limit that no mounted hierarchy can enforce is an error
 * naming the field and the missing controller. */
#ifndef BRIG_CGROUP_H
#define BRIG_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../config/spec.h"

struct brig_cgroup;

/* Resolve linux.cgroupsPath (absolute, relative to the caller's cgroup, or
 * "slice:prefix:name" with systemd), create the cgroup(s) and apply every
 * limit. On failure nothing is left behind. */
int cgroup_create(const struct brig_spec *s, const char *id, bool systemd,
                  struct brig_cgroup **out, struct brig_error **err);
/* The same, calling record(planned) before the first mkdir with the
 * cgroup_serialize() text of what is about to be made ("created" counts the
 * components missing now), so that the caller can write it to its state:
 * a brig killed in the middle leaves nothing `delete` cannot find. A failed
 * record fails the create. fresh: the leaf must be made by this call in
 * every hierarchy; one that exists (empty or not) is refused before the
 * record: it is someone else's, or what a dead container left, and the
 * delete of that one would kill whoever joined it. */
typedef int (*cgroup_record_fn)(const char *planned, void *arg, struct brig_error **err);
/* delegated (rootless, from cgroup_delegation_find): every cgroup is made
 * below that v2 cgroup, with what it delegates; NULL: anywhere. */
int cgroup_create_recorded(const struct brig_spec *s, const char *id, bool systemd, const char *delegated,
                           bool fresh, cgroup_record_fn record, void *arg, struct brig_cgroup **out,
                           struct brig_error **err);
/* cgroup_delegate.c: the cgroup v2 subtree delegated to this (rootless)
 * process: the highest ancestor of its own cgroup, or that cgroup, whose
 * directory, cgroup.procs and cgroup.subtree_control are its effective
 * uid's, as systemd leaves a delegated unit (user@UID.service). 0 and
 * *inner its path below the v2 mount; -1 and *why (malloc'd) a sentence
 * saying why there is none (a hybrid or v1 host, or nothing delegated). */
int cgroup_delegation_find(char **inner, char **why);
/* A v2 leaf directory fd usable with CLONE_INTO_CGROUP, or -1. */
int cgroup_clone_fd(const struct brig_cgroup *cg);
/* The same for a cgroup loaded from the state file (exec): opens the v2
 * directory on first use; cg keeps the fd until cgroup_free. -1 if none. */
int cgroup_clone_fd_open(struct brig_cgroup *cg);
/* Put pid into every hierarchy not already joined via cgroup_clone_fd. */
int cgroup_attach(const struct brig_cgroup *cg, pid_t pid, bool cloned_into, struct brig_error **err);
/* The same, done by the container's init for itself (it must still be
 * single-threaded and privileged on the host): v1 "tasks" <- "0". */
int cgroup_attach_self(const struct brig_cgroup *cg, bool cloned_into, struct brig_error **err);
/* Serialized form for the state file, and back. */
char *cgroup_serialize(const struct brig_cgroup *cg);
int cgroup_load(const char *serialized, struct brig_cgroup **out, struct brig_error **err);
/* Signal every process in the container's cgroup. */
int cgroup_kill(const struct brig_cgroup *cg, int sig, struct brig_error **err);
/* Pids in the cgroup (for ps, kill --all). */
int cgroup_pids(const struct brig_cgroup *cg, pid_t **pids, size_t *n, struct brig_error **err);
/* The same, with the pids of every cgroup below it (an exec's leaf, a
 * helper's), 8 levels down; -1 without a hierarchy recorded. */
int cgroup_pids_tree(const struct brig_cgroup *cg, pid_t **pids, size_t *n);
/* cg holds no process at all: cgroup.procs reads empty in the hierarchy
 * cgroup_pids reads (v2 when the leaf has one: on a hybrid host it holds
 * every process too). Nothing can join an empty cgroup but by a write to
 * the host's cgroupfs, so nothing is left to kill. false when unreadable. */
bool cgroup_empty(const struct brig_cgroup *cg);
/* Freeze (pause) or thaw (resume) every process of the container: v2
 * cgroup.freeze (waits for cgroup.events "frozen 1"), else the v1 freezer. */
int cgroup_freeze(const struct brig_cgroup *cg, bool freeze, struct brig_error **err);
bool cgroup_frozen(const struct brig_cgroup *cg);
/* Processes of the container killed by the OOM killer so far (v2
 * memory.events oom_kill, v1 memory.oom_control oom_kill). */
int cgroup_oom_kills(const struct brig_cgroup *cg, uint64_t *n, struct brig_error **err);
/* `update`: apply the fields set in r to the running container's cgroup,
 * planned and checked as at create (fail closed, errors name the field).
 * Device rules are left as created (as runc's update). */
int cgroup_update(const struct brig_cgroup *cg, const struct brig_resources *r,
                  struct brig_error **err);

/* What `events --stats` reports, read from v2 or v1 files; runc's units
 * (cpu in ns, memory in bytes; an unlimited limit is UINT64_MAX for memory
 * and 0 for pids, as runc prints them). */
struct cgroup_stats {
    bool has_cpu;
    uint64_t cpu_total, cpu_user, cpu_kernel;       /* ns */
    uint64_t *percpu; size_t n_percpu;              /* ns, v1 only */
    uint64_t periods, throttled_periods, throttled_time;
    bool has_memory;
    uint64_t mem_cache;
    uint64_t mem_usage, mem_limit, mem_max, mem_failcnt;
    bool has_swap;
    uint64_t swap_usage, swap_limit, swap_max, swap_failcnt;
    char **raw_keys; uint64_t *raw_vals; size_t n_raw;  /* memory.stat */
    bool has_pids;
    uint64_t pids_current, pids_limit;
    bool has_pids_peak;                             /* v2's pids.peak (brief only) */
    uint64_t pids_peak;
    bool has_oom;
    uint64_t oom_kills;
};
int cgroup_stats_read(const struct brig_cgroup *cg, struct cgroup_stats *st, struct brig_error **err);
/* Only the totals a command's result reports: has_cpu and cpu_total, _user,
 * _kernel; has_memory, mem_usage and mem_max; has_oom and oom_kills (the
 * same values as cgroup_stats_read's); has_pids_peak and pids_peak where the
 * pids controller is v2's and has pids.peak. A cgroup that is gone reads as
 * none. */
void cgroup_stats_brief(const struct brig_cgroup *cg, struct cgroup_stats *st);
void cgroup_stats_clear(struct cgroup_stats *st);

/* cgroup_child.c: a child cgroup named name (no '/') of a running
 * container's (`sandbox exec`: one per command, to kill it and all it
 * started alone; a helper process's). In every hierarchy cg uses, or, lean,
 * only in those that kill, measure, list or lock it, its process joining
 * the container's own directory in the others (cgroup_child.c).
 * cgroup_kill/destroy/stats work on the result; destroy removes the child
 * only. create fails if the container's cgroup is gone; open is for one
 * made by another brig (every hierarchy). */
int cgroup_child_create(const struct brig_cgroup *cg, const char *name, bool lean, struct brig_cgroup **out,
                        struct brig_error **err);
int cgroup_child_open(const struct brig_cgroup *cg, const char *name, struct brig_cgroup **out,
                      struct brig_error **err);
/* Whether cg's child name exists (in any hierarchy) with a process in it. */
bool cgroup_child_busy(const struct brig_cgroup *cg, const char *name);
/* An fd holding an flock on the child's first directory, or -1 (errno
 * EWOULDBLOCK: another process holds it). The brig that runs a child's
 * processes holds it from before the first joins: an unlocked child with
 * processes is an orphan, its brig gone (the lock goes with the process). */
int cgroup_child_lock(const struct brig_cgroup *child, bool wait);
/* The same flock on any cgroup's first directory, HOW as flock(2) takes it
 * (LOCK_SH or LOCK_EX, | LOCK_NB): a sandbox's execs hold their parent's
 * shared while they make and lock their child, the reaper of empty
 * children exclusive. */
int cgroup_lock(const struct brig_cgroup *cg, int how);
/* Names of cg's children beginning with prefix (NULL-terminated, malloc'd),
 * in any hierarchy; _lockable: only those in the first, where the lock of
 * cgroup_child_lock is (a child missing there can be neither locked nor
 * found an orphan), one directory read instead of one per hierarchy. */
int cgroup_child_list(const struct brig_cgroup *cg, const char *prefix, char ***names, size_t *n,
                      struct brig_error **err);
int cgroup_child_list_lockable(const struct brig_cgroup *cg, const char *prefix, char ***names, size_t *n,
                               struct brig_error **err);

/* Kill what is left and remove every directory brig created. */
int cgroup_destroy(struct brig_cgroup *cg, struct brig_error **err);
void cgroup_free(struct brig_cgroup *cg);

#endif
