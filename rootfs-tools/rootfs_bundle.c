/* brig-rootfs bundle --rootfs DEST [--policy P] [--image-config FILE] OUTDIR -- [CMD...]
 *
 * OUTDIR/config.json for DEST: the image config's process (Entrypoint and
 * Cmd, or Entrypoint and CMD when given, as `docker run IMAGE CMD`; Env,
 * WorkingDir, User) on the base `brig sandbox` uses (read-only root, the
 * kernel filesystems, every namespace but user), then policy_apply'd, so
 * `brig policy check` passes on it by construction. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brig-config.h"
#include "brig-rootfs.h"
#include "lib/rootfs.h"
#include "../policy/policy.h"
#include "../runtime/cli/cli.h"
#include "../runtime/config/json.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/strutil.h"
#include "../runtime/config/spec_write.h"

#define BUNDLE_PATH_DEFAULT "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct bundle_image {
    char **env, **entrypoint, **cmd;
    char *cwd, *user;
};

static void bundle_image_free(struct bundle_image *im)
{
    brig_strv_free(im->env);
    brig_strv_free(im->entrypoint);
    brig_strv_free(im->cmd);
    free(im->cwd);
    free(im->user);
}

/* An OCI image config ({"config": {...}}) or its "config" object alone. */
static int bundle_read_image(const char *path, struct bundle_image *im, struct brig_error **err)
{
    autofree char *text = NULL;
    size_t len;
    TRY(brig_read_regular(path, 4u << 20, &text, &len, err));
    autojson brig_json root = NULL;
    TRY(json_parse(text, len, &root, err));
    TRY(json_as_object(root, "", err));
    brig_json c = json_get(root, "config");
    const char *at = "config";
    if (c == NULL || json_is_null(c)) c = root, at = "";
    TRY(json_as_object(c, at, err));
    static const char *const arrays[] = { "Env", "Entrypoint", "Cmd" };
    char ***dst[] = { &im->env, &im->entrypoint, &im->cmd };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(arrays); i++) {
        brig_json v = json_get(c, arrays[i]);
        if (v == NULL || json_is_null(v)) continue;
        char p[64];
        json_path_join(p, sizeof(p), at, arrays[i]);
        size_t n;
        TRY(json_as_strv(v, p, dst[i], &n, err));
    }
    TRY(json_get_string(c, at, "WorkingDir", false, &im->cwd, err));
    TRY(json_get_string(c, at, "User", false, &im->user, err));
    return 0;
}

/* User "uid[:gid]" or "name[:group]", names looked up in the rootfs's own
 * /etc/passwd and /etc/group (read inside DEST, never the host's). */
static int bundle_lookup(int rootfd, const char *file, const char *name, unsigned *id, unsigned *gid)
{
    uint64_t n;
    if (brig_parse_u64(name, &n) == 0 && n <= UINT32_MAX) {
        *id = (unsigned)n;
        return 1;
    }
    autoclose int fd = brig_open_in_root(rootfd, file, O_RDONLY | O_NONBLOCK, 0, NULL);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) return -1;
    autofree char *text = brig_calloc(1u << 20, 1);
    ssize_t got = pread(fd, text, (1u << 20) - 1, 0);
    if (got < 0) return -1;
    char *save = NULL;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *f[4] = {0};
        char *s2 = l;
        for (int i = 0; i < 4; i++) f[i] = strsep(&s2, ":");
        if (f[0] && strcmp(f[0], name) == 0 && f[2] && brig_parse_u64(f[2], &n) == 0) {
            *id = (unsigned)n;
            if (gid && f[3] && brig_parse_u64(f[3], &n) == 0) *gid = (unsigned)n;
            return 0;
        }
    }
    return -1;
}

static int bundle_user(struct brig_jw *w, int rootfd, const char *spec, struct brig_error **err)
{
    unsigned uid = 0, gid = 0;
    if (spec && spec[0]) {
        autofree char *u = brig_strdup(spec);
        char *g = strchr(u, ':');
        if (g) *g++ = '\0';
        int r = bundle_lookup(rootfd, "/etc/passwd", u, &uid, &gid);
        if (r < 0) return brig_failx(err, "image config User %s: no such user in the rootfs's /etc/passwd", u);
        if (g && bundle_lookup(rootfd, "/etc/group", g, &gid, NULL) < 0)
            return brig_failx(err, "image config User %s: no such group in the rootfs's /etc/group", spec);
        if (r == 1 && !g) gid = uid;
    }
    jw_key(w, "user");
    jw_obj_open(w);
    jw_ku64(w, "uid", uid);
    jw_ku64(w, "gid", gid);
    jw_obj_close(w);
    return 0;
}

static void bundle_base_rest(struct brig_jw *w, const char *rootfs)
{
    static const char *const ns[] = { "pid", "network", "ipc", "uts", "mount", "cgroup", NULL };
    jw_key(w, "root");
    jw_obj_open(w);
    jw_kstr(w, "path", rootfs);
    jw_kbool(w, "readonly", true);
    jw_obj_close(w);
    jw_kstr(w, "hostname", "runner");
    jw_key(w, "mounts");
    jw_arr_open(w);
    spec_write_kernel_mounts(w);
    jw_arr_close(w);
    jw_key(w, "linux");
    jw_obj_open(w);
    spec_write_deny_devices(w);
    spec_write_namespaces(w, ns);
    jw_obj_close(w);
}

