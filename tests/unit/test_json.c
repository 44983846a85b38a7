/* runtime/config/json.c: parsing limits, typed getters and their messages,
 * and the writer. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "config/json.h"
#include "config/spec.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "../../policy/policy_embedded.h"

static brig_json parse_ok(const char *text)
{
    brig_json v = NULL;
    autoerr struct brig_error *err = NULL;
    int r = json_parse(text, strlen(text), &v, &err);
    cr_assert_eq(r, 0, "parse of %s failed: %s", text, err ? err->msg : "?");
    cr_assert_not_null(v);
    return v;
}

/* Parse {"x": <value>} and return the message of reading x with fn. */
#define READ_FAILS(value, fn, type, expected_msg)                                 \
    do {                                                                          \
        autojson brig_json doc_ = parse_ok("{\"x\": " value "}");                 \
        autoerr struct brig_error *e_ = NULL;                                     \
        type out_;                                                                \
        cr_assert_eq(fn(json_get(doc_, "x"), "a.x", &out_, &e_), -1,              \
                     "%s accepted %s", #fn, value);                               \
        cr_assert_str_eq(e_->msg, expected_msg);                                  \
    } while (0)

Test(json, parses_nested_document)
{
    autojson brig_json v = parse_ok("{\"a\": {\"b\": [1, \"two\", true, null]}, \"c\": \"d\"}");
    cr_assert(json_is_object(v));
    brig_json a = json_get(v, "a");
    cr_assert(json_is_object(a));
    brig_json b = json_get(a, "b");
    cr_assert(json_is_array(b));
    cr_assert_eq(json_array_len(b), 4);
    cr_assert(json_is_string(json_array_at(b, 1)));
    cr_assert(json_is_null(json_array_at(b, 3)));
    cr_assert_null(json_array_at(b, 4));
    cr_assert_null(json_get(v, "missing"));
    cr_assert_null(json_get(b, "a"), "json_get on an array must return NULL");
    cr_assert_eq(json_object_len(v), 2);
    cr_assert_str_eq(json_object_key(v, 1), "c");
    cr_assert(json_is_string(json_object_value(v, 1)));
    cr_assert_null(json_object_key(v, 2));
}

Test(json, invalid_json_carries_yajl_message)
{
    brig_json v = NULL;
    autoerr struct brig_error *err = NULL;
    const char *t = "{]";
    cr_assert_eq(json_parse(t, strlen(t), &v, &err), -1);
    cr_assert_null(v);
    cr_assert(strncmp(err->msg, "invalid JSON: ", 14) == 0, "msg: %s", err->msg);
    cr_assert(strlen(err->msg) > 14, "yajl's message is missing: %s", err->msg);
    cr_assert_null(strchr(err->msg, '\n'), "message must be one line: %s", err->msg);
}

/* The text may be a file nobody meant to show (config.json made a link to
 * /etc/shadow): the message says where, never what. */
Test(json, syntax_error_names_offset_not_text)
{
    struct { const char *text; const char *where; } cases[] = {
        { "{\"a\": 1,\n \"b\": s3cr3t-value }", "at line 2, column 8 (byte offset 16)" },
        { "root:s3cr3t-value:19000:0:99999:7:::", "at line 1, column 2 (byte offset 1)" },
        { "{\"a\": [\"s3cr3t-value\"", "premature EOF at line 1, column 22 (byte offset 21)" },
        { "/* s3cr3t-value */ {\"a\" s3cr3t-value}", "at line 1, column 26 (byte offset 25)" },
    };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(cases); i++) {
        brig_json v = NULL;
        autoerr struct brig_error *err = NULL;
        const char *t = cases[i].text;
        cr_assert_eq(json_parse(t, strlen(t), &v, &err), -1, "accepted %s", t);
        cr_assert_null(strstr(err->msg, "s3cr3t"), "the text is quoted: %s", err->msg);
        cr_assert_not_null(strstr(err->msg, cases[i].where), "msg: %s", err->msg);
    }
}

Test(json, rejects_truncated_and_trailing)
{
    const char *bad[] = { "", "{", "{\"a\": 1", "{\"a\": 1} x", "[1,]", "{\"a\" 1}" };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(bad); i++) {
        brig_json v = NULL;
        autoerr struct brig_error *err = NULL;
        cr_assert_eq(json_parse(bad[i], strlen(bad[i]), &v, &err), -1, "accepted '%s'", bad[i]);
        cr_assert(strstr(err->msg, "invalid JSON") != NULL, "msg: %s", err->msg);
    }
}

