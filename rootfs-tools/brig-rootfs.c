/* brig-rootfs (docs/rootfs.md, man brig-rootfs): build, verify and bundle
 * runner root filesystems. Thin: each subcommand is one function in its
 * own file; the work is in rootfs-tools/lib (linked into brig as well). */
#include <stdio.h>
#include <string.h>

#include "brig-config.h"
#include "brig-rootfs.h"
#include "../runtime/util/error.h"

static const struct {
    const char *name;
    rootfs_cmd_fn fn;
    const char *help;
} rootfs_cmds[] = {
    { "from-host", rootfs_cmd_from_host, "a runner rootfs from the host's programs and their libraries" },
    { "verify", rootfs_cmd_verify, "compare a rootfs with its sha256 manifest; check required tools" },
    { "bundle", rootfs_cmd_bundle, "an OCI bundle (config.json) from a rootfs, a policy and an image config" },
};

static void rootfs_usage(FILE *f)
{
    fprintf(f, "Usage: brig-rootfs COMMAND [options] ...\n\nCommands:\n");
    for (size_t i = 0; i < sizeof(rootfs_cmds) / sizeof(rootfs_cmds[0]); i++)
        fprintf(f, "  %-10s %s\n", rootfs_cmds[i].name, rootfs_cmds[i].help);
    fprintf(f, "\nbrig-rootfs COMMAND --help for its options; man brig-rootfs.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        rootfs_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("brig-rootfs %s (commit %s)\n", BRIG_VERSION, BRIG_COMMIT);
        return 0;
    }
    for (size_t i = 0; i < sizeof(rootfs_cmds) / sizeof(rootfs_cmds[0]); i++) {
        if (strcmp(argv[1], rootfs_cmds[i].name) != 0) continue;
        struct brig_error *err = NULL;
        int status = 0;
        if (rootfs_cmds[i].fn(argc - 2, argv + 2, &status, &err) < 0) {
            fprintf(stderr, "brig-rootfs %s: %s\n", argv[1], err ? err->msg : "failed");
            brig_error_free(err);
            return status ? status : 2;
        }
        return status;
    }
    fprintf(stderr, "brig-rootfs: unknown command %s\n", argv[1]);
    rootfs_usage(stderr);
    return 2;
}
