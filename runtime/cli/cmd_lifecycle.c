/* The lifecycle commands: flags in, lifecycle/container.h calls out. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strutil.h"

/* Parse a command's flags; returns 1 when --help was asked and printed. */
static int cmd_parse(const char *cmd, const char *args_syntax, const char *summary,
                     const struct cli_flag *flags, size_t n_flags, bool *help, int argc,
                     char **argv, char **pos, int *npos, int min_pos, int max_pos,
                     struct brig_error **err)
{
    if (cli_parse(flags, n_flags, argc, argv, false, NULL, pos, npos, err) < 0)
        return brig_wrap(err, "%s", cmd);
    if (*help) {
        cli_usage(cmd, args_syntax, summary, flags, n_flags);
        return 1;
    }
    if (*npos < min_pos || *npos > max_pos) {
        if (min_pos == max_pos)
            return brig_failx(err, "\"%s\" requires exactly %d argument(s): %s", cmd, min_pos, args_syntax);
        return brig_failx(err, "\"%s\" requires %d to %d arguments: %s", cmd, min_pos, max_pos, args_syntax);
    }
    return 0;
}

#define POS_ARRAY(name) autofree char **name = brig_calloc((size_t)argc + 1, sizeof(char *))

/* runc resolves --bundle and --pid-file against the cwd at call time: the
 * lifecycle code may chdir, and the state records the absolute bundle. */
static int cmd_abs_path(const char *flag, const char *p, bool must_exist, char **out,
                        struct brig_error **err)
{
    if (must_exist) {
        char *r = realpath(p, NULL);
        if (r == NULL) return brig_fail(err, errno, "%s %s", flag, p);
        *out = r;
        return 0;
    }
    if (p[0] == '/') {
        *out = brig_strdup(p);
        return 0;
    }
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == NULL) return brig_fail(err, errno, "getcwd");
    *out = brig_asprintf("%s/%s", cwd, p);
    return 0;
}

struct create_flags {
    const char *bundle, *pid_file, *console_socket, *config;
    bool no_pivot, no_new_keyring, detach, keep, no_subreaper, help;
    int preserve_fds;
};

static int cmd_create_or_run(const struct brig_globals *g, bool run, int argc, char **argv,
                             int *status, struct brig_error **err)
{
    struct create_flags f = {0};
    const struct cli_flag flags[] = {
        { "bundle", 'b', CLI_STRING, &f.bundle, "DIR", "bundle directory (default: current directory)" },
        { "config", 'f', CLI_STRING, &f.config, "FILE",
          "crun's: read the config from FILE (a regular file) instead of BUNDLE/config.json" },
        { "pid-file", 0, CLI_STRING, &f.pid_file, "FILE", "write the init's pid to FILE" },
        { "console-socket", 0, CLI_STRING, &f.console_socket, "PATH",
          "unix socket that receives the pty master (process.terminal)" },
        { "no-pivot", 0, CLI_BOOL, &f.no_pivot, NULL, "do not use pivot_root (ramdisk roots)" },
        { "no-new-keyring", 0, CLI_BOOL, &f.no_new_keyring, NULL, "keep the caller's session keyring" },
        { "preserve-fds", 0, CLI_INT, &f.preserve_fds, "N", "pass N extra fds (3..3+N-1) to the container" },
        { "help", 'h', CLI_BOOL, &f.help, NULL, "show help" },
        /* run only: */
        { "detach", 'd', CLI_BOOL, &f.detach, NULL, "do not wait for the container" },
        { "keep", 0, CLI_BOOL, &f.keep, NULL, "do not delete the container after it exits" },
        /* runc's: brig's init is its own child, no subreaper is involved. */
        { "no-subreaper", 0, CLI_BOOL, &f.no_subreaper, NULL, "accepted for runc compatibility (no effect)" },
    };
    size_t nflags = BRIG_ARRAY_SIZE(flags) - (run ? 0 : 3);
    const char *cmd = run ? "run" : "create";
    POS_ARRAY(pos);
    int npos = 0;
    int r = cmd_parse(cmd, "CONTAINER_ID", run ? "Create and start a container." : "Create a container.",
                      flags, nflags, &f.help, argc, argv, pos, &npos, 1, 1, err);
    if (r != 0) return r < 0 ? -1 : 0;
    if (f.preserve_fds < 0)
        return brig_failx(err, "%s: --preserve-fds %d: must not be negative", cmd, f.preserve_fds);
    if (f.detach && f.keep) return brig_failx(err, "run: --keep and --detach cannot be used together");

    autofree char *bundle = NULL;
    autofree char *pid_file = NULL;
    TRY(cmd_abs_path("--bundle", f.bundle ? f.bundle : ".", true, &bundle, err));
    if (f.pid_file != NULL) TRY(cmd_abs_path("--pid-file", f.pid_file, false, &pid_file, err));
    /* Read once, as config.json is: a symlink, fifo or device is refused
     * (a fifo would block create, a device would be read by its driver). */
    autofree char *config = NULL;
    if (f.config != NULL && brig_read_regular_at(AT_FDCWD, f.config, 16u << 20, &config, NULL, err) < 0)
        return brig_wrap(err, "%s: --config", cmd);
    const struct brig_create_opts o = {
        .id = pos[0],
        .bundle = bundle,
        .pid_file = pid_file,
        .console_socket = f.console_socket,
        .no_pivot = f.no_pivot,
        .no_new_keyring = f.no_new_keyring,
        .preserve_fds = f.preserve_fds,
        .detach = f.detach,
        .keep = f.keep,
        .config_text = config,
    };
    if (!run) return container_create(g, &o, err);
    return container_run(g, &o, status, err);
}

