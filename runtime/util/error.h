/* One error type for all of brig: created where a call fails, context is
 * prefixed on the way up, only main() turns it into an exit status. */
#ifndef BRIG_ERROR_H
#define BRIG_ERROR_H

#include <stdarg.h>

struct brig_error {
    int errnum;      /* errno of the root cause, 0 if none */
    /* 127: the process's program was not found; 126: found but it could
     * not be executed (execve failed). The process never ran. 0: any other
     * failure. Kept across brig_wrap; sent along by sync_send_error. */
    int exec_status;
    char msg[1024];  /* "ctx: ctx: cause[: strerror]" */
};

/* Record a failure: *err gets a new error "fmt...[: strerror(errnum)]".
 * Always returns -1 so that `return brig_fail(...)` reads naturally.
 * err may be NULL (the failure is then only logged at debug level). */
int brig_fail(struct brig_error **err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like brig_fail without strerror. */
int brig_failx(struct brig_error **err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefix context to an existing error: "ctx: old message". Returns -1.
 * If *err is NULL, creates a generic error with the context. */
int brig_wrap(struct brig_error **err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void brig_error_free(struct brig_error *e);
void brig_error_freep(struct brig_error **e);
#define autoerr __attribute__((cleanup(brig_error_freep)))

/* Propagate a failure of a call that follows the -1/err convention. */
#define TRY(expr)                   \
    do {                            \
        if ((expr) < 0) return -1;  \
    } while (0)

#endif
