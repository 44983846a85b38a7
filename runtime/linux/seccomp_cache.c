/* The seccomp BPF cache (docs/performance.md). Entries live in
 * <state root>/.seccomp-cache/<sha256 of the key>; the key is a canonical
 * serialisation of the parsed seccomp section plus everything else the
 * compiled program depends on (this brig binary, libseccomp's version, the
 * native arch, the kernel). A file holds:
 *     header | SHA-256 of the key | BPF instructions | SHA-256 of all that
 * and is used only if it is ours (owner, mode), has the exact expected
 * size, magic and key digest, and its checksum matches. The key's digest
 * stands for the key (the key itself, ~10 KB for Docker's profile, hashed
 * once more per load cost as much again: docs/performance.md). */
#include "seccomp_cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "brig-config.h"
#include "brig-commit.h"
#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/sha256.h"
#include "../util/strutil.h"
#include "exe_seal.h"

#define CACHE_DIR ".seccomp-cache"
#define CACHE_MAGIC "BRIGBPF2"
#define CACHE_MAX_INSNS 4096            /* BPF_MAXINSNS */
#define CACHE_MAX_KEY (4u << 20)
#define CACHE_MAX_ENTRIES 128           /* past this the directory is emptied */
#define CACHE_TMP_STALE_S 60            /* a store's temp file older than this is left over */

struct cache_hdr {
    char magic[8];
    uint32_t key_len;
    uint32_t n_insns;
    uint32_t flags;
    uint32_t notify;
};

struct buf {
    unsigned char *p;
    size_t len, cap;
};

static void buf_put(struct buf *b, const void *data, size_t n)
{
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (p == NULL) abort();
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

/* LEB128: self-delimiting, so the serialisation stays one-to-one, and a
 * name's length takes one byte instead of eight (the key, hashed on every
 * load, is half the size: ~400 names in Docker's profile). */
static void buf_u64(struct buf *b, uint64_t v)
{
    unsigned char out[10];
    size_t n = 0;
    do {
        out[n] = (unsigned char)(v & 0x7f);
        v >>= 7;
        if (v != 0) out[n] |= 0x80;
        n++;
    } while (v != 0);
    buf_put(b, out, n);
}

/* Length-prefixed, so that no two different inputs serialise alike. */
static void buf_str(struct buf *b, const char *s)
{
    if (s == NULL) {
        buf_u64(b, UINT64_MAX);
        return;
    }
    size_t n = strlen(s);
    buf_u64(b, n);
    buf_put(b, s, n);
}

static void buf_strv(struct buf *b, char **v, size_t n)
{
    buf_u64(b, n);
    for (size_t i = 0; i < n; i++) buf_str(b, v[i]);
}

/* What the compiled program depends on besides the section itself. A
 * rebuilt brig (another seccomp.c) is a different executable file. */
static void key_environment(struct buf *b)
{
    buf_str(b, "brig seccomp cache 2");
    buf_str(b, BRIG_VERSION);
    buf_str(b, BRIG_COMMIT);
    /* The binary on disk, not the sealed memfd copy we run from (a new
     * inode every time: exe_seal.h). */
    struct stat st;
    if (exe_seal_origin(&st) == 0) {
        buf_u64(b, st.st_dev);
        buf_u64(b, st.st_ino);
        buf_u64(b, (uint64_t)st.st_size);
        buf_u64(b, (uint64_t)st.st_mtim.tv_sec);
        buf_u64(b, (uint64_t)st.st_mtim.tv_nsec);
    } else {
        buf_u64(b, 0);
    }
    const struct scmp_version *v = seccomp_version();
    buf_u64(b, v ? v->major : 0);
    buf_u64(b, v ? v->minor : 0);
    buf_u64(b, v ? v->micro : 0);
    /* Not seccomp_api_get(): it probes the kernel with ~9 syscalls on every
     * create, and the kernel it depends on is in the key below. */
    buf_u64(b, seccomp_arch_native());
    struct utsname u;
    if (uname(&u) == 0) {
        buf_str(b, u.release);
        buf_str(b, u.version);
        buf_str(b, u.machine);
    }
}

unsigned char *seccomp_cache_key(const struct brig_seccomp *sc, size_t *len)
{
    struct buf b = {0};
    key_environment(&b);
    buf_u64(&b, sc->default_action);
    buf_u64(&b, sc->has_default_errno_ret);
    buf_u64(&b, sc->default_errno_ret);
    buf_strv(&b, sc->architectures, sc->n_architectures);
    buf_strv(&b, sc->flags, sc->n_flags);
    buf_str(&b, sc->listener_path);
    buf_str(&b, sc->listener_metadata);
    buf_u64(&b, sc->n_syscalls);
    for (size_t i = 0; i < sc->n_syscalls; i++) {
        const struct brig_seccomp_rule *r = &sc->syscalls[i];
        buf_strv(&b, r->names, r->n_names);
        buf_u64(&b, r->action);
        buf_u64(&b, r->has_errno_ret);
        buf_u64(&b, r->errno_ret);
        buf_u64(&b, r->n_args);
        for (size_t k = 0; k < r->n_args; k++) {
            buf_u64(&b, r->args[k].index);
            buf_u64(&b, r->args[k].value);
            buf_u64(&b, r->args[k].value_two);
            buf_u64(&b, r->args[k].op);
        }
    }
    *len = b.len;
    return b.p;
}

/* Files and directories of the cache must be ours: geteuid() read once. */
static uid_t cache_owner(void)
{
    static uid_t euid = (uid_t)-1;
    if (euid == (uid_t)-1) euid = geteuid();
    return euid;
}

/* The state root and the cache directory hold what the container runs
 * under: only directories that are ours and not writable by others. */
static bool cache_dir_trusted(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == cache_owner() &&
           !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* For a lookup the cache directory is opened directly: it and every entry
 * are checked to be ours and writable by nobody else, which nobody but us
 * can fake, so who may write to the state root does not matter for a hit.
 * Storing (create) checks the root too before making the directory. */
static int cache_open_dir(const char *root, bool create)
{
    if (!create) {
        autofree char *path = brig_asprintf("%s/%s", root, CACHE_DIR);
        autoclose int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || !cache_dir_trusted(fd)) return -1;
        return steal_fd(&fd);
    }
    autoclose int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (rootfd < 0 || !cache_dir_trusted(rootfd)) return -1;
    if (mkdirat(rootfd, CACHE_DIR, 0700) < 0 && errno != EEXIST) return -1;
    autoclose int fd = openat(rootfd, CACHE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || !cache_dir_trusted(fd)) return -1;
    return steal_fd(&fd);
}

static bool read_all(int fd, void *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = read(fd, (char *)p + done, n - done);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        done += (size_t)r;
    }
    return true;
}

