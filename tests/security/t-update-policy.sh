#!/usr/bin/env bash
# A sandbox policy bounds memory, pids and CPU at create, run and exec; `brig
# update` must not lift those bounds on a running container under the same
# policy (`update --pids-limit -1 --memory -1` was applied, unjudged). An
# update is judged as create was: the saved config with the update's limits
# in place; what cannot be judged (raw unified keys) is refused. The
# container's cgroup is read from the host to see what was really set.
# shellcheck source=tests/security/lib.sh
. "$(dirname "$0")/lib.sh"
it_init

"$BRIG" policy show agent | jq --arg a "$T/audit.jsonl" '.audit.path = $a' >"$T/agent.json"
mkdir -p "$T/ws"
mkb up -- /usr/bin/brig-probe sleep 120 || bail "cannot build a bundle"
"$BRIG" policy apply --policy "$T/agent.json" --workspace "$T/ws" --output "$T/up/config.json" "$T/up" \
    >"$T/apply.err" 2>&1 || bail "policy apply failed: $(head -c 300 "$T/apply.err")"
ID=$(cid up)
CLEAN_IDS+=("$ID")
b --policy "$T/agent.json" run -d --bundle "$T/up" "$ID" </dev/null >"$T/up.out" 2>"$T/up.err" ||
    bail "the agent container does not start: $(head -c 300 "$T/up.err")"

# The pids limit as the host's cgroup has it (v1 pids hierarchy or v2).
pids_max() {
    local cg f
    cg=$(jq -r '.linux.cgroupsPath' "$T/up/config.json")
    for f in "/sys/fs/cgroup/pids$cg/pids.max" "/sys/fs/cgroup/unified$cg/pids.max" "/sys/fs/cgroup$cg/pids.max"; do
        [ -r "$f" ] && { cat "$f"; return; }
    done
    echo "none"
}
before=$(pids_max)
[ "$before" != none ] || bail "the container's pids.max cannot be found"

# ---- the attack: lift the limits -----------------------------------------------------------
b --policy "$T/agent.json" update --pids-limit -1 --memory -1 "$ID" >"$T/u1.out" 2>&1
RC=$?
check "update --pids-limit -1 --memory -1 is refused under the policy" \
    eval '[ "$RC" != 0 ] && grep -q "limits.pids" "$T/u1.out"'
check_eq "pids.max is unchanged" "$(pids_max)" "$before"
echo '{"unified": {"pids.max": "max"}}' >"$T/res.json"
b --policy "$T/agent.json" update --resources "$T/res.json" "$ID" >"$T/u2.out" 2>&1
RC=$?
check "update --resources with raw unified keys is refused under the policy" \
    eval '[ "$RC" != 0 ] && grep -q "unified" "$T/u2.out"'
check_eq "pids.max is still unchanged" "$(pids_max)" "$before"

# ---- use: an update within the policy's bounds ------------------------------------------
b --policy "$T/agent.json" update --pids-limit 100 "$ID" >"$T/u3.out" 2>&1
check "use: update --pids-limit 100 is allowed (within the policy)" [ $? = 0 ]
check_eq "use: pids.max is 100" "$(pids_max)" 100
check "use: the audit log has the refused and the allowed update" \
    eval 'grep -q "\"op\":\"update\".*\"decision\":\"deny\"" "$T/audit.jsonl" &&
          grep -q "\"op\":\"update\".*\"decision\":\"allow\"" "$T/audit.jsonl"'
b delete -f "$ID" >/dev/null 2>&1
assert_clean up
