/* STUB: to be implemented. */
#include "seccomp.h"
#include <stdlib.h>

int seccomp_compile(const struct brig_seccomp *sc, struct brig_bpf **out, struct brig_error **err)
{
    return brig_failx(err, "seccomp_compile: not implemented");
}

int seccomp_load(const struct brig_bpf *bpf, struct brig_error **err)
{
    return brig_failx(err, "seccomp_load: not implemented");
}

void seccomp_bpf_free(struct brig_bpf *bpf)
{
    
}
