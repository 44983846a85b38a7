/* File operations on cgroupfs: single-write values, mkdir -p that counts
 * what it made (so destroy removes exactly that), rmdir with retries while
 * the kernel drains a cgroup, and cgroup.procs reading. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "cgroup_internal.h"
#include "../../util/cleanup.h"
#include "../../util/fs.h"
#include "../../util/log.h"
#include "../../util/strutil.h"

/* dir/file in buf: a cgroup file's path, built for every value read or
 * written, without a malloc each. A path that does not fit (never a real
 * cgroup's) is built on the heap in *spill instead: the same path. */
static const char *cg_file_path(char *buf, size_t size, const char *dir, const char *file, char **spill)
{
    int n = snprintf(buf, size, "%s/%s", dir, file);
    if (n >= 0 && (size_t)n < size) return buf;
    *spill = brig_asprintf("%s/%s", dir, file);
    return *spill;
}

int cg_write(const char *dir, const char *file, const char *field, const char *value,
             struct brig_error **err)
{
    char pbuf[PATH_MAX];
    autofree char *spill = NULL;
    const char *path = cg_file_path(pbuf, sizeof(pbuf), dir, file, &spill);
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
    char pbuf[PATH_MAX];
    autofree char *spill = NULL;
    const char *path = cg_file_path(pbuf, sizeof(pbuf), dir, file, &spill);
    return access(path, F_OK) == 0;
}

int cg_read(const char *dir, const char *file, char **out, struct brig_error **err)
{
    char pbuf[PATH_MAX];
    autofree char *spill = NULL;
    const char *path = cg_file_path(pbuf, sizeof(pbuf), dir, file, &spill);
    return brig_read_file(path, 1 << 20, out, NULL, err);
}

int cg_read_value(const char *dir, const char *file, char *buf, size_t size, struct brig_error **err)
{
    char pbuf[PATH_MAX];
    autofree char *spill = NULL;
    const char *path = cg_file_path(pbuf, sizeof(pbuf), dir, file, &spill);
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

/* Parents brig makes for containers carry this mark, so that the delete of
 * whichever container leaves one empty removes it, not only the delete of
 * the container that happened to make it (creates racing into a new parent
 * each see it made by another). A parent without it (the admin's, with
 * limits of its own) is never removed. trusted.* needs CAP_SYS_ADMIN: a
 * brig without it makes unmarked parents, which stay, as before. */
#define CG_PARENT_MARK "trusted.brig.parent"

static void mark_parent(const char *dir)
{
    if (setxattr(dir, CG_PARENT_MARK, "1", 1, 0) < 0)
        brig_debug("cgroup: cannot mark %s as brig's parent: %s", dir, strerror(errno));
}

bool cg_parent_marked(const char *dir)
{
    return getxattr(dir, CG_PARENT_MARK, NULL, 0) >= 0;
}

/* One walk from the mount point down; ENOENT means a level made or found a
 * moment ago was removed before the next mkdir: *vanished is set. */
static int cg_mkdir_walk(const char *mnt, const char *path, unsigned *created, bool *vanished,
                         struct brig_error **err)
{
    *created = 0;
    *vanished = false;
    autofree char *buf = brig_strdup(path);
    /* the deepest level this walk made, for the undo of a failure */
    size_t made_len = 0;
    unsigned made_run = 0;
    for (char *p = buf + strlen(mnt); *p != '\0';) {
        while (*p == '/') p++;
        if (*p == '\0') break;
        char *slash = strchr(p, '/');
        if (slash) *slash = '\0';
        bool last = slash == NULL || slash[1] == '\0';
        int e = 0;
        if (mkdir(buf, 0755) == 0) {
            (*created)++;
            made_len = strlen(buf);
            made_run = *created;
            if (!last) mark_parent(buf);
        } else if (errno != EEXIST) {
            e = errno;
        } else {
            /* Someone raced us below a directory we just made: not ours
             * (it is marked: whoever empties it removes it). */
            *created = 0;
            /* A leaf that exists must be a cgroup, not a control file (a
             * middle level that is a file fails the next mkdir, ENOTDIR). */
            struct stat st;
            if (last && (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode))) e = ENOTDIR;
        }
        if (e != 0) {
            /* Undo what this call made so a failure leaves nothing: the
             * deepest level made and its marked parents. */
            autofree char *failed = brig_strdup(buf);
            if (made_len > 0) {
                buf[made_len] = '\0';
                cg_rmdir_created(buf, made_run, NULL);
            }
            *created = 0;
            *vanished = e == ENOENT;
            if (e == ENOTDIR)
                return brig_fail(err, e, "linux.cgroupsPath: %s is not a cgroup directory", failed);
            return brig_fail(err, e, "mkdir %s", failed);
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
    return cg_rmdir_levels(path, created, 0, false, err);
}

int cg_rmdir_levels(const char *path, unsigned created, unsigned walk_max, bool leaf_gone,
                    struct brig_error **err)
{
    autofree char *buf = brig_strdup(path);
    for (unsigned level = 0;; level++) {
        if (walk_max > 0 && level >= walk_max) break;
        /* Above the levels this container made: a parent another brig made
         * for containers is removed too once empty; anything else stays. */
        if (level >= created && (level == 0 || !cg_parent_marked(buf))) break;
        int r = level == 0 && leaf_gone ? 0 : rmdir(buf);
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

/* The pids of dir's cgroup.procs appended to *v (count *cnt), then those of
 * its child cgroups, depth first, at most depth levels down. */
static void cg_pids_append(const char *dir, int depth, pid_t **v, size_t *cnt)
{
    autofree pid_t *p = NULL;
    size_t n = 0;
    if (cg_read_pids(dir, &p, &n, NULL) == 0 && n > 0) {
        pid_t *nv = realloc(*v, (*cnt + n) * sizeof(*nv));
        if (nv == NULL) abort();
        memcpy(nv + *cnt, p, n * sizeof(*nv));
        *v = nv;
        *cnt += n;
    }
    if (depth == 0) return;
    DIR *d = opendir(dir);
    if (d == NULL) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_type != DT_DIR || e->d_name[0] == '.') continue;
        char sub[PATH_MAX];
        if (snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= (int)sizeof(sub)) continue;
        cg_pids_append(sub, depth - 1, v, cnt);
    }
    closedir(d);
}

int cg_read_pids_tree(const char *dir, int depth, pid_t **pids, size_t *n)
{
    *pids = NULL;
    *n = 0;
    cg_pids_append(dir, depth, pids, n);
    return 0;
}

bool cg_is_cgroupfs(const char *path)
{
    struct statfs st;
    if (statfs(path, &st) < 0) return false;
    return st.f_type == CGROUP_SUPER_MAGIC || st.f_type == CGROUP2_SUPER_MAGIC;
}
