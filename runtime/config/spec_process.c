/* config.md "Process" and "Linux Process": the container's init process. */
#include "spec_internal.h"

#include <inttypes.h>
#include <limits.h>
#include <linux/ioprio.h>
#include <linux/sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../linux/caps.h"
#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/strutil.h"

static const struct sp_name rlimit_names[] = {
    { "RLIMIT_AS", RLIMIT_AS },
    { "RLIMIT_CORE", RLIMIT_CORE },
    { "RLIMIT_CPU", RLIMIT_CPU },
    { "RLIMIT_DATA", RLIMIT_DATA },
    { "RLIMIT_FSIZE", RLIMIT_FSIZE },
    { "RLIMIT_LOCKS", RLIMIT_LOCKS },
    { "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
    { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
    { "RLIMIT_NICE", RLIMIT_NICE },
    { "RLIMIT_NOFILE", RLIMIT_NOFILE },
    { "RLIMIT_NPROC", RLIMIT_NPROC },
    { "RLIMIT_RSS", RLIMIT_RSS },
    { "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
    { "RLIMIT_RTTIME", RLIMIT_RTTIME },
    { "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
    { "RLIMIT_STACK", RLIMIT_STACK },
    { NULL, 0 },
};

int spec_rlimit_resource(const char *name)
{
    long res;
    return sp_lookup(rlimit_names, name, &res) < 0 ? -1 : (int)res;
}

static const struct sp_name sched_policies[] = {
    { "SCHED_OTHER", SCHED_NORMAL },
    { "SCHED_FIFO", SCHED_FIFO },
    { "SCHED_RR", SCHED_RR },
    { "SCHED_BATCH", SCHED_BATCH },
    { "SCHED_ISO", 4 },     /* reserved by Linux, never merged: the kernel refuses it */
    { "SCHED_IDLE", SCHED_IDLE },
    { "SCHED_DEADLINE", SCHED_DEADLINE },
    { NULL, 0 },
};

static const struct sp_name sched_flags[] = {
    { "SCHED_FLAG_RESET_ON_FORK", SCHED_FLAG_RESET_ON_FORK },
    { "SCHED_FLAG_RECLAIM", SCHED_FLAG_RECLAIM },
    { "SCHED_FLAG_DL_OVERRUN", SCHED_FLAG_DL_OVERRUN },
    { "SCHED_FLAG_KEEP_POLICY", SCHED_FLAG_KEEP_POLICY },
    { "SCHED_FLAG_KEEP_PARAMS", SCHED_FLAG_KEEP_PARAMS },
    { "SCHED_FLAG_UTIL_CLAMP_MIN", SCHED_FLAG_UTIL_CLAMP_MIN },
    { "SCHED_FLAG_UTIL_CLAMP_MAX", SCHED_FLAG_UTIL_CLAMP_MAX },
    { NULL, 0 },
};

static const struct sp_name ioprio_classes[] = {
    { "IOPRIO_CLASS_RT", IOPRIO_CLASS_RT },
    { "IOPRIO_CLASS_BE", IOPRIO_CLASS_BE },
    { "IOPRIO_CLASS_IDLE", IOPRIO_CLASS_IDLE },
    { NULL, 0 },
};

static const char *const cap_set_names[BRIG_CAP_SET_COUNT] = {
    [BRIG_CAP_BOUNDING] = "bounding",       [BRIG_CAP_EFFECTIVE] = "effective",
    [BRIG_CAP_INHERITABLE] = "inheritable", [BRIG_CAP_PERMITTED] = "permitted",
    [BRIG_CAP_AMBIENT] = "ambient",
};

/* config.md "POSIX-platform User". uid and gid are REQUIRED by the text but
 * not by the schema; an absent one means 0 as with runc and crun. */
static int spec_parse_user(brig_json proc, struct brig_user *u, struct brig_error **err)
{
    char p[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(proc, "process", "user", false, &v, p, err);
    if (r != 0) return r < 0 ? -1 : 0;
    TRY(json_get_u32(v, p, "uid", false, &u->uid, err));
    TRY(json_get_u32(v, p, "gid", false, &u->gid, err));
    r = json_get_u32(v, p, "umask", false, &u->umask, err);
    if (r < 0) return -1;
    u->has_umask = r == 0;
    /* umask(2) silently keeps only 0777: a larger value is a mistake. */
    if (u->has_umask && u->umask > 0777)
        return brig_failx(err, "%s.umask: must be at most 511 (0777), got %" PRIu32, p,
                          u->umask);
    TRY(json_get_string(v, p, "username", false, &u->username, err));

    brig_json arr;
    char q[SP_PATH_MAX];
    r = sp_get_array(v, p, "additionalGids", false, &arr, q, err);
    if (r != 0) return r < 0 ? -1 : 0;
    u->n_additional_gids = json_array_len(arr);
    u->additional_gids = brig_calloc(u->n_additional_gids, sizeof(uint32_t));
    for (size_t i = 0; i < u->n_additional_gids; i++) {
        char pi[SP_PATH_MAX];
        sp_idx(pi, q, i);
        TRY(json_as_u32(json_array_at(arr, i), pi, &u->additional_gids[i], err));
    }
    return 0;
}

static int spec_parse_console(brig_json proc, struct brig_process *p, struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(proc, "process", "consoleSize", false, &v, q, err);
    if (r != 0) return r < 0 ? -1 : 0;
    TRY(json_get_u32(v, q, "height", true, &p->console_height, err));
    TRY(json_get_u32(v, q, "width", true, &p->console_width, err));
    /* struct winsize holds unsigned shorts. */
    if (p->console_height > USHRT_MAX || p->console_width > USHRT_MAX)
        return brig_failx(err, "%s: height and width must be at most %u", q, USHRT_MAX);
    p->has_console_size = true;
    return 0;
}

/* Capability names the kernel or libcap here does not know are dropped with
 * a warning (config.md asks for a warning, not a failure): they could only
 * have granted more. */
static int spec_parse_caps(brig_json proc, struct brig_process *p, struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(proc, "process", "capabilities", false, &v, q, err);
    if (r != 0) return r < 0 ? -1 : 0;
    p->has_caps = true;
    for (int set = 0; set < BRIG_CAP_SET_COUNT; set++) {
        autostrv char **names = NULL;
        size_t n = 0;
        r = sp_get_strv(v, q, cap_set_names[set], &names, &n, err);
        if (r < 0) return -1;
        if (r > 0) continue;
        p->caps.present[set] = true;
        for (size_t i = 0; i < n; i++) {
            int c = caps_from_name(names[i]);
            if (c < 0 || c >= 64) {
                brig_warn("%s.%s[%zu]: capability \"%s\" is unknown here, dropped", q,
                          cap_set_names[set], i, names[i]);
                continue;
            }
            p->caps.sets[set] |= UINT64_C(1) << c;
        }
    }
    return 0;
}

/* config.md: "If rlimits contains duplicated entries with same type, the
 * runtime MUST generate an error", and an unknown type cannot be mapped to
 * a kernel interface, which is an error too. */
static int spec_parse_rlimits(brig_json proc, struct brig_process *p, struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json arr;
    int r = sp_get_array(proc, "process", "rlimits", false, &arr, q, err);
    if (r != 0) return r < 0 ? -1 : 0;
    p->n_rlimits = json_array_len(arr);
    p->rlimits = brig_calloc(p->n_rlimits, sizeof(*p->rlimits));
    for (size_t i = 0; i < p->n_rlimits; i++) {
        char pi[SP_PATH_MAX];
        sp_idx(pi, q, i);
        brig_json e = json_array_at(arr, i);
        struct brig_rlimit *rl = &p->rlimits[i];
        TRY(json_as_object(e, pi, err));
        TRY(json_get_string(e, pi, "type", true, &rl->name, err));
        long res;
        if (sp_lookup(rlimit_names, rl->name, &res) < 0)
            return brig_failx(err, "%s.type: unknown rlimit \"%.100s\"", pi, rl->name);
        rl->resource = (int)res;
        for (size_t j = 0; j < i; j++)
            if (p->rlimits[j].resource == rl->resource)
                return brig_failx(err, "%s.type: duplicate rlimit %s (also in %s[%zu])", pi,
                                  rl->name, q, j);
        TRY(json_get_u64(e, pi, "soft", true, &rl->soft, err));
        TRY(json_get_u64(e, pi, "hard", true, &rl->hard, err));
        /* setrlimit(2) would fail with EINVAL much later, inside the child. */
        if (rl->soft > rl->hard)
            return brig_failx(err, "%s: soft limit %" PRIu64 " exceeds hard limit %" PRIu64, pi,
                              rl->soft, rl->hard);
    }
    return 0;
}

static int spec_parse_ioprio(brig_json proc, struct brig_process *p, struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(proc, "process", "ioPriority", false, &v, q, err);
    if (r != 0) return r < 0 ? -1 : 0;
    autofree char *klass = NULL;
    TRY(json_get_string(v, q, "class", true, &klass, err));
    long k;
    if (sp_lookup(ioprio_classes, klass, &k) < 0)
        return brig_failx(err, "%s.class: unknown I/O priority class \"%.100s\"", q, klass);
    int32_t prio = 0;
    TRY(json_get_i32(v, q, "priority", false, &prio, err));
    if (prio < 0 || prio > 7)
        return brig_failx(err, "%s.priority: must be between 0 and 7, got %" PRId32, q, prio);
    p->has_io_priority = true;
    p->io_priority.klass = (int)k;
    p->io_priority.priority = prio;
    return 0;
}

static int spec_parse_scheduler(brig_json proc, struct brig_process *p, struct brig_error **err)
{
    char q[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(proc, "process", "scheduler", false, &v, q, err);
    if (r != 0) return r < 0 ? -1 : 0;
    struct brig_scheduler *s = &p->scheduler;
    autofree char *policy = NULL;
    TRY(json_get_string(v, q, "policy", true, &policy, err));
    long pol;
    if (sp_lookup(sched_policies, policy, &pol) < 0)
        return brig_failx(err, "%s.policy: unknown scheduler policy \"%.100s\"", q, policy);
    s->policy = (int)pol;
    TRY(json_get_i32(v, q, "nice", false, &s->nice, err));
    TRY(json_get_i32(v, q, "priority", false, &s->priority, err));
    TRY(json_get_u64(v, q, "runtime", false, &s->runtime, err));
    TRY(json_get_u64(v, q, "deadline", false, &s->deadline, err));
    TRY(json_get_u64(v, q, "period", false, &s->period, err));

    autostrv char **flags = NULL;
    size_t n = 0;
    TRY(sp_get_strv(v, q, "flags", &flags, &n, err));
    for (size_t i = 0; i < n; i++) {
        long f;
        if (sp_lookup(sched_flags, flags[i], &f) < 0)
            return brig_failx(err, "%s.flags[%zu]: unknown scheduler flag \"%.100s\"", q, i,
                              flags[i]);
        s->flags |= (uint64_t)f;
    }
    p->has_scheduler = true;
    return 0;
}

/* execCPUAffinity values are CPU lists ("0-3,7"): the schema's pattern. */
static int spec_check_cpu_list(const char *s, const char *path, struct brig_error **err)
{
    if (s == NULL) return 0;
    if (s[strspn(s, "0123456789, -")] != '\0')
        return brig_failx(err, "%s: invalid CPU list \"%.100s\"", path, s);
    return 0;
}

static int spec_parse_affinity(brig_json proc, struct brig_process *p, struct brig_error **err)
{
    char q[SP_PATH_MAX], pi[SP_PATH_MAX];
    brig_json v;
    int r = sp_get_object(proc, "process", "execCPUAffinity", false, &v, q, err);
    if (r != 0) return r < 0 ? -1 : 0;
    TRY(json_get_string(v, q, "initial", false, &p->exec_cpu_affinity_initial, err));
    TRY(json_get_string(v, q, "final", false, &p->exec_cpu_affinity_final, err));
    sp_key(pi, q, "initial");
    TRY(spec_check_cpu_list(p->exec_cpu_affinity_initial, pi, err));
    sp_key(pi, q, "final");
    TRY(spec_check_cpu_list(p->exec_cpu_affinity_final, pi, err));
    return 0;
}

int spec_parse_process(brig_json v, struct brig_process *p, struct brig_error **err)
{
    const char *path = "process";
    TRY(json_get_bool(v, path, "terminal", false, &p->terminal, err));
    TRY(spec_parse_console(v, p, err));
    TRY(spec_parse_user(v, &p->user, err));

    /* config.md: at least one entry is REQUIRED (non-Windows). */
    int r = sp_get_strv(v, path, "args", &p->args, &p->n_args, err);
    if (r < 0) return -1;
    if (p->n_args == 0) return brig_failx(err, "process.args: required, with at least one entry");
    if (p->args[0][0] == '\0') return brig_failx(err, "process.args[0]: must not be empty");
    TRY(sp_get_strv(v, path, "env", &p->env, &p->n_env, err));
    TRY(json_get_string(v, path, "cwd", true, &p->cwd, err));
    if (p->cwd[0] != '/')
        return brig_failx(err, "process.cwd: must be an absolute path, got \"%.200s\"", p->cwd);

    TRY(spec_parse_caps(v, p, err));
    TRY(spec_parse_rlimits(v, p, err));
    TRY(json_get_bool(v, path, "noNewPrivileges", false, &p->no_new_privileges, err));

    int32_t oom;
    r = json_get_i32(v, path, "oomScoreAdj", false, &oom, err);
    if (r < 0) return -1;
    if (r == 0) {
        /* The kernel's range for /proc/<pid>/oom_score_adj. */
        if (oom < -1000 || oom > 1000)
            return brig_failx(err, "process.oomScoreAdj: must be between -1000 and 1000, got %"
                              PRId32, oom);
        p->has_oom_score_adj = true;
        p->oom_score_adj = oom;
    }
    TRY(json_get_string(v, path, "apparmorProfile", false, &p->apparmor_profile, err));
    TRY(json_get_string(v, path, "selinuxLabel", false, &p->selinux_label, err));
    TRY(spec_parse_ioprio(v, p, err));
    TRY(spec_parse_scheduler(v, p, err));
    TRY(spec_parse_affinity(v, p, err));
    return 0;
}

void spec_free_process(struct brig_process *p)
{
    free(p->user.additional_gids);
    free(p->user.username);
    brig_strv_free(p->args);
    brig_strv_free(p->env);
    free(p->cwd);
    for (size_t i = 0; i < p->n_rlimits; i++) free(p->rlimits[i].name);
    free(p->rlimits);
    free(p->apparmor_profile);
    free(p->selinux_label);
    free(p->exec_cpu_affinity_initial);
    free(p->exec_cpu_affinity_final);
}