/* NULL when the entry is missing or not exactly what we would compile. */
static struct brig_bpf *cache_load(int dirfd, const char *name, const unsigned char *key,
                                   size_t key_len)
{
    autoclose int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != cache_owner() ||
        (st.st_mode & (S_IWGRP | S_IWOTH))) {
        brig_debug("seccomp cache: %s is not ours, ignored", name);
        return NULL;
    }
    size_t fixed = sizeof(struct cache_hdr) + key_len + BRIG_SHA256_LEN;
    if ((size_t)st.st_size < fixed + sizeof(struct sock_filter) ||
        (size_t)st.st_size > fixed + CACHE_MAX_INSNS * sizeof(struct sock_filter)) {
        brig_debug("seccomp cache: %s has a bad size, ignored", name);
        return NULL;
    }
    size_t size = (size_t)st.st_size;
    autofree unsigned char *data = malloc(size);
    if (data == NULL || !read_all(fd, data, size)) return NULL;
    struct cache_hdr h;
    memcpy(&h, data, sizeof(h));
    size_t insns_len = size - fixed;
    uint8_t sum[BRIG_SHA256_LEN];
    brig_sha256(data, size - BRIG_SHA256_LEN, sum);
    if (memcmp(h.magic, CACHE_MAGIC, sizeof(h.magic)) != 0 || h.key_len != key_len ||
        h.n_insns == 0 || h.n_insns > CACHE_MAX_INSNS ||
        (size_t)h.n_insns * sizeof(struct sock_filter) != insns_len || h.notify > 1 ||
        memcmp(data + sizeof(h), key, key_len) != 0 ||
        memcmp(data + size - BRIG_SHA256_LEN, sum, sizeof(sum)) != 0) {
        brig_debug("seccomp cache: %s does not match (magic, key, size or checksum), ignored", name);
        return NULL;
    }
    struct brig_bpf *bpf = brig_calloc(1, sizeof(*bpf));
    bpf->n_insns = h.n_insns;
    bpf->flags = h.flags;
    bpf->notify = h.notify != 0;
    bpf->insns = brig_calloc(h.n_insns, sizeof(struct sock_filter));
    memcpy(bpf->insns, data + sizeof(h) + key_len, insns_len);
    return bpf;
}

