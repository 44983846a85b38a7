/* brig policy selftest: prove a policy from inside a live container.
 *
 * Builds a bundle in a temp directory (a rootfs holding only the static
 * brig-probe, a config made by applying the policy to a base config, a
 * writable workspace owned by the policy's user), runs it with brig or any
 * OCI runtime (--runtime), and judges the probe's boundary report
 * (policy_boundaries.c). The cgroup path is absolute (/brig-selftest/ID):
 * never under the caller's own cgroup. */
#include "policy_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "policy_tree.h"
#include "../runtime/config/json.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

#define SELFTEST_TIMEOUT_S 120
#define PROBE_MAX (64u << 20)

static int st_copy(const char *src, const char *dst, mode_t mode, struct brig_error **err)
{
    autofree char *data = NULL;
    size_t len = 0;
    TRY(brig_read_regular(src, PROBE_MAX, &data, &len, err));
    autoclose int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0) return brig_fail(err, errno, "create %s", dst);
    if (write(fd, data, len) != (ssize_t)len) return brig_fail(err, errno, "write %s", dst);
    if (fchmod(fd, mode) < 0) return brig_fail(err, errno, "chmod %s", dst);
    return 0;
}

static int st_mkdirs(const char *root, const char *path, mode_t mode, struct brig_error **err)
{
    autofree char *full = brig_asprintf("%s/%s", root, path[0] == '/' ? path + 1 : path);
    for (char *s = full + strlen(root) + 1; ; s++) {
        if (*s != '/' && *s != '\0') continue;
        char c = *s;
        *s = '\0';
        if (mkdir(full, mode) < 0 && errno != EEXIST) return brig_fail(err, errno, "mkdir %s", full);
        *s = c;
        if (c == '\0') break;
    }
    return 0;
}

static int st_rootfs(const struct brig_policy *p, const struct policy_selftest_opts *o, const char *dir,
                     struct brig_error **err)
{
    autofree char *rootfs = brig_asprintf("%s/rootfs", dir);
    if (mkdir(rootfs, 0755) < 0 && errno != EEXIST) return brig_fail(err, errno, "mkdir %s", rootfs);
    static const char *const dirs[] = { "bin", "usr/bin", "usr/sbin", "etc", "proc", "sys", "dev", "tmp",
                                        "var/tmp", "run", "root", "home", "workspace" };
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) TRY(st_mkdirs(rootfs, dirs[i], 0755, err));
    for (size_t i = 0; i < p->n_tmpfs; i++) TRY(st_mkdirs(rootfs, p->tmpfs[i].path, 0755, err));
    if (p->workspace.path) TRY(st_mkdirs(rootfs, p->workspace.path, 0755, err));
    autofree char *probe = brig_asprintf("%s/usr/bin/brig-probe", rootfs);
    TRY(st_copy(o->probe, probe, 0755, err));
    if (p->init != NULL) {
        /* The probe doubles as a tini-compatible init ("init -- cmd"). */
        autofree char *init = brig_asprintf("%s%s", rootfs, p->init);
        autofree char *parent = brig_strdup(p->init);
        *strrchr(parent, '/') = '\0';
        if (parent[0] != '\0') TRY(st_mkdirs(rootfs, parent, 0755, err));
        TRY(st_copy(o->probe, init, 0755, err));
    }
    if (o->busybox != NULL) {
        autofree char *bb = brig_asprintf("%s/bin/busybox", rootfs);
        TRY(st_copy(o->busybox, bb, 0755, err));
        autofree char *sh = brig_asprintf("%s/bin/sh", rootfs);
        if (symlink("/bin/busybox", sh) < 0 && errno != EEXIST) return brig_fail(err, errno, "symlink %s", sh);
    }
    autofree char *passwd = brig_asprintf("root:x:0:0:root:/root:/bin/sh\nuser:x:%u:%u:user:/home:/bin/sh\n",
                                          p->user.uid, p->user.gid);
    autofree char *group = brig_asprintf("root:x:0:\nuser:x:%u:\n", p->user.gid);
    autofree char *etc = brig_asprintf("%s/etc", rootfs);
    autoclose int efd = open(etc, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (efd < 0) return brig_fail(err, errno, "open %s", etc);
    TRY(brig_write_file_atomic(efd, "passwd", passwd, strlen(passwd), 0644, err));
    TRY(brig_write_file_atomic(efd, "group", group, strlen(group), 0644, err));
    return 0;
}

