/* brig-rootfs import: the steps, in order. Everything is unpacked into a
 * scratch directory next to DEST (NAME.import-XXXXXX, mode 0700), which
 * is renamed onto DEST only when every digest matched and every layer was
 * applied; on any failure it is removed and DEST is untouched. A plain
 * rootfs tar is unpacked as one layer, with the same defences, and has no
 * image config. */
#include "import_run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fs.h"
#include "util/strutil.h"

/* DEST must be absent or an empty directory (which the rename replaces). */
static int import_check_dest(int parentfd, const char *name, struct brig_error **err)
{
    struct stat st;
    if (fstatat(parentfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno == ENOENT) return 0;
        return brig_fail(err, errno, "DEST");
    }
    if (!S_ISDIR(st.st_mode)) return brig_failx(err, "DEST exists and is not a directory; refusing to replace it");
    autoclose int fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "DEST");
    int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (d == NULL) return brig_fail(err, errno, "DEST");
    int n = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) n++;
    closedir(d);
    if (n > 0) return brig_failx(err, "DEST exists and is not empty; refusing to unpack over it");
    return 0;
}

static int import_scratch(int parentfd, const char *name, char *tmp, size_t len, struct brig_error **err)
{
    for (int tries = 0; tries < 16; tries++) {
        unsigned r;
        if (getrandom(&r, sizeof(r), 0) != sizeof(r)) return brig_fail(err, errno, "getrandom");
        snprintf(tmp, len, "%s.import-%08x", name, r);
        if (mkdirat(parentfd, tmp, 0700) == 0) return 0;
        if (errno != EEXIST) return brig_fail(err, errno, "mkdir %s", tmp);
    }
    return brig_failx(err, "cannot make a scratch directory next to DEST");
}

static int import_layers(struct image_src *src, const struct image_plan *plan, int rootfd,
                         struct layer_limits *lim, struct brig_error **err)
{
    /* the progress's total: all layers' sizes */
    for (size_t i = 0; lim->progress && i < plan->n_layers; i++) {
        autoclose int fd = src_open_file(src, plan->layer_files[i], NULL);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0) lim->in_total += (uint64_t)st.st_size;
    }
    for (size_t i = 0; i < plan->n_layers; i++) {
        autoclose int fd = src_open_file(src, plan->layer_files[i], err);
        if (fd < 0) return brig_wrap(err, "layers[%zu]", i);
        /* the whole blob is checked before libarchive reads a byte of it */
        if (src_verify_fd(fd, plan->layer_hex[i], plan->layer_size[i], lim->max_bytes, err) < 0 ||
            layer_apply(rootfd, fd, lim, err) < 0)
            return brig_wrap(err, "layers[%zu] (%s)", i, plan->layer_files[i]);
    }
    return 0;
}

static int import_publish(int parentfd, int rootfd, const char *tmp, const char *name,
                          const struct image_plan *plan, struct brig_error **err)
{
    if (fchmod(rootfd, 0755) < 0) return brig_fail(err, errno, "chmod the rootfs");
    if (plan == NULL) {     /* a plain rootfs tar: no image config */
        if (renameat(parentfd, tmp, parentfd, name) < 0) return brig_fail(err, errno, "rename the rootfs onto DEST");
        return 0;
    }
    size_t len;
    autofree char *json = image_config_json(&plan->config, plan->manifest_hex, &len);
    if (json == NULL) return brig_failx(err, "image config: cannot write it as JSON");
    autofree char *cname = brig_asprintf("%s" IMPORT_CONFIG_SUFFIX, name);
    TRY(brig_write_file_atomic(parentfd, cname, json, len, 0644, err));
    if (renameat(parentfd, tmp, parentfd, name) < 0) {
        int e = errno;
        unlinkat(parentfd, cname, 0);
        return brig_fail(err, e, "rename the rootfs onto DEST");
    }
    return 0;
}

/* IMAGE opened once: a directory (a layout), or a tar that is an image
 * (*plain false), a plain rootfs (*plain true, *fd is it) or neither. */