int cmd_create(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    return cmd_create_or_run(g, false, argc, argv, status, err);
}

int cmd_run(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    return cmd_create_or_run(g, true, argc, argv, status, err);
}

/* Commands whose only argument is the container id. */
static int cmd_id_only(const char *cmd, const char *summary, int argc, char **argv,
                       const char **id, struct brig_error **err)
{
    bool help = false;
    const struct cli_flag flags[] = {
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    POS_ARRAY(pos);
    int npos = 0;
    int r = cmd_parse(cmd, "CONTAINER_ID", summary, flags, BRIG_ARRAY_SIZE(flags), &help, argc,
                      argv, pos, &npos, 1, 1, err);
    if (r == 0) *id = pos[0];
    return r;
}

int cmd_start(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    const char *id = NULL;
    int r = cmd_id_only("start", "Start the user process of a created container.", argc, argv, &id, err);
    if (r != 0) return r < 0 ? -1 : 0;
    return container_start(g, id, err);
}

int cmd_state(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    const char *id = NULL;
    int r = cmd_id_only("state", "Output the state of a container (OCI state JSON).", argc, argv, &id, err);
    if (r != 0) return r < 0 ? -1 : 0;
    return container_state(g, id, err);
}

int cmd_kill(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    bool all = false, help = false;
    const struct cli_flag flags[] = {
        { "all", 'a', CLI_BOOL, &all, NULL, "signal every process of the container's cgroup" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    POS_ARRAY(pos);
    int npos = 0;
    int r = cmd_parse("kill", "CONTAINER_ID [SIGNAL]",
                      "Send SIGNAL (name or number, default SIGTERM) to the container's init.",
                      flags, BRIG_ARRAY_SIZE(flags), &help, argc, argv, pos, &npos, 1, 2, err);
    if (r != 0) return r < 0 ? -1 : 0;
    int sig = SIGTERM;
    if (npos == 2 && cli_parse_signal(pos[1], &sig, err) < 0) return brig_wrap(err, "kill");
    return container_kill(g, pos[0], sig, all, err);
}

int cmd_delete(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    bool force = false, help = false;
    const struct cli_flag flags[] = {
        { "force", 'f', CLI_BOOL, &force, NULL,
          "kill a running container first; succeed if it does not exist" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    POS_ARRAY(pos);
    int npos = 0;
    int r = cmd_parse("delete", "CONTAINER_ID", "Delete a container and everything it holds.",
                      flags, BRIG_ARRAY_SIZE(flags), &help, argc, argv, pos, &npos, 1, 1, err);
    if (r != 0) return r < 0 ? -1 : 0;
    return container_delete(g, pos[0], force, err);
}

int cmd_list(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    const char *format = "table";
    bool quiet = false, help = false;
    const struct cli_flag flags[] = {
        { "format", 'f', CLI_STRING, &format, "FORMAT", "table (default) or json" },
        { "quiet", 'q', CLI_BOOL, &quiet, NULL, "print only the container ids" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    POS_ARRAY(pos);
    int npos = 0;
    int r = cmd_parse("list", "", "List the containers under --root.", flags, BRIG_ARRAY_SIZE(flags),
                      &help, argc, argv, pos, &npos, 0, 0, err);
    if (r != 0) return r < 0 ? -1 : 0;
    bool json = strcmp(format, "json") == 0;
    if (!json && strcmp(format, "table") != 0)
        return brig_failx(err, "list: --format %s: expected table or json", format);
    return container_list(g, json, quiet, err);
}
