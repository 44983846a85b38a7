/* A workspace bound kept by staging, where the workspace's own filesystem
 * can keep none (no project quotas, not small enough; policy_quota.c
 * decides): the container's bind is an overlay whose lower layer is the
 * workspace and whose upper layer is a tmpfs of the bound's size, made in
 * the container's state directory:
 *
 *   STATE/wsstage          tmpfs, size=BOUND, nr_inodes bounded, 0700 root
 *   STATE/wsstage/upper    what the container wrote (copied up, whiteouts)
 *   STATE/wsstage/work     overlay's work directory
 *   STATE/wsstage/merged   the overlay the container's bind takes
 *   STATE/wsstage.json     the workspace to write back to: path, dev, ino
 *
 * Every write the container makes lands in the tmpfs, so the kernel stops
 * it at the bound (ENOSPC inside). When the container ends (delete, the end
 * of `sandbox run`) and after each `sandbox exec`, commit.c writes the
 * upper layer back into the workspace directory, no more bytes than the
 * tmpfs holds. The tmpfs's pages are charged to the memory cgroup of the
 * process that writes them: the staged bytes count toward the container's
 * memory limit too.
 *
 * An idmapped workspace (mounts[N].uidMappings, "idmap"): an overlay
 * mount cannot be idmapped, so its lower layer is (an idmapped clone of
 * the workspace, which overlayfs takes as a layer): the container sees the
 * workspace's files as the mapping says and writes the upper layer with
 * its own ids, which the write-back maps to the workspace's. */
#include "stage.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "../../runtime/config/json.h"
#include "../../runtime/config/spec.h"
#include "../../runtime/linux/rootfs/mounts_internal.h"
#include "../../runtime/util/cleanup.h"
#include "../../runtime/util/fs.h"
#include "../../runtime/util/log.h"
#include "../../runtime/util/strutil.h"

#define STAGE_DIR "wsstage"
#define STAGE_RECORD "wsstage.json"
#define STAGE_RECORD_MAX 8192
/* One inode per 4 KiB of the bound, at least this many: empty files and
 * directories cost no blocks, and each becomes an inode of the host's
 * filesystem when written back. */
#define STAGE_MIN_INODES 4096

static void stage_maps_write(struct brig_jw *w, const char *key, const struct brig_id_mapping *m, size_t n)
{
    jw_key(w, key);
    jw_arr_open(w);
    for (size_t i = 0; i < n; i++) {
        jw_arr_open(w);
        jw_u64(w, m[i].container_id);
        jw_u64(w, m[i].host_id);
        jw_u64(w, m[i].size);
        jw_arr_close(w);
    }
    jw_arr_close(w);
}

static int stage_record_write(int state_dirfd, const char *path, const struct stat *st, uint64_t bytes,
                              const struct brig_spec *s, const struct brig_mount *m, struct brig_error **err)
{
    autojw struct brig_jw *w = jw_new(false);
    jw_obj_open(w);
    jw_kstr(w, "workspace", path);
    jw_ku64(w, "dev", (uint64_t)st->st_dev);
    jw_ku64(w, "ino", (uint64_t)st->st_ino);
    jw_ku64(w, "bytes", bytes);
    if (mounts_idmap_wanted(m)) {
        /* its own mappings, or "idmap" alone: the container's */
        bool own = m->n_uid_mappings > 0;
        stage_maps_write(w, "uid", own ? m->uid_mappings : s->linux_cfg.uid_mappings,
                         own ? m->n_uid_mappings : s->linux_cfg.n_uid_mappings);
        stage_maps_write(w, "gid", own ? m->gid_mappings : s->linux_cfg.gid_mappings,
                         own ? m->n_gid_mappings : s->linux_cfg.n_gid_mappings);
    }
    jw_obj_close(w);
    size_t len = 0;
    const char *text = jw_text(w, &len);
    if (text == NULL) return brig_failx(err, "%s: JSON writer misuse (a bug)", STAGE_RECORD);
    return brig_write_file_atomic(state_dirfd, STAGE_RECORD, text, len, 0600, err);
}

