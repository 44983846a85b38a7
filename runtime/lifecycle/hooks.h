/* OCI hooks: each is run with the state JSON on stdin, its args and env,
 * killed after its timeout. */
#ifndef BRIG_HOOKS_H
#define BRIG_HOOKS_H

#include "../config/spec.h"

/* Run every hook of a kind in order; the first failure stops and is
 * returned ("hooks.createRuntime[1] (/usr/bin/x): exited with status 3"). */
int hooks_run(const struct brig_spec *s, enum brig_hook_kind kind, const char *state_json,
              struct brig_error **err);
/* poststop (runtime.md: its failure is a warning and the lifecycle goes
 * on): every hook of the list runs; each failure is a warning prefixed by
 * ctx ("delete ID"). A failing poststart hook is an error (start.c). */
void hooks_run_warn(const struct brig_spec *s, enum brig_hook_kind kind, const char *state_json,
                    const char *ctx);
/* Whether any hook of the kinds from first to last (enum order) is
 * configured: the state JSON they read is built only for them (it costs a
 * user name lookup and a cgroup read). */
bool hooks_any(const struct brig_spec *s, enum brig_hook_kind first, enum brig_hook_kind last);

#endif
