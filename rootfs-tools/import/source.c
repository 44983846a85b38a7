/* The image's files by name, from an OCI layout directory or from a tar
 * (an OCI layout tar, or a docker/podman save archive). A directory is
 * only read through openat2(RESOLVE_IN_ROOT) from its fd; a tar's regular
 * files are copied, once, into unnamed O_TMPFILE files next to the
 * scratch root, so that nothing named inside it is ever created on disk
 * and every later read sees exactly the bytes whose digest was checked. */
#include "import.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <nettle/sha2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fs.h"
#include "util/sha256.h"
#include "util/strutil.h"

#define SRC_MAX_ENTRIES 65536
#define SRC_MAX_HOPS 8

struct src_file {
    char *name;
    char *link;   /* a symlink's or hard link's target (in-root, clean), or NULL */
    int fd;       /* O_TMPFILE copy of a regular file, -1 for links */
};

struct image_src {
    int dirfd;    /* a layout directory, or -1 for a tar */
    struct src_file *f;
    size_t n, cap;
};

void src_free(struct image_src *s)
{
    if (s == NULL) return;
    if (s->dirfd >= 0) close(s->dirfd);
    for (size_t i = 0; i < s->n; i++) {
        free(s->f[i].name);
        free(s->f[i].link);
        if (s->f[i].fd >= 0) close(s->f[i].fd);
    }
    free(s->f);
    free(s);
}

static void src_freep(struct image_src **s)
{
    src_free(*s);
}

/* dir/target cleaned lexically, ".." clamped at the archive's root (the
 * way RESOLVE_IN_ROOT clamps it for a directory). */
static char *src_join_clamped(const char *from, const char *target)
{
    size_t cap = strlen(from) + strlen(target) + 2;
    autofree char *in = brig_calloc(1, cap);
    if (target[0] == '/') {
        strcpy(in, target);
    } else {
        const char *slash = strrchr(from, '/');
        size_t d = slash != NULL ? (size_t)(slash - from) : 0;
        memcpy(in, from, d);
        in[d] = '/';
        strcpy(in + d + 1, target);
    }
    char *out = brig_calloc(1, cap);
    size_t n = 0;
    for (const char *p = in; *p != '\0';) {
        while (*p == '/') p++;
        size_t c = strcspn(p, "/");
        if (c == 0) break;
        if (c == 2 && p[0] == '.' && p[1] == '.') {
            while (n > 0 && out[n - 1] != '/') n--;
            if (n > 0) n--;
        } else if (!(c == 1 && p[0] == '.')) {
            if (n > 0) out[n++] = '/';
            memcpy(out + n, p, c);
            n += c;
        }
        p += c;
        out[n] = '\0';
    }
    out[n] = '\0';
    return out;
}

static struct src_file *src_find(struct image_src *s, const char *name)
{
    /* the last entry of a name wins, as when a tar is unpacked */
    for (size_t i = s->n; i-- > 0;)
        if (strcmp(s->f[i].name, name) == 0) return &s->f[i];
    return NULL;
}

static struct src_file *src_add(struct image_src *s, const char *name)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 64;
        s->f = realloc(s->f, s->cap * sizeof(*s->f));
        if (s->f == NULL) abort();
    }
    struct src_file *f = &s->f[s->n++];
    *f = (struct src_file){.name = brig_strdup(name), .fd = -1};
    return f;
}

static int src_copy_entry(struct archive *a, int tmp_dirfd, uint64_t *budget, int *out,
                          struct brig_error **err)
{
    autoclose int fd = openat(tmp_dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return brig_fail(err, errno, "temporary file for the image archive");
    const void *buf;
    size_t len;
    la_int64_t off;
    for (;;) {
        int r = archive_read_data_block(a, &buf, &len, &off);
        if (r == ARCHIVE_EOF) break;
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
            return brig_failx(err, "truncated or corrupt: %s", archive_error_string(a));
        if (off < 0 || (uint64_t)off + len > *budget)
            return brig_failx(err, "more than --max-size bytes in the image archive");
        if (pwrite(fd, buf, len, off) != (ssize_t)len) return brig_fail(err, errno, "write temporary file");
    }
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "stat temporary file");
    *budget -= (uint64_t)st.st_size;
    *out = steal_fd(&fd);
    return 0;
}

/* Each file of a tar IMAGE is held open (its O_TMPFILE copy) until the
 * import ends: allow as many fds as entries, within the hard limit. */
static void src_raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) return;
    rlim_t want = SRC_MAX_ENTRIES + 64;
    if (rl.rlim_cur >= want) return;
    rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
    setrlimit(RLIMIT_NOFILE, &rl);
}

static int src_read_tar(struct image_src *s, int fd, int tmp_dirfd, uint64_t max_bytes,
                        struct brig_error **err)
{
    src_raise_nofile();
    struct archive *a = import_tar_reader();
    if (a == NULL) return brig_failx(err, "libarchive: out of memory");
    int rc = -1;
    if (archive_read_open_fd(a, fd, 1 << 20) != ARCHIVE_OK) {
        brig_failx(err, "not a tar archive: %s", archive_error_string(a));
        goto out;
    }
    uint64_t budget = max_bytes;
    for (;;) {
        struct archive_entry *e;
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF) break;
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
            brig_failx(err, "truncated or corrupt: %s", archive_error_string(a));
            goto out;
        }
        if (s->n >= SRC_MAX_ENTRIES) {
            brig_failx(err, "more than %d entries", SRC_MAX_ENTRIES);
            goto out;
        }
        char name[PATH_MAX];
        if (judge_entry_path(archive_entry_pathname(e), name, sizeof(name), err) < 0) goto out;
        const char *hl = archive_entry_hardlink(e);
        mode_t type = archive_entry_filetype(e);
        if (hl != NULL) {
            char t[PATH_MAX];
            if (judge_entry_path(hl, t, sizeof(t), err) < 0) goto out;
            src_add(s, name)->link = brig_strdup(t);
        } else if (type == AE_IFLNK) {
            const char *t = archive_entry_symlink(e);
            src_add(s, name)->link = src_join_clamped(name, t != NULL ? t : "");
        } else if (type == AE_IFREG) {
            int cfd = -1;
            if (src_copy_entry(a, tmp_dirfd, &budget, &cfd, err) < 0) {
                brig_wrap(err, "%s", name);
                goto out;
            }
            src_add(s, name)->fd = cfd;
        }
        /* directories and anything else: not files of the layout */
    }
    rc = 0;
