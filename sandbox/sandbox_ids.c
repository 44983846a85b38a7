/* The host identity of each sandbox (docs/sandbox.md, "Host identity"):
 * its init enters a user namespace of its own (lifecycle/container.h,
 * brig_userns_own) that maps the sandbox's ids 0-65535 onto a slot of
 * 65536 host ids, and is owned by the slot's first id. The kernel charges
 * every per-user counter of the processes inside (inotify instances and
 * watches, POSIX message queue bytes, pending signals, processes) to that
 * owner in the host's namespace as well (kernel/ucount.c: every level of
 * the chain, the owner's at the one above), so no sandbox shares one with
 * the host's users, root included, or with another sandbox; nor a uid
 * that may signal or ptrace, nor file ownership.
 *
 * The slots come from a range brig owns, like an /etc/subuid entry:
 * sandbox-ids.json ({"first": N, "count": M}: M slots from host id N, N a
 * multiple of 65536), default 1879048192 (0x70000000) and 1024 slots, past
 * systemd's container ranges (524288-1879048191) and below its foreign
 * range (2147352576). A range holding a user or group of /etc/passwd or
 * /etc/group, a subordinate range of /etc/subuid or /etc/subgid, or the
 * egress proxy's ids (0xB0000000 + its pid) is refused, naming the file.
 *
 * Which slot is whose: one file per slot in SANDBOX_IDS_DIR, named by its
 * first id (so ranges of other configs never half-overlap one), holding
 * "PID START" of the sandbox's init (its start time in /proc/PID/stat).
 * A slot is taken under an flock held from the claim to the init's record
 * (a session's create) or to the end of the run (a one-shot); it is free
 * when nobody holds that lock and its init is not alive: when the init of
 * a pid namespace dies the kernel has killed every process in it first
 * (zap_pid_ns_processes), so nothing of the slot's ids runs any more. A
 * brig killed at any point thus frees its slot as soon as its sandbox is
 * gone (brig-init dies with it, or the next run's stale sweep kills it),
 * and never before. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox.h"
#include "brig-config.h"
#include "../runtime/config/json.h"
#include "../runtime/lifecycle/state.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/log.h"

#define IDS_CONF_MAX 4096
/* The egress proxy's own ids (egress/egress_confine.c): 0xB0000000 + its
 * pid, at most PID_MAX_LIMIT (4194304). */
#define IDS_EGRESS_FIRST 0xB0000000u
#define IDS_EGRESS_END (0xB0000000ull + 4194304ull)

struct ids_range {
    uint32_t first;
    uint64_t end;           /* one past the last id */
};

/* The conf decides which host ids a root brig hands out: root's alone. */
static int ids_conf_read(const char *path, struct sandbox_ids *r, struct brig_error **err)
{
    autoclose int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT && getenv("BRIG_SANDBOX_IDS") == NULL) return 0;   /* the default */
    if (fd < 0) return brig_fail(err, errno, "%s", path);
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "%s", path);
    if (!S_ISREG(st.st_mode)) return brig_failx(err, "%s: not a regular file", path);
    if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
        return brig_failx(err, "%s: must be owned by root and not writable by group or others (owner %u, "
                          "mode %04o)", path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
    char buf[IDS_CONF_MAX + 1];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) return brig_fail(err, errno, "read %s", path);
    if (n > IDS_CONF_MAX) return brig_failx(err, "%s: larger than %d bytes", path, IDS_CONF_MAX);
    autojson brig_json j = NULL;
    if (json_parse(buf, (size_t)n, &j, err) < 0 || json_as_object(j, "sandbox-ids", err) < 0 ||
        json_get_u32(j, "", "first", true, &r->first, err) < 0 ||
        json_get_u32(j, "", "count", true, &r->count, err) < 0)
        return brig_wrap(err, "%s", path);
    for (size_t i = 0; i < json_object_len(j); i++) {
        const char *k = json_object_key(j, i);
        if (strcmp(k, "first") != 0 && strcmp(k, "count") != 0)
            return brig_failx(err, "%s: unknown key \"%.64s\" (expected first, count)", path, k);
    }
    return 0;
}

