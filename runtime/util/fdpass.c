#include "fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

union fdpass_cmsg {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
};

int brig_send_with_fd(int sock, const void *buf, size_t len, int fd, struct brig_error **err)
{
    struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
    union fdpass_cmsg u;
    memset(&u, 0, sizeof(u));
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
    if (fd >= 0) {
        msg.msg_control = u.buf;
        msg.msg_controllen = sizeof(u.buf);
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd, sizeof(int));
    }
    ssize_t w;
    do {
        w = sendmsg(sock, &msg, MSG_NOSIGNAL);
    } while (w < 0 && errno == EINTR);
    if (w < 0) return brig_fail(err, errno, "send");
    return 0;
}

ssize_t brig_recv_with_fd(int sock, void *buf, size_t len, int *fd, const char *what,
                          struct brig_error **err)
{
    struct iovec iov = { .iov_base = buf, .iov_len = len };
    union fdpass_cmsg u;
    memset(&u, 0, sizeof(u));
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                          .msg_controllen = sizeof(u.buf) };
    *fd = -1;
    ssize_t r;
    do {
        r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    } while (r < 0 && errno == EINTR);
    if (r < 0) return brig_fail(err, errno, "%s", what);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (c != NULL && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len == CMSG_LEN(sizeof(int)))
        memcpy(fd, CMSG_DATA(c), sizeof(int));
    return r;
}
