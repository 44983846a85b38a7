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

static int query_load(const struct brig_globals *g, const char *id, struct brig_state **st,
                      enum brig_status *status, struct brig_error **err)
{
    autoclose int dirfd = -1;
    TRY(state_dir_open_unlocked(g->root, id, &dirfd, err));
    if (state_read(dirfd, st, err) < 0) {
        if (err != NULL && *err != NULL && (*err)->errnum == ENOENT) {
            brig_error_freep(err);
            return brig_failx(err, "container %s is being created (no state written yet)", id);
        }
        return brig_wrap(err, "container %s", id);
    }
    *status = cgroup_ops_status(*st, state_status(dirfd, *st));
    if (*status == BRIG_STATUS_CREATING && flock(dirfd, LOCK_SH | LOCK_NB) == 0) {
        /* A create holds the lock until it is done: free, its brig died
         * (or just finished: read again). Closing dirfd drops our lock. */
        state_free(*st);
        *st = NULL;
        if (state_read(dirfd, st, err) < 0) return brig_wrap(err, "container %s", id);
        *status = cgroup_ops_status(*st, state_status(dirfd, *st));
        if (*status == BRIG_STATUS_CREATING) *status = BRIG_STATUS_STOPPED;
    }
    return 0;
}

static int query_write_stdout(const char *text, struct brig_error **err)
{
    if (fputs(text, stdout) == EOF || fflush(stdout) == EOF) return brig_fail(err, errno, "write stdout");
    return 0;
}

int container_state(const struct brig_globals *g, const char *id, struct brig_error **err)
{
    autostate struct brig_state *st = NULL;
    enum brig_status status;
    TRY(query_load(g, id, &st, &status, err));
    autofree char *json = state_to_oci_json(st, status, true);
    autofree char *line = brig_asprintf("%s\n", json);
    return query_write_stdout(line, err);
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
        autostate struct brig_state *st = NULL;
        enum brig_status status;
        autoerr struct brig_error *e = NULL;
        /* Like runc, a container whose state cannot be read (being created
         * or deleted right now) is skipped rather than failing the list. */
        if (query_load(g, ids[i], &st, &status, &e) < 0) {
            brig_debug("list: skipping %s: %s", ids[i], e->msg);
            continue;
        }
        if (quiet) {
            if (printf("%s\n", st->id) < 0) rc = brig_fail(err, errno, "write stdout");
            continue;
        }
        if (json) {
            state_jw_write(w, st, status);
            continue;
        }
        int64_t pid = status == BRIG_STATUS_STOPPED ? 0 : st->pid;
        rows[nrows++] = (struct list_row){ { brig_strdup(st->id), brig_asprintf("%lld", (long long)pid),
                                             brig_strdup(state_status_name(status)),
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
