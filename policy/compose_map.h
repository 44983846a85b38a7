/* compose_map's working state, shared by compose_map.c (process, linux)
 * and compose_mounts.c (mounts, devices). */
#ifndef BRIG_POLICY_COMPOSE_MAP_H
#define BRIG_POLICY_COMPOSE_MAP_H

#include "compose.h"
#include "policy_tree.h"

struct cmap {
    struct compose_doc *d;
    yaml_node_t *svc;
    struct ptree *cfg;
    char *notes;                /* "key: why" lines of what cannot be judged */
};

void cmap_note(struct cmap *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
yaml_node_t *cmap_get(struct cmap *c, const char *key);
const char **cmap_strings(struct cmap *c, yaml_node_t *n, const char *key);

/* compose_mounts.c */
void cmap_mounts(struct cmap *c, struct ptree *mounts, bool privileged);
void cmap_devices(struct cmap *c, struct ptree *lin, struct ptree *res, bool privileged);

#endif
