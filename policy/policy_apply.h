/* The steps of policy_apply (policy_apply.c, policy_apply_steps.c). */
#ifndef BRIG_POLICY_APPLY_H
#define BRIG_POLICY_APPLY_H

#include "policy_internal.h"
#include "policy_tree.h"
#include "../runtime/util/fs.h"

int apply_namespaces(const struct brig_policy *p, struct ptree *cfg, struct brig_error **err);
void apply_process(const struct brig_policy *p, struct ptree *cfg);
void apply_resources(const struct brig_policy *p, struct ptree *cfg);
void apply_linux_misc(const struct brig_policy *p, struct ptree *cfg);
/* current_ok: the config's own filter passes seccomp.present already.
 * as_text: the default profile goes in as its text (PT_RAW). */
int apply_seccomp(const struct brig_policy *p, struct ptree *cfg, bool current_ok, bool as_text,
                  struct brig_error **err);

#endif
