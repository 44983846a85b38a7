/* Stale one-shot sandboxes: what a brig killed mid-run (kill -9, the OOM
 * killer, a crash) left in the private state root. Each run removes those
 * first, so a runner host heals without an operator.
 *
 * Who is dead is decided by an owner lock, not by the state: every run
 * holds an flock on <state root>/.owner-<id> from before its state exists
 * until after its delete. The kernel drops the lock with the brig, so a
 * lockable owner file is a dead brig, whatever its sandbox's state says
 * (creating, created, running: brig-init's parent-death signal usually
 * took the init along, but a brig killed between the clone and that
 * prctl leaves it running). Then, as `delete --force`: kill what is in
 * the cgroup, remove the cgroup and the state; and the cgroup leaf
 * /brig-sandbox/<id> of every hierarchy, which a brig killed before it
 * wrote the state would otherwise strand. The file appears already locked
 * (made as an O_TMPFILE, locked, then linked): a reaper never sees a live
 * run's file unlocked.
 *
 * A state without an owner file (a brig before this file existed) is only
 * reaped once "stopped". A host reboot needs nothing: the state root is
 * under /run and cgroups do not survive it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox.h"
#include "../runtime/lifecycle/container.h"
#include "../runtime/lifecycle/state.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

#define OWNER_PREFIX ".owner-"

int sandbox_owner_claim(const char *root, const char *id, struct sandbox_owner *ow, struct brig_error **err)
{
    ow->rootfd = ow->fd = -1;
    snprintf(ow->name, sizeof(ow->name), OWNER_PREFIX "%s", id);
    autoclose int rootfd = -1;
    TRY(state_root_open(root, true, &rootfd, err));
    autoclose int fd = openat(rootfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR) {
        brig_fail(err, errno, "%s: owner lock", root);
        return state_root_hint(err);
    }
    if (fd >= 0) {
        if (flock(fd, LOCK_EX) < 0) return brig_fail(err, errno, "%s: lock the owner file", root);
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        if (linkat(AT_FDCWD, proc, rootfd, ow->name, AT_SYMLINK_FOLLOW) < 0) {
            brig_fail(err, errno, "%s/%s", root, ow->name);
            return state_root_hint(err);
        }
    } else {
        /* no O_TMPFILE on this filesystem: a name no reaper reads
         * (".owner-tmp-..."), locked, then renamed into place */
        char tmp[sizeof(ow->name) + 8];
        snprintf(tmp, sizeof(tmp), OWNER_PREFIX "tmp-%s", id);
        fd = openat(rootfd, tmp, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) return brig_fail(err, errno, "%s/%s", root, tmp);
        if (flock(fd, LOCK_EX) < 0 || renameat(rootfd, tmp, rootfd, ow->name) < 0) {
            int e = errno;
            unlinkat(rootfd, tmp, 0);
            return brig_fail(err, e, "%s/%s", root, ow->name);
        }
    }
    ow->rootfd = steal_fd(&rootfd);
    ow->fd = steal_fd(&fd);
    return 0;
}

void sandbox_owner_release(struct sandbox_owner *ow)
{
    if (ow->rootfd >= 0) unlinkat(ow->rootfd, ow->name, 0);
    brig_closep(&ow->fd);
    brig_closep(&ow->rootfd);
}

/* Every process in one cgroup directory killed, then (remove) the
 * directory removed. A v1 leaf empties asynchronously after SIGKILL: a few
 * tries. */
