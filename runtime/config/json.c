/* The only JSON module of brig: yajl's tree parser behind typed getters that
 * report the JSON path of what is wrong, and yajl_gen behind a small writer.
 * Nothing else in brig includes yajl. */
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>
#include <yajl/yajl_tree.h>

#include "spec.h"
#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/strutil.h"

/* yajl's parser has no nesting limit, and the walks of the tree
 * (json_check_dups) recurse once per level: a document of a few MiB of '['
 * would overflow the stack. No OCI document comes close to this depth. */
#define JSON_MAX_DEPTH 256

/* ---- parsing ---------------------------------------------------------- */

/* Reject what the tree cannot hold or survive before handing yajl the
 * text: NUL bytes, raw or as \u0000 (its strings are C strings, the rest
 * would silently vanish) and nesting deeper than JSON_MAX_DEPTH. Strings are
 * skipped so that brackets inside them do not count. */
static int json_precheck(const char *text, size_t len, struct brig_error **err)
{
    size_t depth = 0;
    bool in_str = false, esc = false;
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\0')
            return brig_failx(err, "invalid JSON: NUL byte at offset %zu", i);
        if (in_str) {
            if (esc) {
                esc = false;
                /* yajl decodes \u0000 into the C string it hands out, which
                 * would silently cut "/a\u0000/b" to "/a". */
                if (c == 'u' && len - i > 4 && memcmp(text + i + 1, "0000", 4) == 0)
                    return brig_failx(err, "invalid JSON: \\u0000 in a string at offset %zu",
                                      i - 1);
            } else if (c == '\\') {
                esc = true;
            } else if (c == '"') {
                in_str = false;
            }
            continue;
        }
        if (c == '"') {
            in_str = true;
        } else if (c == '[' || c == '{') {
            if (++depth > JSON_MAX_DEPTH)
                return brig_failx(err, "invalid JSON: nested deeper than %d levels at offset %zu",
                                  JSON_MAX_DEPTH, i);
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return 0;
}

/* The tree, built from yajl's callbacks into one arena rather than by
 * yajl_tree_parse(), which mallocs every value, string and key and grows
 * each object and array by a realloc per member: ~2,400 allocations and
 * ~25 touched heap pages for an 18.8 KB config. Here members wait on one
 * scratch stack and each container gets an exact array when it closes;
 * everything lives in a few blocks freed together. The values are yajl's
 * own struct yajl_val_s, read as before. */
struct tree_block {
    struct tree_block *next;
    size_t used, size;
    max_align_t data[];
};

/* What json_parse hands out: the root value first, so brig_json points at
 * the whole document and json_free finds its blocks. */
struct tree_doc {
    struct yajl_val_s root;
    struct tree_block *blocks;
};

struct tree_ctx {
    struct tree_block *blocks;
    size_t block_size;
    /* members of the open containers, innermost last; an object's are
     * key, value pairs */
    union tree_member { yajl_val v; const char *key; } *stack;
    size_t n, cap;
    size_t open[JSON_MAX_DEPTH + 1];   /* where each open container's members start */
    yajl_val kind[JSON_MAX_DEPTH + 1];
    size_t depth;
    yajl_val root;
};

/* Values and arrays of pointers at 8 bytes, text packed (align 1). */
static void *tree_alloc_aligned(struct tree_ctx *t, size_t len, size_t align)
{
    struct tree_block *b = t->blocks;
    size_t at = b ? (b->used + align - 1) & ~(align - 1) : 0;
    if (b == NULL || at > b->size || b->size - at < len) {
        size_t size = len > t->block_size ? len : t->block_size;
        struct tree_block *nb = malloc(sizeof(*nb) + size);
        if (nb == NULL) abort();
        nb->used = 0;
        nb->size = size;
        /* a value bigger than a block gets its own, behind the current one */
        if (b != NULL && len > t->block_size) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            t->blocks = nb;
        }
        b = nb;
        at = 0;
    }
    b->used = at + len;
    return (char *)b->data + at;
}

static void *tree_alloc(struct tree_ctx *t, size_t len)
{
    return tree_alloc_aligned(t, len, _Alignof(max_align_t));
}

static void tree_blocks_free(struct tree_block *b)
{
    while (b != NULL) {
        struct tree_block *next = b->next;
        free(b);
        b = next;
    }
}

