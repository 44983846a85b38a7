/* The mutable JSON tree of policy_tree.h. */
#include "policy_tree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/config/json.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

struct ptree *ptree_new(enum ptree_type type)
{
    struct ptree *t = brig_calloc(1, sizeof(*t));
    t->type = type;
    return t;
}

struct ptree *ptree_new_str(const char *s)
{
    struct ptree *t = ptree_new(PT_STR);
    t->s = brig_strdup(s);
    return t;
}

struct ptree *ptree_new_u64(uint64_t v)
{
    struct ptree *t = ptree_new(PT_NUM);
    t->s = brig_asprintf("%" PRIu64, v);
    return t;
}

struct ptree *ptree_new_i64(int64_t v)
{
    struct ptree *t = ptree_new(PT_NUM);
    t->s = brig_asprintf("%" PRId64, v);
    return t;
}

struct ptree *ptree_new_bool(bool b)
{
    struct ptree *t = ptree_new(PT_BOOL);
    t->b = b;
    return t;
}

struct ptree *ptree_new_strv(char *const *v)
{
    struct ptree *t = ptree_new(PT_ARR);
    for (; v != NULL && *v != NULL; v++) ptree_push(t, ptree_new_str(*v));
    return t;
}

struct ptree *ptree_new_raw(const char *json)
{
    struct ptree *t = ptree_new(PT_RAW);
    t->s = (char *)json;   /* borrowed (policy_tree.h), never freed */
    return t;
}

void ptree_free(struct ptree *t)
{
    if (t == NULL) return;
    for (size_t i = 0; i < t->n; i++) {
        if (t->keys != NULL) free(t->keys[i]);
        ptree_free(t->vals[i]);
    }
    free(t->keys);
    free(t->vals);
    if (t->type != PT_RAW) free(t->s);
    free(t);
}

void ptree_freep(struct ptree **t)
{
    ptree_free(*t);
    *t = NULL;
}

static void ptree_grow(struct ptree *t)
{
    if (t->n < t->cap) return;
    t->cap = t->cap ? t->cap * 2 : 8;
    t->vals = realloc(t->vals, t->cap * sizeof(*t->vals));
    if (t->type == PT_OBJ) t->keys = realloc(t->keys, t->cap * sizeof(*t->keys));
    if (t->vals == NULL || (t->type == PT_OBJ && t->keys == NULL)) abort();
}

/* A member known to be new: the keys of a parsed document are unique
 * (json_parse refuses duplicates) and so are a tree's own, so copies and
 * parses append without ptree_set's search, which made both quadratic in an
 * object's size (600,000 annotations: minutes). */
static void ptree_append(struct ptree *obj, const char *key, struct ptree *v)
{
    ptree_grow(obj);
    obj->keys[obj->n] = brig_strdup(key);
    obj->vals[obj->n++] = v;
}

struct ptree *ptree_copy(const struct ptree *t)
{
    struct ptree *c = ptree_new(t->type);
    c->b = t->b;
    c->s = t->s && t->type != PT_RAW ? brig_strdup(t->s) : t->s;
    for (size_t i = 0; i < t->n; i++) {
        if (t->type == PT_OBJ) ptree_append(c, t->keys[i], ptree_copy(t->vals[i]));
        else ptree_push(c, ptree_copy(t->vals[i]));
    }
    return c;
}

static struct ptree *ptree_from_json(brig_json v)
{
    if (json_is_object(v)) {
        struct ptree *t = ptree_new(PT_OBJ);
        for (size_t i = 0; i < json_object_len(v); i++)
            ptree_append(t, json_object_key(v, i), ptree_from_json(json_object_value(v, i)));
        return t;
    }
    if (json_is_array(v)) {
        struct ptree *t = ptree_new(PT_ARR);
        for (size_t i = 0; i < json_array_len(v); i++) ptree_push(t, ptree_from_json(json_array_at(v, i)));
        return t;
    }
    if (json_is_string(v)) {
        const char *s = NULL;
        json_as_string(v, "", &s, NULL);
        return ptree_new_str(s);
    }
    if (json_is_null(v)) return ptree_new(PT_NULL);
    bool b;
    if (json_as_bool(v, "", &b, NULL) == 0) return ptree_new_bool(b);
    /* A number: json_describe gives its text (up to 40 characters, more
     * than any 64-bit integer needs). */
    struct ptree *t = ptree_new(PT_NUM);
    char buf[64];
    json_describe(v, buf, sizeof(buf));
    t->s = brig_strdup(buf);
    return t;
}

