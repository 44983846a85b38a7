/* recvtty: the other end of --console-socket for the tests, like runc's
 * contrib/cmd/recvtty. Listens on SOCKET, accepts one connection, receives
 * one fd with SCM_RIGHTS, checks that it is a pty master sent with runc's
 * payload, writes INPUT to it (if given), then copies what the container
 * writes to stdout until the pty's other side is closed.
 *
 *   recvtty [--input TEXT] SOCKET
 *
 * Exit status: 0 relayed to the end, 2 usage, 3 socket errors, 4 no fd or
 * not a terminal. Stderr gets "payload: NAME" and "tty: yes". */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int recv_fd(int sock, char *name, size_t len)
{
    struct iovec iov = { .iov_base = name, .iov_len = len - 1 };
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof(u));
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                          .msg_controllen = sizeof(u.buf) };
    ssize_t r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    if (r < 0) return -1;
    name[r] = '\0';
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (c == NULL || c->cmsg_type != SCM_RIGHTS) return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof(fd));
    return fd;
}

int main(int argc, char **argv)
{
    const char *input = NULL;
    int i = 1;
    if (argc > 2 && strcmp(argv[1], "--input") == 0) {
        input = argv[2];
        i = 3;
    }
    if (i != argc - 1) {
        fprintf(stderr, "usage: recvtty [--input TEXT] SOCKET\n");
        return 2;
    }
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(argv[i]) >= sizeof(sa.sun_path)) return 2;
    strcpy(sa.sun_path, argv[i]);
    int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(ls, 1) < 0) {
        perror("recvtty: listen");
        return 3;
    }
    int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) {
        perror("recvtty: accept");
        return 3;
    }
    char name[4096];
    int fd = recv_fd(c, name, sizeof(name));
    if (fd < 0) {
        fprintf(stderr, "recvtty: no fd received\n");
        return 4;
    }
    fprintf(stderr, "payload: %s\ntty: %s\n", name, isatty(fd) ? "yes" : "no");
    if (!isatty(fd)) return 4;
    if (input != NULL && write(fd, input, strlen(input)) < 0) perror("recvtty: write");
    char buf[4096];
    for (;;) {
        ssize_t r = read(fd, buf, sizeof(buf));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;          /* EIO: every holder of the pty's other side is gone */
        if (write(1, buf, (size_t)r) < 0) break;
    }
    return 0;
}
