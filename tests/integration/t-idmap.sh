#!/usr/bin/env bash
# Idmapped bind mounts (runtime-spec config.md "Mounts":
# uidMappings/gidMappings, "idmap"/"ridmap"): bundles made with `runc spec`.
# A mount mapping reads as a user namespace's (as runc and crun write it):
# a file owned by containerID on disk is seen as hostID.
# shellcheck source=tests/integration/lib.sh disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init
command -v runc >/dev/null || skip_all "runc is not installed (bash scripts/setup.sh installs it)"
[ "$(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo 0)" -gt 0 ] ||
    skip_all "user namespaces are disabled (user.max_user_namespaces = 0)"

# runc_bundle NAME SCRIPT: `runc spec`'s config in $T/NAME, running sh -c
# SCRIPT in one rootfs shared by all (made once: mkb is the slow part).
mkb src -- /bin/sh || bail "cannot build a bundle"
mkdir -p "$T/src/rootfs/m1" "$T/src/rootfs/m2" "$T/src/rootfs/m3" "$T/src/rootfs/m4"
(cd "$T/src" && rm -f config.json && runc spec) || bail "runc spec failed"
runc_bundle() {
    local name=$1 script=$2
    mkdir -p "$T/$name" || return 1
    jq '.root.path = $r | .process.args = ["/bin/sh", "-c", $s] | .process.terminal = false
        | .linux.cgroupsPath = "/brig-test/" + $id
        | .process.env += ["BRIG_IT_TAG=" + $id]' --arg r "$T/src/rootfs" --arg s "$script" \
        --arg id "$(cid "$name")" "$T/src/config.json" > "$T/$name/config.json"
}
# refused NAME MESSAGE: run was refused (exit 1, not a crash) with MESSAGE, nothing left.
refused() {
    local name=$1 msg=$2
    run_ct "$name"
    check_refused_rc "$name: refused (exit 1) with \"$msg\"" "$msg" 1 "$RC" "$T/$name.err"
    assert_clean "$name"
}
SUBMOUNT=
trap '[ -z "$SUBMOUNT" ] || umount "$SUBMOUNT"; it_finish' EXIT

# Host data: d1 owned by 1000, d2 by root, d3 by root with a tmpfs submount.
D=$T/data
mkdir -p "$D/d1" "$D/d2" "$D/d3/sub"
echo one > "$D/d1/f" && chown -R 1000:1000 "$D/d1"
echo two > "$D/d2/f"
mount -t tmpfs -o size=1m brig-idmap "$D/d3/sub" && SUBMOUNT=$D/d3/sub
echo three > "$D/d3/sub/f"
chmod 0777 "$D/d2"

# ---- a user-namespaced container (0 -> 100000): its mapping, "idmap", "ridmap" --
runc_bundle un 'stat -c "m1 %u %g" /m1/f; stat -c "m2 %u %g" /m2/f;
    stat -c "m3 %u %g" /m3/sub/f; stat -c "m4 %u %g" /m4/sub/f;
    touch /m1/new && echo m1-write-ok; touch /m2/new && echo m2-write-ok' ||
    bail "cannot build a runc spec bundle"
cfg un '.linux.namespaces += [{type: "user"}]
    | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
    | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
    | .mounts |= map(select(.destination != "/sys/fs/cgroup"))
    | .mounts += [
        {destination: "/m1", type: "bind", source: ($d + "/d1"), options: ["bind", "idmap"],
         uidMappings: [{containerID: 1000, hostID: 100000, size: 1}],
         gidMappings: [{containerID: 1000, hostID: 100000, size: 1}]},
        {destination: "/m2", type: "bind", source: ($d + "/d2"), options: ["bind", "idmap"]},
        {destination: "/m3", type: "bind", source: ($d + "/d3"), options: ["rbind", "ridmap"]},
        {destination: "/m4", type: "bind", source: ($d + "/d3"), options: ["rbind", "idmap"]}]' \
    --arg d "$D"
