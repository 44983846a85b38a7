/* Shared by the egress_*.c files of the proxy process only. */
#ifndef BRIG_EGRESS_INTERNAL_H
#define BRIG_EGRESS_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "egress_rules.h"

struct brig_policy;
struct brig_jw;

/* One sandbox's proxy: its rules and what its connections have used. */
struct egress_ctx {
    const struct brig_policy *policy;   /* audit.path, name */
    const struct egress_rules *rules;
    const char *id;
    const char *hosts_path;             /* EGRESS_HOSTS_ENV, or NULL: getaddrinfo */
    int hosts_fd;                       /* hosts_path, opened before the sandbox */
    int route_fd;                       /* NETLINK_ROUTE, made before the sandbox */
    int audit_fd;                       /* to the audit writer, or -1: no audit.path */
    int tls_fd;                         /* to the TLS helper, or -1: no network.credentials */
    int tls_go;                         /* a byte starts the helper (egress_tls.c) */
    atomic_bool tls_going;
    unsigned tls_wait_ms;               /* a TLS record begun must be whole by then */
    atomic_uint_fast64_t conns;         /* open now */
    atomic_uint_fast64_t bytes;         /* spent of rules->max_bytes */
};

enum egress_proto { EGRESS_PROTO_HTTP, EGRESS_PROTO_CONNECT, EGRESS_PROTO_SOCKS };

/* Why a dial failed, for the protocol's answer. */
enum egress_fail { EGRESS_OK, EGRESS_DENIED, EGRESS_BAD, EGRESS_UNRESOLVED, EGRESS_UNREACHABLE, EGRESS_LIMIT,
                   EGRESS_TLS };

struct egress_conn {
    struct egress_ctx *ctx;
    int client, upstream;
    enum egress_proto proto;
    char name[EGRESS_NAME_MAX + 2];     /* as judged: normalized name or address */
    char addr[64];                      /* the address connected to (or refused) */
    uint16_t port;
    const struct egress_cred *cred;     /* a plain request sent on over TLS with this credential */
    enum egress_fail fail;
    char why[384];                      /* reason of a refusal or an end */
    uint64_t up, down;                  /* client->upstream, upstream->client */
    uint64_t started_ms;
    struct egress_conn *next;           /* egress_proxy.c's hand-over queue */
    struct egress_conn *live_prev, *live_next;     /* egress_proxy.c's open connections */
};

/* egress_limits.c */
bool egress_limit_admit(struct egress_ctx *x);
void egress_limit_release(struct egress_ctx *x);
/* Up to want bytes of the budget (0: spent); give back what was not used. */
size_t egress_budget_take(struct egress_ctx *x, size_t want);
void egress_budget_refund(struct egress_ctx *x, size_t n);
bool egress_budget_spent(struct egress_ctx *x);
uint64_t egress_now_ms(void);

/* egress_resolve.c: up to max addresses of name, in the resolver's order.
 * 0, or -1 with why. */
int egress_resolve(const struct egress_ctx *x, const char *name, struct egress_addr *out, size_t max, size_t *n,
                   char *why, size_t len);

/* The connection's upstream socket, connected: kept where the end of the
 * proxy can shut it down (egress_proxy.c). */
void egress_conn_upstream(struct egress_conn *c, int fd);

/* egress_route.c: a NETLINK_ROUTE socket (-1 with errno), and whether the
 * host's routing table delivers a locally (RTN_LOCAL, RTN_BROADCAST): 0
 * with *local, or -1 with why (the caller refuses: fail closed). */
int egress_route_open(void);
int egress_route_local(int fd, const struct egress_addr *a, bool *local, char *why, size_t len);

/* egress_dial.c: judge host:port (name, then every address), connect to
 * the first allowed address that answers. The fd, or -1 with c->fail and
 * c->why set. Fills c->name, c->addr, c->port. */
int egress_dial(struct egress_conn *c, const char *host, uint16_t port);

/* egress_sni.c: -1 (c->why set) when the client's TLS ClientHello names
 * another server than CONNECT did, or its first record is not whole within
 * ctx->tls_wait_ms of its first byte; 0 otherwise (not TLS, no SNI, same,
 * the server spoke first, the client ended). pending: the client's bytes
 * already read. *first (malloc'd, the caller frees it, also on -1) gets
 * *n_first bytes read from the client, pending first: what goes upstream
 * before the relay. */
int egress_sni_check(struct egress_conn *c, const char *pending, size_t n_pending, char **first, size_t *n_first);

/* egress_relay.c: splice both ways until both sides end (or the budget).
 * pending goes upstream first; then at most up_max more bytes of the
 * client's (EGRESS_RELAY_ALL: all), after which the client is no longer
 * read and the connection ends with the upstream's answer. */
