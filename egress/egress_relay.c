/* Bytes both ways between the client (in the container) and the upstream
 * server, through a pipe per direction with splice(2): the kernel moves
 * the pages, nothing is copied through the proxy's memory. Each splice
 * from a socket first takes its length from the sandbox's byte budget
 * (network.maxBytes), so the bound is exact across connections; when it
 * is spent both sides are closed. A side's EOF is passed on as a
 * half-close (shutdown SHUT_WR), so request/response protocols that
 * close their sending side still get their answer. A plain HTTP request
 * relays only its own body from the client (up_max): after it, the client
 * is not read, only its EOF is passed on. */
#include "egress_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The pipe's size (the most /proc/sys/fs/pipe-max-size allows by
 * default): a splice moves up to this much, so a bulk download costs few
 * system calls. Both sockets are non-blocking (accept4, egress_dial). */
#define RELAY_CHUNK (1u << 20)

struct relay_dir {
    int from, to;
    int pipe[2];
    size_t in_pipe;
    bool eof, shut;
    uint64_t left;          /* bytes still to read from `from` */
    bool cut, cut_seen;     /* left ran out; then: from's EOF passed on */
    uint64_t *count;
};

static bool relay_wants(const struct relay_dir *d)
{
    return !d->eof && !d->shut && d->left > 0 && d->in_pipe < RELAY_CHUNK;
}

/* Move what the source has into the pipe. false: the connection ends. */
static bool relay_fill(struct egress_conn *c, struct relay_dir *d, bool *budget)
{
    size_t room = RELAY_CHUNK - d->in_pipe;
    size_t want = egress_budget_take(c->ctx, d->left < room ? (size_t)d->left : room);
    if (want == 0) {
        *budget = true;
        return false;
    }
    ssize_t n = splice(d->from, NULL, d->pipe[1], NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    egress_budget_refund(c->ctx, n > 0 ? want - (size_t)n : want);
    if (n > 0) {
        d->in_pipe += (size_t)n;
        d->left -= (uint64_t)n;
    } else if (n == 0) d->eof = true;
    else if (errno != EAGAIN && errno != EINTR) d->eof = true;    /* reset: end this way */
    return true;
}

static bool relay_drain(struct relay_dir *d)
{
    ssize_t n = splice(d->pipe[0], NULL, d->to, NULL, d->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) {
        d->in_pipe -= (size_t)n;
        *d->count += (uint64_t)n;
        return true;
    }
    return n < 0 && (errno == EAGAIN || errno == EINTR);
}

void egress_relay(struct egress_conn *c, const char *pending, size_t n_pending, uint64_t up_max)
{
    if (n_pending > 0) {
        size_t got = egress_budget_take(c->ctx, n_pending);
        if (got < n_pending || egress_write_all(c->upstream, pending, n_pending) < 0) {
            egress_budget_refund(c->ctx, got);
            if (got < n_pending) snprintf(c->why, sizeof(c->why), "network.maxBytes spent");
            return;
        }
        c->up += n_pending;
    }
    struct relay_dir d[2] = {
        { .from = c->client, .to = c->upstream, .pipe = { -1, -1 }, .left = up_max, .count = &c->up },
        { .from = c->upstream, .to = c->client, .pipe = { -1, -1 }, .left = EGRESS_RELAY_ALL, .count = &c->down },
    };
    for (int i = 0; i < 2; i++) {
        if (pipe2(d[i].pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
            snprintf(c->why, sizeof(c->why), "pipe: %s", strerror(errno));
            goto out;
        }
        fcntl(d[i].pipe[1], F_SETPIPE_SZ, RELAY_CHUNK);
    }
    bool budget = false, broken = false;
    while (!(d[0].shut && d[1].shut) && !budget && !broken) {
        struct pollfd pf[4];
        for (int i = 0; i < 2; i++) {
            /* fd -1 when not interested: a hung-up socket would wake poll
             * with POLLHUP even for events 0. */
            pf[2 * i] = (struct pollfd){ .fd = relay_wants(&d[i]) ? d[i].from : -1,
                                         .events = POLLIN };
            if (d[i].cut && !d[i].cut_seen) pf[2 * i] = (struct pollfd){ .fd = d[i].from, .events = POLLRDHUP };
            pf[2 * i + 1] = (struct pollfd){ .fd = d[i].in_pipe > 0 ? d[i].to : -1, .events = POLLOUT };
        }
        if (poll(pf, 4, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2 && !budget && !broken; i++) {
            /* While bytes flow, keep moving them: a poll per chunk would
             * cost more than the splices (a bulk download). */
            bool readable = pf[2 * i].revents != 0;
            if (readable && d[i].cut) {
                /* The client is done (or gone): tell the server as an
                 * EOF would have, without reading what it left unread. */
                shutdown(d[i].to, SHUT_WR);
                d[i].cut_seen = true;
                readable = false;
            }
            for (int round = 0; round < 64 && !budget && !broken; round++) {
                size_t before_in = d[i].in_pipe;
                uint64_t before_out = *d[i].count;
                if (readable && relay_wants(&d[i]) && !relay_fill(c, &d[i], &budget)) break;
                if (d[i].in_pipe > 0 && !relay_drain(&d[i])) broken = true;
                if (d[i].in_pipe == before_in && *d[i].count == before_out) break;
            }
            /* The client's bytes after the judged request are not ours to
             * pass on: stop reading them, but leave the upstream's read
             * side open (a half-close reads as an abort to some servers). */
            if (d[i].left == 0 && d[i].in_pipe == 0 && !d[i].shut) d[i].shut = d[i].cut = true;
            if (d[i].eof && d[i].in_pipe == 0 && !d[i].shut) {
                shutdown(d[i].to, SHUT_WR);
                d[i].shut = true;
            }
        }
    }
    if (budget)
        snprintf(c->why, sizeof(c->why), "network.maxBytes (%llu bytes) spent: connection closed",
                 (unsigned long long)c->ctx->rules->max_bytes);
out:
    for (int i = 0; i < 2; i++) {
        if (d[i].pipe[0] >= 0) close(d[i].pipe[0]);
        if (d[i].pipe[1] >= 0) close(d[i].pipe[1]);
    }
}
