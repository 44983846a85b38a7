/* The profiles compiled in by policy/embed.py (see policy/meson.build). */
#ifndef BRIG_POLICY_EMBEDDED_H
#define BRIG_POLICY_EMBEDDED_H

#include <stddef.h>

struct policy_embedded {
    const char *name;
    const char *text;
};

extern const struct policy_embedded policy_embedded_profiles[];
extern const size_t policy_embedded_count;
extern const char policy_embedded_seccomp[];

#endif
