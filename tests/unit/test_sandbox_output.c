/* sandbox/sandbox_output.c: the bounded head + tail capture of a stream
 * and its previews (UTF-8 cuts, binary marking), and the exit status. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox.h"

static void previews(struct sandbox_stream *s, char **h, char **t, bool *trunc, bool *bin)
{
    struct sandbox_preview pv;
    sandbox_stream_previews(s, &pv);
    *h = pv.head;
    *t = pv.tail;
    *trunc = pv.truncated;
    *bin = pv.binary;
}

Test(sandbox_output, small_stream_is_whole_in_head)
{
    struct sandbox_stream s;
    sandbox_stream_init(&s, 16);
    sandbox_stream_add(&s, "hello ", 6);
    sandbox_stream_add(&s, "world", 5);
    char *h, *t;
    bool tr, bin;
    previews(&s, &h, &t, &tr, &bin);
    cr_assert_str_eq(h, "hello world");
    cr_assert_str_eq(t, "");
    cr_assert(!tr && !bin);
    cr_assert_eq(s.bytes, 11);
    free(h); free(t); sandbox_stream_free(&s);
}

Test(sandbox_output, exactly_the_limit_is_not_truncated)
{
    struct sandbox_stream s;
    sandbox_stream_init(&s, 8);
    sandbox_stream_add(&s, "abcdefgh", 8);
    char *h, *t;
    bool tr, bin;
    previews(&s, &h, &t, &tr, &bin);
    cr_assert_str_eq(h, "abcdefgh");
    cr_assert(!tr);
    free(h); free(t); sandbox_stream_free(&s);
}

Test(sandbox_output, head_and_tail_across_many_small_writes)
{
    struct sandbox_stream s;
    sandbox_stream_init(&s, 8);
    const char *text = "0123456789abcdefghijklmnopqrstuvwxyz";
    for (size_t i = 0; i < strlen(text); i++) sandbox_stream_add(&s, text + i, 1);
    char *h, *t;
    bool tr, bin;
    previews(&s, &h, &t, &tr, &bin);
    cr_assert_str_eq(h, "0123");
    cr_assert_str_eq(t, "wxyz");
    cr_assert(tr);
    cr_assert_eq(s.bytes, 36);
    free(h); free(t); sandbox_stream_free(&s);
}

Test(sandbox_output, one_big_write_keeps_its_end)
{
    struct sandbox_stream s;
    sandbox_stream_init(&s, 6);
    sandbox_stream_add(&s, "ab", 2);
    sandbox_stream_add(&s, "cdefghijklmnop", 14);
    char *h, *t;
    bool tr, bin;
    previews(&s, &h, &t, &tr, &bin);
    cr_assert_str_eq(h, "abc");
    cr_assert_str_eq(t, "nop");
    free(h); free(t); sandbox_stream_free(&s);
}

Test(sandbox_output, utf8_never_cut_in_half_and_not_binary)
{
    struct sandbox_stream s;
    sandbox_stream_init(&s, 8);
    /* é (2 bytes) straddles the head's end and the tail's start */
    sandbox_stream_add(&s, "abc\xc3\xa9xxxxxxxxxx\xc3\xa9z", 18);
    char *h, *t;
    bool tr, bin;
    previews(&s, &h, &t, &tr, &bin);
    cr_assert_str_eq(h, "abc");
    cr_assert_str_eq(t, "x\xc3\xa9z");
    cr_assert(!bin);
    free(h); free(t); sandbox_stream_free(&s);
    sandbox_stream_init(&s, 6);
    sandbox_stream_add(&s, "xxxxx\xc3\xa9yz", 9);   /* the tail starts in the middle of é */
    previews(&s, &h, &t, &tr, &bin);
    cr_assert_str_eq(t, "yz");
    cr_assert(!bin);
    free(h); free(t); sandbox_stream_free(&s);
}

Test(sandbox_output, nul_and_invalid_bytes_mark_binary)
{
    struct sandbox_stream s;
    sandbox_stream_init(&s, 64);
    sandbox_stream_add(&s, "a\xff" "b", 3);
    char *h, *t;
    bool tr, bin;
    previews(&s, &h, &t, &tr, &bin);
    cr_assert_str_eq(h, "a\xef\xbf\xbd" "b");
    cr_assert(bin);
    free(h); free(t); sandbox_stream_free(&s);
    sandbox_stream_init(&s, 64);
    sandbox_stream_add(&s, "a\0b", 3);
    previews(&s, &h, &t, &tr, &bin);
    cr_assert(bin);
    free(h); free(t); sandbox_stream_free(&s);
    /* overlong encoding and a surrogate are invalid too */
    sandbox_stream_init(&s, 64);
    sandbox_stream_add(&s, "\xc0\xaf\xed\xa0\x80", 5);
    previews(&s, &h, &t, &tr, &bin);
    cr_assert(bin);
    free(h); free(t); sandbox_stream_free(&s);
}

Test(sandbox_result, exit_status)
{
    struct sandbox_result r = {0};
    r.has_exit_code = true;
    r.exit_code = 3;
    cr_assert_eq(sandbox_exit_status(&r), 3);
    r.signal = 9;
    cr_assert_eq(sandbox_exit_status(&r), 137);
    r.timed_out = true;
    cr_assert_eq(sandbox_exit_status(&r), 124);
    r.error = (char *)"x";
    cr_assert_eq(sandbox_exit_status(&r), 125);
    /* a command not found / not executable is a result, not brig failing */
    r.exec_status = 127;
    cr_assert_eq(sandbox_exit_status(&r), 127);
    r.exec_status = 126;
    cr_assert_eq(sandbox_exit_status(&r), 126);
}
