/* Long-lived sandboxes (docs/sandbox.md): `sandbox create` starts a
 * container whose PID 1 is brig-init --idle, under the policy's limits;
 * `sandbox exec` runs each command in it through brig's exec (every
 * namespace, seccomp, caps and identity of the container) but in a child
 * cgroup of its own, x-<12 hex>, so that a timeout kills that command and
 * all it started (setsid, double fork) and nothing else; `sandbox rm`
 * kills the init (the kernel then kills the whole pid namespace), removes
 * every exec's cgroup, then deletes the container as `delete --force`.
 *
 * The container id is the sandbox's NAME, in the same state root and
 * cgroup parent as one-shot sandboxes (whose ids, sb-..., a NAME may not
 * take). The policy is read once, by create, and its text recorded in the
 * config's annotations (the sandbox's root-owned state): every exec is
 * judged and bounded by that snapshot, never by the file as it is later. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "sandbox.h"
#include "../policy/policy.h"
#include "../runtime/config/json.h"
#include "../runtime/lifecycle/container.h"
#include "../runtime/lifecycle/exec.h"
#include "../runtime/lifecycle/state.h"
#include "../runtime/linux/cgroup/cgroup.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

#define SESSION_EXEC_PREFIX "x-"

int sandbox_name_check(const char *name, struct brig_error **err)
{
    size_t n = name ? strlen(name) : 0;
    bool ok = n > 0 && n <= 63 && ((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') ||
                                   (name[0] >= '0' && name[0] <= '9'));
    for (size_t i = 1; ok && i < n; i++)
        ok = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", name[i]) != NULL;
    /* Never echoed whole: it may be a path the caller should not probe with. */
    if (!ok)
        return brig_failx(err, "sandbox NAME: expected 1-63 of [A-Za-z0-9_.-], starting with a letter or digit "
                          "(no '/', no \"..\")");
    if (brig_str_has_prefix(name, "sb-"))
        return brig_failx(err, "sandbox NAME %s: \"sb-\" names are one-shot sandboxes' ids", name);
    return 0;
}

static const char *session_root(const char *state_root)
{
    return state_root ? state_root : SANDBOX_STATE_ROOT;
}

/* A file policy is recorded by its absolute path: exec runs elsewhere. */
static int session_policy_ref(const char *flag, char **out, struct brig_error **err)
{
    const char *f = flag ? flag : "agent";
    if (strchr(f, '/') == NULL) {
        *out = brig_strdup(f);
        return 0;
    }
    char real[PATH_MAX];
    if (brig_realpath(f, real) == NULL) return brig_fail(err, errno, "--policy %s", f);
    *out = brig_strdup(real);
    return 0;
}

static int session_start(const struct sandbox_opts *o, const char *ref, const char *text, const char *config,
                         struct sandbox_slot *slot, struct brig_error **err);

int sandbox_create(const struct sandbox_opts *o, struct brig_error **err)
{
    TRY(sandbox_name_check(o->session, err));
    autofree char *ref = NULL;
    TRY(session_policy_ref(o->policy, &ref, err));
    autofree char *text = NULL;
    size_t len = 0;
    autopolicy struct brig_policy *p = NULL;
    if (policy_read(ref, &text, &len, err) < 0 || policy_parse(text, len, &p, err) < 0)
        return brig_wrap(err, "--policy %s", ref);
    if (strlen(text) != len) return brig_failx(err, "--policy %s: a NUL byte in the file", ref);
    struct sandbox_opts co = *o;
    co.policy = ref;
    co.policy_text = text;
    autofree char *init = NULL;
    autofree char *config = NULL;
    TRY(sandbox_find_init(&init, err));
    /* Its host ids: taken while its init lives (recorded at its clone),
     * after this brig is gone (sandbox_ids.c). */
    struct sandbox_slot slot = { .fd = -1 };
    if (!o->rootless) TRY(sandbox_slot_claim(&slot, err));      /* rootless: the caller's ids */
    int rc = sandbox_config(p, &co, o->session, init, slot.base, &config, err);
    if (rc == 0) rc = session_start(o, ref, text, config, &slot, err);
    sandbox_slot_release(&slot, rc < 0);
    return rc;
}

