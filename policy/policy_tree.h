/* A small mutable JSON tree for `policy apply`: config.json is patched in
 * place rather than regenerated from struct brig_spec, so fields brig does
 * not model (annotations, vendor extensions, windows/solaris sections, key
 * order) come out exactly as they went in. Read with json.h, written with
 * its jw_* writer: still no yajl outside runtime/config/json.c. */
#ifndef BRIG_POLICY_TREE_H
#define BRIG_POLICY_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../runtime/util/error.h"

/* PT_RAW: a value held as JSON text (s) and written as it is (jw_raw):
 * brig's own documents only, never parsed input. The text is borrowed,
 * not copied: brig's embedded documents, which outlive any tree. */
enum ptree_type { PT_NULL, PT_BOOL, PT_NUM, PT_STR, PT_OBJ, PT_ARR, PT_RAW };

struct ptree {
    enum ptree_type type;
    bool b;
    char *s;                    /* string, or a number's text */
    size_t n, cap;
    char **keys;                /* objects only */
    struct ptree **vals;        /* object values or array items */
};

int ptree_parse(const char *text, size_t len, struct ptree **out, struct brig_error **err);
/* Pretty-printed JSON text with a final newline, malloc'd. Fails only on a
 * number that is not an integer (config.json has none). */
int ptree_write(const struct ptree *t, char **out, struct brig_error **err);
/* The same, pretty or compact (a text only brig reads). */
int ptree_write_as(const struct ptree *t, bool pretty, char **out, struct brig_error **err);
void ptree_free(struct ptree *t);
void ptree_freep(struct ptree **t);
#define autoptree __attribute__((cleanup(ptree_freep)))

struct ptree *ptree_new(enum ptree_type type);
struct ptree *ptree_new_str(const char *s);
struct ptree *ptree_new_u64(uint64_t v);
struct ptree *ptree_new_i64(int64_t v);
struct ptree *ptree_new_bool(bool b);
struct ptree *ptree_new_strv(char *const *v);
struct ptree *ptree_new_raw(const char *json);
struct ptree *ptree_copy(const struct ptree *t);

/* Objects. get: NULL when absent. obj: the member as an object, created
 * (or replacing a null) when absent. set: replaces or appends (takes v). */
struct ptree *ptree_get(const struct ptree *obj, const char *key);
struct ptree *ptree_obj(struct ptree *obj, const char *key);
struct ptree *ptree_arr(struct ptree *obj, const char *key);
void ptree_set(struct ptree *obj, const char *key, struct ptree *v);
void ptree_del(struct ptree *obj, const char *key);
/* RFC 7386 (JSON Merge Patch): patch applied onto *target, which it may
 * replace; O((n + m) log m) for n members onto an object of m. */
void ptree_merge_patch(struct ptree **target, const struct ptree *patch);
/* Arrays. */
void ptree_push(struct ptree *arr, struct ptree *v);
void ptree_remove_at(struct ptree *arr, size_t i);
bool ptree_arr_has_str(const struct ptree *arr, const char *s);
/* A string member's value, NULL if absent or not a string. */
const char *ptree_str(const struct ptree *obj, const char *key);
/* An integer member, false if absent or not an integer. */
bool ptree_i64(const struct ptree *obj, const char *key, int64_t *v);

#endif
