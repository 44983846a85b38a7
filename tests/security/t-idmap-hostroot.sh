#!/usr/bin/env bash
# An idmapped mount must not let a policy-bound container leave host-root
# files on the host. The attack: under a policy that allows root only inside
# a user namespace (user.userns), the config adds "idmap" to the workspace
# bind: it takes the container's mapping (0 -> 100000), so what container
# root makes there is stored as uid 0 on disk. Container root drops a
# setuid copy of busybox into the workspace: on the host, a setuid-root
# binary any host user can run. user.nonroot must refuse the mapping.
# (Idmapped mounts are new: the pre-feature brig refuses every one, so this
# attack cannot run against /work/baseline/brig; the "use" half shows the
# channel is real without a policy.)
# shellcheck source=tests/security/lib.sh disable=SC2016  # jq filters
. "$(dirname "$0")/lib.sh"
it_init
[ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] ||
    skip_all "user namespaces are disabled (user.max_user_namespaces = 0)"

ATTACK='cp /bin/busybox /workspace/rootsh && chmod 4755 /workspace/rootsh && echo DROPPED'
"$BRIG" policy show agent | jq '.user = {userns: true} | .audit.path = $a' --arg a "$T/audit.jsonl" > "$T/userns.json"
# policy_bundle NAME: the agent policy applied to a user-namespaced bundle, workspace $T/NAME-ws.
policy_bundle() {
    local name=$1
    mkb "$name" -- /bin/sh -c "$ATTACK" || return 1
    mkdir -p "$T/$name-ws"
    cfg "$name" '.linux.namespaces += [{type: "user"}]
        | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
        | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
        | .mounts |= map(select(.destination != "/sys/fs/cgroup"))'
    "$BRIG" policy apply --policy "$T/userns.json" --workspace "$T/$name-ws" \
        --output "$T/$name/config.json" "$T/$name" >/dev/null || return 1
    cfg "$name" '(.mounts[] | select(.destination == "/workspace") | .options) += ["idmap"]'
}

# ---- the use: without a policy the user asked for it, and gets it (as crun) ---
policy_bundle use || bail "cannot build the bundle"
run_ct use
check_eq "without a policy the idmapped workspace runs (exit 0)" "$RC" 0
[ "$RC" = 0 ] || diag "$(cat "$T/use.err")"
check_eq "and root inside made a setuid file owned by host root (the channel is real)" \
    "$(stat -c '%u %a' "$T/use-ws/rootsh" 2>&1)" "0 4755"
assert_clean use

# ---- the attack: the same under the policy ----------------------------------------
policy_bundle attack || bail "cannot build the bundle"
CLEAN_IDS+=("$(cid attack)")
b --policy "$T/userns.json" run --bundle "$T/attack" "$(cid attack)" </dev/null >"$T/attack.out" 2>"$T/attack.err"
rc=$?
n=$(jq '[.mounts[].destination] | index("/workspace")' "$T/attack/config.json")
check_refused_rc "the policy refuses the idmapped workspace (user.nonroot, mounts[$n].options)" \
    "mounts[$n].options" 1 "$rc" "$T/attack.err"
check "the refusal names the rule" grep -qF "user.nonroot" "$T/attack.err"
check_not "no setuid-root file was left on the host" test -e "$T/attack-ws/rootsh"
assert_clean attack
