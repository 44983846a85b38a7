/* brig-rootfs verify DEST [--manifest FILE] [--write] [--quick] [--require LIST]
 *
 * Drift of DEST against its manifest (default DEST.manifest), one line per
 * difference: --quick compares what a stat shows (and any ctime after the
 * manifest's), the full check that and every file's content and every
 * entry's extended attributes; with --require, each tool must be an executable in DEST's
 * PATH whose interpreter and libraries DEST holds (the same ELF closure
 * from-host copies, searched inside DEST). Exit 1 on any finding. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brig-rootfs.h"
#include "lib/rootfs.h"
#include "../runtime/cli/cli.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/strutil.h"

#define VERIFY_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

/* One required tool: found, executable, its libraries present. */
static void verify_tool(int rootfd, struct rootfs_elf_ctx *elf, const char *tool, struct rootfs_strv *out)
{
    autofree char *dirs = brig_strdup(VERIFY_PATH);
    autofree char *found = NULL;
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        autofree char *path = strchr(tool, '/') ? brig_strdup(tool) : brig_asprintf("%s/%s", d, tool);
        autoclose int fd = brig_open_in_root(rootfd, path, O_PATH, 0, NULL);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) found = steal_ptr(&path);
    }
    if (found == NULL) {
        autofree char *l = brig_asprintf("missing %s: no executable in %s", tool, VERIFY_PATH);
        rootfs_strv_add(out, l);
        return;
    }
    struct rootfs_strv deps = {0}, missing = {0};
    autoerr struct brig_error *err = NULL;
    autoclose int fd = brig_open_in_root(rootfd, found, O_RDONLY | O_NONBLOCK, 0, NULL);
    autofree char *interp = NULL;
    if (fd >= 0 && !rootfs_elf_is_elf(fd)) rootfs_script_interp(fd, &interp);
    if (interp) {
        autoclose int ifd = brig_open_in_root(rootfd, interp, O_PATH, 0, NULL);
        if (ifd < 0) {
            autofree char *l = brig_asprintf("missing %s: its interpreter %s", tool, interp);
            rootfs_strv_add(out, l);
        }
    } else if (rootfs_elf_closure(elf, found, &deps, &missing, &err) < 0) {
        autofree char *l = brig_asprintf("broken %s: %s", tool, err->msg);
        rootfs_strv_add(out, l);
    }
    for (size_t i = 0; i < missing.n; i++) {
        bool is_interp = brig_str_has_prefix(missing.v[i], "interpreter ");
        autofree char *l = brig_asprintf("missing %s%s for %s", is_interp ? "" : "library ", missing.v[i], tool);
        rootfs_strv_add(out, l);
    }
    rootfs_strv_free(&deps);
    rootfs_strv_free(&missing);
}

int rootfs_cmd_verify(int argc, char **argv, int *status, struct brig_error **err)
{
    const char *manifest = NULL, *require = NULL;
    bool write = false, quick = false, help = false;
    const struct cli_flag flags[] = {
        { "manifest", 'm', CLI_STRING, &manifest, "FILE", "the manifest (default: DEST.manifest)" },
        { "write", 0, CLI_BOOL, &write, NULL, "write the manifest of DEST as it is now, then exit" },
        { "quick", 0, CLI_BOOL, &quick, NULL,
          "compare types, modes, owners, sizes, mtimes and ctimes only: no hashing, no xattrs" },
        { "require", 'r', CLI_STRING, &require, "LIST", "tools that must run in DEST (e.g. sh,timeout)" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    char *pos[argc + 1];
    int npos = 0;
    *status = 2;
    TRY(cli_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, false, NULL, pos, &npos, err));
    if (help) {
        cli_usage("verify", "[options] DEST", "Compare DEST with its sha256 manifest (added, removed, "
                  "changed) and check required tools. Exit 0 clean, 1 drift or a missing tool, 2 error.",
                  flags, BRIG_ARRAY_SIZE(flags));
        *status = 0;
        return 0;
    }
    if (npos != 1) return brig_failx(err, "expected one DEST (brig-rootfs verify --help)");
    autofree char *mpath = manifest ? brig_strdup(manifest) : brig_asprintf("%s.manifest", pos[0]);
    autoclose int rootfd = open(pos[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return brig_fail(err, errno, "%s", pos[0]);
    autoclose int mdir = -1;
    autofree char *mname = NULL;
    TRY(rootfs_split_dest(mpath, &mdir, &mname, err));

    if (write) {
        struct rootfs_manifest m = {0};
        if (rootfs_manifest_scan(rootfd, true, &m, err) < 0) return brig_wrap(err, "%s", pos[0]);
        size_t len;
        autofree char *text = rootfs_manifest_text(&m, &len);
        rootfs_manifest_free(&m);
        TRY(brig_write_file_atomic(mdir, mname, text, len, 0644, err));
        *status = 0;
        return 0;
    }
    struct rootfs_strv findings = {0};
    if (manifest || faccessat(mdir, mname, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || !require) {
        struct rootfs_manifest want = {0}, have = {0};
        struct timespec mtime;
        if (rootfs_manifest_load(mdir, mname, &want, &mtime, err) < 0) return brig_wrap(err, "%s", mpath);
        int rc = rootfs_manifest_scan(rootfd, !quick, &have, err);
        /* the full check is the quick one (types, modes, owners, sizes,
         * mtimes, ctimes) plus content and extended attributes */
        if (rc == 0) rootfs_manifest_diff(&want, &have, &mtime, 0, &findings, 200);
        rootfs_manifest_free(&want);
        rootfs_manifest_free(&have);
        if (rc < 0) return brig_wrap(err, "%s", pos[0]);
    }
    if (require) {
        struct rootfs_elf_ctx *elf = NULL;
        TRY(rootfs_elf_ctx_new(rootfd, &elf, err));
        struct rootfs_strv tools = {0};
        rootfs_strv_split(&tools, require, ", ");
        for (size_t i = 0; i < tools.n; i++) verify_tool(rootfd, elf, tools.v[i], &findings);
        rootfs_strv_free(&tools);
        rootfs_elf_ctx_free(elf);
    }
    for (size_t i = 0; i < findings.n; i++) printf("%s\n", findings.v[i]);
    *status = findings.n ? 1 : 0;
    if (findings.n) fprintf(stderr, "brig-rootfs verify: %s: %zu finding%s\n", pos[0], findings.n,
                            findings.n == 1 ? "" : "s");
    rootfs_strv_free(&findings);
    return 0;
}
