/* compose_yaml: a compose file as a libyaml document, and the few lookups
 * the mapping needs. Aliases are shared nodes in libyaml's document model,
 * so nothing is ever expanded: a "billion laughs" file costs its own size.
 * Only merge keys (`<<: *base`) are followed, to a bounded depth. The
 * nesting and the number of nodes are bounded from libyaml's event stream
 * before any document is built: libyaml's scanner looks at every open flow
 * level for each token, so a file of 260,000 `[` costs minutes. */
#include "compose.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/strutil.h"

#define COMPOSE_MAX_BYTES (1u << 20)
#define COMPOSE_MERGE_DEPTH 8
#define COMPOSE_MERGE_MAX 64      /* mappings one lookup may visit through `<<` */
#define COMPOSE_MAX_ANCHORS 256
#define COMPOSE_MAX_DEPTH 64      /* nested mappings and sequences (a compose file needs ~6) */
#define COMPOSE_MAX_NODES 200000  /* scalars, mappings, sequences and aliases */

static int compose_read(const char *path, char **text, size_t *len, struct brig_error **err)
{
    struct stat st;
    autoclose int fd = brig_open_input(AT_FDCWD, path, BRIG_INPUT_NOFOLLOW, &st, err);
    if (fd < 0) return -1;
    if (st.st_size > COMPOSE_MAX_BYTES)
        return brig_failx(err, "%lld bytes, more than a compose file may have (%u)", (long long)st.st_size,
                          COMPOSE_MAX_BYTES);
    autofree char *buf = brig_calloc((size_t)st.st_size + 1, 1);
    size_t n = 0;
    for (;;) {
        ssize_t r = read(fd, buf + n, (size_t)st.st_size + 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return brig_fail(err, errno, "read");
        if (r == 0) break;
        n += (size_t)r;
        if (n > (size_t)st.st_size) return brig_failx(err, "grew while being read");
    }
    buf[n] = '\0';
    *text = steal_ptr(&buf);
    *len = n;
    return 0;
}

int compose_load(const char *path, struct compose_doc *out, struct brig_error **err)
{
    *out = (struct compose_doc){ 0 };
    autofree char *text = NULL;
    size_t len = 0;
    TRY(compose_read(path, &text, &len, err));
    autofree char *copy = brig_strdup(path);
    char real[PATH_MAX];
    if (compose_parse(text, len, realpath(dirname(copy), real) ? real : ".", out, err) < 0)
        return brig_wrap(err, "%s", path);
    return 0;
}

/* How many mappings a lookup in MAP visits through merge keys, memoised
 * in size[] by node (0 not yet known, -1 being counted); -1 for a cycle,
 * a chain deeper than COMPOSE_MERGE_DEPTH or more than COMPOSE_MERGE_MAX.
 * Aliases share nodes, so `<<: [*a, *a, ...]` over a few levels would
 * otherwise make one lookup cost the product of the lists (a small file
 * that never finishes its check). */
static long compose_merge_size(yaml_document_t *doc, yaml_node_t *map, long *size, int depth)
{
    if (map == NULL || map->type != YAML_MAPPING_NODE) return 0;
    long *mine = &size[map - doc->nodes.start];
    if (*mine > 0) return *mine;
    if (*mine < 0 || depth > COMPOSE_MERGE_DEPTH) return -1;
    *mine = -1;
    long total = 1;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key), *v = yaml_document_get_node(doc, p->value);
        if (k == NULL || k->type != YAML_SCALAR_NODE || strcmp((const char *)k->data.scalar.value, "<<") != 0)
            continue;
        size_t n = v != NULL && v->type == YAML_SEQUENCE_NODE
                       ? (size_t)(v->data.sequence.items.top - v->data.sequence.items.start) : 1;
        for (size_t i = 0; i < n; i++) {
            yaml_node_t *m = v != NULL && v->type == YAML_SEQUENCE_NODE
                                 ? yaml_document_get_node(doc, v->data.sequence.items.start[i]) : v;
            long sub = compose_merge_size(doc, m, size, depth + 1);
            if (sub < 0 || (total += sub) > COMPOSE_MERGE_MAX) return -1;
        }
    }
    *mine = total;
    return total;
}

