/* The container's cgroup from birth to removal: create (plan, mkdir in every
 * hierarchy, delegate v2 controllers, apply limits, undo on failure),
 * placement of the init, kill, pids and destroy. The pieces live in
 * cgroup_layout.c, cgroup_path.c, cgroup_plan.c, cgroup_v1.c, cgroup_v2.c,
 * cgroup_fs.c and cgroup_state.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroup_internal.h"
#include "../../util/cleanup.h"
#include "../../util/log.h"
#include "../../util/strutil.h"

const struct cg_dir *cg_dir_v2(const struct brig_cgroup *cg)
{
    for (size_t i = 0; i < cg->n_dirs; i++)
        if (cg->dirs[i].v2) return &cg->dirs[i];
    return NULL;
}

const struct cg_dir *cg_dir_v1(const struct brig_cgroup *cg, const char *ctrl)
{
    for (size_t i = 0; i < cg->n_dirs; i++)
        if (!cg->dirs[i].v2 && cg_list_has(cg->dirs[i].controllers, ctrl)) return &cg->dirs[i];
    return NULL;
}

void cgroup_free(struct brig_cgroup *cg)
{
    if (cg == NULL) return;
    for (size_t i = 0; i < cg->n_dirs; i++) {
        free(cg->dirs[i].path);
        free(cg->dirs[i].controllers);
    }
    free(cg->dirs);
    for (size_t i = 0; i < cg->n_joins; i++) free(cg->joins[i]);
    free(cg->joins);
    if (cg->v2_fd >= 0) close(cg->v2_fd);
    free(cg);
}

static void undo_dirs(struct brig_cgroup *cg)
{
    for (size_t i = cg->n_dirs; i > 0; i--) {
        struct cg_dir *d = &cg->dirs[i - 1];
        if (d->created > 0) cg_rmdir_created(d->path, d->created, NULL);
        d->created = 0;
    }
}

/* A cgroup that already holds processes belongs to someone else: joining it
 * would share limits and let `delete` kill strangers. */
static int check_empty(const struct cg_dir *d, struct brig_error **err)
{
    autofree pid_t *pids = NULL;
    size_t n = 0;
    if (d->created > 0 || cg_read_pids(d->path, &pids, &n, NULL) < 0 || n == 0) return 0;
    return brig_failx(err, "linux.cgroupsPath: cgroup %s already has %zu process(es)", d->path, n);
}

/* Controllers named by linux.resources.unified keys ("hugetlb.2MB.max"),
 * space-separated: they must be enabled for those files to exist. */
static char *unified_controllers(const struct brig_resources *r)
{
    char *out = brig_strdup("");
    for (size_t i = 0; r != NULL && r->present && i < r->n_unified; i++) {
        const char *k = r->unified[i].key, *dot = k ? strchr(k, '.') : NULL;
        if (dot == NULL || strncmp(k, "cgroup.", 7) == 0) continue;
        char *n = brig_asprintf("%s%s%.*s", out, *out ? " " : "", (int)(dot - k), k);
        free(out);
        out = n;
    }
    return out;
}

static bool path_missing(const char *p)
{
    return access(p, F_OK) < 0 && errno == ENOENT;
}

/* Trailing components of path (below mnt) that do not exist yet: what
 * cg_mkdir_p is about to create. The leaf's parent is looked at first: a
 * missing parent means a missing leaf too (one access instead of two for a
 * new container in a new parent); an existing one leaves only the leaf to
 * look at. The count is the same as walking up from the leaf. */
static unsigned missing_levels(const char *mnt, const char *path)
{
    size_t ml = strlen(mnt);
    if (strlen(path) <= ml) return 0;
    autofree char *buf = brig_strdup(path);
    char *slash = strrchr(buf, '/');
    if (slash == NULL || (size_t)(slash - buf) <= ml) return path_missing(path) ? 1 : 0;
    *slash = '\0';
    if (!path_missing(buf)) return path_missing(path) ? 1 : 0;
    unsigned n = 2;     /* the leaf and its parent */
    while ((slash = strrchr(buf, '/')) != NULL) {
        *slash = '\0';
        if (strlen(buf) <= ml || !path_missing(buf)) break;
        n++;
    }
    return n;
}

