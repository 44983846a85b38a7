#!/usr/bin/env bash
# A sandbox's workspace is idmapped: what the command makes there belongs
# to the workspace's owner on the host, root included. A set-user-ID or
# set-group-ID bit on such a file would be a setuid-root (or setgid-root)
# program left on the host for anyone who reaches it; nosuid on the
# sandbox's own mount does not help the host's copy. The attack: a static
# program in the sandbox tries every route to such a bit (chmod, fchmod,
# fchmodat, fchmodat2, the modes of open, openat, creat, mknod, mknodat and
# openat2, the i386 and x32 ABIs, io_uring) and to a file capability or a
# security.*/trusted.* attribute, in a root-owned workspace, one of a fresh
# uid and one of uid 1000 (the old way), under the agent policy and under
# a policy whose own filter lets the compat ABIs through; in `sandbox run`
# and `sandbox exec`. Each route must be refused (or killed) while the
# controls (a plain chmod, a created file, a user.* attribute) work, and
# the host's copies must carry no set-id bit and no such attribute.
# Against a brig without the set-id filter and idmapped workspace: the
# routes pass in the uid-1000 workspace, the controls fail in the others.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
command -v python3 >/dev/null || skip_all "python3 is needed to read the host copies' attributes"
SRC=$BRIG_SECURITY_SRC/sandbox-setid
REPO=$(cd "$(dirname "$0")/../.." && pwd)
ROOTFS=$T/rootfs
busybox_rootfs "$ROOTFS" sh true
build_static "$ROOTFS/usr/bin/setid" "$SRC/setid.c"
SB_STATE=$T/sbstate
ROUTES="chmod-u+s chmod-g+s fchmod fchmodat fchmodat2 open-creat openat-creat creat mknod mknodat openat2
        io_uring_setup chmod-i386 chmod-x32 xattr-security.capability xattr-security.other xattr-trusted"
CONTROLS="control-chmod-0755 control-open-0644 control-user-xattr"

# The policy's own filter widened to the i386 and x32 ABIs: brig's set-id
# filter must hold whatever the policy's allows. Its workspace is staged
# (workspace.bound "stage"; agent's is watched, a live bind): what the
# command wrote reaches the host through the write-back, as root.
jq '.architectures += ["SCMP_ARCH_X86", "SCMP_ARCH_X32"]' "$REPO/policy/seccomp-default.json" > "$T/wide-seccomp.json"
"$BRIG" policy show agent | jq --arg f "$T/wide-seccomp.json" \
    '.name = "wide" | .seccomp = {"profile": "file", "path": $f} | .workspace.bound = "stage"' > "$T/wide.json"

sbx() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$SB_STATE" "${@:2}"; }
NAME=setid-$TAG
trap 'rc=$?; sbx rm --force "$NAME" >/dev/null 2>&1; (exit $rc); it_finish' EXIT

# judge DESC WS OUT.json: every route refused, every control allowed, and
# on the host no set-id bit and no attribute but user.* in WS
judge() {
    local desc=$1 ws=$2 out=$3 res r line bad=""
    res=$(jq -r '.stdout.preview_head' "$out" 2>/dev/null)
    check "$desc: the probe ran to its end" grep -qx DONE <<<"$res" || { diag "$(cat "$out")"; return; }
    for r in $CONTROLS; do
        line=$(grep "^$r " <<<"$res")
        [ "$line" = "$r allowed" ] || bad="$bad [$line]"
    done
    check_eq "$desc: the controls work (the workspace is the command's to write)" "$bad" ""
    bad=""
    for r in $ROUTES; do
        line=$(grep "^$r " <<<"$res")
        case $line in "$r refused"* | "$r killed"*) ;; *) bad="$bad [${line:-$r: no line}]" ;; esac
    done
    check_eq "$desc: every set-id and capability route refused" "$bad" ""
    check_eq "$desc: no set-id file on the host" "$(find "$ws" -perm /6000 ! -name host-setid | tr '\n' ' ')" ""
    check_eq "$desc: no security.* or trusted.* attribute on the host" "$(python3 -c '
