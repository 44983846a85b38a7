/* brig-rootfs from-host: a runner rootfs from the host's own programs.
 *
 * The plan first (which host paths, with every symlink on the way kept as
 * a symlink, plus each ELF's interpreter and library closure and each
 * script's #! interpreter), then the tree, built in sorted order into a
 * fresh temp dir beside DEST through fds (mkdirat/openat O_EXCL|O_NOFOLLOW
 * under the temp dir's fd: nothing planted in DEST or beside it can
 * redirect a write), then renamed onto DEST. Same inputs, same tree: the
 * order is sorted, owners are fixed (root, /workspace 1000), directories,
 * symlinks and generated files get a fixed mtime (SOURCE_DATE_EPOCH or 0)
 * and copied files keep the host file's (python's .pyc caches compare it).
 *
 * "python3" means the interpreter plus its standard library directory
 * (/usr/lib/python3.X, without test suites, GUI and build-config dirs) and
 * the libraries of its extension modules; site and dist-packages are not
 * copied: a runner lists what it needs. "git" means git plus its helpers
 * (/usr/lib/git-core) and templates (/usr/share/git-core). Groups of
 * programs are rootfs_host_tools.c's; "ca-certificates" is the host's CA
 * bundle (with python3, pip, curl, git, node too).
 *
 * A host path that is not an executable is data: a file, or a directory
 * copied whole, walked by fds (openat O_NOFOLLOW from its parent's fd):
 * its symlinks are copied as symlinks and never followed, so one pointing
 * out of it brings nothing of the host along; its files get no libraries
 * or interpreters (an ELF's DT_NEEDED and RPATH are the file's author's to
 * choose); a file with other hard links not owned by the directory's owner
 * is refused (someone else's file linked in, where protected_hardlinks is
 * off). */
#include "rootfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../runtime/util/cleanup.h"
#include "../../runtime/util/fs.h"
#include "../../runtime/util/strutil.h"

#define HOST_PATH "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"
#define HOST_MAX_LINKS 40

/* The host's CA store as its TLS libraries read it: the bundle, and
 * OpenSSL's own names for it (its default CAfile and CApath). Not the
 * hashed links beside the bundle (one per CA, ~290 entries): the tools
 * this is for (OpenSSL, GnuTLS, python's ssl, curl, git, pip, node) all
 * read the bundle. */
#define HOST_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
static const char *const host_ca_links[] = { "/usr/lib/ssl/cert.pem", "/usr/lib/ssl/certs", NULL };
/* Beside coreutils' programs: stdbuf's preload library. */
#define HOST_STDBUF_LIB "/usr/libexec/coreutils/libstdbuf.so"
/* Not copied from a python stdlib: test suites, GUI, build config. */
static const char *const host_python_skip[] = {
    "test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "site-packages", "dist-packages", NULL,
};

struct host_entry {
    char *path;                     /* in the tree, and on the host for copies */
    char type;                      /* 'd', 'f', 'l', 'g' (generated file) */
    mode_t mode;
    uid_t uid; gid_t gid;
    char *target;                   /* 'l' */
    const char *content;            /* 'g' */
    dev_t dev; ino_t ino;           /* 'f': the host file, for hard links */
    struct timespec mtime;
    bool deps_done;
    bool tool;                      /* named by --with: its #! interpreter is copied too */
};

struct host_plan {
    int hostfd;
    struct host_entry **e;
    size_t n, cap;
    void *index;                    /* tsearch tree of entries by path */
    struct rootfs_elf_ctx *elf;
    struct timespec epoch;
    uint64_t bytes;                 /* copied so far */
    const struct rootfs_progress *progress;
};

static void free_nothing(void *p)
{
    (void)p;
}

static int host_cmp(const void *a, const void *b)
{
    return strcmp(((const struct host_entry *)a)->path, ((const struct host_entry *)b)->path);
}

static struct host_entry *host_find(struct host_plan *p, const char *path)
{
    struct host_entry key = { .path = (char *)path };
    void *r = tfind(&key, &p->index, host_cmp);
    return r ? *(struct host_entry **)r : NULL;
}

