/* `brig sandbox gc` (docs/sandbox.md, "Leftovers and gc"): everything a
 * dead brig left of its sandboxes, whatever state root they ran in.
 *
 * State roots. Every root other than the default is recorded, before its
 * first run or create makes anything, under SANDBOX_STATE_ROOT/.roots (one
 * file per root, named by the SHA-256 of its path, holding the path); gc
 * sweeps the default root, the recorded ones that still exist (a record of
 * a root that is gone is dropped) and the one it is given.
 *
 * Entries (per root swept): a one-shot run whose owner lock is free, and a
 * stopped one without an owner file, go as `delete --force` takes them
 * (sandbox_reap_stale); a long-lived sandbox whose init is dead (or whose
 * create died) as `sandbox rm --force`; a live one keeps running, only its
 * orphaned execs' cgroups are removed (sandbox_session_gc). Nothing else:
 * a recorded root that is now reached through a symbolic link is not
 * swept, and in a root only sandboxes are judged.
 *
 * Leaves (/brig-sandbox/NAME in every hierarchy). A leaf is ownerless, and
 * removed, when no known root holds an entry NAME or an owner file
 * .owner-NAME, and no process is in it or below it in any hierarchy. That
 * never touches a live sandbox: a one-shot run claims its owner file, and
 * a long-lived one's create its state directory, before the leaf exists,
 * and they go only after it is removed; a running long-lived sandbox has
 * its entry and brig-init in its leaf between execs. A leaf with processes
 * that no known root owns (a root removed under its runs, a brig before
 * the records) is left and named: gc cannot prove what it is. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "sandbox.h"
#include "../runtime/lifecycle/state.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/log.h"
#include "../runtime/util/sha256.h"
#include "../runtime/util/strutil.h"

#define GC_ROOTS_DIR ".roots"
/* `sandbox gc` tells what it leaves; each run's sweep only logs it (debug):
 * a run's stderr is its command's and brig's own, not about other runs. */
#define GC_SAY(loud, ...)                                  \
    do {                                                   \
        if (loud) brig_warn(__VA_ARGS__);                  \
        else brig_debug(__VA_ARGS__);                      \
    } while (0)
#define GC_LEAF_PARENT (&SANDBOX_CGROUP_PARENT[1])

/* ---- the record of state roots ------------------------------------------ */

static void gc_root_record_name(const char *root, char name[65])
{
    uint8_t d[BRIG_SHA256_LEN];
    brig_sha256(root, strlen(root), d);
    brig_sha256_hex(d, name);
}

/* The root as gc finds it again: its real path. Recorded as named, a root
 * named through a symbolic link (/var/run/X, /var/run -> /run) or with a
 * trailing slash was never swept: gc refuses a recorded path that is not
 * its own real path. The root is made first if missing (empty, nothing of
 * a run is in it yet), as every run makes it. */
static int gc_root_real(const char *state_root, char real[PATH_MAX], struct brig_error **err)
{
    autoclose int fd = -1;
    TRY(state_root_open(state_root, true, &fd, err));
    if (realpath(state_root, real) == NULL) return brig_fail(err, errno, "--state-root %s", state_root);
    return 0;
}