import os, sys
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    for a in os.listxattr(os.path.join(d, f), follow_symlinks=False):
        if not a.startswith("user."):
            print(f, a)' "$ws" | tr '\n' ' ')" ""
}

# host_setid WS OWNER: a set-id program of the workspace's owner, as the
# host may leave one there (a root build step in a root-owned workspace)
host_setid() {
    printf 'host program\n' > "$1/host-setid" && chown "$2" "$1/host-setid" && chmod 4755 "$1/host-setid"
}
# rewritten DESC WS OUT.json: in a staged workspace the command rewrote
# that program through a shared mapping (the kernel clears the set-id bits
# on write(), not there): the write-back must not give it back to the host
# a set-id program of the command's. (A live bind is the host's file
# itself: there the bit stays, docs/security.md.)
rewritten() {
    local res; res=$(jq -r '.stdout.preview_head' "$3" 2>/dev/null)
    check_eq "$1: the workspace is staged (an overlay inside)" "$(sed -n 's/^workspace-fs //p' <<<"$res")" overlay
    check_eq "$1: the command rewrote the host's set-id file through a mapping" \
        "$(grep '^mapped-rewrite' <<<"$res") $(head -c 9 "$2/host-setid")" "mapped-rewrite done REWRITTEN"
    check_eq "$1: the staged write-back gives it back without its set-id bit" \
        "$(find "$2/host-setid" -perm /6000 | wc -l)" 0
}

for owner in 0:0 54321:54322 1000:1000; do
    ws=$T/ws-${owner%%:*}
    mkdir -p "$ws" && chown "$owner" "$ws"
    for pol in agent "$T/wide.json"; do
        rm -rf "${ws:?}"/*
        host_setid "$ws" "$owner"
        if [ "$pol" = agent ]; then
            # a live (watched) bind: the host's set-id file would keep its
            # bit through a mapped rewrite, so the run is refused before it
            sbx run --json --policy "$pol" --rootfs "$ROOTFS" --workspace "$ws" --env "BRIG_IT_TAG=$TAG-sb" \
                -- /usr/bin/setid /workspace > "$T/out.json" 2>> "$T/brig.err"
            check_eq "run, workspace of $owner, watched: refused, naming the writable set-id file" \
                "$(jq -r '[.exit_status, (.error | test("writable set-id file \\(host-setid\\)"))] | @tsv' "$T/out.json")" \
                "$(printf '125\ttrue')"
            check_eq "... the file untouched, its bit kept (the host's own)" \
                "$(head -c 12 "$ws/host-setid") $(find "$ws/host-setid" -perm -4000 | wc -l)" "host program 1"
            rm -f "$ws/host-setid"
        fi
        sbx run --json --policy "$pol" --rootfs "$ROOTFS" --workspace "$ws" --env "BRIG_IT_TAG=$TAG-sb" \
            -- /usr/bin/setid /workspace > "$T/out.json" 2>> "$T/brig.err"
        judge "run, workspace of $owner, policy $(basename "$pol" .json)" "$ws" "$T/out.json"
        [ "$pol" = agent ] || rewritten "run, workspace of $owner, policy $(basename "$pol" .json)" "$ws" "$T/out.json"
        check_eq "run, workspace of $owner: the command's files are $owner on the host" \
            "$(stat -c %u:%g "$ws/c-create" 2>/dev/null)" "$owner"
    done
done

# exec into a long-lived sandbox, root's workspace
ws=$T/ws-0
rm -rf "${ws:?}"/*
host_setid "$ws" 0:0
sbx create --policy "$T/wide.json" --rootfs "$ROOTFS" --workspace "$ws" --env "BRIG_IT_TAG=$TAG-sb" "$NAME" >/dev/null
check_eq "create: exit 0" "$?" 0
sbx exec --json "$NAME" -- /usr/bin/setid /workspace > "$T/out.json" 2>> "$T/brig.err"
judge "exec, workspace of 0:0, policy wide" "$ws" "$T/out.json"
rewritten "exec, workspace of 0:0, policy wide" "$ws" "$T/out.json"
sbx rm --force "$NAME" >/dev/null
check_eq "nothing of the sandboxes left" "$(tagged_pids "$TAG-sb" | tr '\n' ' ')" ""
