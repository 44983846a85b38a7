/* brig runs from a sealed memfd copy of itself whenever it may spawn a
 * process inside a container (the CVE-2019-5736 class, docs/security.md):
 * a container process that reaches /proc/<pid>/exe of a brig process then
 * opens a private copy that no write can change, never the host binary. */
#ifndef BRIG_EXE_SEAL_H
#define BRIG_EXE_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "../util/error.h"

/* If /proc/self/exe is not a sealed memfd, copy it into one, seal it and
 * execveat() it with the same argv and environment: returns only on error
 * (brig refuses to go on) or when already sealed (0). Sealed means every
 * seal exe_seal adds (write, grow, shrink, seal) is on /proc/self/exe: an
 * admin's sealed memfd of brig is accepted as is, nothing else. */
int exe_seal_ensure(char **argv, struct brig_error **err);

/* For a command that decides later whether it needs the seal (`sandbox
 * run`, docs/security.md): keep argv now; exe_seal_deferred() is then
 * exe_seal_ensure(argv), to be called before anything has been changed. */
void exe_seal_defer(char **argv);
int exe_seal_deferred(struct brig_error **err);

/* Whether this brig runs from a sealed copy (exe_seal_ensure's, or an
 * admin's): a deferred decision made already before the re-exec need not
 * be made again. */
bool exe_seal_active(void);

/* The identity (dev, ino, size, mtime) of the brig binary on disk: the one
 * this sealed copy was made from (kept in the memfd's name), or
 * /proc/self/exe itself when not sealed. For caches keyed on the binary. */
int exe_seal_origin(struct stat *st);

/* An executable memfd (MFD_EXEC where the kernel has it), sealable, closed
 * on exec: its fd, or -1 (err names what, and vm.memfd_noexec=2). */
int exe_memfd_open(const char *name, const char *what, struct brig_error **err);
/* Every seal the copy gets (write, grow, shrink, seal, and exec where the
 * kernel has it): nothing can change what runs from it. */
int exe_memfd_seal(int fd, const char *what, struct brig_error **err);

/* The path of that binary on disk (kept in the memfd's name), or of
 * /proc/self/exe when not sealed; -1 when unknown (a path too long for a
 * memfd name, an admin's own sealed copy). For helpers installed beside it. */
int exe_seal_origin_path(char *buf, size_t len);

#endif