int ptree_parse(const char *text, size_t len, struct ptree **out, struct brig_error **err)
{
    autojson brig_json v = NULL;
    TRY(json_parse(text, len, &v, err));
    if (!json_is_object(v)) return brig_failx(err, "config.json: expected an object");
    *out = ptree_from_json(v);
    return 0;
}

static int ptree_emit(struct brig_jw *w, const struct ptree *t, struct brig_error **err)
{
    switch (t->type) {
    case PT_NULL: jw_null(w); return 0;
    case PT_BOOL: jw_bool(w, t->b); return 0;
    case PT_STR: jw_str(w, t->s); return 0;
    case PT_RAW: jw_raw(w, t->s); return 0;
    case PT_NUM: {
        uint64_t u;
        int64_t i;
        if (brig_parse_u64(t->s, &u) == 0) jw_u64(w, u);
        else if (brig_parse_i64(t->s, &i) == 0) jw_i64(w, i);
        else return brig_failx(err, "number %s: only integers are written back", t->s);
        return 0;
    }
    case PT_OBJ:
        jw_obj_open(w);
        for (size_t k = 0; k < t->n; k++) {
            jw_key(w, t->keys[k]);
            TRY(ptree_emit(w, t->vals[k], err));
        }
        jw_obj_close(w);
        return 0;
    case PT_ARR:
        jw_arr_open(w);
        for (size_t k = 0; k < t->n; k++) TRY(ptree_emit(w, t->vals[k], err));
        jw_arr_close(w);
        return 0;
    }
    return brig_failx(err, "bad tree node");
}

int ptree_write(const struct ptree *t, char **out, struct brig_error **err)
{
    return ptree_write_as(t, true, out, err);
}

int ptree_write_as(const struct ptree *t, bool pretty, char **out, struct brig_error **err)
{
    autojw struct brig_jw *w = jw_new(pretty);
    TRY(ptree_emit(w, t, err));
    size_t len = 0;
    /* The writer's own buffer, not a copy: a config is 12-20 KB, 3-5 pages. */
    char *text = jw_steal(w, &len);
    if (text == NULL) return brig_failx(err, "JSON writer failed");
    if (len == 0 || text[len - 1] != '\n') {
        char *nt = realloc(text, len + 2);
        if (nt == NULL) abort();
        text = nt;
        text[len] = '\n';
        text[len + 1] = '\0';
    }
    *out = text;
    return 0;
}

static ssize_t ptree_index(const struct ptree *obj, const char *key)
{
    if (obj == NULL || obj->type != PT_OBJ) return -1;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0) return (ssize_t)i;
    return -1;
}

struct ptree *ptree_get(const struct ptree *obj, const char *key)
{
    ssize_t i = ptree_index(obj, key);
    return i < 0 ? NULL : obj->vals[i];
}

void ptree_set(struct ptree *obj, const char *key, struct ptree *v)
{
    ssize_t i = ptree_index(obj, key);
    if (i >= 0) {
        ptree_free(obj->vals[i]);
        obj->vals[i] = v;
        return;
    }
    ptree_append(obj, key, v);
}

static struct ptree *ptree_member(struct ptree *obj, const char *key, enum ptree_type type)
{
    struct ptree *v = ptree_get(obj, key);
    if (v != NULL && v->type == type) return v;
    /* Absent or null (the config parsed as a spec, so no other type). */
    v = ptree_new(type);
    ptree_set(obj, key, v);
    return v;
}

struct ptree *ptree_obj(struct ptree *obj, const char *key) { return ptree_member(obj, key, PT_OBJ); }
struct ptree *ptree_arr(struct ptree *obj, const char *key) { return ptree_member(obj, key, PT_ARR); }

