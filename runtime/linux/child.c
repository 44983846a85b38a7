/* The container's birth, in the order of the spec's lifecycle
 * (runtime.md "Lifecycle", config.md "POSIX-platform Hooks"). Each step is
 * one line and lives in the file of its concern. */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lifecycle/hooks.h"
#include "../util/cleanup.h"
#include "../util/fd_defer.h"
#include "../util/log.h"
#include "../util/strutil.h"
#include "cgroup/cgroup.h"
#include "console.h"
#include "exe_trampoline.h"
#include "loopback.h"
#include "proc_exec.h"
#include "process_attrs.h"
#include "rootfs/rootfs.h"
#include "sync.h"

/* `brig start` connects to the start socket before it writes exec.fifo:
 * its connection is waiting (non-blocking accept), and from now on our
 * error goes there instead of to the gone `brig create`; execve closes it,
 * which tells start the process runs. No connection (a start that does not
 * wait): errors go to the log, as before. */
static int child_start_conn(struct child_ctx *c, struct brig_error **err)
{
    int conn = accept4(c->start_sock, NULL, NULL, SOCK_CLOEXEC);
    if (conn < 0 && errno != EAGAIN) return brig_fail(err, errno, "wait for start: accept");
    brig_closep(&c->start_sock);
    if (conn < 0) return 0;
    brig_closep(&c->sync_fd);
    c->sync_fd = conn;
    return 0;
}

/* Block until `brig start` writes to exec.fifo (create), or until the
 * parent says go (run). */
static int child_wait_start(struct child_ctx *c, struct brig_error **err)
{
    if (c->fifo_fd < 0)
        return sync_expect(c->sync_fd, SYNC_START, "brig run went away", &c->start_json, err);
    /* A brig create that dies before recording "created" must not leave us
     * waiting for a start: its socket's EOF ends us. */
    TRY(sync_expect(c->sync_fd, SYNC_CREATED_ACK, "brig create went away", &c->start_json, err));
    char b;
    ssize_t r;
    do {
        r = read(c->fifo_fd, &b, 1);
    } while (r < 0 && errno == EINTR);
    if (r != 1) return brig_fail(err, r < 0 ? errno : EPIPE, "wait for start: read exec.fifo");
    brig_closep(&c->fifo_fd);
    return child_start_conn(c, err);
}

/* process.terminal: the pty comes from the container's devpts, so it is
 * made after the pivot; the master goes to the parent, which hands it on. */
static int child_console(struct child_ctx *c, struct brig_error **err)
{
    autoclose int master = -1;
    /* made as host root: given to the process's uid as the host will see
     * it once the init is in its own user namespace */
    uid_t owner = c->spec->process.user.uid + (c->userns_size ? c->userns_base : 0);
    TRY(console_setup(&c->spec->process, true, owner, &master, err));
    return sync_send_fd(c->sync_fd, SYNC_CONSOLE, master, err);
}

/* The init's own user namespace (lifecycle/container.h, brig_userns_own),
 * entered once everything that needs the host's rights is done: its other
 * namespaces stay owned by the host's, where nothing inside holds a
 * capability. Owned by the host uid base, which the parent maps. */
static int child_userns_own(struct child_ctx *c, struct brig_error **err)
{
    TRY(ns_own_unshare(c->userns_base, err));
    TRY(sync_send(c->sync_fd, SYNC_USERNS, NULL, err));
    TRY(sync_expect(c->sync_fd, SYNC_USERNS_DONE, "parent went away", NULL, err));
    return ns_own_become_root(err);
}