/* The init, started detached under the sandbox's own host ids. */
static int session_start(const struct sandbox_opts *o, const char *ref, const char *text, const char *config,
                         struct sandbox_slot *slot, struct brig_error **err)
{
    if (!o->rootless) {
        TRY(sandbox_root_record(o->state_root, err));
        TRY(sandbox_cgroup_parent(err));
    }
    /* The init outlives this brig: it must hold none of the caller's
     * stdio (a `$(brig sandbox create ...)` would wait for its EOF). */
    struct sandbox_io io;
    if (sandbox_io_open(&io, NULL, err) < 0) {
        sandbox_io_close(&io);
        return -1;
    }
    brig_closep(&io.out[1]);
    brig_closep(&io.err[1]);
    io.out[1] = open("/dev/null", O_WRONLY | O_CLOEXEC);
    io.err[1] = open("/dev/null", O_WRONLY | O_CLOEXEC);
    const struct brig_globals g = { .root = session_root(o->state_root), .policy = ref, .policy_text = text,
                                    .rootless = o->rootless };
    const struct brig_userns_own own = { .base = slot->base, .size = SANDBOX_IDS_SLOT, .born = sandbox_slot_born,
                                         .arg = slot };
    const struct brig_create_opts cr = { .id = o->session, .bundle = "/", .config_text = config, .detach = true,
                                         .userns = o->rootless ? NULL : &own, .cgroup_fresh = true };
    int status = 0;
    int rc = io.out[1] < 0 || io.err[1] < 0 ? brig_fail(err, errno, "open /dev/null") : sandbox_io_swap(&io, err);
    if (rc == 0) rc = container_run(&g, &cr, &status, err);
    if (io.saved[0] >= 0) sandbox_io_restore(&io);
    sandbox_io_close(&io);
    if (rc < 0) return brig_wrap(err, "sandbox %s", o->session);
    return 0;
}

/* The sandbox's state, read without the lock (exec and rm lock it through
 * the lifecycle calls they make), its recorded policy and (if text is not
 * NULL) that policy's snapshot. *dirfd: its state dir, opened unlocked
 * (the caller's to close). */
static int session_open(const char *root, const char *name, int *dirfd, struct brig_state **st,
                        const char **policy, const char **text, struct brig_error **err)
{
    TRY(sandbox_name_check(name, err));
    if (state_dir_open_unlocked(root, name, dirfd, NULL) < 0)
        return brig_failx(err, "sandbox %s: no such sandbox (in %s)", name, root);
    if (state_read(*dirfd, st, err) < 0) return brig_wrap(err, "sandbox %s", name);
    const char *snapshot = NULL;
    for (size_t i = 0; i < (*st)->n_annotations; i++) {
        if (strcmp((*st)->annotations[i].key, SANDBOX_POLICY_ANNOTATION) == 0) *policy = (*st)->annotations[i].value;
        if (strcmp((*st)->annotations[i].key, SANDBOX_POLICY_TEXT_ANNOTATION) == 0)
            snapshot = (*st)->annotations[i].value;
    }
    if (*policy == NULL) return brig_failx(err, "sandbox %s: not a long-lived sandbox (made by brig sandbox create)", name);
    if (text == NULL) return 0;
    /* Made by a brig that read the file again at every exec: its policy
     * cannot be known any more. */
    if (snapshot == NULL)
        return brig_failx(err, "sandbox %s: no policy snapshot (%s) in its state: made by an older brig; "
                          "brig sandbox rm %s, then create it again", name, SANDBOX_POLICY_TEXT_ANNOTATION, name);
    *text = snapshot;
    return 0;
}

static bool session_running(int dirfd, const struct brig_state *st)
{
    return state_status(dirfd, st) == BRIG_STATUS_RUNNING;
}

/* No cgroup (rootless without a delegated one): the command's process
 * group, which brig's child made its own (a session) before its execve.
 * What left it (setsid, setpgid) is only killed with the sandbox. */
static void session_kill_group(void *arg)
{
    pid_t pid = *(pid_t *)arg;
    if (pid > 0) kill(-pid, SIGKILL);
}

