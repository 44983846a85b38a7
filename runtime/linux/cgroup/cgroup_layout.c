/* Which cgroup hierarchies are mounted and where this process sits in each:
 * unified (cgroup2 only), hybrid (v1 controllers plus a cgroup2 mount, often
 * /sys/fs/cgroup/unified) or legacy (v1 only). Everything comes from
 * /proc/self/mountinfo and /proc/self/cgroup, read fresh by every command:
 * nothing is cached across processes, mounts may change. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_internal.h"
#include "../../util/cleanup.h"
#include "../../util/fs.h"
#include "../../util/log.h"
#include "../../util/strutil.h"

/* Superblock options of a v1 cgroup mount that name controllers. Anything
 * else there (rw, relatime, noprefix, clone_children, xattr, ...) is not one. */
static const char *const v1_known[] = {
    "cpuset", "cpu", "cpuacct", "blkio", "io", "memory", "devices", "freezer", "net_cls",
    "perf_event", "net_prio", "hugetlb", "pids", "rdma", "misc", "debug",
};

const char *cg_layout_name(enum cg_layout_kind k)
{
    switch (k) {
    case CG_UNIFIED: return "unified";
    case CG_HYBRID: return "hybrid";
    case CG_LEGACY: return "legacy";
    }
    return "?";
}

bool cg_list_has(const char *list, const char *ctrl)
{
    if (list == NULL || ctrl == NULL) return false;
    size_t l = strlen(ctrl);
    const char *p = list;
    while (*p != '\0') {
        size_t n = strcspn(p, ", \n");
        if (n == l && strncmp(p, ctrl, l) == 0) return true;
        p += n;
        while (*p == ',' || *p == ' ' || *p == '\n') p++;
    }
    return false;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r != '\0'; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

static char *v1_controllers(const char *superopts)
{
    size_t cap = strlen(superopts) + 1, len = 0;
    char *out = brig_calloc(1, cap);
    const char *p = superopts;
    while (*p != '\0') {
        size_t n = strcspn(p, ",");
        bool keep = n > 5 && strncmp(p, "name=", 5) == 0;
        for (size_t i = 0; !keep && i < BRIG_ARRAY_SIZE(v1_known); i++)
            keep = strlen(v1_known[i]) == n && strncmp(p, v1_known[i], n) == 0;
        if (keep) {
            if (len > 0) out[len++] = ',';
            memcpy(out + len, p, n);
            len += n;
            out[len] = '\0';
        }
        p += n;
        if (*p == ',') p++;
    }
    return out;
}

/* Two controller lists name the same set ("cpu,cpuacct" vs "cpuacct,cpu"). */
static bool same_set(const char *a, const char *b)
{
    autofree char *ca = brig_strdup(a);
    size_t na = 0;
    for (char *save = NULL, *t = strtok_r(ca, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!cg_list_has(b, t)) return false;
        na++;
    }
    autofree char *cb = brig_strdup(b);
    size_t nb = 0;
    for (char *save = NULL, *t = strtok_r(cb, ",", &save); t; t = strtok_r(NULL, ",", &save))
        nb++;
    return na == nb && na > 0;
}

static void add_hier(struct cg_layout *l, bool v2, const char *mnt, const char *root,
                     char *controllers)
{
    for (size_t i = 0; i < l->n; i++) {
        /* The same hierarchy mounted twice (bind mounts): the first wins. */
        if (l->h[i].v2 == v2 && (v2 || same_set(l->h[i].controllers, controllers))) {
            free(controllers);
            return;
        }
    }
    struct cg_hier *nh = realloc(l->h, (l->n + 1) * sizeof(*nh));
    if (nh == NULL) abort();
    l->h = nh;
    l->h[l->n++] = (struct cg_hier){
        .v2 = v2, .mnt = brig_strdup(mnt), .mnt_root = brig_strdup(root),
        .controllers = controllers, .own = NULL,
    };
}

static void cg_hier_free(struct cg_hier *h)
{
    free(h->mnt);
    free(h->mnt_root);
    free(h->controllers);
    free(h->own);
}

/* A later mount at or above a hierarchy's mount point hides it (e.g. a
 * tmpfs over /sys/fs/cgroup/unified): it is no longer reachable there. */
static void drop_covered(struct cg_layout *l, const char *mnt)
{
    size_t n = strlen(mnt), w = 0;
    for (size_t i = 0; i < l->n; i++) {
        const char *m = l->h[i].mnt;
        /* ("/" itself is not taken as covering: the root's place in the
         * list says nothing after a switch_root.) */
        bool covered = strcmp(mnt, "/") != 0 && strncmp(m, mnt, n) == 0 &&
                       (m[n] == '\0' || m[n] == '/');
        if (covered) {
            brig_debug("cgroup: %s is covered by a later mount on %s", m, mnt);
            cg_hier_free(&l->h[i]);
        } else {
            l->h[w++] = l->h[i];
        }
    }
    l->n = w;
}

static int parse_mountinfo(const char *text, struct cg_layout *l, struct brig_error **err)
{
    autofree char *copy = brig_strdup(text);
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *sep = strstr(line, " - ");
        if (sep == NULL) continue;
        *sep = '\0';
        char *fields[6] = {0};
        size_t nf = 0;
        char *fs = NULL;
        for (char *t = strtok_r(line, " ", &fs); t && nf < 6; t = strtok_r(NULL, " ", &fs))
            fields[nf++] = t;
        if (nf < 5) return brig_failx(err, "/proc/self/mountinfo: malformed line");
        char *tail = sep + 3, *ts = NULL;
        char *fstype = strtok_r(tail, " ", &ts);
        char *source = strtok_r(NULL, " ", &ts);
        char *superopts = strtok_r(NULL, " ", &ts);
        if (fstype == NULL) continue;
        unescape(fields[3]);
        unescape(fields[4]);
        drop_covered(l, fields[4]);
        bool v2 = strcmp(fstype, "cgroup2") == 0;
        if (!v2 && strcmp(fstype, "cgroup") != 0) continue;
        (void)source;
        char *ctrls = v2 ? brig_strdup("") : v1_controllers(superopts ? superopts : "");
        if (!v2 && ctrls[0] == '\0') {
            free(ctrls);
            continue;
        }
        add_hier(l, v2, fields[4], fields[3], ctrls);
    }
    return 0;
}

