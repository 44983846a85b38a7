/* The manifest of a rootfs: one line per entry, sorted by path, so that two
 * builds from the same inputs give the same text and drift reads as a diff:
 *
 *   # brig-rootfs manifest 1
 *   TYPE MODE UID GID SIZE MTIME SHA256|- PATH [TARGET]
 *   f 0755 0 0 125560 1680000000.000000000 9f86d0...  /usr/bin/dash
 *
 * Format 2 (written only when an entry has extended attributes, so that a
 * tree without any keeps the text older brig-rootfs reads) adds XATTRS|-
 * after SHA256: the sha256 of the entry's sorted xattr names and values
 * (file capabilities, ACLs, security labels).
 *
 * PATH and TARGET are percent-escaped (rootfs_escape). The walk is by fd,
 * never follows a symlink, and hashes with nettle's SHA-256. */
#include "rootfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <nettle/sha2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../runtime/util/cleanup.h"
#include "../../runtime/util/fs.h"
#include "../../runtime/util/sha256.h"
#include "../../runtime/util/strutil.h"

#define MANIFEST_HEADER "# brig-rootfs manifest 1\n"
#define MANIFEST_HEADER_2 "# brig-rootfs manifest 2\n"
#define MANIFEST_MAX_DEPTH 256
#define MANIFEST_MAX_SIZE (256u << 20)

void rootfs_manifest_free(struct rootfs_manifest *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->e[i].path);
        free(m->e[i].target);
        free(m->e[i].xattr_names);
    }
    free(m->e);
    *m = (struct rootfs_manifest){0};
}

static struct rootfs_entry *manifest_push(struct rootfs_manifest *m)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 256;
        m->e = realloc(m->e, m->cap * sizeof(*m->e));
        if (m->e == NULL) abort();
    }
    struct rootfs_entry *e = &m->e[m->n++];
    *e = (struct rootfs_entry){ .hash = "-", .xattrs = "" };
    return e;
}

static int manifest_hash_fd(int fd, char hex[65])
{
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    static __thread uint8_t buf[1u << 16];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        sha256_update(&ctx, (size_t)n, buf);
    }
    uint8_t d[BRIG_SHA256_LEN];
    sha256_digest(&ctx, sizeof(d), d);
    brig_sha256_hex(d, hex);
    return 0;
}

static int cmp_name(const void *a, const void *b);

/* The entry's extended attributes, by the path of dirfd's entry name (""
 * for dirfd itself) through /proc/self/fd, never following name: the
 * sorted names and values digested into e->xattrs, "-" for none; the names
 * kept for the report. */
static int manifest_xattrs(int dirfd, const char *name, struct rootfs_entry *e)
{
    char path[64 + 4096];
    snprintf(path, sizeof(path), "/proc/self/fd/%d%s%s", dirfd, name[0] ? "/" : "", name);
    bool self = name[0] == '\0';   /* the fd's own magic link is followed to the directory */
    ssize_t n = self ? listxattr(path, NULL, 0) : llistxattr(path, NULL, 0);
    if (n < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP)) n = 0;
    if (n < 0) return -1;
    if (n == 0) {
        strcpy(e->xattrs, "-");
        return 0;
    }
    autofree char *list = brig_calloc((size_t)n + 1, 1);
    n = self ? listxattr(path, list, (size_t)n) : llistxattr(path, list, (size_t)n);
    if (n < 0) return -1;     /* ERANGE: it grew meanwhile; the caller reports it */
    struct rootfs_strv names = {0};
    for (char *k = list; k < list + n; k += strlen(k) + 1)
        if (*k) rootfs_strv_add(&names, k);
    if (names.n) qsort(names.v, names.n, sizeof(char *), cmp_name);
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    int rc = 0;
    size_t joined = 0;
    for (size_t i = 0; i < names.n && rc == 0; i++) {
        ssize_t vn = self ? getxattr(path, names.v[i], NULL, 0) : lgetxattr(path, names.v[i], NULL, 0);
        autofree uint8_t *v = vn >= 0 ? brig_calloc((size_t)vn + 1, 1) : NULL;
        if (vn < 0 || (vn = self ? getxattr(path, names.v[i], v, (size_t)vn)
                              : lgetxattr(path, names.v[i], v, (size_t)vn)) < 0) {
            rc = -1;
            break;
        }
        uint8_t len[4] = { (uint8_t)(vn >> 24), (uint8_t)(vn >> 16), (uint8_t)(vn >> 8), (uint8_t)vn };
        sha256_update(&ctx, strlen(names.v[i]) + 1, (const uint8_t *)names.v[i]);
        sha256_update(&ctx, sizeof(len), len);
        sha256_update(&ctx, (size_t)vn, v);
        joined += strlen(names.v[i]) + 1;
    }
    if (rc == 0) {
        uint8_t d[BRIG_SHA256_LEN];
        sha256_digest(&ctx, sizeof(d), d);
        brig_sha256_hex(d, e->xattrs);
        e->xattr_names = brig_calloc(joined + 1, 1);
        for (size_t i = 0; i < names.n; i++) {
            if (i) strcat(e->xattr_names, ",");
            strcat(e->xattr_names, names.v[i]);
        }
    }
    rootfs_strv_free(&names);
    return rc;
}

