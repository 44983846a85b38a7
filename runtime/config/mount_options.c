/* OCI mounts[].options -> mount(2) flags, propagation, mount_setattr(2)
 * attributes and filesystem data, accepting every option runc and crun do.
 * As in runc, an option that is not a known flag is filesystem data
 * ("mode=755", "size=65536k", "newinstance"): the filesystem itself judges
 * it when the mount is made. */
#include "mount_options.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "../util/cleanup.h"
#include "../util/log.h"
#include "../util/strutil.h"

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif

struct mopt_flag {
    const char *name;
    bool clear;             /* the option removes the flag ("rw", "suid") */
    unsigned long flag;
};

static const struct mopt_flag mopt_flags[] = {
    { "defaults",      false, 0 },
    { "ro",            false, MS_RDONLY },
    { "rw",            true,  MS_RDONLY },
    { "suid",          true,  MS_NOSUID },
    { "nosuid",        false, MS_NOSUID },
    { "dev",           true,  MS_NODEV },
    { "nodev",         false, MS_NODEV },
    { "exec",          true,  MS_NOEXEC },
    { "noexec",        false, MS_NOEXEC },
    { "sync",          false, MS_SYNCHRONOUS },
    { "async",         true,  MS_SYNCHRONOUS },
    { "dirsync",       false, MS_DIRSYNC },
    { "remount",       false, MS_REMOUNT },
    { "mand",          false, MS_MANDLOCK },
    { "nomand",        true,  MS_MANDLOCK },
    { "atime",         true,  MS_NOATIME },
    { "noatime",       false, MS_NOATIME },
    { "diratime",      true,  MS_NODIRATIME },
    { "nodiratime",    false, MS_NODIRATIME },
    { "relatime",      false, MS_RELATIME },
    { "norelatime",    true,  MS_RELATIME },
    { "strictatime",   false, MS_STRICTATIME },
    { "nostrictatime", true,  MS_STRICTATIME },
    { "lazytime",      false, MS_LAZYTIME },
    { "nolazytime",    true,  MS_LAZYTIME },
    { "silent",        false, MS_SILENT },
    { "loud",          true,  MS_SILENT },
    { "iversion",      false, MS_I_VERSION },
    { "noiversion",    true,  MS_I_VERSION },
    { "nosymfollow",   false, MS_NOSYMFOLLOW },
    { "symfollow",     true,  MS_NOSYMFOLLOW },
};

/* Recursive attributes, applied with mount_setattr(AT_RECURSIVE) as runc
 * does for "rro" & co. Atime settings are a field, not bits: setting one
 * requires MOUNT_ATTR__ATIME in attr_clr (mount_setattr(2)). */
struct mopt_attr {
    const char *name;
    bool clear;
    uint64_t attr;
};

static const struct mopt_attr mopt_attrs[] = {
    { "rro",            false, MOUNT_ATTR_RDONLY },
    { "rrw",            true,  MOUNT_ATTR_RDONLY },
    { "rnosuid",        false, MOUNT_ATTR_NOSUID },
    { "rsuid",          true,  MOUNT_ATTR_NOSUID },
    { "rnodev",         false, MOUNT_ATTR_NODEV },
    { "rdev",           true,  MOUNT_ATTR_NODEV },
    { "rnoexec",        false, MOUNT_ATTR_NOEXEC },
    { "rexec",          true,  MOUNT_ATTR_NOEXEC },
    { "rnosymfollow",   false, MOUNT_ATTR_NOSYMFOLLOW },
    { "rsymfollow",     true,  MOUNT_ATTR_NOSYMFOLLOW },
    { "rnodiratime",    false, MOUNT_ATTR_NODIRATIME },
    { "rdiratime",      true,  MOUNT_ATTR_NODIRATIME },
    { "rnoatime",       false, MOUNT_ATTR_NOATIME },
    { "rstrictatime",   false, MOUNT_ATTR_STRICTATIME },
    { "rrelatime",      false, MOUNT_ATTR_RELATIME },
    /* leaving noatime/strictatime means going back to the default,
     * relatime; the kernel only accepts clearing the whole atime field */
    { "ratime",         false, MOUNT_ATTR_RELATIME },
    { "rnostrictatime", false, MOUNT_ATTR_RELATIME },
    { "rnorelatime",    false, MOUNT_ATTR_STRICTATIME },
};

static const struct {
    const char *name;
    unsigned long flags;
} mopt_propagations[] = {
    { "shared",      MS_SHARED },
    { "rshared",     MS_SHARED | MS_REC },
    { "slave",       MS_SLAVE },
    { "rslave",      MS_SLAVE | MS_REC },
    { "private",     MS_PRIVATE },
    { "rprivate",    MS_PRIVATE | MS_REC },
    { "unbindable",  MS_UNBINDABLE },
    { "runbindable", MS_UNBINDABLE | MS_REC },
};

