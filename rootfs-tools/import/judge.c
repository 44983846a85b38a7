/* Pure judgements of the names, modes and digests an image gives us: the
 * first gate for hostile input, tested alone (tests/unit/test_rootfs_judge.c).
 * What passes is still only ever used through fds inside the root
 * (layer.c); these refuse what no honest image contains. */
#include "import.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int judge_entry_path(const char *name, char *out, size_t outlen, struct brig_error **err)
{
    if (name == NULL || name[0] == '\0') return brig_failx(err, "empty entry name");
    if (name[0] == '/') return brig_failx(err, "entry %.200s: absolute path, refusing it", name);
    size_t n = 0;
    for (const char *p = name; *p != '\0';) {
        while (*p == '/') p++;
        size_t c = strcspn(p, "/");
        if (c == 0) break;
        if (c == 1 && p[0] == '.') {
            p += c;
            continue;
        }
        if (c == 2 && p[0] == '.' && p[1] == '.')
            return brig_failx(err, "entry %.200s: a \"..\" component, refusing it", name);
        if (c > NAME_MAX) return brig_failx(err, "entry %.200s: a component longer than NAME_MAX", name);
        if (n + c + 2 > outlen || n + c + 1 >= PATH_MAX)
            return brig_failx(err, "entry %.200s: longer than PATH_MAX", name);
        if (n > 0) out[n++] = '/';
        memcpy(out + n, p, c);
        n += c;
        p += c;
    }
    if (outlen == 0) return brig_failx(err, "entry %.200s: no room", name);
    out[n] = '\0';
    return 0;
}

#define WH_PREFIX ".wh."
#define WH_OPAQUE ".wh..wh..opq"

int judge_whiteout(const char *clean, enum judge_wh *kind, char *target, size_t tlen,
                   struct brig_error **err)
{
    const char *slash = strrchr(clean, '/');
    const char *base = slash != NULL ? slash + 1 : clean;
    size_t dirlen = slash != NULL ? (size_t)(slash - clean) : 0;
    *kind = JUDGE_WH_NONE;
    if (strncmp(base, WH_PREFIX, strlen(WH_PREFIX)) != 0) return 0;
    if (dirlen + strlen(base) + 2 > tlen) return brig_failx(err, "whiteout %.200s: too long", clean);
    memcpy(target, clean, dirlen);
    target[dirlen] = '\0';
    if (strcmp(base, WH_OPAQUE) == 0) {
        *kind = JUDGE_WH_OPAQUE;
        return 0;
    }
    /* .wh..wh.plnk and other AUFS bookkeeping: not part of the tree */
    if (strncmp(base, WH_PREFIX WH_PREFIX, 2 * strlen(WH_PREFIX)) == 0) {
        *kind = JUDGE_WH_IGNORE;
        return 0;
    }
    const char *victim = base + strlen(WH_PREFIX);
    if (victim[0] == '\0' || strcmp(victim, ".") == 0 || strcmp(victim, "..") == 0)
        return brig_failx(err, "whiteout %.200s: names \"%s\", refusing it", clean, victim);
    size_t t = dirlen;
    if (t > 0) target[t++] = '/';
    strcpy(target + t, victim);
    *kind = JUDGE_WH_FILE;
    return 0;
}

int judge_mode(mode_t mode, int flags, mode_t *out, bool *stripped, struct brig_error **err)
{
    *stripped = false;
    switch (mode & S_IFMT) {
    case S_IFCHR:
    case S_IFBLK:
        if (!(flags & JUDGE_ALLOW_DEVICES))
            return brig_failx(err, "a device node (refused without --allow-devices)");
        break;
    case S_IFSOCK:
        return brig_failx(err, "a socket, refusing it");
    case S_IFREG: case S_IFDIR: case S_IFLNK: case S_IFIFO:
        break;
    default:
        return brig_failx(err, "unknown file type 0%o", (unsigned)(mode & S_IFMT));
    }
    mode_t perm = mode & 07777;
    if ((perm & (S_ISUID | S_ISGID)) && !(flags & JUDGE_KEEP_SETUID) && !S_ISDIR(mode)) {
        perm &= ~(mode_t)(S_ISUID | S_ISGID);
        *stripped = true;
    }
    *out = (mode & S_IFMT) | perm;
    return 0;
}

int judge_digest(const char *digest, char hex[65], struct brig_error **err)
{
    if (digest == NULL || strncmp(digest, "sha256:", 7) != 0)
        return brig_failx(err, "digest %.80s: only sha256 digests are supported", digest ? digest : "(none)");
    const char *h = digest + 7;
    if (strlen(h) != 64 || strspn(h, "0123456789abcdef") != 64)
        return brig_failx(err, "digest %.80s: not 64 lower-case hex digits", digest);
    memcpy(hex, h, 65);
    return 0;
}

int judge_size(const char *s, uint64_t *out)
{
    if (s == NULL || *s < '0' || *s > '9') return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0) return -1;
    unsigned shift = 0;
    switch (*end) {
    case '\0': break;
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    case 'T': case 't': shift = 40; break;
    default: return -1;
    }
    if (*end != '\0' && end[1] != '\0') return -1;
    if (shift > 0 && v > (UINT64_MAX >> shift)) return -1;
    *out = (uint64_t)v << shift;
    return 0;
}
