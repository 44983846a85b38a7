/* The config of a one-shot sandbox, built in memory: a minimal base (the
 * command under brig-init, a read-only rootfs, the kernel filesystems, a
 * private absolute cgroup) that policy_apply then hardens to the policy and
 * gives the workspace bind, exactly as `brig policy apply` would. Nothing of
 * the caller's environment goes in. */
#include <errno.h>
#include <sys/resource.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brig-config.h"
#include "sandbox.h"
#include "../runtime/config/spec.h"
#include "../policy/policy.h"
#include "../policy/policy_internal.h"
#include "../runtime/config/json.h"
#include "../runtime/linux/exe_seal.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/log.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/strutil.h"
#include "../runtime/config/spec_write.h"

#define SANDBOX_OUTPUT_DEFAULT (1u << 20)
#define SANDBOX_PATH_DEFAULT "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* A flag may lower a policy bound, never raise it; 0 in the policy: none. */
static int config_limit_tighten(const char *flag, const char *val, const char *field, uint64_t policy_s,
                          uint64_t *out_ms, struct brig_error **err)
{
    *out_ms = policy_s * 1000;
    if (val == NULL) return 0;
    uint64_t s;
    if (policy_parse_duration(val, &s) < 0 || s == 0)
        return brig_failx(err, "%s %s: expected a duration such as 30s, 10m or 1h", flag, val);
    if (policy_s > 0 && s > policy_s)
        return brig_failx(err, "%s %s is above the policy's %s (%llus): flags may only tighten it",
                          flag, val, field, (unsigned long long)policy_s);
    *out_ms = s * 1000;
    return 0;
}

int sandbox_limits(const struct brig_policy *p, const struct sandbox_opts *o, struct sandbox_limits *out,
                   struct brig_error **err)
{
    TRY(config_limit_tighten("--timeout", o->timeout, "timeouts.wall", p->timeouts.wall_s, &out->wall_ms, err));
    TRY(config_limit_tighten("--idle-timeout", o->idle_timeout, "timeouts.idle", p->timeouts.idle_s,
                       &out->idle_ms, err));
    out->output_max = p->output_max > 0 ? p->output_max : SANDBOX_OUTPUT_DEFAULT;
    if (o->output_limit != NULL) {
        uint64_t n;
        if (policy_parse_size(o->output_limit, &n) < 0 || n == 0)
            return brig_failx(err, "--output-limit %s: expected a size such as 64KiB or 1MiB", o->output_limit);
        if (n > out->output_max)
            return brig_failx(err, "--output-limit %s is above the policy's output.maxBytes (%llu bytes): "
                              "flags may only tighten it", o->output_limit, (unsigned long long)out->output_max);
        out->output_max = n;
    }
    return 0;
}

int sandbox_find_init(char **out, struct brig_error **err)
{
    /* brig runs from a sealed copy (linux/exe_seal.h): where its binary
     * lies on disk is kept in the copy's name. */
    char exe[PATH_MAX];
    if (exe_seal_origin_path(exe, sizeof(exe)) == 0) {
        const char *dir = dirname(exe);
        /* Installed side by side, brig's build tree (runtime/ and sandbox/),
         * or an install tree unpacked under another root (sbin/ and libexec/). */
        const char *const rel[] = { "brig-init", "../sandbox/brig-init", BRIG_LIBEXEC_FROM_SBIN "/brig-init" };
        for (size_t i = 0; i < BRIG_ARRAY_SIZE(rel); i++) {
            char path[PATH_MAX];
            snprintf(path, sizeof(path), "%s/%s", dir, rel[i]);
            char real[PATH_MAX];
            if (brig_realpath(path, real) != NULL && access(real, X_OK) == 0) {
                brig_debug("sandbox init: %s (beside brig)", real);
                *out = brig_strdup(real);
                return 0;
            }
        }
    }
    const char *lib = BRIG_LIBEXECDIR "/brig-init";
    if (access(lib, X_OK) < 0) return brig_fail(err, errno, "sandbox init %s (installed with brig)", lib);
    brig_debug("sandbox init: %s (installed)", lib);
    *out = brig_strdup(lib);
    return 0;
}

int sandbox_env_check(const struct brig_policy *p, char **env, struct brig_error **err)
{
    for (char **e = env; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (eq == NULL || eq == *e)
            return brig_failx(err, "--env: expected NAME=VALUE (got an entry without a name or '=')");
        autofree char *name = strndup(*e, (size_t)(eq - *e));
        if (policy_env_name_denied(p, name))
            return brig_failx(err, "--env %s: refused by the policy %s (%s)", name, p->name,
                              policy_glob_any(p->env_deny, name) ? "env.deny: a secret-looking name"
                                                                 : "not in env.allow");
    }
    return 0;
}