run_ct un
check_eq "userns + idmapped mounts: run succeeds" "$RC" 0
[ "$RC" = 0 ] || diag "$(cat "$T/un.err")"
check "the mount's mapping: a file owned by 1000 is 0:0 inside" grep -qx "m1 0 0" "$T/un.out"
check "idmap without mappings uses the container's: a host-root file is 0:0 inside" \
    grep -qx "m2 0 0" "$T/un.out"
check "ridmap maps the submount too" grep -qx "m3 0 0" "$T/un.out"
check "idmap (not ridmap) of an rbind leaves the submount unmapped (65534)" \
    grep -qx "m4 65534 65534" "$T/un.out"
check "root inside can write through the mount's mapping" grep -qx m1-write-ok "$T/un.out"
check "root inside can write a host-root dir through the container's mapping" grep -qx m2-write-ok "$T/un.out"
check_eq "a file made inside /m1 is stored as the mapped id (1000:1000) on the host" \
    "$(stat -c '%u %g' "$D/d1/new" 2>&1)" "1000 1000"
check_eq "a file made inside /m2 is stored as 0:0 on the host" "$(stat -c '%u %g' "$D/d2/new" 2>&1)" "0 0"
check_eq "the host's own view of the source is unchanged" "$(stat -c '%u %g' "$D/d1/f")" "1000 1000"
assert_clean un

# ---- no user namespace: the mount's mapping alone --------------------------------
runc_bundle plain 'stat -c "m1 %u %g" /m1/f; touch /m1/x 2>/dev/null && echo ro-write-ok; true'
cfg plain '.mounts += [{destination: "/m1", type: "bind", source: ($d + "/d1"), options: ["bind", "idmap", "ro"],
    uidMappings: [{containerID: 1000, hostID: 0, size: 1}], gidMappings: [{containerID: 1000, hostID: 0, size: 1}]}]' \
    --arg d "$D"
run_ct plain
check_eq "no userns, mount mapping 1000 -> 0: run succeeds" "$RC" 0
check "a file owned by 1000 is 0:0 inside" grep -qx "m1 0 0" "$T/plain.out"
check_not "\"ro\" holds on the idmapped mount" grep -qx ro-write-ok "$T/plain.out"
check_eq "and nothing was written on the host" "$(ls "$D/d1")" "f
new"
assert_clean plain

# ---- crun's idmap=uids=...;gids=... option (the mapping in the option) ------------
# The same mapping as /m1 above written in the option, absolute and "@"
# relative (the host id given as a container id: 0 is host 100000 here).
runc_bundle ci 'stat -c "c1 %u %g" /m1/f; stat -c "c2 %u %g" /m2/f; touch /m1/by-crun-syntax && echo c1-write-ok'
cfg ci '.linux.namespaces += [{type: "user"}]
    | .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
    | .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
    | .mounts |= map(select(.destination != "/sys/fs/cgroup"))
    | .mounts += [
        {destination: "/m1", type: "bind", source: ($d + "/d1"),
         options: ["bind", "idmap=uids=1000-100000-1;gids=1000-100000-1"]},
        {destination: "/m2", type: "bind", source: ($d + "/d1"),
         options: ["bind", "idmap=uids=@1000-0-1#0-200000-1;gids=@1000-0-1"]}]' --arg d "$D"
run_ct ci
check_eq "idmap=uids=...;gids=... (crun's syntax): run succeeds" "$RC" 0
[ "$RC" = 0 ] || diag "$(cat "$T/ci.err")"
check "a file owned by 1000 is 0:0 inside (absolute ranges)" grep -qx "c1 0 0" "$T/ci.out"
check "the same through @ ranges (relative to linux.uidMappings)" grep -qx "c2 0 0" "$T/ci.out"
check "root inside writes through it" grep -qx c1-write-ok "$T/ci.out"
check_eq "... stored as 1000:1000 on the host" "$(stat -c '%u %g' "$D/d1/by-crun-syntax" 2>&1)" "1000 1000"
assert_clean ci
rm -f "$D/d1/by-crun-syntax"
if other_run crun ci; then
    check_eq "crun runs the same bundle" "$OTHER_RC" 0
    check "... and shows the same owners" bash -c "grep -qx 'c1 0 0' '$T/ci.crun.out' && grep -qx 'c2 0 0' '$T/ci.crun.out'"
    rm -f "$D/d1/by-crun-syntax"