/* A leaf whose parent was there when the levels were planned: one mkdir,
 * not one per level (EEXIST for each parent). A parent removed since (a
 * shared one, by the delete of the container that made it) or a leaf there
 * already takes the walk, as any leaf does whose parent was missing. */
static int mkdir_planned(const struct cg_hier *h, struct cg_dir *d, unsigned planned, struct brig_error **err)
{
    if (planned == 1) {
        if (mkdir(d->path, 0755) == 0) {
            d->created = 1;
            return 0;
        }
        if (errno != ENOENT && errno != EEXIST) return brig_fail(err, errno, "mkdir %s", d->path);
    }
    return cg_mkdir_p(h->mnt, d->path, &d->created, err);
}

/* Components of path below mnt (path is mnt's or below it). */
static unsigned levels_below(const char *mnt, const char *path)
{
    size_t ml = strlen(mnt);
    unsigned n = 0;
    if (strncmp(path, mnt, ml) != 0) return 0;
    for (const char *c = path + ml; *c != '\0'; c++)
        if (*c != '/' && (c == path + ml || c[-1] == '/')) n++;
    return n;
}

/* cgroup_create_recorded's fresh: a leaf that is there already. */
static int fresh_refused(const char *path, struct brig_error **err)
{
    return brig_fail(err, EEXIST, "linux.cgroupsPath: cgroup %s exists already: it is not this container's "
                     "(another's of the same name, or what a dead one left: brig sandbox gc removes that)", path);
}

static int make_dirs(struct brig_cgroup *cg, const struct cg_layout *l, const char *inner,
                     const char *delegated, const struct cg_plan *plan, const struct brig_resources *r,
                     bool fresh, cgroup_record_fn record, void *arg, struct brig_error **err)
{
    cg->dirs = brig_calloc(l->n, sizeof(*cg->dirs));
    for (size_t i = 0; i < l->n; i++) {
        struct cg_dir *d = &cg->dirs[i];
        d->path = cg_path_in_hier(&l->h[i], inner);
        d->v2 = l->h[i].v2;
        d->controllers = brig_strdup(l->h[i].v2 ? "" : l->h[i].controllers);
        d->created = record != NULL || fresh ? missing_levels(l->h[i].mnt, d->path) : 0;
        d->walk_max = levels_below(l->h[i].mnt, d->path);
        cg->n_dirs++;
        /* Refused before anything is recorded or made: a state naming it
         * would make a later delete kill what is in it. */
        if (fresh && d->created == 0) return fresh_refused(d->path, err);
    }
    /* Recorded before the first mkdir: a brig killed between two of them
     * leaves a state that names every directory it may have made. From here
     * on "created" counts what cg_mkdir_p really made (undo relies on it). */
    autofree char *planned = record != NULL ? cgroup_serialize(cg) : NULL;
    unsigned levels[cg->n_dirs + 1];
    for (size_t i = 0; i < cg->n_dirs; i++) {
        levels[i] = cg->dirs[i].created;
        cg->dirs[i].created = 0;
    }
    if (record != NULL) TRY(record(planned, arg, err));
    for (size_t i = 0; i < l->n; i++) {
        const struct cg_hier *h = &l->h[i];
        struct cg_dir *d = &cg->dirs[i];
        TRY(mkdir_planned(h, d, levels[i], err));
        /* made by another create since the plan */
        if (fresh && d->created == 0) return fresh_refused(d->path, err);
        TRY(check_empty(d, err));
        if (h->v2) {
            /* On unified hosts delegate every available controller (as runc)
             * so later updates and stats work; on hybrid hosts touch the
             * shared v2 tree only for what the limits need. */
            autofree char *extra = l->kind == CG_UNIFIED ? brig_strdup(h->controllers)
                                                          : unified_controllers(r);
            /* Rootless: from the delegated cgroup down (the levels above
             * are root's, and enable what they delegate already). */
            autofree char *top = delegated != NULL ? cg_path_in_hier(h, delegated) : brig_strdup(h->mnt);
            TRY(cgv2_enable_controllers(top, d->path, extra, plan, err));
        }
    }
    return 0;
}

