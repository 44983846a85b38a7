/* hooks_run, container_kill, container_delete, container_state/list with a
 * temporary --root; a forked child of the test plays the container's init. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config/json.h"
#include "lifecycle/container.h"
#include "lifecycle/hooks.h"
#include "lifecycle/state.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/strutil.h"

static char tmp[PATH_MAX];
static char root[PATH_MAX + 16];
static struct brig_globals g;

static void setup(void)
{
    snprintf(tmp, sizeof(tmp), "/tmp/brig-test-ops-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(root, sizeof(root), "%s/root", tmp);
    g = (struct brig_globals){ .root = root };
}

static void teardown(void)
{
    brig_rm_rf_at(AT_FDCWD, tmp, NULL);
}

static pid_t spawn_sleeper(void)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        for (;;) pause();
    }
    return pid;
}

/* A container whose init is pid (0: never started), optionally created. */
static void make_container(const char *id, pid_t pid, bool created, const char *config)
{
    struct brig_state st = {
        .id = (char *)id, .bundle = tmp, .oci_version = "1.2.1", .rootfs = tmp, .pid = pid,
        .pid_start_time = pid > 0 ? state_pid_start_time(pid) : 0, .created = "2026-01-01T00:00:00Z",
        .setup_done = true,
    };
    autoerr struct brig_error *e = NULL;
    autoclose int fd = -1;
    cr_assert_eq(state_dir_create(root, id, &fd, &e), 0, "%s", e ? e->msg : "");
    cr_assert_eq(state_write(fd, &st, &e), 0, "%s", e ? e->msg : "");
    if (created) {
        cr_assert_eq(mkfifoat(fd, "exec.fifo", 0600), 0);
        /* A created init holds exec.fifo open until start (left open). */
        cr_assert_geq(openat(fd, "exec.fifo", O_RDWR | O_CLOEXEC), 0);
    }
    if (config != NULL)
        cr_assert_eq(brig_write_file_atomic(fd, "config.json", config, strlen(config), 0600, &e), 0);
}

static int wait_status(pid_t pid)
{
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return status;
}

static bool dir_exists(const char *id)
{
    autofree char *p = brig_asprintf("%s/%s", root, id);
    return access(p, F_OK) == 0;
}

/* ---- hooks -------------------------------------------------------------- */

TestSuite(hooks, .init = setup, .fini = teardown);

static struct brig_spec *hook_spec(enum brig_hook_kind kind, const char *script, char **env, int timeout)
{
    struct brig_spec *s = brig_calloc(1, sizeof(*s));
    struct brig_hook *h = brig_calloc(1, sizeof(*h));
    h->path = brig_strdup("/bin/sh");
    char *args[] = { "sh", "-c", (char *)script, NULL };
    h->args = brig_strv_dup(args);
    h->n_args = 3;
    h->env = env ? brig_strv_dup(env) : NULL;
    h->n_env = env ? brig_strv_len(env) : 0;
    h->has_timeout = timeout > 0;
    h->timeout = timeout;
    s->hooks[kind].hooks = h;
    s->hooks[kind].n = 1;
    return s;
}

Test(hooks, state_on_stdin_env_and_success)
{
    autofree char *out = brig_asprintf("%s/out", tmp);
    autofree char *script = brig_asprintf("cat > %s; echo \"$FOO\" >> %s", out, out);
    char *env[] = { "FOO=bar baz", NULL };
    autospec struct brig_spec *s = hook_spec(BRIG_HOOK_PRESTART, script, env, 0);
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(hooks_run(s, BRIG_HOOK_PRESTART, "{\"id\":\"c1\"}", &e), 0, "%s", e ? e->msg : "");
    autofree char *text = NULL;
    cr_assert_eq(brig_read_file(out, 4096, &text, NULL, &e), 0);
    cr_expect_str_eq(text, "{\"id\":\"c1\"}bar baz\n");
}

Test(hooks, failure_names_hook_and_status)
{
    autospec struct brig_spec *s = hook_spec(BRIG_HOOK_CREATE_RUNTIME, "exit 3", NULL, 0);
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(hooks_run(s, BRIG_HOOK_CREATE_RUNTIME, "{}", &e), -1);
    cr_expect_str_eq(e->msg, "hooks.createRuntime[0] (/bin/sh): exited with status 3");
}

Test(hooks, timeout_kills)
{
    autospec struct brig_spec *s = hook_spec(BRIG_HOOK_POSTSTART, "exec sleep 30", NULL, 1);
    autoerr struct brig_error *e = NULL;
    time_t t0 = time(NULL);
    cr_assert_eq(hooks_run(s, BRIG_HOOK_POSTSTART, "{}", &e), -1);
    cr_expect_lt(time(NULL) - t0, 5, "timeout not enforced");
    cr_expect_str_eq(e->msg, "hooks.poststart[0] (/bin/sh): timed out after 1s (killed, with what it started)");
}