/* PATH, HOME and LANG by default; --env on top. A name the policy denies is
 * refused: the value may be the secret itself, so it never reaches a log. */
static int config_env(struct brig_jw *w, const struct brig_policy *p, const struct sandbox_opts *o,
                      struct brig_error **err)
{
    const char *defaults[] = {
        "PATH=" SANDBOX_PATH_DEFAULT,
        p->workspace.path && o->workspace ? NULL : "HOME=/",
        "LANG=C.UTF-8",
    };
    TRY(sandbox_env_check(p, o->env, err));
    jw_key(w, "env");
    jw_arr_open(w);
    autofree char *home = p->workspace.path && o->workspace ? brig_asprintf("HOME=%s", p->workspace.path) : NULL;
    for (char **e = o->env; home && e && *e; e++)
        if (brig_str_has_prefix(*e, "HOME=")) home[0] = '\0';
    if (home && home[0]) jw_str(w, home);
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(defaults); i++) {
        if (defaults[i] == NULL) continue;
        size_t nl = strcspn(defaults[i], "=") + 1;
        bool overridden = false;
        for (char **e = o->env; e && *e; e++)
            if (strncmp(*e, defaults[i], nl) == 0) overridden = true;
        if (!overridden) jw_str(w, defaults[i]);
    }
    for (char **e = o->env; e && *e; e++) jw_str(w, *e);
    jw_arr_close(w);
    return 0;
}

/* A path the rootfs does not decide: the workspace or a tmpfs is mounted there. */
static bool config_path_mounted(const struct brig_policy *p, const char *path)
{
    const char *mounted[p->n_tmpfs + 1];
    size_t n = 0;
    if (p->workspace.path) mounted[n++] = p->workspace.path;
    for (size_t i = 0; i < p->n_tmpfs; i++) mounted[n++] = p->tmpfs[i].path;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(mounted[i]);
        if (strncmp(path, mounted[i], l) == 0 && (path[l] == '/' || path[l] == '\0')) return true;
    }
    return false;
}

/* 0: an executable file; ENOENT: nothing there; EACCES: something that
 * execve would refuse (not a regular file, no execute bit). */
static int config_executable_in(int rootfd, const char *path)
{
    autoclose int fd = brig_open_in_root(rootfd, path, O_PATH | O_CLOEXEC, 0, NULL);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) return ENOENT;
    return S_ISREG(st.st_mode) && (st.st_mode & 0111) ? 0 : EACCES;
}

/* A command the rootfs lacks is a result, not a sandbox: exit 127 (not
 * found) or 126 (there but not executable), as a shell says. */
static int config_no_command(struct brig_error **err, int e, const char *cmd, const char *rootfs, const char *path)
{
    if (strchr(cmd, '/') != NULL && e == ENOENT) brig_failx(err, "%s: no such executable in the rootfs %s", cmd, rootfs);
    else if (strchr(cmd, '/') != NULL) brig_failx(err, "%s: not an executable file in the rootfs %s", cmd, rootfs);
    else if (e == ENOENT)
        brig_failx(err, "%s: not found in the rootfs %s (PATH=%s); a rootfs with it: brig-rootfs from-host "
                   "--with sh,%s DIR, then --rootfs DIR", cmd, rootfs, path, cmd);
    else brig_failx(err, "%s: not an executable file in the rootfs %s (PATH=%s)", cmd, rootfs, path);
    if (err != NULL && *err != NULL) (*err)->exec_status = e == ENOENT ? 127 : 126;
    return -1;
}

/* Fail closed before anything is made: a command the rootfs lacks (a shell
 * command on an image without sh) is refused, not a 127 from inside. Only
 * what the rootfs decides is checked (not paths in the workspace or a tmpfs). */
static int config_check_command(const struct brig_policy *p, const char *rootfs, const struct sandbox_opts *o,
                                struct brig_error **err)
{
    const char *cmd = o->argv[0];
    const char *path = SANDBOX_PATH_DEFAULT;
    for (char **e = o->env; e && *e; e++)
        if (brig_str_has_prefix(*e, "PATH=")) path = *e + 5;
    autoclose int rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return brig_fail(err, errno, "--rootfs %s", rootfs);
    if (strchr(cmd, '/') != NULL) {
        if (cmd[0] != '/' || config_path_mounted(p, cmd)) return 0;
        int e = config_executable_in(rootfd, cmd);
        return e == 0 ? 0 : config_no_command(err, e, cmd, rootfs, path);
    }
    autofree char *dirs = brig_strdup(path);
    char *save = NULL;
    int seen = ENOENT;      /* as execvp: EACCES if any was there */
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        if (d[0] != '/' || config_path_mounted(p, d)) return 0;     /* cannot judge from here */
        autofree char *full = brig_asprintf("%s/%s", d, cmd);
        int e = config_executable_in(rootfd, full);
        if (e == 0) return 0;
        if (e == EACCES) seen = EACCES;
    }
    return config_no_command(err, seen, cmd, rootfs, path);
}

