/* brig-rootfs: one binary, a table of subcommands. Commands only parse
 * their flags and call their concern's code; only they decide the exit
 * status (0 done, 1 refused or failed, 2 usage). */
#include <stdio.h>
#include <string.h>

#include "brig-config.h"
#include "brig-rootfs.h"

struct rootfs_cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
};

/* One row per command; keep it a plain table. */
static const struct rootfs_cmd rootfs_cmds[] = {
    {"import", rootfs_cmd_import, "unpack an OCI image layout or docker/podman save archive into a rootfs"},
};

static void rootfs_usage(FILE *f)
{
    fprintf(f, "usage: brig-rootfs COMMAND [OPTION]... (brig-rootfs COMMAND --help)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(rootfs_cmds) / sizeof(rootfs_cmds[0]); i++)
        fprintf(f, "  %-10s %s\n", rootfs_cmds[i].name, rootfs_cmds[i].help);
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
    for (size_t i = 0; i < sizeof(rootfs_cmds) / sizeof(rootfs_cmds[0]); i++)
        if (strcmp(argv[1], rootfs_cmds[i].name) == 0) return rootfs_cmds[i].run(argc - 1, argv + 1);
    fprintf(stderr, "brig-rootfs: unknown command '%s'\n", argv[1]);
    rootfs_usage(stderr);
    return 2;
}
