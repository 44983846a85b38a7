/* import_run: what `brig-rootfs import` does, without the flag parsing
 * (import_cmd.c); also the fuzz and unit tests' entry point. */
#ifndef BRIG_IMPORT_RUN_H
#define BRIG_IMPORT_RUN_H

#include "import.h"
#include "lib/rootfs.h"

/* The image config is written beside the rootfs: DEST + this suffix. */
#define IMPORT_CONFIG_SUFFIX ".image-config.json"

struct import_opts {
    const char *image, *dest, *ref, *platform;
    uint64_t max_size, max_files;
    int flags;   /* JUDGE_ALLOW_DEVICES, JUDGE_KEEP_SETUID */
    const struct rootfs_progress *progress;     /* may be NULL */
};
struct import_result {
    size_t layers;                  /* 0: a plain rootfs tar */
    uint64_t files, bytes, stripped;
};
int import_run(const struct import_opts *o, struct import_result *res, struct brig_error **err);

#endif