/* The probe's command line for this policy. */
struct ptree *policy_selftest_args(const struct brig_policy *p, bool with_init)
{
    struct ptree *a = ptree_new(PT_ARR);
    if (with_init) {
        ptree_push(a, ptree_new_str(p->init));
        ptree_push(a, ptree_new_str("--"));
    }
    ptree_push(a, ptree_new_str("/usr/bin/brig-probe"));
    ptree_push(a, ptree_new_str("boundaries"));
    if (p->workspace.path) {
        ptree_push(a, ptree_new_str("--write"));
        ptree_push(a, ptree_new_str(p->workspace.path));
    }
    for (size_t i = 0; i < p->n_tmpfs; i++) {
        ptree_push(a, ptree_new_str("--tmpfs"));
        ptree_push(a, ptree_new_str(p->tmpfs[i].path));
    }
    /* More than the limit: the pids boundary holds if some forks fail. */
    uint64_t n = p->limits.pids + 16;
    ptree_push(a, ptree_new_str("--fork"));
    ptree_push(a, ptree_new_u64(n > 8192 ? 8192 : n));
    /* --fork's value must be a string in process.args. */
    struct ptree *last = a->vals[a->n - 1];
    last->type = PT_STR;
    if (p->network.mode == POLICY_NET_EGRESS) {
        ptree_push(a, ptree_new_str("--egress"));
        autofree char *allowed = policy_egress_sample(p);
        ptree_push(a, ptree_new_str(allowed ? allowed : "-"));
    }
    return a;
}

static int st_config(const struct brig_policy *p, const struct policy_selftest_opts *o, const char *dir,
                     const char *id, struct brig_error **err)
{
    autofree char *ws = brig_asprintf("%s/workspace", dir);
    if (mkdir(ws, 0755) < 0 && errno != EEXIST) return brig_fail(err, errno, "mkdir %s", ws);
    if (chown(ws, p->user.uid, p->user.gid) < 0) return brig_fail(err, errno, "chown %s", ws);
    autofree char *applied = NULL;
    const char *text = o->base_config;
    if (!o->as_is) {
        struct policy_apply_opts ao = { .workspace_source = p->workspace.path ? ws : NULL };
        if (policy_apply(p, o->base_config, strlen(o->base_config), &ao, &applied, err) < 0)
            return brig_wrap(err, "selftest: apply");
        text = applied;
    }
    autoptree struct ptree *cfg = NULL;
    TRY(ptree_parse(text, strlen(text), &cfg, err));
    struct ptree *proc = ptree_obj(cfg, "process");
    const struct ptree *args = ptree_get(proc, "args");
    bool with_init = p->init != NULL && args != NULL && args->type == PT_ARR && args->n > 0 &&
                     args->vals[0]->type == PT_STR && strcmp(args->vals[0]->s, p->init) == 0;
    ptree_set(proc, "args", policy_selftest_args(p, with_init));
    ptree_set(proc, "terminal", ptree_new_bool(false));
    /* Nothing in the probe's config needs a newer spec than 1.0.2, and older
     * runtimes (crun 1.8) refuse a version they do not know before saying
     * anything about what they really cannot do. */
    if (o->runtime != NULL) ptree_set(cfg, "ociVersion", ptree_new_str("1.0.2"));
    autofree char *rootfs = brig_asprintf("%s/rootfs", dir);
    ptree_set(ptree_obj(cfg, "root"), "path", ptree_new_str(rootfs));
    autofree char *cg = brig_asprintf("/brig-selftest/%s", id);
    ptree_set(ptree_obj(cfg, "linux"), "cgroupsPath", ptree_new_str(cg));
    /* A weakened config under test keeps its mounts, but its workspace
     * (if any) is ours. */
    struct ptree *mounts = ptree_get(cfg, "mounts");
    for (size_t i = 0; p->workspace.path && mounts && i < mounts->n; i++) {
        const char *d = ptree_str(mounts->vals[i], "destination");
        if (d && strcmp(d, p->workspace.path) == 0) ptree_set(mounts->vals[i], "source", ptree_new_str(ws));
    }
    autofree char *out = NULL;
    TRY(ptree_write(cfg, &out, err));
    autoclose int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return brig_fail(err, errno, "open %s", dir);
    return brig_write_file_atomic(dfd, "config.json", out, strlen(out), 0644, err);
}

