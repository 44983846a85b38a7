/* Shared helpers of the spec_*.c files (config.json -> struct brig_spec).
 * Not for use outside runtime/config/. */
#ifndef BRIG_SPEC_INTERNAL_H
#define BRIG_SPEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "json.h"
#include "spec.h"

/* Longest JSON path kept in messages; longer ones are cut (keys are the
 * user's, so a path can be arbitrarily long). */
#define SP_PATH_MAX 512

/* Paths of members and elements: "linux.seccomp" + "syscalls" + [3]. */
#define sp_key(buf, path, key) json_path_join((buf), sizeof(buf), (path), (key))
#define sp_idx(buf, path, i) snprintf((buf), sizeof(buf), "%s[%zu]", (path), (size_t)(i))

/* Member `key` of obj: 1 when absent or null, 0 when present (*v set, p
 * holds "path.key"), -1 when required and absent. */
int sp_member(brig_json obj, const char *path, const char *key, bool required, brig_json *v,
              char p[SP_PATH_MAX], struct brig_error **err);

/* Member that must be an object / array when present. Same returns. */
int sp_get_object(brig_json obj, const char *path, const char *key, bool required,
                  brig_json *v, char p[SP_PATH_MAX], struct brig_error **err);
int sp_get_array(brig_json obj, const char *path, const char *key, bool required,
                 brig_json *v, char p[SP_PATH_MAX], struct brig_error **err);

/* Array of strings member; absent leaves *out NULL and *n 0. */
int sp_get_strv(brig_json obj, const char *path, const char *key, char ***out, size_t *n,
                struct brig_error **err);
/* Same, and every element must be an absolute path. */
int sp_get_abs_paths(brig_json obj, const char *path, const char *key, char ***out, size_t *n,
                     struct brig_error **err);
/* Unsigned 16-bit member (blkio weights). */
int sp_get_u16(brig_json obj, const char *path, const char *key, bool required, uint16_t *out,
               struct brig_error **err);
/* Optional scalars straight into brig_opt_*. */
int sp_get_opt_u64(brig_json obj, const char *path, const char *key, struct brig_opt_u64 *out,
                   struct brig_error **err);
int sp_get_opt_i64(brig_json obj, const char *path, const char *key, struct brig_opt_i64 *out,
                   struct brig_error **err);

/* uidMappings/gidMappings arrays (linux.* and mounts[i].*). */
int sp_parse_id_mappings(brig_json arr, const char *path, struct brig_id_mapping **out,
                         size_t *n, struct brig_error **err);

/* Map a name through a NULL-terminated table; -1 if unknown. */
struct sp_name {
    const char *name;
    long value;
};
int sp_lookup(const struct sp_name *table, const char *name, long *out);

/* Sections, each in the file of its concern. */
int spec_parse_process(brig_json v, struct brig_process *p, struct brig_error **err);
int spec_parse_linux(brig_json v, struct brig_linux *l, struct brig_error **err);
int spec_parse_resources(brig_json v, const char *path, struct brig_resources *r,
                         struct brig_error **err);
int spec_parse_seccomp(brig_json v, const char *path, struct brig_seccomp *s,
                       struct brig_error **err);
int spec_parse_mempolicy(brig_json v, const char *path, struct brig_mempolicy *m,
                         struct brig_error **err);

void spec_free_process(struct brig_process *p);
void spec_free_linux(struct brig_linux *l);
void spec_free_resources(struct brig_resources *r);
void spec_free_seccomp(struct brig_seccomp *s);

#endif
