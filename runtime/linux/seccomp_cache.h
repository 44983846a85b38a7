/* Compile linux.seccomp once, reuse the BPF afterwards: libseccomp takes
 * ~15 ms for a 400-syscall allowlist, loading the cached program ~50 us. */
#ifndef BRIG_SECCOMP_CACHE_H
#define BRIG_SECCOMP_CACHE_H

#include "seccomp.h"

/* Like seccomp_compile(), but first looks in STATE_ROOT/.seccomp-cache/ for
 * the program compiled from an identical seccomp section by this same brig
 * binary, libseccomp and kernel; on a miss it compiles and stores the result
 * there (atomically). The cache is best effort: a missing, foreign or damaged
 * entry only means compiling again. An entry is used only when its full key
 * (not just the hash that names it) equals ours, so a hit is exactly the
 * program seccomp_compile() would return, and every config error is still
 * found by compiling. state_root NULL: compile only. */
int seccomp_compile_cached(const struct brig_seccomp *sc, const char *state_root,
                           struct brig_bpf **out, struct brig_error **err);

/* The cache key of a seccomp section in this environment (exposed for the
 * unit tests): a byte string, malloc'd, *len set. */
unsigned char *seccomp_cache_key(const struct brig_seccomp *sc, size_t *len);

#endif