static void manifest_fill(struct rootfs_entry *e, const struct stat *st)
{
    e->type = S_ISDIR(st->st_mode) ? ROOTFS_DIR : S_ISREG(st->st_mode) ? ROOTFS_FILE
            : S_ISLNK(st->st_mode) ? ROOTFS_LINK : ROOTFS_OTHER;
    e->mode = st->st_mode & 07777;
    e->uid = st->st_uid;
    e->gid = st->st_gid;
    e->size = e->type == ROOTFS_DIR || e->type == ROOTFS_OTHER ? 0 : (uint64_t)st->st_size;
    e->mtime_s = st->st_mtim.tv_sec;
    e->mtime_ns = st->st_mtim.tv_nsec;
    e->ctime_s = st->st_ctim.tv_sec;
    e->ctime_ns = st->st_ctim.tv_nsec;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct rootfs_entry *)a)->path, ((const struct rootfs_entry *)b)->path);
}

/* dirfd is the directory at path (its entry already recorded). */
static int manifest_walk(int dirfd, const char *path, bool hash, int depth, struct rootfs_manifest *m,
                         struct brig_error **err)
{
    if (depth > MANIFEST_MAX_DEPTH) return brig_failx(err, "%s: nested deeper than %d", path, MANIFEST_MAX_DEPTH);
    int lfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = lfd < 0 ? NULL : fdopendir(lfd);
    if (d == NULL) {
        if (lfd >= 0) close(lfd);
        return brig_fail(err, errno, "%s: list", path);
    }
    struct rootfs_strv names = {0};
    for (struct dirent *de; (de = readdir(d)) != NULL;)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) rootfs_strv_add(&names, de->d_name);
    closedir(d);
    if (names.n) qsort(names.v, names.n, sizeof(char *), cmp_name);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        const char *name = names.v[i];
        autofree char *child = brig_asprintf("%s/%s", strcmp(path, "/") ? path : "", name);
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            rc = brig_fail(err, errno, "%s", child);
            break;
        }
        struct rootfs_entry *e = manifest_push(m);
        e->path = brig_strdup(child);
        manifest_fill(e, &st);
        if (hash && manifest_xattrs(dirfd, name, e) < 0) {
            rc = brig_fail(err, errno, "%s: extended attributes", child);
            break;
        }
        if (e->type == ROOTFS_LINK) {
            char target[4096];
            ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
            if (n < 0) {
                rc = brig_fail(err, errno, "%s: readlink", child);
                break;
            }
            target[n] = '\0';
            e->target = brig_strdup(target);
        } else if (e->type == ROOTFS_FILE && hash) {
            autoclose int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
            struct stat fst;
            /* judged by what was opened: a file swapped since the stat is not hashed as it */
            if (fd < 0 || fstat(fd, &fst) < 0 || fst.st_ino != st.st_ino || !S_ISREG(fst.st_mode) ||
                manifest_hash_fd(fd, e->hash) < 0) {
                rc = brig_fail(err, errno ? errno : EIO, "%s: hash", child);
                break;
            }
        } else if (e->type == ROOTFS_DIR) {
            autoclose int sub = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                rc = brig_fail(err, errno, "%s", child);
                break;
            }
            rc = manifest_walk(sub, child, hash, depth + 1, m, err);
        }
    }
    rootfs_strv_free(&names);
    return rc;
}