static yajl_val tree_value(struct tree_ctx *t, yajl_type type)
{
    yajl_val v = tree_alloc_aligned(t, sizeof(*v), _Alignof(struct yajl_val_s));
    memset(v, 0, sizeof(*v));
    v->type = type;
    return v;
}

static char *tree_text(struct tree_ctx *t, const unsigned char *s, size_t len)
{
    char *c = tree_alloc_aligned(t, len + 1, 1);
    memcpy(c, s, len);
    c[len] = '\0';
    return c;
}

/* A finished value joins its container, or is the document. */
static void tree_push(struct tree_ctx *t, union tree_member m)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 64;
        t->stack = realloc(t->stack, t->cap * sizeof(*t->stack));
        if (t->stack == NULL) abort();
    }
    t->stack[t->n++] = m;
}

static int tree_add(struct tree_ctx *t, yajl_val v)
{
    if (t->depth == 0) t->root = v;
    else tree_push(t, (union tree_member){ .v = v });
    return 1;
}

static int tree_open(struct tree_ctx *t, yajl_type type)
{
    /* json_precheck bounds the nesting: more is a bug, and stops the parse */
    if (t->depth == JSON_MAX_DEPTH) return 0;
    t->depth++;
    t->open[t->depth] = t->n;
    t->kind[t->depth] = tree_value(t, type);
    return 1;
}

static int tree_close(struct tree_ctx *t)
{
    yajl_val v = t->kind[t->depth];
    size_t n = t->n - t->open[t->depth];
    /* No member pushed yet anywhere (`[]` first): the stack is still NULL,
     * and NULL + 0 is undefined. */
    const union tree_member *m = n > 0 ? t->stack + t->open[t->depth] : NULL;
    if (v->type == yajl_t_object && n > 0) {
        size_t len = n / 2;
        v->u.object.len = len;
        v->u.object.keys = tree_alloc_aligned(t, len * sizeof(*v->u.object.keys), _Alignof(const char *));
        v->u.object.values = tree_alloc_aligned(t, len * sizeof(*v->u.object.values), _Alignof(yajl_val));
        for (size_t i = 0; i < len; i++) {
            v->u.object.keys[i] = m[2 * i].key;
            v->u.object.values[i] = m[2 * i + 1].v;
        }
    } else if (v->type == yajl_t_array && n > 0) {
        v->u.array.len = n;
        v->u.array.values = tree_alloc_aligned(t, n * sizeof(*v->u.array.values), _Alignof(yajl_val));
        for (size_t i = 0; i < n; i++) v->u.array.values[i] = m[i].v;
    }
    t->n = t->open[t->depth];
    t->depth--;
    return tree_add(t, v);
}

static int tree_on_null(void *ctx)
{
    return tree_add(ctx, tree_value(ctx, yajl_t_null));
}

static int tree_on_bool(void *ctx, int b)
{
    return tree_add(ctx, tree_value(ctx, b ? yajl_t_true : yajl_t_false));
}

/* Only the number's text: brig reads every number from it (json_as_u64),
 * never yajl's long long or double, which tree_parse leaves zero. */
static int tree_on_number(void *ctx, const char *s, size_t len)
{
    yajl_val v = tree_value(ctx, yajl_t_number);
    v->u.number.r = tree_text(ctx, (const unsigned char *)s, len);
    return tree_add(ctx, v);
}

static int tree_on_string(void *ctx, const unsigned char *s, size_t len)
{
    yajl_val v = tree_value(ctx, yajl_t_string);
    v->u.string = tree_text(ctx, s, len);
    return tree_add(ctx, v);
}

/* A key waits on the stack as its text until its object closes. */
static int tree_on_key(void *ctx, const unsigned char *s, size_t len)
{
    tree_push(ctx, (union tree_member){ .key = tree_text(ctx, s, len) });
    return 1;
}

static int tree_on_start_map(void *ctx) { return tree_open(ctx, yajl_t_object); }
static int tree_on_start_array(void *ctx) { return tree_open(ctx, yajl_t_array); }
static int tree_on_end(void *ctx) { return tree_close(ctx); }

static const yajl_callbacks tree_callbacks = {
    .yajl_null = tree_on_null,
    .yajl_boolean = tree_on_bool,
    .yajl_number = tree_on_number,
    .yajl_string = tree_on_string,
    .yajl_start_map = tree_on_start_map,
    .yajl_map_key = tree_on_key,
    .yajl_end_map = tree_on_end,
    .yajl_start_array = tree_on_start_array,
    .yajl_end_array = tree_on_end,
};