fi
runc_bundle ci-bad 'true'
cfg ci-bad '.mounts += [{destination: "/m", type: "bind", source: $d, options: ["bind", "idmap=uids=1000-0-1;gids=1000--1-1"]}]' \
    --arg d "$D/d1"
refused ci-bad "mounts[7].options[1]: idmap gids=: range 1 is not [@]FROM-TO-SIZE"
runc_bundle ci-half 'true'
cfg ci-half '.mounts += [{destination: "/m", type: "bind", source: $d, options: ["bind", "idmap=uids=1000-0-1"]}]' \
    --arg d "$D/d1"
refused ci-half "mounts[7].options[1]: idmap=: uids without gids"

# ---- refusals, each naming the field ----------------------------------------------
runc_bundle r-tmpfs 'true'
cfg r-tmpfs '.mounts += [{destination: "/t", type: "tmpfs", source: "tmpfs", options: ["idmap"],
    uidMappings: [{containerID: 0, hostID: 1000, size: 1}], gidMappings: [{containerID: 0, hostID: 1000, size: 1}]}]'
refused r-tmpfs "mounts[7].options: only bind mounts can be idmapped by brig (type tmpfs)"

runc_bundle r-proc 'true'
cfg r-proc '.mounts += [{destination: "/p", type: "bind", source: "/proc", options: ["rbind", "idmap"],
    uidMappings: [{containerID: 0, hostID: 1000, size: 1}], gidMappings: [{containerID: 0, hostID: 1000, size: 1}]}]'
refused r-proc "mounts[7] (/p): the filesystem of source /proc cannot be idmapped"

runc_bundle r-size 'true'
cfg r-size '.mounts += [{destination: "/m", type: "bind", source: $d, options: ["bind", "idmap"],
    uidMappings: [{containerID: 0, hostID: 1000, size: 0}], gidMappings: [{containerID: 0, hostID: 1000, size: 1}]}]' \
    --arg d "$D/d1"
refused r-size "mounts[7].uidMappings[0].size: must be greater than 0"

runc_bundle r-overlap 'true'
cfg r-overlap '.mounts += [{destination: "/m", type: "bind", source: $d, options: ["bind", "idmap"],
    uidMappings: [{containerID: 0, hostID: 1000, size: 10}, {containerID: 5, hostID: 2000, size: 1}],
    gidMappings: [{containerID: 0, hostID: 1000, size: 1}]}]' --arg d "$D/d1"
refused r-overlap "mounts[7].uidMappings[1]: overlaps entry 0"

runc_bundle r-half 'true'
cfg r-half '.mounts += [{destination: "/m", type: "bind", source: $d, options: ["bind", "idmap"],
    uidMappings: [{containerID: 0, hostID: 1000, size: 1}]}]' --arg d "$D/d1"
refused r-half "mounts[7]: uidMappings and gidMappings must be given together"

runc_bundle r-nouserns 'true'
cfg r-nouserns '.mounts += [{destination: "/m", type: "bind", source: $d, options: ["bind", "idmap"]}]' --arg d "$D/d1"
refused r-nouserns "mounts[7].options: idmap without mounts[7].uidMappings uses the container's user namespace mappings"

# CAP_SYS_ADMIN in the container's user namespace could clear the clone's
# unlocked ro: refused rather than handed over.
mkdir -p "$T/r-sysadmin"
jq '.process.args = ["true"] | .process.env = [.process.env[] | sub("-un$"; "-r-sysadmin")]
    | .linux.cgroupsPath = "/brig-test/" + $id
    | .process.capabilities.bounding += ["CAP_SYS_ADMIN"]
    | .mounts[-4].options += ["ro"]' --arg id "$(cid r-sysadmin)" "$T/un/config.json" > "$T/r-sysadmin/config.json"
