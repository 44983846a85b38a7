/* What IMAGE is, before anything is read in earnest: an image (an OCI
 * layout or a docker save archive), a plain root filesystem tar (`docker
 * export`, a debootstrap tree, `tar -C dir -c .`), or neither (then a hint
 * on what it seems to be). And the tar reader every part of import uses:
 * tar with the decompressors libarchive has built in, never an external
 * program run on the input. */
#include "import.h"

#include <archive.h>
#include <archive_entry.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/strutil.h"

struct archive *import_tar_reader(void)
{
    /* libarchive falls back to running xz, zstd... as a program when it
     * was built without the library (ARCHIVE_WARN): only native ones. */
    static int native = -1;
    static int (*const filters[])(struct archive *) = {
        archive_read_support_filter_gzip, archive_read_support_filter_zstd,
        archive_read_support_filter_xz, archive_read_support_filter_bzip2,
    };
    if (native < 0) {
        native = 0;
        struct archive *probe = archive_read_new();
        for (size_t i = 0; probe != NULL && i < BRIG_ARRAY_SIZE(filters); i++)
            if (filters[i](probe) == ARCHIVE_OK) native |= 1 << i;
        archive_read_free(probe);
    }
    struct archive *a = archive_read_new();
    if (a == NULL) return NULL;
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(filters); i++)
        if (native & (1 << i)) filters[i](a);
    archive_read_support_format_tar(a);
    return a;
}

/* A top-level name of a root filesystem: a tree with it is one. */
static bool plain_rootfs_name(const char *top)
{
    static const char *const names[] = {
        "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "media", "mnt", "opt", "proc", "root",
        "run", "sbin", "srv", "sys", "tmp", "usr", "var", ".dockerenv", ".dockerinit",
    };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(names); i++)
        if (strcmp(top, names[i]) == 0) return true;
    return false;
}

/* A name an image layout or a docker save archive has at its top. */
static bool plain_image_name(const char *top)
{
    static const char *const names[] = { "oci-layout", "index.json", "manifest.json", "repositories", "blobs" };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(names); i++)
        if (strcmp(top, names[i]) == 0) return true;
    /* docker save's <64 hex>/ layer dirs, <64 hex>.json configs, skopeo's <64 hex>.tar layers */
    size_t n = strspn(top, "0123456789abcdef");
    return n == 64 && (top[64] == '\0' || strcmp(top + 64, ".json") == 0 || strcmp(top + 64, ".tar") == 0);
}

/* What the first bytes of a file that is not a tar say it is. */
static void plain_sniff(int fd, char *hint, size_t len)
{
    unsigned char b[1100] = {0};
    ssize_t n = pread(fd, b, sizeof(b), 0);
    static const struct { size_t off; const char *magic; size_t mlen; const char *what; } m[] = {
        { 0, "PK\x03\x04", 4, "a zip archive (unzip it, then tar the tree: tar -C DIR -c .)" },
        { 0, "\x7f" "ELF", 4, "an ELF executable" },
        { 0, "hsqs", 4, "a squashfs image (unsquashfs it, then tar the tree)" },
        { 1080, "\x53\xef", 2, "an ext2/3/4 filesystem image (mount it read-only, then tar the tree)" },
        { 0, "BZh", 3, "a bzip2 file that is not a tar" },
        { 0, "\x1f\x8b", 2, "a gzip file that is not a tar" },
        { 0, "\x28\xb5\x2f\xfd", 4, "a zstd file that is not a tar" },
        { 0, "\xfd" "7zXZ", 5, "an xz file that is not a tar" },
        { 0, "7z\xbc\xaf", 4, "a 7-zip archive" },
        { 0, "!<arch>\n", 8, "an ar archive (a .deb? dpkg-deb -x it, then tar the tree)" },
    };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(m); i++) {
        if (n >= 0 && (size_t)n >= m[i].off + m[i].mlen && memcmp(b + m[i].off, m[i].magic, m[i].mlen) == 0) {
            snprintf(hint, len, "%s", m[i].what);
            return;
        }
    }
    if (n == 0) {
        snprintf(hint, len, "an empty file");
        return;
    }
    size_t i = 0;
    while (i < (size_t)n && i < 64 && isspace(b[i])) i++;
    if (i < (size_t)n && (b[i] == '{' || b[i] == '[')) snprintf(hint, len, "JSON text (an image's index or manifest "
                                                                 "alone? import the whole layout directory)");
    else snprintf(hint, len, "not a tar, plain or gzip, zstd, xz or bzip2 compressed");
}

int plain_classify(int fd, enum plain_kind *kind, char *hint, size_t hintlen, struct brig_error **err)
{
    *kind = PLAIN_NEITHER;
    hint[0] = '\0';
    struct archive *a = import_tar_reader();
    if (a == NULL) return brig_failx(err, "libarchive: out of memory");
    int rc = 0;
    size_t n = 0;
    char first[3][64] = { "", "", "" };
    if (archive_read_open_fd(a, fd, 1 << 16) != ARCHIVE_OK) {
        plain_sniff(fd, hint, hintlen);
        goto out;
    }
    /* A layout's index.json or a docker archive's manifest.json may come
     * last: read on until one of them, or a name only a root filesystem
     * has, decides. */
    bool other = false;
    for (;; n++) {
        struct archive_entry *e;
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF) break;
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
            if (n == 0) plain_sniff(fd, hint, hintlen);
            else rc = brig_failx(err, "truncated or corrupt tar: %s", archive_error_string(a));
            goto out;
        }
        const char *name = archive_entry_pathname(e);
        if (name == NULL) continue;
        while (name[0] == '.' && name[1] == '/') name += 2;
        while (name[0] == '/') name++;
        char top[NAME_MAX + 1];
        size_t tl = strcspn(name, "/");
        if (tl == 0 || tl > NAME_MAX) continue;                 /* "./" itself */
        memcpy(top, name, tl);
        top[tl] = '\0';
        if (n < 3) snprintf(first[n], sizeof(first[n]), "%s", top);
        if (strcmp(top, "index.json") == 0 || strcmp(top, "manifest.json") == 0) {
            *kind = PLAIN_IMAGE;
            goto out;
        }
        if (plain_rootfs_name(top)) {
            *kind = PLAIN_ROOTFS;                               /* bin, etc, usr, .dockerenv ... */
            goto out;
        }
        if (!plain_image_name(top)) other = true;
        archive_read_data_skip(a);
    }
    /* a tree of other names (tar -C app -c .) is a root filesystem too */
    if (other) *kind = PLAIN_ROOTFS;
    else if (n == 0) snprintf(hint, hintlen, "an empty tar");
    else snprintf(hint, hintlen, "a tar of image blobs without index.json or manifest.json (first entries: %s%s%s%s%s)",
                  first[0], first[1][0] ? ", " : "", first[1], first[2][0] ? ", " : "", first[2]);
out:
    archive_read_free(a);
    if (lseek(fd, 0, SEEK_SET) < 0 && rc == 0) rc = brig_fail(err, errno, "rewind");
    return rc;
}