/* The document, or NULL where the text is not JSON (yajl_tree_parse's
 * options: comments allowed, strings checked as UTF-8). */
static yajl_val tree_parse(const char *text, size_t len)
{
    /* most documents fit the first block: a config's tree is ~3x its text */
    size_t bs = 3 * len + 256;
    struct tree_ctx t = { .block_size = bs < 1024 ? 1024 : bs > 65536 ? 65536 : bs };
    struct tree_doc *doc = tree_alloc(&t, sizeof(*doc));
    yajl_handle h = yajl_alloc(&tree_callbacks, NULL, &t);
    if (h == NULL) abort();
    yajl_config(h, yajl_allow_comments, 1);
    yajl_status st = yajl_parse(h, (const unsigned char *)text, len);
    if (st == yajl_status_ok) st = yajl_complete_parse(h);
    yajl_free(h);
    free(t.stack);
    if (st != yajl_status_ok || t.root == NULL) {
        tree_blocks_free(t.blocks);
        return NULL;
    }
    doc->root = *t.root;
    doc->blocks = t.blocks;
    return &doc->root;
}

static void tree_free(yajl_val v)
{
    if (v != NULL) tree_blocks_free(((struct tree_doc *)v)->blocks);
}

/* Where the parse failed, told without quoting the text: yajl's
 * message shows an excerpt of the input, and the input may be a file nobody
 * meant to show (config.json made a link to /etc/shadow). Errors are rare:
 * a second, callback-free parse of the same
 * text (same options: comments allowed) finds the error again and reports
 * the short message and the byte offset, turned into line and column. */
