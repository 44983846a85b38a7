/* A sandbox of a brig without privilege (docs/rootless.md): its user
 * namespace, made at the clone (a rootless brig has no other way to make
 * the mount, pid and network namespaces), maps the caller to the policy's
 * user, so the workspace (the caller's own directory) is the command's
 * without a chown or an idmapped mount; and, where /etc/subuid and
 * /etc/subgid grant the caller a range of 65535 ids or more and newuidmap
 * is installed, the rest of 0-65535 to that range (root's sandboxes get a
 * slot of brig's own range instead: sandbox_ids.c). The process runs as the
 * policy's user with no capability in that namespace, which owns the
 * others; brig's set-id filter holds as in root's sandboxes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"
#include "../policy/policy.h"
#include "../runtime/lifecycle/state.h"
#include "../runtime/util/cleanup.h"
#include "../runtime/util/fs.h"
#include "../runtime/util/log.h"
#include "../runtime/util/strutil.h"

#define ROOTLESS_IDS 65536u

/* The first range of at least 65535 ids FILE grants us (by name or by
 * id, as newuidmap reads it); 0 if none. */
static uint32_t rootless_subid_start(const char *file, unsigned long self)
{
    autofree char *text = NULL;
    if (brig_read_file(file, 16u << 20, &text, NULL, NULL) < 0) return 0;
    char name[256];
    state_owner_name(name, sizeof(name));
    char idtext[32];
    snprintf(idtext, sizeof(idtext), "%lu", self);
    for (char *line = text, *next; line != NULL && *line != '\0'; line = next) {
        next = strchr(line, '\n');
        if (next != NULL) *next++ = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2 == NULL) continue;
        *c1 = '\0';
        if (strcmp(line, name) != 0 && strcmp(line, idtext) != 0) continue;
        char *end;
        errno = 0;
        unsigned long long start = strtoull(c1 + 1, &end, 10);
        if (errno != 0 || end != c2) continue;
        unsigned long long count = strtoull(c2 + 1, &end, 10);
        if (errno != 0 || (*end != '\0' && *end != ':') || count < ROOTLESS_IDS - 1 || start == 0 ||
            start + ROOTLESS_IDS - 1 > UINT32_MAX)
            continue;
        return (uint32_t)start;
    }
    return 0;
}

static bool rootless_helper_present(const char *name)
{
    const char *dirs[] = { "/usr/bin", "/bin", "/usr/sbin", "/sbin", "/usr/local/bin" };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(dirs); i++) {
        char path[64];
        snprintf(path, sizeof(path), "%s/%s", dirs[i], name);
        if (access(path, X_OK) == 0) return true;
    }
    return false;
}

/* id (the policy's) is the caller; with a subordinate range, 0..id-1 and
 * id+1..65535 are its first 65535 ids. */
static size_t rootless_map(uint32_t id, uint32_t self, uint32_t sub, struct sandbox_rootless_map m[3])
{
    size_t n = 0;
    if (sub != 0 && id > 0) m[n++] = (struct sandbox_rootless_map){ 0, sub, id };
    m[n++] = (struct sandbox_rootless_map){ id, self, 1 };
    if (sub != 0 && id + 1 < ROOTLESS_IDS)
        m[n++] = (struct sandbox_rootless_map){ id + 1, sub + id, ROOTLESS_IDS - 1 - id };
    return n;
}

int sandbox_rootless_maps(const struct brig_policy *p, struct sandbox_rootless_maps *out, struct brig_error **err)
{
    *out = (struct sandbox_rootless_maps){ 0 };
    if (p->user.uid >= ROOTLESS_IDS || p->user.gid >= ROOTLESS_IDS)
        return brig_failx(err, "policy %s: user %u:%u: a rootless sandbox maps the ids 0-%u", p->name,
                          p->user.uid, p->user.gid, ROOTLESS_IDS - 1);
    bool helpers = rootless_helper_present("newuidmap") && rootless_helper_present("newgidmap");
    uint32_t subu = helpers ? rootless_subid_start("/etc/subuid", (unsigned long)geteuid()) : 0;
    uint32_t subg = helpers ? rootless_subid_start("/etc/subgid", (unsigned long)geteuid()) : 0;
    if (subu == 0 || subg == 0) subu = subg = 0;      /* both or neither: ids and groups alike */
    out->n_uid = rootless_map(p->user.uid, (uint32_t)geteuid(), subu, out->uid);
    out->n_gid = rootless_map(p->user.gid, (uint32_t)getegid(), subg, out->gid);
    brig_debug("sandbox: rootless, the caller is %u:%u inside%s", p->user.uid, p->user.gid,
               subu ? ", the other ids its subordinate ranges" : " (no subordinate range: no other id)");
    return 0;
}