static int import_open(const char *image, int *fd, bool *plain, struct brig_error **err)
{
    *plain = false;
    /* O_NONBLOCK: a fifo named as IMAGE is refused below, not waited on */
    autoclose int f = open(image, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f < 0) return brig_fail(err, errno, "image %s", image);
    struct stat st;
    if (fstat(f, &st) < 0) return brig_fail(err, errno, "image %s", image);
    if (S_ISDIR(st.st_mode)) {
        if (faccessat(f, "index.json", F_OK, 0) < 0 && faccessat(f, "manifest.json", F_OK, 0) < 0)
            return brig_failx(err, "image %s: a directory with neither index.json (an OCI image layout) nor "
                              "manifest.json (docker save): a root filesystem directory is used as it is "
                              "(brig sandbox run --rootfs DIR), or import its tar (tar -C DIR -c . > rootfs.tar)",
                              image);
        return 0;
    }
    if (!S_ISREG(st.st_mode)) return 0;         /* src_open says what it is */
    enum plain_kind kind;
    char hint[256];
    TRY(plain_classify(f, &kind, hint, sizeof(hint), err));
    if (kind == PLAIN_NEITHER)
        return brig_failx(err, "image %s: neither an image (index.json: an OCI image layout; manifest.json: "
                          "docker save) nor a root filesystem tar: %s", image, hint);
    if (kind == PLAIN_ROOTFS) {
        *plain = true;
        *fd = steal_fd(&f);
    }
    return 0;
}

int import_run(const struct import_opts *o, struct import_result *res, struct brig_error **err)
{
    autofree char *d1 = brig_strdup(o->dest), *d2 = brig_strdup(o->dest);
    const char *parent = dirname(d1), *name = basename(d2);
    if (name[0] == '\0' || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 || strcmp(name, "/") == 0)
        return brig_failx(err, "DEST %s: not a name a new directory can have", o->dest);
    autoclose int parentfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (parentfd < 0) return brig_fail(err, errno, "DEST's parent %s", parent);
    TRY(import_check_dest(parentfd, name, err));
    char tmp[512];
    TRY(import_scratch(parentfd, name, tmp, sizeof(tmp), err));

    struct layer_limits lim = {.max_bytes = o->max_size, .max_files = o->max_files, .flags = o->flags,
                               .progress = o->progress};
    struct image_src *src = NULL;
    struct image_plan plan = {0};
    autoclose int rootfd = openat(parentfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    autoclose int plain_fd = -1;
    bool plain = false;
    int r = rootfd < 0 ? brig_fail(err, errno, "open %s", tmp) : 0;
    if (r == 0) r = import_open(o->image, &plain_fd, &plain, err);
    if (r == 0 && plain) {
        struct stat st;
        lim.flags |= JUDGE_PLAIN_TAR;
        lim.in_total = fstat(plain_fd, &st) == 0 ? (uint64_t)st.st_size : 0;
        r = layer_apply(rootfd, plain_fd, &lim, err);
        if (r < 0) brig_wrap(err, "image %s (a root filesystem tar)", o->image);
        if (r == 0) r = import_publish(parentfd, rootfd, tmp, name, NULL, err);
    } else if (r == 0) {
        r = src_open(o->image, parentfd, o->max_size, &src, err);
        if (r == 0) r = image_select(src, o->ref, o->platform, &plan, err);
        if (r == 0) r = import_layers(src, &plan, rootfd, &lim, err);
        if (r == 0) r = import_publish(parentfd, rootfd, tmp, name, &plan, err);
    }
    if (r < 0) {
        autoerr struct brig_error *e2 = NULL;
        if (brig_rm_rf_at(parentfd, tmp, &e2) < 0)
            fprintf(stderr, "brig-rootfs: warning: could not remove %s/%s: %s\n", parent, tmp, e2->msg);
    } else {
        res->layers = plan.n_layers;
        res->files = lim.files;
        res->bytes = lim.bytes;
        res->stripped = lim.stripped;
    }
    image_plan_free(&plan);
    src_free(src);
    return r;
}
