/* Shared by policy/workspace/stage.c and commit.c (the staged workspace:
 * docs/policy.md, "Workspace bound"). The public calls are in policy.h. */
#ifndef BRIG_POLICY_STAGE_H
#define BRIG_POLICY_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "../policy.h"

/* STATE/wsstage.json: the workspace the stage writes back to. */
struct stage_map { uint32_t disk, seen, size; };     /* an idmapped workspace's mapping */
struct stage_record {
    bool present;
    char *workspace;        /* its real path at create */
    uint64_t dev, ino;      /* what that path must still be */
    uint64_t bytes;         /* the bound */
    /* An idmapped workspace: the container's ids (seen) as the workspace
     * stores them (disk); the upper layer holds the seen ones. */
    struct stage_map *uid, *gid;
    size_t n_uid, n_gid;
};
/* The id a file written back gets: seen mapped to disk (unmapped: as is). */
uint32_t stage_map_id(const struct stage_map *m, size_t n, uint32_t seen);
/* present false without an error when there is no stage. */
int stage_record_read(int state_dirfd, struct stage_record *out, struct brig_error **err);
void stage_record_free(struct stage_record *r);
/* Detach the overlay and the tmpfs, remove their directory and the record. */
void stage_unmount(int state_dirfd);

#endif