/* The entry at path, new or the one planned already (a second kind at the
 * same path, e.g. a file where a dir was planned, is a conflict). */
static int host_plan_add(struct host_plan *p, const char *path, char type, struct host_entry **out,
                         struct brig_error **err)
{
    struct host_entry *old = host_find(p, path);
    if (old) {
        if (old->type != type) return brig_failx(err, "%s: planned both as %c and %c", path, old->type, type);
        *out = NULL;
        return 0;
    }
    struct host_entry *e = brig_calloc(1, sizeof(*e));
    e->path = brig_strdup(path);
    e->type = type;
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 512;
        p->e = realloc(p->e, p->cap * sizeof(*p->e));
        if (p->e == NULL) abort();
    }
    p->e[p->n++] = e;
    if (tsearch(e, &p->index, host_cmp) == NULL) abort();
    *out = e;
    return 0;
}

static void host_set_stat(struct host_entry *e, const struct stat *st)
{
    e->mode = st->st_mode & 0777;   /* never setuid, setgid or sticky from the host */
    e->dev = st->st_dev;
    e->ino = st->st_ino;
    e->mtime = st->st_mtim;
}

/* A host path into the plan: every directory, every symlink on the way
 * (kept as a symlink, its target followed) and the file at the end. The
 * final path (symlinks resolved) into *real when real != NULL. */
static int host_add_path(struct host_plan *p, const char *path, char **real, struct brig_error **err)
{
    autofree char *todo = brig_strdup(path);
    char cur[PATH_MAX] = "";
    int links = 0;
    for (char *rest = todo;;) {
        while (*rest == '/') rest++;
        if (*rest == '\0') break;
        size_t len = strcspn(rest, "/");
        char comp[NAME_MAX + 1];
        if (len > NAME_MAX) return brig_failx(err, "%s: a name longer than %d bytes", path, NAME_MAX);
        memcpy(comp, rest, len);
        comp[len] = '\0';
        rest += len;
        if (strcmp(comp, ".") == 0) continue;
        if (strcmp(comp, "..") == 0) {
            char *slash = strrchr(cur, '/');
            if (slash) *slash = '\0';
            continue;
        }
        char next[PATH_MAX];
        if ((size_t)snprintf(next, sizeof(next), "%s/%s", cur, comp) >= sizeof(next))
            return brig_failx(err, "%s: path too long", path);
        struct stat st;
        if (fstatat(p->hostfd, next + 1, &st, AT_SYMLINK_NOFOLLOW) < 0) return brig_fail(err, errno, "host %s", next);
        struct host_entry *e = NULL;
        if (S_ISDIR(st.st_mode)) {
            TRY(host_plan_add(p, next, 'd', &e, err));
            if (e) host_set_stat(e, &st);
        } else if (S_ISLNK(st.st_mode)) {
            if (++links > HOST_MAX_LINKS) return brig_failx(err, "host %s: too many levels of symlinks", path);
            char target[PATH_MAX];
            ssize_t n = readlinkat(p->hostfd, next + 1, target, sizeof(target) - 1);
            if (n < 0) return brig_fail(err, errno, "host %s: readlink", next);
            target[n] = '\0';
            TRY(host_plan_add(p, next, 'l', &e, err));
            if (e) e->target = brig_strdup(target);
            /* go on from the link's directory (or the root) with its target */
            autofree char *joined = brig_asprintf("%s/%s", target, rest);
            free(todo);
            todo = steal_ptr(&joined);
            rest = todo;
            if (target[0] == '/') cur[0] = '\0';
            continue;
        } else if (S_ISREG(st.st_mode)) {
            if (rest[strspn(rest, "/")] != '\0') return brig_fail(err, ENOTDIR, "host %s", next);
            TRY(host_plan_add(p, next, 'f', &e, err));
            if (e) host_set_stat(e, &st);
        } else {
            return brig_failx(err, "host %s: not a regular file, directory or symlink", next);
        }
        memcpy(cur, next, strlen(next) + 1);
    }
    if (real) *real = brig_strdup(cur[0] ? cur : "/");
    return 0;
}