Test(hooks, missing_binary_and_runtime_env)
{
    autospec struct brig_spec *s = hook_spec(BRIG_HOOK_POSTSTOP, "", NULL, 0);
    free(s->hooks[BRIG_HOOK_POSTSTOP].hooks[0].path);
    s->hooks[BRIG_HOOK_POSTSTOP].hooks[0].path = brig_strdup("/nonexistent/hook");
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(hooks_run(s, BRIG_HOOK_POSTSTOP, "{}", &e), -1);
    cr_expect(strstr(e->msg, "hooks.poststop[0] (/nonexistent/hook): exec: No such file") != NULL, "%s", e->msg);

    /* No env in the config: the runtime's environment, as runc and crun
     * pass it (as runc does). */
    setenv("BRIG_TEST_RUNTIME_ENV", "1", 1);
    autospec struct brig_spec *s2 = hook_spec(BRIG_HOOK_PRESTART, "test \"$BRIG_TEST_RUNTIME_ENV\" = 1", NULL, 0);
    brig_error_freep(&e);
    cr_expect_eq(hooks_run(s2, BRIG_HOOK_PRESTART, "{}", &e), 0, "the runtime's environment did not reach the hook");
}

Test(hooks, other_fds_closed)
{
    int fd = open("/dev/null", O_RDONLY);   /* deliberately not O_CLOEXEC */
    cr_assert_geq(fd, 4);
    autofree char *script = brig_asprintf("test ! -e /proc/self/fd/%d", fd);
    autospec struct brig_spec *s = hook_spec(BRIG_HOOK_PRESTART, script, NULL, 0);
    autoerr struct brig_error *e = NULL;
    cr_expect_eq(hooks_run(s, BRIG_HOOK_PRESTART, "{}", &e), 0, "fd %d leaked into the hook", fd);
    close(fd);
}

Test(hooks, large_state_does_not_block)
{
    size_t n = 300000;
    autofree char *big = brig_calloc(n + 1, 1);
    memset(big, 'x', n);
    autospec struct brig_spec *s = hook_spec(BRIG_HOOK_PRESTART, "true", NULL, 5);  /* ignores stdin */
    autoerr struct brig_error *e = NULL;
    cr_expect_eq(hooks_run(s, BRIG_HOOK_PRESTART, big, &e), 0, "%s", e ? e->msg : "");
}

/* ---- kill --------------------------------------------------------------- */

TestSuite(kill, .init = setup, .fini = teardown);

Test(kill, signals_running_init)
{
    pid_t pid = spawn_sleeper();
    make_container("k1", pid, false, NULL);
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(container_kill(&g, "k1", SIGUSR1, false, &e), 0, "%s", e ? e->msg : "");
    int st = wait_status(pid);
    cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGUSR1);
    cr_expect_eq(container_kill(&g, "k1", SIGTERM, false, &e), -1);
    cr_expect_str_eq(e->msg, "container k1 is not running");
}

Test(kill, created_allowed_reused_pid_refused)
{
    pid_t pid = spawn_sleeper();
    make_container("k2", pid, true, NULL);
    /* Rewrite the start time: the pid now "belongs to someone else". */
    autoerr struct brig_error *e = NULL;
    autoclose int fd = -1;
    cr_assert_eq(state_dir_open(root, "k2", &fd, &e), 0);
    autostate struct brig_state *st = NULL;
    cr_assert_eq(state_read(fd, &st, &e), 0);
    st->pid_start_time += 7;
    cr_assert_eq(state_write(fd, st, &e), 0);
    close(fd);
    fd = -1;
    cr_expect_eq(container_kill(&g, "k2", SIGKILL, false, &e), -1, "signalled a reused pid");
    cr_expect(kill(pid, 0) == 0, "the unrelated process was killed");
    kill(pid, SIGKILL);
    wait_status(pid);
}

Test(kill, all_needs_cgroup_and_missing_container)
{
    pid_t pid = spawn_sleeper();
    make_container("k3", pid, false, NULL);
    autoerr struct brig_error *e = NULL;
    cr_expect_eq(container_kill(&g, "k3", SIGKILL, true, &e), -1);
    cr_expect(strstr(e->msg, "no cgroup") != NULL, "%s", e->msg);
    cr_expect(kill(pid, 0) == 0);
    kill(pid, SIGKILL);
    wait_status(pid);
    brig_error_freep(&e);
    cr_expect_eq(container_kill(&g, "nope", SIGKILL, false, &e), -1);
    cr_expect_str_eq(e->msg, "container nope does not exist");
}

/* ---- delete ------------------------------------------------------------- */

TestSuite(delete, .init = setup, .fini = teardown);

Test(delete, missing)
{
    autoerr struct brig_error *e = NULL;
    cr_expect_eq(container_delete(&g, "ghost", false, &e), -1);
    cr_expect_str_eq(e->msg, "container ghost does not exist");
    brig_error_freep(&e);
    cr_expect_eq(container_delete(&g, "ghost", true, &e), 0, "--force on a missing container");
}

