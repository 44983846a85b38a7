/* Container state on disk: <root>/<id>/state.json plus the locking that
 * serializes every brig command on one container.
 *
 * Locking: state_dir_create() and state_dir_open() take an exclusive flock()
 * on the container directory fd they return. The lock is held until that fd
 * is closed (by the caller, normally through autoclose at the end of the
 * command), so two commands on one container never interleave. A command
 * that waited for the lock re-checks that the directory still exists: the
 * holder may have been `delete`. */
#include "state.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_ops.h"
#include "../config/json.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/strutil.h"
#include "../../policy/policy.h"

#define STATE_ID_MAX 1024
#define STATE_FILE "state.json"

int state_validate_id(const char *id, struct brig_error **err)
{
    if (id == NULL || id[0] == '\0') return brig_failx(err, "container id must not be empty");
    size_t n = strlen(id);
    if (n > STATE_ID_MAX)
        return brig_failx(err, "container id is too long (%zu bytes, at most %d)", n, STATE_ID_MAX);
    /* The id names a directory under --root: a leading '.', a '/' or ".."
     * could escape it or hide it, so only a conservative alphabet is allowed. */
    if (!isalnum((unsigned char)id[0]))
        return brig_failx(err, "invalid container id \"%.64s\": must start with a letter or digit", id);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)id[i];
        if (isalnum(c) || c == '_' || c == '.' || c == '+' || c == '-') continue;
        return brig_failx(err, "invalid container id \"%.64s\": character 0x%02x not allowed "
                          "(allowed: letters, digits, '_', '.', '+', '-')", id, c);
    }
    if (strstr(id, "..") != NULL)
        return brig_failx(err, "invalid container id \"%.64s\": must not contain \"..\"", id);
    return 0;
}

/* mkdir -p for the parents of root (0755, like /run itself), root 0700. */
static int state_mkdir_root(const char *root, struct brig_error **err)
{
    autofree char *p = brig_strdup(root);
    for (char *s = p + 1; *s != '\0'; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(p, 0755) < 0 && errno != EEXIST) return brig_fail(err, errno, "mkdir %s", p);
        *s = '/';
    }
    if (mkdir(root, 0700) < 0 && errno != EEXIST) return brig_fail(err, errno, "mkdir %s", root);
    return 0;
}

/* Open the --root directory. It holds every container's pid and config, so
 * it must be ours: a symlink (which could be redirected) or a directory
 * owned by someone else, or writable by others, is refused. */
static int state_open_root(const char *root, bool create, int *out, struct brig_error **err)
{
    if (root == NULL || root[0] != '/')
        return brig_failx(err, "--root %s: must be an absolute path", root ? root : "(null)");
    autoclose int fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
        /* made only when missing: the usual root exists (no mkdir of /run) */
        TRY(state_mkdir_root(root, err));
        fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
        if (errno == ELOOP || errno == ENOTDIR) {
            struct stat lst;
            if (lstat(root, &lst) == 0 && S_ISLNK(lst.st_mode))
                return brig_failx(err, "--root %s: is a symlink, refusing to use it", root);
        }
        return brig_fail(err, errno, "--root %s", root);
    }
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "--root %s: fstat", root);
    if (st.st_uid != geteuid())
        return brig_failx(err, "--root %s: owned by uid %u, not by us (uid %u), refusing to use it",
                          root, (unsigned)st.st_uid, (unsigned)geteuid());
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return brig_failx(err, "--root %s: writable by group or others (mode %04o), refusing to use it",
                          root, (unsigned)(st.st_mode & 07777));
    *out = steal_fd(&fd);
    return 0;
}

int state_root_open(const char *root, bool create, int *out, struct brig_error **err)
{
    return state_open_root(root, create, out, err);
}

/* Lock the container dir, then make sure it was not deleted while we waited. */
int state_fail_not_exist(const char *id, struct brig_error **err)
{
    brig_failx(err, "container %s does not exist", id);
    if (err != NULL && *err != NULL) (*err)->errnum = ENOENT;
    return -1;
}

