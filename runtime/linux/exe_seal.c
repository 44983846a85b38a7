/* The runtime binary out of the container's reach (CVE-2019-5736 class).
 *
 * brig's container init is a clone of `brig create`/`run` and an exec's
 * process a clone of `brig exec`: until their last execve their
 * /proc/self/exe is brig's, and an image can make that execve run brig again
 * inside the container (`#!/proc/self/exe`, process.args of
 * /proc/self/exe), with the image's own dynamic loader when brig is linked
 * dynamically (-Dstatic_deps=false, the sanitizer build). Whatever then opens
 * /proc/self/exe for writing must not reach the host binary. So the commands
 * that spawn container processes first re-execute themselves from a file no
 * write can reach, as runc does (libcontainer/exeseal):
 *  - a read-only view of brig: a detached overlayfs mount made for this
 *    start (brig's directory over an empty one, no upper layer, read-only,
 *    reachable from no mount namespace), through which brig is exec'd. No
 *    copy: the kernel maps the same page cache. Whatever reaches it
 *    (/proc/PID/exe, /proc/PID/map_files, a reopen of either) is a file of
 *    a read-only superblock: EROFS for any write, chmod or truncate, also
 *    with CAP_DAC_OVERRIDE or CAP_SYS_ADMIN (t-exe-overwrite);
 *  - where overlayfs or the new mount API is not there (rootless, an old
 *    kernel, a brig directory overlayfs refuses as a layer): a copy in a memfd, sealed
 *    against every write (runc's and crun's cloned_binary.c).
 * The container can reach only that view or copy, and it cannot change
 * under the host-side brig that runs from it too. */
#include "exe_seal.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <link.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/mount.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/log.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U           /* Linux 6.3: executable even under vm.memfd_noexec=1 */
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020         /* Linux 6.3: the mode (exec bits) is fixed */
#endif

/* Every seal we rely on: no write, no resize, no more seals (nobody can
 * take one away). F_SEAL_EXEC is added where the kernel knows it. */
#define EXE_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* Only breaks an exec loop should the kernel ever run us unsealed after the
 * re-exec; whether we are sealed is judged by /proc/self/exe alone. Its
 * value names the memfd the re-exec ran ("DEV:INO"): only a process whose
 * exe is that very memfd, yet unsealed, is in a loop. A value the caller's
 * environment brings names another file (or nothing) and is ignored: brig
 * seals itself all the same. */
#define EXE_GUARD_ENV "_BRIG_EXE_SEALED"

/* The binary's identity travels in the memfd's name (what
 * /proc/self/exe reads as), so no environment variable can fake it. */
#define EXE_NAME_PREFIX "brig-exe:"

/* The view's path reads as "/brig" (the detached mount's root): where brig
 * lies on disk travels in the environment instead, and is believed only for
 * the file that is the view's (same inode, size and mtime: exe_view_origin). */
#define EXE_ORIGIN_ENV "_BRIG_EXE_ORIGIN"

/* The view's second, empty lower layer (overlayfs without an upper layer
 * needs two): made once, root's. Its content, if any, is never looked up:
 * brig's directory is the upper of the two. */
#define EXE_VIEW_LOWER "/run/brig-exe"

#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

extern char **environ;

static int exe_sealed = -1;     /* what exe_seal_ensure or exe_is_sealed found: -1 not asked */
static char **exe_argv;         /* exe_seal_defer's */
static char exe_origin_env[PATH_MAX];   /* EXE_ORIGIN_ENV as brig found it (exe_env_take) */
static char exe_guard_env[64];          /* EXE_GUARD_ENV as brig found it (exe_env_take) */

/* The two variables a re-exec passes itself, taken once and out of what
 * brig passes on (nothing it spawns inherits them). */
static void exe_env_take(void)
{
    static bool taken;
    if (taken) return;
    taken = true;
    const char *g = getenv(EXE_GUARD_ENV), *o = getenv(EXE_ORIGIN_ENV);
    if (g != NULL) snprintf(exe_guard_env, sizeof(exe_guard_env), "%s", g);
    if (o != NULL) snprintf(exe_origin_env, sizeof(exe_origin_env), "%s", o);
    unsetenv(EXE_GUARD_ENV);
    unsetenv(EXE_ORIGIN_ENV);
}

