/* Mount helpers on fds (see mount_util.h). */
#include "mount_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "../../util/cleanup.h"
#include "../../util/fs.h"
#include "../../util/log.h"
#include "../../util/strutil.h"

char *mnt_path_clean(const char *path)
{
    size_t len = strlen(path);
    char *out = brig_calloc(1, len + 2);
    size_t o = 0;
    const char *p = path;
    for (;;) {
        while (*p == '/') p++;
        if (*p == '\0') break;
        size_t n = strcspn(p, "/");
        if (n == 1 && p[0] == '.') {
            /* skip */
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (o > 0 && out[o - 1] != '/') o--;
            if (o > 0) o--; /* drop the slash too */
        } else {
            out[o++] = '/';
            memcpy(out + o, p, n);
            o += n;
        }
        p += n;
    }
    if (o == 0) out[o++] = '/';
    out[o] = '\0';
    return out;
}

uint64_t mnt_flags_to_attr(unsigned long ms)
{
    uint64_t a = 0;
    if (ms & MS_RDONLY) a |= MOUNT_ATTR_RDONLY;
    if (ms & MS_NOSUID) a |= MOUNT_ATTR_NOSUID;
    if (ms & MS_NODEV) a |= MOUNT_ATTR_NODEV;
    if (ms & MS_NOEXEC) a |= MOUNT_ATTR_NOEXEC;
    if (ms & MS_NODIRATIME) a |= MOUNT_ATTR_NODIRATIME;
    if (ms & MS_NOSYMFOLLOW) a |= MOUNT_ATTR_NOSYMFOLLOW;
    if (ms & MS_NOATIME)
        a |= MOUNT_ATTR_NOATIME;
    else if (ms & MS_STRICTATIME)
        a |= MOUNT_ATTR_STRICTATIME;
    return a;
}

int mnt_setattr(int fd, bool recursive, uint64_t set, uint64_t clr, uint64_t propagation,
                struct brig_error **err)
{
    return mnt_setattr_at(fd, "", recursive, set, clr, propagation, err);
}

int mnt_setattr_at(int dirfd, const char *path, bool recursive, uint64_t set, uint64_t clr,
                   uint64_t propagation, struct brig_error **err)
{
    struct mount_attr attr = {
        .attr_set = set,
        .attr_clr = clr,
        .propagation = propagation,
    };
    unsigned int flags = (path[0] == '\0' ? AT_EMPTY_PATH : 0) | (recursive ? AT_RECURSIVE : 0);
    if (mount_setattr(dirfd, path, flags, &attr, sizeof(attr)) < 0)
        return brig_fail(err, errno, "mount_setattr set=%#llx clr=%#llx propagation=%#llx",
                         (unsigned long long)set, (unsigned long long)clr,
                         (unsigned long long)propagation);
    return 0;
}

int mnt_set_propagation(int fd, unsigned long propagation, struct brig_error **err)
{
    return mnt_set_propagation_at(fd, "", propagation, err);
}

int mnt_set_propagation_at(int dirfd, const char *path, unsigned long propagation,
                           struct brig_error **err)
{
    unsigned long type = propagation & (MS_SHARED | MS_SLAVE | MS_PRIVATE | MS_UNBINDABLE);
    if (type == 0) return 0;
    return mnt_setattr_at(dirfd, path, (propagation & MS_REC) != 0, 0, 0, type, err);
}

int mnt_clone(int fd, bool recursive, struct brig_error **err)
{
    int t = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
                                  (recursive ? AT_RECURSIVE : 0));
    if (t < 0) return brig_fail(err, errno, "open_tree");
    return t;
}

int mnt_attach(int treefd, int destfd, struct brig_error **err)
{
    if (move_mount(treefd, "", destfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        return brig_fail(err, errno, "move_mount");
    return 0;
}

static char *mnt_fd_link(int fd)
{
    char p[64], buf[4096];
    ssize_t n = readlink(brig_fd_path(fd, p, sizeof(p)), buf, sizeof(buf) - 1);
    if (n < 0 || (size_t)n >= sizeof(buf) - 1) return NULL;
    buf[n] = '\0';
    return brig_strdup(buf);
}

char *mnt_path_in_root(int rootfd, int fd)
{
    autofree char *root = mnt_fd_link(rootfd);
    return root != NULL ? mnt_path_in_root_link(root, fd) : NULL;
}

char *mnt_root_link(int rootfd)
{
    return mnt_fd_link(rootfd);
}

char *mnt_path_in_root_link(const char *root, int fd)
{
    autofree char *path = mnt_fd_link(fd);
    if (root == NULL || path == NULL || root[0] != '/' || path[0] != '/') return NULL;
    if (strcmp(root, "/") == 0) return steal_ptr(&path);
    size_t rl = strlen(root);
    if (strncmp(path, root, rl) != 0) return NULL;
    if (path[rl] == '\0') return brig_strdup("/");
    if (path[rl] != '/') return NULL;
    return brig_strdup(path + rl);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void mnt_unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p != '\0'; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7' &&
            p[3] >= '0' && p[3] <= '7') {
            *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

int mnt_info_foreach(int (*cb)(const struct mnt_info *mi, void *arg, struct brig_error **err),
                     void *arg, struct brig_error **err)
{
    autofclose FILE *f = fopen("/proc/self/mountinfo", "re");
    if (f == NULL) return brig_fail(err, errno, "open /proc/self/mountinfo");
    autofree char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = '\0';
        /* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
        char *save = NULL, *fields[6] = {0};
        char *tok = strtok_r(line, " ", &save);
        int nf = 0;
        while (tok != NULL && nf < 6) {
            fields[nf++] = tok;
            if (nf < 6) tok = strtok_r(NULL, " ", &save);
        }
        if (nf < 6) continue;
        struct mnt_info mi = { .root = fields[3], .mount_point = fields[4] };
        while ((tok = strtok_r(NULL, " ", &save)) != NULL && strcmp(tok, "-") != 0)
            if (brig_str_has_prefix(tok, "shared:")) mi.shared = true;
        mi.fstype = strtok_r(NULL, " ", &save);
        mi.source = strtok_r(NULL, " ", &save);
        if (mi.fstype == NULL) continue;
        if (mi.source == NULL) mi.source = "";
        mnt_unescape(fields[3]);
        mnt_unescape(fields[4]);
        if (cb(&mi, arg, err) < 0) return -1;
    }
    return 0;
}
