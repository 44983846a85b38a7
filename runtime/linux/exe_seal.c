/* The runtime binary out of the container's reach (CVE-2019-5736 class).
 *
 * brig's container init is a clone of `brig create`/`run` and an exec's
 * process a clone of `brig exec`: until their last execve their
 * /proc/self/exe is brig's, and an image can make that execve run brig again
 * inside the container (`#!/proc/self/exe`, process.args of
 * /proc/self/exe), with the image's own dynamic loader when brig is linked
 * dynamically (-Dstatic_deps=false, the sanitizer build). Whatever then opens
 * /proc/self/exe for writing must not reach the host binary. So the commands
 * that spawn container processes first turn themselves into a copy of brig
 * in a memfd, sealed against every write, as runc and crun do
 * (cloned_binary.c): the container can reach only that copy, and the copy
 * cannot change under the host-side brig that runs from it too. */
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
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
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

extern char **environ;

static int exe_sealed = -1;     /* what exe_seal_ensure or exe_is_sealed found: -1 not asked */
static char **exe_argv;         /* exe_seal_defer's */

/* F_GET_SEALS answers only for shmem files; a plain tmpfs file says
 * F_SEAL_SEAL alone. */
static bool exe_fd_sealed(int fd)
{
    int seals = fcntl(fd, F_GET_SEALS);
    return seals >= 0 && (seals & EXE_SEALS) == EXE_SEALS;
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
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
    if (fd < 0 && errno == EINVAL) fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return brig_fail(err, errno, "memfd_create for a sealed copy of brig%s",
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

static int exe_seal_fd(int fd, struct brig_error **err)
{
    if (fcntl(fd, F_ADD_SEALS, EXE_SEALS | F_SEAL_EXEC) == 0) return 0;
    if (errno == EINVAL && fcntl(fd, F_ADD_SEALS, EXE_SEALS) == 0) return 0;
    return brig_fail(err, errno, "seal the memfd copy of brig (F_ADD_SEALS)");
}

static void exe_guard_value(const struct stat *st, char *buf, size_t len)
{
    snprintf(buf, len, "%" PRIx64 ":%" PRIx64, (uint64_t)st->st_dev, (uint64_t)st->st_ino);
}

/* Our environment plus the loop guard naming the memfd (guard: its
 * "NAME=DEV:INO", which the caller keeps alive until the execveat). */
static char **exe_env_with_guard(int memfd, char *guard, size_t len)
{
    struct stat st;
    if (fstat(memfd, &st) < 0) return NULL;
    int k = snprintf(guard, len, EXE_GUARD_ENV "=");
    exe_guard_value(&st, guard + k, len - (size_t)k);
    size_t n = 0;
    while (environ != NULL && environ[n] != NULL) n++;
    char **env = calloc(n + 2, sizeof(char *));
    if (env == NULL) return NULL;
    for (size_t i = 0; i < n; i++) env[i] = environ[i];
    env[n] = guard;
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
    char guard[64] = "";
    const char *g = getenv(EXE_GUARD_ENV);
    if (g != NULL) {
        snprintf(guard, sizeof(guard), "%s", g);
        unsetenv(EXE_GUARD_ENV);     /* nothing we spawn inherits it */
    }
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

    autoclose int fd = exe_memfd(&st, err);
    if (fd < 0) return -1;
    off_t len = exe_load_extent(src, st.st_size);
    TRY(exe_copy(fd, src, len, err));
    TRY(exe_seal_fd(fd, err));
    char guard_env[96];
    autofree char **env = exe_env_with_guard(fd, guard_env, sizeof(guard_env));
    if (env == NULL) return brig_fail(err, errno ? errno : ENOMEM, "re-exec brig");
    brig_debug("re-executing from a sealed memfd copy of /proc/self/exe (%jd of %jd bytes)", (intmax_t)len,
               (intmax_t)st.st_size);
    syscall(SYS_execveat, fd, "", argv, env, AT_EMPTY_PATH);
    return brig_fail(err, errno, "execveat the sealed memfd copy of brig");
}

void exe_seal_defer(char **argv)
{
    exe_argv = argv;
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