int sandbox_root_record(const char *state_root, struct brig_error **err)
{
    if (state_root == NULL || strcmp(state_root, SANDBOX_STATE_ROOT) == 0) return 0;
    if (state_root[0] != '/') return brig_failx(err, "--state-root %s: must be an absolute path", state_root);
    char real[PATH_MAX];
    if (gc_root_real(state_root, real, err) < 0) return state_root_hint(err);
    state_root = real;
    if (strcmp(state_root, SANDBOX_STATE_ROOT) == 0) return 0;
    char name[65];
    gc_root_record_name(state_root, name);
    autoclose int rootfd = -1;
    /* Without the record gc could not see this root's runs: refused, as
     * any state write that cannot be made (a run in a recorded root costs
     * one faccessat). */
    if (state_root_open(SANDBOX_STATE_ROOT, true, &rootfd, err) < 0) return state_root_hint(err);
    if (mkdirat(rootfd, GC_ROOTS_DIR, 0700) < 0 && errno != EEXIST) {
        brig_fail(err, errno, "%s/%s", SANDBOX_STATE_ROOT, GC_ROOTS_DIR);
        return state_root_hint(err);
    }
    autoclose int dfd = openat(rootfd, GC_ROOTS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return brig_fail(err, errno, "%s/%s", SANDBOX_STATE_ROOT, GC_ROOTS_DIR);
    if (faccessat(dfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0) return 0;     /* every run but the first */
    if (brig_write_file_atomic(dfd, name, state_root, strlen(state_root), 0600, err) < 0) {
        brig_wrap(err, "%s/%s: record the state root %s", SANDBOX_STATE_ROOT, GC_ROOTS_DIR, state_root);
        return state_root_hint(err);
    }
    return 0;
}

/* The default root, the recorded ones that exist (records of roots that
 * are gone are dropped), and extra; each once, NULL-terminated. */
static char **gc_known_roots(const char *extra, bool loud)
{
    size_t n = 0, cap = 8;
    char **v = brig_calloc(cap, sizeof(char *));
    v[n++] = brig_strdup(SANDBOX_STATE_ROOT);
    if (extra != NULL && strcmp(extra, SANDBOX_STATE_ROOT) != 0) v[n++] = brig_strdup(extra);
    autoclose int dfd = open(SANDBOX_STATE_ROOT "/" GC_ROOTS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dup(dfd)) : NULL;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strlen(e->d_name) != 64 || e->d_type != DT_REG) continue;
        autofree char *path = NULL;
        if (brig_read_regular_at(dfd, e->d_name, 4096, &path, NULL, NULL) < 0) continue;
        char want[65];
        gc_root_record_name(path, want);
        if (path[0] != '/' || strcmp(want, e->d_name) != 0) continue;      /* not a record */
        if (access(path, F_OK) < 0 && errno == ENOENT) {
            unlinkat(dfd, e->d_name, 0);
            brig_debug("sandbox gc: %s is gone, its record dropped", path);
            continue;
        }
        /* The path as recorded, without a symlink on the way: a directory
         * on it replaced by a link (someone else's, after the root was
         * removed) must not make gc sweep another root (/run/brig). */
        char real[PATH_MAX];
        if (realpath(path, real) == NULL || strcmp(real, path) != 0) {
            GC_SAY(loud, "sandbox gc: the recorded state root %s is now reached through a symbolic link: "
                   "not swept", path);
            continue;
        }
        bool seen = false;
        for (size_t i = 0; i < n && !seen; i++) seen = strcmp(v[i], path) == 0;
        if (seen) continue;
        if (n + 2 > cap) {
            cap *= 2;
            char **nv = realloc(v, cap * sizeof(char *));
            if (nv == NULL) abort();
            v = nv;
        }
        v[n++] = steal_ptr(&path);
    }
    if (d != NULL) closedir(d);
    v[n] = NULL;
    return v;
}

/* ---- leaves -------------------------------------------------------------- */

/* fds of /brig-sandbox in every hierarchy that has it: the v1 ones and the
 * unified one, or /sys/fs/cgroup itself on a cgroup2-only host. */
struct gc_parents { int fd[64]; char name[64][64]; size_t n; };

static void gc_parents_close(struct gc_parents *p)
{
    for (size_t i = 0; i < p->n; i++) close(p->fd[i]);
    p->n = 0;
}

