/* linux.memoryPolicy (config-linux.md "Memory policy", spec 1.3): the mode,
 * flags and node list for set_mempolicy(2), checked here so that a bad one
 * is an error naming the field before anything runs. The tables are shared
 * with `features` (spec_mempolicy_mode_name/flag_name). */
#include "spec_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"

static const struct { const char *name; int mode; } mempolicy_modes[] = {
    { "MPOL_DEFAULT", BRIG_MPOL_DEFAULT },
    { "MPOL_PREFERRED", BRIG_MPOL_PREFERRED },
    { "MPOL_BIND", BRIG_MPOL_BIND },
    { "MPOL_INTERLEAVE", BRIG_MPOL_INTERLEAVE },
    { "MPOL_LOCAL", BRIG_MPOL_LOCAL },
    { "MPOL_PREFERRED_MANY", BRIG_MPOL_PREFERRED_MANY },
    { "MPOL_WEIGHTED_INTERLEAVE", BRIG_MPOL_WEIGHTED_INTERLEAVE },
};

static const struct { const char *name; unsigned flag; } mempolicy_flags[] = {
    { "MPOL_F_NUMA_BALANCING", BRIG_MPOL_F_NUMA_BALANCING },
    { "MPOL_F_RELATIVE_NODES", BRIG_MPOL_F_RELATIVE_NODES },
    { "MPOL_F_STATIC_NODES", BRIG_MPOL_F_STATIC_NODES },
};

const char *spec_mempolicy_mode_name(size_t i)
{
    return i < BRIG_ARRAY_SIZE(mempolicy_modes) ? mempolicy_modes[i].name : NULL;
}

const char *spec_mempolicy_flag_name(size_t i)
{
    return i < BRIG_ARRAY_SIZE(mempolicy_flags) ? mempolicy_flags[i].name : NULL;
}

/* "0-3,7": the same list syntax as cpuset.mems; every node below
 * BRIG_MPOL_MAX_NODES, no empty element, ranges ascending. */
static int mempolicy_parse_nodes(const char *s, uint64_t *mask, struct brig_error **err)
{
    const char *p = s;
    while (*p != '\0') {
        char *end;
        errno = 0;
        /* digits only: strtoul would take a sign or leading blanks */
        if (*p < '0' || *p > '9') goto bad;
        unsigned long a = strtoul(p, &end, 10), b = a;
        if (errno != 0) goto bad;
        p = end;
        if (*p == '-') {
            p++;
            if (*p < '0' || *p > '9') goto bad;
            b = strtoul(p, &end, 10);
            if (errno != 0) goto bad;
            p = end;
        }
        if (a > b) goto bad;
        if (b >= BRIG_MPOL_MAX_NODES)
            return brig_failx(err, "linux.memoryPolicy.nodes: node %lu is beyond the %d nodes "
                              "brig supports", b, BRIG_MPOL_MAX_NODES);
        for (unsigned long n = a; n <= b; n++) mask[n / 64] |= 1ull << (n % 64);
        if (*p == ',') {
            p++;
            if (*p == '\0') goto bad;
        } else if (*p != '\0') {
            goto bad;
        }
    }
    return 0;
bad:
    return brig_failx(err, "linux.memoryPolicy.nodes: \"%.64s\" is not a node list (e.g. \"0-3,7\")", s);
}

static int mempolicy_check(const struct brig_mempolicy *m, bool has_nodes, struct brig_error **err)
{
    bool empty = true;
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(m->nodes); i++)
        if (m->nodes[i] != 0) empty = false;
    /* set_mempolicy(2): these take no nodes, those need at least one */
    if ((m->mode == BRIG_MPOL_DEFAULT || m->mode == BRIG_MPOL_LOCAL) && has_nodes)
        return brig_failx(err, "linux.memoryPolicy.nodes: must be empty with mode %s",
                          m->mode == BRIG_MPOL_DEFAULT ? "MPOL_DEFAULT" : "MPOL_LOCAL");
    if (m->mode != BRIG_MPOL_DEFAULT && m->mode != BRIG_MPOL_LOCAL &&
        m->mode != BRIG_MPOL_PREFERRED && empty)
        return brig_failx(err, "linux.memoryPolicy.nodes: this mode needs at least one node");
    if (m->mode == BRIG_MPOL_DEFAULT && m->flags != 0)
        return brig_failx(err, "linux.memoryPolicy.flags: MPOL_DEFAULT takes no flags");
    if ((m->flags & BRIG_MPOL_F_STATIC_NODES) && (m->flags & BRIG_MPOL_F_RELATIVE_NODES))
        return brig_failx(err, "linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and "
                               "MPOL_F_RELATIVE_NODES exclude each other");
    if ((m->flags & (BRIG_MPOL_F_STATIC_NODES | BRIG_MPOL_F_RELATIVE_NODES)) && empty)
        return brig_failx(err, "linux.memoryPolicy.flags: MPOL_F_STATIC_NODES and "
                               "MPOL_F_RELATIVE_NODES need a node list");
    return 0;
}

int spec_parse_mempolicy(brig_json v, const char *path, struct brig_mempolicy *m,
                         struct brig_error **err)
{
    autofree char *mode = NULL, *nodes = NULL;
    autostrv char **flags = NULL;
    size_t n_flags = 0;
    memset(m, 0, sizeof(*m));
    TRY(json_get_string(v, path, "mode", true, &mode, err));
    TRY(json_get_string(v, path, "nodes", false, &nodes, err));
    brig_json f;
    char q[SP_PATH_MAX];
    int r = sp_get_array(v, path, "flags", false, &f, q, err);
    if (r < 0) return -1;
    if (r == 0) TRY(json_as_strv(f, q, &flags, &n_flags, err));

    size_t i = 0;
    while (i < BRIG_ARRAY_SIZE(mempolicy_modes) && strcmp(mode, mempolicy_modes[i].name) != 0) i++;
    if (i == BRIG_ARRAY_SIZE(mempolicy_modes))
        return brig_failx(err, "%s.mode: unknown mode \"%.64s\"", path, mode);
    m->mode = mempolicy_modes[i].mode;
    for (size_t k = 0; k < n_flags; k++) {
        size_t j = 0;
        while (j < BRIG_ARRAY_SIZE(mempolicy_flags) && strcmp(flags[k], mempolicy_flags[j].name) != 0)
            j++;
        if (j == BRIG_ARRAY_SIZE(mempolicy_flags))
            return brig_failx(err, "%s.flags[%zu]: unknown flag \"%.64s\"", path, k, flags[k]);
        m->flags |= mempolicy_flags[j].flag;
    }
    bool has_nodes = nodes != NULL && nodes[0] != '\0';
    if (has_nodes) TRY(mempolicy_parse_nodes(nodes, m->nodes, err));
    TRY(mempolicy_check(m, has_nodes, err));
    m->present = true;
    return 0;
}
