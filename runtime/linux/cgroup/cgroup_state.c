/* The container's cgroup in the state file, so later commands (kill,
 * delete, ps) find it without re-resolving paths in another process's
 * context. JSON:
 *   {"layout":"hybrid","dirs":[{"path":"/sys/fs/cgroup/memory/c1","v2":false,
 *     "controllers":"memory","created":1}, ...]}
 * "created" is how many trailing path components brig made: destroy removes
 * exactly those, never a directory brig found already there. */
#include <stdlib.h>
#include <string.h>

#include "cgroup_internal.h"
#include "../../config/json.h"
#include "../../util/cleanup.h"
#include "../../util/strutil.h"

char *cgroup_serialize(const struct brig_cgroup *cg)
{
    if (cg == NULL) return NULL;
    autojw struct brig_jw *w = jw_new(false);
    jw_obj_open(w);
    jw_kstr(w, "layout", cg_layout_name(cg->layout));
    jw_key(w, "dirs");
    jw_arr_open(w);
    for (size_t i = 0; i < cg->n_dirs; i++) {
        jw_obj_open(w);
        jw_kstr(w, "path", cg->dirs[i].path);
        jw_kbool(w, "v2", cg->dirs[i].v2);
        jw_kstr(w, "controllers", cg->dirs[i].controllers);
        jw_ku64(w, "created", cg->dirs[i].created);
        jw_obj_close(w);
    }
    jw_arr_close(w);
    jw_obj_close(w);
    return brig_strdup(jw_text(w, NULL));
}

static int load_dir(brig_json o, size_t i, struct cg_dir *d, struct brig_error **err)
{
    char path[48];
    snprintf(path, sizeof(path), "cgroup.dirs[%zu]", i);
    uint64_t created = 0;
    bool v2 = false;
    if (!json_is_object(o)) return brig_failx(err, "%s: expected an object", path);
    if (json_get_string(o, path, "path", true, &d->path, err) < 0 ||
        json_get_bool(o, path, "v2", false, &v2, err) < 0 ||
        json_get_string(o, path, "controllers", false, &d->controllers, err) < 0 ||
        json_get_u64(o, path, "created", false, &created, err) < 0)
        return -1;
    d->v2 = v2;
    if (d->controllers == NULL) d->controllers = brig_strdup("");
    if (d->path[0] != '/' || strstr(d->path, "/../") != NULL ||
        (strlen(d->path) >= 3 && strcmp(d->path + strlen(d->path) - 3, "/..") == 0))
        return brig_failx(err, "%s.path: \"%s\" is not a clean absolute path", path, d->path);
    if (created > 64) return brig_failx(err, "%s.created: %llu is out of range", path,
                                        (unsigned long long)created);
    d->created = (unsigned)created;
    return 0;
}

int cgroup_load(const char *serialized, struct brig_cgroup **out, struct brig_error **err)
{
    autojson brig_json root = NULL;
    if (serialized == NULL) return brig_failx(err, "cgroup state: empty");
    if (json_parse(serialized, strlen(serialized), &root, err) < 0)
        return brig_wrap(err, "cgroup state");
    autofree char *layout = NULL;
    if (json_get_string(root, "cgroup", "layout", true, &layout, err) < 0) return -1;
    struct brig_cgroup *cg = brig_calloc(1, sizeof(*cg));
    cg->v2_fd = -1;
    if (strcmp(layout, "unified") == 0) cg->layout = CG_UNIFIED;
    else if (strcmp(layout, "hybrid") == 0) cg->layout = CG_HYBRID;
    else if (strcmp(layout, "legacy") == 0) cg->layout = CG_LEGACY;
    else {
        cgroup_free(cg);
        return brig_failx(err, "cgroup.layout: unknown layout \"%s\"", layout);
    }
    brig_json dirs = json_get(root, "dirs");
    size_t n = json_array_len(dirs);
    cg->dirs = brig_calloc(n, sizeof(*cg->dirs));
    for (size_t i = 0; i < n; i++) {
        cg->n_dirs = i + 1;
        if (load_dir(json_array_at(dirs, i), i, &cg->dirs[i], err) < 0) {
            cgroup_free(cg);
            return -1;
        }
    }
    *out = cg;
    return 0;
}
