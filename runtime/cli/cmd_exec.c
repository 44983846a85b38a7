/* exec and ps, with runc's flags. As runc (SkipArgReorder), flags come
 * before the container id: what follows it is the command and its own
 * arguments (`brig exec c1 ls -l`). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "../lifecycle/exec.h"
#include "../util/cleanup.h"
#include "../util/strutil.h"

/* Flags that may be repeated (runc's StringSlice): collected here, since
 * cli_parse keeps only the last value of a flag. */
struct cli_multi {
    const char *name;
    char short_name;
    char **values;          /* NULL-terminated, strings point into argv */
    size_t n;
};

static struct cli_multi *cli_multi_find(struct cli_multi *m, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        if (len == 1 && m[i].short_name == name[0]) return &m[i];
        if (strlen(m[i].name) == len && strncmp(m[i].name, name, len) == 0) return &m[i];
    }
    return NULL;
}

static bool cli_takes_value(const struct cli_flag *flags, size_t n, const char *name, size_t len)
{
    for (size_t i = 0; i < n; i++) {
        bool match = (len == 1 && flags[i].short_name == name[0]) ||
                     (strlen(flags[i].name) == len && strncmp(flags[i].name, name, len) == 0);
        if (match) return flags[i].type != CLI_BOOL;
    }
    return false;
}

/* Move the repeated flags out of argv (up to the first positional
 * argument), leaving the rest for cli_parse. *out has room for argc. */
static int cli_take_multi(const struct cli_flag *flags, size_t n_flags, struct cli_multi *m,
                          size_t n_m, int argc, char **argv, char **out, int *n_out,
                          struct brig_error **err)
{
    int o = 0, i = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || a[1] == '\0' || strcmp(a, "--") == 0) break;
        const char *name = a + (a[1] == '-' ? 2 : 1);
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        struct cli_multi *f = cli_multi_find(m, n_m, name, len);
        if (f == NULL) {
            out[o++] = argv[i];
            if (eq == NULL && cli_takes_value(flags, n_flags, name, len) && i + 1 < argc)
                out[o++] = argv[++i];
            continue;
        }
        const char *value = eq ? eq + 1 : NULL;
        if (value == NULL) {
            if (i + 1 >= argc) return brig_failx(err, "flag needs an argument: %s", a);
            value = argv[++i];
        }
        f->values[f->n++] = (char *)value;
    }
    for (; i < argc; i++) out[o++] = argv[i];
    *n_out = o;
    return 0;
}

/* runc resolves --pid-file against the cwd at call time. */
static char *cmd_exec_abs(const char *p)
{
    if (p == NULL || p[0] == '/') return p ? brig_strdup(p) : NULL;
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof(cwd)) == NULL) return brig_strdup(p);
    return brig_asprintf("%s/%s", cwd, p);
}

int cmd_exec(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    struct brig_exec_opts o = {0};
    const char *process_file = NULL, *cwd = NULL, *user = NULL, *pid_file = NULL, *console = NULL;
    bool tty = false, detach = false, nnp = false, help = false;
    int preserve_fds = 0;
    const struct cli_flag flags[] = {
        { "process", 'p', CLI_STRING, &process_file, "FILE", "the process as a JSON object (config.json's \"process\")" },
        { "tty", 't', CLI_BOOL, &tty, NULL, "allocate a pseudo-TTY" },
        { "cwd", 0, CLI_STRING, &cwd, "DIR", "current working directory in the container" },
        { "env", 'e', CLI_STRING, NULL, "K=V", "set an environment variable (repeatable)" },
        { "user", 'u', CLI_STRING, &user, "UID[:GID]", "user (and group) ids to run as" },
        { "additional-gids", 'g', CLI_STRING, NULL, "GID", "an additional group (repeatable)" },
        { "cap", 'c', CLI_STRING, NULL, "CAP", "add a capability (repeatable)" },
        { "no-new-privs", 0, CLI_BOOL, &nnp, NULL, "set no_new_privileges" },
        { "preserve-fds", 0, CLI_INT, &preserve_fds, "N", "pass N extra fds (3..3+N-1) to the process" },
        { "detach", 'd', CLI_BOOL, &detach, NULL, "do not wait for the process" },
        { "pid-file", 0, CLI_STRING, &pid_file, "FILE", "write the process's pid to FILE" },
        { "console-socket", 0, CLI_STRING, &console, "PATH",
          "unix socket that receives the pty master (with --tty and --detach)" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    autofree char **env = brig_calloc((size_t)argc + 1, sizeof(char *));
    autofree char **gids = brig_calloc((size_t)argc + 1, sizeof(char *));
    autofree char **caps = brig_calloc((size_t)argc + 1, sizeof(char *));
    struct cli_multi multi[] = {
        { "env", 'e', env, 0 }, { "additional-gids", 'g', gids, 0 }, { "cap", 'c', caps, 0 },
    };
    autofree char **rest = brig_calloc((size_t)argc + 1, sizeof(char *));
    autofree char **pos = brig_calloc((size_t)argc + 1, sizeof(char *));
    int nrest = 0, consumed = 0;
    if (cli_take_multi(flags, BRIG_ARRAY_SIZE(flags), multi, BRIG_ARRAY_SIZE(multi), argc, argv,
                       rest, &nrest, err) < 0 ||
        cli_parse(flags, BRIG_ARRAY_SIZE(flags), nrest, rest, true, &consumed, pos, NULL, err) < 0)
        return brig_wrap(err, "exec");
    static const char syntax[] = "CONTAINER_ID [COMMAND [ARG...]]";
    if (help) {
        cli_usage("exec", syntax, "Run a process in a running container.", flags,
                  BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    if (consumed >= nrest) return brig_failx(err, "\"exec\" requires at least 1 argument: %s", syntax);
    if (preserve_fds < 0) return brig_failx(err, "exec: --preserve-fds %d: must not be negative", preserve_fds);
    autofree char *pid_abs = cmd_exec_abs(pid_file);
    o.id = rest[consumed];
    o.args = rest + consumed + 1;
    o.process_file = process_file;
    o.tty = tty;
    o.cwd = cwd;
    o.env = env;
    o.user = user;
    o.additional_gids = gids;
    o.caps = caps;
    o.no_new_privs = nnp;
    o.preserve_fds = preserve_fds;
    o.detach = detach;
    o.pid_file = pid_abs;
    o.console_socket = console;
    return container_exec(g, &o, status, err);
}

int cmd_ps(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    const char *format = "table";
    bool help = false;
    const struct cli_flag flags[] = {
        { "format", 'f', CLI_STRING, &format, "FORMAT", "table (default: ps -ef lines) or json (pids)" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    autofree char **pos = brig_calloc((size_t)argc + 1, sizeof(char *));
    int consumed = 0;
    if (cli_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, true, &consumed, pos, NULL, err) < 0)
        return brig_wrap(err, "ps");
    static const char syntax[] = "CONTAINER_ID [ps options]";
    if (help) {
        cli_usage("ps", syntax, "List the processes running in a container.", flags,
                  BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    if (consumed >= argc) return brig_failx(err, "\"ps\" requires at least 1 argument: %s", syntax);
    bool json = strcmp(format, "json") == 0;
    if (!json && strcmp(format, "table") != 0)
        return brig_failx(err, "ps: --format %s: expected table or json", format);
    return container_ps(g, argv[consumed], json, argv + consumed + 1, err);
}