static int state_lock(int dirfd, const char *id, struct brig_error **err)
{
    brig_debug("locking state dir of %s", id);
    while (flock(dirfd, LOCK_EX) < 0) {
        if (errno != EINTR) return brig_fail(err, errno, "container %s: lock state directory", id);
    }
    struct stat st;
    if (fstat(dirfd, &st) < 0) return brig_fail(err, errno, "container %s: fstat", id);
    if (st.st_nlink == 0) return state_fail_not_exist(id, err);
    return 0;
}

int state_relock(int dirfd, const char *id, struct brig_error **err)
{
    return state_lock(dirfd, id, err);
}

int state_dir_create(const char *root, const char *id, int *dirfd, struct brig_error **err)
{
    return state_dir_make(root, id, NULL, dirfd, err);
}

int state_dir_make(const char *root, const char *id, int *rootfd_out, int *dirfd,
                   struct brig_error **err)
{
    TRY(state_validate_id(id, err));
    autoclose int rootfd = -1;
    TRY(state_open_root(root, true, &rootfd, err));
    if (mkdirat(rootfd, id, 0711) < 0) {
        if (errno == EEXIST) return brig_failx(err, "container \"%s\" already exists", id);
        brig_fail(err, errno, "mkdir %s/%s", root, id);
        return state_root_hint(err);
    }
    autoclose int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        unlinkat(rootfd, id, AT_REMOVEDIR);
        return brig_fail(err, e, "open %s/%s", root, id);
    }
    if (state_lock(fd, id, err) < 0) {
        unlinkat(rootfd, id, AT_REMOVEDIR);
        return -1;
    }
    brig_debug("created state dir %s/%s", root, id);
    *dirfd = steal_fd(&fd);
    if (rootfd_out != NULL) *rootfd_out = steal_fd(&rootfd);
    return 0;
}

int state_dir_open_unlocked(const char *root, const char *id, int *dirfd, struct brig_error **err)
{
    TRY(state_validate_id(id, err));
    autoclose int rootfd = -1;
    if (access(root, F_OK) < 0 && errno == ENOENT) return state_fail_not_exist(id, err);
    TRY(state_open_root(root, false, &rootfd, err));
    int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return state_fail_not_exist(id, err);
        return brig_fail(err, errno, "open %s/%s", root, id);
    }
    *dirfd = fd;
    return 0;
}

int state_dir_open(const char *root, const char *id, int *dirfd, struct brig_error **err)
{
    autoclose int fd = -1;
    TRY(state_dir_open_unlocked(root, id, &fd, err));
    TRY(state_lock(fd, id, err));
    *dirfd = steal_fd(&fd);
    return 0;
}

int state_dir_remove(const char *root, const char *id, struct brig_error **err)
{
    TRY(state_validate_id(id, err));
    autoclose int rootfd = -1;
    TRY(state_open_root(root, false, &rootfd, err));
    /* a staged workspace still mounted there (a create killed midway) is
     * unmounted, never walked into */
    autoclose int dirfd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dirfd >= 0) policy_stage_discard(dirfd);
    if (brig_rm_rf_at(rootfd, id, err) < 0) return brig_wrap(err, "container %s: remove state", id);
    brig_debug("removed state dir %s/%s", root, id);
    return 0;
}

int state_dir_remove_known(int rootfd, int dirfd, const char *id, struct brig_error **err)
{
    /* What a container made by run holds; anything else (a temp file left
     * by a failed write) makes the rmdir fail, and the generic removal
     * takes over. config.json goes first: a brig killed in between leaves
     * a state that `delete` still reads. */
    static const char *const files[] = {"config.json", STATE_FILE};
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(files); i++)
        if (unlinkat(dirfd, files[i], 0) < 0 && errno != ENOENT)
            return brig_fail(err, errno, "container %s: remove %s", id, files[i]);
    if (unlinkat(rootfd, id, AT_REMOVEDIR) == 0 || errno == ENOENT) {
        brig_debug("removed state dir of %s", id);
        return 0;
    }
    if (errno != ENOTEMPTY && errno != EEXIST) return brig_fail(err, errno, "container %s: remove state", id);
    policy_stage_discard(dirfd);
    if (brig_rm_rf_at(rootfd, id, err) < 0) return brig_wrap(err, "container %s: remove state", id);
    return 0;
}

