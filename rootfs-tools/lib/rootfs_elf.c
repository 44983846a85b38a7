/* The files the dynamic loader opens to run an ELF program, read from the
 * ELF structures themselves (<elf.h>) through an fd: PT_INTERP, and the
 * DT_NEEDED closure searched as ld.so(8) searches it. Never by running
 * ldd: that executes the loader on the file, and a hostile file chooses
 * what runs. Every open is inside rootfd (openat2 RESOLVE_IN_ROOT), so a
 * symlink in a rootfs being verified cannot lead the search to the host. */
#include "rootfs.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../runtime/util/cleanup.h"
#include "../../runtime/util/fs.h"
#include "../../runtime/util/strutil.h"

#define ELF_MAX_PHDRS 512
#define ELF_MAX_TABLE (16u << 20)   /* a dynamic string table larger is refused */
#define ELF_MAX_DEPTH 64

struct rootfs_elf_ctx {
    int rootfd;
    int conf_reads;                 /* ld.so.conf files read: includes may loop */
    struct rootfs_strv dirs;        /* ld.so.conf's dirs, then the defaults */
};

/* What one object asks of the loader. */
struct elf_dyn {
    unsigned char class;
    uint16_t machine;
    char *interp;
    struct rootfs_strv needed, runpath, rpath;
};

static void elf_dyn_free(struct elf_dyn *d)
{
    free(d->interp);
    rootfs_strv_free(&d->needed);
    rootfs_strv_free(&d->runpath);
    rootfs_strv_free(&d->rpath);
}

static int elf_pread(int fd, void *buf, size_t len, uint64_t off)
{
    ssize_t n = pread(fd, buf, len, (off_t)off);
    return n == (ssize_t)len ? 0 : -1;
}

/* One program header in the widest form. */
struct elf_phdr { uint32_t type; uint64_t offset, vaddr, filesz; };

static int elf_read_phdrs(int fd, unsigned char class, const unsigned char *ehdr, struct elf_phdr **out,
                          size_t *n)
{
    uint64_t phoff;
    uint16_t phnum, phentsize;
    if (class == ELFCLASS64) {
        const Elf64_Ehdr *h = (const Elf64_Ehdr *)ehdr;
        phoff = h->e_phoff, phnum = h->e_phnum, phentsize = h->e_phentsize;
        if (phentsize != sizeof(Elf64_Phdr)) return -1;
    } else {
        const Elf32_Ehdr *h = (const Elf32_Ehdr *)ehdr;
        phoff = h->e_phoff, phnum = h->e_phnum, phentsize = h->e_phentsize;
        if (phentsize != sizeof(Elf32_Phdr)) return -1;
    }
    if (phnum > ELF_MAX_PHDRS) return -1;
    autofree unsigned char *raw = brig_calloc(phnum ? phnum : 1, phentsize);
    if (elf_pread(fd, raw, (size_t)phnum * phentsize, phoff) < 0) return -1;
    struct elf_phdr *p = brig_calloc(phnum ? phnum : 1, sizeof(*p));
    for (size_t i = 0; i < phnum; i++) {
        if (class == ELFCLASS64) {
            const Elf64_Phdr *ph = (const Elf64_Phdr *)(raw + i * phentsize);
            p[i] = (struct elf_phdr){ ph->p_type, ph->p_offset, ph->p_vaddr, ph->p_filesz };
        } else {
            const Elf32_Phdr *ph = (const Elf32_Phdr *)(raw + i * phentsize);
            p[i] = (struct elf_phdr){ ph->p_type, ph->p_offset, ph->p_vaddr, ph->p_filesz };
        }
    }
    *out = p;
    *n = phnum;
    return 0;
}

/* The file offset of a virtual address: through the PT_LOAD that maps it. */
static int elf_vaddr_offset(const struct elf_phdr *ph, size_t n, uint64_t vaddr, uint64_t *off)
{
    for (size_t i = 0; i < n; i++)
        if (ph[i].type == PT_LOAD && vaddr >= ph[i].vaddr && vaddr - ph[i].vaddr < ph[i].filesz) {
            *off = vaddr - ph[i].vaddr + ph[i].offset;
            return 0;
        }
    return -1;
}