int rootfs_manifest_scan(int rootfd, bool hash, struct rootfs_manifest *out, struct brig_error **err)
{
    struct stat st;
    if (fstat(rootfd, &st) < 0) return brig_fail(err, errno, "rootfs: stat");
    if (!S_ISDIR(st.st_mode)) return brig_failx(err, "rootfs: not a directory");
    struct rootfs_entry *e = manifest_push(out);
    e->path = brig_strdup("/");
    manifest_fill(e, &st);
    if (hash && manifest_xattrs(rootfd, "", e) < 0) {
        rootfs_manifest_free(out);
        return brig_fail(err, errno, "/: extended attributes");
    }
    if (manifest_walk(rootfd, "/", hash, 0, out, err) < 0) {
        rootfs_manifest_free(out);
        return -1;
    }
    /* The walk is depth first ("/a/x" before "/a-b"); the manifest is in
     * plain byte order, which a diff merges. */
    qsort(out->e, out->n, sizeof(*out->e), cmp_entry);
    return 0;
}

char *rootfs_manifest_text(const struct rootfs_manifest *m, size_t *len)
{
    size_t cap = 4096, n = 0;
    bool v2 = false;
    for (size_t i = 0; i < m->n && !v2; i++) v2 = m->e[i].xattrs[0] != '\0' && strcmp(m->e[i].xattrs, "-") != 0;
    char *buf = brig_calloc(cap, 1);
    n = (size_t)snprintf(buf, cap, "%s", v2 ? MANIFEST_HEADER_2 : MANIFEST_HEADER);
    for (size_t i = 0; i < m->n; i++) {
        const struct rootfs_entry *e = &m->e[i];
        autofree char *p = rootfs_escape(e->path);
        autofree char *t = e->target ? rootfs_escape(e->target) : NULL;
        autofree char *line = brig_asprintf("%c %04o %u %u %" PRIu64 " %" PRId64 ".%09ld %s%s%s %s%s%s\n", e->type,
                                            (unsigned)e->mode, (unsigned)e->uid, (unsigned)e->gid, e->size,
                                            e->mtime_s, e->mtime_ns, e->hash, v2 ? " " : "",
                                            v2 ? (e->xattrs[0] ? e->xattrs : "-") : "", p, t ? " " : "",
                                            t ? t : "");
        size_t l = strlen(line);
        if (n + l + 1 > cap) {
            while (n + l + 1 > cap) cap *= 2;
            buf = realloc(buf, cap);
            if (buf == NULL) abort();
        }
        memcpy(buf + n, line, l + 1);
        n += l;
    }
    *len = n;
    return buf;
}

static bool manifest_hex_or_dash(const char *h)
{
    return strcmp(h, "-") == 0 || (strlen(h) == 64 && strspn(h, "0123456789abcdef") == 64);
}