int mount_propagation_parse(const char *s, unsigned long *out)
{
    if (s == NULL) return -1;
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(mopt_propagations); i++) {
        if (strcmp(s, mopt_propagations[i].name) == 0) {
            *out = mopt_propagations[i].flags;
            return 0;
        }
    }
    return -1;
}

static bool mopt_apply_flag(const char *o, struct brig_mount_opts *out)
{
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(mopt_flags); i++) {
        const struct mopt_flag *f = &mopt_flags[i];
        if (strcmp(o, f->name) != 0) continue;
        /* the last of "ro"/"rw" wins, as with mount(8) */
        if (f->clear) {
            out->flags &= ~f->flag;
            out->clear_flags |= f->flag;
        } else {
            out->flags |= f->flag;
            out->clear_flags &= ~f->flag;
        }
        return true;
    }
    return false;
}

static bool mopt_apply_attr(const char *o, struct brig_mount_opts *out)
{
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(mopt_attrs); i++) {
        const struct mopt_attr *a = &mopt_attrs[i];
        if (strcmp(o, a->name) != 0) continue;
        bool is_atime = a->attr == MOUNT_ATTR_NOATIME || a->attr == MOUNT_ATTR_STRICTATIME ||
                        a->attr == MOUNT_ATTR_RELATIME;
        if (is_atime) {
            out->attr_set = (out->attr_set & ~(uint64_t)MOUNT_ATTR__ATIME) | a->attr;
            out->attr_clr |= MOUNT_ATTR__ATIME;
        } else if (a->clear) {
            out->attr_set &= ~a->attr;
            out->attr_clr |= a->attr;
        } else {
            out->attr_set |= a->attr;
            out->attr_clr &= ~a->attr;
        }
        return true;
    }
    return false;
}

static void mopt_append_data(struct brig_mount_opts *out, const char *o)
{
    if (out->data == NULL) {
        out->data = brig_strdup(o);
        return;
    }
    char *d = brig_asprintf("%s,%s", out->data, o);
    free(out->data);
    out->data = d;
}

int mount_options_parse(char *const *opts, size_t n, const char *type, const char *jpath,
                        struct brig_mount_opts *out, struct brig_error **err)
{
    struct brig_mount_opts o = {0};
    if (type != NULL && strcmp(type, "bind") == 0) {
        o.bind = true;
        o.flags |= MS_BIND;
    }
    for (size_t i = 0; i < n; i++) {
        const char *s = opts[i];
        if (s == NULL || s[0] == '\0') {
            mount_opts_free(&o);
            return brig_failx(err, "%s[%zu]: empty mount option", jpath, i);
        }
        unsigned long prop;
        if (strcmp(s, "bind") == 0) {
            o.bind = true;
            o.flags |= MS_BIND;
        } else if (strcmp(s, "rbind") == 0) {
            o.bind = o.recursive_bind = true;
            o.flags |= MS_BIND | MS_REC;
        } else if (mount_propagation_parse(s, &prop) == 0) {
            o.propagation = prop; /* the last one given wins */
        } else if (strcmp(s, "tmpcopyup") == 0) {
            o.tmpcopyup = true;
        } else if (strcmp(s, "idmap") == 0 || strcmp(s, "ridmap") == 0 ||
                   brig_str_has_prefix(s, "idmap=") || brig_str_has_prefix(s, "ridmap=")) {
            o.idmap = true;
            o.idmap_recursive |= s[0] == 'r';
            /* "idmap=" with nothing after it is "idmap", as in crun */
            const char *eq = strchr(s, '=');
            o.idmap_inline |= eq != NULL && eq[1] != '\0';
        } else if (strchr(s, '=') == NULL && (mopt_apply_flag(s, &o) || mopt_apply_attr(s, &o))) {
            /* a known flag or recursive attribute */
        } else {
            mopt_append_data(&o, s);
        }
    }
    brig_debug("%s: flags=%#lx clear=%#lx propagation=%#lx attr_set=%#llx attr_clr=%#llx data=%s",
               jpath, o.flags, o.clear_flags, o.propagation, (unsigned long long)o.attr_set,
               (unsigned long long)o.attr_clr, o.data != NULL ? o.data : "");
    *out = o;
    return 0;
}

void mount_opts_free(struct brig_mount_opts *o)
{
    if (o == NULL) return;
    free(o->data);
    o->data = NULL;
}

/* ---- crun's idmap option with explicit mappings -------------------------- */

/* At most what a uid_map takes (the kernel's limit): bounds the work and
 * the memory a long option can cost. */
#define MOPT_IDMAP_MAX 340

/* A decimal uint32 at *p (digits only: no sign, no space, as strtoul
 * would take), *p moved past it. */
static bool mopt_idmap_u32(const char **p, uint32_t *out)
{
    const char *s = *p;
    uint64_t v = 0;
    if (*s < '0' || *s > '9') return false;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > UINT32_MAX) return false;
    }
    *out = (uint32_t)v;
    *p = s;
    return true;
}

