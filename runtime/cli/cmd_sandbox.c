/* `brig sandbox run`: flags to struct sandbox_opts, the result to stdout
 * (--json), JSON lines as things happen (--events) or a summary line to
 * stderr. Always its own exit status: the command's, 124 for a timeout,
 * 125 when brig failed, 126/127 for a command that could not be executed
 * or was not found (docs/sandbox.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "brig-config.h"
#include "cli.h"
#include "../../sandbox/sandbox.h"
#include "../linux/rootless.h"
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

/* The flag rows the subcommands share. */
#define SANDBOX_FLAGS_BOUNDS(o)                                                                          \
    { "timeout", 0, CLI_STRING, &(o).timeout, "DUR", "wall-clock limit, at most the policy's timeouts.wall" }, \
    { "idle-timeout", 0, CLI_STRING, &(o).idle_timeout, "DUR",                                           \
      "kill after this long without output, at most the policy's timeouts.idle" },                        \
    { "output-limit", 0, CLI_STRING, &(o).output_limit, "SIZE",                                          \
      "bytes kept per stream (head + tail), at most the policy's output.maxBytes" }
#define SANDBOX_FLAG_STATE_ROOT(var) \
    { "state-root", 0, CLI_STRING, &(var), "DIR", \
      "private state directory (default " SANDBOX_STATE_ROOT "; rootless: $XDG_RUNTIME_DIR/brig-sandbox)" }
#define SANDBOX_FLAGS_COMMAND(o, json, events, help)                                                              \
    { "env", 'e', CLI_STRING, NULL, "K=V", "set an environment variable (repeatable)" },                 \
    { "cwd", 0, CLI_STRING, &(o).cwd, "DIR", "working directory inside (default: the workspace, or /)" }, \
    { "stdin", 0, CLI_STRING, &(o).stdin_path, "FILE|-", "the command's stdin (default /dev/null)" },    \
    SANDBOX_FLAG_STATE_ROOT((o).state_root),                                                             \
    { "json", 0, CLI_BOOL, &(json), NULL, "print the result as JSON on stdout (output is not streamed)" }, \
    { "events", 0, CLI_BOOL, &(events), NULL,                                                           \
      "print JSON lines on stdout as things happen (start, output, limit), the result last" },          \
    { "help", 'h', CLI_BOOL, &(help), NULL, "show help" }

/* --env entries taken out (into env), then the flags; env and pos hold argc + 1. */
static int sandbox_parse(const struct cli_flag *flags, size_t n_flags, int argc, char **argv, char **env,
                         char **pos, int *n_pos, struct brig_error **err)
{
    autofree char **rest = brig_calloc((size_t)argc + 1, sizeof(char *));
    int n_rest = 0;
    TRY(sandbox_take_env(argc, argv, env, rest, &n_rest, err));
    return cli_parse(flags, n_flags, n_rest, rest, false, NULL, pos, n_pos, err);
}

/* Rootless (linux/rootless.h): the state root defaults to the user's own,
 * $XDG_RUNTIME_DIR/brig-sandbox (*own holds it). */
static int sandbox_state_root(const struct brig_globals *g, const char **root, char **own, struct brig_error **err)
{
    if (!g->rootless || *root != NULL) return 0;
    TRY(rootless_state_root("brig-sandbox", "--state-root", own, err));
    *root = *own;
    return 0;
}

/* --events: the queue of lines the run fills, and the output bound. */
static void sandbox_events_setup(struct sandbox_opts *o, bool events, bool json, struct sandbox_events *ev)
{
    o->stream = !json && !events;
    if (!events) return;
    sandbox_events_init(ev, 1);
    o->events = ev;
}

/* The result on stdout (--json), last of the events (--events) or the
 * summary on stderr; its exit status. */
