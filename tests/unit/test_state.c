/* lifecycle/state.c, hooks.c, kill.c, delete.c, query.c against a temporary
 * --root and real processes (children of the test) standing in for the
 * container's init. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

static void setup(void)
{
    snprintf(tmp, sizeof(tmp), "/tmp/brig-test-state-XXXXXX");
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(root, sizeof(root), "%s/root", tmp);
}

static void teardown(void)
{
    brig_rm_rf_at(AT_FDCWD, tmp, NULL);
}

TestSuite(state, .init = setup, .fini = teardown);

/* ---- ids ---------------------------------------------------------------- */

Test(state, id_valid)
{
    const char *ok[] = { "a", "abc", "A1", "c1.x-y_z+2", "9", NULL };
    for (const char **p = ok; *p; p++) {
        struct brig_error *e = NULL;
        cr_expect_eq(state_validate_id(*p, &e), 0, "%s rejected: %s", *p, e ? e->msg : "");
        brig_error_free(e);
    }
}

Test(state, id_invalid)
{
    char long_id[1100];
    memset(long_id, 'a', sizeof(long_id) - 1);
    long_id[sizeof(long_id) - 1] = '\0';
    const char *bad[] = { "", ".", "..", ".hidden", "a/b", "/abs", "a..b", "-x", "a b", "a\nb",
                          "\x01", "caf\xc3\xa9", long_id, NULL };
    for (const char **p = bad; *p; p++) {
        autoerr struct brig_error *e = NULL;
        cr_expect_eq(state_validate_id(*p, &e), -1, "\"%s\" accepted", *p);
        cr_expect_not_null(e);
    }
    autoerr struct brig_error *e = NULL;
    state_validate_id("a/b", &e);
    cr_expect(strstr(e->msg, "a/b") != NULL, "message names the id: %s", e->msg);
}

/* ---- /proc/<pid>/stat --------------------------------------------------- */

Test(state, proc_stat_parse)
{
    /* comm with spaces and ')' must not shift the fields. */
    const char *text = "4242 (evil) S 1 (x) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 777888 19 20\n";
    char st = 0;
    uint64_t start = 0;
    /* Fields after the LAST ')': state R, then field 22 is 777888. */
    cr_assert_eq(state_parse_proc_stat(text, &st, &start), 0);
    cr_expect_eq(st, 'R');
    cr_expect_eq(start, 777888);
    cr_expect_eq(state_parse_proc_stat("12 (x) S 1 2", &st, &start), -1);
    cr_expect_eq(state_parse_proc_stat("garbage", &st, &start), -1);
}