static void gc_parent_add(struct gc_parents *p, int hfd, const char *name)
{
    struct statfs sfs;
    if (p->n == BRIG_ARRAY_SIZE(p->fd) || fstatfs(hfd, &sfs) < 0 ||
        (sfs.f_type != CGROUP_SUPER_MAGIC && sfs.f_type != CGROUP2_SUPER_MAGIC))
        return;
    int fd = openat(hfd, GC_LEAF_PARENT, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    p->fd[p->n] = fd;
    snprintf(p->name[p->n], sizeof(p->name[0]), "%s", name);
    p->n++;
}

static void gc_parents_open(struct gc_parents *p)
{
    p->n = 0;
    autoclose int top = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (top < 0) return;
    gc_parent_add(p, top, "");
    DIR *d = fdopendir(dup(top));
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || e->d_type != DT_DIR) continue;  /* cpu -> cpu,cpuacct: a link */
        autoclose int hfd = openat(top, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (hfd >= 0) gc_parent_add(p, hfd, e->d_name);
    }
    if (d != NULL) closedir(d);
}

/* A process in dir (a cgroup directory) or any directory below it. */
static bool gc_has_procs(int dirfd, int depth)
{
    autoclose int procs = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
    char buf[64];
    if (procs >= 0 && read(procs, buf, sizeof(buf)) > 0) return true;
    if (depth > 8) return true;     /* deeper than brig makes: not ours to judge */
    DIR *d = fdopendir(dup(dirfd));
    bool found = false;
    struct dirent *e;
    while (!found && d != NULL && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || e->d_type != DT_DIR) continue;
        autoclose int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        found = sub >= 0 && gc_has_procs(sub, depth + 1);
    }
    if (d != NULL) closedir(d);
    return found;
}

/* rmdir of name below parentfd and everything below it, deepest first. */
static int gc_rmdir_tree(int parentfd, const char *name, int depth)
{
    autoclose int fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    DIR *d = depth < 8 ? fdopendir(dup(fd)) : NULL;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && e->d_type == DT_DIR) gc_rmdir_tree(fd, e->d_name, depth + 1);
    if (d != NULL) closedir(d);
    if (unlinkat(parentfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT) return -1;
    return 0;
}

