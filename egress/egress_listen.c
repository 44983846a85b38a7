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
#include <unistd.h>

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