/* F_GET_SEALS answers only for shmem files; a plain tmpfs file says
 * F_SEAL_SEAL alone. */
static bool exe_fd_memfd_sealed(int fd)
{
    int seals = fcntl(fd, F_GET_SEALS);
    return seals >= 0 && (seals & EXE_SEALS) == EXE_SEALS;
}

/* A file of a read-only overlayfs mount (exe_fd_sealed takes it for the
 * view only when the loop guard names it). Read-only as mounted, and a
 * container process reaches no mount namespace that holds it to make it
 * writable. */
static bool exe_fd_view(int fd)
{
    struct statfs sf;
    return fstatfs(fd, &sf) == 0 && (unsigned long)sf.f_type == OVERLAYFS_SUPER_MAGIC && (sf.f_flags & ST_RDONLY);
}

static void exe_guard_value(const struct stat *st, char *buf, size_t len);

/* Sealed: a memfd with every seal (brig's copy, or an admin's), or the
 * view brig's own re-exec made, named by the loop guard it passed itself.
 * Another read-only overlayfs (a container's read-only root brig was
 * installed in) is not taken for one: brig makes its own view of it. */
static bool exe_fd_sealed(int fd)
{
    if (exe_fd_memfd_sealed(fd)) return true;
    struct stat st;
    char self[64];
    if (exe_guard_env[0] == '\0' || fstat(fd, &st) < 0) return false;
    exe_guard_value(&st, self, sizeof(self));
    return strcmp(self, exe_guard_env) == 0 && exe_fd_view(fd);
}

/* A lower directory for overlayfs: ':' separates layers and '\' escapes. */
static bool exe_lowerdir_put(char *out, size_t len, const char *dir, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if ((dir[i] == ':' || dir[i] == '\\') && k + 1 < len) out[k++] = '\\';
        if (k + 1 >= len) return false;
        out[k++] = dir[i];
    }
    out[k] = '\0';
    return true;
}

/* An O_PATH fd of brig (path: /proc/self/exe's target, st: what runs) through
 * a read-only overlayfs view made now and reachable from nowhere else, or -1
 * (errno) where it cannot be made: the caller copies instead. The file found
 * must be the one that runs (inode, size, mtime): a binary replaced since
 * brig started is not exec'd. */
static int exe_view_open(const char *path, const struct stat *st)
{
    const char *slash = strrchr(path, '/');
    if (path[0] != '/' || slash == NULL || slash[1] == '\0') return errno = EINVAL, -1;
    char lower[2 * PATH_MAX + 32];
    size_t k;
    if (!exe_lowerdir_put(lower, sizeof(lower) - sizeof(EXE_VIEW_LOWER) - 1, path, slash == path ? 1 : (size_t)(slash - path)))
        return errno = ENAMETOOLONG, -1;
    k = strlen(lower);
    snprintf(lower + k, sizeof(lower) - k, ":%s", EXE_VIEW_LOWER);
    if (mkdir(EXE_VIEW_LOWER, 0555) < 0 && errno != EEXIST) return -1;
    autoclose int fs = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
    if (fs < 0) return -1;
    if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "lowerdir", lower, 0) < 0) return -1;
    /* the inode numbers as they are (no xino remapping, no log line about it) */
    (void)syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "xino", "off", 0);
    if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) return -1;
    autoclose int mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
                                     MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
    if (mnt < 0) return -1;
    int fd = openat(mnt, slash + 1, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat vs;
    if (fstat(fd, &vs) < 0 || !S_ISREG(vs.st_mode) || vs.st_ino != st->st_ino || vs.st_size != st->st_size ||
        vs.st_mtim.tv_sec != st->st_mtim.tv_sec || vs.st_mtim.tv_nsec != st->st_mtim.tv_nsec || !exe_fd_view(fd)) {
        close(fd);
        return errno = ESTALE, -1;
    }
    return fd;
}

/* The path brig was started from, for the view (whose own path is "/brig"):
 * the environment's word, believed only when that file is the one that
 * runs. */
