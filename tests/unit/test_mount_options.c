/* mount_options_parse / mount_propagation_parse: pure, no syscalls. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include "config/mount_options.h"

static struct brig_mount_opts parse_ok(const char *type, char **opts, size_t n)
{
    struct brig_mount_opts o;
    struct brig_error *err = NULL;
    int r = mount_options_parse(opts, n, type, "mounts[0].options", &o, &err);
    cr_assert_eq(r, 0, "parse failed: %s", err != NULL ? err->msg : "?");
    cr_assert_null(err);
    return o;
}

#define PARSE(type, ...)                                                  \
    ({                                                                    \
        char *opts_[] = { __VA_ARGS__ };                                  \
        parse_ok(type, opts_, sizeof(opts_) / sizeof(opts_[0]));         \
    })

Test(mount_options, empty)
{
    struct brig_mount_opts o;
    struct brig_error *err = NULL;
    cr_assert_eq(mount_options_parse(NULL, 0, "tmpfs", "m", &o, &err), 0);
    cr_assert_eq(o.flags, 0);
    cr_assert_eq(o.clear_flags, 0);
    cr_assert_eq(o.propagation, 0);
    cr_assert_eq(o.attr_set, 0);
    cr_assert_eq(o.attr_clr, 0);
    cr_assert_not(o.bind);
    cr_assert_null(o.data);
}

Test(mount_options, set_flags)
{
    struct brig_mount_opts o = PARSE("tmpfs", "ro", "nosuid", "nodev", "noexec", "sync",
                                     "dirsync", "mand", "noatime", "nodiratime", "relatime",
                                     "strictatime", "lazytime", "silent", "nosymfollow",
                                     "remount", "defaults", "iversion");
    unsigned long want = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_SYNCHRONOUS |
                         MS_DIRSYNC | MS_MANDLOCK | MS_NOATIME | MS_NODIRATIME | MS_RELATIME |
                         MS_STRICTATIME | MS_LAZYTIME | MS_SILENT | MS_NOSYMFOLLOW | MS_REMOUNT |
                         MS_I_VERSION;
    cr_assert_eq(o.flags, want, "flags %#lx want %#lx", o.flags, want);
    cr_assert_eq(o.clear_flags, 0);
    cr_assert_null(o.data);
}

Test(mount_options, clear_flags)
{
    struct brig_mount_opts o = PARSE("tmpfs", "rw", "suid", "dev", "exec", "async", "nomand",
                                     "atime", "diratime", "norelatime", "nostrictatime",
                                     "nolazytime", "loud", "symfollow", "noiversion");
    cr_assert_eq(o.flags, 0);
    unsigned long want = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_SYNCHRONOUS |
                         MS_MANDLOCK | MS_NOATIME | MS_NODIRATIME | MS_RELATIME |
                         MS_STRICTATIME | MS_LAZYTIME | MS_SILENT | MS_NOSYMFOLLOW | MS_I_VERSION;
    cr_assert_eq(o.clear_flags, want, "clear %#lx want %#lx", o.clear_flags, want);
}

Test(mount_options, last_wins)
{
    struct brig_mount_opts o = PARSE("tmpfs", "ro", "rw");
    cr_assert_eq(o.flags & MS_RDONLY, 0);
    cr_assert_eq(o.clear_flags & MS_RDONLY, MS_RDONLY);
    o = PARSE("tmpfs", "rw", "ro");
    cr_assert_eq(o.flags & MS_RDONLY, MS_RDONLY);
    cr_assert_eq(o.clear_flags & MS_RDONLY, 0);
}

Test(mount_options, data_and_unknown)
{
    struct brig_mount_opts o = PARSE("devpts", "nosuid", "newinstance", "ptmxmode=0666",
                                     "mode=0620", "gid=5", "noexec");
    cr_assert_eq(o.flags, MS_NOSUID | MS_NOEXEC);
    cr_assert_str_eq(o.data, "newinstance,ptmxmode=0666,mode=0620,gid=5");
    mount_opts_free(&o);
    cr_assert_null(o.data);

    o = PARSE("tmpfs", "size=65536k", "frobnicate");
    cr_assert_str_eq(o.data, "size=65536k,frobnicate");
    mount_opts_free(&o);

    /* a flag name with a value is filesystem data, not the flag */
    o = PARSE("tmpfs", "ro=1");
    cr_assert_eq(o.flags, 0);
    cr_assert_str_eq(o.data, "ro=1");
    mount_opts_free(&o);
}

Test(mount_options, bind)
{
    struct brig_mount_opts o = PARSE(NULL, "bind");
    cr_assert(o.bind);
    cr_assert_not(o.recursive_bind);
    cr_assert_eq(o.flags, MS_BIND);

    o = PARSE(NULL, "rbind", "ro");
    cr_assert(o.bind);
    cr_assert(o.recursive_bind);
    cr_assert_eq(o.flags, MS_BIND | MS_REC | MS_RDONLY);

    o = PARSE("bind", "nosuid");
    cr_assert(o.bind, "type bind means bind");
    cr_assert_not(o.recursive_bind);
    cr_assert_eq(o.flags, MS_BIND | MS_NOSUID);

    o = PARSE("none", "nodev");
    cr_assert_not(o.bind);
}