#define EGRESS_RELAY_ALL UINT64_MAX
void egress_relay(struct egress_conn *c, const char *pending, size_t n_pending, uint64_t up_max);

/* egress_tls.c: the TLS helper, started (before the proxy is confined)
 * with the secrets of network.credentials; *pid -1, *fd -1 without any.
 * 0, or -1 with why (never a secret's byte). */
int egress_tls_start(const struct egress_rules *r, pid_t *pid, int *fd, int *go, char *why, size_t len);
/* Close the control socket and the go pipe, reap the helper. */
void egress_tls_finish(pid_t pid, int fd, int go);
/* c->upstream (TCP to c->cred's host:port) and the request head (no
 * blank line) to the helper; c->upstream becomes the plain side. 0 once
 * the handshake verified the server, or -1 with c->fail EGRESS_TLS and
 * c->why. */
int egress_tls_open(struct egress_conn *c, const char *head, size_t head_len);

/* egress_http.c, egress_socks.c: one client connection each. */
void egress_http_serve(struct egress_conn *c);
void egress_socks_serve(struct egress_conn *c);

/* egress_audit.c: the connection's one line (never payload). */
void egress_audit(const struct egress_conn *c, const char *decision);
/* A line's writer with its head (time, op, id, policy), for the caller's
 * members; jw_obj_close and jw_text then. */
struct brig_jw *egress_audit_open(const char *id, const struct brig_policy *p);

/* egress_listen.c: listening sockets on 127.0.0.1:ports[i] inside the
 * network namespace netns_fd, made by a thread that joined it. */
int egress_listen_in(int netns_fd, const uint16_t *ports, int *fds, size_t n, char *why, size_t len);
/* The same for a rootless proxy: a forked child enters userns_fd (the
 * container's, which the caller owns: the child then holds
 * CAP_SYS_ADMIN over the network namespace it owns), makes the sockets
 * there and hands them back. */
int egress_listen_in_userns(int userns_fd, int netns_fd, const uint16_t *ports, int *fds, size_t n, char *why,
                            size_t len);

/* egress_proxy.c: accept and serve until stop_fd is readable (EOF, a
 * message, or a pidfd whose process exited). */
void egress_proxy_serve(struct egress_ctx *x, const int *listen_fds, const enum egress_proto *protos, size_t n,
                        int stop_fd);
/* The sandbox ended: audit the connections still waiting to be accepted,
 * shut down the open connections' sockets (every wait on them ends at
 * once) and wait (bounded) for their threads to write their audit lines.
 * No connection is served after it. */
void egress_proxy_end(struct egress_ctx *x, const int *listen_fds, const enum egress_proto *protos, size_t n);

/* egress_sandbox.c: the proxy confined once it listens; keep[] are the
 * fds it serves with. 0, or -1 with why. */
#define EGRESS_UID_BASE 0xB0000000u     /* + the proxy's pid: its own uid and gid */
int egress_sandbox_enter(const int *keep, size_t n_keep, pid_t parent, char *why, size_t len);
/* A rootless proxy's file reads held by Landlock (after no_new_privs) to
 * /etc, the CA certificates and resolv.conf's own directory; nothing
 * written, made or executed anywhere. -1 and why (Landlock missing too). */
int egress_sandbox_landlock(char *why, size_t len);
/* The same for the TLS helper: no socket of its own to make, no connect,
 * no accept (it is handed connected ones). */
int egress_sandbox_enter_tls(const int *keep, size_t n_keep, pid_t parent, char *why, size_t len);

/* egress_auditor.c: the privileged writer of the proxy's audit lines.
 * *pid -1 and *fd -1 when the policy has no audit.path. */
int egress_auditor_start(const struct brig_policy *p, const char *id, pid_t *pid, int *fd, char *why, size_t len);
/* A child with a SOCK_SEQPACKET pair to it (the audit writer, the TLS
 * helper): sv[0] the caller's end, sv[1] the child's (the other closed
 * on each side). The child's pid (0 in the child), or -1 with why. */
pid_t egress_fork_peer(const char *what, int sv[2], char *why, size_t len);
/* decision: "allow", "deny" or "error" (the writer's accounting). */
void egress_auditor_send(int fd, const char *decision, const char *line);
/* Close the proxy's end, wait for the lines sent to be written. */
void egress_auditor_finish(pid_t pid, int fd);

/* Blocking I/O with a deadline on the client's socket. */
ssize_t egress_read_some(int fd, void *buf, size_t len, int timeout_ms);
int egress_write_all(int fd, const void *buf, size_t len);

#endif
