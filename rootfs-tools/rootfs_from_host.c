/* brig-rootfs from-host [--with LIST] [--force] [--manifest FILE] DEST */
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "brig-rootfs.h"
#include "lib/rootfs.h"
#include "../runtime/cli/cli.h"
#include "../runtime/util/cleanup.h"

int rootfs_cmd_from_host(int argc, char **argv, int *status, struct brig_error **err)
{
    struct rootfs_host_opts o = { .manifest_dirfd = -1 };
    const char *manifest = NULL;
    bool help = false;
    const struct cli_flag flags[] = {
        { "with", 'w', CLI_STRING, &o.with, "LIST",
          "comma-separated: programs in the host PATH; groups (coreutils, findutils, diffutils, procps, "
          "gzip, xz, zstd); ca-certificates; absolute host paths (an executable with its libraries, any "
          "other file or a directory as data) (default: " ROOTFS_HOST_DEFAULT_WITH ", each where the "
          "host has it)" },
        { "force", 'f', CLI_BOOL, &o.replace, NULL, "replace DEST if it exists" },
        { "manifest", 'm', CLI_STRING, &manifest, "FILE", "write the sha256 manifest of the tree to FILE" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    char *pos[argc + 1];
    int npos = 0;
    *status = 2;
    TRY(cli_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, false, NULL, pos, &npos, err));
    if (help) {
        cli_usage("from-host", "[options] DEST", "Build DEST from the host's programs, their "
                  "interpreters and shared libraries (read from the ELF headers), data files and "
                  "directories, /etc/passwd and /etc/group with user 1000, and empty /tmp /workspace "
                  "/dev /proc /sys. A symlink in a --with directory is copied as a symlink, never followed.",
                  flags, BRIG_ARRAY_SIZE(flags));
        *status = 0;
        return 0;
    }
    if (npos != 1) return brig_failx(err, "expected one DEST (brig-rootfs from-host --help)");
    autoclose int dirfd = -1, mdirfd = -1;
    autofree char *name = NULL, *mname = NULL;
    TRY(rootfs_split_dest(pos[0], &dirfd, &name, err));
    if (manifest) {
        TRY(rootfs_split_dest(manifest, &mdirfd, &mname, err));
        o.manifest_dirfd = mdirfd;
        o.manifest_name = mname;
    }
    struct rootfs_bar bar;
    rootfs_bar_init(&bar, "from-host");
    o.progress = &bar.p;
    struct rootfs_host_stats st = {0};
    int rc = rootfs_host_build(dirfd, name, &o, &st, err);
    rootfs_bar_end(&bar, rc == 0 ? pos[0] : NULL, st.entries, st.bytes);
    if (rc < 0) return brig_wrap(err, "%s", pos[0]);
    *status = 0;
    return 0;
}