Test(state, passwd_name)
{
    const char *text = "root:x:0:0:root:/root:/bin/bash\n"
                       "# comment\n"
                       "bad line\n"
                       ":x:5:5::/:/bin/sh\n"
                       "odd:x:12x:1::/:/bin/sh\n"
                       "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
                       "last:x:1000:1000::/home/last:/bin/sh";
    char name[64];
    cr_assert(state_passwd_name(text, 0, name, sizeof(name)));
    cr_expect_str_eq(name, "root");
    cr_assert(state_passwd_name(text, 1, name, sizeof(name)));
    cr_expect_str_eq(name, "daemon");
    cr_assert(state_passwd_name(text, 1000, name, sizeof(name)));
    cr_expect_str_eq(name, "last");
    cr_expect_not(state_passwd_name(text, 5, name, sizeof(name)));
    cr_expect_not(state_passwd_name(text, 12, name, sizeof(name)));
    cr_expect_not(state_passwd_name(text, 4242, name, sizeof(name)));
    cr_expect_not(state_passwd_name("", 0, name, sizeof(name)));
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

static void reap(pid_t pid)
{
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}

Test(state, pid_start_time)
{
    cr_expect_gt(state_pid_start_time(getpid()), 0);
    pid_t pid = spawn_sleeper();
    uint64_t t = state_pid_start_time(pid);
    cr_expect_gt(t, 0);
    kill(pid, SIGKILL);
    /* Not reaped yet: a zombie is no longer a live init. */
    for (int i = 0; i < 200 && state_pid_start_time(pid) != 0; i++) usleep(10000);
    cr_expect_eq(state_pid_start_time(pid), 0, "zombie reported alive");
    reap(pid);
    cr_expect_eq(state_pid_start_time(pid), 0);
    cr_expect_eq(state_pid_start_time(0), 0);
}

/* ---- state directory ---------------------------------------------------- */

Test(state, dir_create_open_remove)
{
    autoerr struct brig_error *e = NULL;
    int fd = -1;
    cr_assert_eq(state_dir_create(root, "c1", &fd, &e), 0, "%s", e ? e->msg : "");
    struct stat st;
    cr_assert_eq(stat(root, &st), 0);
    cr_expect_eq(st.st_mode & 07777, 0700, "root mode %o", st.st_mode & 07777);

    int fd2 = -1;
    cr_expect_eq(state_dir_create(root, "c1", &fd2, &e), -1);
    cr_expect(strstr(e->msg, "already exists") != NULL, "%s", e->msg);
    close(fd);

    brig_error_freep(&e);
    cr_assert_eq(state_dir_open(root, "c1", &fd, &e), 0);
    close(fd);
    cr_assert_eq(state_dir_remove(root, "c1", &e), 0);
    cr_expect_eq(state_dir_open(root, "c1", &fd, &e), -1);
    cr_expect_str_eq(e->msg, "container c1 does not exist");
    cr_expect_eq(e->errnum, ENOENT);
}

Test(state, dir_missing_root_is_no_container)
{
    autoerr struct brig_error *e = NULL;
    int fd = -1;
    cr_expect_eq(state_dir_open(root, "nope", &fd, &e), -1);
    cr_expect_eq(e->errnum, ENOENT);
    cr_expect_eq(access(root, F_OK), -1, "open must not create the root");
}

Test(state, dir_lock_held_until_close)
{
    autoerr struct brig_error *e = NULL;
    int fd = -1;
    cr_assert_eq(state_dir_create(root, "c1", &fd, &e), 0);
    autofree char *p = brig_asprintf("%s/c1", root);
    int other = open(p, O_RDONLY | O_DIRECTORY);
    cr_assert_geq(other, 0);
    cr_expect_eq(flock(other, LOCK_EX | LOCK_NB), -1, "lock not held");
    cr_expect_eq(errno, EWOULDBLOCK);
    close(fd);
    cr_expect_eq(flock(other, LOCK_EX | LOCK_NB), 0, "lock not released on close");
    close(other);
}

Test(state, dir_root_symlink_refused)
{
    autofree char *real = brig_asprintf("%s/real", tmp);
    cr_assert_eq(mkdir(real, 0700), 0);
    cr_assert_eq(symlink(real, root), 0);
    autoerr struct brig_error *e = NULL;
    int fd = -1;
    cr_expect_eq(state_dir_create(root, "c1", &fd, &e), -1);
    cr_expect(strstr(e->msg, "symlink") != NULL, "%s", e->msg);
    autofree char *inside = brig_asprintf("%s/c1", real);
    cr_expect_eq(access(inside, F_OK), -1, "created through the symlink");
}

Test(state, dir_root_foreign_owner_refused)
{
    if (geteuid() != 0) cr_skip_test("needs root to chown the root dir");
    cr_assert_eq(mkdir(root, 0700), 0);
    cr_assert_eq(chown(root, 65534, 65534), 0);
    autoerr struct brig_error *e = NULL;
    int fd = -1;
    cr_expect_eq(state_dir_create(root, "c1", &fd, &e), -1);
    cr_expect(strstr(e->msg, "owned by uid 65534") != NULL, "%s", e->msg);
}

Test(state, dir_root_world_writable_refused)
{
    cr_assert_eq(mkdir(root, 0700), 0);
    cr_assert_eq(chmod(root, 0777), 0);
    autoerr struct brig_error *e = NULL;
    int fd = -1;
    cr_expect_eq(state_dir_create(root, "c1", &fd, &e), -1);
    cr_expect(strstr(e->msg, "writable") != NULL, "%s", e->msg);
}

/* ---- state.json --------------------------------------------------------- */

static struct brig_state *sample_state(const char *id, pid_t pid)
{
    struct brig_state *st = brig_calloc(1, sizeof(*st));
    st->id = brig_strdup(id);
    st->bundle = brig_strdup("/bundles/x \"quoted\"");
    st->oci_version = brig_strdup("1.2.1");
    st->rootfs = brig_strdup("/bundles/x/rootfs");
    st->pid = pid;
    st->pid_start_time = pid > 0 ? state_pid_start_time(pid) : 0;
    st->created = brig_strdup("2026-01-02T03:04:05.000000006Z");
    st->setup_done = pid > 0;
    st->n_annotations = 2;
    st->annotations = brig_calloc(2, sizeof(struct brig_kv));
    st->annotations[0] = (struct brig_kv){ brig_strdup("org.example/a"), brig_strdup("1") };
    st->annotations[1] = (struct brig_kv){ brig_strdup("b"), brig_strdup("two\nlines") };
    return st;
}

static int make_container(const char *id, struct brig_state *st)
{
    autoerr struct brig_error *e = NULL;
    int fd = -1;
    cr_assert_eq(state_dir_create(root, id, &fd, &e), 0, "%s", e ? e->msg : "");
    cr_assert_eq(state_write(fd, st, &e), 0, "%s", e ? e->msg : "");
    return fd;
}

Test(state, write_read_roundtrip)
{
    autostate struct brig_state *st = sample_state("rt", 0);
    st->pid = 4321;
    st->pid_start_time = 99;
    st->setup_done = true;
    st->cgroup = brig_strdup("v1:/sys/fs/cgroup/pids/brig/rt");
    autoclose int fd = make_container("rt", st);
    autostate struct brig_state *back = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(state_read(fd, &back, &e), 0, "%s", e ? e->msg : "");
    cr_expect_str_eq(back->id, "rt");
    cr_expect_str_eq(back->bundle, st->bundle);
    cr_expect_str_eq(back->oci_version, "1.2.1");
    cr_expect_str_eq(back->rootfs, st->rootfs);
    cr_expect_str_eq(back->created, st->created);
    cr_expect_str_eq(back->cgroup, st->cgroup);
    cr_expect_eq(back->pid, 4321);
    cr_expect_eq(back->pid_start_time, 99);
    cr_expect(back->setup_done);
    cr_assert_eq(back->n_annotations, 2);
    cr_expect_str_eq(back->annotations[1].value, "two\nlines");
    struct stat sb;
    cr_assert_eq(fstatat(fd, "state.json", &sb, 0), 0);
    cr_expect_eq(sb.st_mode & 0777, 0600);
}

Test(state, corrupt_state_is_clear_error)
{
    autostate struct brig_state *st = sample_state("bad", 0);
    autoclose int fd = make_container("bad", st);
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(brig_write_file_atomic(fd, "state.json", "{\"id\": 3", 9, 0600, &e), 0);
    autostate struct brig_state *back = NULL;
    cr_expect_eq(state_read(fd, &back, &e), -1);
    cr_expect(strstr(e->msg, "state.json is corrupt") != NULL, "%s", e->msg);
    brig_error_freep(&e);
    const char *nopid = "{\"id\":\"x\",\"bundle\":\"/b\"}";
    cr_assert_eq(brig_write_file_atomic(fd, "state.json", nopid, strlen(nopid), 0600, &e), 0);
    cr_expect_eq(state_read(fd, &back, &e), -1, "missing pid accepted");
    cr_expect(strstr(e->msg, "pid") != NULL, "%s", e->msg);
}

Test(state, status_derivation)
{
    autostate struct brig_state *st = sample_state("s", 0);
    autoclose int fd = make_container("s", st);
    cr_expect_eq(state_status(fd, st), BRIG_STATUS_CREATING);

    pid_t pid = spawn_sleeper();
    st->pid = pid;
    st->pid_start_time = state_pid_start_time(pid);
    st->setup_done = false;
    cr_expect_eq(state_status(fd, st), BRIG_STATUS_CREATING, "setup not done");
    st->setup_done = true;
    cr_expect_eq(state_status(fd, st), BRIG_STATUS_RUNNING);
    cr_assert_eq(mkfifoat(fd, "exec.fifo", 0600), 0);
    /* Without a reader the init is past exec.fifo: a start killed before
     * removing it. Created while the init reads it. */
    cr_expect_eq(state_status(fd, st), BRIG_STATUS_RUNNING, "fifo without a reader");
    autoclose int reader = openat(fd, "exec.fifo", O_RDWR | O_CLOEXEC);
    cr_assert_geq(reader, 0);
    cr_expect_eq(state_status(fd, st), BRIG_STATUS_CREATED);
    st->pid_start_time += 1;        /* the pid now belongs to another process */
    cr_expect_eq(state_status(fd, st), BRIG_STATUS_STOPPED);
    st->pid_start_time -= 1;
    reap(pid);
    cr_expect_eq(state_status(fd, st), BRIG_STATUS_STOPPED);
    st->setup_done = false;
    cr_expect_eq(state_status(fd, st), BRIG_STATUS_STOPPED, "init gone during setup");
    cr_expect_str_eq(state_status_name(BRIG_STATUS_CREATED), "created");
}

Test(state, oci_json)
{
    autostate struct brig_state *st = sample_state("j", 1234);
    st->pid = 1234;
    for (int stopped = 0; stopped < 2; stopped++) {
        autofree char *text = state_to_oci_json(st, stopped ? BRIG_STATUS_STOPPED : BRIG_STATUS_RUNNING, true);
        autojson brig_json v = NULL;
        autoerr struct brig_error *e = NULL;
        cr_assert_eq(json_parse(text, strlen(text), &v, &e), 0, "%s", text);
        autofree char *ver = NULL, *id = NULL, *status = NULL, *bundle = NULL, *owner = NULL, *created = NULL;
        int64_t pid = -1;
        cr_expect_eq(json_get_string(v, "", "ociVersion", true, &ver, &e), 0);
        cr_expect_eq(json_get_string(v, "", "id", true, &id, &e), 0);
        cr_expect_eq(json_get_string(v, "", "status", true, &status, &e), 0);
        cr_expect_eq(json_get_string(v, "", "bundle", true, &bundle, &e), 0);
        cr_expect_eq(json_get_string(v, "", "owner", true, &owner, &e), 0);
        cr_expect_eq(json_get_string(v, "", "created", true, &created, &e), 0);
        cr_expect_eq(json_get_i64(v, "", "pid", true, &pid, &e), 0);
        cr_expect_str_eq(status, stopped ? "stopped" : "running");
        cr_expect_eq(pid, stopped ? 0 : 1234);
        cr_expect_str_eq(bundle, st->bundle);
        cr_expect_str_eq(owner, geteuid() == 0 ? "root" : owner);
        brig_json ann = json_get(v, "annotations");
        cr_assert(json_is_object(ann));
        cr_expect_eq(json_object_len(ann), 2);
    }
}

Test(state, list_ids_sorted_and_filtered)
{
    autostate struct brig_state *st = sample_state("x", 0);
    close(make_container("zeta", st));
    close(make_container("alpha", st));
    autofree char *dot = brig_asprintf("%s/.tmp", root);
    cr_assert_eq(mkdir(dot, 0700), 0);
    autostrv char **ids = NULL;
    size_t n = 0;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(state_list_ids(root, &ids, &n, &e), 0);
    cr_assert_eq(n, 2);
    cr_expect_str_eq(ids[0], "alpha");
    cr_expect_str_eq(ids[1], "zeta");
    cr_expect_null(ids[2]);
    autofree char *none = brig_asprintf("%s/none", tmp);
    autostrv char **ids2 = NULL;
    cr_assert_eq(state_list_ids(none, &ids2, &n, &e), 0);
    cr_expect_eq(n, 0);
}

/* ---- a state that state_read refuses ------------------------------------ */

static int salvage_dir(const char *text, size_t len)
{
    int dirfd = -1;
    cr_assert_eq(state_dir_create(root, "sv", &dirfd, NULL), 0);
    int fd = openat(dirfd, "state.json", O_WRONLY | O_CREAT | O_TRUNC, 0600);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return dirfd;
}

static const char written[] =
    "{\"id\":\"sv\",\"pid\":4242,\"pidStartTime\":99,\"setupDone\":true,"
    "\"cgroup\":\"{\\\"layout\\\":\\\"hybrid\\\",\\\"dirs\\\":[]}\",\"bundle\":\"/b/x\","
    "\"ociVersion\":\"1.0.2\",\"rootfs\":\"/b/x/rootfs\",\"created\":\"t\","
    "\"annotations\":{\"annotations\":\"x\",\"k\":\"v\\\"}\"}}";

Test(state, salvage_reads_complete_leading_members)
{
    /* every cut from just after the cgroup member to the whole file */
    const char *after_cgroup = strstr(written, ",\"bundle\"");
    for (size_t cut = (size_t)(after_cgroup - written); cut <= strlen(written); cut++) {
        autoclose int dirfd = salvage_dir(written, cut);
        autostate struct brig_state *st = NULL;
        autoerr struct brig_error *e = NULL;
        cr_assert_eq(state_read_salvage(dirfd, "sv", &st, &e), 0, "cut %zu: %s", cut,
                     e ? e->msg : "");
        cr_assert_eq(st->pid, 4242);
        cr_assert_eq(st->pid_start_time, 99);
        cr_assert(st->setup_done);
        cr_assert_str_eq(st->cgroup, "{\"layout\":\"hybrid\",\"dirs\":[]}");
        cr_assert_eq(st->n_annotations, 0);
        /* a member cut short is absent, never half-read */
        if (st->bundle != NULL) cr_assert_str_eq(st->bundle, "/b/x");
        if (st->rootfs != NULL) cr_assert_str_eq(st->rootfs, "/b/x/rootfs");
        autoerr struct brig_error *e2 = NULL;
        cr_assert_eq(state_dir_remove(root, "sv", &e2), 0);
    }
}

Test(state, salvage_refuses_what_says_nothing)
{
    const char *cuts[] = { "", "{", "{\"id\":\"sv\"", "{\"id\":\"sv\",\"pid\":42", "garbage" };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(cuts); i++) {
        autoclose int dirfd = salvage_dir(cuts[i], strlen(cuts[i]));
        autostate struct brig_state *st = NULL;
        autoerr struct brig_error *e = NULL;
        cr_assert_eq(state_read_salvage(dirfd, "sv", &st, &e), -1, "\"%s\" accepted", cuts[i]);
        autoerr struct brig_error *e2 = NULL;
        cr_assert_eq(state_dir_remove(root, "sv", &e2), 0);
    }
    /* the pid without the cgroup: its children could not all be found */
    const char *no_cg = "{\"id\":\"sv\",\"pid\":42,\"pidStartTime\":1,\"setupDone\":true,\"cgr";
    autoclose int dirfd = salvage_dir(no_cg, strlen(no_cg));
    autostate struct brig_state *st = NULL;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(state_read_salvage(dirfd, "sv", &st, &e), -1);
    cr_assert(strstr(e->msg, "cut before its cgroup") != NULL, "%s", e->msg);
    /* another container's state is not this one's */
    autoclose int d2 = -1;
    autoerr struct brig_error *e3 = NULL;
    cr_assert_eq(state_dir_create(root, "other", &d2, NULL), 0);
    int fd = openat(d2, "state.json", O_WRONLY | O_CREAT, 0600);
    cr_assert_eq(write(fd, written, strlen(written)), (ssize_t)strlen(written));
    close(fd);
    autostate struct brig_state *st2 = NULL;
    cr_assert_eq(state_read_salvage(d2, "other", &st2, &e3), -1);
    cr_assert(strstr(e3->msg, "names container \"sv\"") != NULL, "%s", e3->msg);
}

Test(state, size_checked_before_create)
{
    struct brig_kv kv[2] = {{"a", "b"}, {"c", NULL}};
    size_t big = STATE_FILE_MAX;
    autofree char *v = brig_calloc(1, big);
    memset(v, 'x', big - 1);
    kv[1].value = v;
    struct brig_state st = { .id = "c1", .bundle = "/b", .annotations = kv, .n_annotations = 1 };
    cr_assert_eq(state_check_size(&st, NULL), 0);
    st.n_annotations = 2;
    autoerr struct brig_error *e = NULL;
    cr_assert_eq(state_check_size(&st, &e), -1);
    cr_assert(strncmp(e->msg, "annotations: the container's state would be ", 44) == 0, "%s", e->msg);
    /* and the writer never writes what the reader refuses */
    autoclose int dirfd = -1;
    cr_assert_eq(state_dir_create(root, "c1", &dirfd, NULL), 0);
    autoerr struct brig_error *e2 = NULL;
    cr_assert_eq(state_write(dirfd, &st, &e2), -1);
    cr_assert(strstr(e2->msg, "brig reads back") != NULL, "%s", e2->msg);
    cr_assert_eq(faccessat(dirfd, "state.json", F_OK, 0), -1);
}