int state_root_hint(struct brig_error **err)
{
    if (err == NULL || *err == NULL) return -1;
    const char *why = (*err)->errnum == EROFS ? "is on a read-only file system"
                    : (*err)->errnum == ENOSPC || (*err)->errnum == EDQUOT ? "has no room left" : NULL;
    if (why == NULL) return -1;
    size_t n = strlen((*err)->msg);
    snprintf((*err)->msg + n, sizeof((*err)->msg) - n, " (the state directory %s: free room there, or "
             "give brig another: --root, or --state-root for brig sandbox)", why);
    return -1;
}

static int state_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int state_list_ids(const char *root, char ***ids, size_t *n, struct brig_error **err)
{
    *ids = NULL;
    *n = 0;
    if (access(root, F_OK) < 0 && errno == ENOENT) {
        *ids = brig_calloc(1, sizeof(char *));
        return 0;
    }
    int rootfd = -1;
    TRY(state_open_root(root, false, &rootfd, err));
    DIR *d = fdopendir(rootfd);
    if (d == NULL) {
        int e = errno;
        close(rootfd);
        return brig_fail(err, e, "--root %s", root);
    }
    size_t cap = 16, len = 0;
    char **v = brig_calloc(cap, sizeof(char *));
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        /* Entries that cannot be container ids (dot files, temp files) are
         * not ours to list. */
        if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) continue;
        if (state_validate_id(de->d_name, NULL) < 0) continue;
        if (len + 1 >= cap) {
            cap *= 2;
            char **nv = realloc(v, cap * sizeof(char *));
            if (nv == NULL) abort();
            v = nv;
        }
        v[len++] = brig_strdup(de->d_name);
        v[len] = NULL;
    }
    closedir(d);
    qsort(v, len, sizeof(char *), state_cmp_str);
    *ids = v;
    *n = len;
    return 0;
}

/* Write all of data to fd. */
static int state_write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, data, len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        data += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Files of the state directory are written only by the holder of its lock
 * (state_dir_create, state_dir_open), so a temp file needs no unique name
 * (no getpid): a writer killed half-way left it to the next one, which
 * truncates it, or to state_dir_remove. */
static int state_replace_file(int dirfd, const char *name, const char *data, size_t len,
                              struct brig_error **err)
{
    char tmp[64];
    snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
    autoclose int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return brig_fail(err, errno, "create %s", tmp);
    if (state_write_all(fd, data, len) < 0 || renameat(dirfd, tmp, dirfd, name) < 0) {
        int e = errno;
        unlinkat(dirfd, tmp, 0);
        return brig_fail(err, e, "write %s", name);
    }
    return 0;
}

int state_write_config(int dirfd, const char *text, size_t len, struct brig_error **err)
{
    /* Written in place, no rename: the directory was just made, and
     * state.json, which every reader of config.json reads first, is
     * written only after this returned. A create killed half-way leaves a
     * directory without state.json, which `delete --force` removes. */
    autoclose int fd = openat(dirfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                              0600);
    if (fd < 0 || state_write_all(fd, text, len) < 0) {
        brig_fail(err, errno, "write config.json");
        return state_root_hint(err);
    }
    return 0;
}

/* The members a `delete --force` needs to end the container (the init, its
 * cgroup) come first and are short: a state.json cut short or grown past
 * STATE_FILE_MAX still names them (state_salvage.c). */
static struct brig_jw *state_json(const struct brig_state *st, bool annotations)
{
    struct brig_jw *w = jw_new(false);
    jw_obj_open(w);
    jw_kstr(w, "id", st->id);
    jw_ki64(w, "pid", st->pid);
    jw_ku64(w, "pidStartTime", st->pid_start_time);
    jw_kbool(w, "setupDone", st->setup_done);
    jw_kstr(w, "cgroup", st->cgroup);
    if (st->has_shared_mnt) {
        autofree char *m = rootfs_shared_format(&st->shared_mnt);
        jw_kstr(w, "sharedMount", m);
    }
    jw_kstr(w, "bundle", st->bundle);
    jw_kstr(w, "ociVersion", st->oci_version);
    jw_kstr(w, "rootfs", st->rootfs);
    jw_kstr(w, "created", st->created);
    jw_key(w, "annotations");
    jw_obj_open(w);
    for (size_t i = 0; annotations && i < st->n_annotations; i++)
        jw_kstr(w, st->annotations[i].key, st->annotations[i].value);
    jw_obj_close(w);
    jw_obj_close(w);
    return w;
}

