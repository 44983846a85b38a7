/* run: create + start in one process, then wait for the container and
 * return its exit status (128+N for a signal), forwarding signals to it. */
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

static const int forwarded[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH,
                                 SIGCONT, SIGTSTP };

static int status_to_exit(int status)
{
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 255;
}

/* Wait for pid, forwarding the signals we receive. */
static int run_wait(pid_t pid, const sigset_t *set)
{
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(set, &si);
        if (sig < 0) {
            if (errno == EINTR) continue;
            brig_warn("sigwaitinfo: %s", strerror(errno));
            break;
        }
        if (sig != SIGCHLD) {
            brig_debug("forwarding signal %d to %d", sig, (int)pid);
            kill(pid, sig);
            continue;
        }
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return status_to_exit(status);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return 255;
    return status_to_exit(status);
}

int container_run(const struct brig_globals *g, const struct brig_create_opts *o, int *exit_status,
                  struct brig_error **err)
{
    /* Blocked before the clone so none is lost; the init unblocks them. */
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(forwarded); i++) sigaddset(&set, forwarded[i]);
    sigprocmask(SIG_BLOCK, &set, &old);

    struct launch L;
    if (launch_container(&L, g, o, true, err) < 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        return -1;
    }
    brig_closep(&L.dirfd);      /* unlock: state/kill may look at it while it runs */

    int rc = sync_send(L.sync_fd, SYNC_START, NULL, err);
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

    int status = run_wait(L.pid, &set);
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