Test(delete, running_needs_force)
{
    pid_t pid = spawn_sleeper();
    make_container("d1", pid, false, NULL);
    autoerr struct brig_error *e = NULL;
    cr_expect_eq(container_delete(&g, "d1", false, &e), -1);
    cr_expect_str_eq(e->msg, "cannot delete container d1 that is not stopped: running");
    cr_expect(dir_exists("d1"));
    cr_expect(kill(pid, 0) == 0);
    brig_error_freep(&e);
    cr_assert_eq(container_delete(&g, "d1", true, &e), 0, "%s", e ? e->msg : "");
    int st = wait_status(pid);
    cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    cr_expect(!dir_exists("d1"), "state dir left behind");
}

Test(delete, created_is_killed)
{
    pid_t pid = spawn_sleeper();
    make_container("d2", pid, true, NULL);
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(container_delete(&g, "d2", false, &e), 0, "%s", e ? e->msg : "");
    int st = wait_status(pid);
    cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    cr_expect(!dir_exists("d2"));
}

Test(delete, stopped_runs_poststop_and_tolerates_failure)
{
    autofree char *mark = brig_asprintf("%s/poststop-ran", tmp);
    autofree char *config = brig_asprintf(
        "{\"ociVersion\":\"1.2.1\",\"root\":{\"path\":\"rootfs\"},\"hooks\":{\"poststop\":["
        "{\"path\":\"/bin/sh\",\"args\":[\"sh\",\"-c\",\"grep -q '\\\"status\\\":\\\"stopped\\\"' && touch %s\"]},"
        "{\"path\":\"/bin/false\"}]}}", mark);
    pid_t pid = spawn_sleeper();
    make_container("d3", pid, false, config);
    kill(pid, SIGKILL);
    wait_status(pid);
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(container_delete(&g, "d3", false, &e), 0, "%s", e ? e->msg : "");
    cr_expect(access(mark, F_OK) == 0, "poststop hook did not run (or saw no stopped state)");
    cr_expect(!dir_exists("d3"));
}

Test(delete, leftover_without_state_needs_force)
{
    autofree char *d = brig_asprintf("%s/half", root);
    cr_assert_eq(mkdir(root, 0700), 0);
    cr_assert_eq(mkdir(d, 0711), 0);
    autoerr struct brig_error *e = NULL;
    cr_expect_eq(container_delete(&g, "half", false, &e), -1);
    brig_error_freep(&e);
    cr_expect_eq(container_delete(&g, "half", true, &e), 0, "%s", e ? e->msg : "");
    cr_expect(!dir_exists("half"));
}

/* ---- state / list ------------------------------------------------------- */

TestSuite(query, .fini = teardown);   /* tests call setup() after redirecting stdout */

static char *read_stdout(void)
{
    fflush(stdout);
    FILE *f = cr_get_redirected_stdout();
    char *buf = brig_calloc(65536, 1);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    return buf;
}

Test(query, state_pretty_json, .init = cr_redirect_stdout)
{
    setup();
    pid_t pid = spawn_sleeper();
    make_container("q1", pid, true, NULL);
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(container_state(&g, "q1", &e), 0, "%s", e ? e->msg : "");
    kill(pid, SIGKILL);
    wait_status(pid);
    autofree char *out = read_stdout();
    autojson brig_json v = NULL;
    cr_assert_eq(json_parse(out, strlen(out), &v, &e), 0, "%s", out);
    autofree char *status = NULL;
    int64_t p = 0;
    cr_expect_eq(json_get_string(v, "", "status", true, &status, &e), 0);
    cr_expect_str_eq(status, "created");
    cr_expect_eq(json_get_i64(v, "", "pid", true, &p, &e), 0);
    cr_expect_eq(p, pid);
    cr_expect(strchr(out, '\n') != strrchr(out, '\n'), "not pretty-printed");
}

Test(query, list_quiet_and_json, .init = cr_redirect_stdout)
{
    setup();
    make_container("b", 0, false, NULL);
    make_container("a", 0, false, NULL);
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(container_list(&g, false, true, &e), 0);
    cr_assert_eq(container_list(&g, true, false, &e), 0);
    cr_assert_eq(container_list(&g, false, false, &e), 0);
    autofree char *out = read_stdout();
    cr_expect(brig_str_has_prefix(out, "a\nb\n[{"), "%s", out);
    /* pid 0 and nobody holding the lock: the create that made it is dead. */
    cr_expect(strstr(out, "\"id\":\"a\"") != NULL && strstr(out, "\"status\":\"stopped\"") != NULL, "%s", out);
    cr_expect(strstr(out, "ID          PID         STATUS      BUNDLE") != NULL, "%s", out);
}

Test(query, list_empty_root, .init = cr_redirect_stdout)
{
    setup();
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(container_list(&g, true, false, &e), 0);
    autofree char *out = read_stdout();
    cr_expect_str_eq(out, "[]\n");
}