/* The path from /proc/self/cgroup is relative to the hierarchy's root; the
 * mount may show only a subtree (mnt_root), which the path must be cut to. */
static char *own_in_mount(const char *path, const char *mnt_root)
{
    if (strcmp(mnt_root, "/") == 0) return brig_strdup(path);
    size_t n = strlen(mnt_root);
    if (strncmp(path, mnt_root, n) == 0 && (path[n] == '/' || path[n] == '\0'))
        return brig_strdup(path[n] == '\0' ? "/" : path + n);
    return brig_strdup(path);
}

static int parse_proc_cgroup(const char *text, struct cg_layout *l, struct brig_error **err)
{
    autofree char *copy = brig_strdup(text);
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL) return brig_failx(err, "/proc/self/cgroup: malformed line \"%s\"", line);
        *c1 = *c2 = '\0';
        const char *ctrls = c1 + 1, *path = c2 + 1;
        bool v2 = strcmp(line, "0") == 0 && *ctrls == '\0';
        for (size_t i = 0; i < l->n; i++) {
            struct cg_hier *h = &l->h[i];
            if (h->own != NULL || h->v2 != v2) continue;
            if (!v2 && !same_set(h->controllers, ctrls)) continue;
            h->own = own_in_mount(path, h->mnt_root);
        }
    }
    return 0;
}

int cg_layout_parse(const char *mountinfo, const char *proc_cgroup, struct cg_layout *out,
                    struct brig_error **err)
{
    struct cg_layout l = {0};
    if (parse_mountinfo(mountinfo, &l, err) < 0 || parse_proc_cgroup(proc_cgroup, &l, err) < 0) {
        cg_layout_clear(&l);
        return -1;
    }
    bool has_v2 = false, has_v1 = false;
    for (size_t i = 0; i < l.n; i++) {
        /* A hierarchy this process is not in (another cgroup namespace's
         * view, stale mount) cannot be used: nothing to place relative to. */
        if (l.h[i].own == NULL) l.h[i].own = brig_strdup("/");
        if (l.h[i].v2) has_v2 = true;
        else if (strncmp(l.h[i].controllers, "name=", 5) != 0) has_v1 = true;
    }
    if (!has_v2 && !has_v1) {
        cg_layout_clear(&l);
        return brig_failx(err, "no cgroup filesystem is mounted (see /proc/self/mountinfo)");
    }
    l.kind = has_v2 && !has_v1 ? CG_UNIFIED : has_v2 ? CG_HYBRID : CG_LEGACY;
    *out = l;
    return 0;
}

int cg_layout_detect(struct cg_layout *out, struct brig_error **err)
{
    autofree char *mi = NULL, *pc = NULL;
    if (brig_read_file("/proc/self/mountinfo", 4 << 20, &mi, NULL, err) < 0 ||
        brig_read_file("/proc/self/cgroup", 1 << 20, &pc, NULL, err) < 0)
        return brig_wrap(err, "cgroup layout");
    TRY(cg_layout_parse(mi, pc, out, err));
    for (size_t i = 0; i < out->n; i++) {
        struct cg_hier *h = &out->h[i];
        if (!h->v2) continue;
        char *c = NULL;
        if (cg_read(h->mnt, "cgroup.controllers", &c, err) < 0) {
            cg_layout_clear(out);
            return brig_wrap(err, "cgroup layout");
        }
        free(h->controllers);
        h->controllers = c;
        /* Trim the trailing newline so the list prints well in messages. */
        size_t n = strlen(c);
        while (n > 0 && (c[n - 1] == '\n' || c[n - 1] == ' ')) c[--n] = '\0';
    }
    brig_debug("cgroup layout: %s, %zu hierarchies", cg_layout_name(out->kind), out->n);
    return 0;
}

void cg_layout_clear(struct cg_layout *l)
{
    for (size_t i = 0; i < l->n; i++) {
        cg_hier_free(&l->h[i]);
    }
    free(l->h);
    *l = (struct cg_layout){0};
}

const struct cg_hier *cg_layout_v2(const struct cg_layout *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->h[i].v2) return &l->h[i];
    return NULL;
}

const struct cg_hier *cg_layout_v1(const struct cg_layout *l, const char *ctrl)
{
    for (size_t i = 0; i < l->n; i++)
        if (!l->h[i].v2 && cg_list_has(l->h[i].controllers, ctrl)) return &l->h[i];
    return NULL;
}
