/* The default rootfs of `brig sandbox run` (no --rootfs): the runner that
 * `brig-rootfs from-host` builds with its defaults, kept in
 * /var/lib/brig/rootfs/default-2 (BRIG_ROOTFS_DIR overrides the directory,
 * for tests) beside its manifest default-2.manifest. The name goes up
 * with what the defaults hold (ROOTFS_HOST_DEFAULT_WITH, the skeleton):
 * a brig that builds another tree uses another directory, so an older and
 * a newer brig on one host never rebuild or refuse each other's ("default"
 * was sh, 45 coreutils, grep and sed).
 *
 * Built on first use under a lock (flock on .lock: concurrent first runs
 * build it once), the manifest renamed into place before the tree, so a
 * tree in place always has one. Verified before every use, cheaply: the
 * manifest's types, modes, owners, sizes, mtimes and link targets, and no
 * entry changed (ctime) after the manifest was written, which a tamperer
 * cannot set back; the full hashes on demand with `brig-rootfs verify`.
 * A clean full check leaves a stamp (default-2.verified), and the next
 * use proves the tree unchanged since from its ctimes without listing it
 * (rootfs-tools/lib/rootfs_quick.c); what that cannot prove is scanned.
 * The mount points the runtime makes for a policy's mounts (empty dirs and
 * files, e.g. the pi profile's /run/pi-session) are not drift.
 * Drift is refused (fail closed) with how to rebuild.
 *
 * A rootless brig (docs/rootless.md) uses root's tree when a root brig built
 * it (root's, read-only to it, verified as always), else builds and keeps
 * its own in $XDG_CACHE_HOME/brig/rootfs (~/.cache/brig/rootfs). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox.h"
#include "../rootfs-tools/lib/rootfs.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

#define ROOTFS_CACHE_DIR "/var/lib/brig/rootfs"
#define ROOTFS_DEFAULT SANDBOX_ROOTFS_DEFAULT
#define ROOTFS_DEFAULT_MANIFEST SANDBOX_ROOTFS_DEFAULT ".manifest"
#define ROOTFS_DEFAULT_STAMP SANDBOX_ROOTFS_DEFAULT ".verified"

/* Nobody but brig's user (or root) can rename dirfd or its parents away:
 * each up to / is theirs and not writable by others unless sticky (/tmp). */
static int rootfs_cache_chain_ok(int dirfd, const char *dir, struct brig_error **err)
{
    struct stat top;
    if (stat("/", &top) < 0) return brig_fail(err, errno, "stat /");
    autoclose int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
    for (int depth = 0; depth < 256; depth++) {
        struct stat ps;
        if (cur < 0 || fstat(cur, &ps) < 0) return brig_fail(err, errno, "default runner rootfs: a parent of %s", dir);
        if ((ps.st_uid != 0 && ps.st_uid != geteuid()) || ((ps.st_mode & 022) && !(ps.st_mode & S_ISVTX)))
            return brig_failx(err, "default runner rootfs: %s or a parent directory is writable by others "
                              "(mode %04o, owner uid %u): refused (pass --rootfs, or keep the cache elsewhere)",
                              dir, (unsigned)(ps.st_mode & 07777), (unsigned)ps.st_uid);
        if (ps.st_ino == top.st_ino && ps.st_dev == top.st_dev) return 0;
        int up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        close(cur);
        cur = up;
    }
    return brig_failx(err, "default runner rootfs: %s: nested too deep", dir);
}

/* The cache dir, made if missing; only its owner may write in it (root's
 * cache must not be a place another user can plant a tree or a link).
 * Judged before anything is made: the nearest existing ancestor first. */
