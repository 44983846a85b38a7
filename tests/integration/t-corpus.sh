#!/usr/bin/env bash
# The corpus of real default configs (tests/data/configs) runs
# under brig unchanged but for what ties a config to the machine it was
# made on (listed in tests/data/configs/README.md).
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/lib.sh"
it_init
CORPUS=$(cd "$(dirname "$0")/../data/configs" && pwd)
[ -d "$CORPUS" ] || bail "no corpus at $CORPUS"

# Our hard limit, when we cannot raise it (no CAP_SYS_RESOURCE in our bounding set).
bnd=$((16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)))
rl_cap=
[ $(( (bnd >> 24) & 1 )) = 1 ] || rl_cap=$(ulimit -Hn)

for f in "$CORPUS"/*.json; do
    name=$(basename "$f" .json)
    "$BRIG_MKBUNDLE" --probe "$BRIG_PROBE" --brig "$BRIG" --no-config "$T/$name" >/dev/null ||
        bail "cannot build the rootfs for $name"
    mkdir -p "$T/$name/userdata/shm" || bail "bundle $name"
    for u in hosts hostname resolv.conf .containerenv; do echo "# $u" >"$T/$name/userdata/$u"; done
    jq --arg id "$(cid "$name")" --arg u "$T/$name/userdata" --arg rl "$rl_cap" '
        .root.path = "rootfs" | .process.terminal = false
        | .process.args = ["/usr/bin/brig-probe", "report"]
        | .linux.cgroupsPath = "/brig-test/" + $id
        | .process.env = ((.process.env // []) + ["BRIG_IT_TAG=" + $id])
        | .mounts = [(.mounts // [])[] | if (.source // "") | test("^/(run|var/lib)/containers/storage/")
                     then .source = $u + "/" + (.source | split("/") | last) else . end]
        | .linux.namespaces = [.linux.namespaces[] | if .type == "network" then del(.path) else . end]
        | if $rl != "" then .process.rlimits = [(.process.rlimits // [])[]
              | if .hard > ($rl | tonumber) then .hard = ($rl | tonumber) | .soft = ([.soft, .hard] | min) else . end]
          else . end' "$f" >"$T/$name/config.json" || bail "config $name"
    cmp -s <(jq -S '.process.rlimits // []' "$f") <(jq -S '.process.rlimits // []' "$T/$name/config.json") ||
        diag "$name: rlimits above our hard limit ($rl_cap) lowered (no CAP_SYS_RESOURCE here)"
    run_ct "$name"
    check_ran "$name: runs under brig" "$name"
    check_probe "$name: as root, in its own mount and pid namespaces" "$name" \
        '.uid == 0 and .pid == 1 and .namespaces.mnt != ($m | tonumber)' --arg m "$(host_ns mnt)"
    assert_clean "$name"
done