/* Run argv with stdout/stderr to files; kill it after the timeout. */
int policy_selftest_spawn(char *const *argv, const char *out, const char *errf, int *status, struct brig_error **err)
{
    autoclose int ofd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    autoclose int efd = open(errf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (ofd < 0 || efd < 0) return brig_fail(err, errno, "open %s", ofd < 0 ? out : errf);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return brig_fail(err, errno, "fork");
    if (pid == 0) {
        int nul = open("/dev/null", O_RDONLY);
        if (nul < 0 || dup2(nul, 0) < 0 || dup2(ofd, 1) < 0 || dup2(efd, 2) < 0) _exit(126);
        execv(argv[0], argv);
        dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    for (int waited_ms = 0;; waited_ms += 50) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid) return 0;
        if (r < 0 && errno != EINTR) return brig_fail(err, errno, "waitpid");
        if (waited_ms >= SELFTEST_TIMEOUT_S * 1000) {
            kill(pid, SIGKILL);
            waitpid(pid, status, 0);
            return brig_failx(err, "%s: no result after %d s", argv[0], SELFTEST_TIMEOUT_S);
        }
        struct timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

static void st_host_ns(struct policy_host_ns *h)
{
    static const char *const names[] = { "net", "pid", "ipc", "uts", "mnt" };
    uint64_t *dst[] = { &h->net, &h->pid, &h->ipc, &h->uts, &h->mnt };
    for (size_t i = 0; i < 5; i++) {
        char path[64];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/self/ns/%s", names[i]);
        *dst[i] = stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
    }
}

/* The last line of the output that is a JSON object. */
static char *st_last_object(const char *text)
{
    const char *best = NULL;
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (*l == '{') best = l;
    if (best == NULL) return NULL;
    return strndup(best, strcspn(best, "\n"));
}

static void st_print(const struct brig_policy *p, const struct policy_selftest_opts *o,
                     const struct policy_boundary *b, size_t n, const char *run_error, int open)
{
    if (!o->json) {
        printf("selftest of policy %s with %s\n", p->name, o->engine ? o->engine : o->runtime ? o->runtime : "brig");
        if (run_error) printf("FAIL run: %s\n", run_error);
        for (size_t i = 0; i < n; i++)
            printf("%-6s %-26s %s\n", b[i].closed ? "CLOSED" : "OPEN", b[i].name, b[i].detail);
        printf("%d open boundar%s\n", open, open == 1 ? "y" : "ies");
        return;
    }
    autojw struct brig_jw *w = jw_new(false);
    jw_obj_open(w);
    jw_kstr(w, "policy", p->name);
    jw_kstr(w, "runtime", o->engine ? o->engine : o->runtime ? o->runtime : "brig");
    jw_kbool(w, "pass", open == 0);
    jw_ku64(w, "open", (uint64_t)open);
    if (run_error) jw_kstr(w, "error", run_error);
    jw_key(w, "boundaries");
    jw_arr_open(w);
    for (size_t i = 0; i < n; i++) {
        jw_obj_open(w);
        jw_kstr(w, "name", b[i].name);
        jw_kbool(w, "closed", b[i].closed);
        jw_kstr(w, "detail", b[i].detail);
        jw_obj_close(w);
    }
    jw_arr_close(w);
    jw_obj_close(w);
    const char *t = jw_text(w, NULL);
    printf("%s\n", t ? t : "{}");
}

/* The bundle run by brig (or --runtime), then deleted whatever happened. */
static int st_run_oci(const struct brig_policy *p, const struct policy_selftest_opts *o, const char *dir,
                      const char *id, const char *out, const char *errf, const char **rt, int *status,
                      struct brig_error **err)
{
    TRY(st_config(p, o, dir, id, err));
    static char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n < 0) return brig_fail(err, errno, "readlink /proc/self/exe");
    self[n] = '\0';
    *rt = o->runtime ? o->runtime : self;
    autofree char *state = brig_asprintf("%s/state", dir);
    char *argv[16];
    int a = 0;
    argv[a++] = (char *)*rt;
    argv[a++] = "--root";
    argv[a++] = state;
    if (o->runtime == NULL && o->policy_flag != NULL) {
        argv[a++] = "--policy";
        argv[a++] = (char *)o->policy_flag;
    }
    argv[a++] = "run";
    argv[a++] = "--bundle";
    argv[a++] = (char *)dir;
    argv[a++] = (char *)id;
    argv[a] = NULL;
    brig_debug("selftest: %s run --bundle %s %s", *rt, dir, id);
    int r = policy_selftest_spawn(argv, out, errf, status, err);
    char *del[] = { (char *)*rt, "--root", state, "delete", "--force", (char *)id, NULL };
    int dst = 0;
    autofree char *dout = brig_asprintf("%s/delete.out", dir);
    policy_selftest_spawn(del, dout, dout, &dst, NULL);
    return r;
}

static int st_run(const struct brig_policy *p, const struct policy_selftest_opts *o, const char *dir,
                  int *open, struct brig_error **err)
{
    char id[64];
    snprintf(id, sizeof(id), "brig-selftest-%d", (int)getpid());
    TRY(st_rootfs(p, o, dir, err));
    autofree char *out = brig_asprintf("%s/probe.out", dir);
    autofree char *errf = brig_asprintf("%s/runtime.err", dir);
    int status = 0;
    autoerr struct brig_error *run_err = NULL;
    autofree char *run_error = NULL;
    const char *rt = o->engine;
    int r = o->engine ? policy_selftest_engine(p, o, dir, id, out, errf, &status, &run_err)
                      : st_run_oci(p, o, dir, id, out, errf, &rt, &status, &run_err);
    if (r < 0) run_error = brig_strdup(run_err->msg);

    autofree char *text = NULL, *etext = NULL;
    size_t len = 0;
    brig_read_file(out, 16u << 20, &text, &len, NULL);
    brig_read_file(errf, 1u << 20, &etext, &len, NULL);
    autofree char *json = text ? st_last_object(text) : NULL;
    struct policy_boundary *b = NULL;
    size_t nb = 0;
    *open = 0;
    if (json != NULL) {
        struct policy_host_ns host;
        st_host_ns(&host);
        if (policy_boundaries_eval(p, json, &host, &b, &nb, err) < 0) return -1;
        for (size_t i = 0; i < nb; i++) *open += !b[i].closed;
    }
    if (json == NULL && run_error == NULL) {
        /* A refused container proves nothing from inside: that is a
         * failed selftest, with the runtime's reason. */
        const char *e = etext && etext[0] ? etext : "no output";
        run_error = brig_asprintf("%s exited with status %d and no probe report: %.600s", rt,
                                  WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), e);
        size_t el = strlen(run_error);
        while (el > 0 && run_error[el - 1] == '\n') run_error[--el] = '\0';
    }
    if (run_error != NULL) (*open)++;
    st_print(p, o, b, nb, run_error, *open);
    free(b);
    return 0;
}

