/* STUB: to be implemented. */
#include "spec.h"
#include <stdlib.h>

int spec_parse(const char *json, size_t len, const char *bundle_dir, struct brig_spec **out, struct brig_error **err)
{
    return brig_failx(err, "spec_parse: not implemented");
}

int spec_load(const char *bundle_dir, struct brig_spec **out, struct brig_error **err)
{
    return brig_failx(err, "spec_load: not implemented");
}

void spec_free(struct brig_spec *s)
{
    
}

void spec_freep(struct brig_spec **s)
{
    
}

const char * spec_ns_name(enum brig_ns_type t)
{
    return NULL;
}

const char * spec_hook_name(enum brig_hook_kind k)
{
    return NULL;
}
