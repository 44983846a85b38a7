/* Small string helpers shared by every module. */
#ifndef BRIG_STRUTIL_H
#define BRIG_STRUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Escape s for inclusion in a JSON string (without quotes). Truncates to fit. */
void brig_json_escape(const char *s, char *out, size_t outlen);

/* xstrdup/xmalloc: abort on OOM (nothing in brig can recover from it). */
char *brig_strdup(const char *s);
void *brig_calloc(size_t n, size_t size);
char *brig_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

bool brig_str_has_prefix(const char *s, const char *prefix);
size_t brig_strv_len(char *const *v);
char **brig_strv_dup(char *const *v);

/* The current UTC time as RFC 3339 with nanoseconds
 * ("2026-11-29T23:45:32.826951399Z") into buf (>= 40 bytes). */
#define BRIG_TIME_LEN 40
const char *brig_time_now_rfc3339(char *buf, size_t len);

/* Parse a decimal unsigned/signed integer, whole string, no sign for u64. */
int brig_parse_u64(const char *s, uint64_t *out);
int brig_parse_i64(const char *s, int64_t *out);

#endif
