/* Cgroups a container made below its own (a container running its own
 * manager: systemd, docker-in-docker) are removed with it, bottom up, in
 * every hierarchy: the processes in each are killed, then it is rmdir'ed.
 * Walked by fd (openat on the cgroup filesystem, no symlink there to
 * follow), at most CG_SUBTREE_DEPTH levels deep: a deeper tree is left
 * and the leaf's rmdir then fails with EBUSY, reported by the caller. */
#include "cgroup_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/log.h"

#define CG_SUBTREE_DEPTH 64

size_t cg_kill_members_at(int dirfd)
{
    autoclose int fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    FILE *f = fdopen(fd, "r");
    if (f == NULL) return 0;
    fd = -1;
    int pid;
    size_t sent = 0;
    while (fscanf(f, "%d", &pid) == 1)
        if (pid > 0 && kill(pid, SIGKILL) == 0) sent++;
    fclose(f);
    return sent;
}

static int subtree_rmdir(int parentfd, const char *name)
{
    struct timespec ts = { 0, 10 * 1000000L };
    int r = unlinkat(parentfd, name, AT_REMOVEDIR);
    /* a killed task keeps its cgroup busy a moment */
    for (int tries = 0; r < 0 && errno == EBUSY && tries < 100; tries++) {
        nanosleep(&ts, NULL);
        r = unlinkat(parentfd, name, AT_REMOVEDIR);
    }
    return r;
}

/* Every child cgroup of dirfd, deepest first; the number that could not
 * be removed. */
static int subtree_clear(int dirfd, int depth)
{
    if (depth >= CG_SUBTREE_DEPTH) return 1;
    int dupfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
    if (dupfd < 0) return 1;
    DIR *d = fdopendir(dupfd);
    if (d == NULL) {
        close(dupfd);
        return 1;
    }
    int left = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        autoclose int child = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (child < 0) {
            left++;
            continue;
        }
        left += subtree_clear(child, depth + 1);
        cg_kill_members_at(child);
        if (subtree_rmdir(dirfd, e->d_name) < 0) {
            brig_debug("cgroup: sub-cgroup %s: rmdir: %s", e->d_name, strerror(errno));
            left++;
        }
    }
    closedir(d);
    return left;
}

int cg_subtree_remove(const char *path)
{
    autoclose int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    int left = subtree_clear(fd, 0);
    if (left > 0) brig_debug("cgroup: %d sub-cgroup(s) of %s left", left, path);
    return left;
}
