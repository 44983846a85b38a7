/* brig: global flags, logging setup, command dispatch, and the only place
 * that turns an error into an exit status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "brig-config.h"
#include "brig-commit.h"
#include "cli.h"
#include "../linux/exe_seal.h"
#include "../linux/rootless.h"
#include "../../policy/policy.h"
#include "../util/cleanup.h"
#include "../util/log.h"

struct cli_command {
    const char *name;
    cli_cmd_fn fn;
    const char *summary;
    bool stateless;         /* never reads --root (rootless: no $XDG_RUNTIME_DIR needed) */
};

/* Checkpoint/restore needs CRIU, which brig will not drive. */
static int cmd_checkpoint(const struct brig_globals *g, int argc, char **argv, int *status,
                          struct brig_error **err)
{
    return brig_failx(err, "brig checkpoint: not supported (brig has no checkpoint/restore)");
}

static int cmd_restore(const struct brig_globals *g, int argc, char **argv, int *status,
                       struct brig_error **err)
{
    return brig_failx(err, "brig restore: not supported (brig has no checkpoint/restore)");
}

/* The commands that clone processes into a container (the init, an exec's
 * process, the hooks they run; `sandbox run` does it in-process): they run
 * from a sealed copy of brig, never the host binary (linux/exe_seal.h,
 * docs/security.md). */
static bool cmd_spawns(int argc, char **argv)
{
    const char *name = argv[0];
    /* `sandbox ls` reads state and `sandbox rm` is a `delete`: neither
     * spawns, so neither pays for the copy. `sandbox run` and `sandbox
     * exec` decide once the config is known (sandbox/sandbox_seal.c), and
     * so does `run` (linux/exe_trampoline.h); any other word that spawns
     * is sealed. */
    if (strcmp(name, "sandbox") == 0)
        return !(argc >= 2 && (strcmp(argv[1], "ls") == 0 || strcmp(argv[1], "rm") == 0 ||
                               strcmp(argv[1], "run") == 0 || strcmp(argv[1], "exec") == 0));
    return strcmp(name, "create") == 0 || strcmp(name, "exec") == 0;
}

static const struct cli_command commands[] = {
    { "create", cmd_create, "create a container", false },
    { "start", cmd_start, "start the user process of a created container", false },
    { "run", cmd_run, "create and start a container", false },
    { "state", cmd_state, "output the state of a container", false },
    { "kill", cmd_kill, "send a signal to the container's init process", false },
    { "delete", cmd_delete, "delete a container and everything it holds", false },
    { "list", cmd_list, "list the containers under --root", false },
    { "spec", cmd_spec, "create a new specification file (config.json)", true },
    { "features", cmd_features, "show what this build of brig supports (JSON)", true },
    { "policy", cmd_policy, "check, apply, show and selftest sandbox policies", true },
    { "sandbox", cmd_sandbox, "run a command in a fresh sandbox under a policy (docs/sandbox.md)", true },
    { "ps", cmd_ps, "list the processes running in a container", false },
    { "exec", cmd_exec, "run a process in a running container", false },
    { "pause", cmd_pause, "suspend every process of the container", false },
    { "resume", cmd_resume, "resume a paused container", false },
    { "update", cmd_update, "change the resource limits of a running container", false },
    { "events", cmd_events, "print stats and OOM events of a container (JSON)", false },
    { "checkpoint", cmd_checkpoint, "(not supported)", true },
    { "restore", cmd_restore, "(not supported)", true },
};

struct cli_globals {
    const char *root;
    const char *log;
    const char *log_format;
    const char *rootless;
    const char *criu;
    const char *policy;
    const char *cgroup_manager;
    bool debug;
    bool systemd_cgroup;
    bool version;
    bool help;
};

static void print_help(const struct cli_flag *flags, size_t n)
{
    cli_usage("[global options]", "COMMAND [command options] [arguments...]",
              "brig is a native OCI container runtime. Run `brig COMMAND --help` for a command's options.",
              flags, n);
    printf("\nCommands:\n");
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(commands); i++)
        printf("  %-12s %s\n", commands[i].name, commands[i].summary);
}

static void print_version(void)
{
    printf("brig version %s\ncommit: %s\nspec: %s\n", BRIG_VERSION, BRIG_COMMIT, BRIG_OCI_VERSION);
}

/* runc prints the error on stderr and also logs it: containerd's shim reads
 * the last JSON line of --log for the message. */
static void report_error(const struct brig_error *e, bool log_to_file, bool json)
{
    const char *msg = e != NULL ? e->msg : "unknown error";
    brig_errorf("%s", msg);
    if (log_to_file || json) fprintf(stderr, "brig: %s\n", msg);
}