int cgroup_create(const struct brig_spec *s, const char *id, bool systemd,
                  struct brig_cgroup **out, struct brig_error **err)
{
    return cgroup_create_recorded(s, id, systemd, NULL, false, NULL, NULL, out, err);
}

/* Rootless: the controllers are those the delegated cgroup has, and the
 * path is below it ("/x" is <delegated>/x, one already below it stays). */
static int delegated_place(struct cg_layout *l, const char *delegated, char **inner,
                           struct brig_error **err)
{
    struct cg_hier *h = (struct cg_hier *)cg_layout_v2(l);
    if (l->kind != CG_UNIFIED || h == NULL)
        return brig_failx(err, "rootless: no cgroup v2 subtree is delegated here (%s host)",
                          cg_layout_name(l->kind));
    autofree char *dir = cg_path_in_hier(h, delegated);
    char *c = NULL;
    TRY(cg_read(dir, "cgroup.controllers", &c, err));
    size_t n = strlen(c);
    while (n > 0 && (c[n - 1] == '\n' || c[n - 1] == ' ')) c[--n] = '\0';
    free(h->controllers);
    h->controllers = c;
    size_t dl = strlen(delegated);
    if ((*inner)[0] == '/' && strncmp(*inner, delegated, dl) == 0 && (*inner)[dl] == '/') return 0;
    char *placed = brig_asprintf("%s%s%s", delegated, (*inner)[0] == '/' ? "" : "/", *inner);
    free(*inner);
    *inner = placed;
    return 0;
}

