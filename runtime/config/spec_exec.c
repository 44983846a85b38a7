/* `brig exec --process FILE`: runc reads a bare specs.Process there. */
#include "spec_exec.h"

#include <string.h>

#include "spec_internal.h"

int spec_parse_process_json(const char *json, size_t len, struct brig_process *out,
                            struct brig_error **err)
{
    memset(out, 0, sizeof(*out));
    autojson brig_json root = NULL;
    TRY(json_parse(json, len, &root, err));
    TRY(json_as_object(root, "process", err));
    if (spec_parse_process(root, out, err) < 0) {
        spec_process_clear(out);
        return -1;
    }
    return 0;
}

void spec_process_clear(struct brig_process *p)
{
    spec_free_process(p);
    memset(p, 0, sizeof(*p));
}
