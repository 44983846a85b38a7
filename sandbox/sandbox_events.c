/* `brig sandbox run/exec --events` (docs/sandbox.md, "Events"): one JSON
 * object per line on brig's stdout as things happen: start, output chunks
 * of each stream, a limit firing, and last the result itself.
 *
 * The lines are queued and written from the same poll loop that drains the
 * command (sandbox_io.c): a reader that stalls never stops the clocks, and
 * a line is written whole or, at the end, finished. Output events are for
 * display and bounded: per stream, the bytes the result keeps (the output
 * limit), then one output_truncated event; the previews and counts of the
 * result stay authoritative. Chunks are what each read returned (a partial
 * line comes as it is), as valid UTF-8: a character cut by a read's end
 * waits for the next read, invalid bytes are U+FFFD. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"
#include "../runtime/config/json.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

/* At most this much of the queue per write after POLLOUT: a pipe with one
 * free page takes it without blocking. */
#define EVENTS_WRITE_MAX 4096

static const char *const events_stream_name[2] = { "stdout", "stderr" };

void sandbox_events_init(struct sandbox_events *ev, int fd)
{
    *ev = (struct sandbox_events){ .fd = fd };
}

void sandbox_events_free(struct sandbox_events *ev)
{
    free(ev->q);
    ev->q = NULL;
    ev->q_len = ev->q_off = ev->q_cap = 0;
}

static void events_queue(struct sandbox_events *ev, const char *line, size_t n)
{
    if (ev->fd < 0) return;             /* the reader is gone */
    if (ev->q_off > 0 && ev->q_off == ev->q_len) ev->q_off = ev->q_len = 0;
    if (ev->q_len + n + 1 > ev->q_cap) {
        if (ev->q_off > 0) {
            memmove(ev->q, ev->q + ev->q_off, ev->q_len - ev->q_off);
            ev->q_len -= ev->q_off;
            ev->q_off = 0;
        }
        while (ev->q_len + n + 1 > ev->q_cap) ev->q_cap = ev->q_cap ? ev->q_cap * 2 : 8192;
        ev->q = realloc(ev->q, ev->q_cap);
        if (ev->q == NULL) abort();
    }
    memcpy(ev->q + ev->q_len, line, n);
    ev->q_len += n;
    ev->q[ev->q_len++] = '\n';
}

/* The writer's text as one queued line. */
static void events_emit(struct sandbox_events *ev, struct brig_jw *w)
{
    size_t n;
    const char *t = jw_text(w, &n);
    if (t != NULL) events_queue(ev, t, n);
}

static struct brig_jw *events_open(const char *event)
{
    struct brig_jw *w = jw_new(false);
    jw_obj_open(w);
    jw_kstr(w, "event", event);
    return w;
}

static void events_close(struct sandbox_events *ev, struct brig_jw *w, uint64_t now)
{
    jw_ku64(w, "time_ms", now > ev->started ? now - ev->started : 0);
    jw_obj_close(w);
    events_emit(ev, w);
}

void sandbox_events_start(struct sandbox_events *ev, const struct sandbox_result *r, uint64_t started,
                          uint64_t limit)
{
    ev->started = started;
    ev->limit = limit;
    autojw struct brig_jw *w = events_open("start");
    jw_kstr(w, "id", r->id);
    if (r->sandbox != NULL) jw_kstr(w, "sandbox", r->sandbox);
    jw_kstr(w, "policy", r->policy);
    events_close(ev, w, started);
}

void sandbox_events_limit(struct sandbox_events *ev, const char *limit, int stream, uint64_t now)
{
    autojw struct brig_jw *w = events_open("limit");
    jw_kstr(w, "limit", limit);
    if (stream >= 0) jw_kstr(w, "stream", events_stream_name[stream]);
    events_close(ev, w, now);
}