Test(mount_options, propagation)
{
    static const struct { const char *name; unsigned long flags; } cases[] = {
        { "shared", MS_SHARED },          { "rshared", MS_SHARED | MS_REC },
        { "slave", MS_SLAVE },            { "rslave", MS_SLAVE | MS_REC },
        { "private", MS_PRIVATE },        { "rprivate", MS_PRIVATE | MS_REC },
        { "unbindable", MS_UNBINDABLE },  { "runbindable", MS_UNBINDABLE | MS_REC },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *opts[] = { (char *)cases[i].name };
        struct brig_mount_opts o = parse_ok(NULL, opts, 1);
        cr_assert_eq(o.propagation, cases[i].flags, "%s", cases[i].name);
        cr_assert_eq(o.flags, 0, "%s is not a mount flag", cases[i].name);
        cr_assert_null(o.data);
        unsigned long p = 0;
        cr_assert_eq(mount_propagation_parse(cases[i].name, &p), 0);
        cr_assert_eq(p, cases[i].flags);
    }
    unsigned long p = 12345;
    cr_assert_eq(mount_propagation_parse("rshare", &p), -1);
    cr_assert_eq(mount_propagation_parse("", &p), -1);
    cr_assert_eq(mount_propagation_parse(NULL, &p), -1);
    cr_assert_eq(p, 12345, "unchanged on error");
}

Test(mount_options, recursive_attrs)
{
    struct brig_mount_opts o = PARSE(NULL, "rbind", "rro", "rnosuid", "rnodev", "rnoexec",
                                     "rnosymfollow", "rnodiratime");
    cr_assert_eq(o.attr_set, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                 MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSYMFOLLOW |
                                 MOUNT_ATTR_NODIRATIME);
    cr_assert_eq(o.attr_clr, 0);
    cr_assert_eq(o.flags, MS_BIND | MS_REC, "recursive options are not MS_ flags");

    o = PARSE(NULL, "rbind", "rrw", "rsuid", "rdev", "rexec", "rsymfollow", "rdiratime");
    cr_assert_eq(o.attr_set, 0);
    cr_assert_eq(o.attr_clr, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                 MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSYMFOLLOW |
                                 MOUNT_ATTR_NODIRATIME);

    o = PARSE(NULL, "rro", "rrw");
    cr_assert_eq(o.attr_set & MOUNT_ATTR_RDONLY, 0, "last wins");
    cr_assert_eq(o.attr_clr & MOUNT_ATTR_RDONLY, MOUNT_ATTR_RDONLY);
}

Test(mount_options, recursive_atime)
{
    /* the atime field must be cleared whole when set (mount_setattr(2)) */
    struct brig_mount_opts o = PARSE(NULL, "rnoatime");
    cr_assert_eq(o.attr_set, MOUNT_ATTR_NOATIME);
    cr_assert_eq(o.attr_clr, MOUNT_ATTR__ATIME);
    o = PARSE(NULL, "rstrictatime");
    cr_assert_eq(o.attr_set, MOUNT_ATTR_STRICTATIME);
    cr_assert_eq(o.attr_clr, MOUNT_ATTR__ATIME);
    o = PARSE(NULL, "rnoatime", "rrelatime");
    cr_assert_eq(o.attr_set & MOUNT_ATTR__ATIME, MOUNT_ATTR_RELATIME);
    cr_assert_eq(o.attr_clr, MOUNT_ATTR__ATIME);
    o = PARSE(NULL, "rnoatime", "ratime");
    cr_assert_eq(o.attr_set & MOUNT_ATTR__ATIME, MOUNT_ATTR_RELATIME, "ratime: back to default");
    cr_assert_eq(o.attr_clr & MOUNT_ATTR__ATIME, MOUNT_ATTR__ATIME);
}

Test(mount_options, extensions)
{
    struct brig_mount_opts o = PARSE("tmpfs", "tmpcopyup");
    cr_assert(o.tmpcopyup);
    cr_assert_null(o.data);
    o = PARSE(NULL, "bind", "idmap");
    cr_assert(o.idmap);
    o = PARSE(NULL, "rbind", "ridmap");
    cr_assert(o.idmap);
    cr_assert_null(o.data);
    o = PARSE(NULL, "rbind", "idmap=uids=0-1000-10;gids=0-1000-10");
    cr_assert(o.idmap);
    cr_assert_null(o.data);
}

Test(mount_options, empty_option_is_an_error)
{
    char *opts[] = { "ro", "" };
    struct brig_mount_opts o = { .flags = 77 };
    struct brig_error *err = NULL;
    cr_assert_eq(mount_options_parse(opts, 2, "tmpfs", "mounts[3].options", &o, &err), -1);
    cr_assert_not_null(err);
    cr_assert_str_eq(err->msg, "mounts[3].options[1]: empty mount option");
    cr_assert_eq(o.flags, 77, "output untouched on error");
    brig_error_free(err);
}
