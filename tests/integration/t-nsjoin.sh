#!/usr/bin/env bash
# linux.namespaces[].path: a container joins the network, pid, ipc, uts and
# time namespaces of a running one (what the probe inside sees is the other
# container's namespaces, not new ones, not the host's); a path to a
# namespace of the wrong type, a file that is not a namespace and a missing
# file are each refused with brig's own message, before anything exists.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# ---- a container to join -------------------------------------------------------
mkb holder -- /usr/bin/brig-probe sleep 600 || bail "cannot build a bundle"
HAS_TIME=0
[ -e /proc/self/ns/time ] && HAS_TIME=1
cfg holder '.linux.namespaces = [{type: "pid"}, {type: "network"}, {type: "ipc"}, {type: "uts"},
                                 {type: "mount"}] + (if $t == "1" then [{type: "time"}] else [] end)' \
    --arg t "$HAS_TIME"
create_ct holder
[ "$RC" = 0 ] || bail "cannot create the container to join: $(cat "$T/holder.err")"
start_ct holder || bail "the container to join does not start"
HPID=$(state_field "$(cid holder)" pid)
[ -n "$HPID" ] && [ "$HPID" -gt 0 ] || bail "no pid for the container to join"
hns() { stat -L -c %i "/proc/$HPID/ns/$1"; }

# ---- joining each by path --------------------------------------------------------
JOIN=(pid:pid network:net ipc:ipc uts:uts)
[ $HAS_TIME = 1 ] && JOIN+=(time:time)
mkb joiner || bail "cannot build a bundle"
filter='del(.hostname, .domainname) | .linux.namespaces = [{type: "mount"}]'
for j in "${JOIN[@]}"; do
    filter+=" | .linux.namespaces += [{type: \"${j%%:*}\", path: \"/proc/$HPID/ns/${j#*:}\"}]"
done
cfg joiner "$filter"
run_ct joiner
if check_ran "a container joining ${#JOIN[@]} namespaces by path runs" joiner; then
    for j in "${JOIN[@]}"; do
        ns=${j#*:}
        check_probe "joined the $ns namespace of the other container (not the host's)" joiner \
            ".namespaces.$ns == $(hns "$ns") and .namespaces.$ns != $(host_ns "$ns")"
    done
    check_probe "in the joined pid namespace the probe is not pid 1" joiner '.pid > 1'
    check_probe "the joined uts namespace's hostname" joiner '.hostname == "brig"'
    check_probe "a new mount namespace all the same" joiner ".namespaces.mnt != $(hns mnt)"
fi
assert_clean joiner
check "the joined container still runs" kill -0 "$HPID"

# ---- refused paths ----------------------------------------------------------------
# refused_ns NAME TYPE PATH MESSAGE: create fails with MESSAGE, exit 1, and
# nothing of the container exists.
refused_ns() {
    local name=$1 type=$2 path=$3 msg=$4
    mkb "$name" || return
    cfg "$name" 'del(.hostname, .domainname) | .linux.namespaces = [{type: "mount"}, {type: $t, path: $p}]' \
        --arg t "$type" --arg p "$path"
    create_ct "$name"
    check_refused_rc "$type path $path: refused" "$msg" 1 "$RC" "$T/$name.err"
    check_refused "... and the container does not exist" "does not exist" 1 b state "$(cid "$name")"
    assert_clean "$name"
}
refused_ns w-net network "/proc/$HPID/ns/ipc" \
    "linux.namespaces[network].path: /proc/$HPID/ns/ipc is not a network namespace"
refused_ns w-pid pid "/proc/$HPID/ns/net" \
    "linux.namespaces[pid].path: /proc/$HPID/ns/net is not a pid namespace"
refused_ns w-uts uts "/proc/$HPID/ns/ipc" \
    "linux.namespaces[uts].path: /proc/$HPID/ns/ipc is not a uts namespace"
echo "not a namespace" > "$T/plain"
refused_ns w-file ipc "$T/plain" "linux.namespaces[ipc].path: $T/plain is not a namespace"
refused_ns w-dir network "$T" "linux.namespaces[network].path: $T is not a namespace"
refused_ns w-miss network "$T/no-such-ns" "linux.namespaces[network].path: open $T/no-such-ns"

b delete --force "$(cid holder)" >/dev/null 2>&1
assert_clean holder