int policy_selftest(const struct brig_policy *p, const struct policy_selftest_opts *o, int *n_open,
                    struct brig_error **err)
{
    if (o->probe == NULL || access(o->probe, X_OK) < 0)
        return brig_failx(err, "selftest: brig-probe not found (%s): pass --probe PATH",
                          o->probe ? o->probe : "not next to brig, not in " "the libexec directory");
    char tmpl[] = "/tmp/brig-selftest.XXXXXX";
    autofree char *dir = NULL;
    if (o->workdir != NULL) {
        if (mkdir(o->workdir, 0755) < 0) return brig_fail(err, errno, "selftest: mkdir %s", o->workdir);
        dir = brig_strdup(o->workdir);
    } else {
        if (mkdtemp(tmpl) == NULL) return brig_fail(err, errno, "selftest: mkdtemp");
        dir = brig_strdup(tmpl);
    }
    /* The container's user must reach its rootfs and workspace. */
    if (chmod(dir, 0755) < 0) return brig_fail(err, errno, "chmod %s", dir);
    int r = st_run(p, o, dir, n_open, err);
    /* Its cgroup parent was made by the runtime at our request; rmdir only
     * succeeds when it is empty, so nobody else's cgroup is touched. */
    autoclose int cgfd = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = cgfd >= 0 ? fdopendir(dup(cgfd)) : NULL;
    for (struct dirent *de; d != NULL && (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.') continue;
        char path[300];
        snprintf(path, sizeof(path), "%s/brig-selftest", de->d_name);
        unlinkat(cgfd, path, AT_REMOVEDIR);
    }
    if (d != NULL) closedir(d);
    if (o->keep) {
        fprintf(stderr, "selftest: kept %s\n", dir);
    } else {
        autoerr struct brig_error *e = NULL;
        if (brig_rm_rf_at(AT_FDCWD, dir, &e) < 0) brig_warn("selftest: remove %s: %s", dir, e->msg);
    }
    return r;
}
