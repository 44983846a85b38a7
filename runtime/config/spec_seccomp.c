/* config-linux.md "Seccomp": checked here so that every mistake is
 * reported with its JSON path before anything runs; compiled to BPF by
 * runtime/linux/seccomp.c. */
#include "spec_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../util/cleanup.h"
#include "../util/strutil.h"

static const struct sp_name scmp_actions[] = {
    { "SCMP_ACT_KILL", BRIG_SCMP_KILL },
    { "SCMP_ACT_KILL_PROCESS", BRIG_SCMP_KILL_PROCESS },
    { "SCMP_ACT_KILL_THREAD", BRIG_SCMP_KILL_THREAD },
    { "SCMP_ACT_TRAP", BRIG_SCMP_TRAP },
    { "SCMP_ACT_ERRNO", BRIG_SCMP_ERRNO },
    { "SCMP_ACT_TRACE", BRIG_SCMP_TRACE },
    { "SCMP_ACT_ALLOW", BRIG_SCMP_ALLOW },
    { "SCMP_ACT_LOG", BRIG_SCMP_LOG },
    { "SCMP_ACT_NOTIFY", BRIG_SCMP_NOTIFY },
    { NULL, 0 },
};

static const struct sp_name scmp_ops[] = {
    { "SCMP_CMP_NE", BRIG_SCMP_CMP_NE },
    { "SCMP_CMP_LT", BRIG_SCMP_CMP_LT },
    { "SCMP_CMP_LE", BRIG_SCMP_CMP_LE },
    { "SCMP_CMP_EQ", BRIG_SCMP_CMP_EQ },
    { "SCMP_CMP_GE", BRIG_SCMP_CMP_GE },
    { "SCMP_CMP_GT", BRIG_SCMP_CMP_GT },
    { "SCMP_CMP_MASKED_EQ", BRIG_SCMP_CMP_MASKED_EQ },
    { NULL, 0 },
};

static const char *const scmp_flags[] = {
    "SECCOMP_FILTER_FLAG_TSYNC",
    "SECCOMP_FILTER_FLAG_LOG",
    "SECCOMP_FILTER_FLAG_SPEC_ALLOW",
    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
};

static int spec_get_action(brig_json obj, const char *path, const char *key,
                           enum brig_scmp_action *out, struct brig_error **err)
{
    autofree char *name = NULL;
    TRY(json_get_string(obj, path, key, true, &name, err));
    long a;
    if (sp_lookup(scmp_actions, name, &a) < 0) {
        char p[SP_PATH_MAX];
        sp_key(p, path, key);
        return brig_failx(err, "%s: unknown action \"%.100s\"", p, name);
    }
    *out = (enum brig_scmp_action)a;
    return 0;
}

/* config-linux.md: "When the action doesn't support an errno, the runtime
 * MUST print and error and fail". SCMP_ACT_TRACE takes its value too. */
static int spec_get_errno_ret(brig_json obj, const char *path, const char *key,
                              enum brig_scmp_action action, bool *has, uint32_t *out,
                              struct brig_error **err)
{
    int r = json_get_u32(obj, path, key, false, out, err);
    if (r < 0) return -1;
    *has = r == 0;
    if (*has && action != BRIG_SCMP_ERRNO && action != BRIG_SCMP_TRACE) {
        char p[SP_PATH_MAX];
        sp_key(p, path, key);
        return brig_failx(err, "%s: only SCMP_ACT_ERRNO and SCMP_ACT_TRACE take an errno", p);
    }
    return 0;
}

static int spec_parse_arg(brig_json e, const char *p, struct brig_seccomp_arg *a,
                          struct brig_error **err)
{
    TRY(json_as_object(e, p, err));
    TRY(json_get_u32(e, p, "index", true, &a->index, err));
    /* A syscall has at most six arguments. */
    if (a->index >= 6)
        return brig_failx(err, "%s.index: must be below 6, got %" PRIu32, p, a->index);
    TRY(json_get_u64(e, p, "value", true, &a->value, err));
    TRY(json_get_u64(e, p, "valueTwo", false, &a->value_two, err));
    autofree char *op = NULL;
    TRY(json_get_string(e, p, "op", true, &op, err));
    long o;
    if (sp_lookup(scmp_ops, op, &o) < 0)
        return brig_failx(err, "%s.op: unknown operator \"%.100s\"", p, op);
    a->op = (enum brig_scmp_op)o;
    return 0;
}

