/* rootfs-tools/lib: the manifest's escaping, parser and diff, and the ELF
 * reader on hostile files (headers pointing out of the file) and on the
 * host's own /bin/sh. */
#include <criterion/criterion.h>
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../rootfs-tools/lib/rootfs.h"
#include "../../runtime/util/cleanup.h"

Test(rootfs_escape, round_trip)
{
    const char *s[] = { "/usr/bin/sh", "/a b/c\nd", "/100%", "/\x01\x7f\xc3\xa9" };
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
        autofree char *e = rootfs_escape(s[i]);
        cr_assert(strpbrk(e, " \n") == NULL, "%s", e);
        autofree char *u = rootfs_unescape(e);
        cr_assert_str_eq(u, s[i]);
    }
}

Test(rootfs_escape, malformed)
{
    cr_assert_null(rootfs_unescape("/a%00b"));     /* a NUL inside a path */
    cr_assert_null(rootfs_unescape("/a%zz"));
    cr_assert_null(rootfs_unescape("/a%4"));
}

#define H "# brig-rootfs manifest 1\n"
#define HASH "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

Test(rootfs_manifest, parse_and_print_round_trip)
{
    const char *text = H "d 0755 0 0 0 0.000000000 - /\n"
                         "l 0777 0 0 7 0.000000000 - /bin usr/bin\n"
                         "f 0755 0 0 4 1680000000.000000001 " HASH " /bin%20x\n";
    struct rootfs_manifest m = {0};
    struct brig_error *err = NULL;
    cr_assert_eq(rootfs_manifest_parse(text, strlen(text), &m, &err), 0, "%s", err ? err->msg : "");
    cr_assert_eq(m.n, 3);
    cr_assert_str_eq(m.e[1].target, "usr/bin");
    cr_assert_str_eq(m.e[2].path, "/bin x");
    size_t len;
    autofree char *out = rootfs_manifest_text(&m, &len);
    cr_assert_str_eq(out, text);
    rootfs_manifest_free(&m);
}

Test(rootfs_manifest, refuses_bad_input)
{
    const char *bad[] = {
        "d 0755 0 0 0 0.0 - /\n",                                     /* no header */
        H "f 0755 0 0 4 0.0 " HASH " /b\nf 0755 0 0 4 0.0 " HASH " /a\n", /* order */
        H "f 0755 0 0 4 0.0 " HASH " /a\nf 0755 0 0 4 0.0 " HASH " /a\n", /* repeated */
        H "f 0755 0 0 4 0.0 nothex /a\n",
        H "l 0777 0 0 4 0.0 - /a\n",                                  /* a link without a target */
        H "f 0755 0 0 4 0.0 - relative\n",
        H "x 0755 0 0 4 0.0 - /a\n",
        H "f 17777 0 0 4 0.0 - /a\n",
        H "f 0755 0 0 4 0.0 - /a%00\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct rootfs_manifest m = {0};
        struct brig_error *err = NULL;
        cr_assert_eq(rootfs_manifest_parse(bad[i], strlen(bad[i]), &m, &err), -1, "accepted case %zu", i);
        cr_assert_eq(m.n, 0);
        brig_error_free(err);
    }
}

static void parse(const char *text, struct rootfs_manifest *m)
{
    struct brig_error *err = NULL;
    cr_assert_eq(rootfs_manifest_parse(text, strlen(text), m, &err), 0, "%s", err ? err->msg : "");
}

#define H2 "# brig-rootfs manifest 2\n"
#define XH "0000000000000000000000000000000000000000000000000000000000000001"

/* Format 2 (an xattrs column) round-trips; a tree with no xattr prints as
 * format 1, the text older brig-rootfs reads; a format-1 manifest reads as
 * "no xattrs", so one that appeared is drift, unless the scan read none. */