int stage_record_read(int state_dirfd, struct stage_record *out, struct brig_error **err)
{
    *out = (struct stage_record){ 0 };
    autofree char *text = NULL;
    size_t len = 0;
    autoclose int fd = openat(state_dirfd, STAGE_RECORD, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) return 0;
    if (fd < 0) return brig_fail(err, errno, "%s", STAGE_RECORD);
    TRY(brig_read_fd(fd, STAGE_RECORD, STAGE_RECORD_MAX, &text, &len, err));
    autojson brig_json j = NULL;
    const char *ws = NULL;
    if (json_parse(text, len, &j, err) < 0 || json_as_object(j, STAGE_RECORD, err) < 0 ||
        json_as_string(json_get(j, "workspace"), "workspace", &ws, err) < 0 ||
        json_get_u64(j, "", "dev", true, &out->dev, err) < 0 || json_get_u64(j, "", "ino", true, &out->ino, err) < 0 ||
        json_get_u64(j, "", "bytes", true, &out->bytes, err) < 0)
        return brig_wrap(err, "%s", STAGE_RECORD);
    out->workspace = brig_strdup(ws);
    out->present = true;
    static const char *const keys[] = { "uid", "gid" };
    for (int k = 0; k < 2; k++) {
        brig_json a = json_get(j, keys[k]);
        if (a == NULL) continue;
        if (json_as_array(a, keys[k], err) < 0) return brig_wrap(err, "%s", STAGE_RECORD);
        size_t n = json_array_len(a);
        struct stage_map *mp = brig_calloc(n ? n : 1, sizeof(*mp));
        if (k == 0) out->uid = mp, out->n_uid = n;
        else out->gid = mp, out->n_gid = n;
        for (size_t i = 0; i < n; i++) {
            brig_json e = json_array_at(a, i);
            if (json_as_array(e, keys[k], err) < 0 || json_array_len(e) != 3 ||
                json_as_u32(json_array_at(e, 0), keys[k], &mp[i].disk, err) < 0 ||
                json_as_u32(json_array_at(e, 1), keys[k], &mp[i].seen, err) < 0 ||
                json_as_u32(json_array_at(e, 2), keys[k], &mp[i].size, err) < 0)
                return brig_failx(err, "%s: %s[%zu]: expected [disk, seen, size]", STAGE_RECORD, keys[k], i);
        }
    }
    return 0;
}

void stage_record_free(struct stage_record *r)
{
    free(r->workspace);
    free(r->uid);
    free(r->gid);
    *r = (struct stage_record){ 0 };
}

uint32_t stage_map_id(const struct stage_map *m, size_t n, uint32_t seen)
{
    for (size_t i = 0; i < n; i++)
        if (seen >= m[i].seen && seen - m[i].seen < m[i].size) return m[i].disk + (seen - m[i].seen);
    return seen;
}

/* The overlay's bind is a plain one: its lower layer carries the idmap. */
static void stage_drop_idmap(struct brig_mount *m)
{
    size_t k = 0;
    for (size_t j = 0; j < m->n_options; j++) {
        const char *o = m->options[j];
        if (strcmp(o, "idmap") == 0 || strcmp(o, "ridmap") == 0 || strncmp(o, "idmap=", 6) == 0 ||
            strncmp(o, "ridmap=", 7) == 0)
            free(m->options[j]);
        else
            m->options[k++] = m->options[j];
    }
    m->n_options = k;
    if (m->options != NULL) m->options[k] = NULL;
    free(m->uid_mappings);
    free(m->gid_mappings);
    m->uid_mappings = m->gid_mappings = NULL;
    m->n_uid_mappings = m->n_gid_mappings = 0;
    m->opts.idmap = m->opts.idmap_recursive = m->opts.idmap_inline = false;
}

/* The id the container sees for a workspace's disk id (idmapped): the
 * mapping read the other way. */
static uint32_t stage_seen_id(const struct brig_id_mapping *m, size_t n, uint32_t disk)
{
    for (size_t i = 0; i < n; i++)
        if (disk >= m[i].container_id && disk - m[i].container_id < m[i].size)
            return m[i].host_id + (disk - m[i].container_id);
    return disk;
}

/* The tmpfs of the bound at STATE/wsstage and its three directories; the
 * upper one with the workspace's owner (as the container sees it) and mode
 * (the overlay's root shows them). Returns an fd of the tmpfs's root. */
