#!/usr/bin/env bash
# sandbox run and create leave the check of the config they build to
# create's own check of the same text under the same policy (policy_apply's
# checked_by_create, enforce mode; audit mode still verifies in the apply):
# a config the apply cannot make pass is refused all the same, before the
# command runs, and leaves no state and no cgroup. A rootfs that is a
# world-writable sticky directory (mounts.sockets: it holds other users'
# sockets) is one the apply does not change. Use side: the same rootfs
# without the sticky bit runs.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

R=$T/rootfs
busybox_rootfs "$R" sh touch true
mkdir -p "$T/ws" || bail "cannot make the workspace"
chown 1000:1000 "$T/ws"
SB=$T/sbstate
NAME=unmet-$TAG
"$BRIG" policy show agent | jq --arg a "$T/audit.jsonl" '.audit.path = $a' > "$T/enforce.json" ||
    bail "cannot write the enforce policy"
jq '.mode = "audit"' "$T/enforce.json" > "$T/audit.json" || bail "cannot write the audit policy"
sbx() { timeout -k 5 60 "$BRIG" sandbox "$1" --state-root "$SB" "${@:2}"; }
trap 'rc=$?; sbx rm --force "$NAME" >/dev/null 2>&1; (exit $rc); it_finish' EXIT
# every hierarchy's leaf of a sandbox id (v1, hybrid's unified, cgroup2-only)
leaves() { ls -d /sys/fs/cgroup/*/brig-sandbox/"$1" /sys/fs/cgroup/brig-sandbox/"$1" 2>/dev/null; }
WHY='root.path: "'$R'" is a world-writable sticky directory'

chmod 1777 "$R"
for mode in enforce audit; do
    sbx run --json --policy "$T/$mode.json" --rootfs "$R" --workspace "$T/ws" -- touch /workspace/ran \
        > "$T/run.json" 2> "$T/run.err"
    rc=$?
    id=$(jq -r .id "$T/run.json" 2>/dev/null)
    check_eq "$mode: sandbox run on a sticky rootfs: exit 125" "$rc" 125 || diag "$(cat "$T/run.json" "$T/run.err")"
    check "$mode: ... refused by mounts.sockets" \
        bash -c "jq -r .error '$T/run.json' | grep -F 'mounts.sockets' | grep -qF '$WHY'" ||
        diag "$(cat "$T/run.json")"
    check_eq "$mode: ... nothing ran" "$(jq -r .ran "$T/run.json" 2>/dev/null)" false
    check_not "$mode: ... nothing made in the workspace" test -e "$T/ws/ran"
    check_eq "$mode: ... no state left" "$(compgen -G "$SB/sb-*")" ""
    check_eq "$mode: ... no cgroup left" "$(leaves "$id")" ""

    sbx create --policy "$T/$mode.json" --rootfs "$R" --workspace "$T/ws" "$NAME" > "$T/create.out" 2>&1
    rc=$?
    check_eq "$mode: sandbox create on a sticky rootfs: exit 125" "$rc" 125 || diag "$(cat "$T/create.out")"
    check "$mode: ... refused by mounts.sockets" grep -qF "$WHY" "$T/create.out" || diag "$(cat "$T/create.out")"
    check_not "$mode: ... no state left" test -e "$SB/$NAME"
    check_eq "$mode: ... no cgroup left" "$(leaves "$NAME")" ""
done

# ---- use: the same rootfs, not sticky ----
chmod 0755 "$R"
sbx run --json --policy "$T/enforce.json" --rootfs "$R" --workspace "$T/ws" -- touch /workspace/ran \
    > "$T/run.json" 2> "$T/run.err"
check_eq "the rootfs not sticky: runs (exit 0)" "$?" 0 || diag "$(cat "$T/run.json" "$T/run.err")"
check "... and what it made is there" test -e "$T/ws/ran"
