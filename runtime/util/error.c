#include "error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "noheap.h"

/* The error of the no-heap stretch (noheap.h): that process makes at most
 * one before it reports it and exits, and frees none. */
static struct brig_error error_static;

static struct brig_error *error_new(struct brig_error **err)
{
    if (err == NULL) return NULL;
    if (*err == NULL && brig_noheap()) *err = &error_static;
    if (*err == NULL) {
        *err = calloc(1, sizeof(**err));
        if (*err == NULL) abort(); /* cannot even report: nothing sane to do */
    }
    return *err;
}

__attribute__((format(printf, 3, 0)))
static int error_vset(struct brig_error **err, int errnum, const char *fmt, va_list ap)
{
    /* Nobody to tell: no message to make (a path search, a sweep's
     * skipped names) unless the debug log would show it. */
    if (err == NULL && !brig_log_debug_enabled()) return -1;
    struct brig_error tmp = {0};
    int n = vsnprintf(tmp.msg, sizeof(tmp.msg), fmt, ap);
    /* Not strerror: for an unknown errnum glibc's mallocs its text
     * ("Unknown error N") in a buffer it frees on the next such call. The
     * same words (brig sets no locale), from glibc's static table. */
    const char *desc = errnum != 0 ? strerrordesc_np(errnum) : NULL;
    if (errnum != 0 && n >= 0 && (size_t)n < sizeof(tmp.msg)) {
        if (desc != NULL) snprintf(tmp.msg + n, sizeof(tmp.msg) - (size_t)n, ": %s", desc);
        else snprintf(tmp.msg + n, sizeof(tmp.msg) - (size_t)n, ": Unknown error %d", errnum);
    }
    tmp.errnum = errnum;
    struct brig_error *e = error_new(err);
    if (e == NULL) {
        brig_debug("error (unreported): %s", tmp.msg);
        return -1;
    }
    *e = tmp;
    return -1;
}

int brig_fail(struct brig_error **err, int errnum, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, errnum, fmt, ap);
    va_end(ap);
    return -1;
}

int brig_failx(struct brig_error **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, 0, fmt, ap);
    va_end(ap);
    return -1;
}

int brig_wrap(struct brig_error **err, const char *fmt, ...)
{
    if (err == NULL) return -1;
    char ctx[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof(ctx), fmt, ap);
    va_end(ap);
    if (*err == NULL) return brig_failx(err, "%s: unknown error", ctx);

    char old[sizeof((*err)->msg)];
    memcpy(old, (*err)->msg, sizeof(old));
    snprintf((*err)->msg, sizeof((*err)->msg), "%s: %s", ctx, old);
    return -1;
}

void brig_error_free(struct brig_error *e)
{
    if (e != &error_static) free(e);
}

void brig_error_freep(struct brig_error **e)
{
    if (e != NULL && *e != NULL) {
        brig_error_free(*e);
        *e = NULL;
    }
}
