/* The runner root filesystems of brig-rootfs (docs/rootfs.md), as a library
 * that both brig-rootfs and brig (the default rootfs of `brig sandbox run`)
 * link: runtime/meson.build puts these sources into libbrig.
 *
 *   host paths --rootfs_elf_closure--> + their interpreters and libraries
 *   tool names --rootfs_host_build--> a tree beside DEST, renamed onto it
 *   a tree --rootfs_manifest_scan--> entries --rootfs_manifest_diff--> drift */
#ifndef BRIG_ROOTFS_H
#define BRIG_ROOTFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "../../runtime/util/error.h"

/* ---- a growable list of strings (rootfs_strv.c) ---- */
struct rootfs_strv { char **v; size_t n, cap; };
void rootfs_strv_add(struct rootfs_strv *s, const char *str);       /* copies */
bool rootfs_strv_has(const struct rootfs_strv *s, const char *str);
/* Adds unless present; true when added. */
bool rootfs_strv_add_new(struct rootfs_strv *s, const char *str);
void rootfs_strv_free(struct rootfs_strv *s);
/* "a,b,,c" -> a b c appended. */
void rootfs_strv_split(struct rootfs_strv *s, const char *list, const char *seps);

/* ---- ELF dynamic dependencies (rootfs_elf.c) ---- */
/* Every file the dynamic loader would open to run the ELF at path inside
 * rootfd ("/" for the host): its PT_INTERP and its DT_NEEDED closure,
 * searched as ld.so does (DT_RPATH without DT_RUNPATH, DT_RUNPATH,
 * ld.so.conf's dirs, the default dirs), appended to out as absolute
 * in-root paths. A file that is not ELF adds nothing. A library found
 * nowhere is an error naming it and who needs it; with missing != NULL it
 * is appended there ("libfoo.so.1 (needed by /usr/bin/x)") instead. */
struct rootfs_elf_ctx;
int rootfs_elf_ctx_new(int rootfd, struct rootfs_elf_ctx **out, struct brig_error **err);
void rootfs_elf_ctx_free(struct rootfs_elf_ctx *c);
int rootfs_elf_closure(struct rootfs_elf_ctx *c, const char *path, struct rootfs_strv *out,
                       struct rootfs_strv *missing, struct brig_error **err);
/* 1: an ELF file, 0: not, -1: error. The #! interpreter of a script into
 * *interp (malloc'd, NULL if none). */
int rootfs_elf_is_elf(int fd);
int rootfs_script_interp(int fd, char **interp);

/* ---- progress of a long build or import, for a caller that shows it ---- */
struct rootfs_progress {
    /* done of total (units: entries for from-host, input bytes for import;
     * total 0: not known), entries made and bytes written so far. Called
     * often: the callee throttles. */
    void (*fn)(void *arg, uint64_t done, uint64_t total, uint64_t entries, uint64_t bytes);
    void *arg;
};

/* ---- from the host (rootfs_host.c, rootfs_host_tools.c) ---- */
/* The tools when --with names none, the runner of `brig sandbox run`: what
 * a shell command commonly runs, each where the host has it (sh must be):
 * a group (rootfs_host_group) stands for its programs, awk for the host's
 * (mawk or gawk through /etc/alternatives), ca-certificates for the
 * host's CA store. Changing it changes the default rootfs: bump
 * SANDBOX_ROOTFS_DEFAULT (sandbox/sandbox_rootfs.c) with it, so that a
 * brig with the old list and one with the new never share a directory. */
#define ROOTFS_HOST_DEFAULT_WITH \
    "sh,coreutils,findutils,diffutils,awk,sed,grep,tar,gzip,xz,zstd,procps,getent,setsid,which,ca-certificates"
#define ROOTFS_HOST_UID 1000
/* The programs of a group name ("coreutils", "findutils", "diffutils",
 * "procps", "gzip", "xz", "zstd"), NULL-terminated; NULL for another name. */
const char *const *rootfs_host_group(const char *name);
/* A tool whose TLS verifies against the system CA store (python3, pip,
 * curl, git, node, npm, wget): ca-certificates comes with it. */
bool rootfs_host_wants_ca(const char *tool);
struct rootfs_host_opts {
    const char *with;               /* comma list; NULL: ROOTFS_HOST_DEFAULT_WITH */
    bool replace;                   /* DEST may exist: swapped, the old tree removed */
    /* Where the manifest goes (may be NULL): written before DEST appears,
     * so a tree in place always has its manifest. */
    int manifest_dirfd;
    const char *manifest_name;
    const struct rootfs_progress *progress;     /* may be NULL */
};
/* What a build made (may be NULL in rootfs_host_build). */
struct rootfs_host_stats {
    uint64_t entries, bytes;
};
/* Build the tree named dest_name in dest_dirfd (a temp dir beside it,
 * renamed onto it). */
int rootfs_host_build(int dest_dirfd, const char *dest_name, const struct rootfs_host_opts *o,
                      struct rootfs_host_stats *stats, struct brig_error **err);

