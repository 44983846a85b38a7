#include "strutil.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cleanup.h"
#include "noheap.h"

void brig_json_escape(const char *s, char *out, size_t outlen)
{
    size_t o = 0;
    if (outlen == 0) return;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char tmp[8];
        const char *rep = NULL;
        switch (*p) {
        case '"': rep = "\\\""; break;
        case '\\': rep = "\\\\"; break;
        case '\n': rep = "\\n"; break;
        case '\r': rep = "\\r"; break;
        case '\t': rep = "\\t"; break;
        default:
            if (*p < 0x20) {
                snprintf(tmp, sizeof(tmp), "\\u%04x", *p);
                rep = tmp;
            }
        }
        size_t need = rep ? strlen(rep) : 1;
        if (o + need >= outlen) break;
        if (rep) {
            memcpy(out + o, rep, need);
        } else {
            out[o] = (char)*p;
        }
        o += need;
    }
    out[o] = '\0';
}

char *brig_strdup(const char *s)
{
    if (s == NULL) return NULL;
    brig_noheap_check("brig_strdup");
    char *r = strdup(s);
    if (r == NULL) abort();
    return r;
}

void *brig_calloc(size_t n, size_t size)
{
    brig_noheap_check("brig_calloc");
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p == NULL) abort();
    return p;
}

char *brig_asprintf(const char *fmt, ...)
{
    char *r = NULL;
    brig_noheap_check("brig_asprintf");
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&r, fmt, ap);
    va_end(ap);
    if (n < 0) abort();
    return r;
}

bool brig_str_has_prefix(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

size_t brig_strv_len(char *const *v)
{
    size_t n = 0;
    while (v != NULL && v[n] != NULL) n++;
    return n;
}

char **brig_strv_dup(char *const *v)
{
    size_t n = brig_strv_len(v);
    char **r = brig_calloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) r[i] = brig_strdup(v[i]);
    return r;
}

void brig_strv_free(char **v)
{
    if (v == NULL) return;
    for (size_t i = 0; v[i] != NULL; i++) free(v[i]);
    free(v);
}

int brig_parse_u64(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9') return -1;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0') return -1;
    *out = v;
    return 0;
}

int brig_parse_i64(const char *s, int64_t *out)
{
    if (s == NULL || *s == '\0') return -1;
    errno = 0;
    char *end = NULL;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0') return -1;
    *out = v;
    return 0;
}

const char *brig_time_now_rfc3339(char *buf, size_t len)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    /* not gmtime_r/strftime: glibc's first call loads the time zone
     * (/etc/localtime, 7 syscalls on every command) for a UTC time that
     * needs none. Days to civil date: H. Hinnant's civil_from_days. */
    int64_t secs = ts.tv_sec, days = secs / 86400, sod = secs % 86400;
    if (sod < 0) {
        sod += 86400;
        days--;
    }
    int64_t z = days + 719468, era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153, d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9, y = yoe + era * 400 + (m <= 2);
    snprintf(buf, len, "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.%09ldZ", (long long)y,
             (long long)m, (long long)d, (long long)(sod / 3600), (long long)(sod / 60 % 60),
             (long long)(sod % 60), ts.tv_nsec);
    return buf;
}
