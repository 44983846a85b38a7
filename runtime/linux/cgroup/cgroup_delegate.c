/* The cgroup v2 subtree delegated to a rootless brig (docs/rootless.md).
 *
 * systemd delegates a subtree to a user by making its directory and its
 * cgroup.procs, cgroup.subtree_control and cgroup.threads the user's
 * (user@UID.service, the user's own manager; a unit with Delegate=yes and
 * User=). Never anything above it: the root and the slices stay root's. So
 * the delegation is the highest ancestor of our own cgroup (or our cgroup
 * itself) that is ours in that way, and a rootless brig makes its cgroups
 * below it only: "/x" there means <delegation>/x, as in a cgroup namespace
 * rooted at it. On a hybrid or v1 host the controllers are in v1
 * hierarchies, which nothing delegates to a user: no delegation. */
#include "cgroup_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/log.h"
#include "../../util/strutil.h"

/* dir (below the v2 mount) is ours as systemd leaves a delegated cgroup. */
static bool deleg_owned(const char *dir)
{
    autoclose int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
           faccessat(fd, "cgroup.procs", W_OK, AT_EACCESS) == 0 &&
           faccessat(fd, "cgroup.subtree_control", W_OK, AT_EACCESS) == 0;
}

int cg_delegation_in(const struct cg_hier *h, char **inner)
{
    *inner = NULL;
    autofree char *path = brig_strdup(h->own != NULL ? h->own : "/");
    const char *mnt = strcmp(h->mnt, "/") == 0 ? "" : h->mnt;
    /* From our own cgroup up to (not including) the root of the mount. */
    for (;;) {
        if (strcmp(path, "/") == 0 || path[0] == '\0') break;
        autofree char *dir = brig_asprintf("%s%s", mnt, path);
        if (!deleg_owned(dir)) break;
        free(*inner);
        *inner = brig_strdup(path);
        char *slash = strrchr(path, '/');
        if (slash == NULL) break;
        if (slash == path) slash[1] = '\0';
        else *slash = '\0';
    }
    return *inner != NULL ? 0 : -1;
}

int cgroup_delegation_find(char **inner, char **why)
{
    *inner = NULL;
    *why = NULL;
    struct cg_layout l = {0};
    autoerr struct brig_error *e = NULL;
    if (cg_layout_detect(&l, &e) < 0) {
        *why = brig_asprintf("no cgroup hierarchy found (%s)", e->msg);
        return -1;
    }
    const struct cg_hier *h = cg_layout_v2(&l);
    int rc = -1;
    if (l.kind != CG_UNIFIED) {
        *why = brig_asprintf("this host's cgroups are %s: the controllers are in cgroup v1 hierarchies, "
                             "which are root's and are never delegated to a user",
                             cg_layout_name(l.kind));
    } else if (cg_delegation_in(h, inner) < 0) {
        *why = brig_asprintf("brig's own cgroup %s is in no cgroup v2 subtree delegated to uid %u "
                             "(none of its directories up to the root is ours)",
                             h->own ? h->own : "/", (unsigned)geteuid());
    } else {
        brig_debug("cgroup: rootless, the subtree delegated to us is %s", *inner);
        rc = 0;
    }
    cg_layout_clear(&l);
    return rc;
}