static void session_kill_exec(void *arg)
{
    /* A command that left nothing behind (the usual end) needs no freeze
     * and no kill; anything left, however detached, is killed as always. */
    if (cgroup_empty(arg)) return;
    autoerr struct brig_error *e = NULL;
    if (cgroup_kill(arg, SIGKILL, &e) < 0) brig_debug("sandbox exec: kill: %s", e->msg);
}

/* The command, started in the child cgroup, drained and waited for. */
static int session_exec_run(const struct sandbox_opts *o, const char *policy, const char *text,
                            const struct sandbox_limits *lim, const struct brig_exec_trampoline *via,
                            struct brig_exec_parsed *parsed, struct brig_cgroup *child, struct sandbox_result *r,
                            struct brig_error **err)
{
    struct sandbox_io io;
    int rc = sandbox_io_open(&io, o->stdin_path, err);
    const struct brig_globals g = { .root = session_root(o->state_root), .policy = policy, .policy_text = text,
                                    .rootless = o->rootless };
    pid_t pid = -1;
    /* The limits hold from the start: a process of the sandbox may stop
     * brig's child before its execve (t-sandbox-exec-stop). */
    bool idle_first = lim->idle_ms > 0 && (lim->wall_ms == 0 || lim->idle_ms < lim->wall_ms);
    struct brig_exec_opts eo = { .id = o->session, .args = o->argv, .env = o->env, .cwd = o->cwd,
                                 .detach = true, .cgroup = child, .pid_out = &pid, .trampoline = via,
                                 .parsed = parsed,
                                 .start_timeout_ms = idle_first ? lim->idle_ms : lim->wall_ms };
    if (rc == 0) {
        rc = sandbox_io_swap(&io, err);
        eo.stderr_fd = io.saved[2] > 0 ? io.saved[2] : 0;
        int status;
        if (rc == 0) rc = container_exec(&g, &eo, &status, err);
        sandbox_io_restore(&io);
        if (rc < 0 && (*err)->errnum == ETIMEDOUT) {
            /* killed by container_exec before it ran: the limit fired */
            brig_debug("sandbox exec: %s", (*err)->msg);
            brig_error_freep(err);
            *(idle_first ? &r->idle_timed_out : &r->timed_out) = true;
            sandbox_io_close(&io);
            return 0;
        }
    }
    if (rc == 0) {
        const struct sandbox_kill k = child != NULL
                                          ? (struct sandbox_kill){ .fn = session_kill_exec, .arg = child, .at_exit = true }
                                          : (struct sandbox_kill){ .fn = session_kill_group, .arg = &pid, .at_exit = true };
        void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
        const struct sandbox_live live = { .echo = o->stream, .events = o->events, .init_reports = via != NULL };
        rc = sandbox_io_wait(&io, pid, &k, lim, &live, sandbox_now_ms(), r, err);
        signal(SIGPIPE, old_pipe);
        sandbox_stats(child, r);
    }
    sandbox_io_close(&io);
    return rc;
}

/* Execs whose brig was killed (SIGKILL, OOM): their commands would run on
 * unbounded. Each exec's brig holds a lock on its cgroup from before its
 * command joins it; a child with processes and no holder is an orphan, and
 * is killed and removed by the next exec (or ls, or gc). An empty unlocked
 * one is a child being made right now, or one whose brig died before its
 * command joined or after it ended: execs make and lock their child under
 * the parent's lock, shared, so with the parent's lock held exclusive
 * (no exec between its mkdir and its lock) an empty unlocked child is
 * dead, and removed too. */
static void session_reap_orphans(const struct brig_cgroup *parent)
{
    char **names = NULL;
    size_t n = 0;
    /* Only a child that can be locked is judged below. */
    cgroup_child_list_lockable(parent, SESSION_EXEC_PREFIX, &names, &n, NULL);
    autoclose int plock = n > 0 ? cgroup_lock(parent, LOCK_EX | LOCK_NB) : -1;
    for (size_t i = 0; i < n; i++) {
        struct brig_cgroup *child = NULL;
        if (cgroup_child_open(parent, names[i], &child, NULL) < 0) continue;
        autoclose int lock = cgroup_child_lock(child, false);
        autofree pid_t *pids = NULL;
        size_t n_pids = 0;
        if (lock >= 0 && cgroup_pids(child, &pids, &n_pids, NULL) == 0 && (n_pids > 0 || plock >= 0)) {
            autoerr struct brig_error *e = NULL;
            if (cgroup_destroy(child, &e) < 0) brig_warn("sandbox: orphaned exec %s: %s", names[i], e->msg);
            else brig_debug("sandbox: killed orphaned exec %s", names[i]);
        }
        cgroup_free(child);
    }
    brig_strv_free(names);
}

