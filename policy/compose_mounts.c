/* compose_mounts: the mounts and devices Docker 20.10 gives a service:
 * its defaults (moby's oci.DefaultLinuxSpec), tmpfs, volumes (short and
 * long syntax), secrets and configs from files, and devices. Host paths
 * are made absolute lexically, as compose does, so that the rules judge
 * the path Docker would bind. */
#include "compose_map.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "../runtime/util/cleanup.h"
#include "../runtime/util/strutil.h"

static void mount_add(struct ptree *mounts, const char *dest, const char *type, const char *source,
                      const char *const *opts, const char *extra)
{
    struct ptree *m = ptree_new(PT_OBJ);
    ptree_set(m, "destination", ptree_new_str(dest));
    ptree_set(m, "type", ptree_new_str(type));
    ptree_set(m, "source", ptree_new_str(source));
    struct ptree *o = ptree_new_strv((char *const *)opts);
    /* extra: a comma-separated list of user options (tmpfs "size=64m,mode=1777"). */
    autofree char *copy = extra ? brig_strdup(extra) : NULL;
    for (char *save = NULL, *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save))
        ptree_push(o, ptree_new_str(t));
    ptree_set(m, "options", o);
    ptree_push(mounts, m);
}

static void mounts_default(struct ptree *mounts, bool privileged)
{
    static const char *const proc[] = { "nosuid", "noexec", "nodev", NULL };
    static const char *const dev[] = { "nosuid", "strictatime", "mode=755", "size=65536k", NULL };
    static const char *const pts[] = { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620",
                                       "gid=5", NULL };
    static const char *const sys_ro[] = { "nosuid", "noexec", "nodev", "ro", NULL };
    static const char *const sys_rw[] = { "nosuid", "noexec", "nodev", "rw", NULL };
    static const char *const mq[] = { "nosuid", "noexec", "nodev", NULL };
    static const char *const shm[] = { "nosuid", "noexec", "nodev", "mode=1777", "size=67108864", NULL };
    mount_add(mounts, "/proc", "proc", "proc", proc, NULL);
    mount_add(mounts, "/dev", "tmpfs", "tmpfs", dev, NULL);
    mount_add(mounts, "/dev/pts", "devpts", "devpts", pts, NULL);
    mount_add(mounts, "/sys", "sysfs", "sysfs", privileged ? sys_rw : sys_ro, NULL);
    mount_add(mounts, "/sys/fs/cgroup", "cgroup", "cgroup", privileged ? sys_rw : sys_ro, NULL);
    mount_add(mounts, "/dev/mqueue", "mqueue", "mqueue", mq, NULL);
    mount_add(mounts, "/dev/shm", "tmpfs", "shm", shm, NULL);
}

/* "a/./b/../c" under base, lexically: compose makes relative sources
 * absolute this way, before any symlink is looked at. */
