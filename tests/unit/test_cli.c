/* The CLI: flag parsing (args.c), signal names, `brig spec` output, the
 * features document, and the brig binary itself (BRIG_BIN) for --version,
 * exit codes and the error path. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "brig-config.h"
#include "brig-commit.h"
#include "cli/cli.h"
#include "config/json.h"
#include "config/spec.h"
#include "lifecycle/features.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/strutil.h"

/* ---- flags -------------------------------------------------------------- */

struct opts {
    const char *root, *bundle;
    bool debug, force;
    int n;
};

#define FLAGS(o)                                                        \
    const struct cli_flag flags[] = {                                   \
        { "root", 0, CLI_STRING, &(o).root, "DIR", "" },                \
        { "bundle", 'b', CLI_STRING, &(o).bundle, "DIR", "" },          \
        { "debug", 0, CLI_BOOL, &(o).debug, NULL, "" },                 \
        { "force", 'f', CLI_BOOL, &(o).force, NULL, "" },               \
        { "preserve-fds", 0, CLI_INT, &(o).n, "N", "" },                \
    }

static int parse(struct opts *o, bool stop, char **argv, char **pos, int *npos, int *consumed,
                 struct brig_error **e)
{
    FLAGS(*o);
    int argc = (int)brig_strv_len(argv);
    return cli_parse(flags, BRIG_ARRAY_SIZE(flags), argc, argv, stop, consumed, pos, npos, e);
}

Test(args, value_forms)
{
    char *forms[][3] = {
        { "--root=/a", NULL }, { "--root", "/a", NULL }, { "-root", "/a", NULL }, { "-root=/a", NULL },
    };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(forms); i++) {
        struct opts o = {0};
        char *pos[4];
        int npos = -1;
        autoerr struct brig_error *e = NULL;
        cr_assert_eq(parse(&o, false, forms[i], pos, &npos, NULL, &e), 0, "form %zu: %s", i, e ? e->msg : "");
        cr_expect_str_eq(o.root, "/a", "form %zu", i);
        cr_expect_eq(npos, 0);
    }
    struct opts o = {0};
    char *pos[8];
    int npos = 0;
    autoerr struct brig_error *e = NULL;
    char *a[] = { "-b", "bun", "id1", "-f", "--preserve-fds=3", "--", "--root", NULL };
    cr_assert_eq(parse(&o, false, a, pos, &npos, NULL, &e), 0, "%s", e ? e->msg : "");
    cr_expect_str_eq(o.bundle, "bun");
    cr_expect(o.force);
    cr_expect_eq(o.n, 3);
    cr_assert_eq(npos, 2, "flags after positionals and \"--\"");
    cr_expect_str_eq(pos[0], "id1");
    cr_expect_str_eq(pos[1], "--root");
    struct opts o2 = {0};
    char *b[] = { "-b=x", "--preserve-fds", "2", NULL };
    cr_assert_eq(parse(&o2, false, b, pos, &npos, NULL, &e), 0);
    cr_expect_str_eq(o2.bundle, "x");
    cr_expect_eq(o2.n, 2);
}

Test(args, booleans)
{
    struct opts o = { .debug = true };
    char *pos[4];
    int npos = 0;
    autoerr struct brig_error *e = NULL;
    char *a[] = { "--debug=false", "--force=true", NULL };
    cr_assert_eq(parse(&o, false, a, pos, &npos, NULL, &e), 0);
    cr_expect(!o.debug);
    cr_expect(o.force);
    char *bad[] = { "--debug=maybe", NULL };
    cr_expect_eq(parse(&o, false, bad, pos, &npos, NULL, &e), -1);
    cr_expect(strstr(e->msg, "maybe") != NULL, "%s", e->msg);
}

Test(args, errors)
{
    struct opts o = {0};
    char *pos[4];
    int npos = 0;
    autoerr struct brig_error *e = NULL;
    char *unknown[] = { "--nope", NULL };
    cr_expect_eq(parse(&o, false, unknown, pos, &npos, NULL, &e), -1);
    cr_expect_str_eq(e->msg, "flag provided but not defined: --nope (run 'brig --help')");
    brig_error_freep(&e);
    cli_set_command("sandbox run");
    cr_expect_eq(parse(&o, false, unknown, pos, &npos, NULL, &e), -1);
    cr_expect_str_eq(e->msg, "flag provided but not defined: --nope (run 'brig sandbox run --help')");
    cli_set_command(NULL);
    brig_error_freep(&e);
    char *missing[] = { "--root", NULL };
    cr_expect_eq(parse(&o, false, missing, pos, &npos, NULL, &e), -1);
    cr_expect_str_eq(e->msg, "flag needs an argument: --root");
    brig_error_freep(&e);
    char *notint[] = { "--preserve-fds", "x", NULL };
    cr_expect_eq(parse(&o, false, notint, pos, &npos, NULL, &e), -1);
    cr_expect(strstr(e->msg, "expected an integer") != NULL, "%s", e->msg);
}

