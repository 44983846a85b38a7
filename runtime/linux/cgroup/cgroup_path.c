/* linux.cgroupsPath -> a directory in each hierarchy (config-linux.md,
 * "Cgroups path"). Follows runc's rules:
 *   - absolute: taken as given, below each hierarchy's mount point;
 *   - relative, or absent (then the container id): below the caller's own
 *     cgroup (v1), or its parent on v2 (the caller's cgroup holds the caller,
 *     and a v2 cgroup with processes cannot enable controllers for children);
 *   - "slice:prefix:name" only with --systemd-cgroup: brig does not talk to
 *     systemd yet, so it needs systemd running and places the container at the
 *     cgroupfs path systemd would use, "<expanded slice>/<prefix>-<name>.scope".
 * A ".." component is refused rather than cleaned: it is never meaningful.
 * So is a component that names a control file ("cgroup.procs", "tasks",
 * "memory.max"): mkdir finds the file there (EEXIST) and the walk would
 * take it for a cgroup made by someone else; refused before anything is made. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup_internal.h"
#include "../../util/cleanup.h"
#include "../../util/log.h"
#include "../../util/strutil.h"

bool cg_systemd_running(void)
{
    /* sd_booted(): systemd creates this directory early at boot. */
    return access("/run/systemd/system", F_OK) == 0;
}

/* Normalize "a//b/./c" to "a/b/c" (keeping one leading '/'); fails on "..". */
static int normalize(const char *in, char **out, struct brig_error **err)
{
    size_t len = strlen(in);
    char *r = brig_calloc(1, len + 2);
    size_t w = 0;
    if (in[0] == '/') r[w++] = '/';
    const char *p = in;
    while (*p != '\0') {
        while (*p == '/') p++;
        size_t n = strcspn(p, "/");
        if (n == 0) break;
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            free(r);
            return brig_failx(err, "linux.cgroupsPath: \"%s\": \"..\" is not allowed", in);
        }
        if (!(n == 1 && p[0] == '.')) {
            if (w > 0 && r[w - 1] != '/') r[w++] = '/';
            memcpy(r + w, p, n);
            w += n;
        }
        p += n;
    }
    r[w] = '\0';
    *out = r;
    return 0;
}

int cg_path_expand_slice(const char *slice, char **out, struct brig_error **err)
{
    static const char suffix[] = ".slice";
    size_t len = strlen(slice), sl = sizeof(suffix) - 1;
    if (len <= sl || strcmp(slice + len - sl, suffix) != 0 || strchr(slice, '/') != NULL)
        return brig_failx(err, "invalid slice name \"%s\"", slice);
    if (strcmp(slice, "-.slice") == 0) {
        *out = brig_strdup("/");
        return 0;
    }
    /* "a-b-c.slice" is nested: /a.slice/a-b.slice/a-b-c.slice */
    size_t base = len - sl;
    char *r = brig_calloc(1, (base + sl + 2) * (base + 1));
    size_t w = 0;
    for (size_t i = 0; i <= base; i++) {
        if (i == base || slice[i] == '-') {
            if (i == 0 || slice[i - 1] == '-' || (i == base && slice[i - 1] == '-')) {
                free(r);
                return brig_failx(err, "invalid slice name \"%s\"", slice);
            }
            r[w++] = '/';
            memcpy(r + w, slice, i);
            w += i;
            memcpy(r + w, suffix, sl);
            w += sl;
        }
    }
    r[w] = '\0';
    *out = r;
    return 0;
}

static int resolve_systemd(const char *path, const char *id, char **inner,
                           struct brig_error **err)
{
    autofree char *slice = NULL, *prefix = NULL, *name = NULL;
    if (path == NULL || *path == '\0') {
        slice = brig_strdup("system.slice");
        prefix = brig_strdup("brig");
        name = brig_strdup(id);
    } else {
        const char *c1 = strchr(path, ':');
        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL || strchr(c2 + 1, ':') != NULL)
            return brig_failx(err, "linux.cgroupsPath: expected \"slice:prefix:name\" with "
                              "--systemd-cgroup, got \"%s\"", path);
        slice = strndup(path, (size_t)(c1 - path));
        prefix = strndup(c1 + 1, (size_t)(c2 - c1 - 1));
        name = brig_strdup(c2 + 1);
        if (slice == NULL || prefix == NULL) abort();
        if (*slice == '\0') {
            free(slice);
            slice = brig_strdup("system.slice");
        }
    }
    if (*name == '\0' || strchr(name, '/') != NULL || strchr(prefix, '/') != NULL ||
        strcmp(name, "..") == 0 || strcmp(name, ".") == 0)
        return brig_failx(err, "linux.cgroupsPath: \"%s\": invalid systemd unit name",
                          path ? path : "");
    autofree char *sp = NULL;
    if (cg_path_expand_slice(slice, &sp, err) < 0)
        return brig_wrap(err, "linux.cgroupsPath");
    autofree char *unit = NULL;
    size_t nl = strlen(name);
    if (nl > 6 && strcmp(name + nl - 6, ".slice") == 0) unit = brig_strdup(name);
    else if (*prefix == '\0') unit = brig_asprintf("%s.scope", name);
    else unit = brig_asprintf("%s-%s.scope", prefix, name);
    *inner = brig_asprintf("%s/%s", strcmp(sp, "/") == 0 ? "" : sp, unit);
    return 0;
}

