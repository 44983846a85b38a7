/* `brig sandbox run` for an unprivileged worker, through sudo: root-owned
 * brig, a sudoers rule allowing `brig sandbox run *`, and the host's fixed
 * choices in sandbox.conf (BRIG_SANDBOX_CONF, /etc/brig/sandbox.conf in a
 * /usr build). Under sudo the caller may tighten (timeouts, output limit,
 * env the policy allows, cwd, --tty, their own stdin) but never choose what
 * a root brig would otherwise open on their say-so: the policy, the state
 * root, the rootfs, another file as stdin, a workspace outside the host's.
 *
 * Fail closed: run through sudo (SUDO_UID set, or a real uid that is not
 * root; pkexec's PKEXEC_UID and doas's DOAS_USER count too) without a
 * sound sandbox.conf, nothing runs. */
#include <errno.h>
#include <fcntl.h>
#include <nss.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "sandbox.h"
#include "brig-config.h"
#include "../runtime/config/json.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/strutil.h"

#define SUDO_CONF_MAX 65536

/* A uid from SUDO_UID or PKEXEC_UID: unparsable is someone, not root; 0
 * is root itself running sudo. */
static long sudo_uid_var(const char *s)
{
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (s[0] == '\0' || *end != '\0' || v > 0xffffffffUL) return 0x7fffffff;
    return (long)v;
}

/* The caller's uid when brig runs on someone else's behalf, else -1.
 * sudo is the supported way; pkexec and doas are recognised too, so that
 * they are held to the same rules rather than get root's choices. Each tool
 * sets its own variable but may pass on the caller's others (doas.conf's
 * keepenv, a sudoers env_keep): a SUDO_UID=0 beside doas's DOAS_USER is the
 * caller's word. So any of them naming someone other than root makes brig
 * theirs; root's choices only when none does. */
static long sudo_caller(void)
{
    if (getuid() != geteuid()) return (long)getuid();
    static const char *const uid_vars[] = { "SUDO_UID", "PKEXEC_UID" };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(uid_vars); i++) {
        const char *s = getenv(uid_vars[i]);
        long v = s != NULL ? sudo_uid_var(s) : 0;
        if (v > 0) return v;
    }
    const char *doas = getenv("DOAS_USER");
    if (doas != NULL) {
        /* /etc/passwd only (doas users are local): glibc's built-in module.
         * A static brig cannot load the host's others (nsswitch.conf's
         * "systemd", "ldap": a second libc, and brig crashes); a user found
         * nowhere is someone, not root. */
        if (__nss_configure_lookup("passwd", "files") < 0) return 0x7fffffff;
        struct passwd *pw = getpwnam(doas);
        if (pw == NULL) return 0x7fffffff;
        if (pw->pw_uid != 0) return (long)pw->pw_uid;
    }
    return -1;
}

/* A file or directory only root can change: root-owned, not writable by
 * group or others. */
static int sudo_root_only(int fd, const char *what, const char *path, struct brig_error **err)
{
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "%s %s", what, path);
    if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
        return brig_failx(err, "%s %s: must be owned by root and not writable by group or others "
                          "(owner %u, mode %04o)", what, path, (unsigned)st.st_uid,
                          (unsigned)(st.st_mode & 07777));
    return 0;
}

struct sudo_conf { char *policy, *state_root, *rootfs, *workspaces; };

static void sudo_conf_free(struct sudo_conf *c)
{
    free(c->policy);
    free(c->state_root);
    free(c->rootfs);
    free(c->workspaces);
}

static int sudo_conf_read(struct sudo_conf *c, struct brig_error **err)
{
    const char *path = BRIG_SANDBOX_CONF;
    autoclose int fd = brig_open_input(AT_FDCWD, path, BRIG_INPUT_NOFOLLOW, NULL, err);
    if (fd < 0) return -1;
    TRY(sudo_root_only(fd, "sandbox.conf", path, err));
    char buf[SUDO_CONF_MAX + 1];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) return brig_fail(err, errno, "read %s", path);
    if (n > SUDO_CONF_MAX) return brig_failx(err, "%s: larger than %d bytes", path, SUDO_CONF_MAX);
    autojson brig_json j = NULL;
    if (json_parse(buf, (size_t)n, &j, err) < 0 || json_as_object(j, "sandbox.conf", err) < 0)
        return brig_wrap(err, "%s", path);
    if (json_get_string(j, "", "policy", true, &c->policy, err) < 0 ||
        json_get_string(j, "", "stateRoot", true, &c->state_root, err) < 0 ||
        json_get_string(j, "", "rootfs", true, &c->rootfs, err) < 0 ||
        json_get_string(j, "", "workspaces", false, &c->workspaces, err) < 0)
        return brig_wrap(err, "%s", path);
    if (c->policy[0] != '/') return brig_failx(err, "%s: policy must be an absolute file path", path);
    return 0;
}

/* The conf's policy file is read by path later (policy_load): it and its
 * directory must be root's alone, or the caller could swap it. */
