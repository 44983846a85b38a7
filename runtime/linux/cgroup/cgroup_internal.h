/* Internal interfaces of the cgroup module (cgroup*.c only). Split by
 * concern: layout detection, path resolution, pure conversions, the plan
 * (which hierarchy enforces which field), v1 and v2 writers, state. */
#ifndef BRIG_CGROUP_INTERNAL_H
#define BRIG_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"

/* ---- layout (cgroup_layout.c) ------------------------------------------ */

enum cg_layout_kind { CG_UNIFIED, CG_HYBRID, CG_LEGACY };

/* One mounted hierarchy, as seen by this process. */
struct cg_hier {
    bool v2;
    char *mnt;          /* mount point, e.g. /sys/fs/cgroup/memory */
    char *mnt_root;     /* mountinfo "root" field ("/" unless a subtree is mounted) */
    char *controllers;  /* v1: "cpu,cpuacct" or "name=systemd"; v2: "memory pids ..." */
    char *own;          /* this process's cgroup inside the hierarchy, relative to mnt */
};

struct cg_layout {
    enum cg_layout_kind kind;
    struct cg_hier *h;
    size_t n;
};

/* Pure: build the layout from the text of /proc/self/mountinfo and
 * /proc/self/cgroup. v2 controllers are left empty (read them with
 * cg_layout_read_v2_controllers, or set them in tests). */
int cg_layout_parse(const char *mountinfo, const char *proc_cgroup, struct cg_layout *out,
                    struct brig_error **err);
/* Real: parse this process's files and read cgroup.controllers of v2. */
int cg_layout_detect(struct cg_layout *out, struct brig_error **err);
void cg_layout_clear(struct cg_layout *l);
const char *cg_layout_name(enum cg_layout_kind k);
const struct cg_hier *cg_layout_v2(const struct cg_layout *l);
/* The v1 hierarchy carrying controller ctrl ("memory", "name=systemd"), or NULL. */
const struct cg_hier *cg_layout_v1(const struct cg_layout *l, const char *ctrl);
/* ctrl is an element of a list separated by ',' or ' '. */
bool cg_list_has(const char *list, const char *ctrl);

/* ---- paths (cgroup_path.c) -------------------------------------------- */

/* linux.cgroupsPath -> inner path. Absolute results start with '/';
 * relative ones are resolved per hierarchy by cg_path_in_hier. systemd:
 * "slice:prefix:name" -> "/<expanded slice>/<prefix>-<name>.scope". */
int cg_path_resolve(const char *cgroups_path, const char *id, bool systemd,
                    bool systemd_running, char **inner, struct brig_error **err);
/* Expand a systemd slice name: "a-b.slice" -> "/a.slice/a-b.slice". */
int cg_path_expand_slice(const char *slice, char **out, struct brig_error **err);
/* The full directory of inner in hierarchy h. Relative paths go under the
 * caller's cgroup (v1) or its parent (v2: the caller's own cgroup has
 * processes, so it cannot delegate controllers to a child). */
char *cg_path_in_hier(const struct cg_hier *h, const char *inner);
/* name[0..n) is the name of a control file in some cgroup ("cgroup.procs",
 * "tasks", "<controller>.<file>"): never a cgroup directory's name. */
bool cg_path_component_is_control(const char *name, size_t n);
bool cg_systemd_running(void);
/* cgroup_delegate.c: the delegation (see cgroup_delegation_find) in h,
 * the v2 hierarchy; -1 with *inner NULL when there is none. */
int cg_delegation_in(const struct cg_hier *h, char **inner);

/* ---- conversions (cgroup_convert.c) ----------------------------------- */

/* cpu.shares (v1, 2..262144) -> cpu.weight (v2, 1..10000); 0 stays 0. */
uint64_t cg_shares_to_weight(uint64_t shares);
/* blkio.weight (10..1000) -> io.weight (1..10000); 0 stays 0. */
uint64_t cg_blkio_to_io_weight(uint64_t w);
/* OCI memory.swap is memory+swap; v2 memory.swap.max is swap only. An
 * explicit 0 is "no swap" (0). *out: -1 "max", 0 leave unset (when *set is
 * false), else bytes. */