static void stale_cgroup_leaf(int hfd, const char *hname, const char *id, bool remove)
{
    char rel[96];
    snprintf(rel, sizeof(rel), "%s/%s", &SANDBOX_CGROUP_PARENT[1], id);
    for (int tries = 0; tries < 50; tries++) {
        autoclose int pfd = openat(hfd, rel, O_DIRECTORY | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (pfd < 0) return;
        autoclose int procs = openat(pfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
        FILE *f = procs >= 0 ? fdopen(steal_fd(&procs), "r") : NULL;
        long pid;
        while (f != NULL && fscanf(f, "%ld", &pid) == 1)
            if (pid > 1) kill((pid_t)pid, SIGKILL);
        if (f != NULL) fclose(f);
        if (!remove) return;
        if (unlinkat(hfd, rel, AT_REMOVEDIR) == 0 || errno == ENOENT) {
            brig_debug("sandbox: removed stale cgroup %s/%s", hname, rel);
            return;
        }
        nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
    }
    brig_warn("sandbox: stale cgroup %s/%s: %s", hname, rel, strerror(errno));
}

/* The leaf of id in every hierarchy: the v1 ones and the unified one, or
 * /sys/fs/cgroup itself on a cgroup2-only host. */
static void stale_cgroups(const char *id, bool remove)
{
    autoclose int top = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (top < 0) return;
    stale_cgroup_leaf(top, "", id, remove);
    DIR *d = fdopendir(dup(top));
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || e->d_type != DT_DIR) continue;
        autoclose int hfd = openat(top, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (hfd >= 0) stale_cgroup_leaf(hfd, e->d_name, id, remove);
    }
    closedir(d);
}

/* One owner file: if its brig is gone, everything of its sandbox goes
 * (true). */
static bool stale_owner(const char *root, int rootfd, const char *name)
{
    const char *id = name + strlen(OWNER_PREFIX);
    if (!brig_str_has_prefix(id, "sb-") || state_validate_id(id, NULL) < 0) return false;
    autoclose int fd = openat(rootfd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0) return false;     /* a live brig holds it */
    /* Killed first in every hierarchy: a process that is in the leaf of
     * one controller only must not keep the delete from removing it. */
    stale_cgroups(id, false);
    const struct brig_globals g = { .root = root };
    autoerr struct brig_error *e = NULL;
    if (container_delete(&g, id, true, &e) < 0) {
        /* kept: the next run tries again */
        brig_warn("sandbox: stale %s: %s", id, e->msg);
        return false;
    }
    stale_cgroups(id, true);
    unlinkat(rootfd, name, 0);
    brig_debug("sandbox: removed stale %s (its brig is gone)", id);
    return true;
}

static bool stale_stopped(const char *root, const char *id)
{
    autoclose int dirfd = -1;
    if (state_dir_open_unlocked(root, id, &dirfd, NULL) < 0) return false;
    struct brig_state *st = NULL;
    if (state_read(dirfd, &st, NULL) < 0) return false;
    bool stopped = state_status(dirfd, st) == BRIG_STATUS_STOPPED;
    state_free(st);
    return stopped;
}

size_t sandbox_reap_stale_entries(const char *root)
{
    size_t removed = 0;
    autoclose int rootfd = -1;
    if (access(root, F_OK) < 0 || state_root_open(root, false, &rootfd, NULL) < 0) return 0;
    DIR *d = fdopendir(dup(rootfd));
    if (d == NULL) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (brig_str_has_prefix(e->d_name, OWNER_PREFIX)) removed += stale_owner(root, rootfd, e->d_name);
    closedir(d);

    char **ids = NULL;
    size_t n = 0;
    if (state_list_ids(root, &ids, &n, NULL) < 0) return removed;
    const struct brig_globals g = { .root = root };
    for (size_t i = 0; i < n; i++) {
        if (!brig_str_has_prefix(ids[i], "sb-")) continue;
        char name[sizeof(OWNER_PREFIX) + 64];
        snprintf(name, sizeof(name), OWNER_PREFIX "%s", ids[i]);
        if (faccessat(rootfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || !stale_stopped(root, ids[i])) continue;
        autoerr struct brig_error *err = NULL;
        if (container_delete(&g, ids[i], true, &err) < 0) {
            brig_warn("sandbox: stale %s: %s", ids[i], err->msg);
            continue;
        }
        brig_debug("sandbox: removed stale %s", ids[i]);
        removed++;
    }
    brig_strv_free(ids);
    return removed;
}

void sandbox_reap_stale(const char *root)
{
    sandbox_reap_stale_entries(root);
    /* and what no state root's entry or owner file accounts for (sandbox_gc.c) */
    sandbox_gc_leaves();
}