/* Namespaces joined, root filesystem built, still privileged. */
static int child_setup(struct child_ctx *c, struct brig_error **err)
{
    const struct brig_spec *s = c->spec;
    bool in_userns = c->ns->new_user || c->ns->join_fds[BRIG_NS_USER] >= 0 || c->rootless;
    autoclose int rootfd = -1;

    TRY(sync_expect(c->sync_fd, SYNC_GO, "parent went away", NULL, err));
    /* Rootless: the maps are written now (child_main). */
    if (c->dumpable_until_go && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        return brig_fail(err, errno, "prctl PR_SET_DUMPABLE");
    TRY(session_new(err));                                     /* not the caller's tty */
    if (c->cg != NULL) TRY(cgroup_attach_self(c->cg, c->cloned_into, err));   /* before cgroupns */
    TRY(ns_child_join(s, c->ns, err));
    TRY(hostname_apply(s, err));                               /* in the new or joined uts */
    if (c->ns->new_net) TRY(loopback_up(err));
    bool joined_mnt = c->ns->join_fds[BRIG_NS_MOUNT] >= 0;
    bool mounting = c->ns->new_mnt || rootfs_shared_needs_mount(s);
    if (c->ns->new_mnt)
        TRY(rootfs_prepare(s, c->caller_mntns, &rootfd, err));
    else if (mounting)                                         /* rootfs_shared.c */
        TRY(rootfs_shared_bind(s, joined_mnt, c->sync_fd, &rootfd, err));
    else
        TRY(rootfs_shared_open(s, joined_mnt, &rootfd, err));
    if (mounting) {
        TRY(mounts_apply(&rootfd, s, in_userns, err));
        TRY(devices_populate(rootfd, s, in_userns, err));
        TRY(cwd_make(rootfd, &s->process, err));              /* before the root goes ro */
    }
    TRY(proc_home_default(rootfd, &s->process, &c->home_env, err));

    TRY(sync_send(c->sync_fd, SYNC_HOOKS, NULL, err));       /* prestart, createRuntime */
    TRY(sync_expect(c->sync_fd, SYNC_HOOKS_DONE, "parent went away", &c->state_json, err));
    TRY(hooks_run(s, BRIG_HOOK_CREATE_CONTAINER, c->state_json, err));

    brig_fd_defer_flush();                                    /* nothing pins the old root */
    if (c->ns->new_mnt) TRY(rootfs_pivot(rootfd, s, c->no_pivot, err));
    else TRY(rootfs_chroot_shared(rootfd, err));
    if (s->process.terminal) TRY(child_console(c, err));
    TRY(sysctl_apply(s, err));                                 /* before /proc/sys goes ro */
    TRY(paths_mask_readonly(s, err));
    TRY(rootfs_finish(s, err));                                /* read-only root last */
    TRY(personality_apply(&s->linux_cfg, err));
    TRY(oom_score_adj_apply(&s->process, err));
    TRY(io_priority_apply(&s->process, err));
    TRY(rlimits_apply(&s->process, err));
    TRY(mempolicy_apply(&s->linux_cfg, err));                 /* inherited by execve */
    brig_fd_defer_flush();
    if (c->userns_size) TRY(child_userns_own(c, err));        /* last: the host's rights end here */
    return 0;
}

/* From start to execve: identity, capabilities, no_new_privs, seccomp. */
static int child_exec(struct child_ctx *c, const char *exe, struct brig_error **err)
{
    const struct brig_spec *s = c->spec;
    const struct brig_process *p = &s->process;
    bool in_userns = c->ns->new_user || c->ns->join_fds[BRIG_NS_USER] >= 0 || c->userns_size || c->rootless;

    /* sync_fd stays open until execve: the parent of `run` sees EOF on
     * success, or our error. Every other fd is closed now (CVE-2024-21626). */
    TRY(fds_close_from(3 + c->preserve_fds, c->sync_fd, err));
    fds_close_cloexec_below(3 + c->preserve_fds, c->sync_fd);
    /* brig's binary as is: the process is exec'd by a sealed copy of
     * brig-init, never by this task (linux/exe_trampoline.h). Made after
     * the close: ours, close-on-exec, no path. */
    int via = -1;
    if (c->trampoline) TRY(exe_trampoline_open(&via, err));
    struct proc_launch l;
    TRY(proc_launch_prepare(p, exe, c->home_env, via, EXE_TRAMPOLINE_NAME, c->sync_fd, &l, err));
    l.setid = c->setid_bpf;
    /* The cwd entered before "created" is still the one to check. */
    TRY(proc_confine_in_cwd(p, c->bpf, in_userns, &l, err));
    /* A startContainer hook is the image's program (its path resolves in
     * the container): it runs as confined as the process, as runc runs it,
     * never with the init's privileges (an image could read any host file
     * on the rootfs' filesystem by handle, tests/security/t-start-hook). */
    TRY(hooks_run(s, BRIG_HOOK_START_CONTAINER, c->start_json, err));
    return proc_execve(&l, err);
}

void child_main(struct child_ctx *c)
{
    struct brig_error *err = NULL;
    autofree char *exe = NULL;

    brig_log_set_tag("init");
    /* Nobody may open /proc/<pid>/exe of this brig process or ptrace it
     * while it is inside the container's namespaces (CVE-2019-5736 class).
     * A rootless parent writes our id maps (or has newuidmap write them)
     * as the owner of /proc/<pid>/uid_map, which we are only while
     * dumpable: until SYNC_GO, while we are alone in a user namespace
     * nobody else has entered and hold only the caller's own rights. */
    if (!c->dumpable_until_go && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
        brig_fail(&err, errno, "prctl PR_SET_DUMPABLE");
        goto fail;
    }
    /* The O_PATH and mount fds of the setup are closed in batches
     * (util/fd_defer.h): all are O_CLOEXEC, and flushed before the pivot. */
    brig_fd_defer_start();
    if (child_setup(c, &err) < 0) goto fail;
    if (proc_find_exec(&c->spec->process, &exe, &err) < 0) goto fail;
    /* As runc: a cwd that cannot be entered fails create, not start (it
     * is entered again after the identity switch). */
    if (cwd_apply(&c->spec->process, &err) < 0) goto fail;
    if (sync_send(c->sync_fd, SYNC_CREATED, NULL, &err) < 0) goto fail;
    if (child_wait_start(c, &err) < 0) goto fail;
    child_exec(c, exe, &err);
fail:
    /* After `brig create` has exited nobody listens on sync_fd any more:
     * the log is the only place left to tell, or, once fds_close_from
     * closed the --log fd, the process's own stderr. */
    if (sync_send_error(c->sync_fd, err) < 0) {
        if (brig_log_fd() < 0) brig_log_set_fd(2);             /* --log was closed */
        brig_errorf("%s", err ? err->msg : "container init failed");
    }
    _exit(127);
}
