/* `brig sandbox run`: one command in a fresh sandbox, through brig's own
 * lifecycle (launch_container, the start handshake, launch_delete: what
 * `brig run` does), with the command's stdout and stderr on pipes that are
 * drained while the wall and idle clocks run.
 *
 * The sandbox is the init's pid namespace: killing the init (brig-init,
 * PID 1) makes the kernel SIGKILL every process in it, however it detached
 * (setsid, double fork), and the delete then kills and removes the cgroup.
 * Both a timeout and the command's own exit end the sandbox that way.
 * The stdio, clocks, stats and audit line are sandbox_io.c's (shared with
 * `sandbox exec`). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox.h"
#include "../policy/policy.h"
#include "../runtime/lifecycle/launch.h"
#include "../runtime/linux/console.h"
#include "../runtime/linux/sync.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

static void run_kill(void *arg)
{
    /* PID 1 of its pid namespace: the kernel takes every member with it. */
    kill(*(pid_t *)arg, SIGKILL);
}

/* --tty: the pty master, held by brig, replaces the stdout pipe (the
 * stderr pipe just reads EOF: the pty is all three of the init's stdio).
 * No \r in the preview (ONLCR off, as `brig run` does), and an end of file
 * queued as the terminal's input: a command reading stdin sees what it
 * would see from /dev/null, not a wait for the idle timeout. */
static int run_tty(struct launch *L, struct sandbox_io *io, struct brig_error **err)
{
    TRY(console_clear_onlcr(L->console_fd, err));
    struct termios t;
    if (tcgetattr(L->console_fd, &t) < 0) return brig_fail(err, errno, "--tty: tcgetattr");
    if (write(L->console_fd, &t.c_cc[VEOF], 1) != 1) return brig_fail(err, errno, "--tty: queue end of file");
    if (fcntl(L->console_fd, F_SETFL, O_NONBLOCK) < 0) return brig_fail(err, errno, "--tty: O_NONBLOCK");
    close(io->out[0]);
    io->out[0] = L->console_fd;
    L->console_fd = -1;
    return 0;
}

/* After the launch: start, wait, stats (the delete is the caller's). */
static int run_started(struct launch *L, const struct sandbox_opts *o, const struct sandbox_limits *lim,
                       const char *unsealed_init, struct sandbox_io *io, struct sandbox_result *r,
                       struct brig_error **err)
{
    uint64_t started = sandbox_now_ms();
    /* Both the timeout and the init's own exit end the namespace; nothing
     * to kill after the reap (the pid may be reused by then). */
    const struct sandbox_kill k = { .fn = run_kill, .arg = &L->pid, .at_exit = false };
    int rc = unsealed_init ? sandbox_seal_verify(L->spec, L->pid, unsealed_init, err) : 0;
    if (rc == 0 && L->console_fd >= 0) rc = run_tty(L, io, err);
    if (rc == 0) rc = sync_send(L->sync_fd, SYNC_START, NULL, err);
    if (rc == 0) rc = sync_wait_exec(L->sync_fd, err);
    brig_closep(&L->sync_fd);
    /* Locked until the init is brig-init: no `brig exec` joins while it is
     * still brig (sandbox_seal.c). */
    flock(L->dirfd, LOCK_UN);
    if (rc < 0) {
        run_kill(&L->pid);
        while (waitpid(L->pid, NULL, 0) < 0 && errno == EINTR) {}
        return -1;
    }
    const struct sandbox_live live = { .echo = o->stream, .events = o->events, .init_reports = true,
                                       .watch = L->wswatch };
    TRY(sandbox_io_wait(io, L->pid, &k, lim, &live, started, r, err));
    sandbox_stats(L->cg, r);
    r->workspace_full = policy_workspace_full(L->policy, L->spec, L->dirfd);
    return 0;
}

/* A one-shot's slot is forgotten at its end: its init is reaped by then. */
static void run_slot_release(struct sandbox_slot *s)
{
    sandbox_slot_release(s, true);
}