int main(int argc, char **argv)
{
    struct cli_globals cg = { 0 };
    const struct cli_flag gflags[] = {
        { "root", 0, CLI_STRING, &cg.root, "DIR",
          "state directory (default /run/brig; rootless: $XDG_RUNTIME_DIR/brig)" },
        { "log", 0, CLI_STRING, &cg.log, "FILE", "log to FILE instead of stderr" },
        { "log-format", 0, CLI_STRING, &cg.log_format, "FORMAT", "text (default) or json" },
        { "debug", 0, CLI_BOOL, &cg.debug, NULL, "enable debug logging" },
        { "systemd-cgroup", 0, CLI_BOOL, &cg.systemd_cgroup, NULL,
          "linux.cgroupsPath is slice:prefix:name" },
        { "cgroup-manager", 0, CLI_STRING, &cg.cgroup_manager, "MANAGER",
          "crun's: cgroupfs (default), systemd (as --systemd-cgroup) or disabled (no cgroup)" },
        { "rootless", 0, CLI_STRING, &cg.rootless, "VALUE",
          "true|false|auto (default): run without privilege on the host (docs/rootless.md)" },
        { "criu", 0, CLI_STRING, &cg.criu, "PATH", "accepted for runc compatibility (unused)" },
        { "policy", 0, CLI_STRING, &cg.policy, "FILE|NAME",
          "enforce this sandbox policy (default: /etc/brig/policy.json if it exists)" },
        { "version", 'v', CLI_BOOL, &cg.version, NULL, "print the version" },
        { "help", 'h', CLI_BOOL, &cg.help, NULL, "show help" },
    };
    autoerr struct brig_error *err = NULL;
    int consumed = 0;
    char **pos = calloc((size_t)argc + 1, sizeof(char *));
    if (pos == NULL) return 1;
    int rc = cli_parse(gflags, BRIG_ARRAY_SIZE(gflags), argc - 1, argv + 1, true, &consumed, pos,
                       NULL, &err);
    free(pos);
    if (rc < 0) {
        fprintf(stderr, "brig: %s\n", err->msg);
        return 1;
    }
    if (cg.version) {
        print_version();
        return 0;
    }
    enum brig_log_format fmt = BRIG_LOG_TEXT;
    if (cg.log_format != NULL && strcmp(cg.log_format, "json") == 0) {
        fmt = BRIG_LOG_JSON;
    } else if (cg.log_format != NULL && strcmp(cg.log_format, "text") != 0) {
        fprintf(stderr, "brig: --log-format %s: expected text or json\n", cg.log_format);
        return 1;
    }
    bool log_to_file = cg.log != NULL && cg.log[0] != '\0';
    if (brig_log_init(cg.log, fmt, cg.debug) < 0) {
        perror(cg.log);
        return 1;
    }
    if (cg.rootless != NULL && strcmp(cg.rootless, "true") != 0 && strcmp(cg.rootless, "false") != 0 &&
        strcmp(cg.rootless, "auto") != 0) {
        brig_failx(&err, "--rootless %s: expected true, false or auto", cg.rootless);
        report_error(err, log_to_file, fmt == BRIG_LOG_JSON);
        return 1;
    }

    bool rootless = rootless_detect(cg.rootless);
    if (rootless) {
        autofree char *audit = rootless_audit_path();
        policy_audit_redirect(audit);
    }

    /* crun's --cgroup-manager. brig never talks to systemd over D-Bus:
     * "systemd" is --systemd-cgroup (cgroupsPath is slice:prefix:name, made
     * with cgroupfs where systemd would put it); docs/cli.md says so. */
    bool no_cgroup = false;
    if (cg.cgroup_manager != NULL) {
        if (strcmp(cg.cgroup_manager, "systemd") == 0) {
            cg.systemd_cgroup = true;
        } else if (strcmp(cg.cgroup_manager, "disabled") == 0) {
            no_cgroup = true;
        } else if (strcmp(cg.cgroup_manager, "cgroupfs") != 0) {
            brig_failx(&err, "--cgroup-manager %s: expected cgroupfs, systemd or disabled",
                       cg.cgroup_manager);
            report_error(err, log_to_file, fmt == BRIG_LOG_JSON);
            return 1;
        }
        if (no_cgroup && cg.systemd_cgroup) {
            brig_failx(&err, "--cgroup-manager disabled: cannot be used with --systemd-cgroup");
            report_error(err, log_to_file, fmt == BRIG_LOG_JSON);
            return 1;
        }
    }

    int cargc = argc - 1 - consumed;
    char **cargv = argv + 1 + consumed;
    char *help_argv[] = { NULL, "--help", NULL };
    if (cargc == 2 && strcmp(cargv[0], "help") == 0) {
        /* `brig help CMD` is `brig CMD --help`. */
        help_argv[0] = cargv[1];
        cargv = help_argv;
    } else if (cg.help || cargc == 0 || strcmp(cargv[0], "help") == 0) {
        print_help(gflags, BRIG_ARRAY_SIZE(gflags));
        return cg.help || cargc > 0 ? 0 : 1;
    }
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(commands); i++) {
        if (strcmp(cargv[0], commands[i].name) != 0) continue;
        /* Rootless (not root, or uid 0 of a user namespace that is not the
         * host's): the state is the caller's own, under $XDG_RUNTIME_DIR. */
        autofree char *own_root = NULL;
        if (cg.root == NULL && rootless && !commands[i].stateless &&
            rootless_state_root("brig", "--root", &own_root, &err) < 0) {
            report_error(err, log_to_file, fmt == BRIG_LOG_JSON);
            return 1;
        }
        const struct brig_globals g = {
            .root = cg.root != NULL ? cg.root : own_root != NULL ? own_root : "/run/brig",
            .systemd_cgroup = cg.systemd_cgroup, .debug = cg.debug, .policy = cg.policy,
            .no_cgroup = no_cgroup, .rootless = rootless,
        };
        brig_debug("command %s", commands[i].name);
        cli_set_command(commands[i].name);
        int status = 0;
        exe_seal_defer(argv);
        if ((cmd_spawns(cargc, cargv) && exe_seal_ensure(argv, &err) < 0) ||
            commands[i].fn(&g, cargc - 1, cargv + 1, &status, &err) < 0) {
            report_error(err, log_to_file, fmt == BRIG_LOG_JSON);
            return 1;
        }
        return status;
    }
    brig_failx(&err, "no such command: %s (see brig --help)", cargv[0]);
    report_error(err, log_to_file, fmt == BRIG_LOG_JSON);
    return 1;
}
