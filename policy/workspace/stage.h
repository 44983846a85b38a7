/* Shared by policy/workspace/stage.c and commit.c (the staged workspace:
 * docs/policy.md, "Workspace bound"). The public calls are in policy.h. */
#ifndef BRIG_POLICY_STAGE_H
#define BRIG_POLICY_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "../policy.h"

/* STATE/wsstage.json: the workspace the stage writes back to. */
struct stage_record {
    bool present;
    char *workspace;        /* its real path at create */
    uint64_t dev, ino;      /* what that path must still be */
    uint64_t bytes;         /* the bound */
};
/* present false without an error when there is no stage. */
int stage_record_read(int state_dirfd, struct stage_record *out, struct brig_error **err);
void stage_record_free(struct stage_record *r);
/* Detach the overlay and the tmpfs, remove their directory and the record. */
void stage_unmount(int state_dirfd);

#endif
