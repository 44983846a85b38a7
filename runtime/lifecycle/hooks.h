/* OCI hooks: each is run with the state JSON on stdin, its args and env,
 * killed after its timeout. */
#ifndef BRIG_HOOKS_H
#define BRIG_HOOKS_H

#include "../config/spec.h"

/* Run every hook of a kind in order; the first failure stops and is
 * returned ("hooks.createRuntime[1] (/usr/bin/x): exited with status 3"). */
int hooks_run(const struct brig_spec *s, enum brig_hook_kind kind, const char *state_json,
              struct brig_error **err);

#endif
