/* From an image layout to one verified image: which manifest (--ref,
 * --platform), its config, its layers. Every JSON blob is read whole and
 * its sha256 checked before it is parsed; layer blobs are checked by
 * layer_apply's caller just before they are unpacked. The layout's own
 * index.json / manifest.json have no digest to check: they only point at
 * blobs that do. Every blob named is checked present before any work. */
#include "import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/strutil.h"

#define SELECT_MAX_JSON (16u << 20)   /* a manifest or config is KiBs */
#define SELECT_MAX_DEPTH 4            /* index -> index -> ... -> manifest */

#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"

struct select_platform {
    char os[32], arch[32], variant[32];
};

static int select_parse_platform(const char *s, struct select_platform *p, struct brig_error **err)
{
    memset(p, 0, sizeof(*p));
    if (sscanf(s, "%31[^/]/%31[^/]/%31s", p->os, p->arch, p->variant) < 2)
        return brig_failx(err, "--platform %.64s: expected OS/ARCH[/VARIANT]", s);
    return 0;
}

static bool select_platform_ok(const struct select_platform *p, const char *os, const char *arch,
                               const char *variant)
{
    if (os != NULL && strcmp(os, p->os) != 0) return false;
    if (arch != NULL && strcmp(arch, p->arch) != 0) return false;
    if (p->variant[0] != '\0' && variant != NULL && strcmp(variant, p->variant) != 0) return false;
    return true;
}

static void select_blob_name(char *buf, size_t len, const char *hex)
{
    snprintf(buf, len, "blobs/sha256/%s", hex);
}

static int select_read_blob(struct image_src *s, const struct image_desc *d, const char *what,
                            char **out, size_t *len, struct brig_error **err)
{
    char name[96];
    select_blob_name(name, sizeof(name), d->hex);
    if (!src_has(s, name)) return brig_failx(err, "%s sha256:%s: blob missing from the image", what, d->hex);
    if (d->size > SELECT_MAX_JSON) return brig_failx(err, "%s sha256:%s: size %llu is too large", what, d->hex,
                                                   (unsigned long long)d->size);
    if (src_read_verified(s, name, d->hex, SELECT_MAX_JSON, out, len, err) < 0)
        return brig_wrap(err, "%s", what);
    if (*len != d->size)
        return brig_failx(err, "%s sha256:%s: size %zu, the descriptor says %llu", what, d->hex, *len,
                          (unsigned long long)d->size);
    return 0;
}

static bool select_ref_ok(const struct image_desc *d, const char *ref)
{
    return ref == NULL || (d->ref != NULL && strcmp(d->ref, ref) == 0) ||
           (d->name != NULL && strcmp(d->name, ref) == 0);
}

/* The one manifest descriptor of ix (and nested indexes) for ref and p. */
static int select_in_index(struct image_src *s, const struct image_index *ix, const char *ref,
                           const struct select_platform *p, int depth, struct image_desc *out,
                           int *found, struct brig_error **err)
{
    for (size_t i = 0; i < ix->n; i++) {
        const struct image_desc *d = &ix->m[i];
        if (!select_ref_ok(d, ref)) continue;
        if (!select_platform_ok(p, d->os, d->arch, d->variant)) continue;
        bool nested = d->media_type != NULL &&
                      (strcmp(d->media_type, MT_OCI_INDEX) == 0 || strcmp(d->media_type, MT_DOCKER_LIST) == 0);
        if (nested) {
            if (depth >= SELECT_MAX_DEPTH) return brig_failx(err, "indexes nested deeper than %d", SELECT_MAX_DEPTH);
            autofree char *text = NULL;
            size_t len;
            TRY(select_read_blob(s, d, "index", &text, &len, err));
            struct image_index sub;
            int r = image_parse_index(text, len, &sub, err);
            if (r == 0) r = select_in_index(s, &sub, NULL, p, depth + 1, out, found, err);
            image_index_free(&sub);
            if (r < 0) return brig_wrap(err, "index sha256:%s", d->hex);
            continue;
        }
        if (++*found > 1) continue;
        *out = *d;
        out->media_type = NULL, out->ref = NULL, out->name = NULL;
        out->os = out->arch = out->variant = NULL;
    }
    return 0;
}