static bool ids_overlap(const struct ids_range *r, uint64_t first, uint64_t n)
{
    return n > 0 && first < r->end && first + n > r->first;
}

/* The entries of an /etc file whose ids fall in r, each line
 * "name:f1:f2:...": the id in field id_at (passwd, group: 2), and with
 * count_at > 0 that many from it (subuid, subgid: 1 and 2). Read whole,
 * once: stdio's fgetpwent seeks twice per line. */
static int ids_check_file(const char *path, int id_at, int count_at, const char *what, const struct ids_range *r,
                          struct brig_error **err)
{
    autofree char *text = NULL;
    size_t len = 0;
    autoerr struct brig_error *e = NULL;
    if (brig_read_file(path, 16u << 20, &text, &len, &e) < 0) return 0;     /* none: nobody there */
    for (char *line = text, *next; line != NULL && *line != '\0'; line = next) {
        next = strchr(line, '\n');
        if (next != NULL) *next++ = '\0';
        const char *f[4] = { line };
        int n = 1;
        for (char *c = line; n < 4 && (c = strchr(c, ':')) != NULL; n++) {
            *c++ = '\0';
            f[n] = c;
        }
        if (n <= id_at || (count_at > 0 && n <= count_at) || line[0] == '#') continue;
        char *end;
        errno = 0;
        unsigned long long first = strtoull(f[id_at], &end, 10);
        if (errno != 0 || end == f[id_at] || (*end != '\0' && *end != ':')) continue;
        unsigned long long count = 1;
        if (count_at > 0 && ((count = strtoull(f[count_at], &end, 10)) == 0 || end == f[count_at])) continue;
        if (!ids_overlap(r, first, count)) continue;
        if (count_at > 0)
            return brig_failx(err, "%.64s's subordinate ids %llu-%llu in %s", f[0], first, first + count - 1, path);
        return brig_failx(err, "%s %.64s (%cid %llu) in %s", what, f[0], what[0] == 'u' ? 'u' : 'g', first, path);
    }
    return 0;
}

/* No id of the range may belong to anyone else on this host: a user or
 * group, a subordinate range, the egress proxy. Only the files: a static
 * brig loads no NSS module (LDAP or systemd users are not seen). */
static int ids_check_free(const struct ids_range *r, struct brig_error **err)
{
    if (ids_overlap(r, IDS_EGRESS_FIRST, IDS_EGRESS_END - IDS_EGRESS_FIRST))
        return brig_failx(err, "the egress proxy's ids %u-%llu", IDS_EGRESS_FIRST, IDS_EGRESS_END - 1);
    TRY(ids_check_file("/etc/passwd", 2, 0, "user", r, err));
    TRY(ids_check_file("/etc/group", 2, 0, "group", r, err));
    TRY(ids_check_file("/etc/subuid", 1, 2, NULL, r, err));
    return ids_check_file("/etc/subgid", 1, 2, NULL, r, err);
}

int sandbox_ids_range(struct sandbox_ids *r, struct brig_error **err)
{
    const char *env = getenv("BRIG_SANDBOX_IDS");
    const char *path = env != NULL ? env : BRIG_SANDBOX_IDS_CONF;
    *r = (struct sandbox_ids){ .first = SANDBOX_IDS_FIRST, .count = SANDBOX_IDS_COUNT };
    TRY(ids_conf_read(path, r, err));
    snprintf(r->source, sizeof(r->source), "%s", path);
    uint64_t end = (uint64_t)r->first + (uint64_t)r->count * SANDBOX_IDS_SLOT;
    if (r->first % SANDBOX_IDS_SLOT != 0 || r->first == 0 || r->count == 0 || end > UINT32_MAX)
        return brig_failx(err, "%s: first %u, count %u: first must be a nonzero multiple of %u, count at least 1, "
                          "and first + count * %u at most 4294967295", path, r->first, r->count,
                          SANDBOX_IDS_SLOT, SANDBOX_IDS_SLOT);
    const struct ids_range rr = { .first = r->first, .end = end };
    if (ids_check_free(&rr, err) < 0)
        return brig_wrap(err, "%s: the sandboxes' host ids %u-%llu are not brig's alone: they hold", path,
                         r->first, (unsigned long long)end - 1);
    return 0;
}