Test(json, rejects_nul_byte)
{
    /* yajl would stop at the NUL and never see the rest. */
    const char t[] = "{\"a\": 1}\0{\"b\": [";
    brig_json v = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(json_parse(t, sizeof(t) - 1, &v, &err), -1);
    cr_assert(strstr(err->msg, "NUL byte at offset 8") != NULL, "msg: %s", err->msg);
}

Test(json, rejects_escaped_nul)
{
    /* yajl would hand out "/a" for "/a\u0000/b". An escaped backslash
     * followed by "u0000" is plain text and stays allowed. */
    const char *t = "{\"p\": \"/a\\u0000/b\"}";
    brig_json v = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(json_parse(t, strlen(t), &v, &err), -1);
    cr_assert_str_eq(err->msg, "invalid JSON: \\u0000 in a string at offset 9");
    autoerr struct brig_error *err2 = NULL;
    const char *k = "{\"a\\u0000b\": 1}";
    cr_assert_eq(json_parse(k, strlen(k), &v, &err2), -1, "keys too");
    autojson brig_json ok = parse_ok("{\"p\": \"\\\\u0000\"}");
    const char *s = NULL;
    cr_assert_eq(json_as_string(json_get(ok, "p"), "p", &s, NULL), 0);
    cr_assert_str_eq(s, "\\u0000");
}