static int stage_tmpfs(int state_dirfd, uint64_t bytes, const struct stat *ws, struct brig_error **err)
{
    if (mkdirat(state_dirfd, STAGE_DIR, 0700) < 0 && errno != EEXIST)
        return brig_fail(err, errno, "mkdir %s", STAGE_DIR);
    uint64_t inodes = bytes / 4096 > STAGE_MIN_INODES ? bytes / 4096 : STAGE_MIN_INODES;
    char target[64], opts[128];
    snprintf(target, sizeof(target), "/proc/self/fd/%d/" STAGE_DIR, state_dirfd);
    snprintf(opts, sizeof(opts), "size=%" PRIu64 ",nr_inodes=%" PRIu64 ",mode=0700", bytes, inodes);
    if (mount("brig-workspace", target, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
        return brig_fail(err, errno, "mount a tmpfs of %" PRIu64 " bytes for the staged workspace", bytes);
    autoclose int fd = openat(state_dirfd, STAGE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "open %s", STAGE_DIR);
    if (mkdirat(fd, "upper", ws->st_mode & 07777) < 0 || mkdirat(fd, "work", 0700) < 0 ||
        mkdirat(fd, "merged", 0755) < 0)
        return brig_fail(err, errno, "mkdir in %s", STAGE_DIR);
    if (fchownat(fd, "upper", ws->st_uid, ws->st_gid, AT_SYMLINK_NOFOLLOW) < 0 ||
        fchmodat(fd, "upper", ws->st_mode & 07777, 0) < 0)
        return brig_fail(err, errno, "%s/upper: owner and mode of the workspace", STAGE_DIR);
    return steal_fd(&fd);
}

/* The overlay of source (lower) and the tmpfs's upper at merged; an O_PATH
 * fd of it. Paths by fd: no name of the caller's is parsed as an option. */
static int stage_overlay(int source_fd, int tmpfs_fd, struct brig_error **err)
{
    char opts[256], target[64];
    snprintf(opts, sizeof(opts), "lowerdir=/proc/self/fd/%d,upperdir=/proc/self/fd/%d/upper,"
             "workdir=/proc/self/fd/%d/work,redirect_dir=off,index=off,metacopy=off,xino=off",
             source_fd, tmpfs_fd, tmpfs_fd);
    snprintf(target, sizeof(target), "/proc/self/fd/%d/merged", tmpfs_fd);
    if (mount("brig-workspace", target, "overlay", MS_NOSUID | MS_NODEV, opts) < 0)
        return brig_fail(err, errno, "mount the staged workspace's overlay%s",
                         errno == ENODEV ? " (no overlay filesystem in this kernel)" : "");
    int fd = openat(tmpfs_fd, "merged", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "open the staged workspace");
    return fd;
}

static int stage_one(struct brig_spec *s, size_t i, int state_dirfd, struct brig_error **err)
{
    struct brig_mount *m = &s->mounts[i];
    struct stat st;
    char real[4096];
    if (m->source_fd < 0 || fstat(m->source_fd, &st) < 0 || !S_ISDIR(st.st_mode))
        return brig_failx(err, "%s: not a directory", m->source);
    TRY(brig_fd_where(m->source_fd, real, sizeof(real), err));
    /* the record first: a brig killed from now on leaves what delete needs */
    TRY(stage_record_write(state_dirfd, real, &st, m->stage_bytes, s, m, err));
    autoclose int lower = -1;
    if (mounts_idmap_wanted(m)) {
        bool own = m->n_uid_mappings > 0;
        st.st_uid = stage_seen_id(own ? m->uid_mappings : s->linux_cfg.uid_mappings,
                                  own ? m->n_uid_mappings : s->linux_cfg.n_uid_mappings, st.st_uid);
        st.st_gid = stage_seen_id(own ? m->gid_mappings : s->linux_cfg.gid_mappings,
                                  own ? m->n_gid_mappings : s->linux_cfg.n_gid_mappings, st.st_gid);
        TRY(mounts_idmap_prepare(s, i, m->source_fd, false, err));
        lower = m->tree_fd;     /* the overlay keeps the layer; this fd goes */
        m->has_tree_fd = false;
        m->tree_fd = -1;
        stage_drop_idmap(m);
    }
    autoclose int tmpfs = stage_tmpfs(state_dirfd, m->stage_bytes, &st, err);
    if (tmpfs < 0) return -1;
    int merged = stage_overlay(lower >= 0 ? lower : m->source_fd, tmpfs, err);
    if (merged < 0) return -1;
    char where[4096];
    if (brig_fd_where(merged, where, sizeof(where), err) < 0) {
        close(merged);
        return -1;
    }
    /* The init binds the overlay (by this path, checked against the fd);
     * the fd lives as long as brig, as the policy's pinned sources do. */
    free(m->source);
    m->source = brig_strdup(where);
    m->source_fd = merged;
    m->staged = true;
    brig_debug("workspace %s staged at %s, %" PRIu64 " bytes", real, where, m->stage_bytes);
    return 0;
}

int policy_stage_make(struct brig_spec *s, int state_dirfd, bool *any, struct brig_error **err)
{
    *any = false;
    for (size_t i = 0; i < s->n_mounts; i++) {
        struct brig_mount *m = &s->mounts[i];
        if (m->stage_bytes == 0 || m->staged) continue;
        if (*any) return brig_failx(err, "mounts[%zu]: a second staged workspace", i);
        if (stage_one(s, i, state_dirfd, err) < 0) return brig_wrap(err, "workspace.maxSize: mounts[%zu]", i);
        *any = true;
    }
    return 0;
}

void stage_unmount(int state_dirfd)
{
    char p[96];
    snprintf(p, sizeof(p), "/proc/self/fd/%d/" STAGE_DIR "/merged", state_dirfd);
    if (umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL && errno != ENOENT)
        brig_debug("staged workspace: umount %s: %s", p, strerror(errno));
    snprintf(p, sizeof(p), "/proc/self/fd/%d/" STAGE_DIR, state_dirfd);
    if (umount2(p, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL && errno != ENOENT)
        brig_debug("staged workspace: umount %s: %s", p, strerror(errno));
    unlinkat(state_dirfd, STAGE_DIR, AT_REMOVEDIR);
    unlinkat(state_dirfd, STAGE_RECORD, 0);
}

void policy_stage_discard(int state_dirfd)
{
    struct stat st;
    if (fstatat(state_dirfd, STAGE_RECORD, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
        fstatat(state_dirfd, STAGE_DIR, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return;
    stage_unmount(state_dirfd);
}

bool policy_stage_full(int state_dirfd)
{
    struct statfs sf;
    autoclose int fd = openat(state_dirfd, STAGE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstatfs(fd, &sf) < 0 || sf.f_type != 0x01021994 /* TMPFS_MAGIC */) return false;
    /* ENOSPC comes when not one more page (or inode) is free */
    return sf.f_bavail == 0 || sf.f_ffree == 0;
}