static void config_mounts(struct brig_jw *w, const char *init_in, const char *init_host)
{
    static const char *const init[] = { "bind", "ro", "nosuid", "nodev", NULL };
    jw_key(w, "mounts");
    jw_arr_open(w);
    spec_write_kernel_mounts(w);
    spec_write_mount(w, init_in, "bind", init_host, init);
    jw_arr_close(w);
}

static void config_id_maps(struct brig_jw *w, const char *key, const struct sandbox_rootless_map *m, size_t n)
{
    jw_key(w, key);
    jw_arr_open(w);
    for (size_t i = 0; i < n; i++) {
        jw_obj_open(w);
        jw_ku64(w, "containerID", m[i].inside);
        jw_ku64(w, "hostID", m[i].host);
        jw_ku64(w, "size", m[i].size);
        jw_obj_close(w);
    }
    jw_arr_close(w);
}

/* maps: rootless, the user namespace made at the clone (sandbox_rootless.c);
 * NULL: root's, whose init enters one of its own after the setup. */
static void config_linux(struct brig_jw *w, const char *id, const struct sandbox_rootless_maps *maps)
{
    static const char *const ns[] = { "pid", "network", "ipc", "uts", "mount", "cgroup", NULL };
    static const char *const ns_user[] = { "user", "pid", "network", "ipc", "uts", "mount", "cgroup", NULL };
    jw_key(w, "linux");
    jw_obj_open(w);
    autofree char *cg = brig_asprintf("%s/%s", SANDBOX_CGROUP_PARENT, id);
    jw_kstr(w, "cgroupsPath", cg);
    spec_write_deny_devices(w);
    spec_write_namespaces(w, maps ? ns_user : ns);
    if (maps != NULL) {
        config_id_maps(w, "uidMappings", maps->uid, maps->n_uid);
        config_id_maps(w, "gidMappings", maps->gid, maps->n_gid);
    }
    jw_obj_close(w);
}

/* The policy's rlimits are maxima. Where this host's own hard limit is
 * lower (root without CAP_SYS_RESOURCE in a VM), that is the most the
 * command can have: asking for the policy's value would fail the create
 * for no gain in isolation. policy_apply keeps a value under the maximum. */
static void config_rlimits(struct brig_jw *w, const struct brig_policy *p)
{
    jw_key(w, "rlimits");
    jw_arr_open(w);
    for (size_t i = 0; i < p->n_rlimits; i++) {
        int res = spec_rlimit_resource(p->rlimits[i].type);
        struct rlimit rl;
        if (res < 0 || getrlimit(res, &rl) < 0 || rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= p->rlimits[i].max)
            continue;
        jw_obj_open(w);
        jw_kstr(w, "type", p->rlimits[i].type);
        jw_ku64(w, "hard", rl.rlim_max);
        jw_ku64(w, "soft", rl.rlim_max);
        jw_obj_close(w);
    }
    jw_arr_close(w);
}

/* The workspace's owner on disk: the sandbox's user to the command, and
 * the owner of what it makes there (policy_apply_opts.workspace_idmap). */
static int config_workspace_owner(const char *ws, struct stat *st, struct brig_error **err)
{
    autoclose int fd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, st) < 0) return brig_fail(err, errno, "--workspace %s", ws);
    return 0;
}