/* The prefixes of every cgroup's control files, v1 and v2: "<prefix>.<file>".
 * Any name with one of them may be a file in some hierarchy, now or on a
 * later kernel; a cgroup directory never needs such a name. */
static const char *const control_prefixes[] = {
    "cgroup", "cpu", "cpuacct", "cpuset", "memory", "memsw", "blkio", "io", "devices",
    "freezer", "net_cls", "net_prio", "perf_event", "hugetlb", "pids", "rdma", "misc", "irq",
};
static const char *const control_names[] = { "tasks", "notify_on_release", "release_agent" };

bool cg_path_component_is_control(const char *name, size_t n)
{
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(control_names); i++)
        if (strlen(control_names[i]) == n && strncmp(name, control_names[i], n) == 0) return true;
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(control_prefixes); i++) {
        size_t pl = strlen(control_prefixes[i]);
        if (n > pl && name[pl] == '.' && strncmp(name, control_prefixes[i], pl) == 0) return true;
    }
    return false;
}

/* Every component a directory name the kernel can make, none a control
 * file's name; the whole path short enough to open below a mount point. */
static int check_components(const char *given, const char *inner, struct brig_error **err)
{
    if (strlen(inner) > PATH_MAX / 2)
        return brig_failx(err, "linux.cgroupsPath: %zu bytes long, at most %d", strlen(inner),
                          PATH_MAX / 2);
    for (const char *p = inner; *p != '\0';) {
        while (*p == '/') p++;
        size_t n = strcspn(p, "/");
        if (n > NAME_MAX)
            return brig_failx(err, "linux.cgroupsPath: a component is %zu bytes long, at most %d",
                              n, NAME_MAX);
        if (cg_path_component_is_control(p, n))
            return brig_failx(err, "linux.cgroupsPath: \"%s\": \"%.*s\" is the name of a cgroup "
                              "control file, not of a cgroup", given, (int)n, p);
        p += n;
    }
    return 0;
}

int cg_path_resolve(const char *cgroups_path, const char *id, bool systemd,
                    bool systemd_running, char **inner, struct brig_error **err)
{
    if (systemd) {
        if (!systemd_running)
            return brig_failx(err, "--systemd-cgroup: systemd is not running on this host "
                              "(no /run/systemd/system); use cgroupfs paths instead");
        TRY(resolve_systemd(cgroups_path, id, inner, err));
        if (check_components(cgroups_path ? cgroups_path : "", *inner, err) < 0) {
            free(steal_ptr(inner));
            return -1;
        }
        brig_debug("cgroup: systemd path \"%s\" -> %s", cgroups_path ? cgroups_path : "", *inner);
        return 0;
    }
    const char *p = cgroups_path;
    if (p == NULL || *p == '\0') {
        if (id == NULL || *id == '\0') return brig_failx(err, "cgroup: no container id");
        if (strchr(id, '/') != NULL || strcmp(id, "..") == 0 || strcmp(id, ".") == 0)
            return brig_failx(err, "cgroup: container id \"%s\" cannot name a cgroup", id);
        p = id;
    } else if (p[0] != '/' && strchr(p, '/') == NULL) {
        const char *c1 = strchr(p, ':');
        if (c1 != NULL && strchr(c1 + 1, ':') != NULL)
            return brig_failx(err, "linux.cgroupsPath: \"%s\" is the systemd form "
                              "\"slice:prefix:name\"; it needs --systemd-cgroup", p);
    }
    autofree char *n = NULL;
    TRY(normalize(p, &n, err));
    if (strcmp(n, "/") == 0 || *n == '\0')
        return brig_failx(err, "linux.cgroupsPath: \"%s\" names the root cgroup", p);
    TRY(check_components(p, n, err));
    *inner = steal_ptr(&n);
    return 0;
}

char *cg_path_in_hier(const struct cg_hier *h, const char *inner)
{
    const char *mnt = strcmp(h->mnt, "/") == 0 ? "" : h->mnt;
    if (inner[0] == '/') return brig_asprintf("%s%s", mnt, inner);
    autofree char *base = brig_strdup(h->own ? h->own : "/");
    if (h->v2 && strcmp(base, "/") != 0) {
        char *slash = strrchr(base, '/');
        if (slash == base) slash[1] = '\0';
        else if (slash != NULL) *slash = '\0';
    }
    size_t bl = strlen(base);
    while (bl > 0 && base[bl - 1] == '/') base[--bl] = '\0';
    return brig_asprintf("%s%s/%s", mnt, base, inner);
}