static int bundle_config(const struct bundle_image *im, char **cmd, int rootfd, const char *rootfs,
                         char **out, size_t *len, struct brig_error **err)
{
    autojw struct brig_jw *w = jw_new(true);
    jw_obj_open(w);
    jw_kstr(w, "ociVersion", BRIG_OCI_VERSION);
    jw_key(w, "process");
    jw_obj_open(w);
    jw_kbool(w, "terminal", false);
    TRY(bundle_user(w, rootfd, im->user, err));
    jw_key(w, "args");
    jw_arr_open(w);
    size_t n = 0;
    for (char **a = im->entrypoint; a && *a; a++, n++) jw_str(w, *a);
    for (char **a = cmd && cmd[0] ? cmd : im->cmd; a && *a; a++, n++) jw_str(w, *a);
    jw_arr_close(w);
    if (n == 0) return brig_failx(err, "no command: give one after -- or an image config with Entrypoint or Cmd");
    jw_key(w, "env");
    jw_arr_open(w);
    bool path = false;
    for (char **e = im->env; e && *e; e++) {
        if (brig_str_has_prefix(*e, "PATH=")) path = true;
        jw_str(w, *e);
    }
    if (!path) jw_str(w, BUNDLE_PATH_DEFAULT);
    jw_arr_close(w);
    if (im->cwd && im->cwd[0] && im->cwd[0] != '/')
        return brig_failx(err, "image config WorkingDir %s: expected an absolute path", im->cwd);
    jw_kstr(w, "cwd", im->cwd && im->cwd[0] ? im->cwd : "/");
    jw_kbool(w, "noNewPrivileges", true);
    jw_obj_close(w);
    bundle_base_rest(w, rootfs);
    jw_obj_close(w);
    const char *text = jw_text(w, len);
    if (text == NULL) return brig_failx(err, "bundle config: JSON writer misuse (a bug)");
    *out = brig_strdup(text);
    return 0;
}

int rootfs_cmd_bundle(int argc, char **argv, int *status, struct brig_error **err)
{
    const char *rootfs = NULL, *policy = "agent", *image = NULL, *workspace = NULL;
    bool help = false;
    const struct cli_flag flags[] = {
        { "rootfs", 'r', CLI_STRING, &rootfs, "DEST", "the root filesystem (required)" },
        { "policy", 'p', CLI_STRING, &policy, "NAME|FILE", "the policy the config meets (default agent)" },
        { "image-config", 'i', CLI_STRING, &image, "FILE",
          "an OCI image config: Env, Entrypoint, Cmd, WorkingDir, User" },
        { "workspace", 'w', CLI_STRING, &workspace, "DIR", "host directory mounted at the policy's workspace" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    /* everything after "--" is the command, not flags */
    int flag_argc = argc;
    for (int i = 0; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            flag_argc = i;
            break;
        }
    char *pos[argc + 1];
    int npos = 0;
    *status = 2;
    TRY(cli_parse(flags, BRIG_ARRAY_SIZE(flags), flag_argc, argv, false, NULL, pos, &npos, err));
    if (help) {
        cli_usage("bundle", "--rootfs DEST [options] OUTDIR [-- CMD...]",
                  "Write OUTDIR/config.json for DEST from the policy and the image config; "
                  "brig policy check passes on it.", flags, BRIG_ARRAY_SIZE(flags));
        *status = 0;
        return 0;
    }
    if (rootfs == NULL) return brig_failx(err, "--rootfs DEST is required");
    if (npos != 1) return brig_failx(err, "expected one OUTDIR (brig-rootfs bundle --help)");
    char **cmd = flag_argc < argc ? argv + flag_argc + 1 : NULL;
    char root[PATH_MAX], ws[PATH_MAX];
    if (realpath(rootfs, root) == NULL) return brig_fail(err, errno, "--rootfs %s", rootfs);
    if (workspace && realpath(workspace, ws) == NULL) return brig_fail(err, errno, "--workspace %s", workspace);
    autoclose int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) return brig_fail(err, errno, "--rootfs %s", rootfs);
    struct bundle_image im = {0};
    int rc = image ? bundle_read_image(image, &im, err) : 0;
    if (rc < 0) brig_wrap(err, "--image-config %s", image);
    autofree char *base = NULL, *config = NULL;
    size_t len = 0;
    if (rc == 0) rc = bundle_config(&im, cmd, rootfd, root, &base, &len, err);
    bundle_image_free(&im);
    TRY(rc);
    autopolicy struct brig_policy *p = NULL;
    if (policy_load(policy, &p, err) < 0) return brig_wrap(err, "--policy %s", policy);
    struct policy_apply_opts ao = { .workspace_source = workspace ? ws : NULL };
    if (policy_apply(p, base, len, &ao, &config, err) < 0) return brig_wrap(err, "policy %s", policy);
    if (mkdir(pos[0], 0755) < 0 && errno != EEXIST) return brig_fail(err, errno, "%s", pos[0]);
    autoclose int outfd = open(pos[0], O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (outfd < 0) return brig_fail(err, errno, "%s", pos[0]);
    TRY(brig_write_file_atomic(outfd, "config.json", config, strlen(config), 0644, err));
    *status = 0;
    return 0;
}
