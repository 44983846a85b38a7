/* lifecycle/exec_process.c: what `brig exec` runs, from the saved config and
 * the command line (runc's getProcess), never less confined than the config. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config/spec.h"
#include "lifecycle/exec.h"
#include "util/cleanup.h"
#include "util/strutil.h"

static const char config[] =
    "{\"ociVersion\": \"1.2.0\", \"root\": {\"path\": \"rootfs\"},"
    " \"process\": {\"args\": [\"/init\"], \"cwd\": \"/\", \"terminal\": true,"
    "   \"consoleSize\": {\"height\": 10, \"width\": 20},"
    "   \"env\": [\"PATH=/bin\", \"A=1\"], \"noNewPrivileges\": true,"
    "   \"user\": {\"uid\": 5, \"gid\": 6, \"additionalGids\": [7]},"
    "   \"capabilities\": {\"bounding\": [\"CAP_KILL\"], \"effective\": [\"CAP_KILL\"],"
    "                      \"permitted\": [\"CAP_KILL\"]}}}";

static struct brig_spec *load(void)
{
    struct brig_spec *s = NULL;
    struct brig_error *err = NULL;
    cr_assert_eq(spec_parse(config, strlen(config), "/bundle", &s, &err), 0, "%s",
                 err ? err->msg : "");
    return s;
}

static bool has_env(const struct brig_process *p, const char *kv)
{
    for (size_t i = 0; i < p->n_env; i++)
        if (strcmp(p->env[i], kv) == 0) return true;
    return false;
}

Test(exec_process, command_and_flags_override_the_config)
{
    autospec struct brig_spec *s = load();
    char *args[] = { "sh", "-c", "true", NULL };
    char *env[] = { "A=2", "B=3", NULL };
    char *gids[] = { "8", NULL };
    struct brig_exec_opts o = { .id = "c", .args = args, .env = env, .cwd = "/tmp",
                                .user = "1000", .additional_gids = gids };
    struct brig_error *err = NULL;
    cr_assert_eq(exec_build_process(s, &o, &err), 0, "%s", err ? err->msg : "");
    const struct brig_process *p = &s->process;
    cr_expect_eq(p->n_args, 3);
    cr_expect_str_eq(p->args[0], "sh");
    cr_expect_null(p->args[3]);
    cr_expect(!p->terminal, "no --tty: no terminal, whatever the config says");
    cr_expect_str_eq(p->cwd, "/tmp");
    cr_expect(has_env(p, "A=2") && !has_env(p, "A=1"), "--env replaces the config's A");
    cr_expect(has_env(p, "B=3") && has_env(p, "PATH=/bin"));
    cr_expect_eq(p->n_env, 3);
    cr_expect_eq(p->user.uid, 1000);
    cr_expect_eq(p->user.gid, 6, "--user without :GID keeps the config's gid");
    cr_expect_eq(p->user.n_additional_gids, 2);
    cr_expect_eq(p->user.additional_gids[1], 8);
    cr_expect(p->no_new_privileges);
}

Test(exec_process, cap_flag_adds_to_three_sets_only)
{
    autospec struct brig_spec *s = load();
    char *args[] = { "x", NULL };
    char *caps[] = { "CAP_SYS_TIME", NULL };
    struct brig_exec_opts o = { .id = "c", .args = args, .caps = caps };
    struct brig_error *err = NULL;
    cr_assert_eq(exec_build_process(s, &o, &err), 0, "%s", err ? err->msg : "");
    const struct brig_caps *c = &s->process.caps;
    uint64_t want = (UINT64_C(1) << 5) | (UINT64_C(1) << 25);      /* KILL, SYS_TIME */
    cr_expect_eq(c->sets[BRIG_CAP_BOUNDING], want);
    cr_expect_eq(c->sets[BRIG_CAP_EFFECTIVE], want);
    cr_expect_eq(c->sets[BRIG_CAP_PERMITTED], want);
    cr_expect_eq(c->sets[BRIG_CAP_AMBIENT], 0, "no inheritable set: no ambient (as runc)");
    cr_expect_eq(c->sets[BRIG_CAP_INHERITABLE], 0);
}

Test(exec_process, bad_input_is_refused_with_the_flag)
{
    char *args[] = { "x", NULL };
    char *badenv[] = { "NOEQUALS", NULL };
    char *badcap[] = { "CAP_NOPE", NULL };
    char *badgid[] = { "abc", NULL };
    struct { struct brig_exec_opts o; const char *msg; } cases[] = {
        { { .args = args, .env = badenv }, "--env NOEQUALS" },
        { { .args = args, .caps = badcap }, "--cap CAP_NOPE" },
        { { .args = args, .additional_gids = badgid }, "--additional-gids" },
        { { .args = args, .user = "root" }, "--user (uid)" },
        { { .args = args, .user = "1:x" }, "--user (gid)" },
        { { .args = args, .cwd = "tmp" }, "--cwd tmp" },
        { { .args = NULL }, "a command is required" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        autospec struct brig_spec *s = load();
        struct brig_error *err = NULL;
        cr_expect_eq(exec_build_process(s, &cases[i].o, &err), -1, "case %zu accepted", i);
        cr_expect(err != NULL && strstr(err->msg, cases[i].msg) != NULL, "case %zu: %s", i,
                  err ? err->msg : "(no error)");
        brig_error_free(err);
    }
}

Test(exec_process, process_file_replaces_but_keeps_no_new_privs)
{
    char path[] = "/tmp/brig-test-exec-process.XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char *json = "{\"args\": [\"/bin/echo\", \"hi\"], \"cwd\": \"/srv\", \"noNewPrivileges\": false,"
                       " \"user\": {\"uid\": 3, \"gid\": 4}}";
    cr_assert_eq(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
    autospec struct brig_spec *s = load();
    struct brig_exec_opts o = { .id = "c", .process_file = path };
    struct brig_error *err = NULL;
    cr_assert_eq(exec_build_process(s, &o, &err), 0, "%s", err ? err->msg : "");
    cr_expect_str_eq(s->process.args[1], "hi");
    cr_expect_str_eq(s->process.cwd, "/srv");
    cr_expect_eq(s->process.user.uid, 3);
    cr_expect(!s->process.has_caps, "the file's process has no capabilities");
    cr_expect(s->process.no_new_privileges, "the config's no_new_privileges stays");

    char *args[] = { "x", NULL };
    autospec struct brig_spec *s2 = load();
    struct brig_exec_opts both = { .id = "c", .process_file = path, .args = args };
    cr_expect_eq(exec_build_process(s2, &both, &err), -1, "--process and a command together");
    brig_error_freep(&err);

    FILE *f = fopen(path, "w");
    fputs("{\"args\": [], \"cwd\": \"/\"}", f);
    fclose(f);
    autospec struct brig_spec *s3 = load();
    struct brig_exec_opts bad = { .id = "c", .process_file = path };
    cr_expect_eq(exec_build_process(s3, &bad, &err), -1);
    cr_expect(err != NULL && strstr(err->msg, "process.args") != NULL, "%s", err ? err->msg : "");
    brig_error_free(err);
    unlink(path);
}