Test(rootfs_manifest, xattrs_column)
{
    const char *v2 = H2 "d 0755 0 0 0 0.000000000 - - /\n"
                        "f 0755 0 0 4 0.000000000 " HASH " " XH " /ping\n";
    struct rootfs_manifest m = {0};
    parse(v2, &m);
    cr_assert_str_eq(m.e[1].xattrs, XH);
    size_t len;
    autofree char *out = rootfs_manifest_text(&m, &len);
    cr_assert_str_eq(out, v2);
    rootfs_manifest_free(&m);
    parse(H2 "f 0755 0 0 4 0.000000000 " HASH " - /ping\n", &m);
    autofree char *out1 = rootfs_manifest_text(&m, &len);
    cr_assert_str_eq(out1, H "f 0755 0 0 4 0.000000000 " HASH " /ping\n");
    rootfs_manifest_free(&m);

    struct rootfs_manifest want = {0}, have = {0};
    parse(H "f 0755 0 0 4 0.0 " HASH " /ping\n", &want);
    parse(H2 "f 0755 0 0 4 0.0 " HASH " " XH " /ping\n", &have);
    have.e[0].xattr_names = strdup("security.capability");
    struct rootfs_strv d = {0};
    cr_assert_eq(rootfs_manifest_diff(&want, &have, NULL, 0, &d, 10), 1);
    cr_assert_str_eq(d.v[0], "changed /ping: extended attributes (file capabilities, ACLs; now: security.capability)");
    rootfs_strv_free(&d);
    /* a scan that did not read xattrs (--quick) compares none */
    have.e[0].xattrs[0] = '\0';
    cr_assert_eq(rootfs_manifest_diff(&want, &have, NULL, 0, &d, 10), 0);
    rootfs_manifest_free(&want);
    rootfs_manifest_free(&have);
    /* a format-2 line needs its column */
    struct brig_error *err = NULL;
    const char *bad = H2 "f 0755 0 0 4 0.0 " HASH " /ping\n";
    cr_assert_eq(rootfs_manifest_parse(bad, strlen(bad), &m, &err), -1);
    brig_error_free(err);
}

Test(rootfs_manifest, diff)
{
    struct rootfs_manifest want = {0}, have = {0};
    parse(H "d 0755 0 0 0 0.0 - /\nf 0755 0 0 4 0.0 - /a\nf 0755 0 0 4 0.0 - /b\n", &want);
    parse(H "d 0755 0 0 0 0.0 - /\nf 0755 0 0 5 0.0 - /a\nf 0644 0 0 0 0.0 - /c\nd 0755 0 0 0 0.0 - /d\n", &have);
    struct rootfs_strv out = {0};
    cr_assert_eq(rootfs_manifest_diff(&want, &have, NULL, 0, &out, 10), 4);
    cr_assert_str_eq(out.v[0], "changed /a: size 4 -> 5");
    cr_assert_str_eq(out.v[1], "removed /b");
    cr_assert_str_eq(out.v[2], "added /c");
    cr_assert_str_eq(out.v[3], "added /d");
    rootfs_strv_free(&out);
    /* the runtime's mount points (an empty file, an empty dir) are not drift */
    cr_assert_eq(rootfs_manifest_diff(&want, &have, NULL, ROOTFS_DIFF_MOUNTPOINTS, &out, 10), 2);
    rootfs_strv_free(&out);
    /* a limit: the rest counted in one line */
    cr_assert_eq(rootfs_manifest_diff(&want, &have, NULL, 0, &out, 1), 4);
    cr_assert_eq(out.n, 2);
    cr_assert_str_eq(out.v[1], "... and 3 more");
    rootfs_strv_free(&out);
    rootfs_manifest_free(&want);
    rootfs_manifest_free(&have);
}

/* A 64-bit ELF header with one PT_DYNAMIC whose string table lies past
 * the end of the file, and one with more program headers than allowed. */