static int sudo_check_policy(const char *path, struct brig_error **err)
{
    autofree char *dir = brig_strdup(path);
    char *slash = strrchr(dir, '/');
    if (slash == dir) slash[1] = '\0';
    else *slash = '\0';
    autoclose int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return brig_fail(err, errno, "sandbox.conf policy: %s", dir);
    TRY(sudo_root_only(dfd, "sandbox.conf policy directory", dir, err));
    autoclose int fd = brig_open_input(AT_FDCWD, path, BRIG_INPUT_NOFOLLOW, NULL, err);
    if (fd < 0) return brig_wrap(err, "sandbox.conf policy");
    return sudo_root_only(fd, "sandbox.conf policy", path, err);
}

/* --workspace under sudo: a directory directly in the conf's workspaces
 * (root's directory: the caller cannot swap the entry between this check
 * and the bind), owned by the caller. Deeper paths are refused: their
 * components are the caller's to rename or replace by a symlink. */
static int sudo_check_workspace(const struct sudo_conf *c, const char *ws, long caller,
                                struct brig_error **err)
{
    if (c->workspaces == NULL)
        return brig_failx(err, "--workspace: not allowed through sudo (sandbox.conf has no \"workspaces\")");
    autoclose int base = open(c->workspaces, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (base < 0) return brig_fail(err, errno, "sandbox.conf workspaces: %s", c->workspaces);
    TRY(sudo_root_only(base, "sandbox.conf workspaces", c->workspaces, err));
    const char *name = ws;
    size_t blen = strlen(c->workspaces);
    if (strncmp(ws, c->workspaces, blen) == 0 && ws[blen] == '/') name = ws + blen + 1;
    if (name[0] == '\0' || strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return brig_failx(err, "--workspace %s: through sudo, a workspace is a directory directly in %s",
                          ws, c->workspaces);
    autoclose int fd = openat(base, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "--workspace %s/%s", c->workspaces, name);
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "--workspace %s", ws);
    if ((long)st.st_uid != caller)
        return brig_failx(err, "--workspace %s/%s: owned by uid %u, not by the caller (uid %ld)",
                          c->workspaces, name, (unsigned)st.st_uid, caller);
    /* The command (the policy's user, uid 1000 for agent) may chmod u+s
     * what it writes there: on a mount that honours it, the caller could
     * then run that program on the host as that user. */
    struct statvfs sv;
    if (fstatvfs(fd, &sv) < 0) return brig_fail(err, errno, "--workspace %s", ws);
    if (!(sv.f_flag & ST_NOSUID))
        return brig_failx(err, "--workspace %s/%s: through sudo, workspaces must be on a nosuid mount "
                          "(the sandbox's user could leave a setuid program there for the caller to run; "
                          "mount %s with nosuid)", c->workspaces, name, c->workspaces);
    return 0;
}

int sandbox_sudo_apply(struct sandbox_opts *o, char **owned, struct brig_error **err)
{
    long caller = sudo_caller();
    if (caller <= 0) return 0;      /* root for itself (sudo by root included) */
    static const char why[] = "not allowed through sudo (the host fixes it in " BRIG_SANDBOX_CONF ")";
    if (o->policy != NULL) return brig_failx(err, "--policy %s: %s", o->policy, why);
    if (o->state_root != NULL) return brig_failx(err, "--state-root %s: %s", o->state_root, why);
    if (o->rootfs != NULL) return brig_failx(err, "--rootfs %s: %s", o->rootfs, why);
    /* Test hooks in brig's environment (a sudoers env_keep, doas's keepenv,
     * a setuid brig): the egress proxy, as root, would resolve the policy's
     * allowed names from the caller's file, to addresses of their choosing.
     * glibc's resolver reads the environment too: LOCALDOMAIN with
     * RES_OPTIONS=ndots:N asks DNS for "pypi.org.<their zone>" before
     * "pypi.org", HOSTALIASES renames a single-label name. */
    static const char *const env_hooks[] = { "BRIG_EGRESS_HOSTS", "BRIG_EGRESS_TLS_WAIT_MS", "BRIG_ROOTFS_DIR",
                                             "BRIG_SANDBOX_IDS",
                                             "LOCALDOMAIN", "RES_OPTIONS", "HOSTALIASES" };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(env_hooks); i++)
        if (getenv(env_hooks[i]) != NULL) return brig_failx(err, "%s in the environment: %s", env_hooks[i], why);
    /* root would open the file for the caller: only their own stdin */
    if (o->stdin_path != NULL && strcmp(o->stdin_path, "-") != 0)
        return brig_failx(err, "--stdin %s: through sudo only `--stdin -` (your own stdin)", o->stdin_path);

    __attribute__((cleanup(sudo_conf_free))) struct sudo_conf c = {0};
    if (sudo_conf_read(&c, err) < 0)
        return brig_wrap(err, "run through sudo (uid %ld), and the host's sandbox.conf is not usable", caller);
    TRY(sudo_check_policy(c.policy, err));
    if (o->workspace != NULL) TRY(sudo_check_workspace(&c, o->workspace, caller, err));
    o->policy = owned[0] = steal_ptr(&c.policy);
    o->state_root = owned[1] = steal_ptr(&c.state_root);
    o->rootfs = owned[2] = steal_ptr(&c.rootfs);
    if (o->workspace != NULL && o->workspace[0] != '/') {
        owned[3] = brig_asprintf("%s/%s", c.workspaces, o->workspace);
        o->workspace = owned[3];
    }
    return 0;
}

bool sandbox_sudo_caller(void)
{
    return sudo_caller() > 0;
}
