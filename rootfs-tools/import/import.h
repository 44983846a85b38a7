/* brig-rootfs import: an OCI image layout (directory or tar), a
 * docker/podman save archive, or a plain root filesystem tar, unpacked into
 * a new rootfs. The steps, in the order import_run takes them (import.c):
 *
 *   plain_classify -> a tar IMAGE: an image, a plain rootfs tar (unpacked
 *                     as one layer, whiteouts not interpreted), or neither
 *                     (plain.c)
 *   src_open       -> the image's files by name (source.c)
 *   image_select   -> index/manifest (or manifest.json) -> config + layers,
 *                     every JSON blob's sha256 checked before it is parsed
 *                     (image.c parses, select.c picks and verifies)
 *   layer_apply    -> each layer's sha256 checked, then unpacked through
 *                     fds inside the scratch root (layer.c, judge.c)
 *   import_publish -> image config written, scratch renamed onto DEST */
#ifndef BRIG_IMPORT_H
#define BRIG_IMPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

/* ---- judge.c: pure judgements of what an image names ------------------- */

/* An entry name made relative and clean ("./a//b/" -> "a/b"; "." -> "").
 * Refused: absolute names, any ".." component, names longer than PATH_MAX.
 * out has room for PATH_MAX bytes. */
int judge_entry_path(const char *name, char *out, size_t outlen, struct brig_error **err);

enum judge_wh { JUDGE_WH_NONE, JUDGE_WH_FILE, JUDGE_WH_OPAQUE, JUDGE_WH_IGNORE };
/* What a clean entry path is to the OCI layer rules: a whiteout of
 * dir/NAME (target = "dir/NAME"), an opaque marker of dir (target = "dir",
 * "" for the root), an AUFS-internal ".wh..wh.*" entry to skip, or a plain
 * entry. A whiteout naming "", "." or ".." is refused. */
int judge_whiteout(const char *clean, enum judge_wh *kind, char *target, size_t tlen,
                   struct brig_error **err);

#define JUDGE_ALLOW_DEVICES 1
#define JUDGE_KEEP_SETUID 2
/* A plain rootfs tar, not an image layer: ".wh." names are files. */
#define JUDGE_PLAIN_TAR 4
/* The mode an entry is created with: device nodes refused unless
 * JUDGE_ALLOW_DEVICES; setuid/setgid bits cleared (*stripped = true)
 * unless JUDGE_KEEP_SETUID; sockets refused. */
int judge_mode(mode_t mode, int flags, mode_t *out, bool *stripped, struct brig_error **err);

/* "sha256:<64 lower-case hex>" -> hex (65 bytes). Other algorithms refused. */
int judge_digest(const char *digest, char hex[65], struct brig_error **err);
/* "123", "10K", "100M", "4G", "1T" (powers of 1024) -> bytes. */
int judge_size(const char *s, uint64_t *out);

/* ---- image.c: the JSON documents (pure: text in, structs out) ---------- */

struct image_desc {
    char *media_type;
    char hex[65];        /* sha256 */
    uint64_t size;
    char *ref;           /* org.opencontainers.image.ref.name, or NULL */
    char *name;          /* io.containerd.image.name (docker save >= 25), or NULL */
    char *os, *arch, *variant;
};
void image_desc_clear(struct image_desc *d);

/* An index (index.json or a nested image index): its manifests. */
struct image_index {
    struct image_desc *m;
    size_t n;
};
int image_parse_index(const char *text, size_t len, struct image_index *out, struct brig_error **err);
void image_index_free(struct image_index *ix);

/* An image manifest: config + layers. */
struct image_manifest {
    struct image_desc config;
    struct image_desc *layers;
    size_t n;
};
int image_parse_manifest(const char *text, size_t len, struct image_manifest *out,
                         struct brig_error **err);
void image_manifest_free(struct image_manifest *m);

/* docker save's manifest.json: [{Config, RepoTags, Layers}]. */
struct docker_image {
    char *config;        /* file name in the archive */
    char **tags;         /* NULL-terminated */
    char **layers;       /* NULL-terminated file names */
};
struct docker_manifest {
    struct docker_image *img;
    size_t n;
};
int image_parse_docker_manifest(const char *text, size_t len, struct docker_manifest *out,
                                struct brig_error **err);
