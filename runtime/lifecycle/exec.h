/* `exec` (runc's exec) and `ps`: a new process in a running container, and
 * the container's processes as the host sees them. */
#ifndef BRIG_EXEC_H
#define BRIG_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../config/spec.h"
#include "container.h"

struct brig_cgroup;

/* A static program that execs the command for brig's child (sandbox exec
 * from brig's unsealed binary, docs/security.md): path inside the
 * container, where the child opens it (no symlink, no magic link) and
 * requires the host file dev/ino; it is run as
 * `path --exec EXE -- ARGV0 ARGS...`. */
struct brig_exec_trampoline {
    const char *path;
    dev_t dev;
    ino_t ino;
};

/* The container's config.json as the caller read and parsed it before
 * the exec took the state dir's lock (sandbox exec's seal decision). The
 * exec reads the file again under the lock and takes spec (setting it to
 * NULL) only when the bytes and the absolute bundle are the ones parsed:
 * the same input, so the same spec; anything else is parsed anew. The
 * rest stays the caller's. */
struct brig_exec_parsed {
    char *text;
    size_t len;
    const char *bundle;
    struct brig_spec *spec;
};

struct brig_exec_opts {
    const char *id;
    const char *process_file;   /* --process: a JSON "process" object */
    char **args;                /* the command (NULL-terminated), when no --process */
    bool tty;                   /* --tty */
    const char *cwd;            /* --cwd */
    char **env;                 /* --env K=V, NULL-terminated (override by name) */
    const char *user;           /* --user UID[:GID] */
    char **additional_gids;     /* --additional-gids, NULL-terminated */
    char **caps;                /* --cap CAP_X: added to bounding/effective/permitted */
    bool no_new_privs;          /* --no-new-privs */
    int preserve_fds;
    bool detach;
    const char *pid_file;       /* absolute */
    const char *console_socket;
    /* sandbox exec: the process joins this cgroup (a child of the
     * container's, cgroup_child_create) instead of the container's; and
     * *pid_out gets its pid (detached, it is still the caller's child). */
    struct brig_cgroup *cgroup;
    pid_t *pid_out;
    /* Set: the command is exec'd through it, and the exec is refused unless
     * nothing in the container can ptrace brig's child (a pid namespace of
     * its own, no user namespace, CAP_SYS_PTRACE in no set of the saved
     * process nor of this one, no hooks). */
    const struct brig_exec_trampoline *trampoline;
    struct brig_exec_parsed *parsed;    /* may be NULL */
    /* Non-zero: the process must reach its execve within this many ms, or
     * it is killed and the exec fails with ETIMEDOUT. Once our child has
     * the container's uid, a process of the container may SIGSTOP it
     * (kill(2) allows it), and the wait for its execve would never end. */
    uint64_t start_timeout_ms;
    /* Non-zero: brig's own stderr while fd 2 is the command's (sandbox
     * exec), for the one message brig writes without its heap. */
    int stderr_fd;
};

/* Without detach, *exit_status is the process's status (128+N for signal N). */
int container_exec(const struct brig_globals *g, const struct brig_exec_opts *o, int *exit_status,
                   struct brig_error **err);

/* The process an exec runs, from s (the container's saved config): the
 * --process file or s->process with the command and flags applied. The
 * result replaces s->process. Never less confined than the container:
 * no_new_privileges stays set if the config had it. */
int exec_build_process(struct brig_spec *s, const struct brig_exec_opts *o, struct brig_error **err);

/* ps: json prints the pids of the container's cgroup as a JSON array;
 * table runs ps(1) with ps_args (default -ef) and keeps the header and the
 * container's lines. */
int container_ps(const struct brig_globals *g, const char *id, bool json, char **ps_args,
                 struct brig_error **err);

#endif
