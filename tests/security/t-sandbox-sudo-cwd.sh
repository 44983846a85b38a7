#!/bin/bash
# --cwd through sudo (docs/sandbox.md "Through sudo"): the caller chooses
# the command's working directory, never a directory root makes. As
# process.cwd the init made a missing cwd as root while the rootfs was
# still writable: `sudo brig sandbox run --cwd /x` left /x, root's, in the
# host's rootfs (the one every sandbox shares), and a symlink planted in the
# caller's workspace aimed that mkdir at any path of it. Performed for
# real: `nobody` runs sudo under a sudoers drop-in of this test's own
# (removed on exit); the rootfs of sandbox.conf is the test's own copy.
. "$(dirname "$0")/lib.sh"
it_init
# shellcheck source=tests/security/sudo-lib.sh
. "$(dirname "$0")/sudo-lib.sh"
mkdir -p "$T/wsroot/mine/sub"
chown 65534:65534 "$T/wsroot/mine/sub" && chmod 0777 "$T/wsroot/mine/sub"
j() { jq -r "$1" "$T/out.json" 2>/dev/null; }
R=$T/b/rootfs

# ---- attacks: a directory made as root in the host's rootfs ----
as_caller --workspace mine --cwd "/brig-made-$TAG" -- true
check_not "--cwd missing from the rootfs: nothing made in the host's rootfs" test -e "$R/brig-made-$TAG"
check_eq "--cwd missing from the rootfs: exit 125" "$RC" 125 || diag "$(cat "$T/out.json" "$T/err.txt")"
check "--cwd missing from the rootfs: named" \
    bash -c "jq -r .stderr.preview_head '$T/out.json' | grep -qF -- '--cwd /brig-made-$TAG: No such file or directory (brig does not create it)'" ||
    diag "$(cat "$T/out.json" "$T/err.txt")"
# the caller's workspace holds a symlink aimed at a directory of the rootfs
ln -s /etc "$T/wsroot/mine/out" && chown -h 65534:65534 "$T/wsroot/mine/out"
as_caller --workspace mine --cwd "/workspace/out/brig-link-$TAG/a" -- true
check_not "--cwd through a symlink in the workspace: nothing made in the rootfs" test -e "$R/etc/brig-link-$TAG"
check_eq "... exit 125" "$RC" 125 || diag "$(cat "$T/out.json" "$T/err.txt")"
as_caller --workspace mine --cwd /workspace/newdir -- true
check_not "--cwd missing from the workspace: no root-owned directory made in it" test -e "$T/wsroot/mine/newdir"

# ---- use: an existing directory is the command's cwd ----
as_caller --workspace mine --cwd /workspace/sub -- sh -c 'pwd; touch made-here'
check_eq "--cwd /workspace/sub: runs (exit 0)" "$RC" 0 || diag "$(cat "$T/out.json" "$T/err.txt")"
check_eq "... its cwd" "$(j .stdout.preview_head)" /workspace/sub
check "... and what it made is there" test -e "$T/wsroot/mine/sub/made-here"
as_caller --workspace mine --cwd /usr -- pwd
check_eq "--cwd /usr (in the rootfs): its cwd" "$(j .stdout.preview_head)" /usr
as_caller --workspace mine -- pwd
check_eq "no --cwd: the workspace" "$(j .stdout.preview_head)" /workspace
ln -s /workspace/sub "$T/wsroot/mine/tosub" && chown -h 65534:65534 "$T/wsroot/mine/tosub"
as_caller --workspace mine --cwd /workspace/tosub -- pwd -P
check_eq "--cwd through a symlink inside the sandbox: followed there" "$(j .stdout.preview_head)" /workspace/sub
