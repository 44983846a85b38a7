/* `state` (runtime.md "Query State") and `list`, in runc's output formats.
 * Both read without taking the container lock: state.json is replaced
 * atomically, and a query must not wait behind a slow create. */
#include "container.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "../config/json.h"
#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/strutil.h"
#include "cgroup_ops.h"
#include "state.h"
#include "../../policy/policy.h"

/* What a query knows of one container: its state and live status, or for
 * a broken entry why (broken) and what its state.json still says (st, NULL
 * when nothing). */
#define QUERY_WATCH_ANNOTATION "org.brig.workspace.maxSize"

struct query_entry {
    struct brig_state *st;
    enum brig_status status;
    char *broken;
};

static void query_entry_clear(struct query_entry *q)
{
    state_free(q->st);
    free(q->broken);
    *q = (struct query_entry){ 0 };
}

/* 0: q filled (q->broken set for a broken entry); -1: no entry to show (it
 * does not exist, or a create is making it: errnum EINPROGRESS). */
static int query_load(const struct brig_globals *g, const char *id, struct query_entry *q,
                      struct brig_error **err)
{
    autoclose int dirfd = -1;
    TRY(state_dir_open_unlocked(g->root, id, &dirfd, err));
    autoerr struct brig_error *e = NULL;
    if (state_read_tolerant(dirfd, id, &q->st, &q->broken, &e) < 0) {
        if (e->errnum != ENOENT) {          /* not even salvage reads it */
            q->broken = brig_strdup(e->msg);
            return 0;
        }
        /* No state.json: a create before its first write holds the lock;
         * one that died before it left the directory behind. */
        if (flock(dirfd, LOCK_SH | LOCK_NB) < 0) {
            brig_failx(err, "container %s is being created (no state written yet)", id);
            if (err != NULL && *err != NULL) (*err)->errnum = EINPROGRESS;
            return -1;
        }
        q->broken = brig_strdup("no state.json: its create died before writing it");
        return 0;
    }
    if (q->broken != NULL) return 0;
    q->status = cgroup_ops_status(q->st, state_status(dirfd, q->st));
    if (q->status == BRIG_STATUS_CREATING && flock(dirfd, LOCK_SH | LOCK_NB) == 0) {
        /* A create holds the lock until it is done: free, its brig died
         * (or just finished: read again). Closing dirfd drops our lock. */
        state_free(q->st);
        q->st = NULL;
        if (state_read(dirfd, &q->st, err) < 0) return brig_wrap(err, "container %s", id);
        q->status = cgroup_ops_status(q->st, state_status(dirfd, q->st));
        if (q->status == BRIG_STATUS_CREATING) q->status = BRIG_STATUS_STOPPED;
    }
    /* Killed by its workspace's watch (policy/workspace/watch.c): why, as
     * an annotation of brig's, the measure it took as its value. */
    char *fired = policy_watch_record(dirfd);
    if (fired != NULL) {
        struct brig_kv *a = realloc(q->st->annotations, (q->st->n_annotations + 1) * sizeof(*a));
        if (a == NULL) {
            free(fired);
            return 0;
        }
        q->st->annotations = a;
        a[q->st->n_annotations++] = (struct brig_kv){ .key = brig_strdup(QUERY_WATCH_ANNOTATION), .value = fired };
    }
    return 0;
}

/* The init a broken entry still names, if it runs: only with its start
 * time, which tells it from a process that got the pid since. */
static pid_t query_broken_pid(const struct brig_state *st)
{
    if (st == NULL || st->pid <= 0 || st->pid_start_time == 0) return 0;
    return state_pid_start_time(st->pid) == st->pid_start_time ? st->pid : 0;
}

/* "container ID: WHY: its status is unknown (...); `brig delete --force ID` ..." */
static int query_broken_error(const char *id, const struct query_entry *q, struct brig_error **err)
{
    const struct brig_state *st = q->st;
    pid_t pid = query_broken_pid(st);
    char what[256] = "";
    if (pid > 0)
        snprintf(what, sizeof(what), " (it still names its init, %d, running: `brig kill %s` signals it)",
                 (int)pid, id);
    else if (st != NULL && st->pid > 0 && st->pid_start_time == 0)
        snprintf(what, sizeof(what), " (it names init %d but not its start time, which would tell it "
                 "from a reused pid)", (int)st->pid);
    else if (st != NULL && st->pid > 0)
        snprintf(what, sizeof(what), " (its init, %d, is gone)", (int)st->pid);
    return brig_failx(err, "container %s: %s: its status is unknown%s; `brig delete --force %s` ends what "
                      "is left of it and removes it", id, q->broken, what, id);
}

static int query_write_stdout(const char *text, struct brig_error **err)
{
    if (fputs(text, stdout) == EOF || fflush(stdout) == EOF) return brig_fail(err, errno, "write stdout");
    return 0;
}

int container_state(const struct brig_globals *g, const char *id, struct brig_error **err)
{
    __attribute__((cleanup(query_entry_clear))) struct query_entry q = { 0 };
    TRY(query_load(g, id, &q, err));
    if (q.broken != NULL) return query_broken_error(id, &q, err);
    autofree char *json = state_to_oci_json(q.st, q.status, true);
    autofree char *line = brig_asprintf("%s\n", json);
    return query_write_stdout(line, err);
}

/* list --format json's object for a broken entry: what it still says,
 * status "unknown", and why in "error". */
