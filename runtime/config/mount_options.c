/* STUB: to be implemented. */
#include "mount_options.h"
#include <stdlib.h>

int mount_options_parse(char *const *opts, size_t n, const char *type, const char *jpath, struct brig_mount_opts *out, struct brig_error **err)
{
    return brig_failx(err, "mount_options_parse: not implemented");
}

void mount_opts_free(struct brig_mount_opts *o)
{
    
}

int mount_propagation_parse(const char *s, unsigned long *out)
{
    return 0;
}