void docker_manifest_free(struct docker_manifest *m);

/* The image config: what a bundle needs, the platform, the diff_ids. */
struct image_config {
    char **env, **entrypoint, **cmd;   /* NULL-terminated, or NULL when absent */
    char *working_dir, *user;
    char *os, *arch, *variant;
    char (*diff_ids)[65];
    size_t n_diff_ids;
};
int image_parse_config(const char *text, size_t len, struct image_config *out,
                       struct brig_error **err);
void image_config_free(struct image_config *c);
/* The written form (see docs/rootfs.md): the OCI config's "config" keys. */
char *image_config_json(const struct image_config *c, const char *manifest_hex, size_t *len);

/* ---- source.c: the image's files, from a directory or a tar ------------ */

struct image_src;
/* path: a directory, or a tar (plain or compressed) whose files are copied
 * into unnamed O_TMPFILE files in tmp_dirfd, at most max_bytes of them. */
int src_open(const char *path, int tmp_dirfd, uint64_t max_bytes, struct image_src **out,
             struct brig_error **err);
void src_free(struct image_src *s);
bool src_has(struct image_src *s, const char *name);
/* A regular file of the image, opened for reading (the caller closes). */
int src_open_file(struct image_src *s, const char *name, struct brig_error **err);
/* The whole file, of at most max bytes, whose sha256 must be hex (NULL:
 * not checked, for the layout's own index.json / manifest.json). */
int src_read_verified(struct image_src *s, const char *name, const char *hex, size_t max,
                      char **out, size_t *len, struct brig_error **err);
/* fd's sha256 (from offset 0 to end) must be hex and its size (if
 * want_size != UINT64_MAX) want_size; fd is left at offset 0. */
int src_verify_fd(int fd, const char *hex, uint64_t want_size, uint64_t max,
                  struct brig_error **err);

/* ---- select.c: from the layout to one verified image ------------------- */

struct image_plan {
    struct image_config config;
    char manifest_hex[65];   /* "" for a legacy docker archive */
    char **layer_files;      /* NULL-terminated names inside the source */
    char (*layer_hex)[65];   /* what each layer file's sha256 must be */
    uint64_t *layer_size;    /* and its size (UINT64_MAX: not known) */
    size_t n_layers;
};
int image_select(struct image_src *s, const char *ref, const char *platform,
                 struct image_plan *out, struct brig_error **err);
void image_plan_free(struct image_plan *p);

/* ---- plain.c: what a tar IMAGE is; the tar reader ----------------------- */

/* tar with the decompressors libarchive has built in (gzip, zstd, xz,
 * bzip2), never one it would run as a program. NULL: out of memory. */
struct archive *import_tar_reader(void);
enum plain_kind { PLAIN_IMAGE, PLAIN_ROOTFS, PLAIN_NEITHER };
/* From fd's entries, read until one decides: a top-level index.json or
 * manifest.json is an image; a top-level name of a root filesystem (bin,
 * etc, usr, .dockerenv...) is a rootfs; at the end, any name an image does
 * not have (oci-layout, blobs, repositories, <sha256 hex>[.json|.tar]) is
 * a rootfs too; else neither, and hint says what IMAGE seems to be (a
 * zip, an ext4 image, JSON, an empty tar...). fd is rewound. */
int plain_classify(int fd, enum plain_kind *kind, char *hint, size_t hintlen, struct brig_error **err);

/* ---- layer.c: one layer into the root ---------------------------------- */

struct rootfs_progress;
struct layer_limits {
    uint64_t max_bytes;     /* decompressed bytes, all layers */
    uint64_t max_files;     /* entries, all layers */
    int flags;              /* JUDGE_* */
    /* running totals */
    uint64_t bytes, files, stripped;
    /* progress (may be NULL): input bytes read of in_total, all layers */
    const struct rootfs_progress *progress;
    uint64_t in_done, in_total;
};
/* Unpack the tar (plain, gzip, zstd, xz or bzip2) read from fd into rootfd. */
int layer_apply(int rootfd, int fd, struct layer_limits *lim, struct brig_error **err);

#endif