static bool select_layer_type_ok(const char *mt)
{
    static const char *const ok[] = {
        "application/vnd.oci.image.layer.v1.tar",
        "application/vnd.oci.image.layer.v1.tar+gzip",
        "application/vnd.oci.image.layer.v1.tar+zstd",
        "application/vnd.oci.image.layer.nondistributable.v1.tar",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
        "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
        "application/vnd.docker.image.rootfs.diff.tar.gzip",
        "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
    };
    if (mt == NULL) return true;   /* optional in a descriptor; the content decides */
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (strcmp(mt, ok[i]) == 0) return true;
    return false;
}

static void select_plan_layers(struct image_plan *out, size_t n)
{
    out->n_layers = n;
    out->layer_files = brig_calloc(n + 1, sizeof(char *));
    out->layer_hex = brig_calloc(n + 1, sizeof(*out->layer_hex));
    out->layer_size = brig_calloc(n + 1, sizeof(uint64_t));
}

static int select_config_checks(struct image_plan *out, const struct select_platform *p,
                                struct brig_error **err)
{
    struct image_config *c = &out->config;
    if (!select_platform_ok(p, c->os, c->arch, c->variant))
        return brig_failx(err, "the image is %s/%s%s%s, not the --platform asked for (%s/%s%s%s)",
                          c->os ? c->os : "?", c->arch ? c->arch : "?", c->variant ? "/" : "",
                          c->variant ? c->variant : "", p->os, p->arch, p->variant[0] ? "/" : "", p->variant);
    if (c->diff_ids != NULL && c->n_diff_ids != out->n_layers)
        return brig_failx(err, "the config lists %zu diff_ids for %zu layers", c->n_diff_ids, out->n_layers);
    return 0;
}

static int select_oci(struct image_src *s, const char *ref, const struct select_platform *p,
                      struct image_plan *out, struct brig_error **err)
{
    autofree char *text = NULL;
    size_t len;
    TRY(src_read_verified(s, "index.json", NULL, SELECT_MAX_JSON, &text, &len, err));
    struct image_index ix;
    int r = image_parse_index(text, len, &ix, err);
    struct image_desc md = {0};
    int found = 0;
    if (r == 0) r = select_in_index(s, &ix, ref, p, 0, &md, &found, err);
    image_index_free(&ix);
    if (r < 0) return brig_wrap(err, "index.json");
    if (found == 0)
        return brig_failx(err, "index.json: no image%s%s for %s/%s", ref ? " named " : "", ref ? ref : "", p->os, p->arch);
    if (found > 1)
        return brig_failx(err, "index.json: %d images match; pick one with --ref", found);

    autofree char *mtext = NULL;
    TRY(select_read_blob(s, &md, "manifest", &mtext, &len, err));
    memcpy(out->manifest_hex, md.hex, sizeof(md.hex));
    struct image_manifest m;
    r = image_parse_manifest(mtext, len, &m, err);
    if (r < 0) {
        image_manifest_free(&m);
        return brig_wrap(err, "manifest sha256:%s", md.hex);
    }
    select_plan_layers(out, m.n);
    for (size_t i = 0; i < m.n && r == 0; i++) {
        char name[96];
        select_blob_name(name, sizeof(name), m.layers[i].hex);
        out->layer_files[i] = brig_strdup(name);
        memcpy(out->layer_hex[i], m.layers[i].hex, 65);
        out->layer_size[i] = m.layers[i].size;
        if (!select_layer_type_ok(m.layers[i].media_type))
            r = brig_failx(err, "layers[%zu]: media type %.100s is not a layer brig can unpack", i,
                           m.layers[i].media_type);
        else if (!src_has(s, name))
            r = brig_failx(err, "layers[%zu] sha256:%s: blob missing from the image", i, m.layers[i].hex);
    }
    autofree char *ctext = NULL;
    if (r == 0) r = select_read_blob(s, &m.config, "config", &ctext, &len, err);
    image_manifest_free(&m);
    if (r < 0) return -1;
    TRY(image_parse_config(ctext, len, &out->config, err));
    return select_config_checks(out, p, err);
}

/* docker and podman store tags fully qualified: "busybox" is
 * docker.io/library/busybox:latest (docker), localhost/busybox:latest
 * (podman's local images). */
