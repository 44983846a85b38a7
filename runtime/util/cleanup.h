/* Cleanup attributes: every early return is leak-free without a goto ladder.
 * Ownership is handed off explicitly with steal_fd()/steal_ptr(). */
#ifndef BRIG_CLEANUP_H
#define BRIG_CLEANUP_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <errno.h>

#include "noheap.h"

static inline void brig_freep(void *p)
{
    if (*(void **)p != NULL) brig_noheap_check("free (autofree)");
    free(*(void **)p);
}

static inline void brig_closep(int *fd)
{
    if (*fd >= 0) {
        int saved = errno;
        close(*fd);
        errno = saved;
    }
    *fd = -1;
}

/* Close fds[0..n), given in ascending order: one close_range per run of
 * adjacent fds (what a series of opens in one process mostly gets). */
static inline void brig_close_all(const int *fds, size_t n)
{
    int saved = errno;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && fds[j] == fds[j - 1] + 1) j++;
        if (fds[i] >= 0 && (j - i == 1 || close_range((unsigned)fds[i], (unsigned)fds[j - 1], 0) < 0))
            for (size_t k = i; k < j; k++) close(fds[k]);
        i = j;
    }
    errno = saved;
}

static inline void brig_fclosep(FILE **f)
{
    if (*f != NULL) fclose(*f);
    *f = NULL;
}

/* Free a NULL-terminated array of strings and the array itself. */
void brig_strv_free(char **v);
static inline void brig_strv_freep(char ***v)
{
    brig_strv_free(*v);
    *v = NULL;
}

#define autofree __attribute__((cleanup(brig_freep)))
#define autoclose __attribute__((cleanup(brig_closep)))
#define autofclose __attribute__((cleanup(brig_fclosep)))
#define autostrv __attribute__((cleanup(brig_strv_freep)))

static inline int steal_fd(int *fd)
{
    int r = *fd;
    *fd = -1;
    return r;
}

static inline void *steal_ptr(void *pp)
{
    void **p = (void **)pp;
    void *r = *p;
    *p = NULL;
    return r;
}

#define BRIG_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