static int compose_merges_bounded(yaml_document_t *doc, struct brig_error **err)
{
    size_t n = (size_t)(doc->nodes.top - doc->nodes.start);
    autofree long *size = brig_calloc(n ? n : 1, sizeof(long));
    for (yaml_node_t *m = doc->nodes.start; m < doc->nodes.top; m++)
        if (compose_merge_size(doc, m, size, 0) < 0)
            return brig_failx(err, "line %zu: merge keys (<<) that form a cycle, chain deeper than %d or "
                              "reach more than %d mappings", (size_t)m->start_mark.line + 1,
                              COMPOSE_MERGE_DEPTH, COMPOSE_MERGE_MAX);
    return 0;
}

/* The shape of the stream, one event at a time, before libyaml's loader
 * builds the document: its scanner looks ahead at most 1024 characters for
 * a simple key, so the work done before a refusal is bounded by the depth
 * allowed; and the loader looks every new anchor and every alias up among
 * all the anchors before it, one by one (n anchors cost n^2/2 string
 * compares: 1 MiB of them, ~4 s; minutes under ASan), so a compose file may
 * name a few (`x-common: &common`). A syntax error stops the walk here; the
 * load then reports it in its own words. */
static int compose_shape_bounded(const char *text, size_t len, struct brig_error **err)
{
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return brig_failx(err, "libyaml: out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    size_t depth = 0, nodes = 0, anchors = 0;
    int rc = 0;
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&parser, &ev)) break;
        yaml_event_type_t type = ev.type;
        size_t line = ev.start_mark.line + 1;
        const yaml_char_t *anchor = type == YAML_SCALAR_EVENT ? ev.data.scalar.anchor
                                  : type == YAML_SEQUENCE_START_EVENT ? ev.data.sequence_start.anchor
                                  : type == YAML_MAPPING_START_EVENT ? ev.data.mapping_start.anchor : NULL;
        bool anchored = anchor != NULL;
        yaml_event_delete(&ev);
        if (type == YAML_STREAM_END_EVENT) break;
        if (anchored && ++anchors > COMPOSE_MAX_ANCHORS) {
            rc = brig_failx(err, "line %zu: more than %d anchors (&name): brig judges compose files "
                            "that name a few", line, COMPOSE_MAX_ANCHORS);
            break;
        }
        if (type == YAML_SEQUENCE_START_EVENT || type == YAML_MAPPING_START_EVENT) {
            if (++depth > COMPOSE_MAX_DEPTH) {
                rc = brig_failx(err, "line %zu: mappings and sequences nested deeper than %d levels",
                                line, COMPOSE_MAX_DEPTH);
                break;
            }
        } else if ((type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT) && depth > 0) {
            depth--;
        }
        if ((type == YAML_SCALAR_EVENT || type == YAML_ALIAS_EVENT || type == YAML_SEQUENCE_START_EVENT ||
             type == YAML_MAPPING_START_EVENT) && ++nodes > COMPOSE_MAX_NODES) {
            rc = brig_failx(err, "line %zu: more than %d nodes (scalars, mappings, sequences)", line,
                            COMPOSE_MAX_NODES);
            break;
        }
    }
    yaml_parser_delete(&parser);
    return rc;
}

int compose_parse(const char *text, size_t len, const char *dir, struct compose_doc *out,
                  struct brig_error **err)
{
    *out = (struct compose_doc){ 0 };
    if (len > COMPOSE_MAX_BYTES) return brig_failx(err, "%zu bytes, more than a compose file may have", len);
    TRY(compose_shape_bounded(text, len, err));
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) return brig_failx(err, "libyaml: out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int ok = yaml_parser_load(&parser, &out->doc);
    if (!ok) {
        /* libyaml's problem strings are its own words, never the input's. */
        brig_failx(err, "line %zu, column %zu: %s", parser.problem_mark.line + 1,
                   parser.problem_mark.column + 1, parser.problem ? parser.problem : "invalid YAML");
        yaml_parser_delete(&parser);
        return -1;
    }
    /* compose merges every document of a file, a later one overriding:
     * a second "---" could make the judged service privileged. */
    yaml_document_t next;
    bool more = false;
    if (yaml_parser_load(&parser, &next)) {
        more = yaml_document_get_root_node(&next) != NULL;
        yaml_document_delete(&next);
    } else {
        more = true;
    }
    yaml_parser_delete(&parser);
    out->loaded = true;
    if (more) {
        compose_doc_free(out);
        return brig_failx(err, "more than one YAML document: compose merges them, brig judges one file as "
                          "one document (check `docker compose config` output)");
    }
    if (yaml_document_get_root_node(&out->doc) == NULL) {
        compose_doc_free(out);
        return brig_failx(err, "empty document");
    }
    if (compose_merges_bounded(&out->doc, err) < 0) {
        compose_doc_free(out);
        return -1;
    }
    out->dir = brig_strdup(dir);
    return 0;
}

