/* Bounded capture of one output stream: the first half of the limit as it
 * came, the last half in a ring, and the total count. A command printing
 * gigabytes costs brig the limit in memory, never more. */
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "../runtime/util/strutil.h"

/* The buffers come with the first byte: a command that prints nothing (most
 * do little) costs no mapping of the limit's size per stream. */
void sandbox_stream_init(struct sandbox_stream *s, uint64_t limit)
{
    *s = (struct sandbox_stream){0};
    s->head_cap = (size_t)(limit / 2);
    s->tail_cap = (size_t)(limit - limit / 2);
}

void sandbox_stream_free(struct sandbox_stream *s)
{
    free(s->head);
    free(s->tail);
    s->head = s->tail = NULL;
}

void sandbox_stream_add(struct sandbox_stream *s, const char *buf, size_t n)
{
    if (s->head == NULL) {
        s->head = brig_calloc(1, s->head_cap + 1);
        s->tail = brig_calloc(1, s->tail_cap + 1);
    }
    s->bytes += n;
    size_t h = s->head_cap - s->head_len;
    if (h > n) h = n;
    memcpy(s->head + s->head_len, buf, h);
    s->head_len += h;
    buf += h;
    n -= h;
    if (n == 0 || s->tail_cap == 0) return;
    if (n >= s->tail_cap) {
        /* Only the last tail_cap bytes can survive. */
        memcpy(s->tail, buf + n - s->tail_cap, s->tail_cap);
        s->tail_pos = 0;
        s->tail_len = s->tail_cap;
        return;
    }
    size_t first = s->tail_cap - s->tail_pos;
    if (first > n) first = n;
    memcpy(s->tail + s->tail_pos, buf, first);
    memcpy(s->tail, buf + first, n - first);
    s->tail_pos = (s->tail_pos + n) % s->tail_cap;
    s->tail_len = s->tail_len + n > s->tail_cap ? s->tail_cap : s->tail_len + n;
}

/* The ring in order, as one buffer. */
static char *stream_tail_linear(const struct sandbox_stream *s)
{
    char *t = brig_calloc(1, s->tail_len + 1);
    if (s->tail_len < s->tail_cap) {
        memcpy(t, s->tail, s->tail_len);
    } else {
        size_t a = s->tail_cap - s->tail_pos;
        memcpy(t, s->tail + s->tail_pos, a);
        memcpy(t + a, s->tail, s->tail_pos);
    }
    return t;
}

/* Length of the valid UTF-8 sequence at p (n bytes left), 0 if invalid
 * or cut by the end of the buffer (*cut then says so). */
static size_t utf8_seq(const unsigned char *p, size_t n, bool *cut)
{
    *cut = false;
    size_t len;
    unsigned min;
    unsigned c = p[0];
    if (c < 0x80) return 1;
    if ((c & 0xe0) == 0xc0) { len = 2; min = 0x80; c &= 0x1f; }
    else if ((c & 0xf0) == 0xe0) { len = 3; min = 0x800; c &= 0x0f; }
    else if ((c & 0xf8) == 0xf0) { len = 4; min = 0x10000; c &= 0x07; }
    else return 0;
    for (size_t i = 1; i < len; i++) {
        if (i >= n) {
            *cut = true;
            return 0;
        }
        if ((p[i] & 0xc0) != 0x80) return 0;
        c = (c << 6) | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    return len;
}

/* Valid UTF-8 copy of buf (*len bytes, NUL-terminated; a NUL in the stream
 * stays one): a character cut at the end (cut_end) or at the start (skip
 * leading continuation bytes, cut_start) is dropped rather than marked;
 * other invalid bytes become U+FFFD and mark the stream binary, as does a
 * NUL. *used (may be NULL): the bytes of buf taken, short of a character
 * cut at the end. */
static char *utf8_clean(const char *buf, size_t n, bool cut_start, bool cut_end, bool *binary, size_t *len,
                        size_t *used)
{
    const unsigned char *p = (const unsigned char *)buf;
    size_t i = 0;
    if (cut_start)
        while (i < n && i < 3 && (p[i] & 0xc0) == 0x80) i++;
    char *out = brig_calloc(1, (n - i) * 3 + 1);
    size_t o = 0;
    while (i < n) {
        bool cut;
        size_t l = utf8_seq(p + i, n - i, &cut);
        if (l == 0 && cut && cut_end) break;
        if (l == 0) {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            *binary = true;
            i++;
            continue;
        }
        if (p[i] == 0) *binary = true;
        memcpy(out + o, p + i, l);
        o += l;
        i += l;
    }
    out[o] = '\0';
    *len = o;
    if (used != NULL) *used = i;
    return out;
}

char *sandbox_utf8_chunk(const char *buf, size_t n, bool hold_cut, size_t *len, size_t *used)
{
    bool binary = false;
    return utf8_clean(buf, n, false, hold_cut, &binary, len, used);
}

void sandbox_stream_previews(const struct sandbox_stream *s, struct sandbox_preview *pv)
{
    *pv = (struct sandbox_preview){0};
    if (s->head == NULL) {          /* nothing came */
        pv->head = brig_strdup("");
        pv->tail = brig_strdup("");
        return;
    }
    char *t = stream_tail_linear(s);
    pv->truncated = s->bytes > (uint64_t)s->head_len + s->tail_len;
    if (!pv->truncated) {
        /* Nothing lost: head and tail are one contiguous text. */
        size_t n = s->head_len + s->tail_len;
        char *all = brig_calloc(1, n + 1);
        memcpy(all, s->head, s->head_len);
        memcpy(all + s->head_len, t, s->tail_len);
        pv->head = utf8_clean(all, n, false, false, &pv->binary, &pv->head_len, NULL);
        pv->tail = brig_strdup("");
        free(all);
    } else {
        pv->head = utf8_clean(s->head, s->head_len, false, true, &pv->binary, &pv->head_len, NULL);
        pv->tail = utf8_clean(t, s->tail_len, true, false, &pv->binary, &pv->tail_len, NULL);
    }
    free(t);
}
