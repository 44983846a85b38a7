/* A mount of type "cgroup" (cgroup v1, e.g. runc's default config on a
 * v1/hybrid host): the container gets a tmpfs at the destination and, for
 * each v1 hierarchy it belongs to, its own cgroup directory of that
 * hierarchy (not the host's whole tree), as runc does. The hierarchy is
 * opened with fsopen("cgroup") + fsmount, detached, and the container's
 * sub-directory cloned out of it with open_tree: no host path is needed, and
 * inside a cgroup namespace the paths are already relative to its root.
 * There (our cgroup is the namespace's root, the usual case) a plain
 * mount(2) onto a fresh directory does the same in one call
 * (cgmnt_mount_plain). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/fd_defer.h"
#include "../../util/fs.h"
#include "../../util/log.h"
#include "../../util/strutil.h"
#include "mount_util.h"
#include "mounts_internal.h"

/* A detached mount of the v1 hierarchy with these controllers/name=,
 * with the MOUNT_ATTR_* flags attr already set (fsmount applies them). */
static int cgmnt_open_hierarchy(const char *ctrls, uint64_t attr, struct brig_error **err)
{
    autoclose_path int fs = fsopen("cgroup", FSOPEN_CLOEXEC);
    if (fs < 0) return brig_fail(err, errno, "fsopen cgroup");
    autofree char *list = brig_strdup(ctrls);
    bool has_controller = false;
    char *save = NULL;
    for (char *c = strtok_r(list, ",", &save); c != NULL; c = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(c, '=');
        int r;
        if (eq != NULL) {
            *eq = '\0';
            r = fsconfig(fs, FSCONFIG_SET_STRING, c, eq + 1, 0);
        } else {
            has_controller = true;
            r = fsconfig(fs, FSCONFIG_SET_FLAG, c, NULL, 0);
        }
        if (r < 0) return brig_fail(err, errno, "cgroup hierarchy %s: option %s", ctrls, c);
    }
    /* a named hierarchy without controllers ("name=systemd") needs "none" */
    if (!has_controller && fsconfig(fs, FSCONFIG_SET_FLAG, "none", NULL, 0) < 0)
        return brig_fail(err, errno, "cgroup hierarchy %s: option none", ctrls);
    if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        return brig_fail(err, errno, "cgroup hierarchy %s", ctrls);
    int m = fsmount(fs, FSMOUNT_CLOEXEC, (unsigned int)attr);
    if (m < 0) return brig_fail(err, errno, "fsmount cgroup hierarchy %s", ctrls);
    return m;
}

static int cgmnt_links(int topfd, const char *dest, const char *dir, struct brig_error **err);

static bool cgmnt_is_cgroupfs(const char *path)
{
    struct statfs sfs;
    return statfs(path, &sfs) == 0 && sfs.f_type == CGROUP_SUPER_MAGIC;
}

/* The mount point of one hierarchy: a directory in the tmpfs we have just
 * mounted at dest (topfd), where nothing else can have put a symlink; one
 * plain component, so mkdirat + openat(O_NOFOLLOW) on topfd resolves exactly
 * what an in-root resolution of dest/dir would, without walking dest again. */
static int cgmnt_open_subdir(int rootfd, int topfd, const char *sub, const char *dir,
                             struct brig_error **err)
{
    if (dir[0] == '\0' || strchr(dir, '/') != NULL || strcmp(dir, ".") == 0 ||
        strcmp(dir, "..") == 0)
        return mounts_open_dest(rootfd, sub, true, err);
    if (mkdirat(topfd, dir, 0755) < 0 && errno != EEXIST)
        return brig_fail(err, errno, "mkdir %s", sub);
    int fd = openat(topfd, dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "open %s", sub);
    return fd;
}

/* One plain directory name: no "/", not "." or "..". */
static bool cgmnt_plain_name(const char *dir)
{
    return dir[0] != '\0' && strchr(dir, '/') == NULL && strcmp(dir, ".") != 0 &&
           strcmp(dir, "..") != 0 && strlen(dir) <= NAME_MAX;
}

