/* brig without privilege on the host (rootless.h, docs/rootless.md). */
#include "rootless.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/cleanup.h"
#include "../util/fs.h"
#include "../util/log.h"
#include "../util/strutil.h"
#include "ns.h"

extern char **environ;

bool rootless_in_host_userns(void)
{
    /* The host's namespace maps every id to itself: "0 0 4294967295". */
    autofree char *text = NULL;
    if (brig_read_file("/proc/self/uid_map", 4096, &text, NULL, NULL) < 0) return true;
    unsigned long a, b, c;
    int used = 0;
    if (sscanf(text, " %lu %lu %lu %n", &a, &b, &c, &used) != 3) return true;
    return a == 0 && b == 0 && c == 4294967295UL && text[used] == '\0';
}

bool rootless_detect(const char *flag)
{
    if (flag != NULL && strcmp(flag, "true") == 0) return true;
    if (flag != NULL && strcmp(flag, "false") == 0) return false;
    return geteuid() != 0 || !rootless_in_host_userns();
}

int rootless_state_root(const char *leaf, const char *flag, char **out, struct brig_error **err)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (xdg == NULL || xdg[0] != '/')
        return brig_failx(err, "rootless brig (uid %u): XDG_RUNTIME_DIR is %s: set it to a directory "
                          "of your own (mode 0700, as systemd's /run/user/%u), or give %s DIR",
                          (unsigned)geteuid(), xdg == NULL ? "not set" : "not an absolute path",
                          (unsigned)geteuid(), flag);
    autoclose int fd = open(xdg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        return brig_fail(err, errno, "rootless brig: XDG_RUNTIME_DIR %s", xdg);
    if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
        return brig_failx(err, "rootless brig: XDG_RUNTIME_DIR %s is owned by uid %u with mode %04o: "
                          "it must be ours (uid %u) and writable by no one else; fix it or give %s DIR",
                          xdg, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), (unsigned)geteuid(), flag);
    *out = brig_asprintf("%s/%s", xdg, leaf);
    return 0;
}

/* Exactly one mapping, of one id: the caller's own. The kernel lets an
 * unprivileged process write that (and nothing else) itself. */
static bool rootless_self_map(const struct brig_id_mapping *m, size_t n, uint32_t self)
{
    return n == 1 && m[0].size == 1 && m[0].host_id == self;
}

/* newuidmap PID ID HOSTID COUNT...: the setuid helper of shadow's uidmap
 * package, which checks each range against /etc/subuid. */
static int rootless_run_helper(const char *helper, pid_t pid, const char *field,
                               const struct brig_id_mapping *m, size_t n, struct brig_error **err)
{
    size_t argc = 2 + 3 * n;
    autofree char **argv = brig_calloc(argc + 1, sizeof(char *));
    argv[0] = (char *)helper;
    argv[1] = brig_asprintf("%d", (int)pid);
    for (size_t i = 0; i < n; i++) {
        argv[2 + 3 * i] = brig_asprintf("%u", m[i].container_id);
        argv[3 + 3 * i] = brig_asprintf("%u", m[i].host_id);
        argv[4 + 3 * i] = brig_asprintf("%u", m[i].size);
    }
    pid_t child;
    int rc = posix_spawnp(&child, helper, NULL, NULL, argv, environ);
    for (size_t i = 1; i < argc; i++) free(argv[i]);
    if (rc != 0)
        return brig_fail(err, rc, "%s: %s (install the uidmap package: the mappings beyond your own "
                         "id need it and the ranges /etc/subuid and /etc/subgid grant you)", field, helper);
    int status = 0;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR) return brig_fail(err, errno, "%s: wait for %s", field, helper);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return brig_failx(err, "%s: %s failed (status %d): are these ranges granted to uid %u in %s?",
                          field, helper, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                          (unsigned)getuid(), strcmp(helper, "newuidmap") == 0 ? "/etc/subuid" : "/etc/subgid");
    return 0;
}

int rootless_write_id_maps(const struct brig_spec *s, pid_t pid, struct brig_error **err)
{
    const struct brig_linux *l = &s->linux_cfg;
    if (rootless_self_map(l->uid_mappings, l->n_uid_mappings, (uint32_t)geteuid()))
        TRY(ns_write_id_map(pid, "uid_map", "linux.uidMappings", l->uid_mappings, l->n_uid_mappings, err));
    else
        TRY(rootless_run_helper("newuidmap", pid, "linux.uidMappings", l->uid_mappings, l->n_uid_mappings, err));
    if (rootless_self_map(l->gid_mappings, l->n_gid_mappings, (uint32_t)getegid())) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
        if (brig_write_file(path, "deny", 4, err) < 0) return brig_wrap(err, "linux.gidMappings");
        TRY(ns_write_id_map(pid, "gid_map", "linux.gidMappings", l->gid_mappings, l->n_gid_mappings, err));
    } else {
        TRY(rootless_run_helper("newgidmap", pid, "linux.gidMappings", l->gid_mappings, l->n_gid_mappings, err));
    }
    return 0;
}

char *rootless_audit_path(void)
{
    const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (state != NULL && state[0] == '/') return brig_asprintf("%s/brig/audit.jsonl", state);
    if (home != NULL && home[0] == '/') return brig_asprintf("%s/.local/state/brig/audit.jsonl", home);
    return NULL;
}
