/* One audit line per connection, in the policy's audit log (policy_audit.c
 * writes it: one O_APPEND write, rotated by size): sandbox id, protocol,
 * destination name and address, port, the decision and why, bytes each
 * way, duration. Never a byte of payload, a URL path or a header. */
#include "egress_internal.h"

#include <unistd.h>

#include "../policy/policy.h"
#include "../runtime/config/json.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

static const char *audit_proto(enum egress_proto p)
{
    switch (p) {
    case EGRESS_PROTO_HTTP: return "http";
    case EGRESS_PROTO_CONNECT: return "connect";
    case EGRESS_PROTO_SOCKS: return "socks5";
    }
    return "?";
}

/* Names and reasons can carry the client's bytes (a SOCKS5 name, an SNI,
 * a refused authority): printable ASCII only in the log, so every line is
 * valid UTF-8 JSON a strict reader takes, not one it drops or stops at. */
static const char *audit_text(char *out, size_t cap, const char *s)
{
    size_t i = 0;
    for (; s[i] != '\0' && i + 1 < cap; i++) out[i] = (unsigned char)s[i] >= 0x20 && (unsigned char)s[i] < 0x7f ? s[i] : '?';
    out[i] = '\0';
    return out;
}

struct brig_jw *egress_audit_open(const char *id, const struct brig_policy *p)
{
    char when[BRIG_TIME_LEN];
    brig_time_now_rfc3339(when, sizeof(when));
    struct brig_jw *w = jw_new(false);
    jw_obj_open(w);
    jw_kstr(w, "time", when);
    jw_kstr(w, "op", "egress");
    jw_kstr(w, "id", id);
    jw_kstr(w, "policy", p->name);
    return w;
}

void egress_audit(const struct egress_conn *c, const char *decision)
{
    char name[sizeof(c->name)], why[sizeof(c->why)];
    const struct brig_policy *p = c->ctx->policy;
    autojw struct brig_jw *w = egress_audit_open(c->ctx->id, p);
    jw_kstr(w, "proto", audit_proto(c->proto));
    if (c->name[0]) jw_kstr(w, "name", audit_text(name, sizeof(name), c->name));
    if (c->addr[0]) jw_kstr(w, "address", c->addr);
    if (c->port) jw_ku64(w, "port", c->port);
    if (c->cred != NULL) jw_kstr(w, "credential", c->cred->header);     /* its name: never the value */
    jw_kstr(w, "decision", decision);
    if (c->why[0]) jw_kstr(w, "reason", audit_text(why, sizeof(why), c->why));
    jw_ku64(w, "bytes_out", c->up);
    jw_ku64(w, "bytes_in", c->down);
    jw_ku64(w, "duration_ms", egress_now_ms() - c->started_ms);
    jw_ki64(w, "pid", (int64_t)getpid());
    jw_obj_close(w);
    const char *line = jw_text(w, NULL);
    autoerr struct brig_error *err = NULL;
    if (line != NULL && c->ctx->audit_fd >= 0) egress_auditor_send(c->ctx->audit_fd, decision, line);
    else if (line != NULL && policy_audit_write(p, line, &err) < 0) brig_warn("egress %s: audit: %s", c->ctx->id, err->msg);
}