/* Entry i of a dynamic section read raw, either class. */
static void elf_dyn_at(unsigned char class, const unsigned char *raw, size_t i, int64_t *tag, uint64_t *val)
{
    if (class == ELFCLASS64) {
        const Elf64_Dyn *d = (const Elf64_Dyn *)raw + i;
        *tag = d->d_tag, *val = d->d_un.d_val;
    } else {
        const Elf32_Dyn *d = (const Elf32_Dyn *)raw + i;
        *tag = d->d_tag, *val = d->d_un.d_val;
    }
}

static int elf_read_dynamic(int fd, unsigned char class, const struct elf_phdr *ph, size_t n,
                            const struct elf_phdr *dyn, struct elf_dyn *out)
{
    size_t entsize = class == ELFCLASS64 ? sizeof(Elf64_Dyn) : sizeof(Elf32_Dyn);
    if (dyn->filesz > ELF_MAX_TABLE) return -1;
    size_t count = (size_t)dyn->filesz / entsize;
    autofree unsigned char *raw = brig_calloc(count ? count : 1, entsize);
    if (elf_pread(fd, raw, count * entsize, dyn->offset) < 0) return -1;
    uint64_t strtab = 0, strsz = 0;
    bool have_strtab = false;
    for (size_t i = 0; i < count; i++) {
        int64_t tag;
        uint64_t val;
        elf_dyn_at(class, raw, i, &tag, &val);
        if (tag == DT_NULL) {
            count = i;
            break;
        }
        if (tag == DT_STRTAB) strtab = val, have_strtab = true;
        if (tag == DT_STRSZ) strsz = val;
    }
    if (!have_strtab || strsz == 0 || strsz > ELF_MAX_TABLE) return count == 0 ? 0 : -1;
    uint64_t stroff;
    if (elf_vaddr_offset(ph, n, strtab, &stroff) < 0) return -1;
    autofree char *str = brig_calloc(strsz + 1, 1);
    if (elf_pread(fd, str, strsz, stroff) < 0) return -1;
    for (size_t i = 0; i < count; i++) {
        int64_t tag;
        uint64_t val;
        elf_dyn_at(class, raw, i, &tag, &val);
        if (tag != DT_NEEDED && tag != DT_RUNPATH && tag != DT_RPATH) continue;
        if (val >= strsz) return -1;
        const char *s = str + val;      /* NUL-terminated: str has one more byte */
        if (tag == DT_NEEDED) rootfs_strv_add(&out->needed, s);
        else rootfs_strv_split(tag == DT_RUNPATH ? &out->runpath : &out->rpath, s, ":");
    }
    return 0;
}

int rootfs_elf_is_elf(int fd)
{
    unsigned char ident[EI_NIDENT];
    if (pread(fd, ident, sizeof(ident), 0) != (ssize_t)sizeof(ident)) return 0;
    return memcmp(ident, ELFMAG, SELFMAG) == 0;
}

/* 0 with *d filled (class 0: not an ELF file), -1: a malformed ELF. */
static int elf_read(int fd, struct elf_dyn *d)
{
    unsigned char ehdr[sizeof(Elf64_Ehdr)] = {0};
    ssize_t got = pread(fd, ehdr, sizeof(ehdr), 0);
    if (got < (ssize_t)sizeof(Elf32_Ehdr) || memcmp(ehdr, ELFMAG, SELFMAG) != 0) return 0;
    unsigned char class = ehdr[EI_CLASS];
    if (class != ELFCLASS32 && class != ELFCLASS64) return -1;
    if (class == ELFCLASS64 && got < (ssize_t)sizeof(Elf64_Ehdr)) return -1;
    /* Only the host's byte order: a foreign one cannot run here anyway. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (ehdr[EI_DATA] != ELFDATA2LSB) return -1;
#else
    if (ehdr[EI_DATA] != ELFDATA2MSB) return -1;
#endif
    d->class = class;
    d->machine = class == ELFCLASS64 ? ((Elf64_Ehdr *)ehdr)->e_machine : ((Elf32_Ehdr *)ehdr)->e_machine;
    autofree struct elf_phdr *ph = NULL;
    size_t n = 0;
    if (elf_read_phdrs(fd, class, ehdr, &ph, &n) < 0) return -1;
    for (size_t i = 0; i < n; i++) {
        if (ph[i].type == PT_INTERP && d->interp == NULL) {
            if (ph[i].filesz == 0 || ph[i].filesz > 4096) return -1;
            d->interp = brig_calloc(ph[i].filesz + 1, 1);
            if (elf_pread(fd, d->interp, ph[i].filesz, ph[i].offset) < 0) return -1;
        }
        if (ph[i].type == PT_DYNAMIC && elf_read_dynamic(fd, class, ph, n, &ph[i], d) < 0) return -1;
    }
    return 0;
}

int rootfs_script_interp(int fd, char **interp)
{
    *interp = NULL;
    char buf[256];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n < 3 || buf[0] != '#' || buf[1] != '!') return 0;
    buf[n] = '\0';
    char *p = buf + 2;
    p += strspn(p, " \t");
    size_t len = strcspn(p, " \t\n");
    if (len == 0 || p[0] != '/' || p[len] == '\0') return 0;     /* cut off: not a usable line */
    *interp = strndup(p, len);
    return 0;
}

