/* spec_free(): everything spec_parse() allocated. Safe on a partly filled
 * spec: every array is allocated zeroed with its final length first. */
#include "spec_internal.h"

#include <stdlib.h>

#include "mount_options.h"
#include "../util/cleanup.h"

static void spec_free_mount(struct brig_mount *m)
{
    free(m->destination);
    free(m->type);
    free(m->source);
    brig_strv_free(m->options);
    mount_opts_free(&m->opts);
    free(m->uid_mappings);
    free(m->gid_mappings);
}

static void spec_free_hook(struct brig_hook *h)
{
    free(h->path);
    brig_strv_free(h->args);
    brig_strv_free(h->env);
}

void spec_free(struct brig_spec *s)
{
    if (s == NULL) return;
    free(s->oci_version);
    free(s->bundle);
    free(s->root.path);
    free(s->hostname);
    free(s->domainname);
    spec_free_process(&s->process);
    for (size_t i = 0; i < s->n_mounts; i++) spec_free_mount(&s->mounts[i]);
    free(s->mounts);
    for (int k = 0; k < BRIG_HOOK_KIND_COUNT; k++) {
        for (size_t i = 0; i < s->hooks[k].n; i++) spec_free_hook(&s->hooks[k].hooks[i]);
        free(s->hooks[k].hooks);
    }
    for (size_t i = 0; i < s->n_annotations; i++) {
        free(s->annotations[i].key);
        free(s->annotations[i].value);
    }
    free(s->annotations);
    spec_free_linux(&s->linux_cfg);
    free(s);
}

void spec_freep(struct brig_spec **s)
{
    if (s != NULL) {
        spec_free(*s);
        *s = NULL;
    }
}
