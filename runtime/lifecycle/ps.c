/* `ps` (runc's ps): the container's processes, from its cgroup. The table
 * format filters the host's ps(1) output by those pids, as runc does. */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../linux/cgroup/cgroup.h"
#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/strutil.h"
#include "init_proc.h"
#include "state.h"

#define PS_OUTPUT_MAX (64u << 20)

static int ps_pids(const struct brig_globals *g, const char *id, pid_t **pids, size_t *n,
                   struct brig_error **err)
{
    autoclose int dirfd = -1;
    TRY(state_dir_open_unlocked(g->root, id, &dirfd, err));
    autostate struct brig_state *st = NULL;
    autofree char *broken = NULL;
    if (state_read_tolerant(dirfd, id, &st, &broken, err) < 0) return brig_wrap(err, "container %s", id);
    if (broken != NULL) {
        /* its processes are those of the cgroup it still names */
        if (st->cgroup == NULL)
            return brig_failx(err, "container %s: %s, and it is cut before its cgroup", id, broken);
        brig_warn("ps %s: %s; listing the cgroup it still names", id, broken);
    } else if (state_status(dirfd, st) == BRIG_STATUS_STOPPED) {
        return brig_failx(err, "container %s is not running", id);
    }
    if (st->cgroup == NULL) return init_ns_pids(st, pids, n, err);
    struct brig_cgroup *cg = NULL;
    TRY(cgroup_load(st->cgroup, &cg, err));
    int r = cgroup_pids(cg, pids, n, err);
    cgroup_free(cg);
    return r;
}

/* Run `ps ARGS` and collect stdout and stderr (runc: CombinedOutput). */
static int ps_run(char **ps_args, char **out, struct brig_error **err)
{
    size_t nargs = brig_strv_len(ps_args);
    autofree char **argv = brig_calloc(nargs + 3, sizeof(char *));
    argv[0] = "ps";
    if (nargs == 0) argv[1] = "-ef";
    for (size_t i = 0; i < nargs; i++) argv[1 + i] = ps_args[i];
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) return brig_fail(err, errno, "pipe");
    pid_t pid = fork();
    if (pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return brig_fail(err, errno, "fork");
    }
    if (pid == 0) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        execvp("ps", argv);
        _exit(127);
    }
    close(pfd[1]);
    autoclose int rfd = pfd[0];
    size_t cap = 65536, len = 0;
    char *buf = brig_calloc(cap, 1);
    for (;;) {
        if (len + 1 >= cap) {
            if (cap >= PS_OUTPUT_MAX) break;
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (nb == NULL) abort();
            buf = nb;
        }
        ssize_t r = read(rfd, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        int rc = brig_failx(err, "ps: %s", len ? buf : "failed");
        free(buf);
        return rc;
    }
    *out = buf;
    return 0;
}

/* Index of the PID column in ps's header line, -1 if none. */
static int ps_pid_column(const char *header)
{
    autofree char *h = brig_strdup(header);
    char *save = NULL;
    int i = 0;
    for (char *f = strtok_r(h, " \t", &save); f != NULL; f = strtok_r(NULL, " \t", &save), i++)
        if (strcmp(f, "PID") == 0) return i;
    return -1;
}

static bool ps_line_pid(const char *line, int col, pid_t *pid)
{
    autofree char *l = brig_strdup(line);
    char *save = NULL;
    int i = 0;
    for (char *f = strtok_r(l, " \t", &save); f != NULL; f = strtok_r(NULL, " \t", &save), i++) {
        if (i != col) continue;
        int64_t v;
        if (brig_parse_i64(f, &v) < 0) return false;
        *pid = (pid_t)v;
        return true;
    }
    return false;
}

static int ps_table(char **ps_args, const pid_t *pids, size_t n, struct brig_error **err)
{
    autofree char *out = NULL;
    TRY(ps_run(ps_args, &out, err));
    char *save = NULL;
    char *line = strtok_r(out, "\n", &save);
    if (line == NULL) return brig_failx(err, "ps: no output");
    int col = ps_pid_column(line);
    if (col < 0) return brig_failx(err, "ps: couldn't find PID field in ps output");
    printf("%s\n", line);
    for (line = strtok_r(NULL, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        pid_t p;
        if (!ps_line_pid(line, col, &p)) continue;
        for (size_t i = 0; i < n; i++) {
            if (pids[i] != p) continue;
            printf("%s\n", line);
            break;
        }
    }
    if (fflush(stdout) == EOF) return brig_fail(err, errno, "write stdout");
    return 0;
}

int container_ps(const struct brig_globals *g, const char *id, bool json, char **ps_args,
                 struct brig_error **err)
{
    autofree pid_t *pids = NULL;
    size_t n = 0;
    if (ps_pids(g, id, &pids, &n, err) < 0) return brig_wrap(err, "ps %s", id);
    if (!json) return ps_table(ps_args, pids, n, err);
    printf("[");
    for (size_t i = 0; i < n; i++) printf("%s%d", i ? "," : "", (int)pids[i]);
    printf("]\n");
    if (fflush(stdout) == EOF) return brig_fail(err, errno, "write stdout");
    return 0;
}