int cgroup_create_recorded(const struct brig_spec *s, const char *id, bool systemd,
                           const char *delegated, bool fresh, cgroup_record_fn record, void *arg,
                           struct brig_cgroup **out, struct brig_error **err)
{
    const struct brig_resources *r = s->has_linux ? &s->linux_cfg.resources : NULL;
    const char *cgpath = s->has_linux ? s->linux_cfg.cgroups_path : NULL;
    struct cg_layout l = {0};
    struct cg_plan plan;
    autofree char *inner = NULL;
    if (cg_layout_detect(&l, err) < 0) return -1;
    /* A rootless brig places "slice:prefix:name" where the user's own
     * systemd would: below its delegated cgroup, user@UID.service. */
    bool sd_running = systemd && (delegated != NULL || cg_systemd_running());
    bool ok = delegated == NULL
                  ? cg_plan_make(&l, r, &plan, err) == 0 &&
                        cg_path_resolve(cgpath, id, systemd, sd_running, &inner, err) == 0
                  : cg_path_resolve(cgpath, id, systemd, sd_running, &inner, err) == 0 &&
                        delegated_place(&l, delegated, &inner, err) == 0 && cg_plan_make(&l, r, &plan, err) == 0;
    if (!ok) {
        cg_layout_clear(&l);
        return -1;
    }
    /* Rootless: no device program (loading one needs CAP_BPF or
     * CAP_SYS_ADMIN over the host, as crun's rootless mode knows). Nothing
     * is lost: the container's nodes are the host's, bound in, opened with
     * the caller's own rights on them, and none can be made (mknod of a
     * device needs CAP_MKNOD over the host; cgroup_disabled_check). */
    if (delegated != NULL && plan.where[CG_DEVICES] != CG_NONE) {
        brig_debug("cgroup: rootless, the device rules are not loaded (the nodes are the host's, bound in)");
        plan.where[CG_DEVICES] = CG_NONE;
    }
    struct brig_cgroup *cg = brig_calloc(1, sizeof(*cg));
    cg->layout = l.kind;
    cg->v2_fd = -1;
    cg->made_here = true;
    int rc = make_dirs(cg, &l, inner, delegated, &plan, r, fresh, record, arg, err);
    cg_layout_clear(&l);
    if (rc == 0) rc = cgv1_apply(cg, &plan, r, err);
    if (rc == 0) rc = cgv2_apply(cg, &plan, r, err);
    const struct cg_dir *v2 = cg_dir_v2(cg);
    if (rc == 0 && v2 != NULL) {
        /* O_PATH fds are refused by CLONE_INTO_CGROUP: open for reading. */
        cg->v2_fd = open(v2->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (cg->v2_fd < 0) rc = brig_fail(err, errno, "open %s", v2->path);
    }
    if (rc < 0) {
        undo_dirs(cg);
        cgroup_free(cg);
        return brig_wrap(err, "cgroup");
    }
    brig_debug("cgroup: created %s (%s layout)", inner, cg_layout_name(cg->layout));
    *out = cg;
    return 0;
}

int cgroup_clone_fd(const struct brig_cgroup *cg)
{
    /* Also on hybrid hosts: the v2 part is joined at clone, the v1
     * hierarchies by cgroup_attach or cgroup_attach_self. */
    if (cg == NULL) return -1;
    return cg->v2_fd;
}

int cgroup_clone_fd_open(struct brig_cgroup *cg)
{
    if (cg == NULL) return -1;
    const struct cg_dir *v2 = cg_dir_v2(cg);
    /* O_PATH fds are refused by CLONE_INTO_CGROUP: open for reading. */
    if (cg->v2_fd < 0 && v2 != NULL) cg->v2_fd = open(v2->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return cg->v2_fd;
}

int cgroup_attach(const struct brig_cgroup *cg, pid_t pid, bool cloned_into,
                  struct brig_error **err)
{
    for (size_t i = 0; i < cg->n_dirs; i++) {
        const struct cg_dir *d = &cg->dirs[i];
        if (d->v2 && cloned_into) continue;
        if (cg_writef(d->path, "cgroup.procs", NULL, err, "%d", (int)pid) < 0)
            return brig_wrap(err, "cgroup: attach pid %d", (int)pid);
    }
    for (size_t i = 0; i < cg->n_joins; i++)
        if (cg_writef(cg->joins[i], "cgroup.procs", NULL, err, "%d", (int)pid) < 0)
            return brig_wrap(err, "cgroup: attach pid %d", (int)pid);
    brig_debug("cgroup: pid %d attached (%s)", (int)pid, cloned_into ? "cloned into v2" : "all");
    return 0;
}

/* A cgroup.procs write by another process takes the global
 * cgroup_threadgroup_rwsem for writing, and the first writer after a quiet
 * spell waits for an RCU grace period: 5-13 ms on every create here. A
 * thread that writes "0" to a v1 "tasks" file moves only itself and the
 * kernel skips that lock (cgroup_procs_write_start), ~40 us. The init is a
 * fresh clone of single-threaded brig, so its one thread is the process. */
int cgroup_attach_self(const struct brig_cgroup *cg, bool cloned_into, struct brig_error **err)
{
    /* Each file opened and written, then all closed together: one
     * close_range per run of adjacent fds instead of one close each. On
     * the stack, not the heap: this runs in the freshly cloned init, where
     * every heap page malloc writes is a copy-on-write fault. */
    int fds[cg->n_dirs + cg->n_joins + 1];
    size_t n = 0;
    int r = 0;
    for (size_t i = 0; r == 0 && i < cg->n_dirs + cg->n_joins; i++) {
        bool own = i < cg->n_dirs;
        const struct cg_dir *d = own ? &cg->dirs[i] : NULL;
        const char *dir = own ? d->path : cg->joins[i - cg->n_dirs];
        if (own && d->v2 && cloned_into) continue;
        /* v2 has no per-thread move for domain cgroups: cgroup.procs. */
        const char *file = own && d->v2 ? "cgroup.procs" : "tasks";
        char path[PATH_MAX];
        int len = snprintf(path, sizeof(path), "%s/%s", dir, file);
        if (len < 0 || (size_t)len >= sizeof(path)) {
            r = brig_failx(err, "cgroup: join %s: path too long", dir);
            break;
        }
        fds[n] = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fds[n] < 0) {
            r = brig_fail(err, errno, "cgroup: join %s: open %s", dir, path);
            break;
        }
        if (write(fds[n++], "0", 1) != 1)
            r = brig_fail(err, errno, "cgroup: join %s: write \"0\" to %s", dir, path);
    }
    brig_close_all(fds, n);
    if (r < 0) return -1;
    brig_debug("cgroup: pid %d joined its cgroups itself (%s)", (int)getpid(), cloned_into ? "cloned into v2" : "all");
    return 0;
}

/* Where the container's pids are listed: every hierarchy holds all of them
 * (attach joins each), v2 is preferred as cgroup.kill/freeze live there. */
static const struct cg_dir *primary(const struct brig_cgroup *cg)
{
    const struct cg_dir *pick[] = {cg_dir_v2(cg), cg_dir_v1(cg, "pids"),
                                   cg->n_dirs > 0 ? &cg->dirs[0] : NULL};
    /* A half-finished earlier delete may have removed some already. */
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(pick); i++)
        if (pick[i] != NULL && access(pick[i]->path, F_OK) == 0) return pick[i];
    for (size_t i = 0; i < cg->n_dirs; i++)
        if (access(cg->dirs[i].path, F_OK) == 0) return &cg->dirs[i];
    return pick[0] != NULL ? pick[0] : pick[2];
}

