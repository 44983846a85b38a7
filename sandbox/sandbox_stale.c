/* Stale one-shot sandboxes: what a brig killed mid-run left in the private
 * state root (its brig-init died with it, by the parent-death signal, so
 * the state says "stopped"; the state directory and the empty cgroup leaf
 * remain). Each run removes those first, as `delete --force` would. A host
 * reboot needs nothing: the state root is under /run and cgroups do not
 * survive it. Only "stopped" is touched: a sandbox still being made or
 * still running belongs to a live brig. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"
#include "../runtime/lifecycle/container.h"
#include "../runtime/lifecycle/state.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

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

void sandbox_reap_stale(const char *root)
{
    char **ids = NULL;
    size_t n = 0;
    if (access(root, F_OK) < 0 || state_list_ids(root, &ids, &n, NULL) < 0) return;
    const struct brig_globals g = { .root = root };
    for (size_t i = 0; i < n; i++) {
        if (!brig_str_has_prefix(ids[i], "sb-") || !stale_stopped(root, ids[i])) continue;
        autoerr struct brig_error *e = NULL;
        if (container_delete(&g, ids[i], true, &e) < 0) brig_warn("sandbox: stale %s: %s", ids[i], e->msg);
        else brig_debug("sandbox: removed stale %s", ids[i]);
    }
    brig_strv_free(ids);
}
