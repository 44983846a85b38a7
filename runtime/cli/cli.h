/* The brig command line: runc-compatible flag parsing (args.c) and one
 * function per command. The CLI only parses and calls lifecycle/container.h. */
#ifndef BRIG_CLI_H
#define BRIG_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "../lifecycle/container.h"
#include "../util/error.h"

enum cli_flag_type { CLI_BOOL, CLI_STRING, CLI_INT };

struct cli_flag {
    const char *name;           /* long name, without dashes */
    char short_name;            /* 0 when there is none */
    enum cli_flag_type type;
    void *target;               /* bool *, const char **, int * */
    const char *arg;            /* value placeholder for help, e.g. "DIR" */
    const char *help;
};

/* Parse argv[0..argc). Accepted forms, as urfave/cli (runc) accepts them:
 * --name, --name=value, --name value, -name (single dash long), -x, -x value,
 * -x=value; booleans also take =true/=false; "--" ends the flags.
 * Positional arguments go to pos[] (room for argc entries), in order.
 * With stop_at_positional, parsing stops at the first positional argument
 * (global flags before the command) and *consumed is its index. */
int cli_parse(const struct cli_flag *flags, size_t n_flags, int argc, char **argv,
              bool stop_at_positional, int *consumed, char **pos, int *n_pos,
              struct brig_error **err);

/* The program ("brig", default; "brig-rootfs") and the command being
 * parsed ("sandbox run"): an unknown flag's error names `PROG CMD --help`
 * and the usage line PROG. Set by the dispatchers. */
void cli_set_program(const char *prog);
void cli_set_command(const char *cmd);

/* Print "Usage: PROG CMD ARGS\n\nSUMMARY\n\nOptions:\n..." to stdout. */
void cli_usage(const char *cmd, const char *args, const char *summary,
               const struct cli_flag *flags, size_t n_flags);

/* "KILL", "SIGKILL", "kill", "9", "RTMIN+3" -> signal number. */
int cli_parse_signal(const char *s, int *sig, struct brig_error **err);

/* One command: argv excludes the command name. *status is the exit status
 * on success (0, or the container's status for run). */
typedef int (*cli_cmd_fn)(const struct brig_globals *g, int argc, char **argv, int *status,
                          struct brig_error **err);

int cmd_create(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_start(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_run(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_state(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_kill(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_delete(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_list(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_spec(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_features(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_policy(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
/* cmd_sandbox.c: brig sandbox run (sandbox/sandbox.h). */
int cmd_sandbox(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
/* cmd_cgroup.c: runc's pause, resume, update and events. */
int cmd_pause(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_resume(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_update(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_events(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);

/* cmd_exec.c: runc's exec and ps. */
int cmd_exec(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);
int cmd_ps(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err);

/* The default config.json of `brig spec` as JSON text, malloc'd. */
char *spec_default_json(bool rootless);

#endif