int cgroup_pids(const struct brig_cgroup *cg, pid_t **pids, size_t *n, struct brig_error **err)
{
    const struct cg_dir *d = primary(cg);
    if (d == NULL) return brig_failx(err, "cgroup: no hierarchy recorded");
    if (cg_read_pids(d->path, pids, n, err) < 0) return brig_wrap(err, "cgroup");
    return 0;
}

int cgroup_pids_tree(const struct brig_cgroup *cg, pid_t **pids, size_t *n)
{
    const struct cg_dir *d = primary(cg);
    *pids = NULL;
    *n = 0;
    return d == NULL ? -1 : cg_read_pids_tree(d->path, 8, pids, n);
}

bool cgroup_empty(const struct brig_cgroup *cg)
{
    /* The hierarchy cgroup_pids reads; one it cannot read is not empty. */
    const struct cg_dir *d = primary(cg);
    if (d == NULL) return false;
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/cgroup.procs", d->path) >= (int)sizeof(path)) return false;
    autoclose int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    char c;
    return fd >= 0 && read(fd, &c, 1) == 0;
}

struct freezer {
    const char *dir;
    bool v2;
};

static bool frozen(struct freezer f)
{
    return f.v2 ? cgv2_frozen(f.dir) : cgv1_frozen(f.dir);
}

static int freeze(struct freezer f, bool on, struct brig_error **err)
{
    return f.v2 ? cgv2_freeze(f.dir, on, err) : cgv1_freeze(f.dir, on, err);
}

/* The freezer pause/resume and kill use: v2 when the leaf has one (it holds
 * every process on hybrid hosts too), else the v1 freezer hierarchy. */
static struct freezer pick_freezer(const struct brig_cgroup *cg)
{
    const struct cg_dir *v2 = cg_dir_v2(cg), *v1f = cg_dir_v1(cg, "freezer");
    if (v2 != NULL && cg_file_exists(v2->path, "cgroup.freeze")) return (struct freezer){v2->path, true};
    if (v1f != NULL) return (struct freezer){v1f->path, false};
    return (struct freezer){NULL, false};
}

