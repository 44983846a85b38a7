/* A set of path strings: what the current layer has written, so that an
 * opaque directory (".wh..wh..opq") hides the lower layers' entries and
 * keeps its own layer's, whatever order the tar lists them in. */
#include "pathset.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util/strutil.h"

/* FNV-1a from a per-process random start, then mixed (murmur3's fmix64)
 * so that the slot's low bits depend on every bit: with a fixed start, a
 * layer's paths could be chosen to share one slot chain, and each insert
 * would walk all the others (quadratic in the layer's entries). */
static uint64_t pathset_key(void)
{
    static uint64_t key;
    if (key == 0 && (getrandom(&key, sizeof(key), 0) != (ssize_t)sizeof(key) || key == 0))
        key = 1469598103934665603ull ^ (uint64_t)(uintptr_t)&key;
    return key;
}

static uint64_t pathset_hash(const char *s)
{
    uint64_t h = pathset_key();
    for (; *s != '\0'; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

static void pathset_grow(struct pathset *ps)
{
    size_t cap = ps->cap ? ps->cap * 2 : 1024;
    char **slots = brig_calloc(cap, sizeof(char *));
    for (size_t i = 0; i < ps->cap; i++) {
        if (ps->slots[i] == NULL) continue;
        size_t j = pathset_hash(ps->slots[i]) & (cap - 1);
        while (slots[j] != NULL) j = (j + 1) & (cap - 1);
        slots[j] = ps->slots[i];
    }
    free(ps->slots);
    ps->slots = slots;
    ps->cap = cap;
}

void pathset_add(struct pathset *ps, const char *path)
{
    if (2 * (ps->n + 1) > ps->cap) pathset_grow(ps);
    size_t j = pathset_hash(path) & (ps->cap - 1);
    while (ps->slots[j] != NULL) {
        if (strcmp(ps->slots[j], path) == 0) return;
        j = (j + 1) & (ps->cap - 1);
    }
    ps->slots[j] = brig_strdup(path);
    ps->n++;
}

bool pathset_has(const struct pathset *ps, const char *path)
{
    if (ps->cap == 0) return false;
    size_t j = pathset_hash(path) & (ps->cap - 1);
    while (ps->slots[j] != NULL) {
        if (strcmp(ps->slots[j], path) == 0) return true;
        j = (j + 1) & (ps->cap - 1);
    }
    return false;
}

void pathset_clear(struct pathset *ps)
{
    for (size_t i = 0; i < ps->cap; i++) free(ps->slots[i]);
    free(ps->slots);
    memset(ps, 0, sizeof(*ps));
}
