/* The image's JSON documents (OCI image-spec index, manifest and config;
 * docker save's manifest.json), parsed from verified text into plain
 * structs. Pure: fuzzed by tests/fuzz/fuzz_image_json.c. Unknown keys are
 * ignored, as the image-spec asks; a known key of the wrong type is an
 * error naming its JSON path. */
#include "import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/json.h"
#include "util/cleanup.h"
#include "util/strutil.h"

void image_desc_clear(struct image_desc *d)
{
    free(d->media_type);
    free(d->ref);
    free(d->name);
    free(d->os);
    free(d->arch);
    free(d->variant);
    memset(d, 0, sizeof(*d));
}

static int image_parse_desc(brig_json v, const char *path, struct image_desc *d,
                            struct brig_error **err)
{
    TRY(json_as_object(v, path, err));
    autofree char *digest = NULL;
    TRY(json_get_string(v, path, "mediaType", false, &d->media_type, err));
    TRY(json_get_string(v, path, "digest", true, &digest, err));
    if (judge_digest(digest, d->hex, err) < 0) return brig_wrap(err, "%s.digest", path);
    TRY(json_get_u64(v, path, "size", true, &d->size, err));
    char p[256];
    brig_json ann = json_get(v, "annotations");
    if (ann != NULL && !json_is_null(ann)) {
        json_path_join(p, sizeof(p), path, "annotations");
        TRY(json_as_object(ann, p, err));
        TRY(json_get_string(ann, p, "org.opencontainers.image.ref.name", false, &d->ref, err));
        TRY(json_get_string(ann, p, "io.containerd.image.name", false, &d->name, err));
    }
    brig_json plat = json_get(v, "platform");
    if (plat != NULL && !json_is_null(plat)) {
        json_path_join(p, sizeof(p), path, "platform");
        TRY(json_as_object(plat, p, err));
        TRY(json_get_string(plat, p, "os", false, &d->os, err));
        TRY(json_get_string(plat, p, "architecture", false, &d->arch, err));
        TRY(json_get_string(plat, p, "variant", false, &d->variant, err));
    }
    return 0;
}

static int image_parse_descs(brig_json arr, const char *path, struct image_desc **out,
                             size_t *n, struct brig_error **err)
{
    *out = NULL;
    *n = 0;
    TRY(json_as_array(arr, path, err));
    size_t len = json_array_len(arr);
    *out = brig_calloc(len + 1, sizeof(**out));
    for (size_t i = 0; i < len; i++) {
        char p[256];
        snprintf(p, sizeof(p), "%s[%zu]", path, i);
        *n = i + 1;
        TRY(image_parse_desc(json_array_at(arr, i), p, &(*out)[i], err));
    }
    return 0;
}

int image_parse_index(const char *text, size_t len, struct image_index *out, struct brig_error **err)
{
    memset(out, 0, sizeof(*out));
    autojson brig_json doc = NULL;
    TRY(json_parse(text, len, &doc, err));
    TRY(json_as_object(doc, "index", err));
    brig_json m = json_get(doc, "manifests");
    if (m == NULL) return brig_failx(err, "index.manifests: required");
    return image_parse_descs(m, "manifests", &out->m, &out->n, err);
}

void image_index_free(struct image_index *ix)
{
    for (size_t i = 0; i < ix->n; i++) image_desc_clear(&ix->m[i]);
    free(ix->m);
    memset(ix, 0, sizeof(*ix));
}

int image_parse_manifest(const char *text, size_t len, struct image_manifest *out,
                         struct brig_error **err)
{
    memset(out, 0, sizeof(*out));
    autojson brig_json doc = NULL;
    TRY(json_parse(text, len, &doc, err));
    TRY(json_as_object(doc, "manifest", err));
    brig_json c = json_get(doc, "config");
    if (c == NULL) return brig_failx(err, "manifest.config: required");
    TRY(image_parse_desc(c, "config", &out->config, err));
    brig_json l = json_get(doc, "layers");
    if (l == NULL) return brig_failx(err, "manifest.layers: required");
    return image_parse_descs(l, "layers", &out->layers, &out->n, err);
}

void image_manifest_free(struct image_manifest *m)
{
    image_desc_clear(&m->config);
    for (size_t i = 0; i < m->n; i++) image_desc_clear(&m->layers[i]);
    free(m->layers);
    memset(m, 0, sizeof(*m));
}

