/* File operations on cgroupfs: single-write values, mkdir -p that counts
 * what it made (so destroy removes exactly that), rmdir with retries while
 * the kernel drains a cgroup, and cgroup.procs reading. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroup_internal.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/strutil.h"

int cg_write(const char *dir, const char *file, const char *field, const char *value,
             struct brig_error **err)
{
    autofree char *path = brig_asprintf("%s/%s", dir, file);
    autoclose int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
    if (fd < 0)
        return brig_fail(err, errno, "%s%swrite %s \"%s\"", field ? field : "", field ? ": " : "",
                         path, value);
    /* cgroupfs parses each write() as one value: never split it. */
    ssize_t w = write(fd, value, strlen(value));
    if (w < 0 || (size_t)w != strlen(value))
        return brig_fail(err, w < 0 ? errno : EIO, "%s%swrite %s \"%s\"", field ? field : "",
                         field ? ": " : "", path, value);
    brig_debug("cgroup: %s <- %s", path, value);
    return 0;
}

int cg_writef(const char *dir, const char *file, const char *field, struct brig_error **err,
              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    autofree char *v = NULL;
    if (vasprintf(&v, fmt, ap) < 0) abort();
    va_end(ap);
    return cg_write(dir, file, field, v, err);
}

bool cg_file_exists(const char *dir, const char *file)
{
    autofree char *path = brig_asprintf("%s/%s", dir, file);
    return access(path, F_OK) == 0;
}

int cg_read(const char *dir, const char *file, char **out, struct brig_error **err)
{
    autofree char *path = brig_asprintf("%s/%s", dir, file);
    return brig_read_file(path, 1 << 20, out, NULL, err);
}

int cg_read_value(const char *dir, const char *file, char *buf, size_t size, struct brig_error **err)
{
    autofree char *path = brig_asprintf("%s/%s", dir, file);
    autoclose int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return brig_fail(err, errno, "open %s", path);
    ssize_t n;
    do n = read(fd, buf, size - 1); while (n < 0 && errno == EINTR);
    if (n < 0) return brig_fail(err, errno, "read %s", path);
    if ((size_t)n == size - 1) return brig_failx(err, "read %s: value too long", path);
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* One walk from the mount point down; ENOENT means a level made or found a
 * moment ago was removed before the next mkdir: *vanished is set. */
static int cg_mkdir_walk(const char *mnt, const char *path, unsigned *created, bool *vanished,
                         struct brig_error **err)
{
    *created = 0;
    *vanished = false;
    autofree char *buf = brig_strdup(path);
    for (char *p = buf + strlen(mnt); *p != '\0';) {
        while (*p == '/') p++;
        if (*p == '\0') break;
        char *slash = strchr(p, '/');
        if (slash) *slash = '\0';
        if (mkdir(buf, 0755) == 0) {
            (*created)++;
        } else if (errno != EEXIST) {
            int e = errno;
            /* Undo what this call made so a failure leaves nothing: the
             * levels above the one that failed. */
            autofree char *failed = brig_strdup(buf);
            char *last = strrchr(buf, '/');
            if (last != NULL) *last = '\0';
            cg_rmdir_created(buf, *created, NULL);
            *created = 0;
            *vanished = e == ENOENT;
            return brig_fail(err, e, "mkdir %s", failed);
        } else if (*created > 0) {
            /* Someone raced us below a directory we just made: not ours. */
            *created = 0;
        }
        if (slash) {
            *slash = '/';
            p = slash + 1;
        } else {
            break;
        }
    }
    brig_debug("cgroup: %s (created %u level(s))", path, *created);
    return 0;
}

int cg_mkdir_p(const char *mnt, const char *path, unsigned *created, struct brig_error **err)
{
    *created = 0;
    size_t ml = strlen(mnt);
    if (strncmp(path, mnt, ml) != 0 || (path[ml] != '/' && path[ml] != '\0'))
        return brig_failx(err, "cgroup %s is not below its mount point %s", path, mnt);
    /* A parent shared with other containers can be removed between our
     * mkdir (EEXIST) and the next one by the delete of the container that
     * made it (delete removes the levels it created once they are empty):
     * walk again, a few times, rather than fail the create. A parent made
     * again this way was not in the levels recorded before the mkdirs: the
     * caller records the new count once we return, and a brig killed in
     * between leaves that empty parent behind. */
    for (int attempt = 0;; attempt++) {
        autoerr struct brig_error *e = NULL;
        bool vanished;
        if (cg_mkdir_walk(mnt, path, created, &vanished, &e) == 0) return 0;
        if (!vanished || attempt == 4) {
            if (err != NULL) *err = steal_ptr(&e);
            return -1;
        }
        brig_debug("cgroup: a parent of %s was removed meanwhile, again", path);
    }
}

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int cg_rmdir_created(const char *path, unsigned created, struct brig_error **err)
{
    autofree char *buf = brig_strdup(path);
    for (unsigned level = 0; level < created; level++) {
        int r = rmdir(buf);
        /* An exiting task keeps its cgroup busy for a moment after SIGKILL:
         * retry the leaf for about a second. */
        for (int tries = 0; r < 0 && errno == EBUSY && level == 0 && tries < 100; tries++) {
            sleep_ms(10);
            r = rmdir(buf);
        }
        if (r < 0 && errno != ENOENT) {
            /* A parent still holding another container's cgroup is shared
             * now: leave it, it is not an error. */
            if (level > 0 && (errno == EBUSY || errno == ENOTEMPTY)) return 0;
            return brig_fail(err, errno, "rmdir %s", buf);
        }
        brig_debug("cgroup: removed %s", buf);
        char *slash = strrchr(buf, '/');
        if (slash == NULL || slash == buf) break;
        *slash = '\0';
    }
    return 0;
}

int cg_freeze_wait(const char *dir, const char *file, const char *value, const char *undo,
                   bool (*frozen)(const char *dir), struct brig_error **err)
{
    TRY(cg_write(dir, file, NULL, value, err));
    for (int i = 0; i < 1000; i++) {
        if (frozen(dir)) return 0;
        struct timespec ts = {0, 1000000L};
        nanosleep(&ts, NULL);
        if (i % 10 == 9) cg_write(dir, file, NULL, value, NULL);
    }
    cg_write(dir, file, NULL, undo, NULL);
    return brig_failx(err, "freeze %s: tasks did not stop within 1s", dir);
}

int cg_read_pids(const char *dir, pid_t **pids, size_t *n, struct brig_error **err)
{
    autofree char *text = NULL;
    *pids = NULL;
    *n = 0;
    if (cg_read(dir, "cgroup.procs", &text, err) < 0) return -1;
    size_t cap = 0, cnt = 0;
    pid_t *v = NULL;
    char *save = NULL;
    for (char *t = strtok_r(text, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
        uint64_t pid;
        if (brig_parse_u64(t, &pid) < 0 || pid == 0 || pid > INT32_MAX) continue;
        if (cnt == cap) {
            cap = cap ? cap * 2 : 16;
            pid_t *nv = realloc(v, cap * sizeof(*nv));
            if (nv == NULL) abort();
            v = nv;
        }
        v[cnt++] = (pid_t)pid;
    }
    *pids = v;
    *n = cnt;
    return 0;
}

bool cg_is_cgroupfs(const char *path)
{
    struct statfs st;
    if (statfs(path, &st) < 0) return false;
    return st.f_type == CGROUP_SUPER_MAGIC || st.f_type == CGROUP2_SUPER_MAGIC;
}
