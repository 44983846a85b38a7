/* "extends": a policy built on another one (docs/policy.md, "Building on a
 * profile"). Resolved when the policy is read, into one JSON text with no
 * "extends" left: that text is what a sandbox's snapshot records and what
 * every later step parses, so no base file is read again after create.
 *
 * The merge is RFC 7386 (JSON Merge Patch), applied base first: objects are
 * merged key by key, recursively; any other value (a list, a string, a
 * number, a boolean) replaces the base's whole; null removes the key.
 * "name" and "description" say what a file is and are not inherited. A
 * chain is at most POLICY_EXTENDS_DEPTH deep and has no cycle (files by
 * device and inode, built-in profiles by name). A built-in profile extends
 * only built-in profiles. A file extends only a file its owner controls:
 * owned by root or by the extending file's owner, in a directory the same
 * holds for, neither writable by group or others, so that a root-owned
 * policy never takes its settings from a file someone else can rewrite. */
#include "policy.h"
#include "policy_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy_tree.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/strutil.h"

#define POLICY_EXTENDS_DEPTH 8
#define POLICY_FILE_MAX (1u << 20)

/* Where a policy text came from: a built-in profile, or a file (its path
 * as given, its stat, its directory's stat). */
struct pol_origin {
    const char *label;          /* "pi", "/etc/brig/p.json" */
    bool builtin;
    uid_t owner;                /* the file's owner; 0 for a built-in profile */
    char *dir;                  /* the file's directory (relative bases resolve here) */
    char id[64];                /* "builtin:pi" or "file:DEV:INO" */
};

static void origin_free(struct pol_origin *o)
{
    free(o->dir);
}

static int extends_read_builtin(const char *name, char **text, struct pol_origin *o, struct brig_error **err)
{
    const char *t = policy_builtin_text(name);
    if (t == NULL)
        return brig_failx(err, "no such built-in profile \"%s\" (see brig policy list; a file needs a path "
                          "with '/')", name);
    *text = brig_strdup(t);
    *o = (struct pol_origin){ .label = name, .builtin = true, .owner = 0 };
    snprintf(o->id, sizeof(o->id), "builtin:%s", name);
    return 0;
}

/* Owned by root or by owner, not writable by group or others. */
static int extends_controlled(const struct stat *st, uid_t owner, const char *what, const char *path,
                              struct brig_error **err)
{
    if ((st->st_uid != 0 && st->st_uid != owner) || (st->st_mode & (S_IWGRP | S_IWOTH)))
        return brig_failx(err, "%s %s: owned by uid %u with mode %04o; a policy extends only a file owned "
                          "by root or by its own owner (uid %u), in such a directory, neither writable by "
                          "group or others", what, path, (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777),
                          (unsigned)owner);
    return 0;
}

/* path as named by a policy whose origin is from (NULL: the caller's own
 * argument, read as given). */
