/* linux.seccomp: compiled once in the parent with libseccomp (so every
 * error is reported before anything runs), loaded in the child as raw BPF
 * with seccomp(2) as the last step before execve. */
#ifndef BRIG_SECCOMP_H
#define BRIG_SECCOMP_H

#include <stdbool.h>
#include <stddef.h>

#include "../config/spec.h"

struct sock_filter;

struct brig_bpf {
    struct sock_filter *insns;
    size_t n_insns;
    unsigned int flags;     /* SECCOMP_FILTER_FLAG_* for seccomp(2) */
    bool notify;            /* the filter uses SCMP_ACT_NOTIFY */
};

/* Fail closed: a deny rule naming a syscall libseccomp does not know under
 * an allowing default is an error naming the field; an unknown name in an
 * allow rule of a denying default is skipped with a debug log. */
int seccomp_compile(const struct brig_seccomp *sc, struct brig_bpf **out, struct brig_error **err);
/* In the child, after no_new_privs (or with CAP_SYS_ADMIN). Fails for a
 * filter with bpf->notify set: use seccomp_bpf_load_listener for those. */
int seccomp_bpf_load(const struct brig_bpf *bpf, struct brig_error **err);
/* Same; when bpf->notify, also asks for the notify fd (NEW_LISTENER) and
 * stores it in *listener_fd (else -1). The caller sends it to the parent,
 * which passes it on to linux.seccomp.listenerPath. */
int seccomp_bpf_load_listener(const struct brig_bpf *bpf, int *listener_fd,
                              struct brig_error **err);
void seccomp_bpf_free(struct brig_bpf *bpf);

/* The set-id filter brig stacks under a container's own when its config
 * says so (spec.h, BRIG_NO_SETID_ANNOTATION): compile it like any other
 * (seccomp_compile_cached), load it first. */
const struct brig_seccomp *seccomp_setid_filter(void);


#endif