static int manifest_parse_line(char *line, int version, struct rootfs_manifest *m)
{
    char type, hash[65], xattrs[65] = "-", path[8192], target[8192] = "";
    unsigned mode, uid, gid;
    uint64_t size;
    int64_t ms;
    long mns;
    int f = version == 1
        ? sscanf(line, "%c %o %u %u %" SCNu64 " %" SCNd64 ".%ld %64s %8191s %8191s", &type, &mode, &uid, &gid,
                 &size, &ms, &mns, hash, path, target)
        : sscanf(line, "%c %o %u %u %" SCNu64 " %" SCNd64 ".%ld %64s %64s %8191s %8191s", &type, &mode, &uid,
                 &gid, &size, &ms, &mns, hash, xattrs, path, target) - 1;
    if (f < 9 || !strchr("dflo", type) || mode > 07777 || mns < 0 || mns > 999999999) return -1;
    if ((type == ROOTFS_LINK) != (f == 10)) return -1;
    if (!manifest_hex_or_dash(hash) || !manifest_hex_or_dash(xattrs)) return -1;
    struct rootfs_entry *e = manifest_push(m);
    memcpy(e->xattrs, xattrs, sizeof(xattrs));
    e->path = rootfs_unescape(path);
    e->target = f == 10 ? rootfs_unescape(target) : NULL;
    if (e->path == NULL || e->path[0] != '/' || (f == 10 && e->target == NULL)) return -1;
    e->type = type, e->mode = mode, e->uid = uid, e->gid = gid, e->size = size;
    e->mtime_s = ms, e->mtime_ns = mns;
    memcpy(e->hash, hash, sizeof(hash));
    return 0;
}

int rootfs_manifest_parse(const char *text, size_t len, struct rootfs_manifest *out, struct brig_error **err)
{
    int version = len >= strlen(MANIFEST_HEADER) && memcmp(text, MANIFEST_HEADER, strlen(MANIFEST_HEADER)) == 0 ? 1
                  : len >= strlen(MANIFEST_HEADER_2) &&
                    memcmp(text, MANIFEST_HEADER_2, strlen(MANIFEST_HEADER_2)) == 0 ? 2 : 0;
    if (version == 0)
        return brig_failx(err, "not a brig-rootfs manifest (first line: %s or 2)", "# brig-rootfs manifest 1");
    autofree char *copy = strndup(text, len);
    size_t lineno = 1;
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save), lineno++) {
        if (line[0] == '#') continue;
        if (manifest_parse_line(line, version, out) < 0) {
            rootfs_manifest_free(out);
            return brig_failx(err, "line %zu: malformed entry", lineno);
        }
        size_t n = out->n;
        if (n >= 2 && strcmp(out->e[n - 2].path, out->e[n - 1].path) >= 0) {
            rootfs_manifest_free(out);
            return brig_failx(err, "line %zu: entries out of order or repeated", lineno);
        }
    }
    return 0;
}

int rootfs_manifest_load(int dirfd, const char *name, struct rootfs_manifest *out, struct timespec *ctime,
                         struct brig_error **err)
{
    struct stat st;
    TRY(rootfs_manifest_load_st(dirfd, name, out, &st, err));
    if (ctime) *ctime = st.st_ctim;
    return 0;
}

