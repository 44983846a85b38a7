/* Child cgroups of a running container's cgroup: what `brig sandbox exec`
 * gives each command it runs in a long-lived sandbox, so that the command
 * and everything it started (setsid, double fork) can be killed together,
 * and only them, while the sandbox's limits (on the parent, hierarchical in
 * v1 and v2 alike) stay shared.
 *
 * v1: a directory of the same name in every hierarchy the container uses
 * (a cpuset one filled from its parent, as at create); cgroup_kill then
 * freezes the child's freezer, signals its cgroup.procs and thaws. A lean
 * child (`sandbox exec`'s) has one only in the hierarchies that kill it
 * (freezer), measure it (memory, cpuacct), list its processes (pids) or
 * hold its lock (the container's first, where every brig since the first
 * looks for it); in the container's other hierarchies (cpu, cpuset,
 * devices, blkio, net_cls, perf_event, hugetlb, named ones such as
 * systemd) its process joins the container's own directory
 * (brig_cgroup.joins): the same limits, one mkdir and rmdir (and a
 * cpuset's two copies) less each. Helpers (egress, the watcher) keep one
 * in every hierarchy: a helper left in the container's own directory at
 * its delete would hold its rmdir. A child opened to be removed
 * (cgroup_child_open) has every hierarchy as its own, so one made either
 * way, or by an older brig, goes whole.
 * v2: one directory; no controller is enabled in the parent's
 * subtree_control, so the no-internal-process rule does not apply (the
 * parent keeps its init, the child's usage is charged to the parent) and
 * cgroup_kill writes the child's cgroup.kill. Hybrid hosts get both. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_internal.h"
#include "../../util/cleanup.h"
#include "../../util/strutil.h"

static int child_name_check(const char *name, struct brig_error **err)
{
    size_t n = strlen(name);
    if (n == 0 || n > 64 || strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
        cg_path_component_is_control(name, n))
        return brig_failx(err, "cgroup: \"%s\" is not a child cgroup name", name);
    return 0;
}

/* A lean child's own directory in d's hierarchy (else it joins the
 * parent's): where it is killed, measured and listed. */
static bool child_owns(const struct cg_dir *d)
{
    static const char *const own[] = {"freezer", "memory", "cpuacct", "pids"};
    if (d->v2) return true;
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(own); i++)
        if (cg_list_has(d->controllers, own[i])) return true;
    return false;
}

/* Whether a lean child owns a directory in the parent's dirs[i]: the
 * first always (its lock, where older brigs lock and reap it too), and
 * all of them when none of those hierarchies is mounted. */
static bool child_owns_at(const struct brig_cgroup *cg, size_t i)
{
    if (i == 0) return true;
    for (size_t j = 0; j < cg->n_dirs; j++)
        if (child_owns(&cg->dirs[j])) return child_owns(&cg->dirs[i]);
    return true;
}

static void child_add_dir(struct brig_cgroup *c, const struct cg_dir *parent, const char *name)
{
    struct cg_dir *d = &c->dirs[c->n_dirs++];
    d->path = brig_asprintf("%s/%s", parent->path, name);
    d->v2 = parent->v2;
    d->controllers = brig_strdup(parent->controllers);
    d->created = 1;     /* the child only: never the container's own */
    d->walk_max = 1;    /* nor a look at the container's for a mark */
}

/* The owned hierarchies first, in the parent's order (dirs[0], the lock,
 * is the parent's dirs[0] either way); then, all (not lean), the others
 * as its own too, else as joins of the parent's. */
static struct brig_cgroup *child_of(const struct brig_cgroup *cg, const char *name, bool all)
{
    struct brig_cgroup *c = brig_calloc(1, sizeof(*c));
    c->layout = cg->layout;
    c->v2_fd = -1;
    c->dirs = brig_calloc(cg->n_dirs ? cg->n_dirs : 1, sizeof(*c->dirs));
    c->joins = brig_calloc(cg->n_dirs ? cg->n_dirs : 1, sizeof(*c->joins));
    for (size_t i = 0; i < cg->n_dirs; i++)
        if (child_owns_at(cg, i)) child_add_dir(c, &cg->dirs[i], name);
    for (size_t i = 0; i < cg->n_dirs; i++) {
        if (child_owns_at(cg, i)) continue;
        if (all) child_add_dir(c, &cg->dirs[i], name);
        else c->joins[c->n_joins++] = brig_strdup(cg->dirs[i].path);
    }
    return c;
}

