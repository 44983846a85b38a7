#!/usr/bin/env bash
# An idmapped mount must not let a policy-bound container leave setgid (or
# setuid) programs of a host system account on the host. The attack, under
# the agent policy (uid 1000, no user namespace, enforced at run): the
# config gives the workspace bind its own mappings, none touching id 0:
# on-disk 1000 seen as 1000 (the workspace owner's), and on-disk gid 6
# (disk) seen as 1001, a supplementary group of the process. The command
# chgrps a program to 1001 and sets the setgid bit (its own group, as it
# sees it): the host holds a setgid-disk program any host user can run to
# read the raw disks. user.nonroot must refuse on-disk system ids.
# shellcheck source=tests/security/lib.sh disable=SC2016  # jq filters
. "$(dirname "$0")/lib.sh"
it_init
[ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] ||
    skip_all "user namespaces are disabled (user.max_user_namespaces = 0)"
printf '#include <stdio.h>\n#include <unistd.h>\nint main(void){printf("%%u\\n", getegid());return 0;}\n' > "$T/egid.c"
build_static "$T/egid" "$T/egid.c"
ATTACK='cp /bin/egid /workspace/setgid && chgrp 1001 /workspace/setgid && chmod 2755 /workspace/setgid && echo DROPPED'
"$BRIG" policy show agent | jq '.audit.path = $a' --arg a "$T/audit.jsonl" > "$T/agent.json"
chmod o+x "$T"
# policy_bundle NAME GIDDISK: the agent policy applied; the workspace (1000's)
# idmapped: on-disk 1000 as 1000, on-disk gid GIDDISK as 1001
policy_bundle() {
    local name=$1 g=$2
    mkb "$name" -- /bin/sh -c "$ATTACK" || return 1
    install -m 0755 "$T/egid" "$T/$name/rootfs/bin/egid"
    mkdir -p "$T/$name-ws" && chown 1000:1000 "$T/$name-ws"
    cfg "$name" '.mounts |= map(select(.destination != "/sys/fs/cgroup"))'
    "$BRIG" policy apply --policy "$T/agent.json" --workspace "$T/$name-ws" \
        --output "$T/$name/config.json" "$T/$name" >/dev/null || return 1
    cfg "$name" "(.mounts[] | select(.destination == \"/workspace\"))
        += {uidMappings: [{containerID: 1000, hostID: 1000, size: 1}],
            gidMappings: [{containerID: 1000, hostID: 1000, size: 1}, {containerID: $g, hostID: 1001, size: 1}]}
        | .process.user.additionalGids = [1001]"
}
egid_on_host() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$1" 2>&1; }
# ---- the use: an ordinary on-disk group (2000): the channel is real ----------
policy_bundle use 2000 || bail "cannot build the bundle"
b --policy "$T/agent.json" run --bundle "$T/use" "$(cid use)" </dev/null >"$T/use.out" 2>"$T/use.err"
rc=$?
check_eq "under the policy, the workspace idmapped to on-disk gid 2000 runs (exit 0)" "$rc" 0 ||
    diag "$(cat "$T/use.err")"
check_eq "and the command left a setgid program of gid 2000 on disk" \
    "$(stat -c '%u:%g %a' "$T/use-ws/setgid" 2>&1)" "1000:2000 2755"
check_eq "which a host user runs with egid 2000" "$(egid_on_host "$T/use-ws/setgid")" 2000
assert_clean use
# ---- the attack: on-disk gid 6 (disk) -----------------------------------------
# the use's bundle, its workspace fresh, gid 2000 on disk now 6
n=$(jq '[.mounts[].destination] | index("/workspace")' "$T/use/config.json")
cp -a "$T/use" "$T/attack" && mkdir "$T/attack-ws" && chown 1000:1000 "$T/attack-ws" || bail "cannot copy the bundle"
cfg attack "(.mounts[$n].source = \"$T/attack-ws\") | (.mounts[$n].gidMappings[1].containerID = 6)"
CLEAN_IDS+=("$(cid attack)")
b --policy "$T/agent.json" run --bundle "$T/attack" "$(cid attack)" </dev/null >"$T/attack.out" 2>"$T/attack.err"
rc=$?
[ -e "$T/attack-ws/setgid" ] &&
    diag "left on the host: $(stat -c '%U:%G %A' "$T/attack-ws/setgid"); a host user runs it with egid $(egid_on_host "$T/attack-ws/setgid")"
