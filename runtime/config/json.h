/* The only JSON module: yajl's tree parser behind typed, path-aware getters,
 * and yajl_gen behind a small writer. Nothing else in brig includes yajl.
 *
 * Getters take the JSON path of the object (e.g. "linux.seccomp") and the
 * key, so errors read "linux.seccomp.defaultAction: expected a string".
 * 64-bit unsigned values are read from the number's text with strtoull
 * (yajl's integer type is a signed long long). */
#ifndef BRIG_JSON_H
#define BRIG_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../util/error.h"

typedef struct yajl_val_s *brig_json;

/* Parse a whole document. Error messages carry yajl's position. */
int json_parse(const char *text, size_t len, brig_json *out, struct brig_error **err);
void json_free(brig_json v);
void json_freep(brig_json *v);
#define autojson __attribute__((cleanup(json_freep)))

bool json_is_object(brig_json v);
bool json_is_array(brig_json v);
bool json_is_string(brig_json v);
bool json_is_null(brig_json v);

/* Member of an object, NULL if absent (or v is not an object). */
brig_json json_get(brig_json obj, const char *key);
size_t json_object_len(brig_json obj);
const char *json_object_key(brig_json obj, size_t i);
brig_json json_object_value(brig_json obj, size_t i);
size_t json_array_len(brig_json arr);
brig_json json_array_at(brig_json arr, size_t i);

/* "got ..." text for messages: a number's text, a quoted (cut) string,
 * "an object", "an array", true/false/null, "nothing" for NULL. */
void json_describe(brig_json v, char *buf, size_t len);
/* "path.key" (or "key" when path is empty) into buf. */
void json_path_join(char *buf, size_t len, const char *path, const char *key);
/* Type checks with "path: expected an object, got 3" style errors. */
int json_as_object(brig_json v, const char *path, struct brig_error **err);
int json_as_array(brig_json v, const char *path, struct brig_error **err);

/* Typed reads of a value v found at `path` (path used only for errors).
 * Return 0, or -1 with "path: expected ..." */
int json_as_string(brig_json v, const char *path, const char **out, struct brig_error **err);
int json_as_bool(brig_json v, const char *path, bool *out, struct brig_error **err);
int json_as_u64(brig_json v, const char *path, uint64_t *out, struct brig_error **err);
int json_as_i64(brig_json v, const char *path, int64_t *out, struct brig_error **err);
int json_as_u32(brig_json v, const char *path, uint32_t *out, struct brig_error **err);
int json_as_i32(brig_json v, const char *path, int32_t *out, struct brig_error **err);
/* An array of strings, as a NULL-terminated copy. */
int json_as_strv(brig_json v, const char *path, char ***out, size_t *n, struct brig_error **err);
/* The same in one allocation (the pointers, then the text), freed by one
 * free(): for the long lists of short strings (seccomp's syscall names). */
int json_as_strv_packed(brig_json v, const char *path, char ***out, size_t *n, struct brig_error **err);
/* An object whose values are strings, as a key/value array copy. */
struct brig_kv;
int json_as_kv(brig_json v, const char *path, struct brig_kv **out, size_t *n, struct brig_error **err);

/* Member reads: return 1 when the key is absent (or null), 0 when read,
 * -1 on a type error. `required` turns absence into "path.key: required". */
int json_get_string(brig_json obj, const char *path, const char *key, bool required,
                    char **out, struct brig_error **err);       /* copies */
int json_get_bool(brig_json obj, const char *path, const char *key, bool required,
                  bool *out, struct brig_error **err);
int json_get_u64(brig_json obj, const char *path, const char *key, bool required,
                 uint64_t *out, struct brig_error **err);
int json_get_i64(brig_json obj, const char *path, const char *key, bool required,
                 int64_t *out, struct brig_error **err);
int json_get_u32(brig_json obj, const char *path, const char *key, bool required,
                 uint32_t *out, struct brig_error **err);
int json_get_i32(brig_json obj, const char *path, const char *key, bool required,
                 int32_t *out, struct brig_error **err);

/* ---- writer ---- */
struct brig_jw;
struct brig_jw *jw_new(bool pretty);
void jw_free(struct brig_jw *w);
void jw_freep(struct brig_jw **w);
#define autojw __attribute__((cleanup(jw_freep)))
void jw_obj_open(struct brig_jw *w);
void jw_obj_close(struct brig_jw *w);
void jw_arr_open(struct brig_jw *w);
void jw_arr_close(struct brig_jw *w);
void jw_key(struct brig_jw *w, const char *key);
void jw_str(struct brig_jw *w, const char *s);      /* NULL writes null */
/* len bytes of valid UTF-8, NULs included (escaped as \u0000). */
void jw_strn(struct brig_jw *w, const char *s, size_t len);
void jw_u64(struct brig_jw *w, uint64_t v);
void jw_i64(struct brig_jw *w, int64_t v);
void jw_bool(struct brig_jw *w, bool v);
void jw_null(struct brig_jw *w);
/* A value given as JSON text, copied in as it is: only brig's own
 * documents (its embedded seccomp profile), never input; whoever reads the
 * result parses it whole. */
void jw_raw(struct brig_jw *w, const char *json);
/* Convenience: key + value. */
void jw_kstr(struct brig_jw *w, const char *key, const char *s);
void jw_kstrn(struct brig_jw *w, const char *key, const char *s, size_t len);
void jw_ku64(struct brig_jw *w, const char *key, uint64_t v);
void jw_ki64(struct brig_jw *w, const char *key, int64_t v);
void jw_kbool(struct brig_jw *w, const char *key, bool v);
/* The document so far (NUL-terminated, owned by w). NULL if a call was out
 * of place (e.g. a value where a key was expected): the text is not JSON. */
const char *jw_text(struct brig_jw *w, size_t *len);
/* The same text, handed to the caller (free()); w is then empty. */
char *jw_steal(struct brig_jw *w, size_t *len);

#endif