/* The whole hierarchy (our cgroup is its root: we are in a cgroup
 * namespace) with one mkdirat and one mount(2), instead of mkdirat, openat,
 * fsopen, fsconfig x2-3, fsmount, move_mount and three closes.
 *
 * Why the path "/proc/self/fd/<topfd>/<dir>" names exactly the directory
 * the fd-based way would mount on: topfd is the tmpfs mounts_fs has just
 * mounted and verified at dest; /proc is still the host's procfs (this runs
 * before the pivot, as every mount(2) onto /proc/self/fd/N of mounts.c), so
 * the magic link jumps to topfd's own mount and dentry, whatever the image
 * contains; dir is one plain component that mkdirat has just created in it
 * (success, not EEXIST: a fresh directory, never a symlink), in a tmpfs that
 * no other process can reach yet (our own mount namespace, below a root no
 * container process runs in). So the lookup of dir can only find that new
 * directory, which is what openat(topfd, dir, O_NOFOLLOW) would return.
 *
 * Flags: nosuid/nodev/noexec are per-mount flags. Read-only is left to the
 * caller's recursive mount_setattr on the tmpfs (one call for all
 * hierarchies), not given here: MS_RDONLY to mount(2) is also a superblock
 * flag, and a hierarchy with no mounted instance left would get a read-only
 * superblock that the host's next mount of it would share. fsmount's attr
 * argument never touched the superblock either.
 *
 * 1 when the directory exists already (then the caller takes the fd-based
 * path, which refuses a symlink), 0 mounted, -1 error. */
static int cgmnt_mount_plain(int topfd, const char *ctrls, const char *dir, unsigned long flags,
                             struct brig_error **err)
{
    if (mkdirat(topfd, dir, 0755) < 0) {
        if (errno == EEXIST) return 1;
        return brig_fail(err, errno, "mkdir %s", dir);
    }
    /* controllers as listed in /proc/self/cgroup: a co-mounted list must
     * match the host's hierarchy exactly; a named hierarchy without
     * controllers ("name=systemd") needs "none" */
    bool has_controller = false;
    for (const char *c = ctrls; *c != '\0';) {
        size_t n = strcspn(c, ",");
        if (memchr(c, '=', n) == NULL && n > 0) has_controller = true;
        c += n;
        if (*c == ',') c++;
    }
    autofree char *data = has_controller ? brig_strdup(ctrls) : brig_asprintf("none,%s", ctrls);
    char target[64 + NAME_MAX];
    snprintf(target, sizeof(target), "/proc/self/fd/%d/%s", topfd, dir);
    if (mount("cgroup", target, "cgroup", flags, data) < 0)
        return brig_fail(err, errno, "cgroup hierarchy %s", ctrls);
    return 0;
}

/* a user namespace without its own cgroup namespace may not mount v1
 * hierarchies: bind our directory from the host's mount, as runc. Only
 * then: in a cgroup namespace the path is not a host path. */
static int cgmnt_bind_fallback(int rootfd, int topfd, const char *dest, const char *ctrls,
                               const char *dir, const char *sub, const char *path,
                               bool host_paths, const struct brig_mount_opts *o,
                               const struct brig_error *herr, struct brig_error **err)
{
    autofree char *host = brig_asprintf("/sys/fs/cgroup/%s%s", dir, path);
    if (herr->errnum != EPERM || !host_paths || !cgmnt_is_cgroupfs(host))
        return brig_failx(err, "%s", herr->msg);
    struct brig_mount_opts bo = {
        .bind = true,
        .flags = MS_BIND | (o->flags & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)),
    };
    brig_debug("cgroup v1: %s refused (%s), binding %s", ctrls, herr->msg, host);
    if (mounts_bind_source(rootfd, host, sub, &bo, "bind", err) < 0)
        return brig_wrap(err, "%s; bind of %s", herr->msg, host);
    return cgmnt_links(topfd, dest, dir, err);
}

static int cgmnt_one(int rootfd, int topfd, const char *dest, const char *ctrls,
                     const char *path, bool host_paths, const struct brig_mount_opts *o,
                     struct brig_error **err)
{
    /* "name=systemd" is mounted as "systemd", like the host and runc do */
    const char *dir = brig_str_has_prefix(ctrls, "name=") ? ctrls + 5 : ctrls;
    autofree char *sub = brig_asprintf("%s/%s", dest, dir);
    const char *rel = path[0] == '/' ? path + 1 : path;
    autoerr struct brig_error *herr = NULL;
    if (rel[0] == '\0' && cgmnt_plain_name(dir)) {
        int r = cgmnt_mount_plain(topfd, ctrls, dir, o->flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC),
                                  &herr);
        if (r == 0) {
            brig_debug("cgroup v1: %s mounted on %s", ctrls, sub);
            return cgmnt_links(topfd, dest, dir, err);
        }
        if (r < 0)
            return cgmnt_bind_fallback(rootfd, topfd, dest, ctrls, dir, sub, path, host_paths, o,
                                       herr, err);
    }
    autoclose_path int destfd = cgmnt_open_subdir(rootfd, topfd, sub, dir, err);
    if (destfd < 0) return -1;
    uint64_t set = mnt_flags_to_attr(o->flags & (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC));
    /* At the hierarchy's root (in a cgroup namespace, our own cgroup is
     * that root), fsmount sets the flags and its mount is attached as is. */
    autoclose_path int hier = cgmnt_open_hierarchy(ctrls, rel[0] == '\0' ? set : 0, &herr);
    if (hier < 0)
        return cgmnt_bind_fallback(rootfd, topfd, dest, ctrls, dir, sub, path, host_paths, o,
                                   herr, err);
    if (rel[0] == '\0') {
        if (mnt_attach(hier, destfd, err) < 0) return brig_wrap(err, "cgroup %s", ctrls);
    } else {
        /* our own cgroup only: clone its directory out of the hierarchy */
        autoclose_path int tree = open_tree(hier, rel, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (tree < 0) return brig_fail(err, errno, "cgroup %s: open %s", ctrls, path);
        if (set != 0) TRY(mnt_setattr(tree, false, set, 0, 0, err));
        if (mnt_attach(tree, destfd, err) < 0) return brig_wrap(err, "cgroup %s", ctrls);
    }
    brig_debug("cgroup v1: %s%s mounted on %s", ctrls, path, sub);
    return cgmnt_links(topfd, dest, dir, err);
}