int state_check_size(const struct brig_state *st, struct brig_error **err)
{
    autojw struct brig_jw *w = state_json(st, true);
    size_t len = 0;
    jw_text(w, &len);
    if (len + STATE_CGROUP_RESERVE <= STATE_FILE_MAX) return 0;
    autojw struct brig_jw *core = state_json(st, false);
    size_t core_len = 0;
    jw_text(core, &core_len);
    /* Blame what makes it large: annotations, unless a path alone does. */
    const char *field = len - core_len >= core_len ? "annotations"
                      : st->rootfs != NULL && strlen(st->rootfs) > STATE_CGROUP_RESERVE ? "root.path"
                      : "bundle";
    return brig_failx(err, "%s: the container's state would be %zu bytes (%zu of them "
                      "annotations), more than the %u brig can keep and read back (state.json "
                      "is read up to %u bytes, %u of them kept for the cgroup)", field,
                      len + STATE_CGROUP_RESERVE, len - core_len,
                      STATE_FILE_MAX - STATE_CGROUP_RESERVE, STATE_FILE_MAX, STATE_CGROUP_RESERVE);
}

int state_write(int dirfd, const struct brig_state *st, struct brig_error **err)
{
    autojw struct brig_jw *w = state_json(st, true);
    size_t len = 0;
    const char *text = jw_text(w, &len);
    /* Never write what state_read would refuse: every later command,
     * delete included, would fail on it. */
    if (len > STATE_FILE_MAX)
        return brig_failx(err, "container %s: state.json would be %zu bytes, more than the %u "
                          "brig reads back", st->id ? st->id : "?", len, STATE_FILE_MAX);
    if (state_replace_file(dirfd, STATE_FILE, text, len, err) < 0) {
        brig_wrap(err, "container %s", st->id ? st->id : "?");
        return state_root_hint(err);
    }
    brig_debug("wrote state of %s: pid %d setupDone %d", st->id, (int)st->pid, st->setup_done);
    return 0;
}

int state_parse_shared_mnt(brig_json root, struct brig_state *st, struct brig_error **err)
{
    autofree char *m = NULL;
    TRY(json_get_string(root, STATE_FILE, "sharedMount", false, &m, err));
    if (m == NULL) return 0;
    if (rootfs_shared_parse(m, &st->shared_mnt) < 0)
        return brig_failx(err, "%s.sharedMount: not a mount record", STATE_FILE);
    st->has_shared_mnt = true;
    return 0;
}

static int state_parse(brig_json root, struct brig_state *st, struct brig_error **err)
{
    const char *p = STATE_FILE;
    if (!json_is_object(root)) return brig_failx(err, "%s: expected an object", p);
    TRY(json_get_string(root, p, "id", true, &st->id, err));
    TRY(json_get_string(root, p, "bundle", true, &st->bundle, err));
    TRY(json_get_string(root, p, "ociVersion", false, &st->oci_version, err));
    TRY(json_get_string(root, p, "rootfs", false, &st->rootfs, err));
    TRY(json_get_string(root, p, "created", false, &st->created, err));
    TRY(json_get_string(root, p, "cgroup", false, &st->cgroup, err));
    int64_t pid = 0;
    TRY(json_get_i64(root, p, "pid", true, &pid, err));
    if (pid < 0 || pid > 0x7fffffff) return brig_failx(err, "%s.pid: out of range: %lld", p, (long long)pid);
    st->pid = (pid_t)pid;
    TRY(json_get_u64(root, p, "pidStartTime", false, &st->pid_start_time, err));
    TRY(json_get_bool(root, p, "setupDone", false, &st->setup_done, err));
    TRY(state_parse_shared_mnt(root, st, err));
    brig_json ann = json_get(root, "annotations");
    if (ann != NULL && !json_is_null(ann))
        TRY(json_as_kv(ann, "state.json.annotations", &st->annotations, &st->n_annotations, err));
    return 0;
}