Test(args, global_stop_at_command)
{
    struct opts o = {0};
    char *pos[8];
    int consumed = -1;
    autoerr struct brig_error *e = NULL;
    char *a[] = { "--root", "/r", "--debug", "delete", "--force", "x", NULL };
    cr_assert_eq(parse(&o, true, a, pos, NULL, &consumed, &e), 0, "%s", e ? e->msg : "");
    cr_expect_eq(consumed, 3);
    cr_expect_str_eq(o.root, "/r");
    cr_expect(o.debug);
    cr_expect(!o.force, "command flags must not be parsed as globals");
}

/* ---- signals ------------------------------------------------------------ */

Test(signals, names_and_numbers)
{
    const struct { const char *s; int sig; } ok[] = {
        { "KILL", SIGKILL }, { "SIGKILL", SIGKILL }, { "kill", SIGKILL }, { "sigterm", SIGTERM },
        { "9", SIGKILL }, { "15", SIGTERM }, { "HUP", SIGHUP }, { "SIGUSR2", SIGUSR2 },
        { "WINCH", SIGWINCH }, { "RTMIN", SIGRTMIN }, { "SIGRTMIN+2", SIGRTMIN + 2 },
        { "RTMAX-1", SIGRTMAX - 1 }, { "64", 64 },
    };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(ok); i++) {
        int sig = -1;
        autoerr struct brig_error *e = NULL;
        cr_expect_eq(cli_parse_signal(ok[i].s, &sig, &e), 0, "%s: %s", ok[i].s, e ? e->msg : "");
        cr_expect_eq(sig, ok[i].sig, "%s -> %d", ok[i].s, sig);
    }
    const char *bad[] = { "", "0", "65", "-9", "FOO", "SIG", "RTMIN+99", "9x", "KILLL" };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(bad); i++) {
        int sig = -1;
        autoerr struct brig_error *e = NULL;
        cr_expect_eq(cli_parse_signal(bad[i], &sig, &e), -1, "\"%s\" accepted as %d", bad[i], sig);
    }
}

/* ---- spec --------------------------------------------------------------- */

Test(spec, default_parses_and_is_sane)
{
    for (int rootless = 0; rootless < 2; rootless++) {
        autofree char *json = spec_default_json(rootless);
        autospec struct brig_spec *s = NULL;
        autoerr struct brig_error *e = NULL;
        cr_assert_eq(spec_parse(json, strlen(json), "/bundle", &s, &e), 0, "%s\n%s", e ? e->msg : "", json);
        cr_expect(!s->process.terminal);
        cr_expect(s->process.caps.present[BRIG_CAP_BOUNDING]);
        cr_expect(!s->process.caps.present[BRIG_CAP_AMBIENT], "ambient without inheritable cannot be raised");
        cr_expect_str_eq(s->process.args[0], "sh");
        cr_expect_str_eq(s->root.path, "/bundle/rootfs");
        cr_expect(s->root.readonly);
        cr_expect(s->linux_cfg.namespaces[BRIG_NS_PID].present);
        cr_expect_eq(s->linux_cfg.namespaces[BRIG_NS_NETWORK].present, !rootless);
        cr_expect_eq(s->linux_cfg.namespaces[BRIG_NS_USER].present, (bool)rootless);
        cr_expect_eq(s->linux_cfg.n_uid_mappings, rootless ? 1u : 0u);
        cr_expect_eq(strstr(json, "gid=5") == NULL, (bool)rootless);
    }
}

/* ---- features ----------------------------------------------------------- */

static bool json_array_has(brig_json arr, const char *s)
{
    for (size_t i = 0; i < json_array_len(arr); i++) {
        const char *v = NULL;
        if (json_as_string(json_array_at(arr, i), "", &v, NULL) == 0 && strcmp(v, s) == 0) return true;
    }
    return false;
}

Test(features, required_fields_and_real_values)
{
    autofree char *json = features_json(false);
    autojson brig_json v = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(json_parse(json, strlen(json), &v, &e), 0, "%s", json);
    autofree char *min = NULL, *max = NULL;
    cr_expect_eq(json_get_string(v, "", "ociVersionMin", true, &min, &e), 0);
    cr_expect_eq(json_get_string(v, "", "ociVersionMax", true, &max, &e), 0);
    cr_expect_str_eq(max, BRIG_OCI_VERSION);
    cr_expect(json_array_has(json_get(v, "hooks"), "createRuntime"));
    cr_expect(json_array_has(json_get(v, "hooks"), "poststop"));
    cr_expect_eq(json_array_len(json_get(v, "hooks")), 6);
    brig_json l = json_get(v, "linux");
    cr_assert(json_is_object(l));
    cr_expect(json_array_has(json_get(l, "namespaces"), "pid"));
    cr_expect(json_array_has(json_get(l, "namespaces"), "mount"));
    cr_expect(json_array_has(json_get(l, "capabilities"), "CAP_SYS_ADMIN"));
    cr_expect(!json_array_has(json_get(l, "capabilities"), "CAP_NOT_A_CAP"));
    brig_json sc = json_get(l, "seccomp");
    cr_expect(json_array_has(json_get(sc, "actions"), "SCMP_ACT_ERRNO"));
    cr_expect(json_array_has(json_get(sc, "operators"), "SCMP_CMP_MASKED_EQ"));
#ifdef __x86_64__
    cr_expect(json_array_has(json_get(sc, "archs"), "SCMP_ARCH_X86_64"));
#endif
    cr_expect(json_is_object(json_get(l, "cgroup")));
    brig_json ann = json_get(v, "annotations");
    autofree char *ver = NULL;
    cr_expect_eq(json_get_string(ann, "annotations", "io.github.seccomp.libseccomp.version", true, &ver, &e), 0);
    cr_expect(json_array_has(json_get(v, "mountOptions"), "nosuid"), "mountOptions: %s", json);
}