void ptree_del(struct ptree *obj, const char *key)
{
    ssize_t i = ptree_index(obj, key);
    if (i < 0) return;
    free(obj->keys[i]);
    ptree_free(obj->vals[i]);
    memmove(&obj->keys[i], &obj->keys[i + 1], (obj->n - (size_t)i - 1) * sizeof(*obj->keys));
    memmove(&obj->vals[i], &obj->vals[i + 1], (obj->n - (size_t)i - 1) * sizeof(*obj->vals));
    obj->n--;
}

static int ptree_order_cmp(const void *a, const void *b, void *keys)
{
    char *const *k = keys;
    return strcmp(k[*(const size_t *)a], k[*(const size_t *)b]);
}

/* The target's members are found through an order of their keys sorted
 * once, and the ones a null removes go in one pass at the end: a lookup
 * and a set by ptree_index for each member of the patch made the merge of
 * two objects of 70,000 keys take 43 s. A patch's keys are unique
 * (json_parse refuses duplicates), so a new one is appended unsearched. */
void ptree_merge_patch(struct ptree **target, const struct ptree *patch)
{
    if (patch->type != PT_OBJ) {
        ptree_free(*target);
        *target = ptree_copy(patch);
        return;
    }
    if (*target == NULL || (*target)->type != PT_OBJ) {
        ptree_free(*target);
        *target = ptree_new(PT_OBJ);
    }
    struct ptree *t = *target;
    const size_t m = t->n;
    autofree size_t *order = brig_calloc(m + 1, sizeof(*order));
    autofree bool *gone = brig_calloc(m + 1, sizeof(*gone));
    for (size_t i = 0; i < m; i++) order[i] = i;
    qsort_r(order, m, sizeof(*order), ptree_order_cmp, t->keys);
    for (size_t i = 0; i < patch->n; i++) {
        const char *k = patch->keys[i];
        const struct ptree *v = patch->vals[i];
        ssize_t at = -1;
        for (size_t lo = 0, hi = m; lo < hi && at < 0;) {
            size_t mid = lo + (hi - lo) / 2;
            int c = strcmp(k, t->keys[order[mid]]);
            if (c == 0) at = (ssize_t)order[mid];
            else if (c < 0) hi = mid;
            else lo = mid + 1;
        }
        if (v->type == PT_NULL) {
            if (at >= 0) gone[at] = true;
        } else if (at >= 0) {
            ptree_merge_patch(&t->vals[at], v);
        } else {
            struct ptree *mine = NULL;
            ptree_merge_patch(&mine, v);
            ptree_append(t, k, mine);
        }
    }
    size_t w = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (i < m && gone[i]) {
            free(t->keys[i]);
            ptree_free(t->vals[i]);
            continue;
        }
        t->keys[w] = t->keys[i];
        t->vals[w++] = t->vals[i];
    }
    t->n = w;
}

void ptree_push(struct ptree *arr, struct ptree *v)
{
    ptree_grow(arr);
    arr->vals[arr->n++] = v;
}

void ptree_remove_at(struct ptree *arr, size_t i)
{
    if (i >= arr->n) return;
    ptree_free(arr->vals[i]);
    memmove(&arr->vals[i], &arr->vals[i + 1], (arr->n - i - 1) * sizeof(*arr->vals));
    arr->n--;
}

bool ptree_arr_has_str(const struct ptree *arr, const char *s)
{
    for (size_t i = 0; arr != NULL && arr->type == PT_ARR && i < arr->n; i++)
        if (arr->vals[i]->type == PT_STR && strcmp(arr->vals[i]->s, s) == 0) return true;
    return false;
}

const char *ptree_str(const struct ptree *obj, const char *key)
{
    const struct ptree *v = ptree_get(obj, key);
    return v != NULL && v->type == PT_STR ? v->s : NULL;
}

bool ptree_i64(const struct ptree *obj, const char *key, int64_t *v)
{
    const struct ptree *t = ptree_get(obj, key);
    return t != NULL && t->type == PT_NUM && brig_parse_i64(t->s, v) == 0;
}
