/* What `brig exec` runs: runc's getProcess (exec.go). The command line
 * overrides the saved config's process; --process replaces it. */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../config/spec_exec.h"
#include "../linux/caps.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/strutil.h"

#define EXEC_PROCESS_MAX (16u << 20)

static int exec_parse_id(const char *s, const char *what, uint32_t *out, struct brig_error **err)
{
    uint64_t v;
    if (brig_parse_u64(s, &v) < 0 || v > UINT32_MAX - 1)
        return brig_failx(err, "%s: \"%s\" is not a numeric id", what, s);
    *out = (uint32_t)v;
    return 0;
}

/* --env K=V replaces an existing K (the last one wins, as runc's prepareEnv). */
static void exec_env_set(struct brig_process *p, const char *kv)
{
    size_t klen = strcspn(kv, "=");
    for (size_t i = 0; i < p->n_env; i++) {
        if (strncmp(p->env[i], kv, klen) == 0 && (p->env[i][klen] == '=' || p->env[i][klen] == '\0')) {
            free(p->env[i]);
            p->env[i] = brig_strdup(kv);
            return;
        }
    }
    char **env = realloc(p->env, (p->n_env + 2) * sizeof(char *));
    if (env == NULL) abort();
    env[p->n_env++] = brig_strdup(kv);
    env[p->n_env] = NULL;
    p->env = env;
}

static int exec_apply_user(struct brig_process *p, const struct brig_exec_opts *o,
                           struct brig_error **err)
{
    if (o->user != NULL) {
        autofree char *u = brig_strdup(o->user);
        char *colon = strchr(u, ':');
        if (colon != NULL) {
            *colon = '\0';
            TRY(exec_parse_id(colon + 1, "--user (gid)", &p->user.gid, err));
        }
        TRY(exec_parse_id(u, "--user (uid)", &p->user.uid, err));
    }
    size_t n = brig_strv_len(o->additional_gids);
    if (n == 0) return 0;
    uint32_t *g = realloc(p->user.additional_gids, (p->user.n_additional_gids + n) * sizeof(uint32_t));
    if (g == NULL) abort();
    p->user.additional_gids = g;
    for (size_t i = 0; i < n; i++)
        TRY(exec_parse_id(o->additional_gids[i], "--additional-gids",
                          &g[p->user.n_additional_gids++], err));
    return 0;
}

/* runc: --cap joins bounding, effective and permitted, and ambient only
 * when the process has an inheritable set (ambient needs it). */
static int exec_apply_caps(struct brig_process *p, char **caps, struct brig_error **err)
{
    for (size_t i = 0; caps != NULL && caps[i] != NULL; i++) {
        int c = caps_from_name(caps[i]);
        if (c < 0 || c >= 64) return brig_failx(err, "--cap %s: unknown capability", caps[i]);
        uint64_t bit = UINT64_C(1) << c;
        p->has_caps = true;
        static const enum brig_cap_set sets[] = { BRIG_CAP_BOUNDING, BRIG_CAP_EFFECTIVE,
                                                  BRIG_CAP_PERMITTED };
        for (size_t j = 0; j < BRIG_ARRAY_SIZE(sets); j++) {
            p->caps.present[sets[j]] = true;
            p->caps.sets[sets[j]] |= bit;
        }
        if (p->caps.present[BRIG_CAP_INHERITABLE]) {
            p->caps.present[BRIG_CAP_AMBIENT] = true;
            p->caps.sets[BRIG_CAP_AMBIENT] |= bit;
        }
    }
    return 0;
}

static int exec_load_process_file(struct brig_spec *s, const char *path, struct brig_error **err)
{
    autofree char *text = NULL;
    size_t len = 0;
    /* The caller's file, read as config.json is (util/fs.h). */
    if (brig_read_regular_at(AT_FDCWD, path, EXEC_PROCESS_MAX, &text, &len, err) < 0)
        return brig_wrap(err, "--process");
    struct brig_process p;
    if (spec_parse_process_json(text, len, &p, err) < 0) return brig_wrap(err, "--process %s", path);
    spec_process_clear(&s->process);
    s->process = p;
    s->has_process = true;
    return 0;
}

int exec_build_process(struct brig_spec *s, const struct brig_exec_opts *o, struct brig_error **err)
{
    bool config_nnp = s->has_process && s->process.no_new_privileges;
    size_t nargs = brig_strv_len(o->args);
    if (o->process_file != NULL) {
        if (nargs > 0) return brig_failx(err, "exec: a command and --process cannot be used together");
        TRY(exec_load_process_file(s, o->process_file, err));
        if (o->tty) s->process.terminal = true;
    } else {
        if (nargs == 0) return brig_failx(err, "exec: a command is required (ARGS or --process FILE)");
        if (!s->has_process) return brig_failx(err, "exec: the container's config has no process");
        struct brig_process *p = &s->process;
        brig_strv_free(p->args);
        p->args = brig_strv_dup(o->args);
        p->n_args = nargs;
        /* runc: an exec'd process has a terminal only when asked for one. */
        p->terminal = o->tty;
        p->has_console_size = false;
    }
    struct brig_process *p = &s->process;
    if (o->cwd != NULL) {
        if (o->cwd[0] != '/') return brig_failx(err, "--cwd %s: must be an absolute path", o->cwd);
        free(p->cwd);
        p->cwd = brig_strdup(o->cwd);
    }
    for (size_t i = 0; o->env != NULL && o->env[i] != NULL; i++) {
        if (strchr(o->env[i], '=') == NULL || o->env[i][0] == '=')
            return brig_failx(err, "--env %s: expected NAME=VALUE", o->env[i]);
        exec_env_set(p, o->env[i]);
    }
    TRY(exec_apply_user(p, o, err));
    TRY(exec_apply_caps(p, o->caps, err));
    p->no_new_privileges = p->no_new_privileges || o->no_new_privs || config_nnp;
    brig_debug("exec: %s (uid %u, cwd %s, terminal %d, no_new_privs %d)", p->args[0],
               p->user.uid, p->cwd, p->terminal, p->no_new_privileges);
    return 0;
}