/* ---- manifests (rootfs_manifest.c) ---- */
enum rootfs_entry_type { ROOTFS_DIR = 'd', ROOTFS_FILE = 'f', ROOTFS_LINK = 'l', ROOTFS_OTHER = 'o' };
struct rootfs_entry {
    char *path;                     /* "/", "/usr/bin/sh" */
    char type;                      /* enum rootfs_entry_type; 'o': a device, fifo or socket */
    mode_t mode;                    /* permission bits (07777) */
    uid_t uid; gid_t gid;
    uint64_t size;                  /* files: bytes; links: target length; else 0 */
    int64_t mtime_s; long mtime_ns;
    char *target;                   /* links */
    char hash[65];                  /* files, when hashed: hex sha256; else "-" */
    /* Extended attributes (file capabilities, ACLs, security labels):
     * hex sha256 of the sorted names and values, "-" for none, "" not
     * read (a scan without hashing). A manifest of format 1 recorded none. */
    char xattrs[65];
    char *xattr_names;              /* scans only: "security.capability,..." */
    int64_t ctime_s; long ctime_ns; /* scans only: never written */
};
struct rootfs_manifest { struct rootfs_entry *e; size_t n, cap; };
void rootfs_manifest_free(struct rootfs_manifest *m);
/* Every entry under rootfd (sorted by path), hashed and its extended
 * attributes read when hash is true. Never follows a symlink; a tree
 * deeper than 256 levels is refused. The text is format 1 (no xattrs
 * column: what older brig-rootfs reads) when no entry has an xattr,
 * format 2 otherwise; the parser reads both. */
int rootfs_manifest_scan(int rootfd, bool hash, struct rootfs_manifest *out, struct brig_error **err);
char *rootfs_manifest_text(const struct rootfs_manifest *m, size_t *len);
int rootfs_manifest_parse(const char *text, size_t len, struct rootfs_manifest *out, struct brig_error **err);
/* Read and parse name in dirfd; *ctime: the file's status change time. */
int rootfs_manifest_load(int dirfd, const char *name, struct rootfs_manifest *out, struct timespec *ctime,
                         struct brig_error **err);
/* The same, with the fstat of the file as it was read. */
int rootfs_manifest_load_st(int dirfd, const char *name, struct rootfs_manifest *out, struct stat *st,
                            struct brig_error **err);
/* Drift of have against want, one line per difference ("added /x",
 * "removed /y", "changed /z: size 10 -> 12") appended to out, at most max
 * lines (then "... and N more"). hashes are compared when both sides have
 * them. not_after (may be NULL): a scan entry whose ctime is later (but
 * the root's: a rename touches it) changed after the manifest was written,
 * whatever its size and mtime now say. Returns the number of differences.
 * ROOTFS_DIFF_MOUNTPOINTS: what a runtime does to a rootfs it mounts is not
 * drift: an added empty directory or empty file (a mount point it made for
 * the config's mounts), and a directory's ctime (adding one touches it; the
 * entries themselves are still compared). */
#define ROOTFS_DIFF_MOUNTPOINTS 1u
/* ---- the per-use check without a scan (rootfs_quick.c) ---- */
/* A full check that found no difference at all records a stamp (a file
 * NAME beside the tree): this boot, the tree's root, the manifest it was
 * checked against (device, inode, size, mtime, ctime), and ref, a time the
 * filesystem gave before the scan began. */
/* ref: the ctime of a new (unnamed) inode in cachefd, taken before the
 * scan; -1 when there is none (then no stamp). */
int rootfs_stamp_begin(int cachefd, struct timespec *ref);
/* After a scan and a diff with no difference (flags 0): the stamp NAME in
 * cachefd for the tree at treefd and the manifest man (its fstat as it was
 * read). Best effort, silent: no stamp only means scanning again. */
void rootfs_stamp_commit(int cachefd, const char *name, int treefd, const struct stat *man,
                         const struct timespec *ref);
/* Whether the tree at treefd is proven to be what the last full check
 * saw, without listing it: the stamp names this boot, this tree's root and
 * this manifest unchanged, the tree is on cachefd's mount (nothing mounted
 * over it), the filesystem keeps ctimes (ext4, xfs, btrfs, tmpfs), and
 * rootfs_manifest_quick holds with the stamp's time. false only says "not
 * proven": scan and diff. */
bool rootfs_tree_proven(int cachefd, const char *stamp_name, int treefd, const struct stat *man,
                        const struct rootfs_manifest *want);
/* Every entry of want is still under rootfd as recorded (type, mode,
 * owner, size, mtime, a directory's too), on rootfd's mount and device,
 * with a ctime before ref: so, if the tree was exactly want at ref (a
 * full check then found no difference), it still is: a change to an entry
 * moves its ctime, and an entry added to or removed from a directory the
 * directory's ctime and mtime. */
bool rootfs_manifest_quick(int rootfd, const struct rootfs_manifest *want, const struct timespec *ref);
size_t rootfs_manifest_diff(const struct rootfs_manifest *want, const struct rootfs_manifest *have,
                            const struct timespec *not_after, unsigned flags, struct rootfs_strv *out,
                            size_t max);

/* ---- shared helpers (rootfs_strv.c) ---- */
/* Split a user-given DEST into an fd of its parent and its last name
 * (DEST itself is not opened: it may not exist yet). */
int rootfs_split_dest(const char *dest, int *parentfd, char **name, struct brig_error **err);
/* Percent-escape bytes a line format cannot hold (space, %, controls, >0x7e). */
char *rootfs_escape(const char *s);
char *rootfs_unescape(const char *s);

#endif
