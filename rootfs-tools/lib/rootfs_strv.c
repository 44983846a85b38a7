/* Small helpers of the rootfs library: a string list, DEST splitting and
 * the escaping of paths in a line-per-entry manifest. */
#include "rootfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../runtime/util/cleanup.h"
#include "../../runtime/util/strutil.h"

void rootfs_strv_add(struct rootfs_strv *s, const char *str)
{
    if (s->n + 1 >= s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->v = realloc(s->v, s->cap * sizeof(char *));
        if (s->v == NULL) abort();
    }
    s->v[s->n++] = brig_strdup(str);
    s->v[s->n] = NULL;
}

bool rootfs_strv_has(const struct rootfs_strv *s, const char *str)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], str) == 0) return true;
    return false;
}

bool rootfs_strv_add_new(struct rootfs_strv *s, const char *str)
{
    if (rootfs_strv_has(s, str)) return false;
    rootfs_strv_add(s, str);
    return true;
}

void rootfs_strv_free(struct rootfs_strv *s)
{
    for (size_t i = 0; i < s->n; i++) free(s->v[i]);
    free(s->v);
    *s = (struct rootfs_strv){0};
}

void rootfs_strv_split(struct rootfs_strv *s, const char *list, const char *seps)
{
    autofree char *copy = brig_strdup(list);
    char *save = NULL;
    for (char *t = strtok_r(copy, seps, &save); t; t = strtok_r(NULL, seps, &save)) rootfs_strv_add(s, t);
}

int rootfs_split_dest(const char *dest, int *parentfd, char **name, struct brig_error **err)
{
    size_t len = strlen(dest);
    while (len > 1 && dest[len - 1] == '/') len--;
    autofree char *d = strndup(dest, len);
    char *slash = strrchr(d, '/');
    const char *base = slash ? slash + 1 : d;
    if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return brig_failx(err, "%s: name a directory to create (not /, . or ..)", dest);
    const char *parent = slash == NULL ? "." : slash == d ? "/" : (*slash = '\0', d);
    int fd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return brig_fail(err, errno, "%s: its parent directory %s", dest, parent);
    *parentfd = fd;
    *name = brig_strdup(base);
    return 0;
}

static bool escape_byte(unsigned char c)
{
    return c <= ' ' || c >= 0x7f || c == '%';
}

char *rootfs_escape(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) n += escape_byte(*p) ? 3 : 1;
    char *out = brig_calloc(n + 1, 1), *o = out;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (escape_byte(*p)) o += sprintf(o, "%%%02x", *p);
        else *o++ = (char)*p;
    }
    return out;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* NULL when the escaping is malformed or decodes a NUL. */
char *rootfs_unescape(const char *s)
{
    char *out = brig_calloc(strlen(s) + 1, 1), *o = out;
    for (const char *p = s; *p; p++) {
        if (*p != '%') {
            *o++ = *p;
            continue;
        }
        int h = hexval(p[1]), l = h < 0 ? -1 : hexval(p[2]);
        if (h < 0 || l < 0 || (h | l) == 0) {
            free(out);
            return NULL;
        }
        *o++ = (char)(h * 16 + l);
        p += 2;
    }
    return out;
}
