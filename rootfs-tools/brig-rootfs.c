/* brig-rootfs (docs/rootfs.md, man brig-rootfs): import, build, verify and
 * bundle runner root filesystems. Thin: each subcommand is one function in
 * its own file; the work is in rootfs-tools/lib (linked into brig as well)
 * and rootfs-tools/import (libarchive: brig-rootfs only). Exit statuses: 0
 * done, 1 refused or the check failed, 2 usage or an error. */
#include <stdio.h>
#include <string.h>

#include "brig-config.h"
#include "brig-commit.h"
#include "brig-rootfs.h"
#include "../runtime/cli/cli.h"
#include "../runtime/util/error.h"

/* import decides its own status and gets argv from its own name on. */
static int rootfs_cmd_import_row(int argc, char **argv, int *status, struct brig_error **err)
{
    (void)err;
    *status = rootfs_cmd_import(argc + 1, argv - 1);
    return 0;
}

static const struct {
    const char *name;
    rootfs_cmd_fn fn;
    const char *help;
} rootfs_cmds[] = {
    { "import", rootfs_cmd_import_row, "unpack an OCI image layout or docker/podman save archive into a rootfs" },
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
    if (argc < 2) {
        rootfs_usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        rootfs_usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("brig-rootfs %s (commit %s)\n", BRIG_VERSION, BRIG_COMMIT);
        return 0;
    }
    cli_set_program("brig-rootfs");
    for (size_t i = 0; i < sizeof(rootfs_cmds) / sizeof(rootfs_cmds[0]); i++) {
        if (strcmp(argv[1], rootfs_cmds[i].name) != 0) continue;
        cli_set_command(rootfs_cmds[i].name);
        struct brig_error *err = NULL;
        int status = 0;
        if (rootfs_cmds[i].fn(argc - 2, argv + 2, &status, &err) < 0) {
            fprintf(stderr, "brig-rootfs %s: %s\n", argv[1], err ? err->msg : "failed");
            brig_error_free(err);
            return status ? status : 2;
        }
        return status;
    }
    fprintf(stderr, "brig-rootfs: unknown command '%s'\n", argv[1]);
    rootfs_usage(stderr);
    return 2;
}