int rootfs_manifest_load_st(int dirfd, const char *name, struct rootfs_manifest *out, struct stat *stp,
                            struct brig_error **err)
{
    struct stat st;
    autoclose int fd = brig_open_input(dirfd, name, BRIG_INPUT_NOFOLLOW, &st, err);
    if (fd < 0) return brig_wrap(err, "manifest");
    if ((uint64_t)st.st_size > MANIFEST_MAX_SIZE) return brig_failx(err, "manifest %s: larger than 256 MiB", name);
    autofree char *text = brig_calloc((size_t)st.st_size + 1, 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = read(fd, text + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return brig_fail(err, n < 0 ? errno : EIO, "manifest %s: read", name);
        got += (size_t)n;
    }
    *stp = st;
    if (rootfs_manifest_parse(text, got, out, err) < 0) return brig_wrap(err, "manifest %s", name);
    return 0;
}

static void diff_add(struct rootfs_strv *out, size_t *n, size_t max, char *line)
{
    if (*n < max) rootfs_strv_add(out, line);
    (*n)++;
    free(line);
}

static void diff_entry(const struct rootfs_entry *w, const struct rootfs_entry *h, const struct timespec *not_after,
                       unsigned flags, struct rootfs_strv *out, size_t *n, size_t max)
{
    const char *p = w->path;
    if (w->type != h->type) return diff_add(out, n, max, brig_asprintf("changed %s: type %c -> %c", p, w->type, h->type));
    if (w->mode != h->mode)
        return diff_add(out, n, max, brig_asprintf("changed %s: mode %04o -> %04o", p, (unsigned)w->mode, (unsigned)h->mode));
    if (w->uid != h->uid || w->gid != h->gid)
        return diff_add(out, n, max, brig_asprintf("changed %s: owner %u:%u -> %u:%u", p, (unsigned)w->uid,
                                                   (unsigned)w->gid, (unsigned)h->uid, (unsigned)h->gid));
    if (w->size != h->size)
        return diff_add(out, n, max, brig_asprintf("changed %s: size %" PRIu64 " -> %" PRIu64, p, w->size, h->size));
    if ((w->target || h->target) && (!w->target || !h->target || strcmp(w->target, h->target) != 0))
        return diff_add(out, n, max, brig_asprintf("changed %s: link target", p));
    if (w->type != ROOTFS_DIR && (w->mtime_s != h->mtime_s || w->mtime_ns != h->mtime_ns))
        return diff_add(out, n, max, brig_asprintf("changed %s: mtime", p));
    if (strcmp(w->hash, "-") && strcmp(h->hash, "-") && strcmp(w->hash, h->hash))
        return diff_add(out, n, max, brig_asprintf("changed %s: content (sha256)", p));
    if (w->xattrs[0] && h->xattrs[0] && strcmp(w->xattrs, h->xattrs) != 0)
        return diff_add(out, n, max, brig_asprintf("changed %s: extended attributes (file capabilities, ACLs; "
                                                   "now: %s)", p, h->xattr_names ? h->xattr_names : "none"));
    if (not_after && strcmp(p, "/") != 0 && !(flags & ROOTFS_DIFF_MOUNTPOINTS && h->type == ROOTFS_DIR) &&
        (h->ctime_s > not_after->tv_sec || (h->ctime_s == not_after->tv_sec && h->ctime_ns > not_after->tv_nsec)))
        return diff_add(out, n, max, brig_asprintf("changed %s: modified after the manifest was written (ctime)", p));
}

/* An entry of m with path P/...: entries with a prefix are contiguous in
 * byte order, so the first at or after "P/" tells. */
static bool diff_has_children(const struct rootfs_manifest *m, const char *path)
{
    autofree char *prefix = brig_asprintf("%s/", path);
    size_t lo = 0, hi = m->n, pl = strlen(prefix);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(m->e[mid].path, prefix) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo < m->n && strncmp(m->e[lo].path, prefix, pl) == 0;
}

/* An empty directory or file: what a runtime creates as a mount point. */
static bool diff_mountpoint(const struct rootfs_manifest *have, const struct rootfs_entry *e)
{
    if (e->type == ROOTFS_FILE) return e->size == 0;
    return e->type == ROOTFS_DIR && !diff_has_children(have, e->path);
}

size_t rootfs_manifest_diff(const struct rootfs_manifest *want, const struct rootfs_manifest *have,
                            const struct timespec *not_after, unsigned flags, struct rootfs_strv *out,
                            size_t max)
{
    size_t n = 0, i = 0, j = 0;
    while (i < want->n || j < have->n) {
        int c = i == want->n ? 1 : j == have->n ? -1 : strcmp(want->e[i].path, have->e[j].path);
        if (c < 0) {
            diff_add(out, &n, max, brig_asprintf("removed %s", want->e[i++].path));
        } else if (c > 0) {
            const struct rootfs_entry *e = &have->e[j++];
            if (!(flags & ROOTFS_DIFF_MOUNTPOINTS) || !diff_mountpoint(have, e))
                diff_add(out, &n, max, brig_asprintf("added %s", e->path));
        } else {
            diff_entry(&want->e[i++], &have->e[j++], not_after, flags, out, &n, max);
        }
    }
    if (n > max) diff_add(out, &n, SIZE_MAX, brig_asprintf("... and %zu more", n - max));
    return n > max ? n - 1 : n;
}