static void events_chunk(struct sandbox_events *ev, int stream, const char *buf, size_t n, bool final,
                         uint64_t now)
{
    size_t len = 0, used = 0;
    autofree char *text = sandbox_utf8_chunk(buf, n, !final, &len, &used);
    /* A character cut by the read's end starts the next chunk. */
    ev->pend_len[stream] = n - used;
    memcpy(ev->pend[stream], buf + used, n - used);
    if (len == 0) return;
    autojw struct brig_jw *w = events_open("output");
    jw_kstr(w, "stream", events_stream_name[stream]);
    jw_kstrn(w, "data", text, len);
    events_close(ev, w, now);
}

void sandbox_events_output(struct sandbox_events *ev, int stream, const char *buf, size_t n, uint64_t now)
{
    if (ev->truncated[stream] || n == 0) return;
    uint64_t room = ev->limit > ev->shown[stream] ? ev->limit - ev->shown[stream] : 0;
    bool cut = n > room;
    size_t take = cut ? (size_t)room : n;
    ev->shown[stream] += take;
    size_t p = ev->pend_len[stream];
    /* a pending cut character (at most 3 bytes) and then this read */
    autofree char *joined = brig_calloc(1, p + take + 1);
    memcpy(joined, ev->pend[stream], p);
    memcpy(joined + p, buf, take);
    events_chunk(ev, stream, joined, p + take, cut, now);
    if (!cut) return;
    ev->truncated[stream] = true;
    autojw struct brig_jw *w = events_open("output_truncated");
    jw_kstr(w, "stream", events_stream_name[stream]);
    events_close(ev, w, now);
}

void sandbox_events_eof(struct sandbox_events *ev, int stream, uint64_t now)
{
    /* what is left of a cut character is invalid now: U+FFFD */
    if (ev->pend_len[stream] > 0 && !ev->truncated[stream]) {
        char last[4];
        size_t p = ev->pend_len[stream];
        memcpy(last, ev->pend[stream], p);
        events_chunk(ev, stream, last, p, true, now);
    }
    ev->pend_len[stream] = 0;
}

int sandbox_events_pollfd(const struct sandbox_events *ev)
{
    return ev->fd >= 0 && ev->q_off < ev->q_len ? ev->fd : -1;
}

void sandbox_events_write(struct sandbox_events *ev)
{
    size_t n = ev->q_len - ev->q_off;
    if (ev->fd < 0 || n == 0) return;
    ssize_t w = write(ev->fd, ev->q + ev->q_off, n > EVENTS_WRITE_MAX ? EVENTS_WRITE_MAX : n);
    if (w > 0) ev->q_off += (size_t)w;
    else if (w < 0 && errno != EINTR && errno != EAGAIN) ev->fd = -1;     /* gone (EPIPE) */
}

void sandbox_events_finish(struct sandbox_events *ev, const struct sandbox_result *r)
{
    uint64_t end = ev->started + r->wall_ms;
    if (ev->started == 0) {
        /* 126/127 from brig itself: the message a shell would print on stderr */
        ev->limit = r->err.head_cap;
        if (r->exec_status && r->error != NULL && r->err.bytes > 0)
            sandbox_events_output(ev, 1, r->err.head, r->err.head_len, 0);
        /* an exec killed at its limit before its command started */
        if (r->timed_out || r->idle_timed_out)
            sandbox_events_limit(ev, r->timed_out ? "wall" : "idle", -1, 0);
    }
    /* known from the cgroup once the command is gone */
    if (r->oom_killed) sandbox_events_limit(ev, "oom", -1, end);
    autofree char *result = sandbox_result_json(r);
    size_t n = strlen(result);
    while (n > 0 && result[n - 1] == '\n') result[--n] = '\0';
    autojw struct brig_jw *w = events_open("result");
    jw_key(w, "result");
    jw_raw(w, result);
    jw_obj_close(w);
    events_emit(ev, w);
    /* the rest, in order, blocking now: the command is gone */
    while (ev->fd >= 0 && ev->q_off < ev->q_len) {
        ssize_t k = write(ev->fd, ev->q + ev->q_off, ev->q_len - ev->q_off);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && errno == EAGAIN) {
            struct pollfd pf = { .fd = ev->fd, .events = POLLOUT };
            poll(&pf, 1, -1);
            continue;
        }
        if (k <= 0) break;
        ev->q_off += (size_t)k;
    }
}