/* The slots' directory: root's, made on first use, never a symlink. */
static int ids_dir_open(int *out, struct brig_error **err)
{
    if (mkdir(SANDBOX_IDS_DIR, 0700) < 0 && errno != EEXIST) return brig_fail(err, errno, "mkdir %s", SANDBOX_IDS_DIR);
    autoclose int fd = open(SANDBOX_IDS_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "%s", SANDBOX_IDS_DIR);
    struct stat st;
    if (fstat(fd, &st) < 0) return brig_fail(err, errno, "%s", SANDBOX_IDS_DIR);
    if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
        return brig_failx(err, "%s: must be owned by root and not writable by group or others", SANDBOX_IDS_DIR);
    *out = steal_fd(&fd);
    return 0;
}

/* The init a slot's file names is alive (the same process: its start time). */
static bool ids_slot_live(int fd)
{
    char buf[64];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n <= 0) return false;
    buf[n] = '\0';
    char *end;
    long pid = strtol(buf, &end, 10);
    if (end == buf || *end != ' ' || pid <= 0) return true;     /* not ours: never reused */
    unsigned long long start = strtoull(end + 1, &end, 10);
    return state_pid_start_time((pid_t)pid) == start;
}

int sandbox_slot_claim(struct sandbox_slot *s, struct brig_error **err)
{
    *s = (struct sandbox_slot){ .fd = -1 };
    struct sandbox_ids r;
    TRY(sandbox_ids_range(&r, err));
    autoclose int dirfd = -1;
    TRY(ids_dir_open(&dirfd, err));
    /* From a random slot on: concurrent runs seldom try the same one. */
    uint32_t start = 0;
    if (getrandom(&start, sizeof(start), 0) != sizeof(start)) start = (uint32_t)getpid();
    for (uint32_t k = 0; k < r.count; k++) {
        uint32_t base = r.first + ((start + k) % r.count) * SANDBOX_IDS_SLOT;
        char name[16];
        snprintf(name, sizeof(name), "%u", base);
        autoclose int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) return brig_fail(err, errno, "%s/%s", SANDBOX_IDS_DIR, name);
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) continue;         /* being made, or a run's */
        if (ids_slot_live(fd)) continue;                        /* a live sandbox's */
        if (ftruncate(fd, 0) < 0) return brig_fail(err, errno, "%s/%s", SANDBOX_IDS_DIR, name);
        s->fd = steal_fd(&fd);
        s->base = base;
        brig_debug("sandbox: host ids %u-%u", base, base + SANDBOX_IDS_SLOT - 1);
        return 0;
    }
    return brig_fail(err, EAGAIN, "no free host ids for a sandbox: all %u slots of %u ids from %u (%s) belong to "
                     "live sandboxes; remove some (brig sandbox ls) or give brig a larger range there",
                     r.count, SANDBOX_IDS_SLOT, r.first, r.source);
}

int sandbox_slot_born(void *arg, pid_t pid, struct brig_error **err)
{
    struct sandbox_slot *s = arg;
    uint64_t start = state_pid_start_time(pid);
    char buf[64];
    int n = snprintf(buf, sizeof(buf), "%d %llu\n", (int)pid, (unsigned long long)start);
    if (start == 0 || pwrite(s->fd, buf, (size_t)n, 0) != n)
        return brig_fail(err, start == 0 ? ESRCH : errno, "sandbox: record the init of host ids %u", s->base);
    return 0;
}

void sandbox_slot_release(struct sandbox_slot *s, bool clear)
{
    if (s->fd >= 0 && clear && ftruncate(s->fd, 0) < 0) brig_debug("sandbox: clear slot %u: %s", s->base, strerror(errno));
    brig_closep(&s->fd);
}
