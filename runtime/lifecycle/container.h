/* The OCI lifecycle operations, as called by the CLI. */
#ifndef BRIG_CONTAINER_H
#define BRIG_CONTAINER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../util/error.h"

struct brig_globals {
    const char *root;           /* state directory, default /run/brig */
    bool systemd_cgroup;
    bool no_cgroup;             /* --cgroup-manager disabled: create makes none */
    bool rootless;              /* no privilege on the host (linux/rootless.h) */
    bool quiet_limits;          /* the caller reports limits it could not apply (sandbox) */
    bool debug;
    const char *policy;         /* --policy FILE|NAME (policy/policy.h), or NULL */
    const char *policy_text;    /* that policy's JSON as read before (a sandbox's
                                 * snapshot): judged instead of reading it again */
};

/* A user namespace of the container's own (brig sandbox): its init enters
 * it once its setup is done, as host root, in the namespaces the config
 * asks for (linux/child.c), so those stay the host's to manage; owned by
 * host uid base, it maps container ids 0..size-1 onto base.. . born gets
 * the init's pid right after the clone (an error fails the create). Not a
 * linux.namespaces entry: the config asks for no user namespace and may
 * not. */
struct brig_userns_own {
    uint32_t base, size;
    int (*born)(void *arg, pid_t pid, struct brig_error **err);
    void *arg;
};

struct brig_create_opts {
    const char *id;
    const char *bundle;         /* absolute and resolved (realpath), as the CLI
                                 * gives it; relative or NULL (cwd): resolved */
    const char *pid_file;
    const char *console_socket;
    bool no_pivot;
    bool no_new_keyring;
    int preserve_fds;
    bool detach;                /* run only */
    bool keep;                  /* run only: do not delete after exit */
    const char *config_text;    /* config.json built in memory (sandbox run):
                                 * used instead of reading bundle/config.json */
    const struct brig_userns_own *userns;   /* NULL: none of its own */
    bool cgroup_fresh;          /* the cgroup's leaf must be made by this create
                                 * (cgroup_create_recorded): a sandbox's leaf
                                 * is named by its id alone, in any state root */
    bool watch_later;           /* its brig supervises the run: the workspace's watcher is forked
                                 * only once the command outlives its first look (policy.h) */
    bool seal_decided;          /* the caller decided whether brig runs sealed (sandbox/sandbox_seal.c) */
};

int container_create(const struct brig_globals *g, const struct brig_create_opts *o,
                     struct brig_error **err);
int container_start(const struct brig_globals *g, const char *id, struct brig_error **err);
/* create + start (+ wait + delete unless detached). *exit_status is the
 * container's status, 128+N for a signal. */
int container_run(const struct brig_globals *g, const struct brig_create_opts *o,
                  int *exit_status, struct brig_error **err);
int container_kill(const struct brig_globals *g, const char *id, int sig, bool all,
                   struct brig_error **err);
int container_delete(const struct brig_globals *g, const char *id, bool force,
                     struct brig_error **err);
int container_state(const struct brig_globals *g, const char *id, struct brig_error **err);
int container_list(const struct brig_globals *g, bool json, bool quiet, struct brig_error **err);

#endif
