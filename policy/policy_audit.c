/* The audit log: JSON lines of decisions and lifecycle events, minimized
 * metadata only (id, policy, decision, rule ids, exit status, durations,
 * resource peaks); never argv, environment values or output.
 *
 * Each line is one write() on an O_APPEND descriptor, so concurrent brig
 * processes never interleave within a line. Past the size bound the file
 * is renamed to PATH.1 (replacing the previous one) before the write. */
#include "policy.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../runtime/config/json.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

char *policy_audit_line(const struct brig_policy *p, const struct policy_audit_event *ev)
{
    char when[BRIG_TIME_LEN];
    brig_time_now_rfc3339(when, sizeof(when));

    autojw struct brig_jw *w = jw_new(false);
    jw_obj_open(w);
    jw_kstr(w, "time", when);
    jw_kstr(w, "op", ev->op);
    if (ev->id != NULL) jw_kstr(w, "id", ev->id);
    jw_kstr(w, "policy", p->name);
    jw_kstr(w, "mode", p->mode == POLICY_ENFORCE ? "enforce" : "audit");
    if (ev->decision != NULL) jw_kstr(w, "decision", ev->decision);
    if (ev->rules != NULL) {
        jw_key(w, "rules");
        jw_arr_open(w);
        autofree char *copy = brig_strdup(ev->rules);
        char *save = NULL;
        for (char *r = strtok_r(copy, ",", &save); r != NULL; r = strtok_r(NULL, ",", &save)) jw_str(w, r);
        jw_arr_close(w);
    }
    if (ev->has_exit_status) jw_ki64(w, "exit_status", ev->exit_status);
    if (ev->has_duration) jw_ku64(w, "duration_ms", ev->duration_ms);
    if (ev->has_memory_peak) jw_ku64(w, "memory_peak", ev->memory_peak);
    if (ev->has_pids_peak) jw_ku64(w, "pids_peak", ev->pids_peak);
    if (ev->argv0 != NULL) jw_kstr(w, "argv0", ev->argv0);
    if (ev->limits_hit != NULL) jw_kstr(w, "limits_hit", ev->limits_hit);
    if (ev->has_bytes) {
        jw_ku64(w, "stdout_bytes", ev->stdout_bytes);
        jw_ku64(w, "stderr_bytes", ev->stderr_bytes);
    }
    jw_ki64(w, "pid", (int64_t)getpid());
    jw_obj_close(w);
    const char *t = jw_text(w, NULL);
    return brig_strdup(t ? t : "{}");
}

/* A rootless brig's (policy_audit_redirect): the user's own file. */
static char *audit_redirect;

void policy_audit_redirect(const char *path)
{
    free(audit_redirect);
    audit_redirect = path ? brig_strdup(path) : NULL;
}

static int audit_mkdir_parent(const char *path, struct brig_error **err)
{
    autofree char *copy = brig_strdup(path);
    char *dir = dirname(copy);
    /* The user's own (~/.local/state/brig): every missing level. */
    for (char *s = dir + 1; audit_redirect != NULL && *s != '\0'; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(dir, 0700) < 0 && errno != EEXIST) return brig_fail(err, errno, "audit log: mkdir %s", dir);
        *s = '/';
    }
    if (mkdir(dir, 0700) == 0 || errno == EEXIST) return 0;
    /* One level only: /var/log exists on any system that has logs. */
    return brig_fail(err, errno, "audit.path: mkdir %s", dir);
}

static int policy_audit_write_to(const struct brig_policy *p, const char *line, struct brig_error **err);

int policy_audit(const struct brig_policy *p, const struct policy_audit_event *ev, struct brig_error **err)
{
    if (p->audit.path == NULL) return 0;
    autofree char *line = policy_audit_line(p, ev);
    return policy_audit_write(p, line, err);
}

int policy_audit_write(const struct brig_policy *p, const char *line, struct brig_error **err)
{
    if (p->audit.path == NULL) return 0;
    if (audit_redirect != NULL) {
        struct brig_policy own = *p;
        own.audit.path = audit_redirect;
        return policy_audit_write_to(&own, line, err);
    }
    return policy_audit_write_to(p, line, err);
}

static int policy_audit_write_to(const struct brig_policy *p, const char *line, struct brig_error **err)
{
    autofree char *rec = brig_asprintf("%s\n", line);
    size_t len = strlen(rec);
    /* The directory is made only when the open finds it missing: not one
     * mkdir per line. O_NONBLOCK: a fifo at the path is refused (ENXIO, or
     * by the fstat below), never waited on. */
    autoclose int fd = open(p->audit.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (fd < 0 && errno == ENOENT) {
        TRY(audit_mkdir_parent(p->audit.path, err));
        fd = open(p->audit.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    }
    if (fd < 0) return brig_fail(err, errno, "audit.path: open %s", p->audit.path);
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "audit.path: fstat %s", p->audit.path);
    if (!S_ISREG(st.st_mode)) return brig_failx(err, "audit.path: %s is not a regular file", p->audit.path);
    if ((uint64_t)st.st_size + len > p->audit.max_size) {
        /* Rotate: whoever renames first wins; a concurrent writer that still
         * holds the old file appends to PATH.1, which loses nothing. */
        autofree char *old = brig_asprintf("%s.1", p->audit.path);
        if (rename(p->audit.path, old) < 0 && errno != ENOENT)
            return brig_fail(err, errno, "audit.path: rotate %s", p->audit.path);
        close(fd);
        fd = open(p->audit.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
        if (fd < 0) return brig_fail(err, errno, "audit.path: open %s", p->audit.path);
    }
    ssize_t w = write(fd, rec, len);
    if (w < 0) return brig_fail(err, errno, "audit.path: write %s", p->audit.path);
    if ((size_t)w != len) return brig_failx(err, "audit.path: short write to %s", p->audit.path);
    return 0;
}