void compose_doc_free(struct compose_doc *d)
{
    if (d->loaded) yaml_document_delete(&d->doc);
    free(d->dir);
    *d = (struct compose_doc){ 0 };
}

yaml_node_t *compose_root(struct compose_doc *d)
{
    return yaml_document_get_root_node(&d->doc);
}

bool compose_is_map(yaml_node_t *n) { return n != NULL && n->type == YAML_MAPPING_NODE; }
bool compose_is_seq(yaml_node_t *n) { return n != NULL && n->type == YAML_SEQUENCE_NODE; }

const char *compose_scalar(yaml_node_t *n)
{
    return n != NULL && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

size_t compose_len(yaml_node_t *n)
{
    if (compose_is_map(n)) return (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    if (compose_is_seq(n)) return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    return 0;
}

yaml_node_t *compose_item(struct compose_doc *d, yaml_node_t *seq, size_t i)
{
    if (!compose_is_seq(seq) || i >= compose_len(seq)) return NULL;
    return yaml_document_get_node(&d->doc, seq->data.sequence.items.start[i]);
}

void compose_pair(struct compose_doc *d, yaml_node_t *map, size_t i, yaml_node_t **key, yaml_node_t **val)
{
    *key = *val = NULL;
    if (!compose_is_map(map) || i >= compose_len(map)) return;
    yaml_node_pair_t *p = &map->data.mapping.pairs.start[i];
    *key = yaml_document_get_node(&d->doc, p->key);
    *val = yaml_document_get_node(&d->doc, p->value);
}

static yaml_node_t *compose_get_depth(struct compose_doc *d, yaml_node_t *map, const char *key, int depth)
{
    if (!compose_is_map(map) || depth > COMPOSE_MERGE_DEPTH) return NULL;
    yaml_node_t *merge = NULL;
    for (size_t i = 0; i < compose_len(map); i++) {
        yaml_node_t *k, *v;
        compose_pair(d, map, i, &k, &v);
        const char *ks = compose_scalar(k);
        if (ks == NULL) continue;
        if (strcmp(ks, key) == 0) return v;
        if (strcmp(ks, "<<") == 0) merge = v;
    }
    /* Keys of the mapping itself win over merged ones; of several merged
     * mappings the first that has the key wins (the YAML merge spec). */
    if (compose_is_map(merge)) return compose_get_depth(d, merge, key, depth + 1);
    for (size_t i = 0; i < compose_len(merge); i++) {
        yaml_node_t *v = compose_get_depth(d, compose_item(d, merge, i), key, depth + 1);
        if (v != NULL) return v;
    }
    return NULL;
}

yaml_node_t *compose_get(struct compose_doc *d, yaml_node_t *map, const char *key)
{
    return compose_get_depth(d, map, key, 0);
}

int compose_bool(yaml_node_t *n)
{
    static const char *const yes[] = { "true", "yes", "on", "y", NULL };
    static const char *const no[] = { "false", "no", "off", "n", NULL };
    const char *s = compose_scalar(n);
    if (s == NULL) return -1;
    for (const char *const *t = yes; *t; t++)
        if (strcasecmp(s, *t) == 0) return 1;
    for (const char *const *t = no; *t; t++)
        if (strcasecmp(s, *t) == 0) return 0;
    return -1;
}