int state_read(int dirfd, struct brig_state **out, struct brig_error **err)
{
    autofree char *text = NULL;
    size_t len = 0;
    if (brig_read_file_at(dirfd, STATE_FILE, STATE_FILE_MAX, &text, &len, err) < 0) return -1;
    autojson brig_json root = NULL;
    if (json_parse(text, len, &root, err) < 0) return brig_wrap(err, "%s is corrupt", STATE_FILE);
    autostate struct brig_state *st = brig_calloc(1, sizeof(*st));
    if (state_parse(root, st, err) < 0) return brig_wrap(err, "%s is corrupt", STATE_FILE);
    *out = steal_ptr(&st);
    return 0;
}

void state_free(struct brig_state *st)
{
    if (st == NULL) return;
    free(st->id);
    free(st->bundle);
    free(st->oci_version);
    free(st->rootfs);
    free(st->created);
    free(st->cgroup);
    free(st->shared_mnt.ns_path);
    for (size_t i = 0; i < st->n_annotations; i++) {
        free(st->annotations[i].key);
        free(st->annotations[i].value);
    }
    free(st->annotations);
    free(st);
}

void state_freep(struct brig_state **st)
{
    if (st == NULL) return;
    state_free(*st);
    *st = NULL;
}

/* The status is derived from the live system, never trusted from disk alone
 * (docs/architecture.md): a recorded pid may have exited or been reused. */
enum brig_status state_status(int dirfd, const struct brig_state *st)
{
    if (st->pid <= 0) return BRIG_STATUS_CREATING;
    /* An init gone before setup was done is stopped too: its create failed
     * or was killed, and nothing will bring it back. */
    uint64_t start = state_pid_start_time(st->pid);
    if (start == 0) return BRIG_STATUS_STOPPED;
    if (st->pid_start_time != 0 && start != st->pid_start_time) return BRIG_STATUS_STOPPED;
    if (!st->setup_done) return BRIG_STATUS_CREATING;
    /* The init reads exec.fifo until `start` releases it; a start killed
     * before it removed the fifo leaves it with no reader (ENXIO). */
    int fd = openat(dirfd, "exec.fifo", O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return BRIG_STATUS_CREATED;
    }
    return errno == ENOENT || errno == ENXIO ? BRIG_STATUS_RUNNING : BRIG_STATUS_CREATED;
}

const char *state_status_name(enum brig_status s)
{
    switch (s) {
    case BRIG_STATUS_CREATING: return "creating";
    case BRIG_STATUS_CREATED: return "created";
    case BRIG_STATUS_RUNNING: return "running";
    case BRIG_STATUS_STOPPED: return "stopped";
    case BRIG_STATUS_PAUSED: return "paused";
    }
    return "unknown";
}

int state_parse_proc_stat(const char *text, char *state_out, uint64_t *start_out)
{
    /* comm (field 2) may contain spaces and ')' itself: fields are counted
     * from the last ')' on. */
    const char *p = strrchr(text, ')');
    if (p == NULL) return -1;
    p++;
    char state = 0;
    for (int field = 3; field <= 22; field++) {
        while (*p == ' ') p++;
        if (*p == '\0' || *p == '\n') return -1;
        const char *end = p;
        while (*end != ' ' && *end != '\0' && *end != '\n') end++;
        if (field == 3) {
            if (end - p != 1) return -1;
            state = *p;
        } else if (field == 22) {
            char buf[32];
            size_t n = (size_t)(end - p);
            if (n == 0 || n >= sizeof(buf)) return -1;
            memcpy(buf, p, n);
            buf[n] = '\0';
            uint64_t v;
            if (brig_parse_u64(buf, &v) < 0) return -1;
            *state_out = state;
            *start_out = v;
            return 0;
        }
        p = end;
    }
    return -1;
}

