/* The proxy's listening sockets live in the container's network namespace
 * (127.0.0.1 there is the container's loopback) while the proxy serves
 * them from the host's. A socket keeps the namespace it was created in,
 * so a short-lived thread joins the container's namespace (setns affects
 * only the calling thread), makes the sockets and ends: the proxy's own
 * threads never leave the host's namespace, so no outgoing connection can
 * be made from the wrong one. */
#include "egress_internal.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../runtime/util/fdpass.h"

struct listen_job {
    int netns_fd;
    const uint16_t *ports;
    int *fds;
    size_t n;
    char why[256];
};

static void *listen_thread(void *arg)
{
    struct listen_job *j = arg;
    if (setns(j->netns_fd, CLONE_NEWNET) < 0) {
        snprintf(j->why, sizeof(j->why), "setns into the container's network namespace: %s", strerror(errno));
        return NULL;
    }
    for (size_t i = 0; i < j->n; i++) {
        /* Non-blocking: accept after poll, and the end drains the backlog. */
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(j->ports[i]),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int one = 1;
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 512) < 0) {
            snprintf(j->why, sizeof(j->why), "listen on 127.0.0.1:%u in the container: %s", j->ports[i],
                     strerror(errno));
            if (fd >= 0) close(fd);
            return NULL;
        }
        j->fds[i] = fd;
    }
    return NULL;
}

int egress_listen_in(int netns_fd, const uint16_t *ports, int *fds, size_t n, char *why, size_t len)
{
    struct listen_job j = { .netns_fd = netns_fd, .ports = ports, .fds = fds, .n = n };
    for (size_t i = 0; i < n; i++) fds[i] = -1;
    pthread_t t;
    int rc = pthread_create(&t, NULL, listen_thread, &j);
    if (rc != 0) {
        snprintf(why, len, "pthread_create: %s", strerror(rc));
        return -1;
    }
    pthread_join(t, NULL);
    if (j.why[0] == '\0') return 0;
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0) close(fds[i]);
    snprintf(why, len, "%s", j.why);
    return -1;
}

/* Rootless: setns into a network namespace needs CAP_SYS_ADMIN in our own
 * user namespace too, which an unprivileged proxy lacks; in the
 * container's user namespace (ours: its owner is our uid) it has it. A
 * process enters a user namespace only single-threaded, so a forked child
 * (never a thread) enters it, then the network namespace, makes the
 * sockets and passes them back; the proxy itself stays where it is. */
int egress_listen_in_userns(int userns_fd, int netns_fd, const uint16_t *ports, int *fds, size_t n, char *why,
                            size_t len)
{
    for (size_t i = 0; i < n; i++) fds[i] = -1;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        snprintf(why, len, "socketpair: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, len, "fork: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
        struct listen_job j = { .netns_fd = netns_fd, .ports = ports, .fds = fds, .n = n };
        if (setns(userns_fd, CLONE_NEWUSER) < 0)
            snprintf(j.why, sizeof(j.why), "setns into the container's user namespace: %s", strerror(errno));
        else
            listen_thread(&j);
        if (j.why[0] != '\0') {
            (void)!send(sv[1], j.why, strlen(j.why), MSG_NOSIGNAL);
            _exit(1);
        }
        for (size_t i = 0; i < n; i++)
            if (brig_send_with_fd(sv[1], "L", 1, fds[i], NULL) < 0) _exit(1);
        _exit(0);
    }
    close(sv[1]);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char msg[256];
        ssize_t got = brig_recv_with_fd(sv[0], msg, sizeof(msg) - 1, &fds[i], "egress listen", NULL);
        if (got == 1 && msg[0] == 'L' && fds[i] >= 0) continue;
        if (got > 0) msg[got] = '\0';
        snprintf(why, len, "%s", got > 0 ? msg : "the listening child ended");
        rc = -1;
    }
    close(sv[0]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    if (rc < 0)
        for (size_t i = 0; i < n; i++)
            if (fds[i] >= 0) close(fds[i]), fds[i] = -1;
    return rc;
}
