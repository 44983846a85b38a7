/* OCI mounts[].options -> mount(2) flags, propagation, mount_setattr(2)
 * attributes and filesystem data, accepting every option runc and crun do.
 * As in runc, an option that is not a known flag is filesystem data
 * ("mode=755", "size=65536k", "newinstance"): the filesystem itself judges
 * it when the mount is made. */
#include "mount_options.h"

#include <stdbool.h>
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
            o.idmap_inline |= strchr(s, '=') != NULL;
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
