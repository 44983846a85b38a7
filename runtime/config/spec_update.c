/* The resources document of `update --resources FILE` (runc's format: a
 * linux.resources object on its own), parsed by the same code as
 * config.json's linux.resources so that both accept exactly the same. */
#include "spec_internal.h"

#include <string.h>

int spec_parse_resources_text(const char *text, size_t len, struct brig_resources *r,
                              struct brig_error **err)
{
    memset(r, 0, sizeof(*r));
    autojson brig_json doc = NULL;
    TRY(json_parse(text, len, &doc, err));
    TRY(json_as_object(doc, "resources", err));
    if (spec_parse_resources(doc, "linux.resources", r, err) < 0) {
        spec_free_resources(r);
        memset(r, 0, sizeof(*r));
        return -1;
    }
    return 0;
}

void spec_resources_clear(struct brig_resources *r)
{
    spec_free_resources(r);
    memset(r, 0, sizeof(*r));
}