/* A regular file inside the root, opened for reading; never a fifo or device. */
static int elf_open(int rootfd, const char *path)
{
    autoclose int fd = brig_open_in_root(rootfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0, NULL);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) return -1;
    return steal_fd(&fd);
}

static int elf_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ld.so.conf: dir lines and "include GLOB" (globs on the last component). */
static void elf_conf_read(struct rootfs_elf_ctx *c, const char *path, int depth)
{
    /* a rootfs being verified is hostile: includes that include each other
     * must not make the reads grow as N^depth */
    if (depth > 8 || ++c->conf_reads > 256) return;
    autoclose int fd = elf_open(c->rootfd, path);
    if (fd < 0) return;
    autofree char *text = brig_calloc(1u << 16, 1);
    ssize_t n = pread(fd, text, (1u << 16) - 1, 0);
    if (n < 0) return;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        line += strspn(line, " \t");
        if (strncmp(line, "include", 7) == 0 && (line[7] == ' ' || line[7] == '\t')) {
            char *pat = line + 8 + strspn(line + 8, " \t");
            pat[strcspn(pat, " \t")] = '\0';
            autofree char *dir = pat[0] == '/' ? brig_strdup(pat) : brig_asprintf("/etc/%s", pat);
            char *slash = strrchr(dir, '/');
            *slash = '\0';
            const char *glob = slash + 1;
            autoclose int dfd = brig_open_in_root(c->rootfd, dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY, 0, NULL);
            DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
            if (d == NULL) continue;
            dfd = -1;
            struct rootfs_strv names = {0};
            for (struct dirent *e; (e = readdir(d)) != NULL;)
                if (e->d_name[0] != '.' && fnmatch(glob, e->d_name, 0) == 0) rootfs_strv_add(&names, e->d_name);
            closedir(d);
            qsort(names.v, names.n, sizeof(char *), elf_cmp_str);
            for (size_t i = 0; i < names.n; i++) {
                autofree char *sub = brig_asprintf("%s/%s", dir, names.v[i]);
                elf_conf_read(c, sub, depth + 1);
            }
            rootfs_strv_free(&names);
            continue;
        }
        if (strncmp(line, "hwcap", 5) == 0) continue;
        char *s2 = NULL;
        for (char *dir = strtok_r(line, " \t:,", &s2); dir; dir = strtok_r(NULL, " \t:,", &s2))
            if (dir[0] == '/') rootfs_strv_add_new(&c->dirs, dir);
    }
}

int rootfs_elf_ctx_new(int rootfd, struct rootfs_elf_ctx **out, struct brig_error **err)
{
    struct rootfs_elf_ctx *c = brig_calloc(1, sizeof(*c));
    c->rootfd = rootfd;
    elf_conf_read(c, "/etc/ld.so.conf", 0);
    /* ld.so's built-in system search path comes after the configured
     * dirs; a rootfs without ld.so.conf (from-host copies none) has only it. */
#if defined(__x86_64__)
#define ELF_TRIPLET "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define ELF_TRIPLET "aarch64-linux-gnu"
#else
#define ELF_TRIPLET "unknown-linux-gnu"
#endif
    static const char *const defaults[] = { "/lib/" ELF_TRIPLET, "/usr/lib/" ELF_TRIPLET, "/lib64", "/usr/lib64",
                                            "/lib", "/usr/lib" };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(defaults); i++) rootfs_strv_add_new(&c->dirs, defaults[i]);
    *out = c;
    (void)err;
    return 0;
}

void rootfs_elf_ctx_free(struct rootfs_elf_ctx *c)
{
    if (c == NULL) return;
    rootfs_strv_free(&c->dirs);
    free(c);
}

