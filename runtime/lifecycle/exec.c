/* `exec` (runc's exec; the runtime spec has no such operation): a new
 * process in a running container, confined exactly as its init is: every
 * namespace of the init joined through a pidfd, its cgroup, and the
 * container's seccomp filter, capabilities and identity rules. An exec must
 * never be less confined than the container. */
#include "exec.h"
#include "init_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../egress/egress.h"
#include "../../policy/policy.h"
#include "../linux/caps.h"
#include "../linux/cgroup/cgroup.h"
#include "../linux/console.h"
#include "../linux/proc_exec.h"
#include "../linux/process_attrs.h"
#include "../linux/seccomp.h"
#include "../linux/seccomp_cache.h"
#include "../linux/spawn_vm.h"
#include "../linux/sync.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/noheap.h"
#include "launch.h"
#include "state.h"
#include "waiter.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define EXEC_CONFIG_MAX (16u << 20)

struct exec_run {
    struct brig_spec *spec;
    struct brig_bpf *bpf;
    struct brig_bpf *setid_bpf; /* brig's set-id filter (spec.h), or NULL */
    struct brig_cgroup *cg;
    struct brig_cgroup *join;   /* cg, or the caller's child of it */
    int dirfd;              /* state dir, locked until the process runs */
    int pidfd;              /* the container's init */
    int sync_fd;
    int console_sock;
    int console_fd;
    int ns_flags;           /* CLONE_NEW* the child joins (pid is joined by the fork) */
    bool join_pid;
    bool userns_child;      /* the container's user namespace is a child of ours */
    bool cloned_into;       /* the child was born in the v2 cgroup */
    bool shared_mm;         /* the child runs in our memory (spawn_vm.h): no SYNC_GO */
    bool unsignalable;      /* no process of the container may signal our child (exec_unsignalable) */
    bool user_joined;       /* rootless: we joined the container's user namespace (exec_pidns_enter) */
    bool rootless;          /* brig_globals.rootless */
    pid_t pid;
};

