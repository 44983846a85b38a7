/* Mount options ("ro", "nosuid", "rbind", "rprivate", "size=64m", "rro", ...)
 * turned into mount(2)/mount_setattr(2) arguments. Pure: no syscalls. */
#ifndef BRIG_MOUNT_OPTIONS_H
#define BRIG_MOUNT_OPTIONS_H

#include <stddef.h>

#include "spec.h"

/* jpath is the JSON path of the options array, e.g. "mounts[3].options".
 * type may be NULL (type "bind" means a bind mount). As in runc, an option
 * that is not a known flag ("mode=755", "newinstance", ...) is filesystem
 * data, comma-joined into out->data for mount(2) to judge; only an empty
 * option fails here ("mounts[3].options[1]: empty mount option").
 * On success the caller owns out (mount_opts_free). */
int mount_options_parse(char *const *opts, size_t n, const char *type, const char *jpath,
                        struct brig_mount_opts *out, struct brig_error **err);
void mount_opts_free(struct brig_mount_opts *o);

/* crun's idmap option with explicit mappings (crun(1), "idmap mount
 * options"): value is what follows "idmap=" (or "ridmap="), e.g.
 * "uids=0-100000-1000#1000-200000-1;gids=0-100000-1000". Each range
 * FROM-TO-SIZE maps FROM (the id on disk) to TO (the id seen through the
 * mount), as a mounts[].uidMappings entry {containerID, hostID, size}; a
 * range "@FROM-TO-SIZE" gives TO as an id of the container's user
 * namespace, translated through l's uidMappings/gidMappings (the range must
 * lie inside one entry). Both uids= and gids= are required, each once;
 * anything else (a sign, a space, an empty range, more than 340 ranges) is
 * refused naming jpath. On success the caller owns *uids and *gids. */
int mount_idmap_parse(const char *value, const char *jpath, const struct brig_linux *l,
                      struct brig_id_mapping **uids, size_t *nu, struct brig_id_mapping **gids,
                      size_t *ng, struct brig_error **err);

/* "shared", "rshared", "slave", "rslave", "private", "rprivate",
 * "unbindable", "runbindable" -> MS_* flags. -1 if unknown. */
int mount_propagation_parse(const char *s, unsigned long *out);

#endif
