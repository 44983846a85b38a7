/* A set of strings (open addressing), for layer.c's opaque directories. */
#ifndef BRIG_IMPORT_PATHSET_H
#define BRIG_IMPORT_PATHSET_H

#include <stdbool.h>
#include <stddef.h>

struct pathset {
    char **slots;
    size_t n, cap;   /* cap: a power of two */
};
void pathset_add(struct pathset *ps, const char *path);
bool pathset_has(const struct pathset *ps, const char *path);
void pathset_clear(struct pathset *ps);

#endif
