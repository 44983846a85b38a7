/* STUB: to be implemented. */
#include "state.h"
#include <stdlib.h>

int state_validate_id(const char *id, struct brig_error **err)
{
    return brig_failx(err, "state_validate_id: not implemented");
}

int state_dir_create(const char *root, const char *id, int *dirfd, struct brig_error **err)
{
    return brig_failx(err, "state_dir_create: not implemented");
}

int state_dir_open(const char *root, const char *id, int *dirfd, struct brig_error **err)
{
    return brig_failx(err, "state_dir_open: not implemented");
}

int state_dir_remove(const char *root, const char *id, struct brig_error **err)
{
    return brig_failx(err, "state_dir_remove: not implemented");
}

int state_write(int dirfd, const struct brig_state *st, struct brig_error **err)
{
    return brig_failx(err, "state_write: not implemented");
}

int state_read(int dirfd, struct brig_state **out, struct brig_error **err)
{
    return brig_failx(err, "state_read: not implemented");
}

void state_free(struct brig_state *st)
{
    
}

void state_freep(struct brig_state **st)
{
    
}

enum brig_status state_status(int dirfd, const struct brig_state *st)
{
    return 0;
}

const char * state_status_name(enum brig_status s)
{
    return NULL;
}

uint64_t state_pid_start_time(pid_t pid)
{
    return 0;
}

char * state_to_oci_json(const struct brig_state *st, enum brig_status status, bool pretty)
{
    return NULL;
}