/* $ORIGIN (and ${ORIGIN}) is the directory of the object asking. */
static char *elf_expand_origin(const char *dir, const char *obj)
{
    autofree char *origin = brig_strdup(obj);
    char *slash = strrchr(origin, '/');
    if (slash == origin) slash[1] = '\0';
    else if (slash) *slash = '\0';
    const char *tok = strstr(dir, "$ORIGIN") ? "$ORIGIN" : strstr(dir, "${ORIGIN}") ? "${ORIGIN}" : NULL;
    if (tok == NULL) return brig_strdup(dir);
    const char *at = strstr(dir, tok);
    return brig_asprintf("%.*s%s%s", (int)(at - dir), dir, origin, at + strlen(tok));
}

/* ld.so skips a library of another class or machine (lib32 beside lib). */
static bool elf_fits(int fd, const struct elf_dyn *d)
{
    unsigned char ehdr[sizeof(Elf32_Ehdr)];
    if (pread(fd, ehdr, sizeof(ehdr), 0) != (ssize_t)sizeof(ehdr) || memcmp(ehdr, ELFMAG, SELFMAG) != 0)
        return false;
    uint16_t machine = ((Elf32_Ehdr *)ehdr)->e_machine;     /* same offset in both classes */
    return ehdr[EI_CLASS] == d->class && machine == d->machine;
}

/* The first dir holding an ELF of the same class and machine named name. */
static char *elf_search(struct rootfs_elf_ctx *c, const struct elf_dyn *d, const char *obj, const char *name)
{
    const struct rootfs_strv *lists[3] = { d->runpath.n == 0 ? &d->rpath : NULL, &d->runpath, &c->dirs };
    for (size_t l = 0; l < 3; l++) {
        for (size_t i = 0; lists[l] && i < lists[l]->n; i++) {
            autofree char *dir = elf_expand_origin(lists[l]->v[i], obj);
            if (dir[0] != '/') continue;        /* a relative RPATH means the cwd: never trusted */
            autofree char *path = brig_asprintf("%s/%s", strcmp(dir, "/") ? dir : "", name);
            autoclose int fd = elf_open(c->rootfd, path);
            if (fd >= 0 && elf_fits(fd, d)) return steal_ptr(&path);
        }
    }
    return NULL;
}

static int elf_walk(struct rootfs_elf_ctx *c, const char *path, struct rootfs_strv *out,
                    struct rootfs_strv *missing, int depth, struct brig_error **err)
{
    if (depth > ELF_MAX_DEPTH) return brig_failx(err, "%s: libraries nested deeper than %d", path, ELF_MAX_DEPTH);
    autoclose int fd = elf_open(c->rootfd, path);
    if (fd < 0) return brig_fail(err, errno ? errno : ENOENT, "%s: not a regular file", path);
    struct elf_dyn d = {0};
    if (elf_read(fd, &d) < 0) {
        elf_dyn_free(&d);
        return brig_failx(err, "%s: malformed ELF (program or dynamic headers out of bounds)", path);
    }
    int rc = 0;
    autoclose int ifd = d.interp && d.interp[0] == '/' && missing ? elf_open(c->rootfd, d.interp) : -1;
    if (d.interp && d.interp[0] == '/' && missing && ifd < 0) {
        autofree char *m = brig_asprintf("interpreter %s (needed by %s)", d.interp, path);
        rootfs_strv_add_new(missing, m);
    } else if (d.interp != NULL && d.interp[0] == '/' && rootfs_strv_add_new(out, d.interp)) {
        rc = elf_walk(c, d.interp, out, missing, depth + 1, err);
    }
    for (size_t i = 0; rc == 0 && i < d.needed.n; i++) {
        const char *name = d.needed.v[i];
        autofree char *found = strchr(name, '/') ? brig_strdup(name) : elf_search(c, &d, path, name);
        if (found == NULL) {
            if (missing == NULL) {
                rc = brig_failx(err, "%s: library %s not found (DT_NEEDED; searched its RUNPATH, ld.so.conf "
                                "and the default dirs)", path, name);
                break;
            }
            autofree char *m = brig_asprintf("%s (needed by %s)", name, path);
            rootfs_strv_add_new(missing, m);
            continue;
        }
        if (rootfs_strv_add_new(out, found)) rc = elf_walk(c, found, out, missing, depth + 1, err);
    }
    elf_dyn_free(&d);
    return rc;
}

int rootfs_elf_closure(struct rootfs_elf_ctx *c, const char *path, struct rootfs_strv *out,
                       struct rootfs_strv *missing, struct brig_error **err)
{
    return elf_walk(c, path, out, missing, 0, err);
}