static bool select_tag_ok(char **tags, const char *ref)
{
    if (ref == NULL) return true;
    const char *last = strrchr(ref, '/');
    bool tagged = strchr(last != NULL ? last : ref, ':') != NULL || strchr(ref, '@') != NULL;
    autofree char *full = brig_asprintf("%s%s", ref, tagged ? "" : ":latest");
    static const char *const prefixes[] = {"", "docker.io/", "docker.io/library/", "localhost/"};
    for (size_t i = 0; tags != NULL && tags[i] != NULL; i++)
        for (size_t j = 0; j < sizeof(prefixes) / sizeof(prefixes[0]); j++) {
            size_t pl = strlen(prefixes[j]);
            if (strncmp(tags[i], prefixes[j], pl) == 0 && strcmp(tags[i] + pl, full) == 0) return true;
        }
    return false;
}

/* "<hex>.json" or "blobs/sha256/<hex>" (docker save names files by digest). */
static bool select_hex_of_name(const char *name, char hex[65])
{
    const char *b = strrchr(name, '/');
    b = b != NULL ? b + 1 : name;
    size_t n = strlen(b);
    if (n < 64 || strspn(b, "0123456789abcdef") != 64) return false;
    if (n != 64 && strcmp(b + 64, ".json") != 0) return false;
    memcpy(hex, b, 64);
    hex[64] = '\0';
    return true;
}

static int select_docker(struct image_src *s, const char *ref, const struct select_platform *p,
                         struct image_plan *out, struct brig_error **err)
{
    autofree char *text = NULL;
    size_t len;
    TRY(src_read_verified(s, "manifest.json", NULL, SELECT_MAX_JSON, &text, &len, err));
    struct docker_manifest dm;
    if (image_parse_docker_manifest(text, len, &dm, err) < 0) {
        docker_manifest_free(&dm);
        return brig_wrap(err, "manifest.json");
    }
    struct docker_image *img = NULL;
    int found = 0;
    for (size_t i = 0; i < dm.n; i++)
        if (select_tag_ok(dm.img[i].tags, ref) && found++ == 0) img = &dm.img[i];
    int r = 0;
    char chex[65];
    autofree char *ctext = NULL;
    if (found == 0)
        r = brig_failx(err, "manifest.json: no image%s%s", ref ? " tagged " : "", ref ? ref : "");
    else if (found > 1)
        r = brig_failx(err, "manifest.json: %d images; pick one with --ref", found);
    else if (!select_hex_of_name(img->config, chex))
        r = brig_failx(err, "manifest.json: Config %.100s is not named by its digest: cannot verify it", img->config);
    else if (!src_has(s, img->config))
        r = brig_failx(err, "manifest.json: Config %.100s is missing from the archive", img->config);
    else
        r = src_read_verified(s, img->config, chex, SELECT_MAX_JSON, &ctext, &len, err);
    if (r == 0) r = image_parse_config(ctext, len, &out->config, err);
    if (r == 0) {
        size_t n = brig_strv_len(img->layers);
        select_plan_layers(out, n);
        if (out->config.n_diff_ids != n)
            r = brig_failx(err, "config lists %zu diff_ids for %zu layers", out->config.n_diff_ids, n);
        for (size_t i = 0; i < n && r == 0; i++) {
            out->layer_files[i] = brig_strdup(img->layers[i]);
            out->layer_size[i] = UINT64_MAX;
            /* a blob named by its digest; else a legacy layer.tar, which is
             * the uncompressed tar: its sha256 is the diff_id */
            if (!select_hex_of_name(img->layers[i], out->layer_hex[i]))
                memcpy(out->layer_hex[i], out->config.diff_ids[i], 65);
            if (!src_has(s, img->layers[i]))
                r = brig_failx(err, "manifest.json: layer %.100s is missing from the archive", img->layers[i]);
        }
    }
    docker_manifest_free(&dm);
    if (r < 0) return -1;
    return select_config_checks(out, p, err);
}

int image_select(struct image_src *s, const char *ref, const char *platform,
                 struct image_plan *out, struct brig_error **err)
{
    memset(out, 0, sizeof(*out));
    struct select_platform p;
    TRY(select_parse_platform(platform, &p, err));
    if (src_has(s, "index.json")) return select_oci(s, ref, &p, out, err);
    if (src_has(s, "manifest.json")) return select_docker(s, ref, &p, out, err);
    return brig_failx(err, "neither index.json (an OCI image layout) nor manifest.json (docker save) in the image");
}

void image_plan_free(struct image_plan *p)
{
    image_config_free(&p->config);
    brig_strv_free(p->layer_files);
    free(p->layer_hex);
    free(p->layer_size);
    memset(p, 0, sizeof(*p));
}
