/* Logging: text or JSON lines ({"level","msg","time"}, as containerd's shim
 * and conmon read them) to stderr or to the --log file. */
#ifndef BRIG_LOG_H
#define BRIG_LOG_H

#include <stdbool.h>

enum brig_log_level { BRIG_LOG_DEBUG, BRIG_LOG_INFO, BRIG_LOG_WARN, BRIG_LOG_ERROR };
enum brig_log_format { BRIG_LOG_TEXT, BRIG_LOG_JSON };

/* path NULL: stderr. Returns -1 with errno if the file cannot be opened. */
int brig_log_init(const char *path, enum brig_log_format fmt, bool debug);
bool brig_log_debug_enabled(void);
/* The fd logging writes to (so a child can keep using it), -1 for none. */
int brig_log_fd(void);
/* Re-point logging at another fd (e.g. after fds were renumbered). */
void brig_log_set_fd(int fd);
/* Tag added to every text line, e.g. "child" (static string). */
void brig_log_set_tag(const char *tag);
const char *brig_log_tag(void);

void brig_log(enum brig_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define brig_debug(...) \
    do { if (brig_log_debug_enabled()) brig_log(BRIG_LOG_DEBUG, __VA_ARGS__); } while (0)
#define brig_info(...) brig_log(BRIG_LOG_INFO, __VA_ARGS__)
#define brig_warn(...) brig_log(BRIG_LOG_WARN, __VA_ARGS__)
#define brig_errorf(...) brig_log(BRIG_LOG_ERROR, __VA_ARGS__)

#endif