static const char *exe_view_origin(struct stat *out)
{
    struct stat self, o;
    if (exe_origin_env[0] != '/' || stat("/proc/self/exe", &self) < 0 || stat(exe_origin_env, &o) < 0 ||
        o.st_ino != self.st_ino || o.st_size != self.st_size || o.st_mtim.tv_sec != self.st_mtim.tv_sec ||
        o.st_mtim.tv_nsec != self.st_mtim.tv_nsec)
        return NULL;
    if (out != NULL) *out = o;
    return exe_origin_env;
}

/* A memfd for the copy: executable (MFD_EXEC where the kernel has it),
 * sealable, closed on exec (the process keeps it as its exe). */
static int exe_memfd(const struct stat *st, struct brig_error **err)
{
    /* The binary's path goes last, where it fits (memfd names are at most
     * 249 bytes): brig's helpers installed beside it are found from it. */
    char name[250], path[PATH_MAX];
    ssize_t pn = readlink("/proc/self/exe", path, sizeof(path) - 1);
    path[pn > 0 ? pn : 0] = '\0';
    int n = snprintf(name, sizeof(name), EXE_NAME_PREFIX "%" PRIx64 ":%" PRIx64 ":%" PRIx64 ":%" PRIx64 ".%lx:%s",
                     (uint64_t)st->st_dev, (uint64_t)st->st_ino, (uint64_t)st->st_size,
                     (uint64_t)st->st_mtim.tv_sec, (unsigned long)st->st_mtim.tv_nsec, path);
    if (n < 0 || (size_t)n >= sizeof(name)) *strrchr(name, ':') = '\0';     /* no path: too long */
    return exe_memfd_open(name, "a sealed copy of brig", err);
}

int exe_memfd_open(const char *name, const char *what, struct brig_error **err)
{
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
    if (fd < 0 && errno == EINVAL) fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return brig_fail(err, errno, "memfd_create for %s%s", what,
                         errno == EACCES ? " (vm.memfd_noexec=2 forbids executable memfds)" : "");
    return fd;
}

#define EXE_ELFCLASS (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)

/* How much of the binary the kernel (and a dynamic loader) read: the ELF
 * header, the program headers and every segment's bytes. What follows
 * (section headers, symbols, debug info: 2.2 of the 4.2 MB of a static
 * debugoptimized brig) is never mapped or read at run time, so it need not
 * be copied at every start. The copy is judged as the file is: anything not
 * a well-formed native ELF, or a segment past the end, copies the whole
 * file (the ELF loader then refuses what it refuses today). */
static off_t exe_load_extent(int src, off_t size)
{
    ElfW(Ehdr) eh;
    if (pread(src, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh)) return size;
    ElfW(Phdr) ph[64];          /* brig has 12 (14 dynamic); more is not ours: copy it all */
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != EXE_ELFCLASS ||
        eh.e_phentsize != sizeof(ph[0]) || eh.e_phnum == 0 || eh.e_phnum > sizeof(ph) / sizeof(ph[0]))
        return size;
    uint64_t end = (uint64_t)eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(ElfW(Phdr));
    if (eh.e_phoff < sizeof(eh) || end > (uint64_t)size) return size;
    size_t phsize = eh.e_phnum * sizeof(ph[0]);
    if (pread(src, ph, phsize, (off_t)eh.e_phoff) != (ssize_t)phsize) return size;
    for (size_t i = 0; i < eh.e_phnum; i++) {
        uint64_t e = (uint64_t)ph[i].p_offset + (uint64_t)ph[i].p_filesz;
        if (e < ph[i].p_offset || e > (uint64_t)size) return size;
        if (e > end) end = e;
    }
    return (off_t)end;
}