int sandbox_config(const struct brig_policy *p, const struct sandbox_opts *o, const char *id,
                   const char *init_host_path, uint32_t ids_base, char **out, struct brig_error **err)
{
    char ws[PATH_MAX];
    struct stat ws_st = { 0 };
    if (p->user.userns)
        return brig_failx(err, "policy %s: user.userns: a sandbox runs in a user namespace of brig's own "
                          "(docs/sandbox.md, \"Host identity\"), not one the policy maps", p->name);
    if (o->workspace != NULL) {
        if (p->workspace.path == NULL)
            return brig_failx(err, "--workspace: the policy %s has no workspace (workspace.path)", p->name);
        if (brig_realpath(o->workspace, ws) == NULL) return brig_fail(err, errno, "--workspace %s", o->workspace);
        TRY(config_workspace_owner(ws, &ws_st, err));
        /* Rootless: mapped as it is (the caller is the sandbox's user), no
         * idmapped mount (that needs privilege on the host). */
        if (o->rootless && ws_st.st_uid != geteuid())
            return brig_failx(err, "--workspace %s: owned by uid %u: a rootless sandbox's workspace is a "
                              "directory of the caller's own (uid %u)", o->workspace, (unsigned)ws_st.st_uid,
                              (unsigned)geteuid());
    }
    struct sandbox_rootless_maps maps;
    if (o->rootless) TRY(sandbox_rootless_maps(p, &maps, err));
    if (o->cwd != NULL && o->cwd[0] != '/') return brig_failx(err, "--cwd %s: expected an absolute path", o->cwd);
    if (o->session == NULL && (o->argv == NULL || o->argv[0] == NULL))
        return brig_failx(err, "no command: brig sandbox run [flags] -- CMD...");
    if (o->tty && o->stdin_path != NULL)
        return brig_failx(err, "--stdin %s: not with --tty (the terminal is the command's stdin)", o->stdin_path);
    /* after the cheap checks: bad flags never build the default rootfs */
    autofree char *dflt = NULL;
    if (o->rootfs == NULL) TRY(sandbox_rootfs_default(o->rootless, &dflt, err));
    const char *given = o->rootfs ? o->rootfs : dflt;
    char rootfs[PATH_MAX];
    if (brig_realpath(given, rootfs) == NULL) return brig_fail(err, errno, "--rootfs %s", given);
    if (o->session == NULL) TRY(config_check_command(p, rootfs, o, err));
    const char *init_in = p->init ? p->init : SANDBOX_INIT_PATH;

    autojw struct brig_jw *w = jw_new(false);
    jw_obj_open(w);
    jw_kstr(w, "ociVersion", BRIG_OCI_VERSION);
    jw_key(w, "process");
    jw_obj_open(w);
    /* --tty: the pty comes from the sandbox's own devpts and brig holds the
     * master (launch in run mode, no console socket); 80x24 when the caller
     * has no terminal to copy the size from. */
    jw_kbool(w, "terminal", o->tty);
    if (o->tty) {
        jw_key(w, "consoleSize");
        jw_obj_open(w);
        jw_ku64(w, "height", o->tty_rows ? o->tty_rows : 24);
        jw_ku64(w, "width", o->tty_cols ? o->tty_cols : 80);
        jw_obj_close(w);
    }
    jw_key(w, "args");
    jw_arr_open(w);
    jw_str(w, init_in);
    /* --cwd is entered by brig-init as the sandbox's user, never made:
     * as process.cwd the init would mkdir it as root while the rootfs is
     * still writable (in the host's rootfs, or through a symlink planted
     * in the workspace), on the say-so of a caller through sudo. */
    if (o->session == NULL && o->cwd != NULL) {
        jw_str(w, "--cwd");
        jw_str(w, o->cwd);
    }
    /* A long-lived sandbox's init idles; its commands are exec'd. */
    jw_str(w, o->session ? "--idle" : "--");
    for (char **a = o->argv; o->session == NULL && *a; a++) jw_str(w, *a);
    jw_arr_close(w);
    TRY(config_env(w, p, o, err));
    config_rlimits(w, p);
    jw_kstr(w, "cwd", o->workspace && p->workspace.path ? p->workspace.path : "/");
    jw_kbool(w, "noNewPrivileges", true);
    jw_obj_close(w);
    jw_key(w, "root");
    jw_obj_open(w);
    jw_kstr(w, "path", rootfs);
    jw_kbool(w, "readonly", true);
    jw_obj_close(w);
    jw_kstr(w, "hostname", "sandbox");
    jw_key(w, "annotations");
    jw_obj_open(w);
    /* No set-id bit from inside (the workspace's files are its owner's) */
    jw_kstr(w, BRIG_NO_SETID_ANNOTATION, "true");
    if (o->session != NULL) {
        /* What each `sandbox exec` reads back from the saved config. */
        jw_kstr(w, SANDBOX_POLICY_ANNOTATION, o->policy ? o->policy : "agent");
        if (o->policy_text != NULL) jw_kstr(w, SANDBOX_POLICY_TEXT_ANNOTATION, o->policy_text);
    }
    jw_obj_close(w);
    config_mounts(w, init_in, init_host_path);
    config_linux(w, id, o->rootless ? &maps : NULL);
    jw_obj_close(w);
    size_t len;
    const char *base = jw_text(w, &len);
    if (base == NULL) return brig_failx(err, "sandbox config: JSON writer misuse (a bug)");
    /* Both callers hand the text to create with p's own text as the
     * policy in force (run, create): create parses and checks it. */
    struct policy_apply_opts ao = { .workspace_source = o->workspace ? ws : NULL, .profile_as_text = true,
                                    .checked_by_create = true, .config_ours = true, .workspace_idmap = o->workspace != NULL && !o->rootless,
                                    .disk_uid = ws_st.st_uid, .disk_gid = ws_st.st_gid,
                                    .host_uid = ids_base + p->user.uid, .host_gid = ids_base + p->user.gid };
    if (policy_apply(p, base, len, &ao, out, err) < 0) return brig_wrap(err, "policy %s", p->name);
    return 0;
}