/* co-mounted controllers: "cpu" -> "cpu,cpuacct" as on the host */
static int cgmnt_links(int topfd, const char *dest, const char *dir, struct brig_error **err)
{
    if (strchr(dir, ',') != NULL) {
        autofree char *list = brig_strdup(dir);
        char *save = NULL;
        for (char *c = strtok_r(list, ",", &save); c != NULL; c = strtok_r(NULL, ",", &save))
            if (symlinkat(dir, topfd, c) < 0 && errno != EEXIST)
                return brig_fail(err, errno, "symlink %s/%s", dest, c);
    }
    return 0;
}

/* "N:controllers:/path" lines of v1 hierarchies; v2 is "0::/path". */
static bool cgmnt_v1_line(char *line, char **ctrls, char **path)
{
    char *c1 = strchr(line, ':');
    char *c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
    if (c2 == NULL || c2 == c1 + 1) return false;
    *c2 = '\0';
    *ctrls = c1 + 1;
    *path = c2 + 1;
    return true;
}

static bool cgmnt_text_has_v1(const char *text)
{
    for (const char *l = text; *l != '\0';) {
        const char *c1 = strchr(l, ':');
        const char *nl = strchr(l, '\n');
        if (c1 != NULL && (nl == NULL || c1 < nl) && c1[1] != ':' && c1[1] != '\n') return true;
        if (nl == NULL) break;
        l = nl + 1;
    }
    return false;
}

bool mounts_host_has_cgroup_v1(void)
{
    autofree char *text = NULL;
    return brig_read_file("/proc/self/cgroup", 1 << 16, &text, NULL, NULL) == 0 &&
           cgmnt_text_has_v1(text);
}

/* Returns 1, having done nothing, when the host has no v1 hierarchy. */
int mounts_cgroup_v1(int rootfd, const struct brig_spec *s, const char *dest,
                     const struct brig_mount_opts *o, struct brig_error **err)
{
    /* /proc/self/cgroup read once: whether the host has v1 hierarchies at
     * all (else the caller mounts cgroup2), and which ones to mount */
    autofree char *text = NULL;
    if (brig_read_file("/proc/self/cgroup", 1 << 16, &text, NULL, err) < 0)
        return brig_wrap(err, "mount cgroup");
    if (!cgmnt_text_has_v1(text)) return 1;
    /* the tmpfs stays writable until the hierarchies are in place */
    struct brig_mount_opts tmp = {
        .flags = o->flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC),
        .data = (char *)"mode=755",
    };
    /* top: the tmpfs as mounts_fs reopened and verified it */
    autoclose_path int top = -1;
    TRY(mounts_fs_open(rootfd, "tmpfs", dest, "tmpfs", &tmp, false, &top, err));
    if (top < 0) top = brig_open_in_root(rootfd, dest, O_PATH | O_DIRECTORY, 0, err);
    if (top < 0) return -1;
    /* /proc/self/cgroup shows host paths unless we have a cgroup namespace */
    bool host_paths = !s->linux_cfg.namespaces[BRIG_NS_CGROUP].present;

    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char *ctrls, *path;
        if (!cgmnt_v1_line(line, &ctrls, &path)) continue;
        if (cgmnt_one(rootfd, top, dest, ctrls, path, host_paths, o, err) < 0)
            return brig_wrap(err, "mount cgroup");
        n++;
    }
    if (n == 0) return brig_failx(err, "mount cgroup: the host has no cgroup v1 hierarchy");
    /* recursive: the tmpfs and every hierarchy on it (cgmnt_mount_plain
     * leaves read-only to this call) */
    if (o->flags & MS_RDONLY) TRY(mnt_setattr(top, true, MOUNT_ATTR_RDONLY, 0, 0, err));
    TRY(mnt_set_propagation(top, o->propagation, err));
    return 0;
}