static int json_syntax_error(const char *text, size_t len, struct brig_error **err)
{
    yajl_handle h = yajl_alloc(NULL, NULL, NULL);
    if (h == NULL) abort();
    yajl_config(h, yajl_allow_comments, 1);
    size_t off = len;
    yajl_status st = yajl_parse(h, (const unsigned char *)text, len);
    if (st != yajl_status_ok) off = yajl_get_bytes_consumed(h);
    else st = yajl_complete_parse(h);   /* an error here is at the end (premature EOF) */
    char msg[160] = "parse error";
    if (st != yajl_status_ok) {
        unsigned char *m = yajl_get_error(h, 0, (const unsigned char *)text, len);
        if (m != NULL) {
            /* "lexical error: invalid char in json text.\n": yajl's own words */
            snprintf(msg, sizeof(msg), "%s", (const char *)m);
            size_t n = strcspn(msg, "\n");
            while (n > 0 && (msg[n - 1] == '.' || msg[n - 1] == ' ')) n--;
            msg[n] = '\0';
            yajl_free_error(h, m);
        }
    }
    yajl_free(h);
    if (off > len) off = len;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    return brig_failx(err, "invalid JSON: %s at line %zu, column %zu (byte offset %zu)", msg, line,
                      col, off);
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Duplicate keys are ambiguous: yajl keeps both, other parsers keep the last
 * one. A config that means different things to different readers (a policy
 * checker and brig) is refused rather than guessed at. The walk is bounded
 * by JSON_MAX_DEPTH. */
static int json_check_dups(yajl_val v, struct brig_error **err)
{
    if (YAJL_IS_ARRAY(v)) {
        for (size_t i = 0; i < v->u.array.len; i++)
            TRY(json_check_dups(v->u.array.values[i], err));
        return 0;
    }
    if (!YAJL_IS_OBJECT(v)) return 0;
    size_t n = v->u.object.len;
    if (n > 1) {
        /* most objects are small: their keys sorted on the stack */
        const char *small[64];
        autofree const char **big = n > 64 ? brig_calloc(n, sizeof(*big)) : NULL;
        const char **keys = big ? big : small;
        memcpy(keys, v->u.object.keys, n * sizeof(*keys));
        qsort(keys, n, sizeof(*keys), key_cmp);
        for (size_t i = 1; i < n; i++) {
            if (strcmp(keys[i - 1], keys[i]) == 0) {
                char esc[128];
                brig_json_escape(keys[i], esc, sizeof(esc));
                return brig_failx(err, "invalid JSON: duplicate key \"%s\"", esc);
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        TRY(json_check_dups(v->u.object.values[i], err));
    return 0;
}

int json_parse(const char *text, size_t len, brig_json *out, struct brig_error **err)
{
    *out = NULL;
    TRY(json_precheck(text, len, err));
    yajl_val v = tree_parse(text, len);
    if (v == NULL) return json_syntax_error(text, len, err);
    if (json_check_dups(v, err) < 0) {
        tree_free(v);
        return -1;
    }
    *out = v;
    return 0;
}

void json_free(brig_json v)
{
    tree_free(v);
}

void json_freep(brig_json *v)
{
    if (v != NULL && *v != NULL) {
        tree_free(*v);
        *v = NULL;
    }
}

/* ---- navigation ------------------------------------------------------- */

bool json_is_object(brig_json v) { return YAJL_IS_OBJECT(v); }
bool json_is_array(brig_json v) { return YAJL_IS_ARRAY(v); }
bool json_is_string(brig_json v) { return YAJL_IS_STRING(v); }
bool json_is_null(brig_json v) { return YAJL_IS_NULL(v); }

brig_json json_get(brig_json obj, const char *key)
{
    if (!YAJL_IS_OBJECT(obj) || key == NULL) return NULL;
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (strcmp(obj->u.object.keys[i], key) == 0) return obj->u.object.values[i];
    return NULL;
}

size_t json_object_len(brig_json obj)
{
    return YAJL_IS_OBJECT(obj) ? obj->u.object.len : 0;
}

const char *json_object_key(brig_json obj, size_t i)
{
    return YAJL_IS_OBJECT(obj) && i < obj->u.object.len ? obj->u.object.keys[i] : NULL;
}

brig_json json_object_value(brig_json obj, size_t i)
{
    return YAJL_IS_OBJECT(obj) && i < obj->u.object.len ? obj->u.object.values[i] : NULL;
}

size_t json_array_len(brig_json arr)
{
    return YAJL_IS_ARRAY(arr) ? arr->u.array.len : 0;
}

brig_json json_array_at(brig_json arr, size_t i)
{
    return YAJL_IS_ARRAY(arr) && i < arr->u.array.len ? arr->u.array.values[i] : NULL;
}

/* ---- typed reads ------------------------------------------------------ */

void json_describe(brig_json v, char *buf, size_t len)
{
    if (v == NULL) {
        snprintf(buf, len, "nothing");
        return;
    }
    switch (v->type) {
    case yajl_t_string: {
        char esc[64];
        brig_json_escape(v->u.string, esc, sizeof(esc));
        bool cut = strlen(esc) > 40 || strlen(v->u.string) > 40;
        if (strlen(esc) > 40) esc[40] = '\0';
        snprintf(buf, len, "\"%s\"%s", esc, cut ? "..." : "");
        break;
    }
    case yajl_t_number: snprintf(buf, len, "%.40s", v->u.number.r); break;
    case yajl_t_object: snprintf(buf, len, "an object"); break;
    case yajl_t_array: snprintf(buf, len, "an array"); break;
    case yajl_t_true: snprintf(buf, len, "true"); break;
    case yajl_t_false: snprintf(buf, len, "false"); break;
    case yajl_t_null: snprintf(buf, len, "null"); break;
    default: snprintf(buf, len, "an unknown value"); break;
    }
}

static int json_type_error(brig_json v, const char *path, const char *what,
                           struct brig_error **err)
{
    char got[96];
    json_describe(v, got, sizeof(got));
    return brig_failx(err, "%s: expected %s, got %s", path, what, got);
}

int json_as_object(brig_json v, const char *path, struct brig_error **err)
{
    return YAJL_IS_OBJECT(v) ? 0 : json_type_error(v, path, "an object", err);
}

int json_as_array(brig_json v, const char *path, struct brig_error **err)
{
    return YAJL_IS_ARRAY(v) ? 0 : json_type_error(v, path, "an array", err);
}

int json_as_string(brig_json v, const char *path, const char **out, struct brig_error **err)
{
    if (!YAJL_IS_STRING(v)) return json_type_error(v, path, "a string", err);
    *out = v->u.string;
    return 0;
}

int json_as_bool(brig_json v, const char *path, bool *out, struct brig_error **err)
{
    if (YAJL_IS_TRUE(v)) *out = true;
    else if (YAJL_IS_FALSE(v)) *out = false;
    else return json_type_error(v, path, "a boolean", err);
    return 0;
}

/* yajl keeps the number's text; it is the only exact source for values past
 * INT64_MAX. JSON's grammar has already been checked, so the text is
 * -?digits[.digits][e[+-]digits]: integers are those without '.', 'e', 'E'. */
static bool number_is_integer(brig_json v)
{
    return YAJL_IS_NUMBER(v) && v->u.number.r != NULL && strpbrk(v->u.number.r, ".eE") == NULL;
}

int json_as_u64(brig_json v, const char *path, uint64_t *out, struct brig_error **err)
{
    const char *what = "an unsigned 64-bit integer";
    if (!number_is_integer(v) || v->u.number.r[0] == '-') return json_type_error(v, path, what, err);
    errno = 0;
    char *end = NULL;
    unsigned long long r = strtoull(v->u.number.r, &end, 10);
    if (errno != 0 || end == v->u.number.r || *end != '\0')
        return json_type_error(v, path, what, err);
    *out = r;
    return 0;
}

int json_as_i64(brig_json v, const char *path, int64_t *out, struct brig_error **err)
{
    const char *what = "a signed 64-bit integer";
    if (!number_is_integer(v)) return json_type_error(v, path, what, err);
    errno = 0;
    char *end = NULL;
    long long r = strtoll(v->u.number.r, &end, 10);
    if (errno != 0 || end == v->u.number.r || *end != '\0')
        return json_type_error(v, path, what, err);
    *out = r;
    return 0;
}

int json_as_u32(brig_json v, const char *path, uint32_t *out, struct brig_error **err)
{
    uint64_t r;
    if (json_as_u64(v, path, &r, NULL) < 0 || r > UINT32_MAX)
        return json_type_error(v, path, "an unsigned 32-bit integer", err);
    *out = (uint32_t)r;
    return 0;
}

int json_as_i32(brig_json v, const char *path, int32_t *out, struct brig_error **err)
{
    int64_t r;
    if (json_as_i64(v, path, &r, NULL) < 0 || r < INT32_MIN || r > INT32_MAX)
        return json_type_error(v, path, "a signed 32-bit integer", err);
    *out = (int32_t)r;
    return 0;
}

static int json_as_strv_check(brig_json v, const char *path, struct brig_error **err)
{
    if (!YAJL_IS_ARRAY(v)) return json_type_error(v, path, "an array of strings", err);
    for (size_t i = 0; i < v->u.array.len; i++) {
        if (!YAJL_IS_STRING(v->u.array.values[i])) {
            char p[512];
            snprintf(p, sizeof(p), "%s[%zu]", path, i);
            return json_type_error(v->u.array.values[i], p, "a string", err);
        }
    }
    return 0;
}

int json_as_strv(brig_json v, const char *path, char ***out, size_t *n, struct brig_error **err)
{
    TRY(json_as_strv_check(v, path, err));
    size_t len = v->u.array.len;
    char **r = brig_calloc(len + 1, sizeof(char *));
    for (size_t i = 0; i < len; i++) r[i] = brig_strdup(v->u.array.values[i]->u.string);
    *out = r;
    if (n != NULL) *n = len;
    return 0;
}

int json_as_strv_packed(brig_json v, const char *path, char ***out, size_t *n, struct brig_error **err)
{
    TRY(json_as_strv_check(v, path, err));
    size_t len = v->u.array.len;
    size_t text = 0;
    for (size_t i = 0; i < len; i++) text += strlen(v->u.array.values[i]->u.string) + 1;
    char **r = malloc((len + 1) * sizeof(char *) + text);
    if (r == NULL) abort();
    char *at = (char *)(r + len + 1);
    for (size_t i = 0; i < len; i++) {
        size_t l = strlen(v->u.array.values[i]->u.string) + 1;
        r[i] = memcpy(at, v->u.array.values[i]->u.string, l);
        at += l;
    }
    r[len] = NULL;
    *out = r;
    if (n != NULL) *n = len;
    return 0;
}

int json_as_kv(brig_json v, const char *path, struct brig_kv **out, size_t *n,
               struct brig_error **err)
{
    if (!YAJL_IS_OBJECT(v)) return json_type_error(v, path, "an object", err);
    size_t len = v->u.object.len;
    for (size_t i = 0; i < len; i++) {
        if (!YAJL_IS_STRING(v->u.object.values[i])) {
            char p[512];
            snprintf(p, sizeof(p), "%s.%s", path, v->u.object.keys[i]);
            return json_type_error(v->u.object.values[i], p, "a string", err);
        }
    }
    struct brig_kv *r = brig_calloc(len, sizeof(*r));
    for (size_t i = 0; i < len; i++) {
        r[i].key = brig_strdup(v->u.object.keys[i]);
        r[i].value = brig_strdup(v->u.object.values[i]->u.string);
    }
    *out = r;
    *n = len;
    return 0;
}

/* ---- member reads ----------------------------------------------------- */

/* Called for every member a parse reads, for a path that only an error
 * prints: copied, not formatted (snprintf was a fifth of a config's parse).
 * Cut at len - 1 bytes as snprintf cuts. */
void json_path_join(char *buf, size_t len, const char *path, const char *key)
{
    if (len == 0) return;
    size_t at = 0;
    const char *parts[3] = { path != NULL && path[0] != '\0' ? path : NULL, NULL, key };
    if (parts[0] != NULL) parts[1] = ".";
    for (size_t i = 0; i < 3 && at < len - 1; i++) {
        if (parts[i] == NULL) continue;
        size_t n = strnlen(parts[i], len - 1 - at);
        memcpy(buf + at, parts[i], n);
        at += n;
    }
    buf[at] = '\0';
}

/* 1: absent or null, 0: found (*v set), -1: required but absent. */
static int member(brig_json obj, const char *path, const char *key, bool required,
                  brig_json *v, char *p, size_t plen, struct brig_error **err)
{
    json_path_join(p, plen, path, key);
    *v = json_get(obj, key);
    if (*v != NULL && !YAJL_IS_NULL(*v)) return 0;
    if (required) return brig_failx(err, "%s: required", p);
    return 1;
}

int json_get_string(brig_json obj, const char *path, const char *key, bool required,
                    char **out, struct brig_error **err)
{
    char p[512];
    brig_json v;
    int r = member(obj, path, key, required, &v, p, sizeof(p), err);
    if (r != 0) return r;
    const char *s;
    TRY(json_as_string(v, p, &s, err));
    *out = brig_strdup(s);
    return 0;
}

int json_get_bool(brig_json obj, const char *path, const char *key, bool required,
                  bool *out, struct brig_error **err)
{
    char p[512];
    brig_json v;
    int r = member(obj, path, key, required, &v, p, sizeof(p), err);
    if (r != 0) return r;
    return json_as_bool(v, p, out, err);
}

int json_get_u64(brig_json obj, const char *path, const char *key, bool required,
                 uint64_t *out, struct brig_error **err)
{
    char p[512];
    brig_json v;
    int r = member(obj, path, key, required, &v, p, sizeof(p), err);
    if (r != 0) return r;
    return json_as_u64(v, p, out, err);
}

int json_get_i64(brig_json obj, const char *path, const char *key, bool required,
                 int64_t *out, struct brig_error **err)
{
    char p[512];
    brig_json v;
    int r = member(obj, path, key, required, &v, p, sizeof(p), err);
    if (r != 0) return r;
    return json_as_i64(v, p, out, err);
}

int json_get_u32(brig_json obj, const char *path, const char *key, bool required,
                 uint32_t *out, struct brig_error **err)
{
    char p[512];
    brig_json v;
    int r = member(obj, path, key, required, &v, p, sizeof(p), err);
    if (r != 0) return r;
    return json_as_u32(v, p, out, err);
}

int json_get_i32(brig_json obj, const char *path, const char *key, bool required,
                 int32_t *out, struct brig_error **err)
{
    char p[512];
    brig_json v;
    int r = member(obj, path, key, required, &v, p, sizeof(p), err);
    if (r != 0) return r;
    return json_as_i32(v, p, out, err);
}

/* ---- writer ----------------------------------------------------------- */

/* Output goes through yajl's print callback into our own buffer, so that
 * jw_text() can promise NUL termination without relying on yajl internals. */
struct brig_jw {
    yajl_gen g;
    char *buf;
    size_t len, cap;
    bool failed;            /* a call was out of place: the text is not JSON */
};

static void jw_print(void *ctx, const char *s, size_t n)
{
    struct brig_jw *w = ctx;
    if (w->len + n + 1 > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (w->len + n + 1 > cap) cap *= 2;
        char *nb = realloc(w->buf, cap);
        if (nb == NULL) abort();
        w->buf = nb;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

struct brig_jw *jw_new(bool pretty)
{
    struct brig_jw *w = brig_calloc(1, sizeof(*w));
    w->g = yajl_gen_alloc(NULL);
    if (w->g == NULL) abort();
    yajl_gen_config(w->g, yajl_gen_print_callback, jw_print, w);
    if (pretty) {
        yajl_gen_config(w->g, yajl_gen_beautify, 1);
        yajl_gen_config(w->g, yajl_gen_indent_string, "  ");
    }
    return w;
}

void jw_free(struct brig_jw *w)
{
    if (w == NULL) return;
    yajl_gen_free(w->g);
    free(w->buf);
    free(w);
}

void jw_freep(struct brig_jw **w)
{
    if (w != NULL) {
        jw_free(*w);
        *w = NULL;
    }
}

static void jw_check(struct brig_jw *w, yajl_gen_status st, const char *what)
{
    if (st == yajl_gen_status_ok || w->failed) return;
    /* A programming error in the caller; jw_text() then returns NULL rather
     * than a document that is not JSON. */
    brig_warn("json writer: %s failed (yajl_gen status %d)", what, (int)st);
    w->failed = true;
}

void jw_obj_open(struct brig_jw *w) { jw_check(w, yajl_gen_map_open(w->g), "object open"); }
void jw_obj_close(struct brig_jw *w) { jw_check(w, yajl_gen_map_close(w->g), "object close"); }
void jw_arr_open(struct brig_jw *w) { jw_check(w, yajl_gen_array_open(w->g), "array open"); }
void jw_arr_close(struct brig_jw *w) { jw_check(w, yajl_gen_array_close(w->g), "array close"); }

void jw_key(struct brig_jw *w, const char *key)
{
    jw_check(w, yajl_gen_string(w->g, (const unsigned char *)key, strlen(key)), "key");
}

void jw_str(struct brig_jw *w, const char *s)
{
    if (s == NULL) {
        jw_null(w);
        return;
    }
    jw_check(w, yajl_gen_string(w->g, (const unsigned char *)s, strlen(s)), "string");
}

void jw_strn(struct brig_jw *w, const char *s, size_t len)
{
    jw_check(w, yajl_gen_string(w->g, (const unsigned char *)s, len), "string");
}

void jw_u64(struct brig_jw *w, uint64_t v)
{
    /* yajl_gen_integer takes a long long; the number's text keeps all 64 bits. */
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%" PRIu64, v);
    jw_check(w, yajl_gen_number(w->g, buf, (size_t)n), "number");
}

void jw_i64(struct brig_jw *w, int64_t v)
{
    jw_check(w, yajl_gen_integer(w->g, (long long)v), "number");
}

void jw_bool(struct brig_jw *w, bool v) { jw_check(w, yajl_gen_bool(w->g, v), "bool"); }
void jw_null(struct brig_jw *w) { jw_check(w, yajl_gen_null(w->g), "null"); }

void jw_raw(struct brig_jw *w, const char *json)
{
    /* yajl has no raw output: a null keeps its state machine right (the
     * separators, the indentation), and is then replaced by the text. */
    jw_null(w);
    if (w->failed) return;
    if (w->len < 4 || memcmp(w->buf + w->len - 4, "null", 4) != 0) {
        brig_warn("json writer: raw value: the null was not last (a bug)");
        w->failed = true;
        return;
    }
    w->len -= 4;
    jw_print(w, json, strlen(json));
}

void jw_kstr(struct brig_jw *w, const char *key, const char *s) { jw_key(w, key); jw_str(w, s); }
void jw_kstrn(struct brig_jw *w, const char *key, const char *s, size_t len) { jw_key(w, key); jw_strn(w, s, len); }
void jw_ku64(struct brig_jw *w, const char *key, uint64_t v) { jw_key(w, key); jw_u64(w, v); }
void jw_ki64(struct brig_jw *w, const char *key, int64_t v) { jw_key(w, key); jw_i64(w, v); }
void jw_kbool(struct brig_jw *w, const char *key, bool v) { jw_key(w, key); jw_bool(w, v); }

const char *jw_text(struct brig_jw *w, size_t *len)
{
    if (w->failed) {
        if (len != NULL) *len = 0;
        return NULL;
    }
    if (w->buf == NULL) jw_print(w, "", 0);
    if (len != NULL) *len = w->len;
    return w->buf;
}

char *jw_steal(struct brig_jw *w, size_t *len)
{
    if (jw_text(w, len) == NULL) return NULL;
    char *text = w->buf;
    w->buf = NULL;
    w->len = w->cap = 0;
    return text;
}
