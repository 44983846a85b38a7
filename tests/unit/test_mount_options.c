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

/* ---- crun's idmap=uids=...;gids=... (mount_idmap_parse) --------------- */

static const struct brig_id_mapping ctr_ids[] = { { 0, 0, 1 }, { 1, 2, 1000 } };

static struct brig_linux idmap_linux(void)
{
    struct brig_linux l = {0};
    l.uid_mappings = (struct brig_id_mapping *)ctr_ids;
    l.n_uid_mappings = 2;
    l.gid_mappings = (struct brig_id_mapping *)ctr_ids;
    l.n_gid_mappings = 2;
    return l;
}

static void idmap_ok(const char *value, const struct brig_linux *l, struct brig_id_mapping **u,
                     size_t *nu, struct brig_id_mapping **g, size_t *ng)
{
    struct brig_error *err = NULL;
    int r = mount_idmap_parse(value, "mounts[2].options[1]", l, u, nu, g, ng, &err);
    cr_assert_eq(r, 0, "%s: %s", value, err != NULL ? err->msg : "?");
}

static void idmap_bad(const char *value, const struct brig_linux *l, const char *want)
{
    struct brig_id_mapping *u = NULL, *g = NULL;
    size_t nu = 0, ng = 0;
    struct brig_error *err = NULL;
    int r = mount_idmap_parse(value, "mounts[2].options[1]", l, &u, &nu, &g, &ng, &err);
    cr_assert_eq(r, -1, "\"%s\" was accepted", value);
    cr_assert_not_null(err);
    cr_assert(strstr(err->msg, want) != NULL, "\"%s\": message \"%s\", want \"%s\"", value, err->msg, want);
    cr_assert(strncmp(err->msg, "mounts[2].options[1]: ", 22) == 0, "names the option: %s", err->msg);
    cr_assert_null(u);
    cr_assert_null(g);
    brig_error_free(err);
}

Test(mount_idmap, crun_example)
{
    /* crun(1)'s own example: two uid ranges, one gid range */
    struct brig_linux l = {0};
    struct brig_id_mapping *u, *g;
    size_t nu, ng;
    idmap_ok("uids=0-1-10#10-11-10;gids=0-100-10", &l, &u, &nu, &g, &ng);
    cr_assert_eq(nu, 2);
    cr_assert_eq(u[0].container_id, 0);
    cr_assert_eq(u[0].host_id, 1);
    cr_assert_eq(u[0].size, 10);
    cr_assert_eq(u[1].container_id, 10);
    cr_assert_eq(u[1].host_id, 11);
    cr_assert_eq(u[1].size, 10);
    cr_assert_eq(ng, 1);
    cr_assert_eq(g[0].container_id, 0);
    cr_assert_eq(g[0].host_id, 100);
    cr_assert_eq(g[0].size, 10);
    free(u);
    free(g);
    /* gids first, and the largest ids */
    idmap_ok("gids=4294967294-0-1;uids=0-4294967294-1", &l, &u, &nu, &g, &ng);
    cr_assert_eq(g[0].container_id, 4294967294u);
    cr_assert_eq(u[0].host_id, 4294967294u);
    free(u);
    free(g);
}

Test(mount_idmap, relative)
{
    /* crun(1): uids=@1-3-10 with linux.uidMappings {0,0,1},{1,2,1000} is
     * uids=1-4-10 (3 is container id 3, host 3 + 2 - 1) */
    struct brig_linux l = idmap_linux();
    struct brig_id_mapping *u, *g;
    size_t nu, ng;
    idmap_ok("uids=@1-3-10;gids=@0-0-1#@5-1-1000", &l, &u, &nu, &g, &ng);
    cr_assert_eq(nu, 1);
    cr_assert_eq(u[0].container_id, 1);
    cr_assert_eq(u[0].host_id, 4);
    cr_assert_eq(u[0].size, 10);
    cr_assert_eq(ng, 2);
    cr_assert_eq(g[0].host_id, 0);
    cr_assert_eq(g[1].container_id, 5);
    cr_assert_eq(g[1].host_id, 2);
    free(u);
    free(g);
}

Test(mount_idmap, malformed)
{
    struct brig_linux none = {0};
    struct brig_linux l = idmap_linux();
    idmap_bad("uids=0-1-10", &none, "uids without gids");
    idmap_bad("gids=0-1-10", &none, "gids without uids");
    idmap_bad("uids=0-1-10;gids=0-1-10;uids=5-6-1", &none, "uids given twice");
    idmap_bad("uids=;gids=0-1-1", &none, "idmap uids=: no mapping given");
    idmap_bad("uids=0-1-1;gids=", &none, "idmap gids=: no mapping given");
    idmap_bad("users=0-1-1;gids=0-1-1", &none, "\"users=0-1-1\" is neither uids=... nor gids=...");
    idmap_bad("uids=0-1-1;", &none, "\"\" is neither");
    idmap_bad("uids=0-1;gids=0-1-1", &none, "range 1 is not [@]FROM-TO-SIZE");
    idmap_bad("uids=0-1-1-1;gids=0-1-1", &none, "range 1 is not");
    idmap_bad("uids=0-1-1#;gids=0-1-1", &none, "range 2 is not");
    idmap_bad("uids=#0-1-1;gids=0-1-1", &none, "range 1 is not");
    idmap_bad("uids=0--1-1;gids=0-1-1", &none, "range 1 is not");        /* crun's strtol takes -1 */
    idmap_bad("uids=0-+1-1;gids=0-1-1", &none, "range 1 is not");
    idmap_bad("uids= 0-1-1;gids=0-1-1", &none, "range 1 is not");
    idmap_bad("uids=0-1-0x10;gids=0-1-1", &none, "range 1 is not");
    idmap_bad("uids=0-4294967296-1;gids=0-1-1", &none, "range 1 is not");
    idmap_bad("uids=0-1-1,0-2-1;gids=0-1-1", &none, "range 1 is not");
    idmap_bad("uids=0-1-1 ;gids=0-1-1", &none, "range 1 is not");
    idmap_bad("uids=@1-3-10;gids=0-1-1", &none, "a relative mapping needs linux.uidMappings");
    idmap_bad("uids=0-0-1;gids=@0-0-2", &l, "container ids 0-1 are not inside one entry of linux.gidMappings");
    idmap_bad("uids=@0-995-10;gids=0-0-1", &l, "container ids 995-1004 are not inside one entry");
    /* 341 ranges: more than a uid_map takes */
    char big[341 * 8 + 32] = "uids=";
    for (int i = 0; i < 341; i++) strcat(big, i ? "#0-0-1" : "0-0-1");
    strcat(big, ";gids=0-0-1");
    idmap_bad(big, &none, "more than 340 ranges");
}