/* Keep the directory bounded: configs that change all the time (a new
 * profile per container) must not fill /run. Emptying it is simple and
 * only costs one compile per profile in use. */
static void cache_prune(int dirfd)
{
    autoclose int fd = dup(dirfd);
    if (fd < 0) return;
    DIR *d = fdopendir(fd);
    if (d == NULL) return;
    steal_fd(&fd);
    size_t n = 0;
    struct dirent *de;
    time_t now = time(NULL);
    while ((de = readdir(d)) != NULL) {
        n += de->d_name[0] != '.';
        /* A brig killed while storing leaves its ".NAME.tmpPID": once it is
         * too old to belong to a store in progress, it is ours to remove. */
        struct stat st;
        if (de->d_name[0] == '.' && strstr(de->d_name, ".tmp") != NULL &&
            fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
            st.st_mtime < now - CACHE_TMP_STALE_S)
            unlinkat(dirfd, de->d_name, 0);
    }
    if (n >= CACHE_MAX_ENTRIES) {
        rewinddir(d);
        while ((de = readdir(d)) != NULL)
            if (de->d_type == DT_REG) unlinkat(dirfd, de->d_name, 0);
        brig_debug("seccomp cache: %zu entries, emptied", n);
    }
    closedir(d);
}

static void cache_store(const char *root, const char *name, const unsigned char *key,
                        size_t key_len, const struct brig_bpf *bpf)
{
    autoclose int dirfd = cache_open_dir(root, true);
    if (dirfd < 0) {
        brig_debug("seccomp cache: no usable %s/%s, not stored", root, CACHE_DIR);
        return;
    }
    cache_prune(dirfd);
    struct cache_hdr h = { .key_len = (uint32_t)key_len, .n_insns = (uint32_t)bpf->n_insns,
                           .flags = bpf->flags, .notify = bpf->notify };
    memcpy(h.magic, CACHE_MAGIC, sizeof(h.magic));
    struct buf b = {0};
    buf_put(&b, &h, sizeof(h));
    buf_put(&b, key, key_len);
    buf_put(&b, bpf->insns, bpf->n_insns * sizeof(struct sock_filter));
    uint8_t sum[BRIG_SHA256_LEN];
    brig_sha256(b.p, b.len, sum);
    buf_put(&b, sum, sizeof(sum));
    autoerr struct brig_error *e = NULL;
    if (brig_write_file_atomic(dirfd, name, b.p, b.len, 0600, &e) < 0)
        brig_debug("seccomp cache: store %s: %s", name, e->msg);
    else
        brig_debug("seccomp cache: stored %s (%zu instructions)", name, bpf->n_insns);
    free(b.p);
}

int seccomp_compile_cached(const struct brig_seccomp *sc, const char *state_root,
                           struct brig_bpf **out, struct brig_error **err)
{
    if (state_root == NULL || state_root[0] != '/') return seccomp_compile(sc, out, err);
    size_t key_len = 0;
    autofree unsigned char *key = seccomp_cache_key(sc, &key_len);
    if (key_len > CACHE_MAX_KEY) return seccomp_compile(sc, out, err);
    uint8_t digest[BRIG_SHA256_LEN];
    char name[2 * BRIG_SHA256_LEN + 1];
    brig_sha256(key, key_len, digest);
    brig_sha256_hex(digest, name);

    autoclose int dirfd = cache_open_dir(state_root, false);
    if (dirfd >= 0) {
        struct brig_bpf *bpf = cache_load(dirfd, name, digest, sizeof(digest));
        if (bpf != NULL) {
            brig_debug("seccomp cache: hit %s (%zu instructions)", name, bpf->n_insns);
            *out = bpf;
            return 0;
        }
    }
    brig_debug("seccomp cache: miss %s", name);
    TRY(seccomp_compile(sc, out, err));
    cache_store(state_root, name, digest, sizeof(digest), *out);
    return 0;
}