/* An entry NAME or an owner file .owner-NAME in one of roots. */
static bool gc_owned(char *const *roots, const char *name)
{
    char owner[96];
    snprintf(owner, sizeof(owner), ".owner-%s", name);
    for (size_t i = 0; roots[i] != NULL; i++) {
        autoclose int rfd = open(roots[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (rfd < 0) continue;
        if (faccessat(rfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
            faccessat(rfd, owner, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
            return true;
    }
    return false;
}

static int gc_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every leaf name under /brig-sandbox, in any hierarchy, once; sorted. */
static char **gc_leaf_names(const struct gc_parents *p, size_t *n)
{
    size_t cap = 16;
    char **v = brig_calloc(cap, sizeof(char *));
    *n = 0;
    for (size_t h = 0; h < p->n; h++) {
        DIR *d = fdopendir(dup(p->fd[h]));
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.' || e->d_type != DT_DIR) continue;
            if (*n + 2 > cap) {
                cap *= 2;
                char **nv = realloc(v, cap * sizeof(char *));
                if (nv == NULL) abort();
                v = nv;
            }
            v[(*n)++] = brig_strdup(e->d_name);
        }
        if (d != NULL) closedir(d);
    }
    qsort(v, *n, sizeof(char *), gc_cmp);
    size_t w = 0;
    for (size_t i = 0; i < *n; i++) {
        if (w > 0 && strcmp(v[w - 1], v[i]) == 0) free(v[i]);
        else v[w++] = v[i];
    }
    *n = w;
    v[w] = NULL;
    return v;
}

static void gc_leaves_in(char *const *roots, struct sandbox_gc_report *rep)
{
    struct gc_parents p;
    gc_parents_open(&p);
    size_t n = 0;
    char **names = gc_leaf_names(&p, &n);
    for (size_t i = 0; i < n; i++) {
        const char *name = names[i];
        if (gc_owned(roots, name)) continue;
        bool procs = false;
        for (size_t h = 0; h < p.n && !procs; h++) {
            autoclose int fd = openat(p.fd[h], name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            procs = fd >= 0 && gc_has_procs(fd, 0);
        }
        if (procs) {
            GC_SAY(rep != NULL, "sandbox gc: %s/%s holds processes and no known state root owns it: left "
                   "alone (brig sandbox gc --state-root DIR, if it ran in a root gc does not know)",
                   SANDBOX_CGROUP_PARENT, name);
            if (rep != NULL) rep->leaves_left++;
            continue;
        }
        bool removed = true;
        for (size_t h = 0; h < p.n; h++) {
            if (gc_rmdir_tree(p.fd[h], name, 0) < 0) {
                GC_SAY(rep != NULL, "sandbox gc: rmdir %s%s/%s: %s", p.name[h][0] ? "/" : "", p.name[h],
                       name, strerror(errno));
                removed = false;
            }
        }
        if (removed) brig_debug("sandbox gc: removed %s/%s (no owner, no process)", SANDBOX_CGROUP_PARENT, name);
        if (rep != NULL) *(removed ? &rep->leaves_removed : &rep->leaves_left) += 1;
    }
    brig_strv_free(names);
    gc_parents_close(&p);
}

/* A sweep of the leaves costs a few hundred system calls (every hierarchy
 * listed, every leaf's owner looked up in every root): each run's stale
 * sweep does it at most once every GC_LEAF_SWEEP_EVERY seconds on a host,
 * by the time stamp of SANDBOX_STATE_ROOT/.leaf-sweep; gc always. */
#define GC_LEAF_SWEEP_EVERY 10

static bool gc_leaf_sweep_due(void)
{
    autoclose int rootfd = open(SANDBOX_STATE_ROOT, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (rootfd < 0) return true;
    struct stat st;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (fstatat(rootfd, ".leaf-sweep", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        st.st_mtim.tv_sec <= now.tv_sec && now.tv_sec - st.st_mtim.tv_sec < GC_LEAF_SWEEP_EVERY)
        return false;
    autoclose int fd = openat(rootfd, ".leaf-sweep", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) futimens(fd, NULL);
    return true;
}

void sandbox_gc_leaves(void)
{
    if (!gc_leaf_sweep_due()) return;
    autostrv char **roots = gc_known_roots(NULL, false);
    gc_leaves_in(roots, NULL);
}

/* ---- the command --------------------------------------------------------- */

static void gc_root(const char *root, struct sandbox_gc_report *rep)
{
    autoclose int rootfd = -1;
    autoerr struct brig_error *e = NULL;
    if (access(root, F_OK) < 0) return;
    if (state_root_open(root, false, &rootfd, &e) < 0) {
        brig_warn("sandbox gc: %s", e->msg);
        rep->errors++;
        return;
    }
    size_t removed = sandbox_reap_stale_entries(root);
    char **ids = NULL;
    size_t n = 0;
    if (state_list_ids(root, &ids, &n, NULL) == 0) {
        for (size_t i = 0; i < n; i++) {
            if (brig_str_has_prefix(ids[i], "sb-")) continue;
            int r = sandbox_session_gc(root, ids[i]);
            if (r > 0) removed++;
            else if (r < 0) rep->errors++;
        }
        brig_strv_free(ids);
    }
    rep->entries_removed += removed;
}

int sandbox_gc(const char *state_root, bool rootless, struct sandbox_gc_report *rep, struct brig_error **err)
{
    /* Rootless: the user's own root only; root's roots and cgroup leaves
     * are not its to judge. */
    if (rootless) {
        gc_root(state_root, rep);
        return 0;
    }
    if (state_root != NULL) TRY(sandbox_root_record(state_root, err));
    autostrv char **roots = gc_known_roots(state_root, true);
    for (size_t i = 0; roots[i] != NULL; i++) {
        /* With --state-root, only its entries; the leaves are judged
         * against every known root all the same. */
        if (state_root != NULL && strcmp(roots[i], state_root) != 0) continue;
        gc_root(roots[i], rep);
    }
    gc_leaves_in(roots, rep);
    return 0;
}