static bool host_skipped(const char *name, const char *const *skip)
{
    for (const char *const *k = skip; k && *k; k++)
        if (strcmp(name, *k) == 0) return true;
    /* python's config-3.X-<triplet>: the static library and makefiles for embedding */
    return skip == host_python_skip && strncmp(name, "config-", 7) == 0;
}

/* A whole directory (a stdlib): everything under it, symlinks kept. */
static int host_add_tree(struct host_plan *p, const char *dir, const char *const *skip, int depth,
                         struct brig_error **err)
{
    if (depth > 64) return brig_failx(err, "host %s: nested too deep", dir);
    autoclose int fd = openat(p->hostfd, dir + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "host %s", dir);
    DIR *d = fdopendir(fd);
    if (d == NULL) return brig_fail(err, errno, "host %s", dir);
    fd = -1;
    struct rootfs_strv names = {0};
    for (struct dirent *de; (de = readdir(d)) != NULL;)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && !host_skipped(de->d_name, skip))
            rootfs_strv_add(&names, de->d_name);
    closedir(d);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < names.n; i++) {
        autofree char *child = brig_asprintf("%s/%s", dir, names.v[i]);
        struct stat st;
        if (fstatat(p->hostfd, child + 1, &st, AT_SYMLINK_NOFOLLOW) < 0) continue;
        if (S_ISDIR(st.st_mode)) {
            struct host_entry *e;
            rc = host_plan_add(p, child, 'd', &e, err);
            if (rc == 0 && e) host_set_stat(e, &st);
            if (rc == 0) rc = host_add_tree(p, child, skip, depth + 1, err);
        } else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
            rc = host_add_path(p, child, NULL, err);
        }
    }
    rootfs_strv_free(&names);
    return rc;
}

/* A tool name: a host path, or found in the fixed PATH (not the caller's:
 * the same inputs give the same tree). */
static int host_find_tool(struct host_plan *p, const char *name, char **out)
{
    if (strchr(name, '/')) {
        *out = brig_strdup(name);
        return faccessat(p->hostfd, name[0] == '/' ? name + 1 : name, X_OK, 0) == 0 ? 0 : -1;
    }
    autofree char *dirs = brig_strdup(HOST_PATH);
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        autofree char *path = brig_asprintf("%s/%s", d, name);
        struct stat st;
        if (fstatat(p->hostfd, path + 1, &st, 0) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111)) {
            *out = steal_ptr(&path);
            return 0;
        }
    }
    return -1;
}

/* python3 (and python3.X): the interpreter plus /usr/lib/python3.X. */
static int host_add_tool(struct host_plan *p, const char *name, bool required, struct brig_error **err)
{
    autofree char *path = NULL;
    if (host_find_tool(p, name, &path) < 0) {
        if (!required) return 0;
        return brig_failx(err, "--with %s: no such executable on the host (searched %s)", name, HOST_PATH);
    }
    autofree char *real = NULL;
    TRY(host_add_path(p, path, &real, err));
    struct host_entry *e = host_find(p, real);
    if (e) e->tool = true;
    const char *base = strrchr(real, '/') + 1;
    /* git: its helpers (git-core, hard links to git kept as links) and templates */
    static const char *const git_dirs[] = { "/usr/lib/git-core", "/usr/share/git-core" };
    for (size_t i = 0; strcmp(base, "git") == 0 && i < BRIG_ARRAY_SIZE(git_dirs); i++) {
        struct stat st;
        if (fstatat(p->hostfd, git_dirs[i] + 1, &st, 0) < 0 || !S_ISDIR(st.st_mode)) continue;
        TRY(host_add_path(p, git_dirs[i], NULL, err));
        TRY(host_add_tree(p, git_dirs[i], NULL, 0, err));
    }
    if (strncmp(base, "python3", 7) == 0) {
        const char *ver = base + strlen("python");          /* "3.11" */
        size_t vl = strspn(ver, "0123456789.");
        autofree char *lib = brig_asprintf("/usr/lib/python%.*s", (int)vl, ver);
        struct stat st;
        if (vl < 3 || fstatat(p->hostfd, lib + 1, &st, 0) < 0 || !S_ISDIR(st.st_mode))
            return brig_failx(err, "--with %s: its standard library %s is not on the host", name, lib);
        TRY(host_add_path(p, lib, NULL, err));
        TRY(host_add_tree(p, lib, host_python_skip, 0, err));
    }
    return 0;
}

