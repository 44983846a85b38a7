/* Closing fds in batches, in a process that is about to execve.
 *
 * The container's init opens some fifty descriptors while it builds the
 * root: O_PATH handles of mount points, detached mount trees, directory fds
 * used only for *at() calls. Closing one of those has no effect anybody can
 * observe but freeing it, and costs a syscall. Marked `autoclose_path`, they
 * are instead kept on a list once brig_fd_defer_start() has run, and closed
 * together by brig_fd_defer_flush(): one close_range per run of adjacent
 * numbers. The init flushes before the pivot (so nothing pins the old root
 * afterwards) and at the end of its setup.
 *
 * Never use it for an fd whose close means something: a pipe or socket end
 * (EOF for the peer), a file opened for writing (a read-only remount would
 * see a writer), anything handed on. In every other process, and when the
 * list is full or the fd number is high, autoclose_path closes at once. */
#ifndef BRIG_FD_DEFER_H
#define BRIG_FD_DEFER_H

/* From now on, autoclose_path fds of this process wait for a flush. */
void brig_fd_defer_start(void);

/* Close every waiting fd now. Deferring goes on. */
void brig_fd_defer_flush(void);

void brig_fd_defer_closep(int *fd);
#define autoclose_path __attribute__((cleanup(brig_fd_defer_closep)))

#endif