int cg_swap_to_v2(const struct brig_opt_i64 *swap, int64_t limit, int64_t *out, bool *set,
                  struct brig_error **err);
/* "2MB", "1GB", "64kB" -> size in kB. */
int cg_hugepage_parse(const char *s, uint64_t *kb);
/* kB -> kernel's hugetlb file infix ("2MB", "1GB", "64KB"). */
void cg_hugepage_name(uint64_t kb, char *buf, size_t len);
/* Check that a page size is offered: sizes_kb is the list of the kernel's
 * (from /sys/kernel/mm/hugepages). On success *name is the file infix. */
int cg_hugepage_check(const char *field, const char *page_size, const uint64_t *sizes_kb,
                      size_t n_sizes, char *name, size_t len, struct brig_error **err);
int cg_hugepage_sizes(uint64_t **sizes_kb, size_t *n, struct brig_error **err);
/* Each hugepageLimits entry written to DIR/hugetlb.<size>.SUFFIX
 * ("limit_in_bytes" on v1, "max" on v2). */
int cg_hugepage_write(const char *dir, const struct brig_resources *r, const char *suffix,
                      struct brig_error **err);
/* linux.resources.blockIO's four throttle lists with their field names, in
 * the order read bps, write bps, read iops, write iops (v1 has a file for
 * each, v2 an io.max key). */
struct cg_throttle_list {
    const char *name;                        /* "throttleReadBpsDevice" */
    const struct brig_throttle_device *dev;
    size_t n;
};
void cg_throttle_lists(const struct brig_resources *r, struct cg_throttle_list out[4]);

/* ---- plan (cgroup_plan.c) --------------------------------------------- */

enum cg_ctrl {
    CG_MEMORY, CG_PIDS, CG_CPU, CG_CPUSET, CG_IO, CG_HUGETLB, CG_RDMA,
    CG_NET_CLS, CG_NET_PRIO, CG_DEVICES, CG_CTRL_COUNT
};

enum cg_where { CG_NONE = 0, CG_V1, CG_V2 };

struct cg_plan {
    enum cg_where where[CG_CTRL_COUNT];     /* which hierarchy enforces it */
    const char *field[CG_CTRL_COUNT];       /* first field that needs it */
};

const char *cg_ctrl_v1_name(enum cg_ctrl c);
const char *cg_ctrl_v2_name(enum cg_ctrl c);
/* Decide, before anything is created, where each requested limit goes, and
 * refuse (naming the field) what no mounted hierarchy can enforce. */
int cg_plan_make(const struct cg_layout *l, const struct brig_resources *r, struct cg_plan *p,
                 struct brig_error **err);

/* ---- the container's cgroup ------------------------------------------- */

struct cg_dir {
    char *path;          /* the container's directory in this hierarchy */
    bool v2;
    char *controllers;   /* v1: as mounted; v2: "" */
    unsigned created;    /* trailing components brig created (0: pre-existing) */
    unsigned walk_max;   /* levels of path, the leaf first, that a delete may
                          * remove: those below its mount point (an exec's
                          * leaf: 1, its parent is the container's cgroup);
                          * 0: not known (loaded from a state file) */
};

struct brig_cgroup {
    enum cg_layout_kind layout;
    struct cg_dir *dirs;
    size_t n_dirs;
    int v2_fd;           /* leaf dir fd (for CLONE_INTO_CGROUP), -1 */
    bool made_here;      /* by cgroup_create in this process (not loaded from a
                          * state file): paths and "created" are exact */
    char **joins;        /* v1 directories a process of this cgroup joins that
                          * are not its own (a child's parent where the child
                          * has no directory, cgroup_child.c): written by
                          * cgroup_attach*, never listed, killed or removed */
    size_t n_joins;
};

const struct cg_dir *cg_dir_v2(const struct brig_cgroup *cg);
const struct cg_dir *cg_dir_v1(const struct brig_cgroup *cg, const char *ctrl);

/* ---- file helpers (cgroup_fs.c) --------------------------------------- */

/* Write one value to dir/file; errors read "field: write dir/file "v": ...". */
int cg_write(const char *dir, const char *file, const char *field, const char *value,
             struct brig_error **err);
int cg_writef(const char *dir, const char *file, const char *field, struct brig_error **err,
              const char *fmt, ...) __attribute__((format(printf, 5, 6)));
