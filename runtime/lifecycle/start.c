/* start (runtime.md "Operations: Start"): release the init waiting on
 * exec.fifo, then run the poststart hooks. */
#include "container.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "../config/spec.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "hooks.h"
#include "../../policy/policy.h"
#include "state.h"

#define CONFIG_MAX (16u << 20)

static void start_poststart(int dirfd, const struct brig_state *st)
{
    autofree char *text = NULL;
    size_t len = 0;
    autospec struct brig_spec *spec = NULL;
    struct brig_error *e = NULL;
    if (brig_read_file_at(dirfd, "config.json", CONFIG_MAX, &text, &len, &e) < 0 ||
        spec_parse(text, len, st->bundle, &spec, &e) < 0) {
        brig_warn("start %s: poststart hooks: %s", st->id, e->msg);
        brig_error_free(e);
        return;
    }
    if (spec->hooks[BRIG_HOOK_POSTSTART].n == 0) return;
    autofree char *json = state_to_oci_json(st, BRIG_STATUS_RUNNING, false);
    if (hooks_run(spec, BRIG_HOOK_POSTSTART, json, &e) < 0) {
        brig_warn("start %s: %s", st->id, e->msg);  /* the spec: warn and go on */
        brig_error_free(e);
    }
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
    if (write(fd, "0", 1) != 1) return brig_fail(err, errno, "start %s: write exec.fifo", id);
    if (unlinkat(dirfd, "exec.fifo", 0) < 0 && errno != ENOENT)
        return brig_fail(err, errno, "start %s: remove exec.fifo", id);
    start_poststart(dirfd, st);
    return 0;
}

/* One audit line per operation under the policy in force (policy/). */
int container_start(const struct brig_globals *g, const char *id, struct brig_error **err)
{
    int rc = start_unaudited(g, id, err);
    policy_audit_op(g->policy, "start", id, true, rc < 0 ? 1 : 0, false, 0);
    return rc;
}
