/* STUB: to be implemented. */
#include "json.h"
#include <stdlib.h>

int json_parse(const char *text, size_t len, brig_json *out, struct brig_error **err)
{
    return brig_failx(err, "json_parse: not implemented");
}

void json_free(brig_json v)
{
    
}

void json_freep(brig_json *v)
{
    
}

bool json_is_object(brig_json v)
{
    return false;
}

bool json_is_array(brig_json v)
{
    return false;
}

bool json_is_string(brig_json v)
{
    return false;
}

bool json_is_null(brig_json v)
{
    return false;
}

brig_json json_get(brig_json obj, const char *key)
{
    return 0;
}

size_t json_object_len(brig_json obj)
{
    return 0;
}

const char * json_object_key(brig_json obj, size_t i)
{
    return NULL;
}

brig_json json_object_value(brig_json obj, size_t i)
{
    return 0;
}

size_t json_array_len(brig_json arr)
{
    return 0;
}

brig_json json_array_at(brig_json arr, size_t i)
{
    return 0;
}

int json_as_string(brig_json v, const char *path, const char **out, struct brig_error **err)
{
    return brig_failx(err, "json_as_string: not implemented");
}

int json_as_bool(brig_json v, const char *path, bool *out, struct brig_error **err)
{
    return brig_failx(err, "json_as_bool: not implemented");
}

int json_as_u64(brig_json v, const char *path, uint64_t *out, struct brig_error **err)
{
    return brig_failx(err, "json_as_u64: not implemented");
}

int json_as_i64(brig_json v, const char *path, int64_t *out, struct brig_error **err)
{
    return brig_failx(err, "json_as_i64: not implemented");
}

int json_as_u32(brig_json v, const char *path, uint32_t *out, struct brig_error **err)
{
    return brig_failx(err, "json_as_u32: not implemented");
}

int json_as_i32(brig_json v, const char *path, int32_t *out, struct brig_error **err)
{
    return brig_failx(err, "json_as_i32: not implemented");
}

int json_as_strv(brig_json v, const char *path, char ***out, size_t *n, struct brig_error **err)
{
    return brig_failx(err, "json_as_strv: not implemented");
}

int json_as_kv(brig_json v, const char *path, struct brig_kv **out, size_t *n, struct brig_error **err)
{
    return brig_failx(err, "json_as_kv: not implemented");
}

int json_get_string(brig_json obj, const char *path, const char *key, bool required, char **out, struct brig_error **err)
{
    return brig_failx(err, "json_get_string: not implemented");
}

int json_get_bool(brig_json obj, const char *path, const char *key, bool required, bool *out, struct brig_error **err)
{
    return brig_failx(err, "json_get_bool: not implemented");
}

int json_get_u64(brig_json obj, const char *path, const char *key, bool required, uint64_t *out, struct brig_error **err)
{
    return brig_failx(err, "json_get_u64: not implemented");
}

int json_get_i64(brig_json obj, const char *path, const char *key, bool required, int64_t *out, struct brig_error **err)
{
    return brig_failx(err, "json_get_i64: not implemented");
}

int json_get_u32(brig_json obj, const char *path, const char *key, bool required, uint32_t *out, struct brig_error **err)
{
    return brig_failx(err, "json_get_u32: not implemented");
}

struct brig_jw * jw_new(bool pretty)
{
    return NULL;
}

void jw_free(struct brig_jw *w)
{
    
}

void jw_freep(struct brig_jw **w)
{
    
}

void jw_obj_open(struct brig_jw *w)
{
    
}

void jw_obj_close(struct brig_jw *w)
{
    
}

void jw_arr_open(struct brig_jw *w)
{
    
}

void jw_arr_close(struct brig_jw *w)
{
    
}

void jw_key(struct brig_jw *w, const char *key)
{
    
}

void jw_str(struct brig_jw *w, const char *s)
{
    
}

void jw_u64(struct brig_jw *w, uint64_t v)
{
    
}

void jw_i64(struct brig_jw *w, int64_t v)
{
    
}

void jw_bool(struct brig_jw *w, bool v)
{
    
}

void jw_null(struct brig_jw *w)
{
    
}

void jw_kstr(struct brig_jw *w, const char *key, const char *s)
{
    
}

void jw_ku64(struct brig_jw *w, const char *key, uint64_t v)
{
    
}

void jw_ki64(struct brig_jw *w, const char *key, int64_t v)
{
    
}

void jw_kbool(struct brig_jw *w, const char *key, bool v)
{
    
}

const char * jw_text(struct brig_jw *w, size_t *len)
{
    return NULL;
}
