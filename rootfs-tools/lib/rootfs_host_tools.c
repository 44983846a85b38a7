/* What `brig-rootfs from-host --with` names (docs/rootfs.md): the groups of
 * programs a shell command commonly runs, and which tools bring the host's
 * CA certificates with them. The builder (rootfs_host.c) looks each program
 * up in its fixed PATH; a group's programs the host lacks are left out. */
#include "rootfs.h"

#include <string.h>

#include "../../runtime/util/cleanup.h"
#include "../../runtime/util/strutil.h"

/* GNU coreutils 9.1 (Debian 12's coreutils package), all of it. */
static const char *const tools_coreutils[] = {
    "[", "arch", "b2sum", "base32", "base64", "basename", "basenc", "cat", "chcon", "chgrp", "chmod", "chown",
    "chroot", "cksum", "comm", "cp", "csplit", "cut", "date", "dd", "df", "dir", "dircolors", "dirname", "du",
    "echo", "env", "expand", "expr", "factor", "false", "fmt", "fold", "groups", "head", "hostid", "id",
    "install", "join", "link", "ln", "logname", "ls", "md5sum", "mkdir", "mkfifo", "mknod", "mktemp", "mv",
    "nice", "nl", "nohup", "nproc", "numfmt", "od", "paste", "pathchk", "pinky", "pr", "printenv", "printf",
    "ptx", "pwd", "readlink", "realpath", "rm", "rmdir", "runcon", "seq", "sha1sum", "sha224sum", "sha256sum",
    "sha384sum", "sha512sum", "shred", "shuf", "sleep", "sort", "split", "stat", "stdbuf", "stty", "sum",
    "sync", "tac", "tail", "tee", "test", "timeout", "touch", "tr", "true", "truncate", "tsort", "tty", "uname",
    "unexpand", "uniq", "unlink", "users", "vdir", "wc", "who", "whoami", "yes", NULL,
};
static const char *const tools_findutils[] = { "find", "xargs", NULL };
static const char *const tools_diffutils[] = { "diff", "cmp", "diff3", "sdiff", NULL };
static const char *const tools_procps[] = { "ps", "pgrep", "pkill", "free", NULL };
static const char *const tools_gzip[] = { "gzip", "gunzip", "zcat", NULL };
static const char *const tools_xz[] = { "xz", "unxz", "xzcat", NULL };
static const char *const tools_zstd[] = { "zstd", "unzstd", "zstdcat", NULL };

static const struct {
    const char *name;
    const char *const *tools;
} tools_groups[] = {
    { "coreutils", tools_coreutils }, { "findutils", tools_findutils }, { "diffutils", tools_diffutils },
    { "procps", tools_procps }, { "gzip", tools_gzip }, { "xz", tools_xz }, { "zstd", tools_zstd },
};

const char *const *rootfs_host_group(const char *name)
{
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(tools_groups); i++)
        if (strcmp(name, tools_groups[i].name) == 0) return tools_groups[i].tools;
    return NULL;
}

/* Their TLS (python's ssl, curl, git over https, pip, node with
 * --use-openssl-ca) verifies servers against the system's CA store. */
bool rootfs_host_wants_ca(const char *tool)
{
    const char *base = strrchr(tool, '/') ? strrchr(tool, '/') + 1 : tool;
    static const char *const exact[] = { "curl", "git", "node", "nodejs", "npm", "pip", "wget" };
    for (size_t i = 0; i < BRIG_ARRAY_SIZE(exact); i++)
        if (strcmp(base, exact[i]) == 0) return true;
    return strncmp(base, "python3", 7) == 0 || strncmp(base, "pip3", 4) == 0;
}