/* One entry of a data directory, by its parent's fd: never followed. */
static int host_data_entry(struct host_plan *p, int dfd, const char *path, const char *name, uid_t owner,
                           int depth, struct brig_error **err);

/* A data directory's entries (dfd, at path), sorted by the plan later. */
static int host_data_dir(struct host_plan *p, int dfd, const char *path, uid_t owner, int depth,
                         struct brig_error **err)
{
    if (depth > 64) return brig_failx(err, "--with %s: nested too deep", path);
    int dup_fd = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (d == NULL) {
        if (dup_fd >= 0) close(dup_fd);
        return brig_fail(err, errno, "--with %s", path);
    }
    struct rootfs_strv names = {0};
    for (struct dirent *de; (de = readdir(d)) != NULL;)
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) rootfs_strv_add(&names, de->d_name);
    closedir(d);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < names.n; i++)
        rc = host_data_entry(p, dfd, path, names.v[i], owner, depth, err);
    rootfs_strv_free(&names);
    return rc;
}

static int host_data_entry(struct host_plan *p, int dfd, const char *path, const char *name, uid_t owner,
                           int depth, struct brig_error **err)
{
    autofree char *child = brig_asprintf("%s/%s", path, name);
    if (strlen(child) >= PATH_MAX) return brig_failx(err, "--with %s: path too long", child);
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) return brig_fail(err, errno, "--with %s", child);
    struct host_entry *e = NULL;
    if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);
        if (n < 0) return brig_fail(err, errno, "--with %s: readlink", child);
        target[n] = '\0';
        TRY(host_plan_add(p, child, 'l', &e, err));
        if (e) e->target = brig_strdup(target);
        return 0;
    }
    if (S_ISREG(st.st_mode)) {
        if (st.st_nlink > 1 && st.st_uid != owner)
            return brig_failx(err, "--with %s: a file with %ju links owned by uid %u, not the directory's owner "
                              "(%u): refused (someone else's file may be linked in)", child,
                              (uintmax_t)st.st_nlink, (unsigned)st.st_uid, (unsigned)owner);
        TRY(host_plan_add(p, child, 'f', &e, err));
        if (e) {
            host_set_stat(e, &st);
            e->deps_done = true;            /* data: no libraries for it */
        }
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) return 0;     /* devices, fifos, sockets: not copied */
    TRY(host_plan_add(p, child, 'd', &e, err));
    if (e) host_set_stat(e, &st);
    autoclose int sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) return brig_fail(err, errno, "--with %s", child);
    return host_data_dir(p, sub, child, owner, depth + 1, err);
}

/* --with PATH: an executable is a tool (its libraries, its #! interpreter);
 * any other file, or a directory and all it holds, is data. */
