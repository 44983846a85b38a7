#include "sync.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fdpass.h"
#include "../util/strutil.h"

int sync_socketpair(int fds[2], struct brig_error **err)
{
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
        return brig_fail(err, errno, "socketpair");
    return 0;
}

/* A socket path through the directory's fd: a --root of any length fits
 * in sun_path, and no path component is looked up again. */
static int sync_addr_at(int dirfd, const char *name, struct sockaddr_un *a)
{
    *a = (struct sockaddr_un){ .sun_family = AF_UNIX };
    int n = snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/%s", dirfd, name);
    return n > 0 && (size_t)n < sizeof(a->sun_path) ? 0 : -1;
}

int sync_listen_at(int dirfd, const char *name, int *out, struct brig_error **err)
{
    struct sockaddr_un a;
    if (sync_addr_at(dirfd, name, &a) < 0) return brig_failx(err, "%s: path too long", name);
    /* Non-blocking: the init only takes a connection that is already
     * there (see child_wait_start). */
    autoclose int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return brig_fail(err, errno, "%s: socket", name);
    mode_t old = umask(0177);                   /* 0600: only root may start it */
    int r = bind(fd, (struct sockaddr *)&a, sizeof(a));
    umask(old);
    if (r < 0) return brig_fail(err, errno, "%s: bind", name);
    if (listen(fd, 1) < 0) return brig_fail(err, errno, "%s: listen", name);
    *out = steal_fd(&fd);
    return 0;
}

int sync_connect_at(int dirfd, const char *name, int *out, struct brig_error **err)
{
    struct sockaddr_un a;
    if (sync_addr_at(dirfd, name, &a) < 0) return brig_failx(err, "%s: path too long", name);
    autoclose int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return brig_fail(err, errno, "%s: socket", name);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) return brig_fail(err, errno, "%s: connect", name);
    *out = steal_fd(&fd);
    return 0;
}

/* The message on the stack, written only as far as it is sent: a calloc'd
 * 64 KB one zeroed 16 pages per message, each a copy-on-write fault in a
 * freshly cloned init (and in its parent) for a 12-byte message. */
static int sync_send_raw(int fd, enum sync_type type, int errnum, const char *payload,
                         struct brig_error **err)
{
    struct sync_msg m;
    m.type = type;
    m.errnum = errnum;
    m.len = 0;
    if (payload != NULL) {
        size_t n = strlen(payload);
        if (n > SYNC_MAX_PAYLOAD - 1) n = SYNC_MAX_PAYLOAD - 1;
        memcpy(m.payload, payload, n);
        m.payload[n] = '\0';
        m.len = (uint32_t)n + 1;
    }
    size_t size = offsetof(struct sync_msg, payload) + m.len;
    if (brig_send_with_fd(fd, &m, size, -1, err) < 0) return brig_wrap(err, "sync");
    return 0;
}

int sync_send(int fd, enum sync_type type, const char *payload, struct brig_error **err)
{
    return sync_send_raw(fd, type, 0, payload, err);
}

int sync_errnum_wire(const struct brig_error *e)
{
    return (e->errnum & 0xffff) | (e->exec_status & 0xff) << 16;
}

void sync_errnum_apply(struct brig_error *e, int32_t wire)
{
    e->errnum = wire & 0xffff;
    e->exec_status = (wire >> 16) & 0xff;
}

int sync_send_error(int fd, const struct brig_error *e)
{
    return sync_send_raw(fd, SYNC_ERROR, e ? sync_errnum_wire(e) : 0, e ? e->msg : "unknown error", NULL);
}

/* One message, checked: SYNC_ERROR becomes the peer's error, EOF becomes
 * eof_what (or 1 when eof_what is NULL), another type is a protocol error.
 * *recv_fd (optional) gets a descriptor sent along, or -1. */
static int sync_recv(int fd, enum sync_type expect, const char *eof_what, struct sync_msg *m,
                     int *recv_fd, struct brig_error **err)
{
    int got = -1;
    ssize_t r = brig_recv_with_fd(fd, m, sizeof(*m), &got, "sync receive", err);
    autoclose int passed = got;
    if (r < 0) return -1;
    if (r == 0) return eof_what == NULL ? 1 : brig_failx(err, "%s", eof_what);
    if ((size_t)r < offsetof(struct sync_msg, payload))
        return brig_failx(err, "sync receive: short message");
    /* m is not zeroed (only what arrived is touched): the payload ends
     * where the message does, whatever its len says. */
    size_t plen = (size_t)r - offsetof(struct sync_msg, payload);
    m->payload[plen < SYNC_MAX_PAYLOAD ? plen : SYNC_MAX_PAYLOAD - 1] = '\0';
    if (m->type == SYNC_ERROR) {
        int rc = brig_failx(err, "%s", m->len ? m->payload : "unknown error");
        if (err != NULL && *err != NULL) sync_errnum_apply(*err, m->errnum);
        return rc;
    }
    if (m->type != (uint32_t)expect)
        return brig_failx(err, "sync: expected message %d, got %u", expect, m->type);
    if (recv_fd != NULL) *recv_fd = steal_fd(&passed);
    return 0;
}

int sync_expect(int fd, enum sync_type expect, const char *eof_what, char **payload,
                struct brig_error **err)
{
    struct sync_msg m;              /* on the stack: see sync_send_raw */
    int rc = sync_recv(fd, expect, eof_what, &m, NULL, err);
    if (rc == 0 && payload != NULL) *payload = brig_strdup(m.len ? m.payload : "");
    return rc;
}

int sync_send_fd(int fd, enum sync_type type, int send_fd, struct brig_error **err)
{
    struct sync_msg m = { .type = type };
    if (brig_send_with_fd(fd, &m, offsetof(struct sync_msg, payload), send_fd, err) < 0)
        return brig_wrap(err, "sync: pass a descriptor");
    return 0;
}

int sync_expect_fd(int fd, enum sync_type expect, const char *eof_what, int *out,
                   struct brig_error **err)
{
    struct sync_msg m;
    int got = -1;
    int rc = sync_recv(fd, expect, eof_what ? eof_what : "sync: peer went away", &m, &got, err);
    autoclose int passed = got;
    if (rc < 0) return -1;
    if (passed < 0) return brig_failx(err, "sync: message %d carries no fd", expect);
    *out = steal_fd(&passed);
    return 0;
}

int sync_wait_exec(int fd, struct brig_error **err)
{
    /* The init never sends SYNC_START: anything but EOF is its error. */
    int rc = sync_expect(fd, SYNC_START, NULL, NULL, err);
    return rc == 1 ? 0 : -1;
}
