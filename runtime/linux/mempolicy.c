/* linux.memoryPolicy (config-linux.md "Memory policy"): set_mempolicy(2)
 * on the init before execve; the policy is inherited across fork and exec.
 * The config was checked when parsed (config/spec_mempolicy.c); what only
 * the kernel knows (a node this host lacks, a flag this mode refuses) is
 * its EINVAL, reported with the field. */
#include "process_attrs.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/log.h"

int mempolicy_apply(const struct brig_linux *l, struct brig_error **err)
{
    const struct brig_mempolicy *m = &l->memory_policy;
    if (!m->present) return 0;
    bool empty = true;
    for (size_t i = 0; i < sizeof(m->nodes) / sizeof(m->nodes[0]); i++)
        if (m->nodes[i] != 0) empty = false;
    /* maxnode counts one past the last bit the kernel reads */
    if (syscall(SYS_set_mempolicy, m->mode | (int)m->flags, empty ? NULL : m->nodes,
                empty ? 0UL : (unsigned long)BRIG_MPOL_MAX_NODES + 1) < 0) {
        int e = errno;
        if (e == EINVAL)
            return brig_fail(err, e, "linux.memoryPolicy: the kernel refused the mode, flags "
                             "or nodes (a node this host does not have?)");
        return brig_fail(err, e, "linux.memoryPolicy: set_mempolicy");
    }
    brig_debug("memoryPolicy: mode %d flags %#x", m->mode, m->flags);
    return 0;
}