bool cg_file_exists(const char *dir, const char *file);
int cg_read(const char *dir, const char *file, char **out, struct brig_error **err);
/* A one-value file (cpuset.cpus: the kernel shows it in one piece) in one
 * read(), without the final newline; a value that fills buf is an error. */
int cg_read_value(const char *dir, const char *file, char *buf, size_t size, struct brig_error **err);
/* Freeze dir: write value to dir/file, then wait up to 1 s for frozen(dir),
 * writing it again every 10 ms (v1 retries tasks that were busy; harmless on
 * v2). On timeout write undo and fail. */
int cg_freeze_wait(const char *dir, const char *file, const char *value, const char *undo,
                   bool (*frozen)(const char *dir), struct brig_error **err);
/* mkdir -p of path below mnt; *created counts the trailing components made. */
int cg_mkdir_p(const char *mnt, const char *path, unsigned *created, struct brig_error **err);
/* rmdir path and `created - 1` parents (the leaf retried while busy), then
 * the parents above marked as made by brig for containers, while empty. */
int cg_rmdir_created(const char *path, unsigned created, struct brig_error **err);
/* The same, for a leaf removed already (leaf_gone), the walk stopped at
 * level walk_max when > 0 (cg_dir.walk_max: the mount point, never a cgroup
 * brig made nor removable, or a container's cgroup) without a look at its
 * mark. */
int cg_rmdir_levels(const char *path, unsigned created, unsigned walk_max, bool leaf_gone,
                    struct brig_error **err);
/* Remove the cgroups below path (made inside the container), deepest first,
 * killing their processes (cgroup_subtree.c); the number left. */
int cg_subtree_remove(const char *path);
/* SIGKILL every process in the cgroup directory dirfd: how many were sent it. */
size_t cg_kill_members_at(int dirfd);
/* dir carries the mark of a parent brig made for containers. */
bool cg_parent_marked(const char *dir);
/* Pids listed in dir/cgroup.procs. */
int cg_read_pids(const char *dir, pid_t **pids, size_t *n, struct brig_error **err);
/* dir's pids and those of its child cgroups, depth levels down; what
 * cannot be read is left out. */
int cg_read_pids_tree(const char *dir, int depth, pid_t **pids, size_t *n);
/* path is on a cgroup (v1 or v2) filesystem. */
bool cg_is_cgroupfs(const char *path);

/* ---- writers (cgroup_v1.c, cgroup_v2.c) ------------------------------- */

int cgv1_apply(const struct brig_cgroup *cg, const struct cg_plan *p,
               const struct brig_resources *r, struct brig_error **err);
/* cpuset.cpus/mems of fresh v1 cpuset dirs start empty: copy the parent's. */
int cgv1_cpuset_init(const struct cg_dir *d, struct brig_error **err);
/* Freeze (true) or thaw a v1 freezer dir; waits for FROZEN. */
int cgv1_freeze(const char *dir, bool freeze, struct brig_error **err);
bool cgv1_frozen(const char *dir);

/* Enable controllers in every ancestor's cgroup.subtree_control (from the
 * mount point down to the leaf's parent). Required ones fail closed. */
int cgv2_enable_controllers(const char *mnt, const char *leaf, const char *available,
                            const struct cg_plan *p, struct brig_error **err);
int cgv2_apply(const struct brig_cgroup *cg, const struct cg_plan *p,
               const struct brig_resources *r, struct brig_error **err);
int cgv2_freeze(const char *dir, bool freeze, struct brig_error **err);

/* ---- v2 device filter (cgroup_devices_bpf.c) --------------------------- */

struct bpf_insn;
/* Assemble the BPF_PROG_TYPE_CGROUP_DEVICE program for rules plus the
 * default allowlist (last matching rule wins, default deny). */
int cg_devices_compile(const struct brig_device_rule *rules, size_t n, struct bpf_insn **out,
                       size_t *count, struct brig_error **err);
/* Load it and attach it to the v2 directory dir (BPF_F_ALLOW_MULTI). */
int cgv2_devices_apply(const char *dir, const struct brig_resources *r, struct brig_error **err);
bool cgv2_frozen(const char *dir);

#endif
