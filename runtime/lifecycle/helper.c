/* A helper process of a container's (the egress proxy, the workspace
 * watcher): forked by brig before the init is cloned, so it holds none of
 * the container's fds, and born in a child cgroup of the container's, so
 * the container's cpu, memory and pids limits bound its work too. */
#include "launch.h"

#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../linux/cgroup/cgroup.h"
#include "../util/log.h"

pid_t launch_helper_fork(const struct brig_cgroup *cg, const char *cgname, const char *comm,
                         struct launch_helper *h, struct brig_error **err)
{
    *h = (struct launch_helper){ .ctl = -1 };
    if (cg != NULL && cgroup_child_create(cg, cgname, false, &h->cg, err) < 0) return brig_wrap(err, "%s's cgroup", comm);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        int e = errno;
        if (h->cg != NULL) cgroup_destroy(h->cg, NULL), cgroup_free(h->cg);
        h->cg = NULL;
        return brig_fail(err, e, "%s: socketpair", comm);
    }
    pid_t parent = getpid();
    /* Born in its cgroup's v2 directory (CLONE_INTO_CGROUP), where a v2
     * one exists, and joining the v1 ones thread by thread ("tasks", the
     * helper itself: cgroup_attach_self): a cgroup.procs write would take
     * the cgroup mutex across an RCU grace period (5-13 ms here) and stall
     * the container's init joining its own cgroups meanwhile. The same
     * clone as the init's (create.c). */
    int cgfd = h->cg != NULL ? cgroup_clone_fd_open(h->cg) : -1;
    pid_t pid = cgfd >= 0 ? launch_clone(0, cgfd, &h->cloned_into) : fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        if (h->cg != NULL) cgroup_destroy(h->cg, NULL), cgroup_free(h->cg);
        h->cg = NULL;
        return brig_fail(err, e, "fork %s", comm);
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (getppid() != parent) _exit(0);
        prctl(PR_SET_NAME, comm, 0, 0, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_IGN);
        close(sv[0]);
        h->ctl = sv[1];
        return 0;
    }
    close(sv[1]);
    h->ctl = sv[0];
    return pid;
}
