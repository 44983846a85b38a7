/* run: create + start in one process, then wait for the container and
 * return its exit status (128+N for a signal), forwarding signals to it
 * and, with process.terminal, relaying its pty to our terminal. */
#include "container.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../config/spec.h"
#include "../linux/sync.h"
#include "../util/cleanup.h"
#include "../util/log.h"
#include "hooks.h"
#include "launch.h"
#include "state.h"
#include "waiter.h"

int container_run(const struct brig_globals *g, const struct brig_create_opts *o, int *exit_status,
                  struct brig_error **err)
{
    /* Blocked before the clone so none is lost; the init unblocks them. */
    sigset_t set, old;
    waiter_signals(&set);
    sigprocmask(SIG_BLOCK, &set, &old);

    struct launch L;
    if (launch_container(&L, g, o, true, err) < 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        return -1;
    }
    brig_closep(&L.dirfd);      /* unlock: state/kill may look at it while it runs */

    int rc = 0;
    if (L.console_fd >= 0) rc = waiter_pty_prepare(L.console_fd, err);
    if (rc == 0) rc = sync_send(L.sync_fd, SYNC_START, NULL, err);
    if (rc == 0) rc = sync_wait_exec(L.sync_fd, err);
    if (rc == 0) {
        autofree char *json = state_to_oci_json(L.st, BRIG_STATUS_RUNNING, false);
        struct brig_error *herr = NULL;
        if (hooks_run(L.spec, BRIG_HOOK_POSTSTART, json, &herr) < 0) {
            brig_warn("run %s: %s", o->id, herr->msg);   /* the spec: warn and go on */
            brig_error_free(herr);
        }
    }
    if (rc == 0 && o->detach) {
        *exit_status = 0;
        launch_release(&L);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return 0;
    }

    int status;
    if (rc == 0 && L.console_fd >= 0) {
        /* process.terminal without --console-socket: attached to our terminal */
        rc = waiter_attach_pty(L.pid, L.console_fd, &set, &status, err);
    } else {
        status = waiter_forward(L.pid, &set);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    launch_release(&L);
    if (rc < 0) brig_wrap(err, "run %s", o->id);
    *exit_status = status;

    if (!o->keep) {
        struct brig_error *derr = NULL;
        if (container_delete(g, o->id, true, &derr) < 0) {
            if (rc == 0) {
                if (err) *err = derr;
                return -1;
            }
            brig_warn("%s", derr->msg);
            brig_error_free(derr);
        }
    }
    return rc;
}
