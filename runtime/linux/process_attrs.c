/* STUB: to be implemented. */
#include "process_attrs.h"
#include <stdlib.h>

int hostname_apply(const struct brig_spec *s, struct brig_error **err)
{
    return brig_failx(err, "hostname_apply: not implemented");
}

int sysctl_apply(const struct brig_spec *s, struct brig_error **err)
{
    return brig_failx(err, "sysctl_apply: not implemented");
}

int sysctl_validate(const struct brig_spec *s, struct brig_error **err)
{
    return brig_failx(err, "sysctl_validate: not implemented");
}

int rlimits_apply(const struct brig_process *p, struct brig_error **err)
{
    return brig_failx(err, "rlimits_apply: not implemented");
}

int oom_score_adj_apply(const struct brig_process *p, struct brig_error **err)
{
    return brig_failx(err, "oom_score_adj_apply: not implemented");
}

int personality_apply(const struct brig_linux *l, struct brig_error **err)
{
    return brig_failx(err, "personality_apply: not implemented");
}

int scheduler_apply(const struct brig_process *p, struct brig_error **err)
{
    return brig_failx(err, "scheduler_apply: not implemented");
}

int io_priority_apply(const struct brig_process *p, struct brig_error **err)
{
    return brig_failx(err, "io_priority_apply: not implemented");
}

int no_new_privs_apply(const struct brig_process *p, struct brig_error **err)
{
    return brig_failx(err, "no_new_privs_apply: not implemented");
}

int cwd_apply(const struct brig_process *p, struct brig_error **err)
{
    return brig_failx(err, "cwd_apply: not implemented");
}

int fds_close_from(int first, int keep, struct brig_error **err)
{
    return brig_failx(err, "fds_close_from: not implemented");
}
