/* `brig sandbox run`: flags to struct sandbox_opts, the result to stdout
 * (--json) or a summary line to stderr. Always its own exit status: the
 * command's, 124 for a timeout, 125 when brig failed (docs/sandbox.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "brig-config.h"
#include "cli.h"
#include "../../sandbox/sandbox.h"
#include "../util/cleanup.h"
#include "../util/strutil.h"

/* --env/-e may be repeated: taken out of argv before cli_parse, up to "--"
 * (everything after it is the command's). */
static int sandbox_take_env(int argc, char **argv, char **env, char **rest, int *n_rest,
                            struct brig_error **err)
{
    int n_env = 0, o = 0, i = 0;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        if (strcmp(a, "--env") == 0 || strcmp(a, "-e") == 0 || strcmp(a, "-env") == 0) {
            if (i + 1 >= argc) return brig_failx(err, "flag needs an argument: %s", a);
            v = argv[++i];
        } else if (brig_str_has_prefix(a, "--env=")) {
            v = a + 6;
        }
        if (v != NULL) env[n_env++] = (char *)v;
        else rest[o++] = argv[i];
    }
    for (; i < argc; i++) rest[o++] = argv[i];
    *n_rest = o;
    return 0;
}

static int sandbox_cmd_run(int argc, char **argv, int *status, struct brig_error **err)
{
    struct sandbox_opts o = {0};
    bool json = false, help = false;
    const struct cli_flag flags[] = {
        { "policy", 0, CLI_STRING, &o.policy, "NAME|FILE", "the sandbox policy (default: agent)" },
        { "rootfs", 0, CLI_STRING, &o.rootfs, "DIR", "the root filesystem, mounted read-only (required for now)" },
        { "workspace", 0, CLI_STRING, &o.workspace, "DIR", "host directory bound writable at /workspace" },
        { "timeout", 0, CLI_STRING, &o.timeout, "DUR", "wall-clock limit, at most the policy's timeouts.wall" },
        { "idle-timeout", 0, CLI_STRING, &o.idle_timeout, "DUR",
          "kill after this long without output, at most the policy's timeouts.idle" },
        { "output-limit", 0, CLI_STRING, &o.output_limit, "SIZE",
          "bytes kept per stream (head + tail), at most the policy's output.maxBytes" },
        { "env", 'e', CLI_STRING, NULL, "K=V", "set an environment variable (repeatable)" },
        { "cwd", 0, CLI_STRING, &o.cwd, "DIR", "working directory inside (default: the workspace, or /)" },
        { "stdin", 0, CLI_STRING, &o.stdin_path, "FILE|-", "the command's stdin (default /dev/null)" },
        { "state-root", 0, CLI_STRING, &o.state_root, "DIR", "private state directory (default " SANDBOX_STATE_ROOT ")" },
        { "json", 0, CLI_BOOL, &json, NULL, "print the result as JSON on stdout (output is not streamed)" },
        { "tty", 't', CLI_BOOL, &o.tty, NULL, "give the command a terminal (its output is then all on stdout)" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    autofree char **env = brig_calloc((size_t)argc + 1, sizeof(char *));
    autofree char **rest = brig_calloc((size_t)argc + 1, sizeof(char *));
    autofree char **pos = brig_calloc((size_t)argc + 1, sizeof(char *));
    int n_rest = 0, n_pos = 0;
    TRY(sandbox_take_env(argc, argv, env, rest, &n_rest, err));
    TRY(cli_parse(flags, BRIG_ARRAY_SIZE(flags), n_rest, rest, false, NULL, pos, &n_pos, err));
    if (help) {
        cli_usage("sandbox run", "[options] -- CMD [ARGS...]",
                  "Run CMD in a fresh sandbox built from a policy; exit with its status "
                  "(124: timeout, 125: brig failed). Through sudo, " BRIG_SANDBOX_CONF
                  " fixes the policy, state root, rootfs and workspaces. See docs/sandbox.md.",
                  flags, BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    o.env = env;
    o.argv = pos;
    char *owned[4] = {0};
    int sudo_rc = sandbox_sudo_apply(&o, owned, err);
    o.stream = !json;
    struct winsize ws;
    if (o.tty && isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) {
        o.tty_rows = ws.ws_row;
        o.tty_cols = ws.ws_col;
    }

    struct sandbox_result r = {0};
    if (sudo_rc == 0) sandbox_run(&o, &r);
    else {
        r.error = brig_strdup((*err)->msg);     /* a result as for any refusal: nothing ran */
        brig_error_freep(err);
    }
    for (int i = 0; i < 4; i++) free(owned[i]);
    if (json) {
        autofree char *text = sandbox_result_json(&r);
        fputs(text, stdout);
        fflush(stdout);
    } else {
        autofree char *line = sandbox_result_summary(&r);
        fputs(line, stderr);
    }
    *status = sandbox_exit_status(&r);
    sandbox_result_free(&r);
    return 0;
}

int cmd_sandbox(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    /* Through sudo only `run` has its choices fixed by sandbox.conf. */
    if (sandbox_sudo_caller() && !(argc >= 1 && strcmp(argv[0], "run") == 0)) {
        *status = 125;
        return brig_failx(err, "brig sandbox %s: only `sandbox run` is allowed through sudo", argc ? argv[0] : "");
    }
    if (argc >= 1 && strcmp(argv[0], "run") == 0) {
        /* Bad flags are brig's failure too: 125, as for a sandbox that could not be made. */
        if (sandbox_cmd_run(argc - 1, argv + 1, status, err) < 0) {
            fprintf(stderr, "brig sandbox run: %s\n", (*err)->msg);
            *status = 125;
        }
        return 0;
    }
    if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        printf("Usage: brig sandbox run [options] -- CMD [ARGS...]\n\n"
               "Run one command in a fresh sandbox (docs/sandbox.md). See brig sandbox run --help.\n");
        return 0;
    }
    *status = 125;
    return brig_failx(err, "brig sandbox %s: unknown subcommand (only `run` exists yet)", argc ? argv[0] : "");
}