static char *hostile_elf(const char *dir, const char *name, uint16_t phnum, uint64_t strtab)
{
    struct {
        Elf64_Ehdr eh;
        Elf64_Phdr ph[2];
        Elf64_Dyn dyn[4];
    } f;
    memset(&f, 0, sizeof(f));
    memcpy(f.eh.e_ident, ELFMAG, SELFMAG);
    f.eh.e_ident[EI_CLASS] = ELFCLASS64;
    f.eh.e_ident[EI_DATA] = ELFDATA2LSB;
    f.eh.e_machine = EM_X86_64;
    f.eh.e_phoff = offsetof(__typeof__(f), ph);
    f.eh.e_phentsize = sizeof(Elf64_Phdr);
    f.eh.e_phnum = phnum;
    f.ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = 0, .p_vaddr = 0, .p_filesz = sizeof(f) };
    f.ph[1] = (Elf64_Phdr){ .p_type = PT_DYNAMIC, .p_offset = offsetof(__typeof__(f), dyn),
                            .p_filesz = sizeof(f.dyn) };
    f.dyn[0] = (Elf64_Dyn){ .d_tag = DT_NEEDED, .d_un.d_val = 1 };
    f.dyn[1] = (Elf64_Dyn){ .d_tag = DT_STRTAB, .d_un.d_val = strtab };
    f.dyn[2] = (Elf64_Dyn){ .d_tag = DT_STRSZ, .d_un.d_val = 64 };
    char *path = NULL;
    cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    cr_assert(fd >= 0 && write(fd, &f, sizeof(f)) == (ssize_t)sizeof(f));
    close(fd);
    return path;
}

Test(rootfs_elf, hostile_headers_are_errors_not_crashes)
{
    char dir[] = "/tmp/test_rootfs_elf.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    autofree char *p1 = hostile_elf(dir, "strtab-out", 2, 1u << 30);
    autofree char *p2 = hostile_elf(dir, "phnum-huge", 60000, 0);
    autofree char *p3 = hostile_elf(dir, "strtab-in-but-short", 2, sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr) + 60);
    int rootfd = open("/", O_PATH | O_DIRECTORY);
    struct rootfs_elf_ctx *c = NULL;
    cr_assert_eq(rootfs_elf_ctx_new(rootfd, &c, NULL), 0);
    const char *paths[] = { p1, p2, p3 };
    for (size_t i = 0; i < 3; i++) {
        struct rootfs_strv out = {0};
        struct brig_error *err = NULL;
        cr_assert_eq(rootfs_elf_closure(c, paths[i], &out, NULL, &err), -1, "%s accepted", paths[i]);
        cr_assert(strstr(err->msg, "malformed ELF") != NULL, "%s", err->msg);
        brig_error_free(err);
        rootfs_strv_free(&out);
    }
    rootfs_elf_ctx_free(c);
    close(rootfd);
    unlink(p1), unlink(p2), unlink(p3), rmdir(dir);
}

Test(rootfs_elf, host_sh_needs_libc_and_its_interpreter)
{
    int rootfd = open("/", O_PATH | O_DIRECTORY);
    struct rootfs_elf_ctx *c = NULL;
    cr_assert_eq(rootfs_elf_ctx_new(rootfd, &c, NULL), 0);
    struct rootfs_strv out = {0};
    struct brig_error *err = NULL;
    cr_assert_eq(rootfs_elf_closure(c, "/bin/sh", &out, NULL, &err), 0, "%s", err ? err->msg : "");
    bool libc = false, ld = false;
    for (size_t i = 0; i < out.n; i++) {
        if (strstr(out.v[i], "/libc.so.6")) libc = true;
        if (strstr(out.v[i], "/ld-linux")) ld = true;
    }
    cr_assert(libc && ld, "closure of /bin/sh lacks libc or ld.so (%zu entries)", out.n);
    rootfs_strv_free(&out);
    rootfs_elf_ctx_free(c);
    close(rootfd);
}