static int host_add_given(struct host_plan *p, const char *path, struct brig_error **err)
{
    if (path[0] != '/') return brig_failx(err, "--with %s: a host path must be absolute", path);
    struct stat st;
    if (fstatat(p->hostfd, path + 1, &st, 0) < 0) return brig_fail(err, errno, "--with %s", path);
    if (S_ISREG(st.st_mode) && (st.st_mode & 0111)) return host_add_tool(p, path, true, err);
    autofree char *real = NULL;
    TRY(host_add_path(p, path, &real, err));        /* the path and its links */
    if (S_ISREG(st.st_mode)) {
        struct host_entry *e = host_find(p, real);
        if (e) e->deps_done = true;
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) return brig_failx(err, "--with %s: not a file or a directory", path);
    autoclose int dfd = openat(p->hostfd, real + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat ds;
    if (dfd < 0 || fstat(dfd, &ds) < 0) return brig_fail(err, errno, "--with %s", path);
    return host_data_dir(p, dfd, real, ds.st_uid, 0, err);
}

/* The host's CA store; required: named by --with, else only if present. */
static int host_add_ca(struct host_plan *p, bool required, struct brig_error **err)
{
    struct stat st;
    if (fstatat(p->hostfd, &HOST_CA_BUNDLE[1], &st, 0) < 0 || !S_ISREG(st.st_mode)) {
        if (!required) return 0;
        return brig_failx(err, "--with ca-certificates: the host has no %s (apt-get install ca-certificates)",
                          HOST_CA_BUNDLE);
    }
    TRY(host_add_path(p, HOST_CA_BUNDLE, NULL, err));
    for (const char *const *l = host_ca_links; *l; l++)
        if (fstatat(p->hostfd, *l + 1, &st, 0) == 0) TRY(host_add_path(p, *l, NULL, err));
    return 0;
}

/* Each planned file's interpreter and libraries, until nothing new comes. */
static int host_add_deps(struct host_plan *p, struct brig_error **err)
{
    for (size_t i = 0; i < p->n; i++) {
        struct host_entry *e = p->e[i];
        if (e->type != 'f' || e->deps_done || !(e->mode & 0111 || strstr(e->path, ".so"))) continue;
        e->deps_done = true;
        autoclose int fd = openat(p->hostfd, e->path + 1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) return brig_fail(err, errno, "host %s", e->path);
        struct rootfs_strv deps = {0};
        int rc = 0;
        if (rootfs_elf_is_elf(fd)) {
            rc = rootfs_elf_closure(p->elf, e->path, &deps, NULL, err);
        } else if (e->tool) {
            /* only a named tool's: a library's stray #! lines are not needs */
            autofree char *interp = NULL;
            rootfs_script_interp(fd, &interp);
            if (interp) rootfs_strv_add(&deps, interp);
        }
        for (size_t j = 0; rc == 0 && j < deps.n; j++) {
            autofree char *real = NULL;
            rc = host_add_path(p, deps.v[j], &real, err);
            struct host_entry *d = rc == 0 ? host_find(p, real) : NULL;
            /* a library reached by a closure has had its own walked */
            if (d && rootfs_elf_is_elf(fd) && d->type == 'f') d->deps_done = true;
        }
        rootfs_strv_free(&deps);
        if (rc < 0) return brig_wrap(err, "dependencies of %s", e->path);
    }
    return 0;
}

static const char host_passwd[] =
    "root:x:0:0:root:/root:/bin/sh\n"
    "user:x:1000:1000:user:/workspace:/bin/sh\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char host_group[] = "root:x:0:\nuser:x:1000:\nnogroup:x:65534:\n";
/* getent and the resolver: the files, and DNS where a policy gives one */
static const char host_nsswitch[] =
    "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\n"
    "protocols: files\nservices: files\nethers: files\nrpc: files\n";
static const char host_hosts[] = "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n";

/* The skeleton every runner has: its own accounts, empty mount points. */
static int host_add_skeleton(struct host_plan *p, struct brig_error **err)
{
    static const struct { const char *path; char type; mode_t mode; uid_t uid; const char *content; } sk[] = {
        { "/dev", 'd', 0755, 0, NULL }, { "/proc", 'd', 0555, 0, NULL }, { "/sys", 'd', 0555, 0, NULL },
        { "/tmp", 'd', 01777, 0, NULL }, { "/workspace", 'd', 0755, ROOTFS_HOST_UID, NULL },
        { "/root", 'd', 0700, 0, NULL }, { "/etc", 'd', 0755, 0, NULL }, { "/home", 'd', 0755, 0, NULL },
        /* the policies' tmpfs mount points: the runtime would make them */
        { "/run", 'd', 0755, 0, NULL }, { "/var", 'd', 0755, 0, NULL }, { "/var/tmp", 'd', 01777, 0, NULL },
        { "/etc/passwd", 'g', 0644, 0, host_passwd }, { "/etc/group", 'g', 0644, 0, host_group },
        { "/etc/nsswitch.conf", 'g', 0644, 0, host_nsswitch }, { "/etc/hosts", 'g', 0644, 0, host_hosts },
    };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(sk); i++) {
        struct host_entry *e;
        TRY(host_plan_add(p, sk[i].path, sk[i].type, &e, err));
        if (e == NULL) e = host_find(p, sk[i].path);
        e->mode = sk[i].mode;
        e->uid = e->gid = sk[i].uid;
        e->content = sk[i].content;
    }
    /* usrmerge: /bin, /lib... are symlinks into /usr on the host; scripts
     * name /bin/sh, and ELF interpreters /lib64/... */
    static const char *const merged[] = { "/bin", "/sbin", "/lib", "/lib32", "/lib64" };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(merged); i++) {
        struct stat st;
        if (fstatat(p->hostfd, merged[i] + 1, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
            TRY(host_add_path(p, merged[i], NULL, err));
    }
    return 0;
}

/* One name of --with. Named by the caller, a tool must be on the host (a
 * group: its first program); in the default list only sh must. */
static int host_add_item(struct host_plan *p, const char *name, bool dflt, int *ca, struct brig_error **err)
{
    if (rootfs_host_wants_ca(name) && *ca == 0) *ca = 1;
    if (strcmp(name, "ca-certificates") == 0) {
        *ca = dflt ? 1 : 2;
        return 0;
    }
    if (strchr(name, '/') != NULL) return host_add_given(p, name, err);
    const char *const *group = rootfs_host_group(name);
    if (group == NULL) return host_add_tool(p, name, !dflt || strcmp(name, "sh") == 0, err);
    for (const char *const *t = group; *t; t++)
        TRY(host_add_tool(p, *t, !dflt && t == group, err));
    struct stat st;
    if (strcmp(name, "coreutils") == 0 && fstatat(p->hostfd, &HOST_STDBUF_LIB[1], &st, 0) == 0)
        TRY(host_add_path(p, HOST_STDBUF_LIB, NULL, err));
    return 0;
}

static int host_plan_build(struct host_plan *p, const char *with, struct brig_error **err)
{
    struct rootfs_strv tools = {0};
    rootfs_strv_split(&tools, with ? with : ROOTFS_HOST_DEFAULT_WITH, ", ");
    int rc = tools.n ? 0 : brig_failx(err, "--with: no tools named");
    int ca = 0;                     /* 1: if the host has it, 2: named, required */
    for (size_t i = 0; rc == 0 && i < tools.n; i++) rc = host_add_item(p, tools.v[i], with == NULL, &ca, err);
    rootfs_strv_free(&tools);
    TRY(rc);
    if (ca) TRY(host_add_ca(p, ca == 2, err));
    TRY(host_add_skeleton(p, err));
    return host_add_deps(p, err);
}

/* ---- the tree ---- */

static int host_copy(int src, int dst)
{
    if (ioctl(dst, FICLONE, src) == 0) return 0;
    for (;;) {
        ssize_t n = copy_file_range(src, NULL, dst, NULL, 1u << 30, 0);
        if (n == 0) return 0;
        if (n > 0) continue;
        if (errno == EINTR) continue;
        if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return -1;
        break;
    }
    char buf[65536];
    for (;;) {
        ssize_t n = read(src, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return (int)n;
        for (ssize_t o = 0; o < n;) {
            ssize_t w = write(dst, buf + o, (size_t)(n - o));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) return -1;
            o += w;
        }
    }
}

/* The directory fd of path's parent inside the tree: its dirs are all
 * ours and real (symlinks are leaves), so no symlink is ever followed. */
static int host_parent_fd(int treefd, const char *path, struct brig_error **err)
{
    autofree char *dir = brig_strdup(path);
    *strrchr(dir, '/') = '\0';
    struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                            .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
    int fd = (int)syscall(SYS_openat2, treefd, dir[0] ? dir + 1 : ".", &how, sizeof(how));
    if (fd < 0) return brig_fail(err, errno, "tree %s", dir[0] ? dir : "/");
    return fd;
}

static int host_make_file(struct host_plan *p, int pfd, const char *name, struct host_entry *e,
                          struct brig_error **err)
{
    autoclose int dst = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (dst < 0) return brig_fail(err, errno, "tree %s", e->path);
    if (e->type == 'g') {
        size_t len = strlen(e->content);
        if (write(dst, e->content, len) != (ssize_t)len) return brig_fail(err, errno, "tree %s: write", e->path);
    } else {
        autoclose int src = openat(p->hostfd, e->path + 1, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;
        if (src < 0 || fstat(src, &st) < 0) return brig_fail(err, errno, "host %s", e->path);
        if (!S_ISREG(st.st_mode) || st.st_ino != e->ino)
            return brig_failx(err, "host %s: replaced while the rootfs was built", e->path);
        if (host_copy(src, dst) < 0) return brig_fail(err, errno, "copy host %s", e->path);
        p->bytes += (uint64_t)st.st_size;
    }
    if (fchown(dst, e->uid, e->gid) < 0 && geteuid() == 0) return brig_fail(err, errno, "tree %s: chown", e->path);
    if (fchmod(dst, e->mode) < 0) return brig_fail(err, errno, "tree %s: chmod", e->path);
    return 0;
}

static int host_cmp_inode(const void *a, const void *b)
{
    const struct host_entry *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int host_make_entry(struct host_plan *p, int treefd, struct host_entry *e, void **inodes,
                           struct brig_error **err)
{
    autoclose int pfd = host_parent_fd(treefd, e->path, err);
    if (pfd < 0) return -1;
    const char *name = strrchr(e->path, '/') + 1;
    switch (e->type) {
    case 'd':
        if (mkdirat(pfd, name, 0700) < 0) return brig_fail(err, errno, "tree %s", e->path);
        if (fchownat(pfd, name, e->uid, e->gid, AT_SYMLINK_NOFOLLOW) < 0 && geteuid() == 0)
            return brig_fail(err, errno, "tree %s: chown", e->path);
        if (fchmodat(pfd, name, e->mode, 0) < 0) return brig_fail(err, errno, "tree %s: chmod", e->path);
        return 0;
    case 'l':
        if (symlinkat(e->target, pfd, name) < 0) return brig_fail(err, errno, "tree %s", e->path);
        return 0;
    case 'f': {
        /* a hard link on the host (git's helpers) stays one: the first in
         * sorted order is the file, the others link to it */
        void *found = tsearch(e, inodes, host_cmp_inode);
        if (found == NULL) abort();
        const struct host_entry *first = *(struct host_entry **)found;
        if (first != e) {
            if (linkat(treefd, first->path + 1, pfd, name, 0) < 0) return brig_fail(err, errno, "tree %s: link", e->path);
            return 0;
        }
        return host_make_file(p, pfd, name, e, err);
    }
    default:
        return host_make_file(p, pfd, name, e, err);
    }
}

/* Children before parents: setting a child's time changes no parent's,
 * creating it did. */
static int host_set_times(struct host_plan *p, int treefd, struct brig_error **err)
{
    for (size_t i = p->n; i-- > 0;) {
        struct host_entry *e = p->e[i];
        struct timespec t = e->type == 'f' ? e->mtime : p->epoch;
        struct timespec ts[2] = { t, t };
        if (utimensat(treefd, e->path + 1, ts, AT_SYMLINK_NOFOLLOW) < 0)
            return brig_fail(err, errno, "tree %s: set mtime", e->path);
    }
    struct timespec ts[2] = { p->epoch, p->epoch };
    if (futimens(treefd, ts) < 0) return brig_fail(err, errno, "tree /: set mtime");
    return 0;
}

static int host_entry_cmp(const void *a, const void *b)
{
    return strcmp((*(struct host_entry *const *)a)->path, (*(struct host_entry *const *)b)->path);
}

static void host_plan_free(struct host_plan *p)
{
    tdestroy(p->index, free_nothing);
    for (size_t i = 0; i < p->n; i++) {
        free(p->e[i]->path);
        free(p->e[i]->target);
        free(p->e[i]);
    }
    free(p->e);
    rootfs_elf_ctx_free(p->elf);
    if (p->hostfd >= 0) close(p->hostfd);
}

static int host_tree(struct host_plan *p, int treefd, struct brig_error **err)
{
    qsort(p->e, p->n, sizeof(*p->e), host_entry_cmp);
    void *inodes = NULL;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->n; i++) {
        rc = host_make_entry(p, treefd, p->e[i], &inodes, err);
        if (p->progress) p->progress->fn(p->progress->arg, i + 1, p->n, i + 1, p->bytes);
    }
    tdestroy(inodes, free_nothing);
    TRY(rc);
    if (fchmod(treefd, 0755) < 0) return brig_fail(err, errno, "tree /: chmod");
    return host_set_times(p, treefd, err);
}

/* A fresh directory beside DEST, named .DEST.XXXXXX: O_EXCL semantics of
 * mkdir, so a name planted there is never reused. */
static int host_tmpdir(int dirfd, const char *dest, char **name, struct brig_error **err)
{
    for (int tries = 0; tries < 16; tries++) {
        uint32_t r = 0;
        if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r)) r = (uint32_t)getpid() ^ (uint32_t)tries << 20;
        autofree char *n = brig_asprintf(".%s.%08x", dest, r);
        if (mkdirat(dirfd, n, 0700) == 0) {
            *name = steal_ptr(&n);
            return 0;
        }
        if (errno != EEXIST) return brig_fail(err, errno, "mkdir %s beside the rootfs", n);
    }
    return brig_failx(err, "mkdir .%s.XXXXXXXX: every name taken", dest);
}