static int extends_read_file(const char *path, const struct pol_origin *from, char **text, struct pol_origin *o,
                             struct brig_error **err)
{
    autofree char *full = from != NULL && path[0] != '/' ? brig_asprintf("%s/%s", from->dir, path)
                                                         : brig_strdup(path);
    struct stat st;
    autoclose int fd = brig_open_input(AT_FDCWD, full, 0, &st, err);
    if (fd < 0) return -1;
    autofree char *dcopy = brig_strdup(full);
    char *dir = dirname(dcopy);
    if (from != NULL) {
        TRY(extends_controlled(&st, from->owner, "file", full, err));
        struct stat dst;
        if (stat(dir, &dst) < 0) return brig_fail(err, errno, "%s", dir);
        TRY(extends_controlled(&dst, from->owner, "directory", dir, err));
    }
    TRY(brig_read_fd(fd, full, POLICY_FILE_MAX, text, NULL, err));
    *o = (struct pol_origin){ .label = path, .builtin = false, .owner = st.st_uid, .dir = brig_strdup(dir) };
    snprintf(o->id, sizeof(o->id), "file:%llx:%llx", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    return 0;
}

/* The policy text of origin o, with its "extends" resolved: *out, a tree
 * without "extends". chain: the ids of the policies that extend this one
 * (a cycle if o's id is among them), depth of them. */
static int extends_resolve(const char *text, const struct pol_origin *o, char (*chain)[64], int depth,
                           struct ptree **out, struct brig_error **err)
{
    autoptree struct ptree *t = NULL;
    TRY(ptree_parse(text, strlen(text), &t, err));
    if (t->type != PT_OBJ) return brig_failx(err, "expected a JSON object");
    const struct ptree *ext = ptree_get(t, "extends");
    if (ext == NULL) {
        *out = steal_ptr(&t);
        return 0;
    }
    if (ext->type != PT_STR || ext->s[0] == '\0')
        return brig_failx(err, "extends: expected a built-in profile's name or a file's path");
    autofree char *base = brig_strdup(ext->s);
    if (depth + 1 >= POLICY_EXTENDS_DEPTH)
        return brig_failx(err, "extends %s: a chain of more than %d policies", base, POLICY_EXTENDS_DEPTH);
    autofree char *btext = NULL;
    struct pol_origin bo = { 0 };
    int r = strchr(base, '/') == NULL ? extends_read_builtin(base, &btext, &bo, err)
            : o->builtin ? brig_failx(err, "a built-in profile extends only built-in profiles")
            : extends_read_file(base, o, &btext, &bo, err);
    if (r < 0) {
        origin_free(&bo);
        return brig_wrap(err, "extends %s", base);
    }
    for (int i = 0; i <= depth; i++) {
        if (strcmp(chain[i], bo.id) == 0) {
            origin_free(&bo);
            return brig_failx(err, "extends %s: a cycle (it is already in this chain of extends)", base);
        }
    }
    snprintf(chain[depth + 1], sizeof(chain[0]), "%s", bo.id);
    autoptree struct ptree *merged = NULL;
    r = extends_resolve(btext, &bo, chain, depth + 1, &merged, err);
    origin_free(&bo);
    if (r < 0) return brig_wrap(err, "extends %s", base);
    /* what the file says about itself is not inherited */
    ptree_del(merged, "name");
    ptree_del(merged, "description");
    ptree_del(t, "extends");
    ptree_merge_patch(&merged, t);
    *out = steal_ptr(&merged);
    return 0;
}

int policy_extends_read(const char *name_or_path, char **text, size_t *len, struct brig_error **err)
{
    autofree char *top = NULL;
    struct pol_origin o = { 0 };
    /* A name never contains '/': "agent" is the profile even if a file
     * called agent exists in the cwd (the cwd is not trusted input). */
    int r = strchr(name_or_path, '/') == NULL ? extends_read_builtin(name_or_path, &top, &o, err)
                                              : extends_read_file(name_or_path, NULL, &top, &o, err);
    if (r < 0) {
        origin_free(&o);
        return strchr(name_or_path, '/') == NULL ? brig_wrap(err, "policy %s", name_or_path)
                                                 : brig_wrap(err, "policy");
    }
    /* Without "extends" the text is handed on exactly as read. */
    if (strstr(top, "\"extends\"") == NULL) {
        origin_free(&o);
        *len = strlen(top);
        *text = steal_ptr(&top);
        return 0;
    }
    char chain[POLICY_EXTENDS_DEPTH + 1][64];
    memset(chain, 0, sizeof(chain));
    snprintf(chain[0], sizeof(chain[0]), "%s", o.id);
    autoptree struct ptree *t = NULL;
    r = extends_resolve(top, &o, chain, 0, &t, err);
    origin_free(&o);
    if (r < 0) return brig_wrap(err, "policy %s", name_or_path);
    TRY(ptree_write(t, text, err));
    *len = strlen(*text);
    return 0;
}