/* ---- the binary --------------------------------------------------------- */

static const char *brig_bin(void)
{
    const char *b = getenv("BRIG_BIN");
    if (b == NULL || access(b, X_OK) != 0) cr_skip_test("BRIG_BIN not set (run through meson test)");
    return b;
}

/* Run brig with args in a shell; stdout+stderr into *out. Returns exit status. */
static int run_brig(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int run_brig(char **out, const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    autofree char *cmd = brig_asprintf("'%s' %s 2>&1", brig_bin(), args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char *buf = brig_calloc(65536, 1);
    size_t n = fread(buf, 1, 65535, p);
    buf[n] = '\0';
    int st = pclose(p);
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

Test(binary, version_is_three_lines)
{
    autofree char *out = NULL;
    cr_assert_eq(run_brig(&out, "--version"), 0);
    autofree char *want = brig_asprintf("brig version %s\ncommit: %s\nspec: %s\n", BRIG_VERSION, BRIG_COMMIT,
                                        BRIG_OCI_VERSION);
    cr_expect_str_eq(out, want);
    autofree char *out2 = NULL;
    cr_assert_eq(run_brig(&out2, "-v"), 0);
    cr_expect_str_eq(out2, want);
}

Test(binary, errors_exit_1_and_log_json)
{
    char tmp[] = "/tmp/brig-test-cli-XXXXXX";
    cr_assert_not_null(mkdtemp(tmp));
    autofree char *out = NULL;
    cr_expect_eq(run_brig(&out, "--root %s/r delete --force ghost", tmp), 0, "%s", out);
    free(out);
    cr_expect_eq(run_brig(&out, "--root %s/r --log %s/log --log-format json state ghost", tmp, tmp), 1);
    cr_expect(strstr(out, "container ghost does not exist") != NULL, "stderr: %s", out);
    autofree char *log = NULL;
    autofree char *logp = brig_asprintf("%s/log", tmp);
    cr_assert_eq(brig_read_file(logp, 65536, &log, NULL, NULL), 0);
    cr_expect(strstr(log, "\"level\":\"error\",\"msg\":\"container ghost does not exist\"") != NULL, "log: %s", log);
    free(out);
    cr_expect_eq(run_brig(&out, "frobnicate"), 1);
    free(out);
    cr_expect_eq(run_brig(&out, "kill"), 1, "missing id accepted");
    free(out);
    cr_expect_eq(run_brig(&out, "--root %s/r kill c1 NOSIG", tmp), 1);
    cr_expect(strstr(out, "unknown signal") != NULL, "%s", out);
    free(out);
    cr_expect_eq(run_brig(&out, "checkpoint c1"), 1);
    cr_expect(strstr(out, "not supported") != NULL, "%s", out);
    free(out);
    cr_expect_eq(run_brig(&out, "--root %s/r exec c1 sh", tmp), 1);
    cr_expect(strstr(out, "does not exist") != NULL, "%s", out);
    free(out);
    cr_expect_eq(run_brig(&out, "--log-format yaml list"), 1);
    free(out);
    out = NULL;
    brig_rm_rf_at(AT_FDCWD, tmp, NULL);
}

Test(binary, spec_refuses_to_overwrite)
{
    char tmp[] = "/tmp/brig-test-cli-XXXXXX";
    cr_assert_not_null(mkdtemp(tmp));
    autofree char *out = NULL;
    cr_expect_eq(run_brig(&out, "spec -b %s", tmp), 0, "%s", out);
    autofree char *p = brig_asprintf("%s/config.json", tmp);
    autofree char *first = NULL;
    cr_assert_eq(brig_read_file(p, 1 << 20, &first, NULL, NULL), 0);
    free(out);
    cr_expect_eq(run_brig(&out, "spec --bundle=%s --rootless", tmp), 1);
    cr_expect(strstr(out, "already exists") != NULL, "%s", out);
    autofree char *second = NULL;
    cr_assert_eq(brig_read_file(p, 1 << 20, &second, NULL, NULL), 0);
    cr_expect_str_eq(first, second, "config.json was modified");
    free(out);
    cr_expect_eq(run_brig(&out, "--root %s/r list", tmp), 0);
    cr_expect_str_eq(out, "ID          PID         STATUS      BUNDLE      CREATED     OWNER\n");
    brig_rm_rf_at(AT_FDCWD, tmp, NULL);
}
