/* What a state.json that state_read refuses still says. A container whose
 * state cannot be read would otherwise be stranded: every command fails on
 * it, `delete --force` too, and its init runs on. brig writes the members
 * that end a container (pid, pidStartTime, cgroup) first and short, and
 * replaces the file atomically; so a file grown past STATE_FILE_MAX
 * (annotations, written last, by a brig before the size check) or damaged
 * after them still names them. Its members are read one by one from the
 * start, each kept only when it is complete, up to the first that is not. */
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../config/json.h"
#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/strutil.h"

/* The end of the JSON string starting at p (on its opening quote), or NULL
 * if it does not end before end. */
static const char *salvage_string_end(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\') p++;
        else if (*p == '"') return p + 1;
        else if ((unsigned char)*p < 0x20) return NULL;
    }
    return NULL;
}

/* The end of the JSON value at p (string, number, literal, object or
 * array), or NULL if it does not end before end. */
static const char *salvage_value_end(const char *p, const char *end)
{
    if (p >= end) return NULL;
    if (*p == '"') return salvage_string_end(p, end);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            if (*p == '"') {
                p = salvage_string_end(p, end);
                if (p == NULL) return NULL;
                continue;
            }
            if (*p == '{' || *p == '[') depth++;
            else if (*p == '}' || *p == ']') depth--;
            p++;
            if (depth == 0) return p;
        }
        return NULL;
    }
    const char *q = p;
    while (q < end && strchr("+-.0123456789eEtruefalsn", *q) != NULL) q++;
    return q < end && q > p ? q : NULL;     /* a number cut at end may be cut short */
}

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && strchr(" \t\r\n", *p) != NULL) p++;
    return p;
}

/* "{" + the complete leading members of text except annotations + "}". */
static char *salvage_members(const char *text, size_t len)
{
    const char *p = text, *end = text + len;
    size_t cap = len + 3, w = 0;
    char *out = brig_calloc(1, cap);
    out[w++] = '{';
    p = skip_ws(p, end);
    if (p >= end || *p != '{') goto done;
    p = skip_ws(p + 1, end);
    while (p < end && *p == '"') {
        const char *key = p, *ke = salvage_string_end(p, end);
        if (ke == NULL) break;
        const char *v = skip_ws(ke, end);
        if (v >= end || *v != ':') break;
        v = skip_ws(v + 1, end);
        const char *ve = salvage_value_end(v, end);
        if (ve == NULL) break;
        if (!(ke - key == 13 && memcmp(key, "\"annotations\"", 13) == 0)) {
            if (w > 1) out[w++] = ',';
            memcpy(out + w, key, (size_t)(ke - key));
            w += (size_t)(ke - key);
            out[w++] = ':';
            memcpy(out + w, v, (size_t)(ve - v));
            w += (size_t)(ve - v);
        }
        p = skip_ws(ve, end);
        if (p >= end || *p != ',') break;
        p = skip_ws(p + 1, end);
    }
done:
    out[w++] = '}';
    out[w] = '\0';
    return out;
}

/* A member of the wrong type is as good as absent. */
static void salvage_str(brig_json root, const char *key, char **out)
{
    brig_json v = json_get(root, key);
    const char *s;
    if (v != NULL && json_is_string(v) && json_as_string(v, key, &s, NULL) == 0)
        *out = brig_strdup(s);
}

int state_read_salvage(int dirfd, const char *id, struct brig_state **out,
                       struct brig_error **err)
{
    autoclose int fd = openat(dirfd, "state.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "open state.json");
    /* Its start only: the members that matter are in the first few KB. */
    autofree char *text = brig_calloc(1, STATE_FILE_MAX + 1);
    size_t len = 0;
    while (len < STATE_FILE_MAX) {
        ssize_t n = read(fd, text + len, STATE_FILE_MAX - len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return brig_fail(err, errno, "read state.json");
        if (n == 0) break;
        len += (size_t)n;
    }
    autofree char *members = salvage_members(text, len);
    autojson brig_json root = NULL;
    if (json_parse(members, strlen(members), &root, NULL) < 0)
        return brig_failx(err, "state.json: nothing could be read from it");
    autostate struct brig_state *st = brig_calloc(1, sizeof(*st));
    salvage_str(root, "id", &st->id);
    if (st->id != NULL && strcmp(st->id, id) != 0)
        return brig_failx(err, "state.json names container \"%s\", not \"%s\"", st->id, id);
    free(st->id);
    st->id = brig_strdup(id);
    int64_t pid = 0;
    bool have_pid = json_get(root, "pid") != NULL &&
                    json_get_i64(root, "state.json", "pid", false, &pid, NULL) == 0 &&
                    pid > 0 && pid <= 0x7fffffff;
    if (have_pid) st->pid = (pid_t)pid;
    json_get_u64(root, "state.json", "pidStartTime", false, &st->pid_start_time, NULL);
    json_get_bool(root, "state.json", "setupDone", false, &st->setup_done, NULL);
    salvage_str(root, "cgroup", &st->cgroup);
    state_parse_shared_mnt(root, st, NULL);
    salvage_str(root, "bundle", &st->bundle);
    salvage_str(root, "rootfs", &st->rootfs);
    salvage_str(root, "created", &st->created);
    salvage_str(root, "ociVersion", &st->oci_version);
    /* Without the cgroup, a pid alone could leave the init's children (no
     * pid namespace) running: only the cgroup holds them all. A state
     * that names no cgroup is one from before its first mkdir. */
    if (st->cgroup == NULL && !have_pid)
        return brig_failx(err, "state.json names neither the init nor the cgroup");
    if (st->cgroup == NULL && json_get(root, "cgroup") == NULL)
        return brig_failx(err, "state.json is cut before its cgroup: the container's "
                          "processes cannot all be found");
    brig_debug("salvaged state of %s: pid %d, cgroup %s", id, (int)st->pid,
               st->cgroup ? "known" : "none");
    *out = steal_ptr(&st);
    return 0;
}

int state_read_tolerant(int dirfd, const char *id, struct brig_state **out, char **broken,
                        struct brig_error **err)
{
    *broken = NULL;
    autoerr struct brig_error *why = NULL;
    if (state_read(dirfd, out, &why) == 0) return 0;
    if (why->errnum == ENOENT) {
        if (err != NULL) *err = steal_ptr(&why);
        return -1;
    }
    autoerr struct brig_error *e = NULL;
    if (state_read_salvage(dirfd, id, out, &e) < 0) return brig_failx(err, "%s; %s", why->msg, e->msg);
    *broken = brig_strdup(why->msg);
    return 0;
}