static const struct {
    const char *name;       /* in /proc/<pid>/ns */
    int flag;
} exec_ns[] = {
    { "user", CLONE_NEWUSER }, { "mnt", CLONE_NEWNS },     { "pid", CLONE_NEWPID },
    { "net", CLONE_NEWNET },   { "ipc", CLONE_NEWIPC },    { "uts", CLONE_NEWUTS },
    { "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME },
};

/* Whether the user namespace of pid is a child of ours. Then nothing in it
 * holds a capability in ours: a process's capabilities reach its own
 * namespace and those below it (cap_capable, kernel/capability.c), and
 * ours gives them only to its own processes of the child's owner uid,
 * which brig never hands to anything inside. */
static bool exec_userns_child(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
    autoclose int fd = open(path, O_RDONLY | O_CLOEXEC);
    autoclose int parent = fd >= 0 ? ioctl(fd, NS_GET_PARENT) : -1;
    struct stat p, ours;
    return parent >= 0 && fstat(parent, &p) == 0 && stat("/proc/self/ns/user", &ours) == 0 &&
           p.st_dev == ours.st_dev && p.st_ino == ours.st_ino;
}

/* Every namespace in which the init differs from us, whether the config made
 * it or joined it by path: the exec'd process sees what the init sees. */
static int exec_ns_plan(pid_t pid, struct exec_run *X, struct brig_error **err)
{
    /* Each namespace looked up from the two directories, opened once (a
     * walk of /proc/PID/ns/... each time was most of this step). */
    char dir[64];
    snprintf(dir, sizeof(dir), "/proc/%d/ns", (int)pid);
    autoclose int theirs_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (theirs_fd < 0) return brig_fail(err, errno, "open %s", dir);
    autoclose int ours_fd = open("/proc/self/ns", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (ours_fd < 0) return brig_fail(err, errno, "open /proc/self/ns");
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(exec_ns); i++) {
        struct stat theirs, ours;
        if (fstatat(theirs_fd, exec_ns[i].name, &theirs, 0) < 0) {
            if (errno == ENOENT && strcmp(exec_ns[i].name, "time") == 0) continue;
            return brig_fail(err, errno, "stat %s/%s", dir, exec_ns[i].name);
        }
        if (fstatat(ours_fd, exec_ns[i].name, &ours, 0) < 0)
            return brig_fail(err, errno, "stat /proc/self/ns/%s", exec_ns[i].name);
        if (theirs.st_ino == ours.st_ino && theirs.st_dev == ours.st_dev) {
            /* The init's root is then only a chroot, which setns would not
             * give us: the process would run in the host's root. */
            if (exec_ns[i].flag == CLONE_NEWNS)
                return brig_failx(err, "exec: the container shares brig's mount namespace (no "
                                       "\"mount\" in linux.namespaces): refusing to run a process "
                                       "outside its chroot");
            continue;
        }
        if (exec_ns[i].flag == CLONE_NEWPID) X->join_pid = true;
        else X->ns_flags |= exec_ns[i].flag;
    }
    X->userns_child = (X->ns_flags & CLONE_NEWUSER) && exec_userns_child(pid);
    /* The pid read above was the init's only if it is still alive now. */
    TRY(init_pidfd_signal(X->pidfd, 0, err));
    brig_debug("exec: joining namespaces 0x%x%s", X->ns_flags, X->join_pid ? " + pid" : "");
    return 0;
}

/* An exec through a trampoline runs from brig's unsealed binary: refused
 * unless no process of the container can ever open our child's
 * /proc/<pid>/exe (docs/security.md, "sandbox exec without the sealed
 * copy"). The caller decided so from the same state; this holds it to the
 * config and namespaces this exec actually uses. saved: the container's
 * own process caps (its init's, and every earlier exec's bounding set). */
static int exec_trampoline_check(const struct exec_run *X, const struct brig_caps *saved,
                                 struct brig_error **err)
{
    const char *why = NULL;
    if (!X->join_pid) why = "the container shares brig's pid namespace";
    else if ((X->ns_flags & CLONE_NEWUSER) && !X->userns_child)
        why = "the container's user namespace is not a child of brig's";
    /* CAP_SYS_PTRACE in no set: nothing born with these caps (the bounding
     * set included, which every descendant inherits) passes
     * ptrace_may_access on a non-dumpable process, even of its own uid. */
    else if (caps_in_any_set(saved, CAP_SYS_PTRACE) ||
             caps_in_any_set(&X->spec->process.caps, CAP_SYS_PTRACE))
        why = "CAP_SYS_PTRACE is in a capability set of its process";
    for (size_t k = 0; why == NULL && k < BRIG_HOOK_KIND_COUNT; k++)
        if (X->spec->hooks[k].n > 0) why = "the config has hooks";
    if (why != NULL) return brig_failx(err, "exec: %s: refusing to exec from brig's unsealed binary", why);
    return 0;
}

/* Whether no process of the container may signal our child before its
 * identity switch, where it allocates (after it, no heap: util/noheap.h).
 * It is uid 0 then (real, effective, saved) with brig's caps, and in the
 * container's pid namespace: kill_ok_by_cred (kernel/signal.c) lets a
 * process signal it when its real or effective uid is 0, or with CAP_KILL
 * over the init user namespace. In a container's user namespace (a child
 * of ours, exec_shares_mm: a sandbox's) the child joins it and becomes its
 * root before the switch: then uid 0 and CAP_KILL of that namespace, read
 * as the container's processes have them, and nothing inside holds any
 * capability over ours, where our mm was made (ptrace of it needs
 * CAP_SYS_PTRACE there). No process of the container is uid 0 or can become
 * it when the container's process and this one are not uid 0, run with
 * no_new_privs (a container's every exec inherits the config's: no setuid
 * file raises them) and have neither CAP_KILL nor CAP_SETUID in any set
 * (the bounding set bounds every descendant). Nor CAP_SYS_PTRACE, which
 * signals nothing but is worse: outside a user namespace it passes
 * ptrace_may_access (__ptrace_may_access, cap_ptrace_access_check) on our
 * non-dumpable root child, and a /proc/<pid>/mem fd opened on it before
 * its execve stays on our mm, live while we wait for the command (a
 * fork's dies at its execve). The sandbox's processes are
 * so (policy user 1000, no capabilities, noNewPrivileges); a container of
 * root processes is not: there its exec child is a fork. An earlier exec
 * run with another --user or --cap is not seen from here: its mark is
 * (exec_unshared_mark, which asks this of both processes). */
static bool exec_unsignalable(const struct brig_process *q)
{
    return q->user.uid != 0 && q->no_new_privileges && !caps_in_any_set(&q->caps, CAP_KILL) &&
           !caps_in_any_set(&q->caps, CAP_SETUID) && !caps_in_any_set(&q->caps, CAP_SYS_PTRACE);
}

/* exec_unsignalable judges the container's saved process and this one;
 * a process that an earlier exec started with another --user or --cap
 * (uid 0, CAP_KILL, CAP_SYS_PTRACE) may still run in the container, where
 * neither shows it. So an exec the gate refuses leaves a mark in the state
 * dir (under the lock we hold, before its process exists), and no exec
 * into that container shares our memory again. A mark that cannot be
 * read for certain counts as there. */
#define EXEC_UNSHARED_MARK "exec-unshared"
static int exec_unshared_mark(struct exec_run *X, const struct brig_process *saved, struct brig_error **err)
{
    const struct brig_process *p = &X->spec->process;
    X->unsignalable = false;
    if (!exec_unsignalable(saved)) return 0;                 /* the container's own: never shared */
    if (!exec_unsignalable(p)) {
        int fd = openat(X->dirfd, EXEC_UNSHARED_MARK, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) return brig_fail(err, errno, "exec: mark the container as holding a process of another identity");
        close(fd);
        return 0;
    }
    /* Rootless, the container's processes are our uid on the host (or
     * root of the namespace we run in): they may signal our child. */
    X->unsignalable = !X->rootless && faccessat(X->dirfd, EXEC_UNSHARED_MARK, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
                      errno == ENOENT;
    return 0;
}

static int exec_check_terminal(const struct brig_process *p, const struct brig_exec_opts *o,
                               struct brig_error **err)
{
    if (o->detach && p->terminal && o->console_socket == NULL)
        return brig_failx(err, "exec: cannot allocate tty if brig will detach without setting "
                               "console socket");
    if ((!o->detach || !p->terminal) && o->console_socket != NULL)
        return brig_failx(err, "exec: cannot use console socket if brig will not detach or "
                               "allocate tty");
    return 0;
}

/* The bytes read under the lock decide, also when the caller parsed them
 * already (spec_parse depends on the text and, when it is absolute, the
 * bundle alone). */
static bool exec_parsed_matches(const struct brig_exec_parsed *pre, const char *text, size_t len,
                                const struct brig_state *st)
{
    return pre != NULL && pre->spec != NULL && pre->len == len && memcmp(pre->text, text, len) == 0 &&
           pre->bundle != NULL && pre->bundle[0] == '/' && st->bundle != NULL && strcmp(pre->bundle, st->bundle) == 0;
}

static int exec_load_config(struct exec_run *X, const struct brig_state *st, struct brig_exec_parsed *pre,
                            struct brig_error **err)
{
    autofree char *text = NULL;
    size_t len = 0;
    if (brig_read_file_at(X->dirfd, "config.json", EXEC_CONFIG_MAX, &text, &len, err) < 0)
        return brig_wrap(err, "the container's saved config.json");
    if (exec_parsed_matches(pre, text, len, st)) {
        X->spec = steal_ptr(&pre->spec);
        return 0;
    }
    if (spec_parse(text, len, st->bundle, &X->spec, err) < 0)
        return brig_wrap(err, "the container's saved config.json");
    return 0;
}

/* Rootless (not root on the host: the container has a user namespace of
 * its own, launch_rootless_check): we enter it first, and stay. A pid
 * namespace is joined with CAP_SYS_ADMIN in its owner, that namespace, and
 * a non-dumpable init's /proc/<pid>/ns opens only with CAP_SYS_PTRACE over
 * its mm's, which we have only inside. We have no privilege outside it to
 * lose, our files are the same uid's, we stay non-dumpable (exec_spawn)
 * with our mm the host namespace's (no ptrace of us from the container),
 * and nothing there can see our pid. */
static int exec_rootless_join_user(struct exec_run *X, struct brig_error **err)
{
    if (!X->rootless || geteuid() == 0) return 0;
    if (setns(X->pidfd, CLONE_NEWUSER) < 0) return brig_fail(err, errno, "join the container's user namespace");
    X->user_joined = true;
    return 0;
}

/* Everything checked and opened on the host side before any process. */
static int exec_prepare(const struct brig_globals *g, const struct brig_exec_opts *o,
                        struct exec_run *X, struct brig_error **err)
{
    X->rootless = g->rootless;
    TRY(state_dir_open(g->root, o->id, &X->dirfd, err));
    autostate struct brig_state *st = NULL;
    if (state_read(X->dirfd, &st, err) < 0) return brig_wrap(err, "container %s", o->id);
    enum brig_status status = state_status(X->dirfd, st);
    if (status != BRIG_STATUS_RUNNING)
        return brig_failx(err, "cannot exec in a %s container (it must be running)",
                          state_status_name(status));
    /* A container made with no cgroup (--cgroup-manager disabled, rootless
     * without a delegated one) has none for the process to join either. */
    if (st->cgroup != NULL) TRY(cgroup_load(st->cgroup, &X->cg, err));
    if (X->cg != NULL && cgroup_frozen(X->cg)) return brig_failx(err, "cannot exec in a paused container");
    X->join = o->cgroup ? o->cgroup : X->cg;

    TRY(exec_load_config(X, st, o->parsed, err));
    /* Without a mount namespace of its own the container's root is a
     * chroot (rootfs_shared.c) that setns would not give the new process. */
    const struct brig_namespace *mnt = &X->spec->linux_cfg.namespaces[BRIG_NS_MOUNT];
    if (!mnt->present || mnt->path != NULL)
        return brig_failx(err, "exec: the container has no mount namespace of its own (linux.namespaces): "
                               "refusing to run a process outside its chroot");
    const struct brig_caps saved = X->spec->process.caps;
    const struct brig_process saved_process = { .user.uid = X->spec->process.user.uid,
                                                .no_new_privileges = X->spec->process.no_new_privileges,
                                                .caps = saved };
    TRY(exec_build_process(X->spec, o, err));
    TRY(exec_unshared_mark(X, &saved_process, err));
    TRY(spec_check_supported(X->spec, err));
    /* The trusted side's sandbox policy (the text a sandbox's create read,
     * if any), on the config with this process; under an egress policy the
     * process is told of the proxy. */
    autopolicy struct brig_policy *pol = NULL;
    TRY(policy_resolve_text(g->policy, g->policy_text, &pol, err));
    TRY(policy_enforce_resolved(pol, X->spec, "exec", o->id, err));
    /* as create gave the container's own process (policy_enforce_quota) */
    if (policy_watch_active(X->dirfd)) policy_seccomp_no_fallocate(&X->spec->linux_cfg.seccomp);
    TRY(egress_exec_env(pol, X->spec, o->env, err));
    if (X->spec->linux_cfg.seccomp.present)
        TRY(seccomp_compile_cached(&X->spec->linux_cfg.seccomp, g->root, &X->bpf, err));
    if (spec_annotation_is(X->spec, BRIG_NO_SETID_ANNOTATION, "true"))
        TRY(seccomp_compile_cached(seccomp_setid_filter(), g->root, &X->setid_bpf, err));
    TRY(exec_check_terminal(&X->spec->process, o, err));
    if (o->console_socket != NULL) TRY(console_socket_connect(o->console_socket, &X->console_sock, err));

    int alive = init_pidfd_open(st, &X->pidfd, err);
    if (alive < 0) return -1;
    if (alive == 0) return brig_failx(err, "cannot exec in a stopped container");
    TRY(exec_rootless_join_user(X, err));
    TRY(exec_ns_plan(st->pid, X, err));
    if (X->user_joined) X->ns_flags |= CLONE_NEWUSER;         /* the process's, entered already */
    if (o->trampoline != NULL) TRY(exec_trampoline_check(X, &saved, err));
    return caps_validate(&X->spec->process.caps, (X->ns_flags & CLONE_NEWUSER) != 0, err);
}

/* The trampoline inside the root as execveat will take it: no symlink on
 * the way (nothing renamed can redirect it), no magic link, and the host's
 * file itself (a read-only bind of it), not a copy the container made. */
static int exec_trampoline_open(const struct brig_exec_trampoline *t, int *out, struct brig_error **err)
{
    autoclose int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return brig_fail(err, errno, "open /");
    *out = brig_open_exact_in_root(rootfd, t->path, t->dev, t->ino);
    if (*out < 0)
        return brig_failx(err, "exec: %s in the container is not the host's file: refusing to exec through it",
                          t->path);
    return 0;
}

/* In the new process, still brig: join, confine, exec. */
static int exec_child_run(struct exec_run *X, const struct brig_exec_opts *o, int sync_fd,
                          struct brig_error **err)
{
    const struct brig_process *p = &X->spec->process;
    if (!X->shared_mm) TRY(sync_expect(sync_fd, SYNC_GO, "brig exec went away", NULL, err));
    TRY(session_new(err));                                  /* not the caller's tty */
    /* The container's cgroups, joined by ourselves while we still see the
     * host's cgroupfs with host rights: no RCU grace period to wait for
     * (cgroup_attach_self), before anything of the process runs. */
    if (X->join != NULL) TRY(cgroup_attach_self(X->join, X->cloned_into, err));
    /* Still privileged on the host: limits that may need it go first. */
    TRY(rlimits_apply(p, err));
    TRY(oom_score_adj_apply(p, err));
    TRY(scheduler_apply(p, 0, err));
    TRY(io_priority_apply(p, err));
    TRY(personality_apply(&X->spec->linux_cfg, err));
    /* One setns for all (the kernel enters the user namespace first;
     * rootless, we are in it already). */
    int join = X->ns_flags & ~(X->user_joined ? CLONE_NEWUSER : 0);
    if (join != 0 && setns(X->pidfd, join) < 0)
        return brig_fail(err, errno, "join the container's namespaces (setns 0x%x)", join);
    brig_closep(&X->pidfd);
    /* As root of the container's user namespace (when it maps one) the
     * rest runs as its init's setup did: files made now (the pty) belong
     * to the container, not to an unmapped host uid. */
    if ((X->ns_flags & CLONE_NEWUSER) && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0) &&
        errno != EINVAL)
        return brig_fail(err, errno, "become root in the container's user namespace");
    if (p->terminal) {
        autoclose int master = -1;
        TRY(console_setup(p, false, p->user.uid, &master, err));
        TRY(sync_send_fd(sync_fd, SYNC_CONSOLE, master, err));
        TRY(sync_expect(sync_fd, SYNC_START, "brig exec went away", NULL, err));
    }
    /* Not freed (no autofree): the process execs or exits with them, and
     * no free may run once the heap is off limits, below. */
    char *exe = NULL;
    TRY(proc_find_exec(p, &exe, err));
    char *home = NULL;
    autoclose int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return brig_fail(err, errno, "open /");
    TRY(proc_home_default(rootfd, p, &home, err));
    brig_closep(&rootfd);
    TRY(fds_close_from(3 + o->preserve_fds, sync_fd, err));
    fds_close_cloexec_below(3 + o->preserve_fds, sync_fd);
    /* Opened after the close: it is ours, close-on-exec, and inside the root. */
    autoclose int via = -1;
    if (o->trampoline != NULL) TRY(exec_trampoline_open(o->trampoline, &via, err));
    struct proc_launch l;
    TRY(proc_launch_prepare(p, exe, home, via, o->trampoline ? o->trampoline->path : NULL, -1, &l, err));
    l.setid = X->setid_bpf;
    /* From here to execve or exit, no heap (util/noheap.h): once the
     * identity switch gives this process the container's uid, any process
     * of the container with that uid may SIGKILL or SIGSTOP it (and brig's
     * start timeout then kills it) at any instruction, and in our memory
     * (exec_vm_child) a kill inside malloc would leave brig's heap torn.
     * Until the switch we are uid 0 with brig's caps, and shared only when
     * no process of the container may signal us (exec_unsignalable): the
     * allocations above are safe from it. What runs below: proc_confine and
     * proc_execve (see there), sync_send_error (a message on the stack,
     * sendmsg), brig_errorf (stack buffers, write), exit_group. On in the
     * forked child too, so that both paths are held to it by the tests. */
    brig_noheap_set(true);
    TRY(proc_confine(p, X->bpf, (X->ns_flags & CLONE_NEWUSER) != 0, &l, err));
    return proc_execve(&l, err);
}

__attribute__((noreturn)) static void exec_child(struct exec_run *X, const struct brig_exec_opts *o,
                                                 int sync_fd)
{
    struct brig_error *err = NULL;
    brig_log_set_tag("exec");
    /* Before joining anything: nobody inside may open our /proc/<pid>/exe
     * or ptrace us (docs/security.md). */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
        brig_fail(&err, errno, "prctl PR_SET_DUMPABLE");
    } else {
        /* The state dir's flock is shared with the parent's open file. */
        brig_closep(&X->dirfd);
        brig_closep(&X->sync_fd);
        brig_closep(&X->console_sock);
        exec_child_run(X, o, sync_fd, &err);
    }
    if (sync_send_error(sync_fd, err) < 0) brig_errorf("%s", err ? err->msg : "exec failed");
    /* _exit's syscall, not a call of a noreturn function: before those
     * ASan unpoisons "the stack", which it takes to be the parent's
     * (exec_vm_child). */
    for (;;) syscall(SYS_exit_group, 127);
}

