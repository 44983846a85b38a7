/* Shared by policy/workspace/watch.c and watch_walk.c (the watched
 * workspace: docs/policy.md, "Workspace bound"). The public calls are in
 * policy.h. */
#ifndef BRIG_POLICY_WATCH_H
#define BRIG_POLICY_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A tree deeper than this is not measured: the bound fires ("depth"). */
#define WATCH_DEPTH 256

struct watch_walk {
    uint64_t max_bytes, max_inodes;     /* the bounds */
    uint64_t bytes, inodes;             /* the last walk's count, up to where it stopped */
    const char *why;                    /* NULL, or what passed: "bytes", "inodes", "depth" */
    uint64_t *seen; size_t n_seen, cap_seen;    /* multiply linked inodes counted */
};
/* Measure the tree at rootfd (a directory); true when a bound is passed
 * (w->why says which; the walk stops there). */
bool watch_walk(struct watch_walk *w, int rootfd);

#endif