static char *path_absolute(const char *base, const char *rel)
{
    const char *home = getenv("HOME");
    autofree char *joined = rel[0] == '/' ? brig_strdup(rel)
                            : rel[0] == '~' ? brig_asprintf("%s/%s", home ? home : "/root", rel + 1)
                                            : brig_asprintf("%s/%s", base, rel);
    char *out = brig_calloc(strlen(joined) + 2, 1);
    size_t o = 0;
    for (char *save = NULL, *t = strtok_r(joined, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
        if (strcmp(t, ".") == 0) continue;
        if (strcmp(t, "..") == 0) {
            while (o > 0 && out[o - 1] != '/') o--;
            if (o > 0) o--;
            continue;
        }
        out[o++] = '/';
        memcpy(out + o, t, strlen(t));
        o += strlen(t);
    }
    if (o == 0) out[o++] = '/';
    out[o] = '\0';
    return out;
}

static bool source_is_path(const char *s)
{
    return s[0] == '/' || s[0] == '.' || s[0] == '~';
}

static void mount_bind(struct cmap *c, struct ptree *mounts, const char *source, const char *dest, bool ro)
{
    static const char *const rw[] = { "rbind", "rprivate", NULL };
    static const char *const rdo[] = { "rbind", "rprivate", "ro", NULL };
    autofree char *src = source_is_path(source) ? path_absolute(c->d->dir, source)
                                                /* A named volume: Docker's directory for it. */
                                                : brig_asprintf("/var/lib/docker/volumes/%s/_data", source);
    mount_add(mounts, dest, "bind", src, ro ? rdo : rw, NULL);
}

static void volume_short(struct cmap *c, struct ptree *mounts, const char *spec, size_t i)
{
    autofree char *copy = brig_strdup(spec);
    char *parts[3] = { NULL };
    size_t n = 0;
    for (char *save = NULL, *t = strtok_r(copy, ":", &save); t && n < 3; t = strtok_r(NULL, ":", &save))
        parts[n++] = t;
    const char *src = NULL, *dst = NULL, *mode = "";
    if (n == 1) {
        dst = parts[0];
    } else if (n == 2 && parts[1][0] != '/') {
        dst = parts[0];
        mode = parts[1];
    } else if (n >= 2) {
        src = parts[0];
        dst = parts[1];
        mode = n == 3 ? parts[2] : "";
    }
    if (dst == NULL || dst[0] != '/') {
        cmap_note(c, "volumes[%zu]: not SOURCE:TARGET[:MODE] with an absolute target", i);
        return;
    }
    bool ro = false;
    autofree char *modes = brig_strdup(mode);
    for (char *save = NULL, *t = strtok_r(modes, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (strcmp(t, "ro") == 0) ro = true;
    /* An anonymous volume is a fresh directory of Docker's own. */
    mount_bind(c, mounts, src ? src : "<anonymous volume>", dst, ro);
}

static void volume_long(struct cmap *c, struct ptree *mounts, yaml_node_t *v, size_t i)
{
    const char *type = compose_scalar(compose_get(c->d, v, "type"));
    const char *src = compose_scalar(compose_get(c->d, v, "source"));
    const char *dst = compose_scalar(compose_get(c->d, v, "target"));
    bool ro = compose_bool(compose_get(c->d, v, "read_only")) == 1;
    if (dst == NULL || dst[0] != '/' || type == NULL) {
        cmap_note(c, "volumes[%zu]: needs type and an absolute target", i);
        return;
    }
    if (strcmp(type, "tmpfs") == 0) {
        static const char *const opts[] = { "nosuid", "nodev", "noexec", NULL };
        yaml_node_t *t = compose_get(c->d, v, "tmpfs");
        const char *size = compose_scalar(compose_get(c->d, t, "size"));
        autofree char *extra = size ? brig_asprintf("size=%s", size) : NULL;
        mount_add(mounts, dst, "tmpfs", "tmpfs", opts, extra);
    } else if (strcmp(type, "bind") == 0 || strcmp(type, "volume") == 0) {
        if (src == NULL && strcmp(type, "bind") == 0) {
            cmap_note(c, "volumes[%zu]: a bind needs a source", i);
            return;
        }
        mount_bind(c, mounts, src ? src : "<anonymous volume>", dst, ro);
    } else {
        cmap_note(c, "volumes[%zu]: type \"%s\" is not judged by brig", i, type);
    }
}

static void mounts_tmpfs(struct cmap *c, struct ptree *mounts)
{
    static const char *const opts[] = { "nosuid", "nodev", "noexec", NULL };
    autofree const char **list = cmap_strings(c, cmap_get(c, "tmpfs"), "tmpfs");
    for (const char **t = list; *t; t++) {
        autofree char *dest = strndup(*t, strcspn(*t, ":"));
        if (dest == NULL) abort();
        const char *extra = strchr(*t, ':');
        mount_add(mounts, dest, "tmpfs", "tmpfs", opts, extra ? extra + 1 : NULL);
    }
}

/* secrets and configs: a top-level entry with `file:` is bound read-only
 * (at /run/secrets/NAME or /NAME); external ones come from the engine. */
static void mounts_files(struct cmap *c, struct ptree *mounts, const char *key, const char *dir)
{
    yaml_node_t *list = cmap_get(c, key);
    yaml_node_t *top = compose_get(c->d, compose_root(c->d), key);
    for (size_t i = 0; i < compose_len(list); i++) {
        yaml_node_t *it = compose_item(c->d, list, i);
        const char *name = compose_is_map(it) ? compose_scalar(compose_get(c->d, it, "source")) : compose_scalar(it);
        const char *target = compose_is_map(it) ? compose_scalar(compose_get(c->d, it, "target")) : NULL;
        const char *file = compose_scalar(compose_get(c->d, compose_get(c->d, top, name ? name : ""), "file"));
        if (name == NULL) {
            cmap_note(c, "%s[%zu]: expected a name", key, i);
            continue;
        }
        if (file == NULL) continue;
        autofree char *dest = target && target[0] == '/' ? brig_strdup(target)
                                                         : brig_asprintf("%s/%s", dir, target ? target : name);
        /* "secret.txt" is relative to the project, as "./secret.txt". */
        autofree char *src = source_is_path(file) ? brig_strdup(file) : brig_asprintf("./%s", file);
        mount_bind(c, mounts, src, dest, true);
    }
}

void cmap_mounts(struct cmap *c, struct ptree *mounts, bool privileged)
{
    mounts_default(mounts, privileged);
    mounts_tmpfs(c, mounts);
    yaml_node_t *vols = cmap_get(c, "volumes");
    for (size_t i = 0; i < compose_len(vols); i++) {
        yaml_node_t *v = compose_item(c->d, vols, i);
        if (compose_scalar(v)) volume_short(c, mounts, compose_scalar(v), i);
        else if (compose_is_map(v)) volume_long(c, mounts, v, i);
        else cmap_note(c, "volumes[%zu]: expected a string or a mapping", i);
    }
    if (vols != NULL && !compose_is_seq(vols)) cmap_note(c, "volumes: expected a list");
    mounts_files(c, mounts, "secrets", "/run/secrets");
    mounts_files(c, mounts, "configs", "");
}

static void device_rule(struct ptree *list, bool allow, const char *type, long major, long minor, const char *access)
{
    struct ptree *r = ptree_new(PT_OBJ);
    ptree_set(r, "allow", ptree_new_bool(allow));
    ptree_set(r, "type", ptree_new_str(type));
    if (major >= 0) ptree_set(r, "major", ptree_new_i64(major));
    if (minor >= 0) ptree_set(r, "minor", ptree_new_i64(minor));
    ptree_set(r, "access", ptree_new_str(access));
    ptree_push(list, r);
}

static void device_one(struct cmap *c, struct ptree *devs, struct ptree *rules, const char *spec, size_t i)
{
    autofree char *copy = brig_strdup(spec);
    char *save = NULL, *src = strtok_r(copy, ":", &save), *dst = strtok_r(NULL, ":", &save);
    char *perms = strtok_r(NULL, ":", &save);
    struct stat st;
    if (src == NULL || stat(src, &st) < 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
        cmap_note(c, "devices[%zu]: not a device node on this host: cannot be judged", i);
        return;
    }
    const char *type = S_ISCHR(st.st_mode) ? "c" : "b";
    struct ptree *d = ptree_new(PT_OBJ);
    ptree_set(d, "path", ptree_new_str(dst && dst[0] == '/' ? dst : src));
    ptree_set(d, "type", ptree_new_str(type));
    ptree_set(d, "major", ptree_new_i64(major(st.st_rdev)));
    ptree_set(d, "minor", ptree_new_i64(minor(st.st_rdev)));
    ptree_push(devs, d);
    device_rule(rules, true, type, major(st.st_rdev), minor(st.st_rdev), perms ? perms : "rwm");
}

/* moby's default device cgroup rules: deny all; mknod of any node (no
 * read or write of it); the usual character devices; the container's own
 * ptys (136:*) and /dev/net/tun. */
void cmap_devices(struct cmap *c, struct ptree *lin, struct ptree *res, bool privileged)
{
    struct ptree *rules = ptree_arr(res, "devices");
    device_rule(rules, false, "a", -1, -1, "rwm");
    if (privileged) {
        device_rule(rules, true, "a", -1, -1, "rwm");
        return;
    }
    static const struct { const char *t; long maj, min; } dflt[] = {
        { "c", 1, 5 }, { "c", 1, 3 }, { "c", 1, 9 }, { "c", 1, 8 }, { "c", 5, 0 }, { "c", 5, 1 },
        { "c", 1, 7 }, { "c", 136, -1 }, { "c", 5, 2 }, { "c", 10, 200 },
    };
    device_rule(rules, true, "c", -1, -1, "m");
    device_rule(rules, true, "b", -1, -1, "m");
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(dflt); i++)
        device_rule(rules, true, dflt[i].t, dflt[i].maj, dflt[i].min, "rwm");
    yaml_node_t *n = cmap_get(c, "devices");
    struct ptree *devs = ptree_arr(lin, "devices");
    for (size_t i = 0; i < (compose_is_seq(n) ? compose_len(n) : 0); i++) {
        yaml_node_t *it = compose_item(c->d, n, i);
        if (compose_scalar(it) != NULL) {
            device_one(c, devs, rules, compose_scalar(it), i);
        } else if (compose_is_map(it)) {
            const char *s = compose_scalar(compose_get(c->d, it, "source"));
            const char *t = compose_scalar(compose_get(c->d, it, "target"));
            const char *p = compose_scalar(compose_get(c->d, it, "permissions"));
            autofree char *spec = brig_asprintf("%s:%s:%s", s ? s : "", t ? t : "", p ? p : "rwm");
            device_one(c, devs, rules, spec, i);
        }
    }
    if (n != NULL && !compose_is_seq(n)) cmap_note(c, "devices: expected a list");
}