out:
    archive_read_free(a);
    return rc;
}

int src_open(const char *path, int tmp_dirfd, uint64_t max_bytes, struct image_src **out,
             struct brig_error **err)
{
    __attribute__((cleanup(src_freep))) struct image_src *s = brig_calloc(1, sizeof(*s));
    s->dirfd = -1;
    /* a fifo or a device named as IMAGE is refused, never waited on */
    struct stat st;
    autoclose int fd = brig_open_input(AT_FDCWD, path, BRIG_INPUT_DIR, &st, err);
    if (fd < 0) return brig_wrap(err, "image (a layout directory or a tar file)");
    if (S_ISDIR(st.st_mode)) {
        s->dirfd = steal_fd(&fd);
    } else if (src_read_tar(s, fd, tmp_dirfd, max_bytes, err) < 0) {
        return brig_wrap(err, "image %s", path);
    }
    *out = steal_ptr(&s);
    return 0;
}

static int src_resolve(struct image_src *s, const char *name, struct src_file **out)
{
    autofree char *cur = brig_strdup(name);
    for (int hop = 0; hop < SRC_MAX_HOPS; hop++) {
        struct src_file *f = src_find(s, cur);
        if (f == NULL) return -ENOENT;
        if (f->link == NULL) {
            *out = f;
            return 0;
        }
        free(cur);
        cur = brig_strdup(f->link);
    }
    return -ELOOP;
}

bool src_has(struct image_src *s, const char *name)
{
    if (s->dirfd >= 0) {
        struct open_how how = {.flags = O_PATH | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
        int fd = (int)syscall(SYS_openat2, s->dirfd, name, &how, sizeof(how));
        if (fd < 0) return false;
        close(fd);
        return true;
    }
    struct src_file *f;
    return src_resolve(s, name, &f) == 0;
}

int src_open_file(struct image_src *s, const char *name, struct brig_error **err)
{
    autoclose int fd = -1;
    if (s->dirfd >= 0) {
        /* inside the layout; a fifo or a device is refused unopened */
        fd = brig_open_input(s->dirfd, name, BRIG_INPUT_IN_ROOT, NULL, err);
        if (fd < 0) return -1;
    } else {
        struct src_file *f;
        int r = src_resolve(s, name, &f);
        if (r < 0) return brig_fail(err, -r, "%s", name);
        fd = fcntl(f->fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0) return brig_fail(err, errno, "%s", name);
    }
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "%s", name);
    if (!S_ISREG(st.st_mode)) return brig_failx(err, "%s: not a regular file", name);
    if (lseek(fd, 0, SEEK_SET) < 0) return brig_fail(err, errno, "%s", name);
    return steal_fd(&fd);
}

int src_verify_fd(int fd, const char *hex, uint64_t want_size, uint64_t max,
                  struct brig_error **err)
{
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    autofree uint8_t *buf = brig_calloc(1, 1 << 20);
    uint64_t total = 0;
    for (;;) {
        ssize_t r = read(fd, buf, 1 << 20);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return brig_fail(err, errno, "read");
        if (r == 0) break;
        total += (uint64_t)r;
        if (total > max) return brig_failx(err, "larger than --max-size");
        sha256_update(&ctx, (size_t)r, buf);
    }
    if (want_size != UINT64_MAX && total != want_size)
        return brig_failx(err, "size %llu, the descriptor says %llu",
                          (unsigned long long)total, (unsigned long long)want_size);
    uint8_t d[BRIG_SHA256_LEN];
    char got[65];
    sha256_digest(&ctx, sizeof(d), d);
    brig_sha256_hex(d, got);
    if (strcmp(got, hex) != 0) return brig_failx(err, "digest mismatch: sha256:%s, expected sha256:%s", got, hex);
    if (lseek(fd, 0, SEEK_SET) < 0) return brig_fail(err, errno, "seek");
    return 0;
}

int src_read_verified(struct image_src *s, const char *name, const char *hex, size_t max,
                      char **out, size_t *len, struct brig_error **err)
{
    autoclose int fd = src_open_file(s, name, err);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "%s", name);
    if ((uint64_t)st.st_size > max) return brig_failx(err, "%s: larger than %zu bytes", name, max);
    autofree char *buf = brig_calloc(1, (size_t)st.st_size + 1);
    size_t n = 0;
    while (n < (size_t)st.st_size) {
        ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return brig_fail(err, errno, "read %s", name);
        if (r == 0) break;
        n += (size_t)r;
    }
    if (hex != NULL) {
        uint8_t d[BRIG_SHA256_LEN];
        char got[65];
        brig_sha256(buf, n, d);
        brig_sha256_hex(d, got);
        if (strcmp(got, hex) != 0)
            return brig_failx(err, "%s: digest mismatch: sha256:%s, expected sha256:%s", name, got, hex);
    }
    *out = steal_ptr(&buf);
    *len = n;
    return 0;
}
