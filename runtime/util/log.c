#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "strutil.h"

static int log_fd = 2;
static bool log_to_file;
static enum brig_log_format log_format = BRIG_LOG_TEXT;
static bool log_debug;
static const char *log_tag;

static const char *const level_names[] = { "debug", "info", "warning", "error" };

int brig_log_init(const char *path, enum brig_log_format fmt, bool debug)
{
    log_format = fmt;
    log_debug = debug;
    if (path == NULL || path[0] == '\0') return 0;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    log_fd = fd;
    log_to_file = true;
    return 0;
}

bool brig_log_debug_enabled(void)
{
    return log_debug;
}

int brig_log_fd(void)
{
    return log_fd;
}

void brig_log_set_fd(int fd)
{
    log_fd = fd;
}

void brig_log_set_tag(const char *tag)
{
    log_tag = tag;
}

const char *brig_log_tag(void)
{
    return log_tag;
}

void brig_log(enum brig_log_level level, const char *fmt, ...)
{
    if (log_fd < 0) return;
    int saved = errno;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);

    char tbuf[BRIG_TIME_LEN];
    brig_time_now_rfc3339(tbuf, sizeof(tbuf));

    /* One write() per line: O_APPEND keeps lines whole across processes. */
    char line[4096];
    int n;
    if (log_format == BRIG_LOG_JSON) {
        char esc[3072];
        brig_json_escape(msg, esc, sizeof(esc));
        n = snprintf(line, sizeof(line), "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n",
                     level_names[level], esc, tbuf);
    } else if (log_to_file) {
        n = snprintf(line, sizeof(line), "time=\"%s\" level=%s msg=\"%s%s%s\"\n", tbuf,
                     level_names[level], log_tag ? log_tag : "", log_tag ? ": " : "", msg);
    } else {
        const char *lvl = level == BRIG_LOG_ERROR ? "" : level_names[level];
        n = snprintf(line, sizeof(line), "brig%s%s: %s%s%s\n", log_tag ? " " : "",
                     log_tag ? log_tag : "", lvl, *lvl ? ": " : "", msg);
    }
    if (n < 0) goto out;
    if ((size_t)n >= sizeof(line)) {
        n = sizeof(line) - 1;
        line[n - 1] = '\n';
    }
    ssize_t w;
    do {
        w = write(log_fd, line, (size_t)n);
    } while (w < 0 && errno == EINTR);
out:
    errno = saved;
}
