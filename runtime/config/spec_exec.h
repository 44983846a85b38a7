/* The "process" object on its own, for `brig exec --process FILE`: the same
 * parser and rules as config.json's "process" (config/spec_process.c). */
#ifndef BRIG_SPEC_EXEC_H
#define BRIG_SPEC_EXEC_H

#include <stddef.h>

#include "spec.h"

/* Parse JSON text holding one process object into *out (zeroed first).
 * Errors name the field: "process.cwd: must be an absolute path". On
 * failure *out holds nothing that needs freeing. */
int spec_parse_process_json(const char *json, size_t len, struct brig_process *out,
                            struct brig_error **err);

/* Free what a process holds and zero it (for replacing spec->process). */
void spec_process_clear(struct brig_process *p);

#endif