/* setns(pid) only changes the namespace of our next child: the caller
 * clones, then goes back to our own through *saved (-1: nothing joined). */
static int exec_pidns_enter(struct exec_run *X, int *saved, struct brig_error **err)
{
    *saved = -1;
    if (!X->join_pid) return 0;
    /* Rootless, our own pid namespace cannot be entered back (its owner
     * is the host's user namespace, where we have no privilege): brig exec
     * forks nothing after its process. */
    if (X->rootless) {
        if (setns(X->pidfd, CLONE_NEWPID) < 0) return brig_fail(err, errno, "join the container's pid namespace");
        return 0;
    }
    *saved = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
    if (*saved < 0) return brig_fail(err, errno, "open /proc/self/ns/pid");
    if (setns(X->pidfd, CLONE_NEWPID) < 0) return brig_fail(err, errno, "join the container's pid namespace");
    return 0;
}

static pid_t exec_fork(struct exec_run *X, const struct brig_exec_opts *o, int child_end,
                       struct brig_error **err)
{
    autoclose int saved = -1;
    TRY(exec_pidns_enter(X, &saved, err));
    /* Born in the v2 cgroup where there is one; the child joins the v1
     * hierarchies itself. A fork, otherwise (no namespace flags). */
    bool cloned_into = false;
    pid_t pid = launch_clone(0, cgroup_clone_fd_open(X->join), &cloned_into);
    if (pid == 0) {
        X->cloned_into = cloned_into;
        exec_child(X, o, child_end);
    }
    int fork_errno = errno;
    if (saved >= 0 && setns(saved, CLONE_NEWPID) < 0) {
        brig_fail(err, errno, "restore our pid namespace");
        if (pid > 0) X->pid = pid;
        return -1;
    }
    if (pid < 0) return brig_fail(err, fork_errno, "fork");
    return pid;
}