static int rootfs_cache_open(const char *dir, struct brig_error **err)
{
    autofree char *anc = brig_strdup(dir);
    autoclose int afd = -1;
    for (;;) {
        afd = open(anc, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (afd >= 0 || errno != ENOENT || strcmp(anc, "/") == 0) break;
        char *slash = strrchr(anc, '/');
        if (slash == anc) slash[1] = '\0';
        else *slash = '\0';
    }
    if (afd < 0) return brig_fail(err, errno, "default runner rootfs: cache directory %s", anc);
    TRY(rootfs_cache_chain_ok(afd, anc, err));
    autoclose int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    autoclose int fd = brig_mkdir_in_root(rootfd, dir, 0755, err);
    if (fd < 0) return brig_wrap(err, "default runner rootfs: cache directory %s", dir);
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "default runner rootfs: %s", dir);
    if (st.st_uid != geteuid() || (st.st_mode & 022))
        return brig_failx(err, "default runner rootfs: cache directory %s is writable by others or not "
                          "owned by uid %u: refused (fix its owner and mode, or pass --rootfs)", dir,
                          (unsigned)geteuid());
    TRY(rootfs_cache_chain_ok(fd, dir, err));
    return steal_fd(&fd);
}

/* 1: in place and as its manifest says, 0: not built, -1: refused. */
static int rootfs_default_check(int cachefd, const char *dir, struct brig_error **err)
{
    struct stat st;
    bool tree = fstatat(cachefd, ROOTFS_DEFAULT, &st, AT_SYMLINK_NOFOLLOW) == 0;
    bool has_manifest = faccessat(cachefd, ROOTFS_DEFAULT_MANIFEST, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
    if (!tree) return 0;
    char how[1024];
    snprintf(how, sizeof(how), "remove both (rm -rf %s/" ROOTFS_DEFAULT " %s/" ROOTFS_DEFAULT_MANIFEST
             ") and the next run rebuilds it, or rebuild it now with brig-rootfs from-host --force "
             "--manifest %s/" ROOTFS_DEFAULT_MANIFEST " %s/" ROOTFS_DEFAULT, dir, dir, dir, dir);
    if (!S_ISDIR(st.st_mode))
        return brig_failx(err, "default runner rootfs %s/%s is not a directory (a symlink?): refused; %s", dir,
                          ROOTFS_DEFAULT, how);
    if (!has_manifest)
        return brig_failx(err, "default runner rootfs %s/%s has no manifest: refused; %s", dir, ROOTFS_DEFAULT, how);
    struct rootfs_manifest want = {0}, have = {0};
    struct stat man;
    autoclose int treefd = openat(cachefd, ROOTFS_DEFAULT, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (treefd < 0) return brig_fail(err, errno, "default runner rootfs %s/%s", dir, ROOTFS_DEFAULT);
    if (rootfs_manifest_load_st(cachefd, ROOTFS_DEFAULT_MANIFEST, &want, &man, err) < 0)
        return brig_wrap(err, "default runner rootfs %s: refused; %s", dir, how);
    /* The usual case: unchanged since the last full check found it exactly
     * as its manifest says (its stamp), proven from the entries' ctimes
     * without listing the tree (rootfs_quick.c). */
    if (rootfs_tree_proven(cachefd, ROOTFS_DEFAULT_STAMP, treefd, &man, &want)) {
        rootfs_manifest_free(&want);
        return 1;
    }
    brig_debug("default runner rootfs: not proven unchanged since its last full check: scanning it");
    struct timespec ref;
    bool stamp = rootfs_stamp_begin(cachefd, &ref) == 0;
    int rc = rootfs_manifest_scan(treefd, false, &have, err);
    struct rootfs_strv drift = {0};
    size_t n = rc == 0 ? rootfs_manifest_diff(&want, &have, &man.st_ctim, ROOTFS_DIFF_MOUNTPOINTS, &drift, 3) : 0;
    /* Exactly as the manifest says (a runtime's mount points are not, and
     * are scanned every time): the next use needs no scan. */
    struct rootfs_strv none = {0};
    if (rc == 0 && n == 0 && stamp && rootfs_manifest_diff(&want, &have, &man.st_ctim, 0, &none, 0) == 0)
        rootfs_stamp_commit(cachefd, ROOTFS_DEFAULT_STAMP, treefd, &man, &ref);
    rootfs_strv_free(&none);
    rootfs_manifest_free(&want);
    rootfs_manifest_free(&have);
    if (rc < 0) return brig_wrap(err, "default runner rootfs %s/%s", dir, ROOTFS_DEFAULT);
    if (n > 0) {
        autofree char *first = brig_strdup(drift.v[0]);
        rootfs_strv_free(&drift);
        return brig_failx(err, "default runner rootfs %s/%s differs from its manifest (%zu difference%s, "
                          "first: %s): refused; %s", dir, ROOTFS_DEFAULT, n, n == 1 ? "" : "s", first, how);
    }
    rootfs_strv_free(&drift);
    return 1;
}

/* Rootless: root's tree (built by a root brig), when it is in place (its
 * manifest beside it: the build renames that first). Trusted as root's
 * files are: nobody but root can change it (its directory and every parent
 * root's and writable by nobody else), and root's brig verifies it before
 * every use of its own; a rootless user could not even scan it whole
 * (/root in it is 0700). 0 when it is not there. */
static int rootfs_system_tree(const char *dir, char **out)
{
    autoclose int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct stat st, tree;
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & 022)) return 0;
    autoerr struct brig_error *e = NULL;
    if (rootfs_cache_chain_ok(fd, dir, &e) < 0 || fstatat(fd, ROOTFS_DEFAULT, &tree, AT_SYMLINK_NOFOLLOW) < 0 ||
        !S_ISDIR(tree.st_mode) || tree.st_uid != 0 || (tree.st_mode & 022) ||
        faccessat(fd, ROOTFS_DEFAULT_MANIFEST, F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
        brig_debug("default runner rootfs: root's %s/%s not used: %s", dir, ROOTFS_DEFAULT,
                   e ? e->msg : "not built, or not root's alone");
        return 0;
    }
    *out = brig_asprintf("%s/%s", dir, ROOTFS_DEFAULT);
    return 1;
}

/* Rootless: the user's own cache, $XDG_CACHE_HOME/brig/rootfs or
 * ~/.cache/brig/rootfs. */
static int rootfs_user_dir(char **out, struct brig_error **err)
{
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg != NULL && xdg[0] == '/') *out = brig_asprintf("%s/brig/rootfs", xdg);
    else if (home != NULL && home[0] == '/') *out = brig_asprintf("%s/.cache/brig/rootfs", home);
    else
        return brig_failx(err, "no --rootfs, and neither root's default runner rootfs (%s/%s) nor a cache of "
                          "your own (XDG_CACHE_HOME or HOME is not set)", ROOTFS_CACHE_DIR, ROOTFS_DEFAULT);
    return 0;
}

