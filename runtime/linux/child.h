/* The container's init before execve: runs in the new namespaces, as a
 * clone of the brig process (no re-exec of the brig binary). */
#ifndef BRIG_CHILD_H
#define BRIG_CHILD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "../config/spec.h"
#include "ns.h"
#include "seccomp.h"

struct brig_cgroup;

struct child_ctx {
    const struct brig_spec *spec;
    const struct brig_bpf *bpf;     /* compiled by the parent, or NULL */
    const struct brig_bpf *setid_bpf;   /* brig's set-id filter, stacked first, or NULL */
    const struct brig_cgroup *cg;   /* join these cgroups ourselves, or NULL (parent did) */
    bool cloned_into;               /* the v2 cgroup was joined at clone */
    struct ns_plan *ns;
    int sync_fd;                    /* our end of the socketpair */
    int fifo_fd;                    /* exec.fifo opened O_RDWR (create), or -1 (run) */
    int start_sock;                 /* listening SYNC_START_SOCK (create), or -1 (run) */
    bool no_pivot;
    int preserve_fds;               /* fds 3 .. 3+N-1 are passed to the process */
    char *state_json;               /* from the parent, for createContainer ("creating") */
    char *home_env;                 /* "HOME=..." when process.env has none */
    char *start_json;               /* from the parent at start, for startContainer ("created") */
    const struct stat *caller_mntns;/* brig's mount namespace (the one not to touch), or NULL */
    bool dumpable_until_go;         /* rootless, new user namespace: the parent writes its maps */
    bool rootless;                  /* brig has no privilege on the host: a user namespace's at most
                                     * (rootless podman's), so device nodes are bound, not made */
    uint32_t userns_base;           /* a user namespace of its own, entered after the setup */
    uint32_t userns_size;           /* (ns.h, ns_own_*): ids 0..size-1 onto base..; 0: none */
    bool trampoline;                /* exec the process through brig-init --exec-sync (brig runs
                                     * unsealed: linux/exe_trampoline.h) */
};

/* Never returns: execs process.args or _exit()s after reporting the error
 * to the parent over sync_fd. */
__attribute__((noreturn)) void child_main(struct child_ctx *c);

#endif
