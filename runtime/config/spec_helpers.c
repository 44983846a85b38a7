/* Path-aware member readers shared by the spec_*.c parsers. */
#include "spec_internal.h"

#include <string.h>

#include "../util/strutil.h"

int sp_member(brig_json obj, const char *path, const char *key, bool required, brig_json *v,
              char p[SP_PATH_MAX], struct brig_error **err)
{
    json_path_join(p, SP_PATH_MAX, path, key);
    *v = json_get(obj, key);
    /* null is how Go encoders write an absent pointer: treat it as absent. */
    if (*v != NULL && !json_is_null(*v)) return 0;
    *v = NULL;
    if (required) return brig_failx(err, "%s: required", p);
    return 1;
}

int sp_get_object(brig_json obj, const char *path, const char *key, bool required,
                  brig_json *v, char p[SP_PATH_MAX], struct brig_error **err)
{
    int r = sp_member(obj, path, key, required, v, p, err);
    if (r != 0) return r;
    return json_as_object(*v, p, err);
}

int sp_get_array(brig_json obj, const char *path, const char *key, bool required,
                 brig_json *v, char p[SP_PATH_MAX], struct brig_error **err)
{
    int r = sp_member(obj, path, key, required, v, p, err);
    if (r != 0) return r;
    return json_as_array(*v, p, err);
}

int sp_get_strv(brig_json obj, const char *path, const char *key, char ***out, size_t *n,
                struct brig_error **err)
{
    char p[SP_PATH_MAX];
    brig_json v;
    int r = sp_member(obj, path, key, false, &v, p, err);
    if (r != 0) return r;
    return json_as_strv(v, p, out, n, err);
}

int sp_get_abs_paths(brig_json obj, const char *path, const char *key, char ***out, size_t *n,
                     struct brig_error **err)
{
    int r = sp_get_strv(obj, path, key, out, n, err);
    if (r != 0) return r;
    for (size_t i = 0; i < *n; i++) {
        if ((*out)[i][0] != '/') {
            char p[SP_PATH_MAX], pi[SP_PATH_MAX];
            sp_key(p, path, key);
            sp_idx(pi, p, i);
            return brig_failx(err, "%s: must be an absolute path", pi);
        }
    }
    return 0;
}

int sp_get_u16(brig_json obj, const char *path, const char *key, bool required, uint16_t *out,
               struct brig_error **err)
{
    char p[SP_PATH_MAX];
    brig_json v;
    int r = sp_member(obj, path, key, required, &v, p, err);
    if (r != 0) return r;
    uint32_t x;
    if (json_as_u32(v, p, &x, NULL) < 0 || x > UINT16_MAX) {
        char got[96];
        json_describe(v, got, sizeof(got));
        return brig_failx(err, "%s: expected an unsigned 16-bit integer, got %s", p, got);
    }
    *out = (uint16_t)x;
    return 0;
}

int sp_get_opt_u64(brig_json obj, const char *path, const char *key, struct brig_opt_u64 *out,
                   struct brig_error **err)
{
    int r = json_get_u64(obj, path, key, false, &out->v, err);
    if (r < 0) return -1;
    out->set = r == 0;
    return 0;
}

int sp_get_opt_i64(brig_json obj, const char *path, const char *key, struct brig_opt_i64 *out,
                   struct brig_error **err)
{
    int r = json_get_i64(obj, path, key, false, &out->v, err);
    if (r < 0) return -1;
    out->set = r == 0;
    return 0;
}

/* config-linux.md "User namespace mappings". */
int sp_parse_id_mappings(brig_json arr, const char *path, struct brig_id_mapping **out,
                         size_t *n, struct brig_error **err)
{
    TRY(json_as_array(arr, path, err));
    size_t len = json_array_len(arr);
    *out = brig_calloc(len, sizeof(**out));
    *n = len;
    for (size_t i = 0; i < len; i++) {
        char p[SP_PATH_MAX];
        sp_idx(p, path, i);
        brig_json m = json_array_at(arr, i);
        struct brig_id_mapping *o = &(*out)[i];
        TRY(json_as_object(m, p, err));
        TRY(json_get_u32(m, p, "containerID", true, &o->container_id, err));
        TRY(json_get_u32(m, p, "hostID", true, &o->host_id, err));
        TRY(json_get_u32(m, p, "size", true, &o->size, err));
        /* The kernel refuses both, with EINVAL and no hint of which line. */
        if (o->size == 0) return brig_failx(err, "%s.size: must be greater than 0", p);
        if ((uint64_t)o->container_id + o->size - 1 > UINT32_MAX ||
            (uint64_t)o->host_id + o->size - 1 > UINT32_MAX)
            return brig_failx(err, "%s: range goes past the 32-bit id space", p);
    }
    return 0;
}

int sp_lookup(const struct sp_name *table, const char *name, long *out)
{
    for (size_t i = 0; table[i].name != NULL; i++) {
        if (strcmp(table[i].name, name) == 0) {
            *out = table[i].value;
            return 0;
        }
    }
    return -1;
}