static void list_jw_broken(struct brig_jw *w, const char *id, const struct query_entry *q, const char *owner)
{
    const struct brig_state *st = q->st;
    jw_obj_open(w);
    jw_kstr(w, "ociVersion", st && st->oci_version ? st->oci_version : "");
    jw_kstr(w, "id", id);
    jw_ki64(w, "pid", query_broken_pid(st));
    jw_kstr(w, "status", "unknown");
    jw_kstr(w, "bundle", st && st->bundle ? st->bundle : "");
    jw_kstr(w, "rootfs", st && st->rootfs ? st->rootfs : "");
    jw_kstr(w, "created", st && st->created ? st->created : "");
    jw_kstr(w, "owner", owner);
    jw_kstr(w, "error", q->broken);
    jw_obj_close(w);
}

struct list_row {
    char *cells[6];
};

static void list_row_free(struct list_row *r)
{
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(r->cells); i++) free(r->cells[i]);
}

/* runc prints through Go's tabwriter(minwidth 12, padding 3): every column
 * but the last is padded to max(12, widest cell + 3). */
static int list_print_table(struct list_row *rows, size_t n, struct brig_error **err)
{
    const size_t ncol = BRIG_ARRAY_SIZE(rows[0].cells);
    size_t width[BRIG_ARRAY_SIZE(rows[0].cells)] = {0};
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < ncol; c++) {
            size_t w = strlen(rows[i].cells[c]) + 3;
            if (w > width[c]) width[c] = w;
        }
    for (size_t c = 0; c < ncol; c++)
        if (width[c] < 12) width[c] = 12;
    for (size_t i = 0; i < n; i++) {
        for (size_t c = 0; c < ncol; c++) {
            if (c + 1 < ncol) {
                if (printf("%-*s", (int)width[c], rows[i].cells[c]) < 0) goto fail;
            } else if (printf("%s\n", rows[i].cells[c]) < 0) {
                goto fail;
            }
        }
    }
    if (fflush(stdout) == EOF) goto fail;
    return 0;
fail:
    return brig_fail(err, errno, "write stdout");
}

int container_list(const struct brig_globals *g, bool json, bool quiet, struct brig_error **err)
{
    autostrv char **ids = NULL;
    size_t n = 0;
    TRY(state_list_ids(g->root, &ids, &n, err));

    autojw struct brig_jw *w = jw_new(false);
    jw_arr_open(w);
    struct list_row *rows = brig_calloc(n + 1, sizeof(*rows));
    size_t nrows = 0;
    char owner[256];
    state_owner_name(owner, sizeof(owner));
    rows[nrows++] = (struct list_row){ { brig_strdup("ID"), brig_strdup("PID"), brig_strdup("STATUS"),
                                         brig_strdup("BUNDLE"), brig_strdup("CREATED"),
                                         brig_strdup("OWNER") } };
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        __attribute__((cleanup(query_entry_clear))) struct query_entry q = { 0 };
        autoerr struct brig_error *e = NULL;
        /* A container being created or deleted right now is skipped, as
         * runc does; one whose state cannot be read is listed, status
         * unknown, with why: it may still hold processes and a cgroup. */
        if (query_load(g, ids[i], &q, &e) < 0) {
            if (e->errnum == ENOENT || e->errnum == EINPROGRESS) {
                brig_debug("list: skipping %s: %s", ids[i], e->msg);
                continue;
            }
            q.broken = brig_strdup(e->msg);
        }
        if (q.broken != NULL && !json)
            brig_warn("list: container %s: %s: its status is unknown (`brig delete --force %s` removes it)",
                      ids[i], q.broken, ids[i]);
        if (quiet) {
            if (printf("%s\n", ids[i]) < 0) rc = brig_fail(err, errno, "write stdout");
            continue;
        }
        if (json) {
            if (q.broken != NULL) list_jw_broken(w, ids[i], &q, owner);
            else state_jw_write(w, q.st, q.status);
            continue;
        }
        if (q.broken != NULL) {
            const struct brig_state *st = q.st;
            rows[nrows++] = (struct list_row){ { brig_strdup(ids[i]),
                                                 brig_asprintf("%d", (int)query_broken_pid(st)),
                                                 brig_strdup("unknown"),
                                                 brig_strdup(st && st->bundle ? st->bundle : ""),
                                                 brig_strdup(st && st->created ? st->created : ""),
                                                 brig_strdup(owner) } };
            continue;
        }
        const struct brig_state *st = q.st;
        int64_t pid = q.status == BRIG_STATUS_STOPPED ? 0 : st->pid;
        rows[nrows++] = (struct list_row){ { brig_strdup(st->id), brig_asprintf("%lld", (long long)pid),
                                             brig_strdup(state_status_name(q.status)),
                                             brig_strdup(st->bundle), brig_strdup(st->created ? st->created : ""),
                                             brig_strdup(owner) } };
    }
    jw_arr_close(w);
    if (rc == 0) {
        if (quiet) {
            if (fflush(stdout) == EOF) rc = brig_fail(err, errno, "write stdout");
        } else if (json) {
            autofree char *line = brig_asprintf("%s\n", jw_text(w, NULL));
            rc = query_write_stdout(line, err);
        } else {
            rc = list_print_table(rows, nrows, err);
        }
    }
    for (size_t i = 0; i < nrows; i++) list_row_free(&rows[i]);
    free(rows);
    return rc;
}