static int run_body(const struct sandbox_opts *o, struct sandbox_result *r)
{
    autoerr struct brig_error *err = NULL;
    sandbox_new_id("sb-", r->id, sizeof(r->id));
    const char *policy_flag = o->policy ? o->policy : "agent";
    /* Read once: create judges the config by this same text. */
    autofree char *text = NULL;
    size_t len = 0;
    autopolicy struct brig_policy *p = NULL;
    if (policy_read(policy_flag, &text, &len, &err) < 0 || policy_parse(text, len, &p, &err) < 0) {
        brig_wrap(&err, "--policy %s", policy_flag);
        return sandbox_fail(r, err);
    }
    if (strlen(text) != len) {
        brig_failx(&err, "--policy %s: a NUL byte in the file", policy_flag);
        return sandbox_fail(r, err);
    }
    r->policy = brig_strdup(p->name);
    struct sandbox_limits lim;
    if (sandbox_limits(p, o, &lim, &err) < 0) return sandbox_fail(r, err);
    sandbox_stream_init(&r->out, lim.output_max);
    sandbox_stream_init(&r->err, lim.output_max);
    autofree char *init = NULL;
    autofree char *config = NULL;
    /* Its host ids, held until the run is over (its init recorded, too,
     * for a brig killed before that: sandbox_ids.c). */
    const char *state_root = o->state_root ? o->state_root : SANDBOX_STATE_ROOT;
    __attribute__((cleanup(run_slot_release))) struct sandbox_slot slot = { .fd = -1 };
    /* Rootless: the caller's own ids instead (sandbox_rootless.c). */
    int claimed = o->rootless ? 0 : sandbox_slot_claim(&slot, &err);
    if (claimed < 0 && err->errnum == EAGAIN) {
        /* all taken: an init a killed brig left may hold one */
        brig_error_freep(&err);
        sandbox_reap_stale(state_root);
        claimed = sandbox_slot_claim(&slot, &err);
    }
    if (claimed < 0 || sandbox_find_init(&init, &err) < 0 ||
        sandbox_config(p, o, r->id, init, slot.base, &config, &err) < 0)
        return sandbox_fail(r, err);
    /* Before anything is made: a re-exec starts this all over. */
    bool unsealed;
    if (sandbox_seal_decide(p, config, o->rootless, &unsealed, &err) < 0) return sandbox_fail(r, err);

    /* Recorded before anything is made in it: gc finds what it leaves. */
    if (!o->rootless && sandbox_root_record(state_root, &err) < 0) return sandbox_fail(r, err);
    if (o->rootless) sandbox_reap_stale_entries(state_root);   /* root's cgroup leaves are not ours */
    else sandbox_reap_stale(state_root);
    if (!o->rootless && sandbox_cgroup_parent(&err) < 0) return sandbox_fail(r, err);
    /* Held from before the state exists to after the delete: a run whose
     * owner lock is free belongs to a dead brig (sandbox_stale.c). */
    struct sandbox_owner owner;
    if (sandbox_owner_claim(state_root, r->id, &owner, &err) < 0) return sandbox_fail(r, err);
    struct sandbox_io io;
    int rc = sandbox_io_open(&io, o->stdin_path, &err);

    const struct brig_globals g = { .root = state_root, .policy = policy_flag, .policy_text = text,
                                    .rootless = o->rootless, .quiet_limits = true };
    const struct brig_userns_own own = { .base = slot.base, .size = SANDBOX_IDS_SLOT, .born = sandbox_slot_born,
                                         .arg = &slot };
    const struct brig_create_opts co = { .id = r->id, .bundle = "/", .config_text = config,
                                         .userns = o->rootless ? NULL : &own, .cgroup_fresh = true,
                                         .seal_decided = true,
                                         /* forked by the loop when due, a live copy's
                                          * reader that stalls or not (sandbox_io.c) */
                                         .watch_later = true };
    struct launch L;
    if (rc == 0) {
        rc = sandbox_io_swap(&io, &err);
        if (rc == 0) rc = launch_container(&L, &g, &co, true, &err);
        sandbox_io_restore(&io);
    }
    if (rc == 0 && L.limits_skipped != NULL) r->limits_skipped = brig_strdup(L.limits_skipped);
    if (rc == 0) {
        /* Only now, the init cloned with the default: a reader of brig's
         * output that goes away must not kill brig (and orphan the sandbox). */
        void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
        rc = run_started(&L, o, &lim, unsealed ? init : NULL, &io, r, &err);
        /* Whatever happened: what `delete --force` does, with what we hold. */
        struct brig_error *derr = NULL;
        if (launch_delete(&L, r->id, &derr) < 0) {
            if (rc == 0) {
                rc = -1;
                err = derr;
            } else {
                brig_warn("sandbox %s: %s", r->id, derr->msg);
                brig_error_free(derr);
            }
        }
        launch_release_exiting(&L);
        signal(SIGPIPE, old_pipe);
    }
    sandbox_io_close(&io);
    sandbox_owner_release(&owner);
    if (rc < 0) sandbox_fail(r, err);
    sandbox_audit(p, "sandbox-run", r->id, o->argv && o->argv[0] ? o->argv[0] : NULL, r);
    return 0;
}

int sandbox_run(const struct sandbox_opts *o, struct sandbox_result *r)
{
    int rc = run_body(o, r);
    sandbox_not_run(r, o->argv ? o->argv[0] : NULL, o->stream);
    return rc;
}
