/* Network egress by allow-list (docs/egress.md): the container keeps its
 * own empty network namespace; brig's proxy listens on 127.0.0.1 inside
 * it (HTTP CONNECT and plain HTTP on EGRESS_HTTP_PORT, SOCKS5 on
 * EGRESS_SOCKS_PORT) and connects out from the host's namespace to what
 * network.allow names, after resolving names itself.
 *
 *   egress_start (before the init's clone: fork the proxy into its
 *     cgroup, it prepares)
 *   egress_attach (the init exists: listeners in its netns, confined, serve)
 *   egress_stop (sandbox end) or egress_detach (create: the proxy lives
 *   until the container's init exits) */
#ifndef BRIG_EGRESS_H
#define BRIG_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "../runtime/util/error.h"

struct brig_policy;
struct brig_spec;
struct egress;

#define EGRESS_HTTP_PORT 3128
#define EGRESS_SOCKS_PORT 1080
/* Tests (and only they) point the resolver at a hosts file, and shorten
 * the time a TLS record begun in a tunnel has to be whole (ms, 1 to the
 * default EGRESS_TLS_WAIT_MS): brig's own environment, never the
 * container's; refused through sudo. */
#define EGRESS_HOSTS_ENV "BRIG_EGRESS_HOSTS"
#define EGRESS_TLS_WAIT_ENV "BRIG_EGRESS_TLS_WAIT_MS"
#define EGRESS_TLS_WAIT_MS 10000

/* The environment a container under an egress policy gets, NULL-ended:
 * HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY in upper and lower case. */
extern const char *const egress_env[];
bool egress_env_name(const char *name);

/* The child cgroup of the container's that the proxy and its audit writer
 * run in (charged to the container's limits). */
#define EGRESS_CGROUP "brig-egress"
/* How long the end of a proxy is waited for before it is killed. */
#define EGRESS_END_WAIT_MS 2000

struct brig_cgroup;

/* Before the container's init is cloned: fork the proxy, which joins a
 * child cgroup of cg (NULL: none) and prepares, idle. *out NULL (and 0)
 * when the policy's network is not egress. The proxy dies with the caller
 * (PR_SET_PDEATHSIG) until egress_detach. */
int egress_start(const struct brig_policy *p, const char *id, const struct brig_cgroup *cg, struct egress **out,
                 struct brig_error **err);
/* The listeners, made inside init_pid's network namespace; returns when
 * they listen and the proxy is confined (or why it could not). */
int egress_attach(struct egress *e, pid_t init_pid, struct brig_error **err);
/* Rootless (docs/rootless.md): the init's network and user namespaces,
 * opened while it is still dumpable (before its go: after that only its
 * owner's capability over the host's user namespace, which a rootless brig
 * lacks, would open them); egress_attach hands them to the proxy, which
 * enters the user namespace it owns in a child of its own to listen. */
int egress_hold_ns(struct egress *e, pid_t init_pid, struct brig_error **err);
/* Let the proxy outlive the caller: it serves until the init exits. */
void egress_detach(struct egress *e);
/* End the proxy (its connections shut down, their audit lines written),
 * reap it, remove its cgroup (NULL: nothing). */
void egress_stop(struct egress *e);
static inline void egress_stopp(struct egress **e)
{
    egress_stop(*e);
    *e = NULL;
}
#define autoegress __attribute__((cleanup(egress_stopp)))
/* delete of a container under egress (cg its cgroup), after its init was
 * killed: wait (bounded) for the detached proxy to end and write its
 * lines, before the cgroup's processes are killed. */
void egress_wait_gone(const struct brig_cgroup *cg);

/* egress_launch.c: the proxy environment of a container launch (create.c)
 * and of an exec. Both do nothing unless the policy's network is egress. */
int egress_prepare(const struct brig_policy *p, struct brig_spec *s, struct brig_error **err);
/* exec (and sandbox exec) into a container under an egress policy: the
 * process gets the proxy variables its init got, whatever the saved
 * config or --process file says, except those the exec's own --env
 * (keep, NAME=VALUE) sets: they only steer that process's own client,
 * the container has no other way out to point it at. */
int egress_exec_env(const struct brig_policy *p, struct brig_spec *s, char *const *keep, struct brig_error **err);

#endif
