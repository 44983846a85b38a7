/* sandbox/sandbox_events.c: the --events lines as a reader gets them: one
 * JSON object per line, output chunks as valid UTF-8 (a character cut by a
 * read's end waits for the next read; invalid bytes are U+FFFD), bounded
 * per stream with one output_truncated, and the result last. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/sandbox.h"

/* The events written to a pipe, read back as one string. */
static char *drain(struct sandbox_events *ev, int rd)
{
    while (sandbox_events_pollfd(ev) >= 0) sandbox_events_write(ev);
    static char buf[65536];
    ssize_t n = read(rd, buf, sizeof(buf) - 1);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static void start(struct sandbox_events *ev, int p[2], uint64_t limit)
{
    cr_assert_eq(pipe2(p, O_NONBLOCK), 0);
    sandbox_events_init(ev, p[1]);
    struct sandbox_result r = { .id = "sb-0123456789ab", .policy = (char *)"agent" };
    sandbox_events_start(ev, &r, 1000, limit);
}

Test(sandbox_events, start_then_output_as_it_came)
{
    struct sandbox_events ev;
    int p[2];
    start(&ev, p, 1024);
    cr_assert_str_eq(drain(&ev, p[0]), "{\"event\":\"start\",\"id\":\"sb-0123456789ab\",\"policy\":\"agent\",\"time_ms\":0}\n");
    sandbox_events_output(&ev, 0, "part", 4, 1005);
    cr_assert_str_eq(drain(&ev, p[0]), "{\"event\":\"output\",\"stream\":\"stdout\",\"data\":\"part\",\"time_ms\":5}\n");
    sandbox_events_output(&ev, 1, "a\0\"\n", 4, 1007);
    cr_assert_str_eq(drain(&ev, p[0]),
                     "{\"event\":\"output\",\"stream\":\"stderr\",\"data\":\"a\\u0000\\\"\\n\",\"time_ms\":7}\n");
    sandbox_events_free(&ev);
    close(p[0]); close(p[1]);
}

Test(sandbox_events, a_character_cut_by_a_read_is_whole_in_the_next_chunk)
{
    struct sandbox_events ev;
    int p[2];
    start(&ev, p, 1024);
    drain(&ev, p[0]);
    sandbox_events_output(&ev, 0, "x\xc3", 2, 1001);            /* é cut after its first byte */
    cr_assert_str_eq(drain(&ev, p[0]), "{\"event\":\"output\",\"stream\":\"stdout\",\"data\":\"x\",\"time_ms\":1}\n");
    sandbox_events_output(&ev, 0, "\xa9y\xff", 3, 1002);
    cr_assert_str_eq(drain(&ev, p[0]),
                     "{\"event\":\"output\",\"stream\":\"stdout\",\"data\":\"\xc3\xa9y\xef\xbf\xbd\",\"time_ms\":2}\n");
    /* a cut character left at the end of the stream is invalid: U+FFFD */
    sandbox_events_output(&ev, 0, "\xe2\x82", 2, 1003);
    cr_assert_str_eq(drain(&ev, p[0]), "");
    sandbox_events_eof(&ev, 0, 1004);
    cr_assert_str_eq(drain(&ev, p[0]),
                     "{\"event\":\"output\",\"stream\":\"stdout\",\"data\":\"\xef\xbf\xbd\xef\xbf\xbd\",\"time_ms\":4}\n");
    sandbox_events_free(&ev);
    close(p[0]); close(p[1]);
}

Test(sandbox_events, bounded_per_stream_then_one_output_truncated)
{
    struct sandbox_events ev;
    int p[2];
    start(&ev, p, 6);
    drain(&ev, p[0]);
    sandbox_events_output(&ev, 0, "abcd", 4, 1001);
    sandbox_events_output(&ev, 0, "efgh", 4, 1002);
    sandbox_events_output(&ev, 0, "ijkl", 4, 1003);
    sandbox_events_output(&ev, 1, "err", 3, 1004);
    cr_assert_str_eq(drain(&ev, p[0]),
                     "{\"event\":\"output\",\"stream\":\"stdout\",\"data\":\"abcd\",\"time_ms\":1}\n"
                     "{\"event\":\"output\",\"stream\":\"stdout\",\"data\":\"ef\",\"time_ms\":2}\n"
                     "{\"event\":\"output_truncated\",\"stream\":\"stdout\",\"time_ms\":2}\n"
                     "{\"event\":\"output\",\"stream\":\"stderr\",\"data\":\"err\",\"time_ms\":4}\n");
    sandbox_events_free(&ev);
    close(p[0]); close(p[1]);
}

Test(sandbox_events, limit_and_the_result_last)
{
    struct sandbox_events ev;
    int p[2];
    start(&ev, p, 64);
    drain(&ev, p[0]);
    sandbox_events_limit(&ev, "wall", -1, 3000);
    struct sandbox_result r = { .id = "sb-0123456789ab", .policy = (char *)"agent", .timed_out = true,
                                .signal = 9, .ran = true, .wall_ms = 2000 };
    sandbox_stream_init(&r.out, 64);
    sandbox_stream_init(&r.err, 64);
    sandbox_events_finish(&ev, &r);
    const char *out = drain(&ev, p[0]);
    const char *want = "{\"event\":\"limit\",\"limit\":\"wall\",\"time_ms\":2000}\n"
                       "{\"event\":\"result\",\"result\":{\"id\":\"sb-0123456789ab\",";
    cr_assert(strncmp(out, want, strlen(want)) == 0, "%s", out);
    cr_assert(strstr(out, "\"exit_status\":124,") != NULL && strstr(out, "}}\n") != NULL, "%s", out);
    sandbox_events_free(&ev);
    close(p[0]); close(p[1]);
}
