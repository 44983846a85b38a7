/* libFuzzer target over the JSON module: whatever json_parse() accepts is
 * written back with the jw_* writer and must parse again to the same tree
 * (integers compared exactly through their text). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/json.h"
#include "util/error.h"
#include "util/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

enum kind { K_OBJ, K_ARR, K_STR, K_U64, K_I64, K_OTHER_NUM, K_TRUE, K_FALSE, K_NULL };

static enum kind kind_of(brig_json v, uint64_t *u, int64_t *i)
{
    bool b;
    if (json_is_object(v)) return K_OBJ;
    if (json_is_array(v)) return K_ARR;
    if (json_is_string(v)) return K_STR;
    if (json_is_null(v)) return K_NULL;
    if (json_as_bool(v, "", &b, NULL) == 0) return b ? K_TRUE : K_FALSE;
    if (json_as_u64(v, "", u, NULL) == 0) return K_U64;
    if (json_as_i64(v, "", i, NULL) == 0) {
        /* "-0" is no unsigned integer but is written back as 0. */
        if (*i >= 0) {
            *u = (uint64_t)*i;
            return K_U64;
        }
        return K_I64;
    }
    return K_OTHER_NUM;
}

/* Doubles are written as strings: the writer has no raw-number call. */
static void write_tree(struct brig_jw *w, brig_json v)
{
    uint64_t u;
    int64_t i;
    const char *s;
    switch (kind_of(v, &u, &i)) {
    case K_OBJ:
        jw_obj_open(w);
        for (size_t k = 0; k < json_object_len(v); k++) {
            jw_key(w, json_object_key(v, k));
            write_tree(w, json_object_value(v, k));
        }
        jw_obj_close(w);
        break;
    case K_ARR:
        jw_arr_open(w);
        for (size_t k = 0; k < json_array_len(v); k++) write_tree(w, json_array_at(v, k));
        jw_arr_close(w);
        break;
    case K_STR:
        CHECK(json_as_string(v, "", &s, NULL) == 0);
        jw_str(w, s);
        break;
    case K_U64: jw_u64(w, u); break;
    case K_I64: jw_i64(w, i); break;
    case K_OTHER_NUM: jw_str(w, "number"); break;
    case K_TRUE: jw_bool(w, true); break;
    case K_FALSE: jw_bool(w, false); break;
    case K_NULL: jw_null(w); break;
    }
}

static void same_tree(brig_json a, brig_json b)
{
    uint64_t ua = 0, ub = 0;
    int64_t ia = 0, ib = 0;
    enum kind ka = kind_of(a, &ua, &ia), kb = kind_of(b, &ub, &ib);
    if (ka == K_OTHER_NUM) {
        CHECK(kb == K_STR);
        return;
    }
    CHECK(ka == kb);
    const char *sa, *sb;
    switch (ka) {
    case K_OBJ:
        CHECK(json_object_len(a) == json_object_len(b));
        for (size_t k = 0; k < json_object_len(a); k++) {
            CHECK(strcmp(json_object_key(a, k), json_object_key(b, k)) == 0);
            same_tree(json_object_value(a, k), json_object_value(b, k));
        }
        break;
    case K_ARR:
        CHECK(json_array_len(a) == json_array_len(b));
        for (size_t k = 0; k < json_array_len(a); k++)
            same_tree(json_array_at(a, k), json_array_at(b, k));
        break;
    case K_STR:
        CHECK(json_as_string(a, "", &sa, NULL) == 0 && json_as_string(b, "", &sb, NULL) == 0);
        CHECK(strcmp(sa, sb) == 0);
        break;
    case K_U64: CHECK(ua == ub); break;
    case K_I64: CHECK(ia == ib); break;
    default: break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int quiet;
    if (!quiet) {
        brig_log_set_fd(-1);
        quiet = 1;
    }
    brig_json v = NULL;
    struct brig_error *err = NULL;
    if (json_parse((const char *)data, size, &v, &err) < 0) {
        CHECK(v == NULL && err != NULL);
        brig_error_free(err);
        return 0;
    }
    struct brig_jw *w = jw_new(size & 1);
    write_tree(w, v);
    size_t len = 0;
    const char *text = jw_text(w, &len);
    /* NULL only when yajl_gen's own depth limit (128) was passed. */
    if (text != NULL) {
        CHECK(strlen(text) == len);
        brig_json v2 = NULL;
        CHECK(json_parse(text, len, &v2, NULL) == 0);
        same_tree(v, v2);
        json_free(v2);
    }
    jw_free(w);
    json_free(v);
    return 0;
}