refused r-sysadmin "idmapped mount with ro/nosuid/nodev/noexec in a user namespace holding CAP_SYS_ADMIN"

# ---- a policy judges a mount mapping of host uid 0 as linux.uidMappings ----------
"$BRIG" policy show agent | jq '.mode = "enforce" | .audit.path = $a' --arg a "$T/audit.jsonl" > "$T/enf.json"
mkb hard -- /usr/bin/brig-probe report || bail "cannot build a bundle"
"$BRIG" policy apply --policy "$T/enf.json" --workspace "$D/d2" --output "$T/hard/config.json" "$T/hard" >/dev/null 2>&1
jq '.mounts += [{destination: "/m", type: "bind", source: $d, options: ["bind", "idmap"],
    uidMappings: [{containerID: 1000, hostID: 0, size: 1}], gidMappings: [{containerID: 1000, hostID: 0, size: 1}]}]' \
    --arg d "$D/d1" "$T/hard/config.json" > "$T/root-map.json"
n=$(jq '.mounts | length - 1' "$T/root-map.json")
out=$("$BRIG" policy check --policy "$T/enf.json" --format json "$T/root-map.json" 2>&1)
rc=$?
if [ "$rc" = 1 ] && jq -e --arg p "mounts[$n].uidMappings" \
        '[.results[] | select(.pass | not) | select(.rule == "user.nonroot") | .path] | index($p) != null' \
        <<<"$out" >/dev/null; then
    ok "policy check: a mount mapping of host uid 0 fails user.nonroot, naming mounts[$n].uidMappings"
else
    not_ok "policy check: a mount mapping of host uid 0 fails user.nonroot" "exit $rc" "$(head -c 2000 <<<"$out")"
fi
jq '.mounts[-1].uidMappings[0].hostID = 100000 | .mounts[-1].gidMappings[0].hostID = 100000' \
    "$T/root-map.json" > "$T/high-map.json"
out=$("$BRIG" policy check --policy "$T/enf.json" --format json "$T/high-map.json" 2>&1)
check_not "policy check: a mount mapping of host uid 100000 is not a user.nonroot failure" \
    jq -e '[.results[] | select(.pass | not) | select(.rule == "user.nonroot")] | length > 0' <<<"$out"

# The same mapping of host root spelled in crun's option is judged the same.
jq '.mounts[-1].options = ["bind", "idmap=uids=1000-0-1;gids=1000-0-1"]
    | del(.mounts[-1].uidMappings) | del(.mounts[-1].gidMappings)' "$T/root-map.json" > "$T/root-opt.json"
out=$("$BRIG" policy check --policy "$T/enf.json" --format json "$T/root-opt.json" 2>&1)
rc=$?
if [ "$rc" = 1 ] && jq -e --arg p "mounts[$n].uidMappings" \
        '[.results[] | select(.pass | not) | select(.rule == "user.nonroot") | .path] | index($p) != null' \
        <<<"$out" >/dev/null; then
    ok "policy check: idmap=uids=1000-0-1 (host uid 0 in the option) fails user.nonroot too"
else
    not_ok "policy check: idmap=uids=1000-0-1 fails user.nonroot" "exit $rc" "$(head -c 2000 <<<"$out")"
fi

cp "$T/root-map.json" "$T/hard/config.json"
CLEAN_IDS+=("$(cid hard)")
b --policy "$T/enf.json" create --bundle "$T/hard" "$(cid hard)" </dev/null >"$T/hard.out" 2>"$T/hard.err"
check_refused_rc "create under the policy refuses the host-root mount mapping" \
    "mounts[$n].uidMappings" 1 "$?" "$T/hard.err"
assert_clean hard