Test(json, nesting_limit)
{
    char deep[2 * 300 + 1], ok[2 * 200 + 1];
    memset(deep, '[', 300);
    memset(deep + 300, ']', 300);
    deep[600] = '\0';
    memset(ok, '[', 200);
    memset(ok + 200, ']', 200);
    ok[400] = '\0';
    brig_json v = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(json_parse(deep, strlen(deep), &v, &err), -1);
    cr_assert(strstr(err->msg, "nested deeper than") != NULL, "msg: %s", err->msg);
    autojson brig_json v2 = parse_ok(ok);
    cr_assert(json_is_array(v2));
    /* Brackets inside strings do not count. */
    char str[1200];
    snprintf(str, sizeof(str), "[\"%.*s\"]", 1000,
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[");
    autojson brig_json v3 = parse_ok(str);
    cr_assert(json_is_array(v3));
}

Test(json, rejects_duplicate_keys)
{
    const char *t = "{\"a\": {\"k\": 1, \"j\": 2, \"k\": 3}}";
    brig_json v = NULL;
    autoerr struct brig_error *err = NULL;
    cr_assert_eq(json_parse(t, strlen(t), &v, &err), -1);
    cr_assert_str_eq(err->msg, "invalid JSON: duplicate key \"k\"");
}

Test(json, u64_full_range_from_text)
{
    autojson brig_json v = parse_ok("{\"max\": 18446744073709551615, \"big\": 9223372036854775808,"
                                    " \"zero\": 0}");
    uint64_t u = 0;
    cr_assert_eq(json_as_u64(json_get(v, "max"), "max", &u, NULL), 0);
    cr_assert_eq(u, UINT64_MAX);
    cr_assert_eq(json_get_u64(v, "", "big", true, &u, NULL), 0);
    cr_assert_eq(u, UINT64_C(9223372036854775808));
    cr_assert_eq(json_get_u64(v, "", "zero", true, &u, NULL), 0);
    cr_assert_eq(u, 0);
}

Test(json, u64_round_trips_through_writer)
{
    autojw struct brig_jw *w = jw_new(false);
    jw_obj_open(w);
    jw_ku64(w, "v", UINT64_MAX);
    jw_obj_close(w);
    size_t len = 0;
    const char *t = jw_text(w, &len);
    cr_assert_str_eq(t, "{\"v\":18446744073709551615}");
    cr_assert_eq(len, strlen(t));
    autojson brig_json v = parse_ok(t);
    uint64_t u = 0;
    cr_assert_eq(json_get_u64(v, "", "v", true, &u, NULL), 0);
    cr_assert_eq(u, UINT64_MAX);
}

Test(json, u64_rejects_negative_fraction_overflow)
{
    READ_FAILS("-1", json_as_u64, uint64_t, "a.x: expected an unsigned 64-bit integer, got -1");
    READ_FAILS("1.5", json_as_u64, uint64_t, "a.x: expected an unsigned 64-bit integer, got 1.5");
    READ_FAILS("1e3", json_as_u64, uint64_t, "a.x: expected an unsigned 64-bit integer, got 1e3");
    READ_FAILS("18446744073709551616", json_as_u64, uint64_t,
               "a.x: expected an unsigned 64-bit integer, got 18446744073709551616");
    READ_FAILS("\"5\"", json_as_u64, uint64_t,
               "a.x: expected an unsigned 64-bit integer, got \"5\"");
    READ_FAILS("true", json_as_u64, uint64_t, "a.x: expected an unsigned 64-bit integer, got true");
}

Test(json, i64_limits)
{
    autojson brig_json v = parse_ok("{\"min\": -9223372036854775808, \"max\": 9223372036854775807}");
    int64_t i = 0;
    cr_assert_eq(json_get_i64(v, "", "min", true, &i, NULL), 0);
    cr_assert_eq(i, INT64_MIN);
    cr_assert_eq(json_get_i64(v, "", "max", true, &i, NULL), 0);
    cr_assert_eq(i, INT64_MAX);
    READ_FAILS("9223372036854775808", json_as_i64, int64_t,
               "a.x: expected a signed 64-bit integer, got 9223372036854775808");
    READ_FAILS("-9223372036854775809", json_as_i64, int64_t,
               "a.x: expected a signed 64-bit integer, got -9223372036854775809");
    READ_FAILS("-0.5", json_as_i64, int64_t, "a.x: expected a signed 64-bit integer, got -0.5");
}

Test(json, u32_and_i32_ranges)
{
    autojson brig_json v = parse_ok("{\"u\": 4294967295, \"i\": -2147483648}");
    uint32_t u = 0;
    int32_t i = 0;
    cr_assert_eq(json_as_u32(json_get(v, "u"), "u", &u, NULL), 0);
    cr_assert_eq(u, UINT32_MAX);
    cr_assert_eq(json_as_i32(json_get(v, "i"), "i", &i, NULL), 0);
    cr_assert_eq(i, INT32_MIN);
    READ_FAILS("4294967296", json_as_u32, uint32_t,
               "a.x: expected an unsigned 32-bit integer, got 4294967296");
    READ_FAILS("\"0\"", json_as_u32, uint32_t, "a.x: expected an unsigned 32-bit integer, got \"0\"");
    READ_FAILS("-1", json_as_u32, uint32_t, "a.x: expected an unsigned 32-bit integer, got -1");
    READ_FAILS("2147483648", json_as_i32, int32_t,
               "a.x: expected a signed 32-bit integer, got 2147483648");
}

Test(json, wrong_types_named)
{
    READ_FAILS("1", json_as_bool, bool, "a.x: expected a boolean, got 1");
    READ_FAILS("{}", json_as_string, const char *, "a.x: expected a string, got an object");
    READ_FAILS("[]", json_as_string, const char *, "a.x: expected a string, got an array");
    READ_FAILS("null", json_as_string, const char *, "a.x: expected a string, got null");
    autojson brig_json v = parse_ok("{\"s\": \"yes\"}");
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(json_as_object(json_get(v, "s"), "p.s", &e), -1);
    cr_assert_str_eq(e->msg, "p.s: expected an object, got \"yes\"");
}

Test(json, long_strings_are_cut_in_messages)
{
    char doc[600];
    char longs[500];
    memset(longs, 'z', sizeof(longs) - 1);
    longs[sizeof(longs) - 1] = '\0';
    snprintf(doc, sizeof(doc), "{\"x\": \"%s\"}", longs);
    autojson brig_json v = parse_ok(doc);
    autoerr struct brig_error *e = NULL;
    uint64_t u;
    cr_assert_eq(json_as_u64(json_get(v, "x"), "x", &u, &e), -1);
    cr_assert(strlen(e->msg) < 120, "message not cut: %s", e->msg);
    cr_assert(strstr(e->msg, "...") != NULL, "msg: %s", e->msg);
}

Test(json, strv_and_kv)
{
    autojson brig_json v = parse_ok("{\"a\": [\"x\", \"y\"], \"b\": [\"x\", 3],"
                                    " \"m\": {\"k\": \"v\", \"l\": \"w\"}, \"n\": {\"k\": 1}}");
    autostrv char **sv = NULL;
    size_t n = 0;
    cr_assert_eq(json_as_strv(json_get(v, "a"), "p.a", &sv, &n, NULL), 0);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(sv[1], "y");
    cr_assert_null(sv[2]);

    autoerr struct brig_error *e = NULL;
    char **bad = NULL;
    cr_assert_eq(json_as_strv(json_get(v, "b"), "p.b", &bad, &n, &e), -1);
    cr_assert_null(bad);
    cr_assert_str_eq(e->msg, "p.b[1]: expected a string, got 3");

    struct brig_kv *kv = NULL;
    size_t nkv = 0;
    cr_assert_eq(json_as_kv(json_get(v, "m"), "p.m", &kv, &nkv, NULL), 0);
    cr_assert_eq(nkv, 2);
    cr_assert_str_eq(kv[0].key, "k");
    cr_assert_str_eq(kv[1].value, "w");
    for (size_t i = 0; i < nkv; i++) {
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);

    autoerr struct brig_error *e2 = NULL;
    cr_assert_eq(json_as_kv(json_get(v, "n"), "p.n", &kv, &nkv, &e2), -1);
    cr_assert_str_eq(e2->msg, "p.n.k: expected a string, got 1");
}

Test(json, member_reads_absent_null_required)
{
    autojson brig_json v = parse_ok("{\"s\": \"x\", \"n\": null, \"b\": false}");
    autofree char *s = NULL;
    cr_assert_eq(json_get_string(v, "top", "s", true, &s, NULL), 0);
    cr_assert_str_eq(s, "x");
    char *s2 = NULL;
    cr_assert_eq(json_get_string(v, "top", "missing", false, &s2, NULL), 1);
    cr_assert_eq(json_get_string(v, "top", "n", false, &s2, NULL), 1, "null reads as absent");
    cr_assert_null(s2);
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(json_get_string(v, "top", "missing", true, &s2, &e), -1);
    cr_assert_str_eq(e->msg, "top.missing: required");
    autoerr struct brig_error *e2 = NULL;
    cr_assert_eq(json_get_u32(v, "", "s", true, &(uint32_t){ 0 }, &e2), -1);
    cr_assert_str_eq(e2->msg, "s: expected an unsigned 32-bit integer, got \"x\"");
    bool b = true;
    cr_assert_eq(json_get_bool(v, "", "b", true, &b, NULL), 0);
    cr_assert(!b);
}

Test(json, writer_document_reparses)
{
    autojw struct brig_jw *w = jw_new(true);
    jw_obj_open(w);
    jw_kstr(w, "s", "quote\" backslash\\ nl\n tab\t ctl\x01 utf8 \xc3\xa9");
    jw_ki64(w, "neg", INT64_MIN);
    jw_kbool(w, "t", true);
    jw_key(w, "nul");
    jw_str(w, NULL);
    jw_key(w, "arr");
    jw_arr_open(w);
    jw_u64(w, 1);
    jw_null(w);
    jw_obj_open(w);
    jw_obj_close(w);
    jw_arr_close(w);
    jw_obj_close(w);
    size_t len = 0;
    const char *t = jw_text(w, &len);
    cr_assert_not_null(t);
    cr_assert_eq(t[len], '\0');
    autojson brig_json v = parse_ok(t);
    const char *s = NULL;
    cr_assert_eq(json_as_string(json_get(v, "s"), "s", &s, NULL), 0);
    cr_assert_str_eq(s, "quote\" backslash\\ nl\n tab\t ctl\x01 utf8 \xc3\xa9");
    int64_t i = 0;
    cr_assert_eq(json_get_i64(v, "", "neg", true, &i, NULL), 0);
    cr_assert_eq(i, INT64_MIN);
    cr_assert(json_is_null(json_get(v, "nul")));
    cr_assert_eq(json_array_len(json_get(v, "arr")), 3);
}

Test(json, writer_empty_and_misuse)
{
    autojw struct brig_jw *w = jw_new(false);
    size_t len = 99;
    const char *t = jw_text(w, &len);
    cr_assert_not_null(t);
    cr_assert_eq(len, 0);
    cr_assert_str_eq(t, "");

    autojw struct brig_jw *w2 = jw_new(false);
    jw_obj_open(w2);
    jw_obj_close(w2);
    jw_obj_close(w2);   /* one close too many: not JSON any more */
    cr_assert_null(jw_text(w2, &len));
}

/* json_parse builds its own tree from yajl's callbacks: it must be the
 * tree yajl_tree_parse makes of the same text, value for value (a number
 * as its text, all brig reads of it). */
static void same_tree(yajl_val a, yajl_val b, const char *where)
{
    cr_assert_not_null(a, "%s: ours missing", where);
    cr_assert_eq(a->type, b->type, "%s: type %d, yajl %d", where, a->type, b->type);
    switch (b->type) {
    case yajl_t_string: cr_assert_str_eq(a->u.string, b->u.string, "%s", where); break;
    case yajl_t_number:
        cr_assert_str_eq(a->u.number.r, b->u.number.r, "%s", where);
        break;
    case yajl_t_object:
        cr_assert_eq(a->u.object.len, b->u.object.len, "%s: members", where);
        for (size_t i = 0; i < b->u.object.len; i++) {
            cr_assert_str_eq(a->u.object.keys[i], b->u.object.keys[i], "%s: key %zu", where, i);
            same_tree(a->u.object.values[i], b->u.object.values[i], b->u.object.keys[i]);
        }
        break;
    case yajl_t_array:
        cr_assert_eq(a->u.array.len, b->u.array.len, "%s: elements", where);
        for (size_t i = 0; i < b->u.array.len; i++) same_tree(a->u.array.values[i], b->u.array.values[i], where);
        break;
    default: break;
    }
}

static void same_as_yajl(const char *text)
{
    char ebuf[128];
    yajl_val want = yajl_tree_parse(text, ebuf, sizeof(ebuf));
    cr_assert_not_null(want, "yajl refuses %.60s", text);
    autojson brig_json got = parse_ok(text);
    same_tree(got, want, "(root)");
    yajl_tree_free(want);
}

Test(json, tree_is_yajl_tree)
{
    const char *docs[] = {
        "{}", "[]", "\"top\"", "7", "-0", "null", "true", "[[], {}, [[]], {\"a\": {}}]",
        "{\"a\": 1, \"b\": [1.5, -2e3, 1E400, 12345678901234567890, -9223372036854775808, 0.0]}",
        "/* c */ {\"k\": \"\\u00e9\\n\\\"\\ud83d\\ude00\", // line\n \"\": \"\"}",
        "[\"x\", 1, true, false, null, {\"y\": [2, {\"z\": \"w\"}]}]",
    };
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) same_as_yajl(docs[i]);
    same_as_yajl(policy_embedded_seccomp);
    for (size_t i = 0; i < policy_embedded_count; i++) {
        /* the profiles are YAML or JSON: only the JSON ones compare */
        const char *t = policy_embedded_profiles[i].text;
        char ebuf[16];
        yajl_val v = yajl_tree_parse(t, ebuf, sizeof(ebuf));
        if (v == NULL) continue;
        yajl_tree_free(v);
        same_as_yajl(t);
    }
    /* a big array: the members' stack grows */
    autojw struct brig_jw *w = jw_new(false);
    jw_arr_open(w);
    for (int i = 0; i < 5000; i++) {
        jw_obj_open(w);
        jw_ki64(w, "i", i);
        jw_kstr(w, "s", "a string long enough to need more than one arena block in the end");
        jw_obj_close(w);
    }
    jw_arr_close(w);
    size_t len;
    same_as_yajl(jw_text(w, &len));
    /* a string bigger than a block gets one of its own */
    autofree char *big = malloc(100010);
    cr_assert_not_null(big);
    memset(big, 'x', 100010);
    memcpy(big, "[\"", 2);
    memcpy(big + 100004, "\", 1]", 5);
    big[100009] = '\0';
    same_as_yajl(big);
}

Test(json, tree_refuses_what_yajl_refuses)
{
    const char *bad[] = { "", "   ", "[1,]", "{\"a\"}", "{\"a\": 1,}", "1 2", "[", "{\"a\": [1, 2}",
                          "/* open", "[\"\xff\"]", "tru", "[01]", "{1: 2}", "[] x" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char ebuf[128];
        yajl_val y = yajl_tree_parse(bad[i], ebuf, sizeof(ebuf));
        cr_assert_null(y, "yajl takes %s", bad[i]);
        brig_json v = NULL;
        autoerr struct brig_error *err = NULL;
        cr_assert_eq(json_parse(bad[i], strlen(bad[i]), &v, &err), -1, "json_parse takes %s", bad[i]);
        cr_assert_null(v);
        cr_assert(strncmp(err->msg, "invalid JSON: ", 14) == 0, "%s: %s", bad[i], err->msg);
    }
}

/* json_path_join copies what snprintf("%s.%s") printed, cut where it cut:
 * the path of every member a parse reads, printed only in its errors. */
Test(json, path_join_as_snprintf)
{
    const char *paths[] = { NULL, "", "a", "linux.seccomp.syscalls[12]", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" };
    const char *keys[] = { "", "k", "names", "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy" };
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]); j++) {
            for (size_t len = 1; len < 80; len++) {
                char want[80], got[80];
                memset(got, '#', sizeof(got));
                if (paths[i] == NULL || paths[i][0] == '\0') snprintf(want, len, "%s", keys[j]);
                else snprintf(want, len, "%s.%s", paths[i], keys[j]);
                json_path_join(got, len, paths[i], keys[j]);
                cr_assert_str_eq(got, want, "path %s key %s len %zu", paths[i] ? paths[i] : "(null)", keys[j], len);
                for (size_t k = strlen(got) + 1; k < sizeof(got); k++)
                    cr_assert_eq(got[k], '#', "nothing written past the end (len %zu, byte %zu)", len, k);
            }
        }
    }
}
