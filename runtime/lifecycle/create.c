/* create and run (runtime.md "Operations: Create", "Lifecycle" steps 1-5).
 * The parent validates everything first, then clones the container's init
 * and drives it through linux/child.c over the sync socket. */
#include "container.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../config/bundle.h"
#include "../config/spec.h"
#include "../../egress/egress.h"
#include "../../policy/policy.h"
#include "../linux/caps.h"
#include "../linux/cgroup/cgroup.h"
#include "cgroup_ops.h"
#include "../linux/child.h"
#include "../linux/console.h"
#include "../linux/exe_seal.h"
#include "../linux/exe_trampoline.h"
#include "../linux/identity.h"
#include "../linux/ns.h"
#include "../linux/process_attrs.h"
#include "../linux/rootfs/rootfs.h"
#include "../linux/seccomp.h"
#include "../linux/seccomp_cache.h"
#include "../linux/sync.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/strutil.h"
#include "hooks.h"
#include "launch.h"
#include "state.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* Our own copy: <linux/sched.h> clashes with <sched.h>. */
struct brig_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
        set_tid, set_tid_size, cgroup;
};

pid_t launch_clone(unsigned long ns_flags, int cgroup_fd, bool *cloned_into)
{
    struct brig_clone_args a = { .flags = ns_flags, .exit_signal = SIGCHLD };
    if (cgroup_fd >= 0) {
        a.flags |= CLONE_INTO_CGROUP;
        a.cgroup = (uint64_t)cgroup_fd;
        pid_t pid = (pid_t)syscall(SYS_clone3, &a, sizeof(a));
        if (pid >= 0) {
            *cloned_into = true;
            return pid;
        }
        brig_debug("clone3 CLONE_INTO_CGROUP: %s; falling back", strerror(errno));
        a.flags &= ~CLONE_INTO_CGROUP;
        a.cgroup = 0;
    }
    *cloned_into = false;
    pid_t pid = (pid_t)syscall(SYS_clone3, &a, sizeof(a));
    if (pid < 0 && errno == ENOSYS) pid = (pid_t)syscall(SYS_clone, ns_flags | SIGCHLD, 0, 0, 0, 0);
    return pid;
}