/* '@': the host id is given as an id of the container's user namespace
 * (linux.uidMappings/gidMappings) and translated through it. The whole
 * range must lie in one of its entries (crun leaves that to the caller
 * and maps the rest wrong). */
static int mopt_idmap_relative(struct brig_id_mapping *m, const struct brig_id_mapping *ctr,
                               size_t n_ctr, const char *what, const char *jpath,
                               struct brig_error **err)
{
    if (n_ctr == 0)
        return brig_failx(err, "%s: idmap %s=@...: a relative mapping needs linux.%s", jpath, what,
                          strcmp(what, "uids") == 0 ? "uidMappings" : "gidMappings");
    for (size_t k = 0; k < n_ctr; k++) {
        uint64_t lo = ctr[k].container_id, hi = lo + ctr[k].size;
        if (m->host_id >= lo && (uint64_t)m->host_id + m->size <= hi) {
            m->host_id = ctr[k].host_id + (m->host_id - ctr[k].container_id);
            return 0;
        }
    }
    return brig_failx(err, "%s: idmap %s=@%u-%u-%u: container ids %u-%llu are not inside one entry "
                      "of linux.%s", jpath, what, m->container_id, m->host_id, m->size, m->host_id,
                      (unsigned long long)m->host_id + m->size - 1,
                      strcmp(what, "uids") == 0 ? "uidMappings" : "gidMappings");
}

/* One "uids=..." or "gids=..." list: RANGE('#'RANGE)*, RANGE being
 * ['@']FROM-TO-SIZE, up to end (exclusive). */
static int mopt_idmap_list(const char *s, const char *end, const char *what,
                           const struct brig_id_mapping *ctr, size_t n_ctr, const char *jpath,
                           struct brig_id_mapping **out, size_t *n, struct brig_error **err)
{
    if (s == end) return brig_failx(err, "%s: idmap %s=: no mapping given", jpath, what);
    size_t max = 1;
    for (const char *p = s; p < end; p++) max += *p == '#';
    if (max > MOPT_IDMAP_MAX)
        return brig_failx(err, "%s: idmap %s=: more than %d ranges", jpath, what, MOPT_IDMAP_MAX);
    autofree struct brig_id_mapping *v = brig_calloc(max, sizeof(*v));
    size_t cnt = 0;
    for (const char *p = s;;) {
        struct brig_id_mapping *m = &v[cnt++];
        bool relative = *p == '@';
        if (relative) p++;
        if (!mopt_idmap_u32(&p, &m->container_id) || *p++ != '-' || !mopt_idmap_u32(&p, &m->host_id) ||
            *p++ != '-' || !mopt_idmap_u32(&p, &m->size) || (p != end && *p != '#'))
            return brig_failx(err, "%s: idmap %s=: range %zu is not [@]FROM-TO-SIZE (decimal ids; "
                              "ranges separated by '#', as idmap=uids=0-100000-65536;gids=0-100000-65536)",
                              jpath, what, cnt);
        if (relative) TRY(mopt_idmap_relative(m, ctr, n_ctr, what, jpath, err));
        if (p == end) break;
        p++;    /* '#' */
    }
    *out = steal_ptr(&v);
    *n = cnt;
    return 0;
}

int mount_idmap_parse(const char *value, const char *jpath, const struct brig_linux *l,
                      struct brig_id_mapping **uids, size_t *nu, struct brig_id_mapping **gids,
                      size_t *ng, struct brig_error **err)
{
    autofree struct brig_id_mapping *u = NULL, *g = NULL;
    size_t n_u = 0, n_g = 0;
    bool has_u = false, has_g = false;
    for (const char *p = value;;) {
        const char *end = strchr(p, ';');
        if (end == NULL) end = p + strlen(p);
        bool is_u = strncmp(p, "uids=", 5) == 0, is_g = strncmp(p, "gids=", 5) == 0;
        if (!is_u && !is_g)
            return brig_failx(err, "%s: idmap=: \"%.*s\" is neither uids=... nor gids=...", jpath,
                              (int)(end - p > 40 ? 40 : end - p), p);
        if (is_u ? has_u : has_g)
            return brig_failx(err, "%s: idmap=: %s given twice", jpath, is_u ? "uids" : "gids");
        if (is_u) {
            has_u = true;
            TRY(mopt_idmap_list(p + 5, end, "uids", l->uid_mappings, l->n_uid_mappings, jpath, &u, &n_u, err));
        } else {
            has_g = true;
            TRY(mopt_idmap_list(p + 5, end, "gids", l->gid_mappings, l->n_gid_mappings, jpath, &g, &n_g, err));
        }
        if (*end == '\0') break;
        p = end + 1;
    }
    if (!has_u || !has_g)
        return brig_failx(err, "%s: idmap=: %s without %s: give both (uids=...;gids=...)", jpath,
                          has_u ? "uids" : "gids", has_u ? "gids" : "uids");
    *uids = steal_ptr(&u);
    *nu = n_u;
    *gids = steal_ptr(&g);
    *ng = n_g;
    return 0;
}