static void sandbox_report(struct sandbox_result *r, bool json, struct sandbox_events *ev, int *status)
{
    if (ev != NULL) {
        sandbox_events_finish(ev, r);
        sandbox_events_free(ev);
    } else if (json) {
        autofree char *text = sandbox_result_json(r);
        fputs(text, stdout);
        fflush(stdout);
    } else {
        autofree char *line = sandbox_result_summary(r);
        /* on a line of its own, after output that did not end one */
        if (r->echo_mid_line) fputc('\n', stderr);
        fputs(line, stderr);
    }
    *status = sandbox_exit_status(r);
    sandbox_result_free(r);
}

static int sandbox_cmd_run(const struct brig_globals *g, int argc, char **argv, int *status,
                           struct brig_error **err)
{
    struct sandbox_opts o = {0};
    bool json = false, events = false, help = false;
    const struct cli_flag flags[] = {
        { "policy", 0, CLI_STRING, &o.policy, "NAME|FILE", "the sandbox policy (default: agent)" },
        { "rootfs", 0, CLI_STRING, &o.rootfs, "DIR", "the root filesystem, mounted read-only (default: the runner rootfs built by brig-rootfs from-host in /var/lib/brig/rootfs/" SANDBOX_ROOTFS_DEFAULT "; BRIG_ROOTFS_DIR moves it)" },
        { "workspace", 0, CLI_STRING, &o.workspace, "DIR", "host directory bound writable at /workspace" },
        SANDBOX_FLAGS_BOUNDS(o),
        SANDBOX_FLAGS_COMMAND(o, json, events, help),
        { "tty", 't', CLI_BOOL, &o.tty, NULL, "give the command a terminal (its output is then all on stdout)" },
    };
    autofree char **env = brig_calloc((size_t)argc + 1, sizeof(char *));
    autofree char **pos = brig_calloc((size_t)argc + 1, sizeof(char *));
    int n_pos = 0;
    TRY(sandbox_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, env, pos, &n_pos, err));
    if (help) {
        cli_usage("sandbox run", "[options] -- CMD [ARGS...]",
                  "Run CMD in a fresh sandbox built from a policy; exit with its status "
                  "(124: timeout, 125: brig failed, 126/127: CMD not executable/not found). Through sudo, "
                  BRIG_SANDBOX_CONF
                  " fixes the policy, state root, rootfs and workspaces. See docs/sandbox.md.",
                  flags, BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    o.env = env;
    o.argv = pos;
    o.rootless = g->rootless;
    autofree char *own_root = NULL;
    char *owned[4] = {0};
    int sudo_rc = sandbox_state_root(g, &o.state_root, &own_root, err);
    if (sudo_rc == 0) sudo_rc = sandbox_sudo_apply(&o, owned, err);
    struct sandbox_events ev;
    sandbox_events_setup(&o, events, json, &ev);
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
    sandbox_report(&r, json, o.events, status);
    return 0;
}

static int sandbox_cmd_create(const struct brig_globals *g, int argc, char **argv, int *status,
                           struct brig_error **err)
{
    struct sandbox_opts o = {0};
    bool help = false;
    const struct cli_flag flags[] = {
        { "policy", 0, CLI_STRING, &o.policy, "NAME|FILE", "the sandbox policy (default: agent)" },
        { "rootfs", 0, CLI_STRING, &o.rootfs, "DIR", "the root filesystem, mounted read-only (default: the runner rootfs, as for run)" },
        { "workspace", 0, CLI_STRING, &o.workspace, "DIR", "host directory bound writable at /workspace" },
        { "env", 'e', CLI_STRING, NULL, "K=V", "set an environment variable for every command (repeatable)" },
        SANDBOX_FLAG_STATE_ROOT(o.state_root),
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    autofree char **env = brig_calloc((size_t)argc + 1, sizeof(char *));
    autofree char **pos = brig_calloc((size_t)argc + 1, sizeof(char *));
    int n_pos = 0;
    TRY(sandbox_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, env, pos, &n_pos, err));
    if (help) {
        cli_usage("sandbox create", "[options] NAME",
                  "Start a long-lived sandbox NAME (its init idles under the policy's limits); "
                  "run commands in it with `brig sandbox exec NAME -- CMD`. See docs/sandbox.md.",
                  flags, BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    if (n_pos != 1) return brig_failx(err, "expected one NAME: brig sandbox create [options] NAME");
    o.session = pos[0];
    o.env = env;
    o.rootless = g->rootless;
    autofree char *own_root = NULL;
    TRY(sandbox_state_root(g, &o.state_root, &own_root, err));
    TRY(sandbox_create(&o, err));
    printf("%s\n", o.session);
    *status = 0;
    return 0;
}

static int sandbox_cmd_exec(const struct brig_globals *g, int argc, char **argv, int *status,
                           struct brig_error **err)
{
    struct sandbox_opts o = {0};
    bool json = false, events = false, help = false;
    const struct cli_flag flags[] = {
        SANDBOX_FLAGS_BOUNDS(o),
        SANDBOX_FLAGS_COMMAND(o, json, events, help),
    };
    autofree char **env = brig_calloc((size_t)argc + 1, sizeof(char *));
    autofree char **pos = brig_calloc((size_t)argc + 1, sizeof(char *));
    int n_pos = 0;
    TRY(sandbox_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, env, pos, &n_pos, err));
    if (help) {
        cli_usage("sandbox exec", "[options] NAME -- CMD [ARGS...]",
                  "Run CMD in the long-lived sandbox NAME, bounded and reported as `sandbox run` "
                  "(same result and exit status); a timeout kills CMD and all it started, not the sandbox.",
                  flags, BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    if (n_pos < 1) return brig_failx(err, "expected NAME: brig sandbox exec [options] NAME -- CMD...");
    o.session = pos[0];
    o.env = env;
    o.argv = pos + 1;
    o.rootless = g->rootless;
    autofree char *own_root = NULL;
    TRY(sandbox_state_root(g, &o.state_root, &own_root, err));
    struct sandbox_events ev;
    sandbox_events_setup(&o, events, json, &ev);
    struct sandbox_result r = {0};
    sandbox_exec(&o, &r);
    sandbox_report(&r, json, o.events, status);
    return 0;
}

static int sandbox_cmd_ls(const struct brig_globals *g, int argc, char **argv, int *status,
                           struct brig_error **err)
{
    const char *state_root = NULL;
    bool json = false, help = false;
    const struct cli_flag flags[] = {
        SANDBOX_FLAG_STATE_ROOT(state_root),
        { "json", 0, CLI_BOOL, &json, NULL, "a JSON array of {name, status, policy, pid, execs, created}" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    autofree char **pos = brig_calloc((size_t)argc + 1, sizeof(char *));
    int n_pos = 0;
    TRY(cli_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, false, NULL, pos, &n_pos, err));
    if (help) {
        cli_usage("sandbox ls", "[options]", "List the long-lived sandboxes.", flags, BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    if (n_pos != 0) return brig_failx(err, "brig sandbox ls takes no arguments");
    autofree char *own_root = NULL;
    TRY(sandbox_state_root(g, &state_root, &own_root, err));
    TRY(sandbox_list(state_root, json, err));
    *status = 0;
    return 0;
}

static int sandbox_cmd_rm(const struct brig_globals *g, int argc, char **argv, int *status,
                           struct brig_error **err)
{
    const char *state_root = NULL;
    bool force = false, help = false;
    const struct cli_flag flags[] = {
        { "force", 'f', CLI_BOOL, &force, NULL, "also when commands are running (they are killed)" },
        SANDBOX_FLAG_STATE_ROOT(state_root),
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    autofree char **pos = brig_calloc((size_t)argc + 1, sizeof(char *));
    int n_pos = 0;
    TRY(cli_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, false, NULL, pos, &n_pos, err));
    if (help) {
        cli_usage("sandbox rm", "[options] NAME",
                  "Remove a long-lived sandbox: its processes, cgroups, mounts and state (not the workspace).",
                  flags, BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    if (n_pos != 1) return brig_failx(err, "expected one NAME: brig sandbox rm [--force] NAME");
    autofree char *own_root = NULL;
    TRY(sandbox_state_root(g, &state_root, &own_root, err));
    TRY(sandbox_remove(state_root, pos[0], force, err));
    *status = 0;
    return 0;
}

static int sandbox_cmd_gc(const struct brig_globals *g, int argc, char **argv, int *status,
                           struct brig_error **err)
{
    const char *state_root = NULL;
    bool help = false;
    const struct cli_flag flags[] = {
        { "state-root", 0, CLI_STRING, &state_root, "DIR",
          "sweep the entries of this state directory only (default: " SANDBOX_STATE_ROOT " and every one "
          "recorded)" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    autofree char **pos = brig_calloc((size_t)argc + 1, sizeof(char *));
    int n_pos = 0;
    TRY(cli_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, false, NULL, pos, &n_pos, err));
    if (help) {
        cli_usage("sandbox gc", "[options]",
                  "Remove what dead brigs left of their sandboxes: state entries whose owner is gone (a killed "
                  "run, a long-lived sandbox whose init died) and cgroups under " SANDBOX_CGROUP_PARENT
                  " that no state root owns and no process is in. Never a live sandbox.",
                  flags, BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    if (n_pos != 0) return brig_failx(err, "brig sandbox gc takes no arguments");
    struct sandbox_gc_report rep = { 0 };
    autofree char *own_root = NULL;
    TRY(sandbox_state_root(g, &state_root, &own_root, err));
    TRY(sandbox_gc(state_root, g->rootless, &rep, err));
    printf("removed %zu state entries and %zu cgroups; %zu cgroups left (not provably ownerless)%s\n",
           rep.entries_removed, rep.leaves_removed, rep.leaves_left,
           rep.errors ? "; some removals failed (see above)" : "");
    fflush(stdout);
    *status = rep.errors ? 1 : 0;
    return 0;
}

static const struct {
    const char *name;
    int (*fn)(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
} sandbox_cmds[] = {
    { "run", sandbox_cmd_run }, { "create", sandbox_cmd_create }, { "exec", sandbox_cmd_exec },
    { "ls", sandbox_cmd_ls }, { "rm", sandbox_cmd_rm }, { "gc", sandbox_cmd_gc },
};

int cmd_sandbox(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    /* Through sudo only `run` has its choices fixed by sandbox.conf. */
    if (sandbox_sudo_caller() && !(argc >= 1 && strcmp(argv[0], "run") == 0)) {
        *status = 125;
        return brig_failx(err, "brig sandbox %s: only `sandbox run` is allowed through sudo", argc ? argv[0] : "");
    }
    for (size_t i = 0; argc >= 1 && i < BRIG_ARRAY_SIZE(sandbox_cmds); i++) {
        if (strcmp(argv[0], sandbox_cmds[i].name) != 0) continue;
        char cmd[32];
        snprintf(cmd, sizeof(cmd), "sandbox %s", sandbox_cmds[i].name);
        cli_set_command(cmd);
        /* Bad flags are brig's failure too: 125, as for a sandbox that could not be made. */
        if (sandbox_cmds[i].fn(g, argc - 1, argv + 1, status, err) < 0) {
            fprintf(stderr, "brig sandbox %s: %s\n", argv[0], (*err)->msg);
            *status = 125;
        }
        return 0;
    }
    if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        printf("Usage: brig sandbox run [options] -- CMD [ARGS...]\n"
               "       brig sandbox create [options] NAME\n"
               "       brig sandbox exec [options] NAME -- CMD [ARGS...]\n"
               "       brig sandbox ls [--json]\n"
               "       brig sandbox rm [--force] NAME\n"
               "       brig sandbox gc [--state-root DIR]\n\n"
               "Run commands in sandboxes built from a policy: one fresh sandbox per command (run), "
               "or many commands in a long-lived one (create, exec, ls, rm). See docs/sandbox.md and "
               "brig sandbox SUBCOMMAND --help.\n");
        return 0;
    }
    *status = 125;
    return brig_failx(err, "brig sandbox %s: unknown subcommand (run, create, exec, ls, rm, gc)", argc ? argv[0] : "");
}