check_refused_rc "the policy refuses on-disk gid 6 (user.nonroot, mounts[$n].gidMappings)" \
    "mounts[$n].gidMappings: gid 6 on disk is mapped: a system id" 1 "$rc" "$T/attack.err"
check "the refusal names the rule" grep -qF "user.nonroot" "$T/attack.err"
check_not "no setgid program of the disk group was left on the host" test -e "$T/attack-ws/setgid"
assert_clean attack
# the uid side, and a range that starts below 1000 and reaches above it
rm -f "$T/attack-ws/setgid"
cfg attack "(.mounts[$n].uidMappings = [{containerID: 1, hostID: 1000, size: 1}])
    | .mounts[$n].gidMappings = [{containerID: 900, hostID: 1000, size: 200}]"
b --policy "$T/agent.json" run --bundle "$T/attack" "$(cid attack)" </dev/null >"$T/attack.out" 2>"$T/attack.err"
rc=$?
check_refused_rc "the policy refuses on-disk uid 1 (mounts[$n].uidMappings)" \
    "mounts[$n].uidMappings: uid 1 on disk is mapped: a system id" 1 "$rc" "$T/attack.err"
check "... and on-disk gids 900-1099 (mounts[$n].gidMappings)" grep -qF "mounts[$n].gidMappings: gid 900 on disk" "$T/attack.err"
check_not "nothing was left on the host" test -e "$T/attack-ws/setgid"
assert_clean attack
# ---- under brig's set-id filter (a sandbox's annotation): allowed, no bit ----
# on-disk gid 6 mapped again, with org.brig.no-setid: the rule lets it run
# (no set-id bit can be set in it), and the chmod 2755 is refused
rm -f "$T/attack-ws/setgid"
cfg attack "(.mounts[$n].uidMappings = [{containerID: 1000, hostID: 1000, size: 1}])
    | (.mounts[$n].gidMappings = [{containerID: 1000, hostID: 1000, size: 1}, {containerID: 6, hostID: 1001, size: 1}])
    | .annotations[\"org.brig.no-setid\"] = \"true\""
b --policy "$T/agent.json" run --bundle "$T/attack" "$(cid attack)" </dev/null >"$T/attack.out" 2>"$T/attack.err"
rc=$?
check "under brig's set-id filter on-disk gid 6 may be mapped: it runs, the chmod refused" \
    grep -q "chmod: .*Operation not permitted" "$T/attack.err" || diag "exit $rc: $(cat "$T/attack.err")"
check_not "under brig's set-id filter: no setgid program left on the host" test -g "$T/attack-ws/setgid"
assert_clean attack
# ---- the same channel without an idmapped mount: a system supplementary group --
# additionalGids [6]: uid 1000 is in group disk on the host kernel, chgrps its
# program to 6 in the plain workspace and sets the setgid bit.
rm -rf "$T/groups" "$T/groups-ws" && cp -a "$T/attack" "$T/groups" && mkdir "$T/groups-ws" && chown 1000:1000 "$T/groups-ws"
cfg groups "(.mounts[$n].source = \"$T/groups-ws\") | del(.mounts[$n].uidMappings, .mounts[$n].gidMappings) | .process.user.additionalGids = [6]
    | .process.args = [\"/bin/sh\", \"-c\", \"cp /bin/egid /workspace/setgid && chgrp 6 /workspace/setgid && chmod 2755 /workspace/setgid\"]"
CLEAN_IDS+=("$(cid groups)")
b --policy "$T/agent.json" run --bundle "$T/groups" "$(cid groups)" </dev/null >"$T/groups.out" 2>"$T/groups.err"
rc=$?
[ -e "$T/groups-ws/setgid" ] &&
    diag "left on the host: $(stat -c '%U:%G %A' "$T/groups-ws/setgid"); a host user runs it with egid $(egid_on_host "$T/groups-ws/setgid")"
check_refused_rc "the policy refuses additionalGids [6] (user.nonroot)" \
    "process.user.additionalGids: 6 (a system group, below 1000" 1 "$rc" "$T/groups.err"
check_not "no setgid program of the disk group was left on the host" test -e "$T/groups-ws/setgid"
assert_clean groups
"$BRIG" policy apply --policy "$T/agent.json" --workspace "$T/groups-ws" --output "$T/groups/applied.json" "$T/groups" >/dev/null
check_eq "policy apply drops the system group (as it drops 0)" \
    "$(jq -c '.process.user.additionalGids' "$T/groups/applied.json")" "[]"
