/* What a watched workspace holds that no name leads to (watch.c): a file
 * the container unlinked while it still held it open, or mapped and then
 * unlinked and closed, keeps its blocks until the last fd or mapping goes,
 * and a walk of the tree never meets it. Each pass reads, for every
 * process of the container's cgroup and those below it (an exec's leaf):
 *
 *   /proc/PID/fd/N   a regular file of the workspace's filesystem with no
 *                    link left: its st_blocks * 512, once per inode;
 *   /proc/PID/maps   a mapping of such a file ("(deleted)", the
 *                    workspace's device) whose file no fd showed: its
 *                    length, once per (inode, offset, length) — what the
 *                    mapping can have written, never less.
 *
 * Reading another process's fds and maps needs CAP_SYS_PTRACE (the
 * container's ids are not the watcher's); the watcher keeps it for that. */
#include "watch.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../../runtime/util/cleanup.h"

#define DELETED " (deleted)"

/* Add bytes; true when the bound is passed. */
static bool hidden_add(struct watch_walk *w, uint64_t bytes)
{
    w->bytes += bytes;
    if (w->bytes > w->max_bytes) w->why = "bytes";
    return w->why != NULL;
}

/* The unlinked regular files of the workspace's filesystem pid holds open. */
static bool hidden_fds(struct watch_walk *w, pid_t pid, dev_t dev)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
    autoclose int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return false;      /* gone meanwhile */
    DIR *d = fdopendir(dfd);
    if (d == NULL) return false;
    dfd = -1;
    bool over = false;
    for (struct dirent *e; !over && (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        struct stat st;
        /* follows the fd's link: the open file itself */
        if (fstatat(dirfd(d), e->d_name, &st, 0) < 0) continue;
        if (!S_ISREG(st.st_mode) || st.st_nlink != 0 || st.st_dev != dev) continue;
        if (watch_seen(w, (uint64_t)st.st_ino, true)) continue;
        over = hidden_add(w, (uint64_t)st.st_blocks * 512);
    }
    closedir(d);
    return over;
}

/* The mappings of unlinked files of the workspace's filesystem in pid. */
static bool hidden_maps(struct watch_walk *w, pid_t pid, dev_t dev)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    autofclose FILE *f = fopen(path, "re");
    if (f == NULL) return false;
    char line[4096 + 128];
    while (fgets(line, sizeof(line), f) != NULL) {
        size_t len = strlen(line);
        if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
        else if (!feof(f)) {        /* a path longer than the buffer: the rest of the line */
            int c;
            while ((c = fgetc(f)) != EOF && c != '\n') {}
        }
        size_t dl = strlen(DELETED);
        if (len < dl || strcmp(line + len - dl, DELETED) != 0) continue;
        uint64_t start, end, off, ino;
        unsigned maj, min;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %x:%x %" SCNu64, &start, &end, &off, &maj, &min,
                   &ino) != 6)
            continue;
        if (ino == 0 || makedev(maj, min) != dev || end <= start) continue;
        if (watch_seen(w, ino, false)) continue;    /* its blocks were counted by an fd */
        uint64_t key = ino ^ (off * 0x9E3779B97F4A7C15ull) ^ ((end - start) << 1) ^ (1ull << 63);
        if (watch_seen(w, key, true)) continue;
        if (hidden_add(w, end - start)) return true;
    }
    return false;
}

bool watch_hidden(struct watch_walk *w, const pid_t *pids, size_t n, dev_t dev)
{
    pid_t self = getpid();
    for (size_t i = 0; i < n; i++)
        if (pids[i] != self && hidden_fds(w, pids[i], dev)) return true;
    for (size_t i = 0; i < n; i++)
        if (pids[i] != self && hidden_maps(w, pids[i], dev)) return true;
    return false;
}
