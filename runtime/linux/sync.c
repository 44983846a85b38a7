#include "sync.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "../util/cleanup.h"
#include "../util/strutil.h"

int sync_socketpair(int fds[2], struct brig_error **err)
{
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) < 0)
        return brig_fail(err, errno, "socketpair");
    return 0;
}

static int sync_send_raw(int fd, enum sync_type type, int errnum, const char *payload,
                         struct brig_error **err)
{
    autofree struct sync_msg *m = brig_calloc(1, sizeof(*m));
    m->type = type;
    m->errnum = errnum;
    if (payload != NULL) {
        size_t n = strnlen(payload, SYNC_MAX_PAYLOAD - 1);
        memcpy(m->payload, payload, n);
        m->payload[n] = '\0';
        m->len = (uint32_t)n + 1;
    }
    size_t size = offsetof(struct sync_msg, payload) + m->len;
    ssize_t w;
    do {
        w = send(fd, m, size, MSG_NOSIGNAL);
    } while (w < 0 && errno == EINTR);
    if (w < 0) return brig_fail(err, errno, "sync send");
    return 0;
}

int sync_send(int fd, enum sync_type type, const char *payload, struct brig_error **err)
{
    return sync_send_raw(fd, type, 0, payload, err);
}

int sync_send_error(int fd, const struct brig_error *e)
{
    return sync_send_raw(fd, SYNC_ERROR, e ? e->errnum : 0, e ? e->msg : "unknown error", NULL);
}

int sync_expect(int fd, enum sync_type expect, const char *eof_what, char **payload,
                struct brig_error **err)
{
    autofree struct sync_msg *m = brig_calloc(1, sizeof(*m));
    ssize_t r;
    do {
        r = recv(fd, m, sizeof(*m), 0);
    } while (r < 0 && errno == EINTR);
    if (r < 0) return brig_fail(err, errno, "sync receive");
    if (r == 0) return eof_what == NULL ? 1 : brig_failx(err, "%s", eof_what);
    if ((size_t)r < offsetof(struct sync_msg, payload))
        return brig_failx(err, "sync receive: short message");
    m->payload[SYNC_MAX_PAYLOAD - 1] = '\0';
    if (m->type == SYNC_ERROR) {
        int rc = brig_failx(err, "%s", m->len ? m->payload : "unknown error");
        if (err != NULL && *err != NULL) (*err)->errnum = m->errnum;
        return rc;
    }
    if (m->type != (uint32_t)expect)
        return brig_failx(err, "sync: expected message %d, got %u", expect, m->type);
    if (payload != NULL) *payload = brig_strdup(m->len ? m->payload : "");
    return 0;
}

int sync_send_fd(int fd, enum sync_type type, int send_fd, struct brig_error **err)
{
    struct sync_msg m = { .type = type };
    struct iovec iov = { .iov_base = &m, .iov_len = offsetof(struct sync_msg, payload) };
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof(u));
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                          .msg_controllen = sizeof(u.buf) };
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &send_fd, sizeof(int));
    ssize_t w;
    do {
        w = sendmsg(fd, &msg, MSG_NOSIGNAL);
    } while (w < 0 && errno == EINTR);
    if (w < 0) return brig_fail(err, errno, "sync send fd");
    return 0;
}

int sync_expect_fd(int fd, enum sync_type expect, const char *eof_what, int *out,
                   struct brig_error **err)
{
    autofree struct sync_msg *m = brig_calloc(1, sizeof(*m));
    struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof(u));
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                          .msg_controllen = sizeof(u.buf) };
    ssize_t r;
    do {
        r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    } while (r < 0 && errno == EINTR);
    if (r < 0) return brig_fail(err, errno, "sync receive");
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    int got = -1;
    if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(&got, CMSG_DATA(c), sizeof(int));
    autoclose int recv_fd = got;
    if (r == 0) return brig_failx(err, "%s", eof_what ? eof_what : "sync: peer went away");
    if ((size_t)r < offsetof(struct sync_msg, payload))
        return brig_failx(err, "sync receive: short message");
    m->payload[SYNC_MAX_PAYLOAD - 1] = '\0';
    if (m->type == SYNC_ERROR) {
        int rc = brig_failx(err, "%s", m->len ? m->payload : "unknown error");
        if (err != NULL && *err != NULL) (*err)->errnum = m->errnum;
        return rc;
    }
    if (m->type != (uint32_t)expect)
        return brig_failx(err, "sync: expected message %d, got %u", expect, m->type);
    if (recv_fd < 0) return brig_failx(err, "sync: message %d carries no fd", expect);
    *out = steal_fd(&recv_fd);
    return 0;
}

int sync_wait_exec(int fd, struct brig_error **err)
{
    /* The init never sends SYNC_START: anything but EOF is its error. */
    int rc = sync_expect(fd, SYNC_START, NULL, NULL, err);
    return rc == 1 ? 0 : -1;
}