int cgroup_freeze(const struct brig_cgroup *cg, bool on, struct brig_error **err)
{
    struct freezer f = pick_freezer(cg);
    if (f.dir == NULL) return brig_failx(err, "cgroup: no freezer (neither cgroup.freeze nor a v1 "
                                         "freezer hierarchy)");
    if (freeze(f, on, err) < 0) return brig_wrap(err, "cgroup");
    return 0;
}

bool cgroup_frozen(const struct brig_cgroup *cg)
{
    struct freezer f = pick_freezer(cg);
    return f.dir != NULL && frozen(f);
}

int cgroup_oom_kills(const struct brig_cgroup *cg, uint64_t *n, struct brig_error **err)
{
    const struct cg_dir *d = cg_dir_v1(cg, "memory");
    const char *file = "memory.oom_control";
    if (d == NULL) {
        d = cg_dir_v2(cg);
        file = "memory.events";
    }
    *n = 0;
    if (d == NULL) return brig_failx(err, "cgroup: no memory controller to read OOM kills from");
    autofree char *text = NULL;
    autoerr struct brig_error *re = NULL;
    /* no access() first: a missing file is ENOENT from the read itself */
    if (cg_read(d->path, file, &text, &re) < 0) {
        if (re->errnum == ENOENT)
            return brig_failx(err, "cgroup: no memory controller to read OOM kills from");
        return brig_failx(err, "cgroup: %s", re->msg);
    }
    for (char *l = text; l != NULL && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        unsigned long long v;
        if (sscanf(l, "oom_kill %llu", &v) == 1) {
            *n = v;
            return 0;
        }
    }
    return 0;
}

int cgroup_kill(const struct brig_cgroup *cg, int sig, struct brig_error **err)
{
    const struct cg_dir *v2 = cg_dir_v2(cg), *v1f = cg_dir_v1(cg, "freezer");
    if (sig == SIGKILL && v2 != NULL && cg_file_exists(v2->path, "cgroup.kill")) {
        /* The kernel kills every task, including ones forking right now. */
        if (cg_write(v2->path, "cgroup.kill", NULL, "1", err) < 0) return brig_wrap(err, "cgroup");
        /* Tasks stopped by a v1 freezer only die once thawed. */
        if (v1f != NULL && cgv1_frozen(v1f->path)) cgv1_freeze(v1f->path, false, NULL);
        brig_debug("cgroup: cgroup.kill in %s", v2->path);
        return 0;
    }
    struct freezer f = pick_freezer(cg);
    /* Freeze first so nothing forks past the pid list; a failed freeze only
     * loses that guarantee, the signals are still sent. */
    bool was_frozen = f.dir != NULL && frozen(f);
    bool froze = false;
    if (f.dir != NULL && !was_frozen) {
        autoerr struct brig_error *fe = NULL;
        froze = freeze(f, true, &fe) == 0;
        if (!froze) brig_debug("cgroup: kill without freezing: %s", fe->msg);
    }
    autofree pid_t *pids = NULL;
    size_t n = 0;
    int rc = cgroup_pids(cg, &pids, &n, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (kill(pids[i], sig) < 0 && errno != ESRCH)
            rc = brig_fail(err, errno, "cgroup: kill pid %d", (int)pids[i]);
    }
    /* Thaw what we froze; a paused container stays paused unless killed. */
    if (f.dir != NULL && (froze || (was_frozen && sig == SIGKILL))) freeze(f, false, NULL);
    if (v1f != NULL && sig == SIGKILL && f.v2 && cgv1_frozen(v1f->path))
        cgv1_freeze(v1f->path, false, NULL);
    brig_debug("cgroup: signal %d sent to %zu process(es)", sig, n);
    return rc;
}

/* The pids left in the container's cgroup, from the first hierarchy (in
 * primary()'s order) that still has it: 1 read, 0 none has it any more, -1
 * unreadable. Reading is the existence check (no access() first). */
