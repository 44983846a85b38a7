#!/usr/bin/env bash
# A startContainer hook's path resolves in the container (config.md
# "startContainer"): the program is the image's. It must run confined as the
# process is (process.user, capabilities, no_new_privs, seccomp), as runc
# runs it (after finalizeNamespace and seccomp, just before the exec), never
# as the still-privileged init: with all capabilities and no user namespace
# an image's hook reads any host file on the rootfs' filesystem by file
# handle (open_by_handle_at, CAP_DAC_READ_SEARCH: the "shocker" escape).
# The hostile hook is a small static program compiled here; the secret is a
# decoy in the test's temp dir, outside the rootfs.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

cat >"$T/h.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Prints its confinement, then tries to read the host file whose handle
 * the test left in /handle (outside the rootfs). */
int main(void)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "r");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (!strncmp(line, "Uid:", 4) || !strncmp(line, "CapEff:", 7) ||
            !strncmp(line, "NoNewPrivs:", 11) || !strncmp(line, "Seccomp:", 8))
            fprintf(stderr, "hook %s", line);
    unsigned char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
    struct file_handle *h = (struct file_handle *)buf;
    int hf = open("/handle", O_RDONLY);
    if (hf < 0 || read(hf, buf, sizeof(buf)) < (ssize_t)sizeof(*h)) return 0;
    int root = open("/", O_RDONLY | O_DIRECTORY);
    int fd = open_by_handle_at(root, h, O_RDONLY);
    if (fd < 0) { fprintf(stderr, "hook open_by_handle_at: %m\n"); return 0; }
    char secret[64] = { 0 };
    if (read(fd, secret, sizeof(secret) - 1) > 0) fprintf(stderr, "hook read host file: %s\n", secret);
    return 0;
}
EOF
build_static "$T/h" "$T/h.c"

# The handle of the decoy, made on the host.
cat >"$T/mkhandle.c" <<'EOF'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    unsigned char buf[sizeof(struct file_handle) + MAX_HANDLE_SZ];
    struct file_handle *h = (struct file_handle *)buf;
    int mnt;
    h->handle_bytes = MAX_HANDLE_SZ;
    if (argc != 2 || name_to_handle_at(AT_FDCWD, argv[1], h, &mnt, 0) < 0) { perror("handle"); return 1; }
    return write(1, buf, sizeof(*h) + h->handle_bytes) > 0 ? 0 : 1;
}
EOF
build_static "$T/mkhandle" "$T/mkhandle.c"
SECRET="host-secret-$RANDOM$RANDOM"
printf '%s\n' "$SECRET" >"$T/secret"
chmod 0600 "$T/secret"

# hookb NAME USER: a bundle whose startContainer hook is the image's /h.
hookb() {
    mkb "$1" --rw -- /usr/bin/brig-probe report || bail "cannot build bundle $1"
    cp "$T/h" "$T/$1/rootfs/h"
    "$T/mkhandle" "$T/secret" >"$T/$1/rootfs/handle" || bail "no file handle for the decoy"
    cfg "$1" '.hooks = {startContainer: [{path: "/h"}]} | .process.user = {uid: ($u|tonumber), gid: ($u|tonumber)}' \
        --arg u "$2"
}

# check_hook NAME WHAT: the hook ran, read nothing of the host, and was no
# more privileged than the process.
check_hook() {
    local name=$1 what=$2 err=$T/$1.err
    check "$what: the startContainer hook ran" grep -q '^hook Uid:' "$err"
    check_not "$what: the hook did not read the host file by handle" grep -q "$SECRET" "$err"
    check_eq "$what: the hook has the process's capabilities (none)" \
        "$(awk '/^hook CapEff:/ { print $3 }' "$err")" 0000000000000000
    check_eq "$what: the hook has no_new_privs" "$(awk '/^hook NoNewPrivs:/ { print $3 }' "$err")" 1
    check_eq "$what: the hook runs as process.user" "$(awk '/^hook Uid:/ { print $3 }' "$err")" "$3"
}

# ---- run, uid 0 with no capabilities: the hook must not have more ------------------
hookb r0 0
cfg r0 '.process.capabilities = {bounding: [], effective: [], permitted: []}'
run_ct r0
check "run: the container ran (uid 0)" [ "$RC" = 0 ]
check_hook r0 "run as uid 0" 0
assert_clean r0

# ---- create + start, uid 1000 ------------------------------------------------------------
hookb c1 1000
create_ct c1
check "create: the container is created" [ "$RC" = 0 ]
b start "$(cid c1)" >/dev/null 2>&1
wait_status "$(cid c1)" stopped 10 || true
check_hook c1 "create+start as uid 1000" 1000
b delete -f "$(cid c1)" >/dev/null 2>&1
assert_clean c1

# ---- use: a startContainer hook still runs in the container, and its
# failure still fails the run ------------------------------------------------------------
hookb u 1000
cfg u '.hooks.startContainer = [{path: "/bin/sh", args: ["sh", "-c", "id -u >&2; test -d /usr/bin"]}]'
run_ct u
check_eq "use: a hook in the container runs, as process.user" "$(head -n 1 "$T/u.err")" 1000
check_ran "use: the process runs after the hook" u
cfg u '.hooks.startContainer = [{path: "/bin/sh", args: ["sh", "-c", "exit 3"]}]'
run_ct u
check "use: a failing hook fails the run" eval '[ "$RC" != 0 ] && grep -q "hooks.startContainer\[0\]" "$T/u.err"'
assert_clean u