uint64_t state_pid_start_time(pid_t pid)
{
    if (pid <= 0) return 0;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    /* One read: the kernel makes the whole line (a few hundred bytes, comm
     * at most 64) in one go and copies all of it into a buffer this size,
     * so no second read is needed to see the end. */
    char text[4096];
    autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return 0;
    ssize_t n;
    do n = read(fd, text, sizeof(text) - 1); while (n < 0 && errno == EINTR);
    if (n <= 0 || (size_t)n == sizeof(text) - 1) return 0;
    text[n] = '\0';
    char state = 0;
    uint64_t start = 0;
    if (state_parse_proc_stat(text, &state, &start) < 0) {
        brig_debug("cannot parse %s", path);
        return 0;
    }
    /* A zombie or dead process is no longer the container's init. */
    if (state == 'Z' || state == 'X' || state == 'x') return 0;
    return start;
}

bool state_passwd_name(const char *text, uid_t uid, char *out, size_t len)
{
    for (const char *l = text; l != NULL && *l != '\0'; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *c1 = strchr(l, ':'), *nl = strchr(l, '\n');
        if (c1 == NULL || (nl != NULL && c1 > nl) || c1 == l) continue;
        const char *c2 = strchr(c1 + 1, ':');
        if (c2 == NULL || (nl != NULL && c2 > nl)) continue;
        char *end = NULL;
        errno = 0;
        unsigned long v = strtoul(c2 + 1, &end, 10);
        if (errno != 0 || end == c2 + 1 || *end != ':' || v != (unsigned long)uid) continue;
        snprintf(out, len, "%.*s", (int)(c1 - l), l);
        return true;
    }
    return false;
}

void state_owner_name(char *buf, size_t len)
{
    /* runc's "owner" comes from /etc/passwd read directly (its `list` does
     * exactly this), not through NSS: glibc's getpwuid costs ~19 syscalls
     * (nscd socket probes, nsswitch.conf) against 4 here. Looked up once
     * per process. */
    static uid_t cached_uid = (uid_t)-1;
    static char cached[256];
    uid_t uid = geteuid();
    if (uid != cached_uid) {
        autofree char *text = NULL;
        if (brig_read_file("/etc/passwd", 4u << 20, &text, NULL, NULL) < 0 ||
            !state_passwd_name(text, uid, cached, sizeof(cached)))
            snprintf(cached, sizeof(cached), "#%u", (unsigned)uid);
        cached_uid = uid;
    }
    snprintf(buf, len, "%s", cached);
}

void state_jw_write(struct brig_jw *w, const struct brig_state *st, enum brig_status status)
{
    char owner[256];
    state_owner_name(owner, sizeof(owner));
    jw_obj_open(w);
    jw_kstr(w, "ociVersion", st->oci_version ? st->oci_version : "1.0.0");
    jw_kstr(w, "id", st->id ? st->id : "");
    /* runc reports pid 0 once the process is gone: the number may already
     * belong to someone else. */
    jw_ki64(w, "pid", status == BRIG_STATUS_STOPPED ? 0 : st->pid);
    jw_kstr(w, "status", state_status_name(status));
    jw_kstr(w, "bundle", st->bundle ? st->bundle : "");
    jw_kstr(w, "rootfs", st->rootfs ? st->rootfs : "");
    jw_kstr(w, "created", st->created ? st->created : "");
    if (st->n_annotations > 0) {
        jw_key(w, "annotations");
        jw_obj_open(w);
        for (size_t i = 0; i < st->n_annotations; i++)
            jw_kstr(w, st->annotations[i].key, st->annotations[i].value);
        jw_obj_close(w);
    }
    jw_kstr(w, "owner", owner);
    /* brig's addition: OOM kills of the container's memory cgroup while it
     * exists (until delete), so a caller can tell why the process died. */
    uint64_t ooms = 0;
    if (cgroup_ops_oom_kills(st, &ooms)) jw_ku64(w, "oomKills", ooms);
    jw_obj_close(w);
}

char *state_to_oci_json(const struct brig_state *st, enum brig_status status, bool pretty)
{
    autojw struct brig_jw *w = jw_new(pretty);
    state_jw_write(w, st, status);
    return brig_strdup(jw_text(w, NULL));
}
