/* Shared by policy/workspace/watch.c and watch_walk.c (the watched
 * workspace: docs/policy.md, "Workspace bound"). The public calls are in
 * policy.h. */
#ifndef BRIG_POLICY_WATCH_H
#define BRIG_POLICY_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A tree deeper than this is not measured: the bound fires ("depth"). */
#define WATCH_DEPTH 256

struct watch_walk {
    uint64_t max_bytes, max_inodes;     /* the bounds */
    uint64_t bytes, inodes;             /* the last walk's count, up to where it stopped */
    const char *why;                    /* NULL, or what passed: "bytes", "inodes", "depth" */
    uint64_t *seen; size_t n_seen, cap_seen;    /* multiply linked inodes counted */
    char setid[256];                    /* the first writable set-id file met, "" if none */
};
/* Measure the tree at rootfd (a directory); true when a bound is passed
 * (w->why says which; the walk stops there). */
bool watch_walk(struct watch_walk *w, int rootfd);
/* Whether key (an inode number) was counted in this walk; insert: counted
 * now. Never true for a key not inserted (an allocation that fails only
 * counts a file again: never fewer bytes). */
bool watch_seen(struct watch_walk *w, uint64_t key, bool insert);
/* Add to the walk's count what the processes pids hold of the workspace's
 * filesystem (dev) that no name leads to (watch_hidden.c); true when the
 * bound is passed. */
bool watch_hidden(struct watch_walk *w, const pid_t *pids, size_t n, dev_t dev);

#endif
