/* `brig policy check|apply|show|list|rules|selftest` (docs/policy.md).
 * Exit status of check: 0 all rules pass, 1 a violation, 2 bad input
 * (unreadable or invalid config or policy). The policy is --policy of the
 * subcommand, else the global --policy, else /etc/brig/policy.json, else
 * the built-in default profile "agent". */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "brig-config.h"
#include "cli.h"
#include "../../policy/policy.h"
#include "../config/bundle.h"
#include "../config/spec.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/strutil.h"

#define POLICY_DEFAULT_PROFILE "agent"
#define CONFIG_MAX (16u << 20)

/* Bad input: the message on stderr, exit status 2. */
static int policy_bad_input(struct brig_error **err, int *status)
{
    fprintf(stderr, "brig policy: %s\n", (*err)->msg);
    brig_error_free(*err);
    *err = NULL;
    *status = 2;
    return 0;
}

static int policy_pick(const struct brig_globals *g, const char *flag, struct brig_policy **p,
                       const char **name, struct brig_error **err)
{
    *name = flag ? flag : g->policy;
    TRY(policy_resolve(*name, p, err));
    if (*p == NULL) {
        *name = POLICY_DEFAULT_PROFILE;
        TRY(policy_load(*name, p, err));
    } else if (*name == NULL) {
        *name = POLICY_SYSTEM_FILE;
    }
    return 0;
}

/* CONFIG.json or a bundle directory: text and the bundle directory. The
 * config file is read as create reads it (bundle.h): never through a
 * symlink, never a fifo or a device, and never quoted in an error. */
static int policy_read_config(const char *arg, char **text, size_t *len, char **bundle,
                              struct brig_error **err)
{
    struct stat st;
    if (stat(arg, &st) < 0) return brig_fail(err, errno, "%s", arg);
    autofree char *dir_copy = brig_strdup(arg), *base_copy = brig_strdup(arg);
    const char *dir = S_ISDIR(st.st_mode) ? arg : dirname(dir_copy);
    const char *name = S_ISDIR(st.st_mode) ? "config.json" : basename(base_copy);
    struct brig_bundle b;
    TRY(bundle_open(dir, name, &b, err));
    *text = steal_ptr(&b.config);
    *len = b.config_len;
    *bundle = steal_ptr(&b.path);
    bundle_close(&b);
    return 0;
}