static int exe_copy(int dst, int src, off_t size, struct brig_error **err)
{
    off_t done = 0;
    while (done < size) {
        ssize_t n = sendfile(dst, src, NULL, (size_t)(size - done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return brig_fail(err, errno, "copy brig into a memfd (sendfile)");
        if (n == 0) break;
        done += n;
    }
    if (done != size) return brig_failx(err, "copy brig into a memfd: %jd of %jd bytes", (intmax_t)done,
                                        (intmax_t)size);
    return 0;
}

int exe_memfd_seal(int fd, const char *what, struct brig_error **err)
{
    if (fcntl(fd, F_ADD_SEALS, EXE_SEALS | F_SEAL_EXEC) == 0) return 0;
    if (errno == EINVAL && fcntl(fd, F_ADD_SEALS, EXE_SEALS) == 0) return 0;
    return brig_fail(err, errno, "seal %s (F_ADD_SEALS)", what);
}

static void exe_guard_value(const struct stat *st, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIx64 ":%" PRIx64, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
}

/* Our environment plus the loop guard naming the memfd or view (guard:
 * its "NAME=DEV:INO", which the caller keeps alive until the execveat) and,
 * for the view, where brig lies (origin: "NAME=PATH", or NULL). */
static char **exe_env_with_guard(int memfd, char *guard, size_t len, char *origin)
{
    struct stat st;
    if (fstat(memfd, &st) < 0) return NULL;
    int k = snprintf(guard, len, EXE_GUARD_ENV "=");
    exe_guard_value(&st, guard + k, len - (size_t)k);
    size_t n = 0;
    while (environ != NULL && environ[n] != NULL) n++;
    char **env = calloc(n + 3, sizeof(char *));
    if (env == NULL) return NULL;
    for (size_t i = 0; i < n; i++) env[i] = environ[i];
    env[n] = guard;
    env[n + 1] = origin;
    return env;
}

/* The sealed process: the kernel names an execveat(fd, "") after the fd
 * number; ps, top and pkill should still see brig. */
static void exe_set_comm(char **argv)
{
    if (argv == NULL || argv[0] == NULL) return;
    char *copy = strdup(argv[0]);
    if (copy == NULL) return;
    prctl(PR_SET_NAME, basename(copy), 0, 0, 0);
    free(copy);
}

int exe_seal_ensure(char **argv, struct brig_error **err)
{
    exe_env_take();
    const char *guard = exe_guard_env;
    autoclose int src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (src < 0) return brig_fail(err, errno, "open /proc/self/exe");
    if (exe_fd_sealed(src)) {
        exe_sealed = 1;
        if (guard[0]) exe_set_comm(argv);
        return 0;
    }
    exe_sealed = 0;
    struct stat st;
    if (fstat(src, &st) < 0) return brig_fail(err, errno, "stat /proc/self/exe");
    char self[64];
    exe_guard_value(&st, self, sizeof(self));
    if (guard[0] && strcmp(guard, self) == 0)
        return brig_failx(err, "brig re-executed itself from a sealed memfd, but /proc/self/exe is "
                               "not one: refusing to spawn container processes from the host binary");
    if (guard[0]) brig_debug("%s in the environment names no memfd of ours: ignored, sealing", EXE_GUARD_ENV);

    char guard_env[96];
    /* The read-only view first: no copy. */
    static char origin_env[sizeof(EXE_ORIGIN_ENV) + PATH_MAX];
    int k = snprintf(origin_env, sizeof(origin_env), EXE_ORIGIN_ENV "=");
    ssize_t pn = readlink("/proc/self/exe", origin_env + k, sizeof(origin_env) - (size_t)k - 1);
    autoclose int view = -1;
    if (pn > 0) {
        origin_env[k + pn] = '\0';
        view = exe_view_open(origin_env + k, &st);
        if (view < 0) brig_debug("no read-only view of %s (%s): a sealed memfd copy instead", origin_env + k,
                                 strerror(errno));
    }
    if (view >= 0) {
        autofree char **env = exe_env_with_guard(view, guard_env, sizeof(guard_env), origin_env);
        if (env == NULL) return brig_fail(err, errno ? errno : ENOMEM, "re-exec brig");
        brig_debug("re-executing from a read-only overlayfs view of %s", origin_env + k);
        syscall(SYS_execveat, view, "", argv, env, AT_EMPTY_PATH);
        brig_debug("execveat the read-only view of brig: %s; a sealed memfd copy instead", strerror(errno));
    }

    autoclose int fd = exe_memfd(&st, err);
    if (fd < 0) return -1;
    off_t len = exe_load_extent(src, st.st_size);
    TRY(exe_copy(fd, src, len, err));
    TRY(exe_memfd_seal(fd, "the memfd copy of brig", err));
    autofree char **env = exe_env_with_guard(fd, guard_env, sizeof(guard_env), NULL);
    if (env == NULL) return brig_fail(err, errno ? errno : ENOMEM, "re-exec brig");
    brig_debug("re-executing from a sealed memfd copy of /proc/self/exe (%jd of %jd bytes)", (intmax_t)len,
               (intmax_t)st.st_size);
    syscall(SYS_execveat, fd, "", argv, env, AT_EMPTY_PATH);
    return brig_fail(err, errno, "execveat the sealed memfd copy of brig");
}

void exe_seal_defer(char **argv)
{
    exe_argv = argv;
    exe_env_take();
}

int exe_seal_deferred(struct brig_error **err)
{
    if (exe_argv == NULL) return brig_failx(err, "brig: the sealed re-exec was deferred without argv (a bug)");
    return exe_seal_ensure(exe_argv, err);
}

/* Whether we run from the sealed copy: what exe_seal_ensure found, or,
 * before it is asked (a sealed re-exec deferred by `sandbox run` until its
 * config is known starts main over), the copy's seals themselves. */
static bool exe_is_sealed(void)
{
    if (exe_sealed >= 0) return exe_sealed == 1;
    exe_env_take();
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    exe_sealed = exe_fd_sealed(fd) ? 1 : 0;     /* asked once: the exe does not change */
    close(fd);
    return exe_sealed == 1;
}

bool exe_seal_active(void)
{
    return exe_is_sealed();
}

int exe_seal_origin_path(char *buf, size_t len)
{
    char link[PATH_MAX + 300];
    ssize_t n = readlink("/proc/self/exe", link, sizeof(link) - 1);
    if (n <= 0) return -1;
    link[n] = '\0';
    const char *path = link;
    if (exe_is_sealed() && link[0] == '/' && strncmp(link, "/memfd:", 7) != 0) {
        /* the view */
        const char *o = exe_view_origin(NULL);
        if (o == NULL || strlen(o) >= len) return -1;
        strcpy(buf, o);
        return 0;
    }
    if (exe_is_sealed()) {
        const char *prefix = "/memfd:" EXE_NAME_PREFIX;
        if (strncmp(link, prefix, strlen(prefix)) != 0) return -1;
        /* ...:<mtime>.<nsec>:<path> (deleted) */
        const char *p = link + strlen(prefix);
        for (int colons = 0; colons < 4 && p != NULL; colons++) p = strchr(p + (colons ? 1 : 0), ':');
        if (p == NULL || p[1] != '/') return -1;
        path = p + 1;
        const char *del = " (deleted)";
        size_t pl = strlen(path), dl = strlen(del);
        if (pl > dl && strcmp(path + pl - dl, del) == 0) link[(size_t)(path - link) + pl - dl] = '\0';
    }
    if (strlen(path) >= len) return -1;
    strcpy(buf, path);
    return 0;
}

int exe_seal_origin(struct stat *st)
{
    if (exe_is_sealed() && exe_view_origin(st) != NULL) return 0;
    if (exe_is_sealed()) {
        char link[256];
        ssize_t n = readlink("/proc/self/exe", link, sizeof(link) - 1);
        uint64_t dev, ino, size, sec;
        unsigned long nsec;
        if (n > 0) {
            link[n] = '\0';
            if (sscanf(link, "/memfd:" EXE_NAME_PREFIX "%" SCNx64 ":%" SCNx64 ":%" SCNx64 ":%" SCNx64 ".%lx",
                       &dev, &ino, &size, &sec, &nsec) == 5) {
                *st = (struct stat){ .st_dev = (dev_t)dev, .st_ino = (ino_t)ino, .st_size = (off_t)size };
                st->st_mtim.tv_sec = (time_t)sec;
                st->st_mtim.tv_nsec = (long)nsec;
                return 0;
            }
        }
    }
    return stat("/proc/self/exe", st);
}