int cgroup_child_create(const struct brig_cgroup *cg, const char *name, bool lean, struct brig_cgroup **out,
                        struct brig_error **err)
{
    TRY(child_name_check(name, err));
    struct brig_cgroup *c = child_of(cg, name, !lean);
    c->made_here = true;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->n_dirs; i++) {
        struct cg_dir *d = &c->dirs[i];
        /* The parent must be there: a removed sandbox is not made again. */
        if (mkdir(d->path, 0755) < 0) {
            rc = brig_fail(err, errno, "cgroup: mkdir %s", d->path);
            d->created = 0;
            for (size_t j = i + 1; j < c->n_dirs; j++) c->dirs[j].created = 0;
            break;
        }
        if (!d->v2 && cg_list_has(d->controllers, "cpuset")) rc = cgv1_cpuset_init(d, err);
    }
    if (rc < 0) {
        for (size_t i = 0; i < c->n_dirs; i++)
            if (c->dirs[i].created) cg_rmdir_created(c->dirs[i].path, 1, NULL);
        cgroup_free(c);
        return -1;
    }
    *out = c;
    return 0;
}

int cgroup_child_open(const struct brig_cgroup *cg, const char *name, struct brig_cgroup **out,
                      struct brig_error **err)
{
    TRY(child_name_check(name, err));
    *out = child_of(cg, name, true);
    return 0;
}

static int child_list(const struct brig_cgroup *cg, size_t n_dirs, const char *prefix, char ***names,
                      size_t *n, struct brig_error **err)
{
    *names = NULL;
    *n = 0;
    size_t cap = 0;
    for (size_t i = 0; i < n_dirs && i < cg->n_dirs; i++) {
        DIR *d = opendir(cg->dirs[i].path);
        if (d == NULL) {
            if (errno == ENOENT) continue;
            return brig_fail(err, errno, "cgroup: list %s", cg->dirs[i].path);
        }
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_type != DT_DIR || !brig_str_has_prefix(e->d_name, prefix)) continue;
            bool seen = false;
            for (size_t j = 0; j < *n && !seen; j++) seen = strcmp((*names)[j], e->d_name) == 0;
            if (seen) continue;
            if (*n + 2 > cap) {
                cap = cap ? cap * 2 : 8;
                char **nn = realloc(*names, cap * sizeof(char *));
                if (nn == NULL) abort();
                *names = nn;
            }
            (*names)[(*n)++] = brig_strdup(e->d_name);
            (*names)[*n] = NULL;
        }
        closedir(d);
    }
    return 0;
}

int cgroup_child_list(const struct brig_cgroup *cg, const char *prefix, char ***names, size_t *n,
                      struct brig_error **err)
{
    /* A child is made in every hierarchy it owns in turn, an older brig's
     * in every one: list them all, once each. */
    return child_list(cg, cg->n_dirs, prefix, names, n, err);
}

int cgroup_child_list_lockable(const struct brig_cgroup *cg, const char *prefix, char ***names, size_t *n,
                               struct brig_error **err)
{
    /* Every child, lean or not, has the container's first (its lock). */
    return child_list(cg, 1, prefix, names, n, err);
}

bool cgroup_child_busy(const struct brig_cgroup *cg, const char *name)
{
    for (size_t i = 0; i < cg->n_dirs; i++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof(path), "%s/%s/cgroup.procs", cg->dirs[i].path, name) >= (int)sizeof(path))
            continue;
        autoclose int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        /* A child is made in the container's first hierarchy first (lean
         * or not): none there, none at all (the usual case: one failed
         * open). Where a lean one has none, the open fails: skipped. */
        if (fd < 0 && i == 0 && errno == ENOENT) return false;
        char c;
        if (fd >= 0 && read(fd, &c, 1) == 1) return true;
    }
    return false;
}

int cgroup_child_lock(const struct brig_cgroup *child, bool wait)
{
    return cgroup_lock(child, LOCK_EX | (wait ? 0 : LOCK_NB));
}

int cgroup_lock(const struct brig_cgroup *cg, int how)
{
    if (cg->n_dirs == 0) {
        errno = ENOENT;
        return -1;
    }
    int fd = open(cg->dirs[0].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    if (flock(fd, how) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}