static int spec_parse_rule(brig_json e, const char *p, struct brig_seccomp_rule *r,
                           struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    TRY(json_as_object(e, p, err));
    TRY(sp_member(e, p, "names", true, &v, q, err));
    TRY(json_as_strv_packed(v, q, &r->names, &r->n_names, err));
    if (r->n_names == 0) return brig_failx(err, "%s: must contain at least one name", q);
    for (size_t i = 0; i < r->n_names; i++)
        if (r->names[i][0] == '\0') return brig_failx(err, "%s[%zu]: must not be empty", q, i);
    TRY(spec_get_action(e, p, "action", &r->action, err));
    TRY(spec_get_errno_ret(e, p, "errnoRet", r->action, &r->has_errno_ret, &r->errno_ret, err));

    int x = sp_get_array(e, p, "args", false, &v, q, err);
    if (x != 0) return x < 0 ? -1 : 0;
    r->n_args = json_array_len(v);
    r->args = brig_calloc(r->n_args, sizeof(*r->args));
    for (size_t i = 0; i < r->n_args; i++) {
        char pi[SP_PATH_MAX];
        sp_idx(pi, q, i);
        TRY(spec_parse_arg(json_array_at(v, i), pi, &r->args[i], err));
    }
    return 0;
}

int spec_parse_seccomp(brig_json sc, const char *path, struct brig_seccomp *s,
                       struct brig_error **err)
{
    s->present = true;
    TRY(spec_get_action(sc, path, "defaultAction", &s->default_action, err));
    TRY(spec_get_errno_ret(sc, path, "defaultErrnoRet", s->default_action,
                           &s->has_default_errno_ret, &s->default_errno_ret, err));
    TRY(sp_get_strv(sc, path, "architectures", &s->architectures, &s->n_architectures, err));
    for (size_t i = 0; i < s->n_architectures; i++)
        if (!brig_str_has_prefix(s->architectures[i], "SCMP_ARCH_"))
            return brig_failx(err, "%s.architectures[%zu]: unknown architecture \"%.100s\"", path,
                              i, s->architectures[i]);
    TRY(sp_get_strv(sc, path, "flags", &s->flags, &s->n_flags, err));
    for (size_t i = 0; i < s->n_flags; i++) {
        bool known = false;
        for (size_t k = 0; k < BRIG_ARRAY_SIZE(scmp_flags); k++)
            known = known || strcmp(s->flags[i], scmp_flags[k]) == 0;
        if (!known)
            return brig_failx(err, "%s.flags[%zu]: unknown flag \"%.100s\"", path, i,
                              s->flags[i]);
    }
    TRY(json_get_string(sc, path, "listenerPath", false, &s->listener_path, err));
    TRY(json_get_string(sc, path, "listenerMetadata", false, &s->listener_metadata, err));
    if (s->listener_metadata != NULL && s->listener_path == NULL)
        return brig_failx(err, "%s.listenerMetadata: must not be set without listenerPath", path);

    char q[SP_PATH_MAX];
    brig_json arr;
    int x = sp_get_array(sc, path, "syscalls", false, &arr, q, err);
    if (x != 0) return x < 0 ? -1 : 0;
    s->n_syscalls = json_array_len(arr);
    s->syscalls = brig_calloc(s->n_syscalls, sizeof(*s->syscalls));
    for (size_t i = 0; i < s->n_syscalls; i++) {
        char pi[SP_PATH_MAX];
        sp_idx(pi, q, i);
        TRY(spec_parse_rule(json_array_at(arr, i), pi, &s->syscalls[i], err));
    }
    return 0;
}

void spec_free_seccomp(struct brig_seccomp *s)
{
    brig_strv_free(s->architectures);
    brig_strv_free(s->flags);
    free(s->listener_path);
    free(s->listener_metadata);
    for (size_t i = 0; i < s->n_syscalls; i++) {
        free(s->syscalls[i].names);   /* packed: json_as_strv_packed */
        free(s->syscalls[i].args);
    }
    free(s->syscalls);
}