static int left_pids(const struct brig_cgroup *cg, pid_t **pids, size_t *n)
{
    const struct cg_dir *pick[] = {cg_dir_v2(cg), cg_dir_v1(cg, "pids")};
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(pick) + cg->n_dirs; i++) {
        const struct cg_dir *d = i < BRIG_ARRAY_SIZE(pick) ? pick[i] : &cg->dirs[i - BRIG_ARRAY_SIZE(pick)];
        if (d == NULL) continue;
        autoerr struct brig_error *e = NULL;
        if (cg_read_pids(d->path, pids, n, &e) == 0) return 1;
        if (e->errnum != ENOENT) return -1;
    }
    return 0;
}

/* SIGKILL whatever is in one directory of the container's cgroup: the
 * number of processes signalled. */
static size_t kill_members(const char *dir)
{
    autoclose int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? 0 : cg_kill_members_at(fd);
}

int cgroup_destroy(struct brig_cgroup *cg, struct brig_error **err)
{
    autofree pid_t *left = NULL;
    size_t n_left = 0;
    /* An empty cgroup stays empty (no member is left to fork), so the usual
     * case, a container whose processes are all gone, skips the freeze,
     * kill and thaw. A process left in another hierarchy makes rmdir fail
     * below with EBUSY: reported, never ignored. */
    int found = left_pids(cg, &left, &n_left);
    if (found < 0 || (found > 0 && n_left > 0)) {
        autoerr struct brig_error *ke = NULL;
        if (cgroup_kill(cg, SIGKILL, &ke) < 0) brig_debug("cgroup: destroy: %s", ke->msg);
    }
    int rc = 0;
    for (size_t i = 0; i < cg->n_dirs; i++) {
        struct cg_dir *d = &cg->dirs[i];
        if (d->created == 0) continue;
        /* A cgroup this process made has exact paths and counts: nothing
         * to check before removing it (rmdir removes only empty cgroup
         * directories, and a missing one is skipped by cg_rmdir_created). */
        if (!cg->made_here) {
            /* A create killed between two mkdirs (state recorded as planned)
             * may have made the parent and not the leaf: remove the parent. */
            autofree char *probe = brig_strdup(d->path);
            /* one statfs both tells whether the path exists and, as the path
             * comes from the state file, whether it is a cgroup (checked
             * before removing anything) */
            struct statfs sfs;
            if (statfs(probe, &sfs) < 0) {
                char *slash = strrchr(probe, '/');
                if (d->created < 2 || slash == NULL || slash == probe) continue;
                *slash = '\0';
                if (statfs(probe, &sfs) < 0) continue;
            }
            if (sfs.f_type != CGROUP_SUPER_MAGIC && sfs.f_type != CGROUP2_SUPER_MAGIC) {
                if (rc == 0) rc = brig_failx(err, "cgroup: %s is not on a cgroup filesystem", d->path);
                continue;
            }
        }
        autoerr struct brig_error *e = NULL;
        /* The kernel removes only a cgroup without child cgroups: the usual
         * leaf goes with one rmdir, and a nested manager's cgroups are
         * looked for only when it is refused. */
        bool gone = rmdir(d->path) == 0;
        if (!gone) cg_subtree_remove(d->path);
        int r = cg_rmdir_levels(d->path, d->created, d->walk_max, gone, &e);
        /* A process that joined this hierarchy only (a hook's, written to
         * one v1 cgroup.procs) is not in the pid list killed above, and
         * keeps this directory busy: in a cgroup this container made, it
         * goes with the container (else the id could not be used again). */
        if (r < 0 && e->errnum == EBUSY && kill_members(d->path) > 0) {
            brig_debug("cgroup: destroy: killed what was left in %s only", d->path);
            brig_error_freep(&e);
            r = cg_rmdir_created(d->path, d->created, &e);
        }
        if (r < 0) {
            if (rc == 0) rc = brig_failx(err, "cgroup: %s", e->msg);
            continue;
        }
        d->created = 0;
    }
    return rc;
}
