# The hardened bundle the policy attack tests start from (sourced after
# lib.sh and it_init): the agent profile with the test's own secret dir as
# its forbidden path, applied to a probe bundle; weaken copies it with one
# change. Sets AUDIT, ENF (enforce profile), AUD (audit profile), $T/hard.
# shellcheck shell=bash

AUDIT=$T/audit.jsonl
mkdir -p "$T/secret" "$T/ws"
echo brig-host-secret > "$T/secret/file"
# The agent profile, with our temp secret dir as one more forbidden path
# (and no workspace bound: the writable binds these tests add would fail
# workspace.quota too; t-workspace-quota judges that).
profile_file() { # MODE
    "$BRIG" policy show agent | jq --arg a "$AUDIT" --arg m "$1" --arg s "$T/secret" \
        '.audit.path = $a | .mode = $m | .forbiddenPaths = [$s] | del(.workspace.maxSize)' > "$T/agent-$1.json"
    echo "$T/agent-$1.json"
}
ENF=$(profile_file enforce)
# shellcheck disable=SC2034  # the sourcing test uses it
AUD=$(profile_file audit)

mkb hard -- /usr/bin/brig-probe report || bail "cannot build a bundle"
"$BRIG" policy apply --policy "$ENF" --workspace "$T/ws" --output "$T/hard/config.json" "$T/hard" ||
    bail "policy apply failed"

weaken() { # NAME JQ-FILTER ($s is the secret dir)
    mkdir -p "$T/$1"
    # hard's rootfs by its path (a symlinked rootfs is refused, as by runc)
    jq --arg s "$T/secret" --arg r "$T/hard/rootfs" ".root.path = \$r | $2" "$T/hard/config.json" > "$T/$1/config.json"
}
