/* STUB: to be implemented. */
#include "fs.h"
#include <stdlib.h>

int brig_open_in_root(int rootfd, const char *path, int flags, mode_t mode, struct brig_error **err)
{
    return brig_failx(err, "brig_open_in_root: not implemented");
}

int brig_mkdir_in_root(int rootfd, const char *path, mode_t mode, struct brig_error **err)
{
    return brig_failx(err, "brig_mkdir_in_root: not implemented");
}

int brig_mkfile_in_root(int rootfd, const char *path, mode_t mode, struct brig_error **err)
{
    return brig_failx(err, "brig_mkfile_in_root: not implemented");
}
