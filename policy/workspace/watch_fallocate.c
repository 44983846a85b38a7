/* A watched workspace (watch.c) is measured between looks, so what a
 * command can take of the host's disk in one period is what it writes in
 * one. fallocate(2) takes blocks without writing them: 16 GiB in the 50 ms
 * before the first look on this ext4 (a review), where writes at page-cache
 * speed take ~100 MiB. So the container of a watched workspace gets it
 * answered EOPNOTSUPP, as a filesystem without it answers: glibc's
 * posix_fallocate then writes, at the speed the watch bounds. Added to the
 * config's own filter (every rule that would let it through loses it), or
 * to a filter of its own that allows everything else; a filter that stops
 * it whatever its arguments already is left as it is (its action may be
 * the stricter one). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../policy.h"
#include "../../runtime/config/spec.h"
#include "../../runtime/util/strutil.h"

#define WATCH_FALLOCATE "fallocate"

/* names of one rule, packed as the parser packs them (spec_seccomp.c): the
 * pointers and the strings in one block that one free() releases. */
static char **watch_names_one(const char *name)
{
    size_t len = strlen(name) + 1;
    char **v = brig_calloc(1, 2 * sizeof(char *) + len);
    char *text = (char *)(v + 2);
    memcpy(text, name, len);
    v[0] = text;
    return v;
}

/* A filter of its own allows what no filter would have stopped, on every
 * architecture the kernel runs here (a compat call is no way around it). */
static void watch_filter_new(struct brig_seccomp *sc)
{
#if defined(__x86_64__)
    static const char *const arches[] = { "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32" };
#elif defined(__aarch64__)
    static const char *const arches[] = { "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM" };
#else
    static const char *const arches[] = { NULL };
#endif
    size_t n = arches[0] != NULL ? sizeof(arches) / sizeof(arches[0]) : 0;
    *sc = (struct brig_seccomp){ .present = true, .default_action = BRIG_SCMP_ALLOW };
    sc->architectures = brig_calloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) sc->architectures[i] = brig_strdup(arches[i]);
    sc->n_architectures = n;
}

/* An action under which the call does not run (a notifier or tracer may
 * let it go on). */
static bool watch_action_stops(enum brig_scmp_action a)
{
    return a != BRIG_SCMP_ALLOW && a != BRIG_SCMP_LOG && a != BRIG_SCMP_TRACE && a != BRIG_SCMP_NOTIFY;
}

/* The filter stops fallocate whatever its arguments: a rule without
 * conditions that stops it and none that could let it run, or no rule for
 * it and a default that stops it. */
static bool watch_fallocate_stopped(const struct brig_seccomp *sc)
{
    if (!sc->present) return false;
    bool named = false, stopped = false;
    for (size_t i = 0; i < sc->n_syscalls; i++) {
        const struct brig_seccomp_rule *r = &sc->syscalls[i];
        for (size_t j = 0; j < r->n_names; j++) {
            if (strcmp(r->names[j], WATCH_FALLOCATE) != 0) continue;
            named = true;
            if (!watch_action_stops(r->action)) return false;
            if (r->n_args == 0) stopped = true;
        }
    }
    return named ? stopped : watch_action_stops(sc->default_action);
}

void policy_seccomp_no_fallocate(struct brig_seccomp *sc)
{
    if (watch_fallocate_stopped(sc)) return;
    if (!sc->present) watch_filter_new(sc);
    size_t kept = 0;
    for (size_t i = 0; i < sc->n_syscalls; i++) {
        struct brig_seccomp_rule *r = &sc->syscalls[i];
        size_t k = 0;
        for (size_t j = 0; j < r->n_names; j++)
            if (strcmp(r->names[j], WATCH_FALLOCATE) != 0) r->names[k++] = r->names[j];
        r->n_names = k;
        if (k == 0) {
            free(r->names);
            free(r->args);
            continue;
        }
        sc->syscalls[kept++] = *r;
    }
    struct brig_seccomp_rule *rules = brig_calloc(kept + 1, sizeof(*rules));
    if (kept > 0) memcpy(rules, sc->syscalls, kept * sizeof(*rules));
    free(sc->syscalls);
    sc->syscalls = rules;
    sc->syscalls[kept] = (struct brig_seccomp_rule){ .names = watch_names_one(WATCH_FALLOCATE), .n_names = 1,
                                                      .action = BRIG_SCMP_ERRNO, .has_errno_ret = true,
                                                      .errno_ret = EOPNOTSUPP };
    sc->n_syscalls = kept + 1;
}
