/* Writing config.json pieces shared by brig spec, the sandbox's config and
 * brig-rootfs bundle (with json.h's jw_* writer). */
#ifndef BRIG_SPEC_WRITE_H
#define BRIG_SPEC_WRITE_H

#include "json.h"

/* "resources": {"devices": [{"allow": false, "access": "rwm"}]} */
void spec_write_deny_devices(struct brig_jw *w);
/* "namespaces": [{"type": T}, ...] for the NULL-terminated types */
void spec_write_namespaces(struct brig_jw *w, const char *const *types);

/* One mount {destination, type, source, options}. */
void spec_write_mount(struct brig_jw *w, const char *dst, const char *type, const char *src,
                      const char *const *opts);
/* The kernel filesystems of a minimal container (/proc, /dev, /dev/pts,
 * /dev/shm, /dev/mqueue, read-only /sys), as items of a "mounts" array. */
void spec_write_kernel_mounts(struct brig_jw *w);

#endif