static int host_write_manifest(int treefd, int dirfd, const char *name, struct brig_error **err)
{
    struct rootfs_manifest m = {0};
    TRY(rootfs_manifest_scan(treefd, true, &m, err));
    size_t len;
    autofree char *text = rootfs_manifest_text(&m, &len);
    rootfs_manifest_free(&m);
    if (brig_write_file_atomic(dirfd, name, text, len, 0644, err) < 0) return brig_wrap(err, "manifest %s", name);
    return 0;
}

int rootfs_host_build(int dest_dirfd, const char *dest_name, const struct rootfs_host_opts *o,
                      struct rootfs_host_stats *stats, struct brig_error **err)
{
    struct stat st;
    bool exists = fstatat(dest_dirfd, dest_name, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (exists && !o->replace) return brig_failx(err, "exists (--force replaces it)");
    struct host_plan p = { .hostfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), .progress = o->progress };
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    uint64_t epoch = 0;
    if (sde && brig_parse_u64(sde, &epoch) == 0) p.epoch.tv_sec = (time_t)epoch;
    int rc = p.hostfd < 0 ? brig_fail(err, errno, "open /") : rootfs_elf_ctx_new(p.hostfd, &p.elf, err);
    if (rc == 0) rc = host_plan_build(&p, o->with, err);
    autofree char *tmp = NULL;
    if (rc == 0) rc = host_tmpdir(dest_dirfd, dest_name, &tmp, err);
    if (rc == 0) {
        autoclose int treefd = openat(dest_dirfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        rc = treefd < 0 ? brig_fail(err, errno, "open %s", tmp) : host_tree(&p, treefd, err);
        if (rc == 0 && o->manifest_name) rc = host_write_manifest(treefd, o->manifest_dirfd, o->manifest_name, err);
        /* the manifest is in place before the tree: a tree never appears without it */
        if (rc == 0) {
            unsigned flags = exists ? RENAME_EXCHANGE : RENAME_NOREPLACE;
            if (renameat2(dest_dirfd, tmp, dest_dirfd, dest_name, flags) < 0)
                rc = brig_fail(err, errno, "rename %s onto %s", tmp, dest_name);
            /* judged by what was built: someone who can write beside DEST
             * could have swapped the temp name for a link before the rename */
            struct stat built, now;
            if (rc == 0 && (fstat(treefd, &built) < 0 || fstatat(dest_dirfd, dest_name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
                            built.st_ino != now.st_ino || built.st_dev != now.st_dev))
                rc = brig_failx(err, "%s is not the tree just built (its temp dir %s was replaced during the "
                                "build; is the parent directory writable by others?)", dest_name, tmp);
        }
        /* after an exchange the old tree (or whatever was at DEST) has the temp name */
        if (tmp && (rc < 0 || exists)) brig_rm_rf_at(dest_dirfd, tmp, NULL);
    }
    if (rc == 0 && stats != NULL) *stats = (struct rootfs_host_stats){ .entries = p.n, .bytes = p.bytes };
    host_plan_free(&p);
    return rc;
}
