/* Mount options ("ro", "nosuid", "rbind", "rprivate", "size=64m", "rro", ...)
 * turned into mount(2)/mount_setattr(2) arguments. Pure: no syscalls. */
#ifndef BRIG_MOUNT_OPTIONS_H
#define BRIG_MOUNT_OPTIONS_H

#include <stddef.h>

#include "spec.h"

/* jpath is the JSON path of the options array, e.g. "mounts[3].options".
 * type may be NULL. Unknown options that are not key=value and not
 * known flags fail ("mounts[3].options[1]: unknown mount option \"x\""). */
int mount_options_parse(char *const *opts, size_t n, const char *type, const char *jpath,
                        struct brig_mount_opts *out, struct brig_error **err);
void mount_opts_free(struct brig_mount_opts *o);

/* "shared", "rshared", "slave", "rslave", "private", "rprivate",
 * "unbindable", "runbindable" -> MS_* flags. -1 if unknown. */
int mount_propagation_parse(const char *s, unsigned long *out);

#endif
