/* `brig policy check --compose` (docs/policy.md, "Compose definitions"):
 * a compose service judged against a policy with the same rule ids as a
 * config.json, by mapping each key to the config Docker makes of it.
 *
 *   compose.yaml --compose_load--> YAML document (libyaml)
 *   service --compose_map--> config.json text, as Docker 20.10 writes it
 *   config --policy_check--> report; + compose.keys, image.pinned
 *
 * Internal to policy/: the CLI calls policy_compose_check (policy.h). */
#ifndef BRIG_POLICY_COMPOSE_H
#define BRIG_POLICY_COMPOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "../runtime/util/error.h"

struct policy_report;

/* ---- compose_yaml.c: a loaded document and lookups in it ---- */
struct compose_doc {
    yaml_document_t doc;
    bool loaded;
    char *dir;          /* the file's directory: relative paths resolve here */
};
/* Reads FILE (a regular file, at most 1 MiB, no symlink as the last
 * component) and parses its first YAML document. Errors give line and
 * column, never content, and name the file. */
int compose_load(const char *path, struct compose_doc *out, struct brig_error **err);
/* The same from text; relative paths of the file resolve under DIR. */
int compose_parse(const char *text, size_t len, const char *dir, struct compose_doc *out,
                  struct brig_error **err);
void compose_doc_free(struct compose_doc *d);
yaml_node_t *compose_root(struct compose_doc *d);
/* Map lookup, following `<<` merge keys (bounded depth); NULL if absent
 * or if MAP is not a mapping. */
yaml_node_t *compose_get(struct compose_doc *d, yaml_node_t *map, const char *key);
/* The scalar's text, NULL for a non-scalar (or NULL) node. */
const char *compose_scalar(yaml_node_t *n);
bool compose_is_map(yaml_node_t *n);
bool compose_is_seq(yaml_node_t *n);
size_t compose_len(yaml_node_t *n);                     /* items or pairs */
yaml_node_t *compose_item(struct compose_doc *d, yaml_node_t *seq, size_t i);
/* The i-th pair of a mapping (merge keys not expanded). */
void compose_pair(struct compose_doc *d, yaml_node_t *map, size_t i, yaml_node_t **key, yaml_node_t **val);
/* YAML 1.1 and 1.2 booleans (true/false/yes/no/on/off); -1 otherwise. */
int compose_bool(yaml_node_t *n);

/* ---- compose_map.c: the config Docker makes of a service ---- */
/* Config JSON text (malloc'd). `unjudged` collects keys that mean
 * something for isolation but that brig cannot judge (a user name without
 * the image, an env_file it cannot read): one "key: why" per line. */
int compose_map(struct compose_doc *d, yaml_node_t *svc, char **config,
                char **unjudged, struct brig_error **err);
/* Docker 20.10's default seccomp profile allows these of brig's blocked
 * list (ptrace and process_vm_* on kernels >= 4.8, io_uring until 25.0). */
extern const char *const compose_docker_seccomp_extra[];

/* ---- compose_check.c ---- */
/* Keys of a service: those compose_map reads, and those with no bearing on
 * isolation. Any other key fails compose.keys (fail closed). */
bool compose_key_known(const char *key);

#endif
