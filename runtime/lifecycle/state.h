/* Container state: one directory per container under the --root, holding
 * state.json (written atomically), a copy of config.json and, while the
 * container is "created", exec.fifo. The directory fd is flock()ed for the
 * duration of every command on that container. */
#ifndef BRIG_STATE_H
#define BRIG_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../config/json.h"
#include "../config/spec.h"
#include "../linux/rootfs/rootfs.h"

enum brig_status {
    BRIG_STATUS_CREATING,
    BRIG_STATUS_CREATED,
    BRIG_STATUS_RUNNING,
    BRIG_STATUS_STOPPED,
    /* Not an OCI status: a created/running container whose cgroup is
     * frozen, reported as runc does (lifecycle/cgroup_ops.h). */
    BRIG_STATUS_PAUSED,
};

struct brig_state {
    char *id;
    char *bundle;
    char *oci_version;
    char *rootfs;
    pid_t pid;                  /* 0 while creating */
    uint64_t pid_start_time;    /* /proc/<pid>/stat field 22, guards pid reuse */
    char *created;              /* RFC 3339 */
    bool setup_done;            /* create finished: created or later */
    char *cgroup;               /* cgroup_serialize() text, may be NULL */
    /* No mount namespace of its own, with mounts: the bind of the root
     * they are below (rootfs_shared.c), detached by delete. */
    bool has_shared_mnt;        struct rootfs_shared_mnt shared_mnt;
    struct brig_kv *annotations; size_t n_annotations;
};

/* The "sharedMount" member of a parsed state.json into st (absent: none). */
int state_parse_shared_mnt(brig_json root, struct brig_state *st, struct brig_error **err);

/* state_read takes a state.json up to this size. */
#define STATE_FILE_MAX (4u << 20)
/* Room kept for the cgroup's description (every hierarchy's path, escaped
 * twice) when a new container's state is measured before it exists. */
#define STATE_CGROUP_RESERVE (512u << 10)

/* Validate a container id: [A-Za-z0-9][A-Za-z0-9_.+-]*, at most 1024. */
int state_validate_id(const char *id, struct brig_error **err);

/* Create <root>/<id> (exclusive: "container \"id\" already exists"), lock it
 * and return its fd. root is created 0700 if missing. */
int state_dir_create(const char *root, const char *id, int *dirfd, struct brig_error **err);
/* The same, also handing over the --root fd (checked as state_dir_create
 * does) when rootfd is not NULL: run removes its container through it. */
int state_dir_make(const char *root, const char *id, int *rootfd, int *dirfd,
                   struct brig_error **err);
/* Lock again a container dir fd whose lock was released (run, while the
 * container runs); "does not exist" (ENOENT) if it was removed meanwhile. */
int state_relock(int dirfd, const char *id, struct brig_error **err);
/* Open and lock an existing container dir ("container id does not exist").
 * The exclusive flock is held until *dirfd is closed: keep the fd open for
 * the whole command, close it before waiting on a long-running container. */
int state_dir_open(const char *root, const char *id, int *dirfd, struct brig_error **err);
/* Same without the lock, for read-only queries (state, list) that must not
 * block behind a long create. state.json is replaced atomically. */
int state_dir_open_unlocked(const char *root, const char *id, int *dirfd,
                            struct brig_error **err);
/* "container <id> does not exist" with errnum ENOENT (no strerror text), so
 * callers such as delete --force can tell it from other failures. */
int state_fail_not_exist(const char *id, struct brig_error **err);
/* Remove <root>/<id> entirely. */
int state_dir_remove(const char *root, const char *id, struct brig_error **err);
/* The same through the fds of --root and of the (locked) dir itself. */
int state_dir_remove_known(int rootfd, int dirfd, const char *id, struct brig_error **err);

/* --root itself, checked as every command checks it (ours, not group or
 * world writable, no symlink); made when missing and create is set. */
int state_root_open(const char *root, bool create, int *out, struct brig_error **err);

/* A failed write under the state root: when it failed for want of room
 * (ENOSPC, EDQUOT) or on a read-only file system (EROFS), *err says so and
 * what to do about it. Returns -1. */
int state_root_hint(struct brig_error **err);

/* Ids of the container directories under root, sorted, NULL-terminated.
 * A root that does not exist yet holds no containers. */
int state_list_ids(const char *root, char ***ids, size_t *n, struct brig_error **err);

/* Both need the directory's lock. state.json is replaced atomically; the
 * copy of config.json is written once, into a directory just created. */
int state_write(int dirfd, const struct brig_state *st, struct brig_error **err);
int state_write_config(int dirfd, const char *text, size_t len, struct brig_error **err);
int state_read(int dirfd, struct brig_state **out, struct brig_error **err);
/* A new container's state (its cgroup not known yet) will fit what
 * state_read takes back; else fails naming the field that makes it large
 * ("annotations: ..."). Checked before anything of the container exists. */
int state_check_size(const struct brig_state *st, struct brig_error **err);
/* For `delete --force` of a state.json state_read refuses (larger than it
 * takes, cut short, corrupt after its first members): the members that can
 * still be read from its start, up to the first that cannot. *out has the
 * id (given, or checked against it), and what was read of pid,
 * pidStartTime, setupDone, cgroup, bundle, rootfs, created; no annotations.
 * Fails when neither the init nor the cgroup can be known. */
int state_read_salvage(int dirfd, const char *id, struct brig_state **out,
                       struct brig_error **err);
/* state_read, and where it refuses the file (corrupt, cut short, too
 * large) what state_read_salvage still reads of it, with *broken set to
 * why (malloc'd): `state`, `list`, `kill`, `ps` and `events` report such a
 * container as broken and act on what it still says. Fails with both
 * reasons when not even that can be read, and as state_read (ENOENT) when
 * there is no state.json. */
int state_read_tolerant(int dirfd, const char *id, struct brig_state **out, char **broken,
                        struct brig_error **err);
void state_free(struct brig_state *st);
void state_freep(struct brig_state **st);
#define autostate __attribute__((cleanup(state_freep)))

/* The status as seen now: process liveness (pid + start time), exec.fifo. */
enum brig_status state_status(int dirfd, const struct brig_state *st);
const char *state_status_name(enum brig_status s);
/* Start time of a live pid (field 22 of /proc/pid/stat), 0 if gone/zombie. */
uint64_t state_pid_start_time(pid_t pid);

/* Parse the text of /proc/<pid>/stat: field 3 (state) and 22 (starttime).
 * Returns -1 on malformed text. Exposed for tests. */
int state_parse_proc_stat(const char *text, char *state, uint64_t *start_time);

/* runc's "owner": the user name of the euid (--root must be owned by it),
 * "#<uid>" when it has no name. */
void state_owner_name(char *buf, size_t len);
/* The name of uid in the text of /etc/passwd ("name:pw:uid:..." lines) into
 * out; false if no line has that uid. Exposed for tests. */
bool state_passwd_name(const char *text, uid_t uid, char *out, size_t len);

/* The OCI state object (state-schema.json) as JSON text (malloc'd), with
 * runc's extra fields rootfs, created and owner. pid is 0 when stopped. */
char *state_to_oci_json(const struct brig_state *st, enum brig_status status, bool pretty);
/* The same object written into an open JSON writer (for list --format json). */
struct brig_jw;
void state_jw_write(struct brig_jw *w, const struct brig_state *st, enum brig_status status);

#endif