static int exec_body(const struct sandbox_opts *o, struct sandbox_result *r)
{
    autoerr struct brig_error *err = NULL;
    sandbox_new_id(SESSION_EXEC_PREFIX, r->id, sizeof(r->id));
    autostate struct brig_state *st = NULL;
    const char *ref = NULL, *text = NULL;
    autopolicy struct brig_policy *p = NULL;
    struct sandbox_limits lim;
    const char *root = session_root(o->state_root);
    autoclose int dirfd = -1;
    if (session_open(root, o->session, &dirfd, &st, &ref, &text, &err) < 0) return sandbox_fail(r, err);
    r->sandbox = brig_strdup(o->session);
    if (!session_running(dirfd, st)) {
        brig_failx(&err, "sandbox %s: its init is not running (killed, or the host rebooted): "
                   "brig sandbox rm %s", o->session, o->session);
        return sandbox_fail(r, err);
    }
    /* Before anything is made (or parsed): a sealed re-exec starts this all over. */
    struct brig_exec_trampoline via;
    __attribute__((cleanup(sandbox_exec_parsed_clear))) struct brig_exec_parsed parsed = { 0 };
    bool unsealed;
    if (sandbox_seal_exec_decide(dirfd, st, &via, &parsed, &unsealed, &err) < 0)
        return sandbox_fail(r, err);
    if (policy_resolve_text(ref, text, &p, &err) < 0) {
        brig_wrap(&err, "sandbox %s: its policy", o->session);
        return sandbox_fail(r, err);
    }
    r->policy = brig_strdup(p->name);
    if (sandbox_limits(p, o, &lim, &err) < 0 || sandbox_env_check(p, o->env, &err) < 0) return sandbox_fail(r, err);
    if (o->cwd != NULL && o->cwd[0] != '/') {
        brig_failx(&err, "--cwd %s: expected an absolute path", o->cwd);
        return sandbox_fail(r, err);
    }
    if (o->argv == NULL || o->argv[0] == NULL) {
        brig_failx(&err, "no command: brig sandbox exec NAME [flags] -- CMD...");
        return sandbox_fail(r, err);
    }
    sandbox_stream_init(&r->out, lim.output_max);
    sandbox_stream_init(&r->err, lim.output_max);
    struct brig_cgroup *parent = NULL, *child = NULL;
    /* Made by a rootless brig without a cgroup: none for the exec either. */
    bool no_cgroup = st->cgroup == NULL && o->rootless;
    if (no_cgroup)
        r->limits_skipped = brig_strdup("the sandbox has no cgroup (made by a rootless brig without a delegated "
                                        "cgroup v2 subtree)");
    int rc = no_cgroup ? 0 : st->cgroup ? cgroup_load(st->cgroup, &parent, &err) : brig_failx(&err, "no cgroup recorded");
    if (rc == 0 && parent != NULL) session_reap_orphans(parent);
    /* The parent's lock, shared, from before the child is made until it is
     * locked: a reaper removes empty children only under it exclusive. */
    autoclose int plock = -1;
    if (rc == 0 && parent != NULL && (plock = cgroup_lock(parent, LOCK_SH)) < 0)
        rc = brig_fail(&err, errno, "the sandbox's cgroup is gone (removed, or its init died)");
    if (rc == 0 && parent != NULL && cgroup_child_create(parent, r->id, true, &child, &err) < 0)
        rc = brig_wrap(&err, "the sandbox's cgroup is gone (removed, or its init died)");
    /* Held until the child is removed: who runs it is alive. */
    autoclose int lock = -1;
    if (rc == 0 && child != NULL && (lock = cgroup_child_lock(child, true)) < 0)
        rc = brig_fail(&err, errno, "lock the exec's cgroup");
    brig_closep(&plock);
    if (rc == 0) rc = session_exec_run(o, ref, text, &lim, unsealed ? &via : NULL, &parsed, child, r, &err);
    /* A staged workspace: what this exec wrote goes back into the workspace
     * now (the session's stage stays until rm). */
    r->workspace_full = policy_watch_fired(dirfd);     /* the watch killed the sandbox */
    if (rc == 0) {
        r->workspace_full = r->workspace_full || policy_stage_full(dirfd);
        if (policy_stage_commit(dirfd, false, &err) < 0) rc = -1;
    }
    if (child != NULL) {
        struct brig_error *derr = NULL;
        if (cgroup_destroy(child, &derr) < 0) {
            if (rc == 0) {
                rc = -1;
                err = derr;
            } else {
                brig_error_free(derr);
            }
        }
        cgroup_free(child);
    }
    if (parent != NULL) cgroup_free(parent);
    if (rc < 0) sandbox_fail(r, (brig_wrap(&err, "sandbox %s", o->session), err));
    autofree char *audit_id = brig_asprintf("%s/%s", o->session, r->id);
    sandbox_audit(p, "sandbox-exec", audit_id, o->argv && o->argv[0] ? o->argv[0] : NULL, r);
    return 0;
}

