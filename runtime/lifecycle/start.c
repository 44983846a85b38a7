/* start (runtime.md "Operations: Start"): release the init waiting on
 * exec.fifo, then run the poststart hooks. */
#include "container.h"
#include "init_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../config/spec.h"
#include "../linux/cgroup/cgroup.h"
#include "../linux/sync.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/strutil.h"
#include "hooks.h"
#include "../../policy/policy.h"
#include "state.h"

#define CONFIG_MAX (16u << 20)
/* How long an init that reported its error may take to exit. */
#define START_EXIT_WAIT_MS 5000

/* runtime.md, lifecycle step 9: a poststart hook that fails is an error,
 * the container is stopped and the lifecycle continues at step 12 (as runc
 * and crun; spec 1.0 said a warning). brig leaves the stopped container
 * for `delete`, which destroys it and runs poststop (step 13), as after a
 * failing startContainer hook: engines delete after a failed start. */
static int start_poststart(int dirfd, const struct brig_state *st, struct brig_error **err)
{
    autofree char *text = NULL;
    size_t len = 0;
    autospec struct brig_spec *spec = NULL;
    if (brig_read_file_at(dirfd, "config.json", CONFIG_MAX, &text, &len, err) < 0 ||
        spec_parse(text, len, st->bundle, &spec, err) < 0)
        return brig_wrap(err, "poststart hooks: the saved config.json");
    if (spec->hooks[BRIG_HOOK_POSTSTART].n == 0) return 0;
    autofree char *json = state_to_oci_json(st, BRIG_STATUS_RUNNING, false);
    return hooks_run(spec, BRIG_HOOK_POSTSTART, json, err);
}

/* The process runs, and a poststart hook failed: stop the container. */
static void start_stop(const struct brig_state *st)
{
    autoerr struct brig_error *e = NULL;
    struct brig_cgroup *cg = NULL;
    if ((st->cgroup != NULL && cgroup_load(st->cgroup, &cg, &e) < 0) || init_kill_all(st, cg, &e) < 0)
        brig_warn("start %s: stopping the container: %s", st->id, e->msg);
    if (cg != NULL) cgroup_free(cg);
}

/* A container made by a brig without the start socket is started without
 * waiting, as then. */
static int start_connect(int dirfd, const char *id, int *conn, struct brig_error **err)
{
    autoerr struct brig_error *e = NULL;
    if (sync_connect_at(dirfd, SYNC_START_SOCK, conn, &e) == 0) return 0;
    if (e->errnum == ENOENT) return 0;
    if (e->errnum == ECONNREFUSED) return brig_failx(err, "start %s: the container's init has exited", id);
    return brig_fail(err, e->errnum, "start %s: %s", id, e->msg);
}

/* start returns once the process has exec'd, or fails with the
 * init's error (capabilities, seccomp, identity, a program gone since
 * create, a startContainer hook). The init then exits: wait for that, so
 * that `state` says stopped as soon as start has returned. */
static int start_wait_exec(int conn, const struct brig_state *st, struct brig_error **err)
{
    if (sync_wait_exec(conn, err) == 0) return 0;
    if (err != NULL && *err != NULL && (*err)->errnum == ECONNRESET) {
        brig_error_freep(err);
        brig_failx(err, "the container's init exited before exec (see its log)");
    }
    autoclose int pidfd = (int)syscall(SYS_pidfd_open, st->pid, 0);
    if (pidfd >= 0 && state_pid_start_time(st->pid) == st->pid_start_time) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        while (poll(&p, 1, START_EXIT_WAIT_MS) < 0 && errno == EINTR) {}
    }
    return -1;
}

static int start_unaudited(const struct brig_globals *g, const char *id, struct brig_error **err)
{
    autoclose int dirfd = -1;
    autostate struct brig_state *st = NULL;
    if (state_dir_open(g->root, id, &dirfd, err) < 0 || state_read(dirfd, &st, err) < 0)
        return brig_wrap(err, "start %s", id);

    enum brig_status status = state_status(dirfd, st);
    if (status != BRIG_STATUS_CREATED)
        return brig_failx(err, "start %s: cannot start a container that is %s", id,
                          state_status_name(status));

    autoclose int fd = openat(dirfd, "exec.fifo", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENXIO) return brig_failx(err, "start %s: the container's init has exited", id);
        return brig_fail(err, errno, "start %s: open exec.fifo", id);
    }
    /* Connected before the init is released: it takes this connection
     * without waiting for it (child_start_conn). */
    autoclose int conn = -1;
    TRY(start_connect(dirfd, id, &conn, err));
    if (write(fd, "0", 1) != 1) return brig_fail(err, errno, "start %s: write exec.fifo", id);
    if (unlinkat(dirfd, "exec.fifo", 0) < 0 && errno != ENOENT)
        return brig_fail(err, errno, "start %s: remove exec.fifo", id);
    unlinkat(dirfd, SYNC_START_SOCK, 0);          /* the init has closed it */
    if (conn >= 0 && start_wait_exec(conn, st, err) < 0) return brig_wrap(err, "start %s", id);
    if (start_poststart(dirfd, st, err) < 0) {
        start_stop(st);
        return brig_wrap(err, "start %s", id);
    }
    return 0;
}

/* One audit line per operation under the policy in force (policy/). */
int container_start(const struct brig_globals *g, const char *id, struct brig_error **err)
{
    int rc = start_unaudited(g, id, err);
    policy_audit_op(g->policy, "start", id, true, rc < 0 ? 1 : 0, false, 0);
    return rc;
}
