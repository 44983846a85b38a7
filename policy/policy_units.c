/* Human units in policy files: sizes ("512MiB"), durations ("10m"), CPUs
 * ("0.5"). Strict: anything but a whole match is an error, so that "1 G"
 * or "10 minutes" cannot be half-read into a weaker limit. */
#include "policy.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <strings.h>

/* Digits only, into *v; returns the first non-digit, NULL on overflow or
 * when there is no digit. */
static const char *units_digits(const char *s, uint64_t *v)
{
    const char *p = s;
    *v = 0;
    for (; isdigit((unsigned char)*p); p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (*v > (UINT64_MAX - d) / 10) return NULL;
        *v = *v * 10 + d;
    }
    return p == s ? NULL : p;
}

int policy_parse_size(const char *s, uint64_t *out)
{
    static const struct { const char *suffix; unsigned shift; } units[] = {
        { "", 0 }, { "b", 0 },
        { "k", 10 }, { "kb", 10 }, { "kib", 10 },
        { "m", 20 }, { "mb", 20 }, { "mib", 20 },
        { "g", 30 }, { "gb", 30 }, { "gib", 30 },
        { "t", 40 }, { "tb", 40 }, { "tib", 40 },
    };
    uint64_t v;
    const char *p = units_digits(s, &v);
    if (p == NULL) return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcasecmp(p, units[i].suffix) != 0) continue;
        if (units[i].shift > 0 && v > (UINT64_MAX >> units[i].shift)) return -1;
        *out = v << units[i].shift;
        return 0;
    }
    return -1;
}

int policy_parse_duration(const char *s, uint64_t *seconds)
{
    uint64_t total = 0;
    const char *p = s;
    if (*p == '\0') return -1;
    while (*p != '\0') {
        uint64_t v, mult;
        p = units_digits(p, &v);
        if (p == NULL) return -1;
        switch (*p) {
        case 'h': mult = 3600; p++; break;
        case 'm': mult = 60; p++; break;
        case 's': mult = 1; p++; break;
        case '\0': mult = 1; break;
        default: return -1;
        }
        if (v > (UINT64_MAX - total) / mult) return -1;
        total += v * mult;
    }
    *seconds = total;
    return 0;
}

int policy_parse_cpus(const char *s, uint64_t *milli)
{
    uint64_t whole, frac = 0;
    const char *p = units_digits(s, &whole);
    if (p == NULL || whole > 1000000) return -1;
    if (*p == '.') {
        p++;
        unsigned digits = 0;
        for (; isdigit((unsigned char)*p); p++, digits++) {
            if (digits >= 3) return -1;     /* finer than a thousandth */
            frac = frac * 10 + (uint64_t)(*p - '0');
        }
        if (digits == 0) return -1;
        for (; digits < 3; digits++) frac *= 10;
    }
    if (*p != '\0') return -1;
    *milli = whole * 1000 + frac;
    return 0;
}