int sandbox_session_gc(const char *root, const char *name)
{
    if (sandbox_name_check(name, NULL) < 0) return 0;
    autoclose int dirfd = -1;
    if (state_dir_open_unlocked(root, name, &dirfd, NULL) < 0) return 0;
    autostate struct brig_state *st = NULL;
    autofree char *broken = NULL;
    autoerr struct brig_error *e = NULL;
    bool session = false, dead;
    if (state_read_tolerant(dirfd, name, &st, &broken, &e) < 0) {
        /* no state.json: dead if no create holds the directory */
        dead = e->errnum == ENOENT && flock(dirfd, LOCK_EX | LOCK_NB) == 0;
    } else if (broken != NULL) {
        /* Its annotations cannot be read, so neither can it be told from a
         * container of another kind: left to `sandbox rm --force` or
         * `delete --force`. */
        dead = false;
    } else {
        for (size_t i = 0; i < st->n_annotations; i++)
            session |= strcmp(st->annotations[i].key, SANDBOX_POLICY_ANNOTATION) == 0;
        enum brig_status s = state_status(dirfd, st);
        /* Only what `sandbox create` made: creating and unlocked, the
         * create that held it died. */
        dead = session && (s == BRIG_STATUS_STOPPED ||
                           (s == BRIG_STATUS_CREATING && flock(dirfd, LOCK_EX | LOCK_NB) == 0));
        if (!dead && session && st->cgroup != NULL) {
            struct brig_cgroup *cg = NULL;
            if (cgroup_load(st->cgroup, &cg, NULL) == 0) session_reap_orphans(cg);
            cgroup_free(cg);
        }
    }
    if (!dead) return 0;
    brig_closep(&dirfd);        /* our lock, if any, before the removal takes its own */
    autoerr struct brig_error *rerr = NULL;
    const struct brig_globals g = { .root = root };
    /* a session, or a directory without state.json (no init, no cgroup:
     * a create writes the state before anything else) */
    int rc = session ? sandbox_remove(root, name, true, &rerr) : container_delete(&g, name, true, &rerr);
    if (rc < 0) {
        brig_warn("sandbox gc: %s/%s: %s", root, name, rerr->msg);
        return -1;
    }
    brig_debug("sandbox gc: removed %s/%s (its init is gone)", root, name);
    return 1;
}

int sandbox_exec(const struct sandbox_opts *o, struct sandbox_result *r)
{
    int rc = exec_body(o, r);
    sandbox_not_run(r, o->argv ? o->argv[0] : NULL, o->stream);
    return rc;
}

/* Running execs: their cgroups (the sandbox's children). */
static size_t session_execs(const struct brig_state *st)
{
    struct brig_cgroup *cg = NULL;
    if (st->cgroup == NULL || cgroup_load(st->cgroup, &cg, NULL) < 0) return 0;
    session_reap_orphans(cg);
    char **names = NULL;
    size_t n = 0;
    cgroup_child_list(cg, SESSION_EXEC_PREFIX, &names, &n, NULL);
    brig_strv_free(names);
    cgroup_free(cg);
    return n;
}