int launch_write_pid_file(const char *path, pid_t pid, struct brig_error **err)
{
    autofree char *dir_copy = brig_strdup(path);
    autofree char *base_copy = brig_strdup(path);
    autoclose int dfd = open(dirname(dir_copy), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return brig_fail(err, errno, "--pid-file %s", path);
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%d", (int)pid);
    if (brig_write_file_atomic(dfd, basename(base_copy), buf, (size_t)n, 0644, err) < 0)
        return brig_wrap(err, "--pid-file %s", path);
    return 0;
}

/* runc's checkTerminal: a detached container's pty needs somewhere to go,
 * and a console socket without a pty (or with brig attached) is a mistake. */
static int launch_check_terminal(const struct brig_process *p, const char *console_socket,
                                 bool detached, struct brig_error **err)
{
    if (detached && p->terminal && console_socket == NULL)
        return brig_failx(err, "process.terminal: cannot allocate tty if brig will detach "
                               "without setting console socket");
    if ((!detached || !p->terminal) && console_socket != NULL)
        return brig_failx(err, "--console-socket: cannot use console socket if brig will not "
                               "detach or allocate tty");
    return 0;
}

static struct brig_state *launch_state_new(const struct brig_spec *s, const char *id)
{
    struct brig_state *st = brig_calloc(1, sizeof(*st));
    st->id = brig_strdup(id);
    st->bundle = brig_strdup(s->bundle);
    st->oci_version = brig_strdup(s->oci_version);
    st->rootfs = brig_strdup(s->root.path);
    char now[BRIG_TIME_LEN];
    st->created = brig_strdup(brig_time_now_rfc3339(now, sizeof(now)));
    st->n_annotations = s->n_annotations;
    st->annotations = brig_calloc(s->n_annotations + 1, sizeof(*st->annotations));
    for (size_t i = 0; i < s->n_annotations; i++) {
        st->annotations[i].key = brig_strdup(s->annotations[i].key);
        st->annotations[i].value = brig_strdup(s->annotations[i].value);
    }
    return st;
}

/* Whether create makes a cgroup, and where. Rootless, only below the
 * cgroup v2 subtree systemd delegates to the caller; without one (a hybrid
 * or v1 host, or brig started outside it) there is none, and whatever asks
 * for limits is refused, saying how to get one. */
static int launch_cgroup_plan(struct launch *L, const struct brig_globals *g, struct brig_error **err)
{
    L->no_cgroup = g->no_cgroup;
    L->rootless = g->rootless;
    if (g->no_cgroup) return cgroup_disabled_check(L->spec, L->policy != NULL, NULL, err);
    if (!g->rootless) return 0;
    autofree char *why = NULL;
    if (cgroup_delegation_find(&L->cg_delegated, &why) == 0) return 0;
    L->no_cgroup = true;
    brig_debug("cgroup: rootless, none: %s", why);
    /* The policy in force may let its limits go (rootless.limits). */
    if (L->policy != NULL && L->policy->rootless.limits_optional) {
        L->limits_skipped = brig_asprintf("rootless brig (uid %u) has no cgroup: %s", (unsigned)geteuid(), why);
        if (!g->quiet_limits)
            brig_warn("policy %s: its limits are not applied (rootless.limits is optional): %s", L->policy->name,
                      L->limits_skipped);
        return 0;
    }
    return cgroup_disabled_check(L->spec, L->policy != NULL, why, err);
}

/* workspace.maxSize where neither the workspace's filesystem nor a project
 * quota keeps it is kept by staging, which mounts a tmpfs and an overlay on
 * the host: not for a rootless brig. Refused, naming the fix, unless the
 * policy lets its limits go (rootless.limits), then reported like a missing
 * cgroup. */
static int launch_stage_plan(struct launch *L, const struct brig_globals *g, struct brig_error **err)
{
    if (!g->rootless) return 0;
    for (size_t i = 0; i < L->spec->n_mounts; i++) {
        struct brig_mount *m = &L->spec->mounts[i];
        /* (nor by its watch: the watcher reads every directory of it and
         * kills the container's processes, with privileges on the host) */
        if (m->stage_bytes == 0 && m->watch_bytes == 0) continue;
        if (m->stage_bytes == 0) m->stage_bytes = m->watch_bytes;
        m->watch_bytes = 0;
        if (L->policy == NULL || !L->policy->rootless.limits_optional)
            return brig_failx(err, "workspace.maxSize: rootless brig (uid %u) cannot bound the workspace %s: its "
                              "filesystem is larger than %llu bytes without project quotas, and neither its watch nor "
                              "its stage (a tmpfs mounted on the host) is a rootless brig's to make; give it a workspace on a filesystem of at most that size "
                              "(a tmpfs with size=, a loop-mounted image), or let the policy's limits go for "
                              "rootless use (\"rootless\": {\"limits\": \"optional\"}, docs/rootless.md)",
                              (unsigned)geteuid(), m->source, (unsigned long long)m->stage_bytes);
        char *why = brig_asprintf("%s%sthe workspace %s is not bounded to workspace.maxSize %llu bytes (staging "
                                  "needs a tmpfs mounted on the host)", L->limits_skipped ? L->limits_skipped : "",
                                  L->limits_skipped ? "; " : "", m->source, (unsigned long long)m->stage_bytes);
        free(L->limits_skipped);
        L->limits_skipped = why;
        if (!g->quiet_limits)
            brig_warn("policy %s: workspace.maxSize is not applied (rootless.limits is optional): %s",
                      L->policy->name, why);
        m->stage_bytes = 0;
    }
    return 0;
}

/* A user that is not root has no privilege but in a user namespace of its
 * own: the config must make one (uid 0 of a namespace that is not the
 * host's, as under rootless podman, has its privilege there already). */
static int launch_rootless_check(const struct launch *L, const struct brig_globals *g,
                                 struct brig_error **err)
{
    if (!g->rootless || geteuid() == 0 || L->ns.new_user || L->ns.join_fds[BRIG_NS_USER] >= 0) return 0;
    return brig_failx(err, "linux.namespaces: rootless brig (uid %u) needs a user namespace: add "
                      "{\"type\": \"user\"} with linux.uidMappings and linux.gidMappings of your ids "
                      "(brig spec --rootless and runc spec --rootless write them)", (unsigned)geteuid());
}

/* The container's own user namespace: instead of one the config asks
 * for, and mapping every id the process takes. */
static int launch_userns_own_check(const struct brig_spec *s, const struct brig_userns_own *u,
                                   struct brig_error **err)
{
    if (s->linux_cfg.namespaces[BRIG_NS_USER].present)
        return brig_failx(err, "linux.namespaces: a user namespace, besides the one brig makes for the "
                               "container: refusing both");
    const struct brig_user *p = &s->process.user;
    if (u->size == 0 || p->uid >= u->size || p->gid >= u->size)
        return brig_failx(err, "process.user: %u:%u is outside the container's user namespace (ids 0-%u)",
                          p->uid, p->gid, u->size ? u->size - 1 : 0);
    for (size_t i = 0; i < p->n_additional_gids; i++)
        if (p->additional_gids[i] >= u->size)
            return brig_failx(err, "process.user.additionalGids[%zu]: %u is outside the container's user "
                              "namespace (ids 0-%u)", i, p->additional_gids[i], u->size - 1);
    return 0;
}

/* `brig run` runs unsealed when nothing of the container can reach a
 * process that runs brig's binary (linux/exe_trampoline.h): its process is
 * then exec'd through the sealed trampoline, and run holds the state dir's
 * lock until that exec (run.c: no `brig exec` joins the init before).
 * Otherwise, and for `create` (a created init waits in brig's binary for
 * as long as its start takes), brig re-executes itself from a sealed copy
 * now, before it has changed anything, and the copy starts over sealed. */
static int launch_seal_decide(struct launch *L, const struct brig_create_opts *o, bool run_mode,
                              struct brig_error **err)
{
    if (o->seal_decided || exe_seal_active()) return 0;
    const char *why = "create: its init waits for its start";
    if (run_mode && exe_trampoline_suffices(L->spec, &why)) {
        L->trampoline = true;
        return 0;
    }
    brig_debug("%s: from a sealed copy of brig (%s)", run_mode ? "run" : "create", why);
    return exe_seal_deferred(err);
}

/* Everything that can be checked before any process, cgroup or state
 * exists: a bad config changes nothing. */
static int launch_validate(struct launch *L, const struct brig_globals *g,
                           const struct brig_create_opts *o, bool run_mode, struct brig_error **err)
{
    TRY(state_validate_id(o->id, err));
    /* The CLI hands over the bundle resolved already (realpath at call
     * time, as runc); only a relative or missing one is resolved here. */
    char bundle[PATH_MAX];
    if (o->bundle != NULL && o->bundle[0] == '/') {
        if (snprintf(bundle, sizeof(bundle), "%s", o->bundle) >= (int)sizeof(bundle))
            return brig_fail(err, ENAMETOOLONG, "bundle %s", o->bundle);
    } else if (brig_realpath(o->bundle ? o->bundle : ".", bundle) == NULL) {
        return brig_fail(err, errno, "bundle %s", o->bundle ? o->bundle : ".");
    }
    /* The bundle, config.json and root.path are each opened once; what
     * was opened is what the policy judges and the init uses (bundle.h). */
    struct brig_bundle b;
    if (o->config_text != NULL)     /* built in memory (brig sandbox) */
        TRY(bundle_open_text(bundle, o->config_text, &b, err));
    else
        TRY(bundle_open(bundle, "config.json", &b, err));
    L->bundle_fd = steal_fd(&b.dirfd);
    L->config_text = steal_ptr(&b.config);
    L->config_len = b.config_len;
    int r = spec_parse(L->config_text, L->config_len, b.path, &L->spec, err);
    bundle_close(&b);
    if (r < 0) return brig_wrap(err, "config.json");
    TRY(spec_check_supported(L->spec, err));
    TRY(launch_seal_decide(L, o, run_mode, err));
    TRY(rootfs_open(L->bundle_fd, L->spec, &L->root_fd, err));
    /* The trusted side's sandbox policy (--policy, /etc/brig/policy.json),
     * resolved once: run audits its exit and its delete under it. */
    TRY(policy_resolve_text(g->policy, g->policy_text, &L->policy, err));
    TRY(policy_enforce_resolved(L->policy, L->spec, "create", o->id, err));
    TRY(launch_cgroup_plan(L, g, err));
    TRY(launch_stage_plan(L, g, err));
    TRY(egress_prepare(L->policy, L->spec, err));     /* the proxy's env (docs/egress.md) */
    /* A state that state_read could not take back would strand the init. */
    L->st = launch_state_new(L->spec, o->id);
    TRY(state_check_size(L->st, err));
    TRY(sysctl_validate(L->spec, err));
    TRY(hostname_validate(L->spec, err));
    TRY(scheduler_validate(&L->spec->process, err));
    /* Compiled once per profile, then loaded from the state root's cache. */
    if (L->spec->linux_cfg.seccomp.present)
        TRY(seccomp_compile_cached(&L->spec->linux_cfg.seccomp, g->root, &L->bpf, err));
    if (spec_annotation_is(L->spec, BRIG_NO_SETID_ANNOTATION, "true"))
        TRY(seccomp_compile_cached(seccomp_setid_filter(), g->root, &L->setid_bpf, err));
    TRY(launch_check_terminal(&L->spec->process, o->console_socket, !run_mode || o->detach, err));
    if (o->console_socket != NULL) TRY(console_socket_connect(o->console_socket, &L->console_sock, err));
    TRY(ns_plan_prepare(L->spec, &L->ns, err));
    L->ns_ready = true;
    TRY(launch_rootless_check(L, g, err));
    if (L->ns.new_mnt) TRY(mounts_bind_prepare(L->spec, L->ns.new_user, g->rootless, err));
    /* What would fail only after `start` is refused now, as runc does. */
    bool in_userns = L->ns.new_user || L->ns.join_fds[BRIG_NS_USER] >= 0 || o->userns != NULL;
    if (o->userns != NULL) TRY(launch_userns_own_check(L->spec, o->userns, err));
    TRY(caps_validate(&L->spec->process.caps, in_userns, err));
    TRY(identity_validate(L->spec, L->ns.new_user, err));
    return 0;
}

/* The cgroup about to be made goes to state.json before its first mkdir:
 * a brig killed from then on leaves a state `delete --force` cleans up. */
static int launch_record_cgroup(const char *planned, void *arg, struct brig_error **err)
{
    struct launch *L = arg;
    free(L->st->cgroup);
    L->st->cgroup = brig_strdup(planned);
    return state_write(L->dirfd, L->st, err);
}

/* State directory, config copy, cgroup and (for create) exec.fifo. */
static int launch_resources(struct launch *L, const struct brig_globals *g, const char *id,
                            bool run_mode, bool cgroup_fresh, struct brig_error **err)
{
    TRY(state_dir_make(g->root, id, &L->rootfd, &L->dirfd, err));
    L->state_dir_made = true;
    TRY(state_write_config(L->dirfd, L->config_text, L->config_len, err));
    /* workspace.maxSize kept by staging (policy/workspace/): in the state dir */
    bool staged = false;
    if (policy_stage_make(L->spec, L->dirfd, &staged, err) < 0) {
        state_root_hint(err);   /* its record and mount point are in the state dir */
        return -1;
    }
    if (staged && L->ns.new_mnt) TRY(mounts_bind_prepare(L->spec, L->ns.new_user, g->rootless, err));
    if (!L->no_cgroup)
        TRY(cgroup_create_recorded(L->spec, id, g->systemd_cgroup, L->cg_delegated, cgroup_fresh,
                                   launch_record_cgroup, L, &L->cg, err));
    if (!run_mode) {
        if (mkfifoat(L->dirfd, "exec.fifo", 0600) < 0) {
            brig_fail(err, errno, "mkfifo exec.fifo");
            return state_root_hint(err);
        }
        L->fifo_fd = openat(L->dirfd, "exec.fifo", O_RDWR | O_CLOEXEC);
        if (L->fifo_fd < 0) return brig_fail(err, errno, "open exec.fifo");
        if (sync_listen_at(L->dirfd, SYNC_START_SOCK, &L->start_sock, err) < 0) return state_root_hint(err);
    }
    /* The planned cgroup is already on disk; it differs from what was made
     * only when someone else made one of its directories meanwhile (then
     * that one is not ours to remove: record the truth). */
    autofree char *made = cgroup_serialize(L->cg);
    if (L->st->cgroup != NULL && made != NULL && strcmp(made, L->st->cgroup) == 0) return 0;
    free(L->st->cgroup);
    L->st->cgroup = steal_ptr(&made);
    return state_write(L->dirfd, L->st, err);
}

/* No mount namespace of its own (rootfs_shared.c): the init's bind of the
 * root, in the namespace it inherited (ours) or joined, goes to
 * state.json before it is attached, so that delete (or launch_undo)
 * detaches it whatever happens next. */
static int launch_record_shared_mnt(struct launch *L, const struct stat *own_mntns, const char *eof,
                                    struct brig_error **err)
{
    autofree char *text = NULL;
    TRY(sync_expect(L->sync_fd, SYNC_SHARED_MNT, eof, &text, err));
    struct rootfs_shared_mnt *m = &L->st->shared_mnt;
    if (text == NULL || rootfs_shared_parse(text, m) < 0)
        return brig_failx(err, "the container's init sent no record of its root's bind");
    free(m->ns_path);
    m->ns_path = NULL;
    int joined = L->ns.join_fds[BRIG_NS_MOUNT];
    struct stat ns;
    if (joined >= 0) {
        if (fstat(joined, &ns) < 0) return brig_fail(err, errno, "stat the joined mount namespace");
        m->ns_path = brig_strdup(L->spec->linux_cfg.namespaces[BRIG_NS_MOUNT].path);
    } else {
        ns = *own_mntns;
    }
    m->ns_dev = ns.st_dev;
    m->ns_ino = ns.st_ino;
    L->st->has_shared_mnt = true;
    TRY(state_write(L->dirfd, L->st, err));
    return sync_send(L->sync_fd, SYNC_SHARED_MNT_ACK, NULL, err);
}

/* Clone the init and take it to "created". */
static int launch_init(struct launch *L, const struct brig_create_opts *o, struct brig_error **err)
{
    int sv[2];
    TRY(sync_socketpair(sv, err));
    L->sync_fd = sv[0];
    autoclose int child_end = sv[1];

    TRY(ns_parent_before_clone(L->spec, &L->ns, err));
    bool cloned_into = false;
    /* The init joins its cgroups itself (no RCU grace period to wait for,
     * see cgroup_attach_self) unless it is born in a new user namespace,
     * where it has no rights on the host's cgroups. Either way it is in them
     * before it sends SYNC_HOOKS: before any hook or process of the container. */
    bool self_attach = !L->ns.new_user;
    /* The init checks it is not in this mount namespace before it changes
     * any mount (rootfs_prepare). */
    struct stat caller_mntns;
    if (stat("/proc/self/ns/mnt", &caller_mntns) < 0)
        return brig_fail(err, errno, "stat /proc/self/ns/mnt");
    /* The egress proxy prepares (in its cgroup, a child of the container's)
     * while the init is made; forked before the clone, it holds nothing of
     * the container's. */
    if (egress_start(L->policy, L->st->id, L->cg, &L->egress, err) < 0)
        return brig_wrap(err, "network (policy %s)", L->policy->name);
    /* The workspace's watcher (workspace.maxSize, policy/workspace/watch.c):
     * in its cgroup, a child of the container's, forked the same way (a
     * supervised run's later: policy.h). */
    TRY(policy_watch_start(L->spec, L->st->id, L->dirfd, L->cg, o->watch_later, &L->wswatch, err));
    /* Decided here, not in the child: there geteuid() answers in the new
     * user namespace, 0 once the maps this parent writes are in, and a
     * child that looked after them made itself non-dumpable before its
     * gid_map was written (EACCES: the rootless create failed now and then). */
    bool dumpable_until_go = L->ns.new_user && geteuid() != 0;
    L->pid = launch_clone(L->ns.clone_flags, cgroup_clone_fd(L->cg), &cloned_into);
    if (L->pid == 0) {
        /* The state dir's flock belongs to the open file, which we share:
         * keeping it would block every later command on this container. */
        brig_closep(&L->dirfd);
        brig_closep(&L->rootfd);
        brig_closep(&L->sync_fd);
        brig_closep(&L->console_sock);
        brig_closep(&L->bundle_fd);
        struct child_ctx c = {
            .spec = L->spec, .bpf = L->bpf, .setid_bpf = L->setid_bpf, .ns = &L->ns, .sync_fd = child_end,
            .cg = self_attach ? L->cg : NULL, .cloned_into = cloned_into,
            .fifo_fd = L->fifo_fd, .start_sock = L->start_sock, .no_pivot = o->no_pivot,
            .preserve_fds = o->preserve_fds,
            .caller_mntns = &caller_mntns,
            .userns_base = o->userns ? o->userns->base : 0,
            .userns_size = o->userns ? o->userns->size : 0,
            .dumpable_until_go = dumpable_until_go, .rootless = L->rootless,
            .trampoline = L->trampoline,
        };
        child_main(&c);
    }
    int clone_errno = errno;
    TRY(ns_parent_after_clone(&L->ns, err));
    if (L->pid < 0) return brig_fail(err, clone_errno, "clone container init");
    brig_closep(&child_end);
    brig_closep(&L->fifo_fd);       /* only the init may hold it: start sees ENXIO once it is gone */
    brig_closep(&L->start_sock);
    brig_closep(&L->root_fd);       /* the init has its copy */
    brig_closep(&L->bundle_fd);
    mounts_bind_release(L->spec);   /* the init has its copies of the clones */
    brig_debug("container init is pid %d", (int)L->pid);
    if (o->userns != NULL && o->userns->born != NULL) TRY(o->userns->born(o->userns->arg, L->pid, err));

    if (!self_attach && L->cg != NULL) TRY(cgroup_attach(L->cg, L->pid, cloned_into, err));
    if (L->ns.new_user) TRY(ns_write_id_maps(L->spec, L->pid, err));
    /* Rootless, the proxy listens through the init's user namespace, whose
     * files only its owner opens, and only until its go (egress_hold_ns). */
    if (L->rootless && L->ns.new_user && geteuid() != 0) TRY(egress_hold_ns(L->egress, L->pid, err));
    TRY(sync_send(L->sync_fd, SYNC_GO, NULL, err));

    static const char eof[] = "container init exited during setup";
    if (!L->ns.new_mnt && rootfs_shared_needs_mount(L->spec))
        TRY(launch_record_shared_mnt(L, &caller_mntns, eof, err));
    TRY(sync_expect(L->sync_fd, SYNC_HOOKS, eof, NULL, err));
    /* In its cgroups now (joined before SYNC_HOOKS), and inherited by
     * everything it runs: set from here, with host privileges, as crun. */
    TRY(scheduler_apply(&L->spec->process, L->pid, err));
    L->st->pid = L->pid;
    L->st->pid_start_time = state_pid_start_time(L->pid);
    /* The pid goes to state.json now only for the hooks of create, which
     * may ask `brig state` (they get it on stdin too); otherwise the write
     * that says "created" records it. Until then `brig state` reads
     * "creating" either way (the create operation has not finished: start
     * is not possible yet), and a brig killed meanwhile leaves the init in
     * its cgroup (joined before SYNC_HOOKS), where `delete --force` kills
     * it, while it exits by itself on the sync socket's EOF. */
    if (hooks_any(L->spec, BRIG_HOOK_PRESTART, BRIG_HOOK_CREATE_CONTAINER))
        TRY(state_write(L->dirfd, L->st, err));
    /* The state the hooks of create read on stdin (prestart and
     * createRuntime here, createContainer and startContainer in the init);
     * without any, the init gets no payload. Its status is "created", as
     * crun's: runtime.md's "created" is "after step 2 in the lifecycle"
     * (the environment made), and these hooks are steps 3 to 5. */
    autofree char *state_json = NULL;
    if (hooks_any(L->spec, BRIG_HOOK_PRESTART, BRIG_HOOK_START_CONTAINER))
        state_json = state_to_oci_json(L->st, BRIG_STATUS_CREATED, false);
    TRY(hooks_run(L->spec, BRIG_HOOK_PRESTART, state_json, err));
    TRY(hooks_run(L->spec, BRIG_HOOK_CREATE_RUNTIME, state_json, err));
    TRY(sync_send(L->sync_fd, SYNC_HOOKS_DONE, state_json, err));
    if (L->spec->process.terminal)
        TRY(sync_expect_fd(L->sync_fd, SYNC_CONSOLE, eof, &L->console_fd, err));
    if (o->userns != NULL) {
        TRY(sync_expect(L->sync_fd, SYNC_USERNS, eof, NULL, err));
        TRY(ns_own_write_maps(L->pid, o->userns->base, o->userns->size, err));
        TRY(sync_send(L->sync_fd, SYNC_USERNS_DONE, NULL, err));
    }
    TRY(sync_expect(L->sync_fd, SYNC_CREATED, eof, NULL, err));
    /* Listening in the init's netns before `start` runs anything there. */
    if (egress_attach(L->egress, L->pid, err) < 0) return brig_wrap(err, "network (policy %s)", L->policy->name);
    /* The watcher measures from before `start` too (it prepared meanwhile). */
    TRY(policy_watch_attach(L->wswatch, L->pid, err));
    if (L->console_sock >= 0) {
        /* As runc: the listener owns the pty from now on; brig keeps no copy. */
        TRY(console_socket_send(L->console_sock, L->console_fd, err));
        brig_closep(&L->console_fd);
        brig_closep(&L->console_sock);
    }

    L->st->setup_done = true;
    TRY(state_write(L->dirfd, L->st, err));
    if (o->pid_file != NULL) TRY(launch_write_pid_file(o->pid_file, L->pid, err));
    return 0;
}

/* Undo a failed create: nothing may be left behind. */
static void launch_undo(struct launch *L, const struct brig_globals *g, const char *id)
{
    struct brig_error *e = NULL;
    egress_stop(steal_ptr(&L->egress));
    policy_watch_stop(steal_ptr(&L->wswatch));
    if (L->pid > 0) {
        kill(L->pid, SIGKILL);
        while (waitpid(L->pid, NULL, 0) < 0 && errno == EINTR) {}
        L->pid = 0;
    }
    if (L->st != NULL && L->st->has_shared_mnt &&
        rootfs_shared_detach(L->st->rootfs, &L->st->shared_mnt, &e) < 0) {
        brig_warn("create %s: cleanup: %s", id, e->msg);
        brig_error_freep(&e);
    }
    if (L->cg != NULL && cgroup_destroy(L->cg, &e) < 0) {
        brig_warn("create %s: cleanup: %s", id, e->msg);
        brig_error_freep(&e);
    }
    /* destroy removes the directories; the struct is still ours to free */
    if (L->cg != NULL) cgroup_free(L->cg);
    L->cg = NULL;
    if (L->state_dir_made && L->dirfd >= 0) policy_stage_discard(L->dirfd);
    if (L->state_dir_made && state_dir_remove(g->root, id, &e) < 0) {
        brig_warn("create %s: cleanup: %s", id, e->msg);
        brig_error_freep(&e);
    }
    L->state_dir_made = false;
}

static void launch_close(struct launch *L)
{
    /* From now on the proxy serves until the init exits (delete). */
    egress_detach(steal_ptr(&L->egress));
    policy_watch_detach(steal_ptr(&L->wswatch));     /* it lives as long as the init */
    brig_closep(&L->sync_fd);
    brig_closep(&L->fifo_fd);
    brig_closep(&L->start_sock);
    brig_closep(&L->bundle_fd);
    brig_closep(&L->root_fd);
    brig_closep(&L->dirfd);
    brig_closep(&L->rootfd);
    brig_closep(&L->console_sock);
    brig_closep(&L->console_fd);
    if (L->ns_ready) ns_plan_close(&L->ns);
    L->ns_ready = false;
}

void launch_release_exiting(struct launch *L)
{
    launch_close(L);
#ifdef __SANITIZE_ADDRESS__
    launch_release(L);              /* its leak check looks at exit */
#endif
}

void launch_release(struct launch *L)
{
    launch_close(L);
    policy_free(L->policy);
    L->policy = NULL;
    if (L->cg) cgroup_free(L->cg);
    L->cg = NULL;
    seccomp_bpf_free(L->bpf);
    L->bpf = NULL;
    seccomp_bpf_free(L->setid_bpf);
    L->setid_bpf = NULL;
    state_free(L->st);
    L->st = NULL;
    spec_free(L->spec);
    L->spec = NULL;
    free(L->config_text);
    L->config_text = NULL;
    free(L->cg_delegated);
    L->cg_delegated = NULL;
    free(L->limits_skipped);
    L->limits_skipped = NULL;
}

int launch_container(struct launch *L, const struct brig_globals *g, const struct brig_create_opts *o,
                     bool run_mode, struct brig_error **err)
{
    *L = (struct launch){ .sync_fd = -1, .fifo_fd = -1, .start_sock = -1, .rootfd = -1, .dirfd = -1,
                          .console_sock = -1, .console_fd = -1, .bundle_fd = -1, .root_fd = -1 };
    if (launch_validate(L, g, o, run_mode, err) < 0 || launch_resources(L, g, o->id, run_mode, o->cgroup_fresh, err) < 0 ||
        launch_init(L, o, err) < 0) {
        launch_undo(L, g, o->id);
        launch_release(L);
        return brig_wrap(err, "create %s", o->id);
    }
    return 0;
}

char *launch_start_json(const struct launch *L)
{
    if (!hooks_any(L->spec, BRIG_HOOK_START_CONTAINER, BRIG_HOOK_START_CONTAINER)) return NULL;
    return state_to_oci_json(L->st, BRIG_STATUS_CREATED, false);
}

int container_create(const struct brig_globals *g, const struct brig_create_opts *o,
                     struct brig_error **err)
{
    struct launch L;
    TRY(launch_container(&L, g, o, false, err));
    /* Only now may the init wait on exec.fifo: had we died before the state
     * said "created", it would have waited there for a start nobody can do. */
    autofree char *start_json = launch_start_json(&L);
    if (sync_send(L.sync_fd, SYNC_CREATED_ACK, start_json, err) < 0) {
        launch_undo(&L, g, o->id);
        launch_release(&L);
        return brig_wrap(err, "create %s: container init exited", o->id);
    }
    launch_release(&L);     /* the init waits on exec.fifo for `brig start` */
    return 0;
}
