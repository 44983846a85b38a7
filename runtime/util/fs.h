/* File helpers. Everything that touches a path inside the container root
 * goes through the *_in_root functions: openat2(RESOLVE_IN_ROOT |
 * RESOLVE_NO_MAGICLINKS), so a symlink in the image can never lead out. */
#ifndef BRIG_FS_H
#define BRIG_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

struct stat;

/* Every file a user names to brig or brig-rootfs (a policy, config.json,
 * a compose file, --process, a seccomp profile, a manifest, an image and
 * the files of an image layout...)
 * is opened through this: O_PATH first, so a fifo is never waited on and
 * a device's driver is never called, judged by fstat of what was opened,
 * and only a regular file (or with BRIG_INPUT_DIR a directory) reopened
 * for reading through that fd. BRIG_INPUT_NOFOLLOW: the last component
 * must not be a symlink. Returns an O_RDONLY fd (st: its stat, may be
 * NULL); the error names the path and what it is, never its content. */
#define BRIG_INPUT_NOFOLLOW 1
#define BRIG_INPUT_DIR 2
#define BRIG_INPUT_IN_ROOT 4    /* path resolved inside dirfd (brig_open_in_root) */
int brig_open_input(int dirfd, const char *path, int flags, struct stat *st, struct brig_error **err);
/* Read what fd (open for reading) holds, at most max bytes, NUL-terminated;
 * errors name name. */
int brig_read_fd(int fd, const char *name, size_t max, char **out, size_t *len, struct brig_error **err);

/* Read a whole (small) file; fails with EFBIG past max bytes. NUL-terminated.
 * For files of the system (/proc, /sys) and brig's own state: a file a
 * user names is read with brig_read_regular. */
int brig_read_file(const char *path, size_t max, char **out, size_t *len, struct brig_error **err);
int brig_read_file_at(int dirfd, const char *name, size_t max, char **out, size_t *len,
                      struct brig_error **err);
/* brig_read_file_at for a file somebody else may have named: name (its last
 * component) must not be a symlink and must be a regular file (not a
 * fifo, a directory, a device), judged before it is opened for
 * reading. The errors name the file, never quote it. */
int brig_read_regular_at(int dirfd, const char *name, size_t max, char **out, size_t *len,
                         struct brig_error **err);
/* The same for what pfd (an O_PATH fd, opened by whatever rule the caller
 * chose, e.g. brig_open_in_root) is: a regular file, read through it. */
int brig_read_regular_fd(int pfd, const char *name, size_t max, char **out, size_t *len,
                         struct brig_error **err);
/* The same for a path whose symlinks the caller may follow (a compose
 * file's own env_file, Dockerfile, seccomp profile): only the end must be
 * a regular file, so a fifo or a device never blocks or feeds the read. */
int brig_read_regular(const char *path, size_t max, char **out, size_t *len, struct brig_error **err);
/* Write data to an existing file (e.g. /proc/<pid>/uid_map) in one write(). */
int brig_write_file(const char *path, const char *data, size_t len, struct brig_error **err);
/* Write a file atomically: temp file in dirfd, fsync-free rename over name. */
int brig_write_file_atomic(int dirfd, const char *name, const void *data, size_t len,
                           mode_t mode, struct brig_error **err);
/* Remove a directory tree below dirfd (no symlink following). */
int brig_rm_rf_at(int dirfd, const char *name, struct brig_error **err);

/* "/proc/self/fd/N" into buf (>= 32 bytes). */
const char *brig_fd_path(int fd, char *buf, size_t len);
/* Where fd is: the kernel's absolute, symlink-free path of what it opened
 * (readlink of /proc/self/fd/N). Fails when there is none (removed, or out
 * of our root). */
int brig_fd_where(int fd, char *buf, size_t len, struct brig_error **err);
/* realpath(3) into out (PATH_MAX bytes) in three system calls at any depth:
 * the path opened (O_PATH, following symlinks as realpath does) and the
 * kernel's name for it read back; realpath itself where /proc cannot tell
 * (not mounted, a path out of our root). NULL with errno as realpath. */
char *brig_realpath(const char *path, char *out);

/* openat2 with RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS relative to rootfd.
 * path may be absolute ("/dev/null" means rootfd/dev/null). */
int brig_open_in_root(int rootfd, const char *path, int flags, mode_t mode,
                      struct brig_error **err);
/* The same, failing with errno only: for a search where a miss is the
 * usual answer (PATH), without an error made and freed per miss. */
int brig_open_in_root_errno(int rootfd, const char *path, int flags, mode_t mode);
/* An O_PATH fd of path in the root only if it is the regular file dev/ino
 * and no symlink is on the way (nothing renamed can redirect it, as an
 * execve there would find it); -1 otherwise. */
int brig_open_exact_in_root(int rootfd, const char *path, dev_t dev, ino_t ino);
/* mkdir -p inside the root; returns an O_PATH|O_DIRECTORY fd of the last
 * component. Never follows a symlink out of the root. */
int brig_mkdir_in_root(int rootfd, const char *path, mode_t mode, struct brig_error **err);
/* brig_mkdir_in_root, and more: with BRIG_IN_ROOT_NOFOLLOW the last
 * component must not be a symlink (fails with errnum ELOOP, "PATH is a
 * symlink"); *plain (may be NULL) true says that no symlink at all was
 * followed, so that the fd's path inside the root is path itself, cleaned
 * lexically (".." clamped at the root); false only that it is not known
 * (a symlink, or more than the last component was created). Costs what brig_mkdir_in_root does,
 * plus one openat2 for a path through a symlink. */
#define BRIG_IN_ROOT_NOFOLLOW 1
/* With BRIG_IN_ROOT_MAKE_TARGET a dangling symlink on the way (refused
 * otherwise: "is a dangling symlink") has its target made, as the kernel
 * would resolve the link with the root as "/" (an absolute target, or one
 * with "..", stays inside the root): what runc and crun do for a mount
 * destination. A chain or loop of more than 40 fails with ELOOP. */
#define BRIG_IN_ROOT_MAKE_TARGET 2
int brig_mkdir_in_root_ex(int rootfd, const char *path, mode_t mode, int flags, bool *plain,
                          struct brig_error **err);
/* Create (if missing) a regular file inside the root, parents as needed;
 * returns an O_PATH fd of it. */
int brig_mkfile_in_root(int rootfd, const char *path, mode_t mode, struct brig_error **err);
/* The same; flags: BRIG_IN_ROOT_MAKE_TARGET. */
int brig_mkfile_in_root_ex(int rootfd, const char *path, mode_t mode, int flags, struct brig_error **err);

#endif