int sandbox_list(const char *state_root, bool json, struct brig_error **err)
{
    const char *root = session_root(state_root);
    char **ids = NULL;
    size_t n = 0;
    if (access(root, F_OK) == 0 && state_list_ids(root, &ids, &n, err) < 0) return -1;
    autojw struct brig_jw *w = jw_new(false);
    jw_arr_open(w);
    if (!json) printf("%-24s %-8s %-10s %-6s %s\n", "NAME", "STATUS", "POLICY", "EXECS", "CREATED");
    for (size_t i = 0; i < n; i++) {
        autostate struct brig_state *st = NULL;
        const char *ref = NULL;
        autoclose int dirfd = -1;
        if (brig_str_has_prefix(ids[i], "sb-") || session_open(root, ids[i], &dirfd, &st, &ref, NULL, NULL) < 0)
            continue;
        enum brig_status s = session_running(dirfd, st) ? BRIG_STATUS_RUNNING : BRIG_STATUS_STOPPED;
        size_t execs = s == BRIG_STATUS_RUNNING ? session_execs(st) : 0;
        if (json) {
            jw_obj_open(w);
            jw_kstr(w, "name", ids[i]);
            jw_kstr(w, "status", state_status_name(s));
            jw_kstr(w, "policy", ref);
            jw_ki64(w, "pid", s == BRIG_STATUS_RUNNING ? st->pid : 0);
            jw_ku64(w, "execs", execs);
            jw_kstr(w, "created", st->created);
            jw_obj_close(w);
        } else {
            printf("%-24s %-8s %-10s %-6zu %s\n", ids[i], state_status_name(s), ref, execs,
                   st->created ? st->created : "-");
        }
    }
    jw_arr_close(w);
    brig_strv_free(ids);
    if (json) printf("%s\n", jw_text(w, NULL));
    return 0;
}

/* Every exec's cgroup killed and removed; a few rounds, for an exec that
 * made its cgroup just before the init died. */
static int session_remove_execs(const struct brig_state *st, struct brig_error **err)
{
    struct brig_cgroup *cg = NULL;
    if (st->cgroup == NULL) return 0;
    TRY(cgroup_load(st->cgroup, &cg, err));
    int rc = 0;
    for (int round = 0; rc == 0 && round < 3; round++) {
        char **names = NULL;
        size_t n = 0;
        rc = cgroup_child_list(cg, SESSION_EXEC_PREFIX, &names, &n, err);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            struct brig_cgroup *child = NULL;
            rc = cgroup_child_open(cg, names[i], &child, err);
            if (rc == 0) rc = cgroup_destroy(child, err);
            if (child != NULL) cgroup_free(child);
        }
        brig_strv_free(names);
        if (n == 0) break;
    }
    cgroup_free(cg);
    return rc;
}

int sandbox_remove(const char *state_root, const char *name, bool force, struct brig_error **err)
{
    const char *root = session_root(state_root);
    autostate struct brig_state *st = NULL;
    const char *ref = NULL;
    autoclose int dirfd = -1;
    TRY(session_open(root, name, &dirfd, &st, &ref, NULL, err));
    brig_closep(&dirfd);
    const struct brig_globals g = { .root = root };
    size_t execs = session_execs(st);
    if (!force && execs > 0)
        return brig_failx(err, "sandbox %s: %zu command(s) still running (rm --force kills them)", name, execs);
    /* The init first: no exec starts in a sandbox whose init is dead, and
     * the kernel takes every process of the pid namespace with it. */
    autoerr struct brig_error *kerr = NULL;
    if (container_kill(&g, name, SIGKILL, false, &kerr) < 0) brig_debug("sandbox rm %s: %s", name, kerr->msg);
    if (session_remove_execs(st, err) < 0) return brig_wrap(err, "sandbox rm %s", name);
    if (container_delete(&g, name, true, err) < 0) return brig_wrap(err, "sandbox rm %s", name);
    return 0;
}
