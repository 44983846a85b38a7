/* A bundle (runtime-spec bundle.md) opened once: its directory by fd, and
 * config.json read through that fd, never through a symlink, never from a
 * fifo or a device. Whoever can rename entries in the bundle directory can
 * swap config.json or rootfs at any moment: from here on only what was
 * opened counts (root.path: linux/rootfs.c, rootfs_open). */
#ifndef BRIG_BUNDLE_H
#define BRIG_BUNDLE_H

#include <stddef.h>

#include "../util/error.h"

/* config.json (and `exec --process`) larger than this is refused. */
#define BUNDLE_CONFIG_MAX (16u << 20)

struct brig_bundle {
    int dirfd;          /* O_PATH|O_DIRECTORY of the bundle */
    char *path;         /* where dirfd is: absolute, symlink-free */
    char *config;       /* the config file's bytes, NUL-terminated */
    size_t config_len;
};

/* Open dir (followed: the caller named it) and read config_name in it
 * (normally "config.json"), which must be a regular file and not a symlink.
 * Errors name the file and never quote its content. */
int bundle_open(const char *dir, const char *config_name, struct brig_bundle *b,
                struct brig_error **err);
/* The same for a config built in memory (brig sandbox): dir is opened the
 * same way, config is copied. */
int bundle_open_text(const char *dir, const char *config, struct brig_bundle *b,
                     struct brig_error **err);
void bundle_close(struct brig_bundle *b);

#endif