/* Until the child's execve (EOF on the sync socket), within timeout_ms
 * when set: a process of the container can stop our child once it has
 * the container's uid, and a stopped child would hold us for ever. */
static int exec_wait_started(int sync_fd, uint64_t timeout_ms, struct brig_error **err)
{
    struct timeval tv = { .tv_sec = (time_t)(timeout_ms / 1000), .tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000 };
    if (timeout_ms > 0 && setsockopt(sync_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
        return brig_fail(err, errno, "sync: set a receive timeout");
    int rc = sync_wait_exec(sync_fd, err);
    if (rc < 0 && timeout_ms > 0 && *err != NULL && ((*err)->errnum == EAGAIN || (*err)->errnum == EWOULDBLOCK)) {
        brig_error_freep(err);
        return brig_fail(err, ETIMEDOUT, "exec: the process did not reach its execve within %llu ms (stopped?)",
                         (unsigned long long)timeout_ms);
    }
    return rc;
}

/* The child may run in our memory until its execve (spawn_vm.h) unless
 * something of its setup needs a process of its own. */
static bool exec_shares_mm(const struct exec_run *X)
{
    const struct brig_process *p = &X->spec->process;
    /* The console goes back and forth with us during setup (sync, fds). */
    if (p->terminal) return false;
    /* setns refuses a shared mm for a time namespace (timens_install:
     * current_is_single_threaded); userns_install wants only a thread
     * group and an fs_struct of its own, as our CLONE_VM child has. A user
     * namespace must be a child of ours: nothing in it then holds a
     * capability over our mm (exec_unsignalable). */
    if (X->ns_flags & CLONE_NEWTIME) return false;
    if ((X->ns_flags & CLONE_NEWUSER) && !X->userns_child) return false;
    /* A write to /proc/self/oom_score_adj sets every process of the mm
     * (__set_oom_adj): ours too. */
    if (p->has_oom_score_adj) return false;
    /* Before its identity switch the child allocates: only when nothing
     * of the container may kill it there (exec_unsignalable). */
    if (!X->unsignalable) return false;
    return spawn_vm_available();
}

struct exec_vm_arg {
    const struct exec_run *X;
    const struct brig_exec_opts *o;
    int sync_fd;
    bool cloned_into;           /* spawn_vm_start's */
};

/* The child, on its own stack in our memory. It ends in execve or _exit
 * (exec_child), never back in our frames. What it writes of ours the
 * parent does not read until it is gone, or restores then (the log fd and
 * tag): its run state is a copy, since it closes fds and marks them -1 in
 * it. Beware: abort() and raise() here would aim at the parent's thread
 * id (the TLS is the parent's); nothing on this path calls them. Nor may
 * it call a noreturn function from instrumented code: ASan would unpoison
 * what it knows as this thread's stack, ours (it warns and does not). */
__attribute__((no_sanitize_address)) static int exec_vm_child(void *arg)
{
    const struct exec_vm_arg *a = arg;
    struct exec_run own = *a->X;
    own.cloned_into = a->cloned_into;
    exec_child(&own, a->o, a->sync_fd);
}

static int exec_vm_result(enum spawn_vm_end end, const struct sync_msg *m, int recv_errno,
                          uint64_t timeout_ms, struct brig_error **err)
{
    switch (end) {
    case SPAWN_VM_EXECED:
        return 0;
    case SPAWN_VM_ERROR: {
        int rc = brig_failx(err, "%s", m->len ? m->payload : "unknown error");
        if (*err != NULL) sync_errnum_apply(*err, m->errnum);
        return rc;
    }
    case SPAWN_VM_TIMEOUT:
        return brig_fail(err, ETIMEDOUT, "exec: the process did not reach its execve within %llu ms (stopped?)",
                         (unsigned long long)timeout_ms);
    case SPAWN_VM_RECV_FAILED:
        break;
    }
    return brig_fail(err, recv_errno, "sync receive");
}

/* Start the child in our memory and wait, within start_timeout_ms, until
 * it has left it (execve, or exit after its error). Between the clone and
 * that moment we run at the same time as the child in one address space
 * with one TLS: raw syscalls only (no malloc, no stdio, no errno). */
static int exec_spawn_shared(struct exec_run *X, const struct brig_exec_opts *o, int *child_end,
                             struct brig_error **err)
{
    uint64_t ms = o->start_timeout_ms;
    struct timeval tv = { .tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000 };
    if (ms > 0 && setsockopt(X->sync_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
        return brig_fail(err, errno, "sync: set a receive timeout");
    autoclose int saved = -1;
    TRY(exec_pidns_enter(X, &saved, err));
    const int log_fd = brig_log_fd();
    const char *log_tag = brig_log_tag();
    X->shared_mm = true;
    struct exec_vm_arg a = { .X = X, .o = o, .sync_fd = *child_end };
    struct spawn_vm s;
    if (spawn_vm_start(&s, cgroup_clone_fd_open(X->join), exec_vm_child, &a, &a.cloned_into, err) < 0) {
        if (saved >= 0 && setns(saved, CLONE_NEWPID) < 0) {
            brig_error_freep(err);
            return brig_fail(err, errno, "restore our pid namespace");
        }
        return -1;
    }
    /* Raw syscalls only from here (spawn_vm.h). */
    long back = saved >= 0 ? spawn_vm_sys(SYS_setns, saved, CLONE_NEWPID, 0, 0, 0) : 0;
    spawn_vm_sys(SYS_close, *child_end, 0, 0, 0, 0);
    *child_end = -1;
    struct sync_msg m;
    int recv_errno = 0;
    enum spawn_vm_end end = spawn_vm_wait_gone(&s, X->sync_fd, &m, &recv_errno);
    /* The child turned the heap off once done with it, before its identity
     * switch (exec_child_run). Gone without an error before that, it was
     * killed where it may have been inside malloc or free: by our start
     * timeout (a child starved of CPU in the container's cgroup), or by
     * what exec_unsignalable cannot see (a root process an earlier
     * `exec --user 0` left). Our heap may be torn: leave without touching
     * it, as a brig that was killed (what it held is cleaned up as such). */
    if (!brig_noheap() && end != SPAWN_VM_ERROR) {
        static const char msg[] = "brig: exec: the process was killed before it was done with brig's "
                                  "memory: brig exits without touching its heap\n";
        spawn_vm_sys(SYS_write, o->stderr_fd > 0 ? o->stderr_fd : 2, (long)msg, sizeof(msg) - 1, 0, 0);
        for (;;) spawn_vm_sys(SYS_exit_group, 125, 0, 0, 0, 0);
    }
    /* The child is out of our memory: libc, and the heap, again. */
    brig_noheap_set(false);
    spawn_vm_release(&s);
    brig_log_set_fd(log_fd);
    brig_log_set_tag(log_tag);
    X->pid = s.pid;
    brig_debug("exec: process is pid %d (in our memory until its execve)", (int)s.pid);
    if (back < 0) return brig_fail(err, (int)-back, "restore our pid namespace");
    return exec_vm_result(end, &m, recv_errno, ms, err);
}

/* Parent: start the process and see it through to execve. */
static int exec_spawn(struct exec_run *X, const struct brig_exec_opts *o, struct brig_error **err)
{
    int sv[2];
    TRY(sync_socketpair(sv, err));
    X->sync_fd = sv[0];
    autoclose int child_end = sv[1];
    /* Non-dumpable before the clone: the child is so from its birth, not
     * from its first prctl (a fork's mm is a copy of ours; a shared one is
     * ours), and across its uid switch (proc_confine sets it again). We
     * stay so: nothing outside needs to ptrace brig. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) return brig_fail(err, errno, "prctl PR_SET_DUMPABLE");
    if (exec_shares_mm(X)) return exec_spawn_shared(X, o, &child_end, err);
    pid_t pid = exec_fork(X, o, child_end, err);
    if (pid < 0) return -1;
    X->pid = pid;
    brig_closep(&child_end);
    brig_debug("exec: process is pid %d", (int)pid);

    TRY(sync_send(X->sync_fd, SYNC_GO, NULL, err));    /* the child joins its cgroups */
    static const char eof[] = "exec: the process exited during setup";
    if (X->spec->process.terminal) {
        TRY(sync_expect_fd(X->sync_fd, SYNC_CONSOLE, eof, &X->console_fd, err));
        if (X->console_sock >= 0) {
            TRY(console_socket_send(X->console_sock, X->console_fd, err));
            brig_closep(&X->console_fd);
            brig_closep(&X->console_sock);
        } else {
            TRY(waiter_pty_prepare(X->console_fd, err));
        }
        TRY(sync_send(X->sync_fd, SYNC_START, NULL, err));
    }
    return exec_wait_started(X->sync_fd, o->start_timeout_ms, err);
}

static void exec_release(struct exec_run *X)
{
    brig_closep(&X->dirfd);
    brig_closep(&X->pidfd);
    brig_closep(&X->sync_fd);
    brig_closep(&X->console_sock);
    brig_closep(&X->console_fd);
    if (X->cg != NULL) cgroup_free(X->cg);
    seccomp_bpf_free(X->bpf);
    seccomp_bpf_free(X->setid_bpf);
    spec_free(X->spec);
}

int container_exec(const struct brig_globals *g, const struct brig_exec_opts *o, int *exit_status,
                   struct brig_error **err)
{
    struct exec_run X = { .dirfd = -1, .pidfd = -1, .sync_fd = -1, .console_sock = -1,
                          .console_fd = -1 };
    sigset_t set, old;
    waiter_signals(&set);
    /* Blocked before the fork so none is lost; the child unblocks them. */
    sigprocmask(SIG_BLOCK, &set, &old);
    int rc = exec_prepare(g, o, &X, err);
    if (rc == 0) rc = exec_spawn(&X, o, err);
    if (rc == 0 && o->pid_file != NULL) rc = launch_write_pid_file(o->pid_file, X.pid, err);
    if (rc < 0) {
        if (X.pid > 0) {
            kill(X.pid, SIGKILL);
            while (waitpid(X.pid, NULL, 0) < 0 && errno == EINTR) {}
        }
        exec_release(&X);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return brig_wrap(err, "exec %s", o->id);
    }
    brig_closep(&X.dirfd);      /* unlock: the container may be used while this runs */
    if (o->pid_out != NULL) *o->pid_out = X.pid;
    *exit_status = 0;
    if (!o->detach) {
        if (X.console_fd >= 0)
            rc = waiter_attach_pty(X.pid, X.console_fd, &set, exit_status, err);
        else
            *exit_status = waiter_forward(X.pid, &set);
    }
    /* detached: the process is reparented to our parent's subreaper (the
     * shim, conmon) when we exit, as with runc. */
    exec_release(&X);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}