int sandbox_rootfs_default(bool rootless, char **out, struct brig_error **err)
{
    const char *env = getenv("BRIG_ROOTFS_DIR");
    autofree char *own = NULL;
    if (rootless && !(env && env[0])) {
        if (rootfs_system_tree(ROOTFS_CACHE_DIR, out) != 0) {
            brig_debug("default runner rootfs: root's %s", *out);
            return 0;
        }
        TRY(rootfs_user_dir(&own, err));
    }
    const char *dir = own ? own : env && env[0] ? env : ROOTFS_CACHE_DIR;
    if (dir[0] != '/') return brig_failx(err, "BRIG_ROOTFS_DIR %s: expected an absolute path", dir);
    autoclose int cachefd = rootfs_cache_open(dir, err);
    if (cachefd < 0) return brig_wrap(err, "no --rootfs, and the default runner rootfs (brig-rootfs from-host) cannot be kept");
    int r = rootfs_default_check(cachefd, dir, err);
    if (r == 0) {
        /* first use: one builder, the others wait and then find it built */
        autoclose int lock = openat(cachefd, ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (lock < 0 || flock(lock, LOCK_EX) < 0) return brig_fail(err, errno, "default runner rootfs: lock %s/.lock", dir);
        r = rootfs_default_check(cachefd, dir, err);
        if (r == 0) {
            const struct rootfs_host_opts o = { .manifest_dirfd = cachefd, .manifest_name = ROOTFS_DEFAULT_MANIFEST };
            if (rootfs_host_build(cachefd, ROOTFS_DEFAULT, &o, NULL, err) < 0)
                return brig_wrap(err, "no --rootfs: building the default runner rootfs %s/%s (brig-rootfs from-host)",
                                 dir, ROOTFS_DEFAULT);
            r = 1;
        }
    }
    if (r < 0) return -1;
    *out = brig_asprintf("%s/%s", dir, ROOTFS_DEFAULT);
    brig_debug("default runner rootfs: %s", *out);
    return 0;
}