static int policy_check_cmd(const struct brig_globals *g, int argc, char **argv, int *status,
                            struct brig_error **err)
{
    const char *pol = NULL, *format = "text", *compose = NULL, *service = NULL;
    bool help = false;
    const struct cli_flag flags[] = {
        { "policy", 'p', CLI_STRING, &pol, "FILE|NAME", "the policy (default: global --policy, "
          POLICY_SYSTEM_FILE ", agent)" },
        { "format", 'f', CLI_STRING, &format, "FORMAT", "text (default) or json" },
        { "compose", 0, CLI_STRING, &compose, "FILE", "check a compose service (as Docker runs it) "
          "instead of a config" },
        { "service", 0, CLI_STRING, &service, "NAME", "the compose service (default: the only one)" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    char *pos[argc + 1];
    int npos = 0;
    if (cli_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, false, NULL, pos, &npos, err) < 0)
        return policy_bad_input(err, status);
    if (help) {
        cli_usage("policy check", "CONFIG.json|BUNDLE | --compose FILE [--service NAME]",
                  "Check a config (or a compose service) against the policy: one line per "
                  "rule. Exit 0 all pass, 1 a violation, 2 bad input.", flags, BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    if (npos != (compose ? 0 : 1) || (service && !compose) ||
        (strcmp(format, "text") != 0 && strcmp(format, "json") != 0)) {
        brig_failx(err, "policy check: expected one CONFIG.json or BUNDLE, or --compose FILE "
                   "[--service NAME], and --format text|json");
        return policy_bad_input(err, status);
    }
    autopolicy struct brig_policy *p = NULL;
    const char *name = NULL;
    if (policy_pick(g, pol, &p, &name, err) < 0) return policy_bad_input(err, status);
    struct policy_report rep;
    if (compose != NULL) {
        autofree char *svc = NULL;
        if (policy_compose_check(p, compose, service, &rep, &svc, err) < 0) return policy_bad_input(err, status);
    } else {
        autofree char *text = NULL, *bundle = NULL;
        size_t len = 0;
        autospec struct brig_spec *s = NULL;
        if (policy_read_config(pos[0], &text, &len, &bundle, err) < 0 ||
            spec_parse(text, len, bundle, &s, err) < 0) {
            brig_wrap(err, "%s", pos[0]);
            return policy_bad_input(err, status);
        }
        policy_check(p, s, &rep);
    }
    autofree char *out = strcmp(format, "json") == 0 ? policy_report_json(p, &rep) : policy_report_text(&rep, false);
    fputs(out, stdout);
    *status = rep.failed > 0 ? 1 : 0;
    autofree char *ids = policy_report_failed_ids(&rep);
    struct policy_audit_event ev = { .op = "policy", .decision = rep.failed ? "fail" : "pass",
                                     .rules = ids[0] ? ids : NULL };
    policy_report_free(&rep);
    /* A CI gate runs check anywhere: its audit line is best effort, and
     * only written where the policy's log directory already exists. */
    autofree char *dir = brig_strdup(p->audit.path ? p->audit.path : "/nonexistent/x");
    if (access(dirname(dir), W_OK) == 0) policy_audit(p, &ev, NULL);
    return 0;
}

static int policy_apply_cmd(const struct brig_globals *g, int argc, char **argv, int *status,
                            struct brig_error **err)
{
    const char *pol = NULL, *ws = NULL, *output = NULL;
    bool help = false;
    const struct cli_flag flags[] = {
        { "policy", 'p', CLI_STRING, &pol, "FILE|NAME", "the policy" },
        { "workspace", 'w', CLI_STRING, &ws, "DIR", "host directory mounted as the workspace" },
        { "output", 'o', CLI_STRING, &output, "FILE", "write here instead of stdout" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    char *pos[argc + 1];
    int npos = 0;
    if (cli_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, false, NULL, pos, &npos, err) < 0)
        return policy_bad_input(err, status);
    if (help) {
        cli_usage("policy apply", "CONFIG.json|BUNDLE", "Write the config hardened to meet the policy "
                  "(idempotent; the result passes check).", flags, BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    if (npos != 1) {
        brig_failx(err, "policy apply: expected one CONFIG.json or BUNDLE");
        return policy_bad_input(err, status);
    }
    autopolicy struct brig_policy *p = NULL;
    const char *name = NULL;
    autofree char *text = NULL, *bundle = NULL, *out = NULL;
    size_t len = 0;
    struct policy_apply_opts ao = { .workspace_source = ws };
    if (policy_pick(g, pol, &p, &name, err) < 0 || policy_read_config(pos[0], &text, &len, &bundle, err) < 0 ||
        policy_apply(p, text, len, &ao, &out, err) < 0)
        return policy_bad_input(err, status);
    if (output == NULL) {
        fputs(out, stdout);
        return 0;
    }
    autofree char *copy = brig_strdup(output), *copy2 = brig_strdup(output);
    autoclose int dfd = open(dirname(copy), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return brig_fail(err, errno, "--output %s", output);
    return brig_write_file_atomic(dfd, basename(copy2), out, strlen(out), 0644, err);
}

static int policy_show_cmd(const struct brig_globals *g, int argc, char **argv, int *status,
                           struct brig_error **err)
{
    const char *name = argc > 0 ? argv[0] : g->policy ? g->policy : POLICY_DEFAULT_PROFILE;
    if (argc > 0 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
        printf("Usage: brig policy show [NAME|FILE]\n\nPrint a built-in profile (or a policy file, "
               "after validating it).\n");
        return 0;
    }
    /* read once (a profile's or a file's "extends" merged): what is printed
     * is what was validated */
    autofree char *text = NULL;
    size_t len = 0;
    autopolicy struct brig_policy *p = NULL;
    if (policy_read(name, &text, &len, err) < 0 || policy_parse(text, len, &p, err) < 0)
        return policy_bad_input(err, status);
    fputs(text, stdout);
    return 0;
}

static int policy_list_cmd(void)
{
    for (size_t i = 0; i < policy_builtin_count(); i++)
        printf("%s%s\n", policy_builtin_name(i),
               strcmp(policy_builtin_name(i), POLICY_DEFAULT_PROFILE) == 0 ? " (default)" : "");
    return 0;
}

static int policy_rules_cmd(void)
{
    for (size_t i = 0; i < policy_rule_count(); i++)
        printf("%-18s %s\n", policy_rule_id(i), policy_rule_summary(i));
    return 0;
}

static char *policy_find_probe(void)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (n > 0) {
        self[n] = '\0';
        char *dir = dirname(self);
        /* Installed side by side, or brig's own build tree. */
        const char *rel[] = { "brig-probe", "../tests/probe/brig-probe", BRIG_LIBEXEC_FROM_SBIN "/brig-probe" };
        for (size_t i = 0; i < BRIG_ARRAY_SIZE(rel); i++) {
            char *p = brig_asprintf("%s/%s", dir, rel[i]);
            if (access(p, X_OK) == 0) return p;
            free(p);
        }
    }
    char *p = brig_asprintf("%s/brig-probe", BRIG_LIBEXECDIR);
    if (access(p, X_OK) == 0) return p;
    free(p);
    return NULL;
}

static int policy_selftest_cmd(const struct brig_globals *g, int argc, char **argv, int *status,
                               struct brig_error **err)
{
    const char *pol = NULL, *runtime = NULL, *probe = NULL, *busybox = NULL, *config = NULL;
    const char *format = "text", *workdir = NULL, *engine = NULL;
    bool keep = false, help = false;
    const struct cli_flag flags[] = {
        { "policy", 'p', CLI_STRING, &pol, "FILE|NAME", "the policy" },
        { "runtime", 'r', CLI_STRING, &runtime, "PATH", "OCI runtime to test (default: this brig)" },
        { "engine", 0, CLI_STRING, &engine, "docker", "run the probe with `docker run FLAGS...` "
          "(the flags after --) instead of an OCI runtime" },
        { "probe", 0, CLI_STRING, &probe, "PATH", "static brig-probe (default: next to brig, "
          BRIG_LIBEXECDIR ")" },
        { "busybox", 0, CLI_STRING, &busybox, "PATH", "also put a static busybox in the rootfs" },
        { "config", 'c', CLI_STRING, &config, "FILE", "test this config as is (not made by apply)" },
        { "format", 'f', CLI_STRING, &format, "FORMAT", "text (default) or json" },
        { "workdir", 0, CLI_STRING, &workdir, "DIR", "build the bundle here (must not exist)" },
        { "keep", 0, CLI_BOOL, &keep, NULL, "keep the bundle" },
        { "help", 'h', CLI_BOOL, &help, NULL, "show help" },
    };
    char *pos[argc + 1];
    int npos = 0;
    if (cli_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, false, NULL, pos, &npos, err) < 0)
        return policy_bad_input(err, status);
    if (help) {
        cli_usage("policy selftest", "[--engine docker -- DOCKER-RUN-FLAGS...]",
                  "Run brig-probe in a container made from the policy (or by docker run with your "
                  "flags) and report each boundary; exit 1 if any is open.", flags, BRIG_ARRAY_SIZE(flags));
        return 0;
    }
    pos[npos] = NULL;
    if ((npos != 0 && engine == NULL) || (engine && (runtime || config)) ||
        (strcmp(format, "text") != 0 && strcmp(format, "json") != 0)) {
        brig_failx(err, "policy selftest: arguments only with --engine docker -- FLAGS... (not with "
                   "--runtime or --config); --format text|json");
        return policy_bad_input(err, status);
    }
    autopolicy struct brig_policy *p = NULL;
    const char *name = NULL;
    if (policy_pick(g, pol, &p, &name, err) < 0) return policy_bad_input(err, status);
    autofree char *found = probe ? NULL : policy_find_probe();
    autofree char *base = NULL;
    if (config != NULL) {
        size_t len = 0;
        if (brig_read_regular_at(AT_FDCWD, config, CONFIG_MAX, &base, &len, err) < 0)
            return policy_bad_input(err, status);
    } else {
        base = spec_default_json(false);
    }
    struct policy_selftest_opts o = {
        .runtime = runtime, .engine = engine, .engine_args = pos,
        .probe = probe ? probe : found, .busybox = busybox, .base_config = base,
        .as_is = config != NULL, .policy_flag = name, .workdir = workdir, .keep = keep,
        .json = strcmp(format, "json") == 0,
    };
    int open = 0;
    TRY(policy_selftest(p, &o, &open, err));
    struct policy_audit_event ev = { .op = "policy", .id = "selftest", .decision = open ? "fail" : "pass" };
    autoerr struct brig_error *aerr = NULL;
    policy_audit(p, &ev, &aerr);
    *status = open > 0 ? 1 : 0;
    return 0;
}

int cmd_policy(const struct brig_globals *g, int argc, char **argv, int *status, struct brig_error **err)
{
    const char *sub = argc > 0 ? argv[0] : "";
    char cmd[32];
    snprintf(cmd, sizeof(cmd), "policy %.20s", sub);
    cli_set_command(cmd);
    if (strcmp(sub, "check") == 0) return policy_check_cmd(g, argc - 1, argv + 1, status, err);
    if (strcmp(sub, "apply") == 0) return policy_apply_cmd(g, argc - 1, argv + 1, status, err);
    if (strcmp(sub, "show") == 0) return policy_show_cmd(g, argc - 1, argv + 1, status, err);
    if (strcmp(sub, "list") == 0) return policy_list_cmd();
    if (strcmp(sub, "rules") == 0) return policy_rules_cmd();
    if (strcmp(sub, "selftest") == 0) return policy_selftest_cmd(g, argc - 1, argv + 1, status, err);
    bool help = strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0;
    FILE *f = help ? stdout : stderr;
    fprintf(f, "Usage: brig policy COMMAND\n\n"
            "  check [--policy P] [--format text|json] CONFIG.json|BUNDLE\n"
            "  check [--policy P] [--format text|json] --compose FILE [--service NAME]\n"
            "  apply [--policy P] [--workspace DIR] [--output FILE] CONFIG.json|BUNDLE\n"
            "  show [NAME|FILE]       print a built-in profile\n"
            "  list                   the built-in profiles\n"
            "  rules                  the rule ids check reports\n"
            "  selftest [--policy P] [--runtime PATH] [--probe PATH] [--config FILE] [--format json]\n"
            "  selftest [--policy P] --engine docker [--format json] -- DOCKER-RUN-FLAGS...\n");
    if (!help) *status = 2;
    return 0;
}