int image_parse_docker_manifest(const char *text, size_t len, struct docker_manifest *out,
                                struct brig_error **err)
{
    memset(out, 0, sizeof(*out));
    autojson brig_json doc = NULL;
    TRY(json_parse(text, len, &doc, err));
    TRY(json_as_array(doc, "manifest.json", err));
    size_t n = json_array_len(doc);
    out->img = brig_calloc(n + 1, sizeof(*out->img));
    for (size_t i = 0; i < n; i++) {
        char p[64];
        snprintf(p, sizeof(p), "manifest.json[%zu]", i);
        brig_json v = json_array_at(doc, i);
        struct docker_image *d = &out->img[i];
        out->n = i + 1;
        TRY(json_as_object(v, p, err));
        TRY(json_get_string(v, p, "Config", true, &d->config, err));
        brig_json tags = json_get(v, "RepoTags");
        if (tags != NULL && !json_is_null(tags)) TRY(json_as_strv(tags, "RepoTags", &d->tags, NULL, err));
        brig_json layers = json_get(v, "Layers");
        if (layers == NULL) return brig_failx(err, "%s.Layers: required", p);
        TRY(json_as_strv(layers, "Layers", &d->layers, NULL, err));
    }
    return 0;
}

void docker_manifest_free(struct docker_manifest *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->img[i].config);
        brig_strv_free(m->img[i].tags);
        brig_strv_free(m->img[i].layers);
    }
    free(m->img);
    memset(m, 0, sizeof(*m));
}

static int image_get_strv(brig_json obj, const char *key, char ***out, struct brig_error **err)
{
    brig_json v = json_get(obj, key);
    if (v == NULL || json_is_null(v)) return 0;
    char p[64];
    json_path_join(p, sizeof(p), "config", key);
    return json_as_strv(v, p, out, NULL, err);
}

int image_parse_config(const char *text, size_t len, struct image_config *out,
                       struct brig_error **err)
{
    memset(out, 0, sizeof(*out));
    autojson brig_json doc = NULL;
    TRY(json_parse(text, len, &doc, err));
    TRY(json_as_object(doc, "image config", err));
    TRY(json_get_string(doc, "", "os", false, &out->os, err));
    TRY(json_get_string(doc, "", "architecture", false, &out->arch, err));
    TRY(json_get_string(doc, "", "variant", false, &out->variant, err));
    brig_json c = json_get(doc, "config");
    if (c != NULL && !json_is_null(c)) {
        TRY(json_as_object(c, "config", err));
        TRY(image_get_strv(c, "Env", &out->env, err));
        TRY(image_get_strv(c, "Entrypoint", &out->entrypoint, err));
        TRY(image_get_strv(c, "Cmd", &out->cmd, err));
        TRY(json_get_string(c, "config", "WorkingDir", false, &out->working_dir, err));
        TRY(json_get_string(c, "config", "User", false, &out->user, err));
    }
    brig_json r = json_get(doc, "rootfs");
    if (r == NULL || json_is_null(r)) return 0;
    TRY(json_as_object(r, "rootfs", err));
    brig_json ids = json_get(r, "diff_ids");
    if (ids == NULL || json_is_null(ids)) return 0;
    autostrv char **v = NULL;
    size_t n = 0;
    TRY(json_as_strv(ids, "rootfs.diff_ids", &v, &n, err));
    out->diff_ids = brig_calloc(n + 1, sizeof(*out->diff_ids));
    for (size_t i = 0; i < n; i++) {
        if (judge_digest(v[i], out->diff_ids[i], err) < 0)
            return brig_wrap(err, "rootfs.diff_ids[%zu]", i);
        out->n_diff_ids = i + 1;
    }
    return 0;
}

void image_config_free(struct image_config *c)
{
    brig_strv_free(c->env);
    brig_strv_free(c->entrypoint);
    brig_strv_free(c->cmd);
    free(c->working_dir);
    free(c->user);
    free(c->os);
    free(c->arch);
    free(c->variant);
    free(c->diff_ids);
    memset(c, 0, sizeof(*c));
}

static void image_write_strv(struct brig_jw *w, const char *key, char **v)
{
    jw_key(w, key);
    if (v == NULL) {
        jw_null(w);
        return;
    }
    jw_arr_open(w);
    for (size_t i = 0; v[i] != NULL; i++) jw_str(w, v[i]);
    jw_arr_close(w);
}

char *image_config_json(const struct image_config *c, const char *manifest_hex, size_t *len)
{
    autojw struct brig_jw *w = jw_new(true);
    jw_obj_open(w);
    image_write_strv(w, "Env", c->env);
    image_write_strv(w, "Entrypoint", c->entrypoint);
    image_write_strv(w, "Cmd", c->cmd);
    jw_kstr(w, "WorkingDir", c->working_dir != NULL ? c->working_dir : "");
    jw_kstr(w, "User", c->user != NULL ? c->user : "");
    jw_kstr(w, "os", c->os);
    jw_kstr(w, "architecture", c->arch);
    if (manifest_hex != NULL && manifest_hex[0] != '\0') {
        char d[80];
        snprintf(d, sizeof(d), "sha256:%s", manifest_hex);
        jw_kstr(w, "manifestDigest", d);
    }
    jw_obj_close(w);
    const char *t = jw_text(w, len);
    return t != NULL ? brig_strdup(t) : NULL;
}
