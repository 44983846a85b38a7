/* The shared cgroup parent of one-shot sandboxes, /brig-sandbox, made once
 * and kept (as a systemd slice is), so that concurrent runs never create or
 * remove it: brig's delete removes only the directories its create made,
 * and here that is each run's own leaf. Without it, two runs racing on a
 * fresh parent could see it half made (a v1 cpuset directory is unusable
 * until its cpus and mems are written: "No space left on device" on join)
 * or removed under them by the other's delete.
 *
 * Only on v1/hybrid hosts (/sys/fs/cgroup is a tmpfs of hierarchies); on a
 * unified host brig's create makes the parent and enables its controllers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "sandbox.h"
#include "../runtime/util/cleanup.h"

#define SANDBOX_CGROUP_NAME (&SANDBOX_CGROUP_PARENT[1])

/* A fresh v1 cpuset takes the root's cpus and mems before anyone joins it. */
static int cgroup_cpuset_fill(int rootfd, int dirfd, struct brig_error **err)
{
    static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
    for (size_t i = 0; i < 2; i++) {
        char cur[64] = "";
        autoclose int cfd = openat(dirfd, files[i], O_RDONLY | O_CLOEXEC);
        if (cfd >= 0 && read(cfd, cur, sizeof(cur) - 1) > 0 && cur[0] != '\n') continue;
        char val[16384];
        autoclose int rfd = openat(rootfd, files[i], O_RDONLY | O_CLOEXEC);
        ssize_t n = rfd >= 0 ? read(rfd, val, sizeof(val) - 1) : -1;
        if (n <= 0) return brig_fail(err, errno ? errno : EIO, "read cpuset root %s", files[i]);
        autoclose int wfd = openat(dirfd, files[i], O_WRONLY | O_CLOEXEC);
        if (wfd < 0 || write(wfd, val, (size_t)n) != n)
            return brig_fail(err, errno, "write %s/%s", SANDBOX_CGROUP_PARENT, files[i]);
    }
    return 0;
}

static void cgroup_closedirp(DIR **d)
{
    if (*d != NULL) closedir(*d);
}

/* Every run but a host's first finds the parent whole: one look per
 * hierarchy and at the cpuset's cpus and mems, no lock, no mkdir. Anything
 * else (a hierarchy without it, a directory that is not one, an empty
 * cpuset file) takes the locked path below. */
static bool cgroup_parent_whole(DIR *d)
{
    int top = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || e->d_type != DT_DIR) continue;
        char path[300];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", e->d_name, SANDBOX_CGROUP_NAME);
        if (fstatat(top, path, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) return false;
        if (strcmp(e->d_name, "cpuset") != 0) continue;
        static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };
        for (size_t i = 0; i < 2; i++) {
            char cur[64] = "";
            snprintf(path, sizeof(path), "cpuset/%s/%s", SANDBOX_CGROUP_NAME, files[i]);
            autoclose int fd = openat(top, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
            if (fd < 0 || read(fd, cur, sizeof(cur) - 1) <= 0 || cur[0] == '\n') return false;
        }
    }
    return true;
}

int sandbox_cgroup_parent(struct brig_error **err)
{
    autoclose int top = open("/sys/fs/cgroup", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct statfs sfs;
    if (top < 0 || fstatfs(top, &sfs) < 0 || sfs.f_type != TMPFS_MAGIC) return 0;
    /* Each listing on a file of its own: a dup() would share the first
     * listing's position, and the second would read nothing. */
    int look_fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    __attribute__((cleanup(cgroup_closedirp))) DIR *look = look_fd >= 0 ? fdopendir(look_fd) : NULL;
    if (look == NULL && look_fd >= 0) close(look_fd);
    if (look != NULL && cgroup_parent_whole(look)) return 0;
    /* One run at a time makes it; the others wait and then find it whole. */
    if (flock(top, LOCK_EX) < 0) return brig_fail(err, errno, "lock /sys/fs/cgroup");
    int list_fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    __attribute__((cleanup(cgroup_closedirp))) DIR *d = list_fd >= 0 ? fdopendir(list_fd) : NULL;
    if (d == NULL) {
        if (list_fd >= 0) close(list_fd);
        return brig_fail(err, errno, "read /sys/fs/cgroup");
    }
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || e->d_type != DT_DIR) continue;    /* cpu -> cpu,cpuacct: a link */
        autoclose int hfd = openat(top, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (hfd < 0 || fstatfs(hfd, &sfs) < 0) continue;
        if (sfs.f_type != CGROUP_SUPER_MAGIC && sfs.f_type != CGROUP2_SUPER_MAGIC) continue;
        if (mkdirat(hfd, SANDBOX_CGROUP_NAME, 0755) < 0 && errno != EEXIST)
            return brig_fail(err, errno, "mkdir /sys/fs/cgroup/%s%s", e->d_name, SANDBOX_CGROUP_PARENT);
        if (strcmp(e->d_name, "cpuset") != 0) continue;
        autoclose int cfd = openat(hfd, SANDBOX_CGROUP_NAME, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (cfd < 0) return brig_fail(err, errno, "open cpuset%s", SANDBOX_CGROUP_PARENT);
        TRY(cgroup_cpuset_fill(hfd, cfd, err));
    }
    return 0;
}
