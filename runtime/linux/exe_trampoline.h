/* A container's process started from brig's unsealed binary (the
 * CVE-2019-5736 class, docs/security.md "run without the sealed copy"):
 * brig's child execs brig-init --exec-sync from a sealed memfd copy of it
 * (compiled into brig) instead of the process, so that
 * what the kernel runs as /proc/self/exe for the process's execve (a
 * `#!/proc/self/exe` script, a PT_INTERP of /proc/self/exe) is that copy,
 * never brig. */
#ifndef BRIG_EXE_TRAMPOLINE_H
#define BRIG_EXE_TRAMPOLINE_H

#include <stdbool.h>

#include "../config/spec.h"
#include "../util/error.h"

/* The name the trampoline runs under (its argv[0]). */
#define EXE_TRAMPOLINE_NAME "brig-init"

/* Whether this build carries the trampoline (a libc-free brig-init). */
bool exe_trampoline_available(void);

/* A sealed, executable memfd holding the trampoline (close-on-exec): no
 * write, resize or further seal (linux/exe_seal.h's, as brig's own copy). */
int exe_trampoline_open(int *out, struct brig_error **err);

/* Whether the seccomp filter f (absent: none) lets name through whatever
 * its arguments: no rule for it but an allowing default, or a rule that
 * allows it unconditionally. */
bool exe_filter_allows(const struct brig_seccomp *f, const char *name);

/* fs.suid_dumpable is 0 or 2: brig's child is not dumpable between its
 * uid switch and its next PR_SET_DUMPABLE (commit_creds sets it so). */
bool exe_suid_dumpable_safe(void);

/* Whether a container of s may be run (`brig run`, never `create`) from
 * brig's unsealed binary through the trampoline: the container's processes
 * can then never reach a process that runs brig's binary (its pid
 * namespace its own, no user namespace joined by path, CAP_SYS_PTRACE in no
 * set of its process, no hooks, no LSM label, fs.suid_dumpable safe), the
 * filter lets the trampoline's calls through (execveat, execve, fcntl,
 * sendto) and an executable memfd is allowed (vm.memfd_noexec). *why (when
 * false): the first condition that does not hold. */
bool exe_trampoline_suffices(const struct brig_spec *s, const char **why);

#endif
