/* Shared by create and run: a container taken to "created", with what the
 * caller still needs (run keeps the sync socket and waits for the init). */
#ifndef BRIG_LAUNCH_H
#define BRIG_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../linux/ns.h"
#include "container.h"

struct brig_spec;
struct brig_policy;
struct brig_bpf;
struct brig_cgroup;
struct brig_state;
struct egress;
struct policy_watch;

struct launch {
    char *config_text;          /* config.json as read through bundle_fd */
    size_t config_len;
    int bundle_fd;              /* O_PATH of the bundle, until the clone */
    int root_fd;                /* root.path as opened by rootfs_open, until the clone */
    struct brig_spec *spec;
    struct brig_bpf *bpf;
    struct brig_bpf *setid_bpf;     /* brig's set-id filter (spec.h), or NULL */
    struct ns_plan ns;
    bool ns_ready;
    struct brig_policy *policy; /* in force (resolved once), or NULL */
    int rootfd;                 /* --root, as checked by state_dir_make */
    int dirfd;                  /* state dir, locked */
    bool state_dir_made;
    struct brig_state *st;
    struct brig_cgroup *cg;
    bool no_cgroup;             /* none is made (--cgroup-manager disabled, rootless without one) */
    bool rootless;              /* brig_globals.rootless */
    char *cg_delegated;         /* rootless: the delegated v2 cgroup ours go below */
    char *limits_skipped;       /* rootless without a cgroup, the policy's limits optional: why */
    int fifo_fd;
    int start_sock;             /* create: listening SYNC_START_SOCK, until the clone */
    int sync_fd;                /* parent end */
    int console_sock;           /* --console-socket, connected before anything exists */
    int console_fd;             /* pty master (process.terminal), until handed on */
    pid_t pid;
    struct egress *egress;      /* the network egress proxy (policy), or NULL */
    struct policy_watch *wswatch;   /* the workspace's watcher (workspace.maxSize), or NULL */
    bool trampoline;            /* unsealed: the process is exec'd through brig-init (child.h) */
};

/* On failure everything made so far is undone and released. */
int launch_container(struct launch *L, const struct brig_globals *g, const struct brig_create_opts *o,
                     bool run_mode, struct brig_error **err);
void launch_release(struct launch *L);
/* The same for a process that ends next (sandbox run): the fds are closed,
 * the memory is left to the exit. Freed after the clone, the parsed config,
 * policy and state write a chunk header into ~30 heap pages shared
 * copy-on-write with the init, a page fault each, for nothing. Under
 * AddressSanitizer everything is freed (its leak check). */
void launch_release_exiting(struct launch *L);
/* The state startContainer hooks read on stdin, sent with the go-ahead: the
 * container is "created" then (runc's init says so too); NULL without any. */
char *launch_start_json(const struct launch *L);
/* run's delete (delete.c) of the container it created and whose init it
 * reaped: what `delete --force` does, with what run holds (state dir and
 * --root fds, state, cgroup, spec, policy) instead of reading it again.
 * L->dirfd is unlocked on entry (the container ran) and locked again here;
 * a container removed meanwhile is success, as with delete --force. */
int launch_delete(struct launch *L, const char *id, struct brig_error **err);
/* clone3 with ns_flags, into the v2 cgroup cgroup_fd (if >= 0) when the
 * kernel allows; *cloned_into says whether it did. 0 in the child. */
pid_t launch_clone(unsigned long ns_flags, int cgroup_fd, bool *cloned_into);
/* A helper process of the container's (egress proxy, workspace watcher),
 * forked before the init in the child cgroup cgname of cg (NULL: none)
 * with a SOCK_SEQPACKET control socket (helper.c). Returns 0 in the child
 * (parent-death signal set, named comm, no signal blocked, SIGPIPE
 * ignored; it joins its v1 cgroups itself: cgroup_attach_self(h->cg,
 * h->cloned_into)), its pid in the parent, -1 with nothing left. h->ctl is
 * the caller's end of the socket either side. */
struct launch_helper {
    int ctl;
    struct brig_cgroup *cg;     /* the child cgroup, or NULL */
    bool cloned_into;
};
pid_t launch_helper_fork(const struct brig_cgroup *cg, const char *cgname, const char *comm,
                         struct launch_helper *h, struct brig_error **err);
/* --pid-file: the pid as text, written atomically (also used by exec). */
int launch_write_pid_file(const char *path, pid_t pid, struct brig_error **err);

#endif
