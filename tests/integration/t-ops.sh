#!/usr/bin/env bash
# Operations on a running container: pause/resume (freezer), update of
# resource limits, events --stats, and delete --force of a paused container.
# shellcheck disable=SC2016  # jq filters are single-quoted on purpose
. "$(dirname "$0")/lib.sh"
it_init

# cg CTRL V1FILE V2FILE ID: the container's cgroup file, v1 (hybrid) or v2.
cg() {
    if [ -d "/sys/fs/cgroup/$1/brig-test/$4" ]; then echo "/sys/fs/cgroup/$1/brig-test/$4/$2"
    else echo "/sys/fs/cgroup/brig-test/$4/$3"; fi
}
# frozen ID / thawed ID: the v1 freezer (FROZEN/THAWED), or the cgroup2
# core freezer (cgroup.events "frozen 1"/"frozen 0"), which a hybrid host
# also offers under /sys/fs/cgroup/unified.
freezer_says() {
    local id=$1 v1=$2 v2=$3 d
    [ "$(cat "/sys/fs/cgroup/freezer/brig-test/$id/freezer.state" 2>/dev/null)" = "$v1" ] && return 0
    for d in /sys/fs/cgroup/unified/brig-test/$id /sys/fs/cgroup/brig-test/$id; do
        grep -qx "frozen $v2" "$d/cgroup.events" 2>/dev/null && return 0
    done
    return 1
}
frozen() { freezer_says "$1" FROZEN 1; }
thawed() { ! frozen "$1"; }
# proc_state PID: the one-letter state in /proc/PID/stat.
proc_state() { awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null; }

# ---- pause and resume --------------------------------------------------------
mkb op -- /usr/bin/brig-probe sleep 120 || bail "cannot build a bundle"
cfg op '.linux.resources = {memory: {limit: 67108864}, pids: {limit: 50}}'
ID=$(cid op)
create_ct op
check_eq "create succeeds" "$RC" 0
check "start succeeds" start_ct op
PID=$(state_field "$ID" pid)
check "pause succeeds" b pause "$ID"
check_eq "state says paused" "$(state_field "$ID" status)" paused
check "the freezer cgroup is frozen" frozen "$ID"
check_refused "pause twice fails" "container is already paused" 1 b pause "$ID"
check "resume succeeds" b resume "$ID"
check_eq "state says running again" "$(state_field "$ID" status)" running
check "the freezer cgroup is thawed" thawed "$ID"
check "the process is alive after resume" test -n "$(proc_state "${PID:-0}")"
check_refused "resume of a running container fails" "container is not paused (running)" 1 b resume "$ID"

# Frozen for real: a SIGTERM (which the probe handles by exiting) waits
# until resume.
mkb fr -- /usr/bin/brig-probe sleep 120 || true
create_ct fr
start_ct fr >/dev/null 2>&1
b pause "$(cid fr)" >/dev/null 2>&1
b kill "$(cid fr)" TERM >/dev/null 2>&1
sleep 1
check_eq "a paused container does not act on SIGTERM" "$(state_field "$(cid fr)" status)" paused
b resume "$(cid fr)" >/dev/null 2>&1
check "after resume the pending SIGTERM stops it" wait_status "$(cid fr)" stopped 10
b delete --force "$(cid fr)" >/dev/null 2>&1
assert_clean fr

# ---- update ------------------------------------------------------------------
check "update --memory 128M succeeds" b update --memory 128M "$ID"
check_eq "memory limit is now 128 MiB" \
    "$(cat "$(cg memory memory.limit_in_bytes memory.max "$ID")" 2>/dev/null)" 134217728
check "update --pids-limit 20 succeeds" b update --pids-limit 20 "$ID"
check_eq "pids limit is now 20" "$(cat "$(cg pids pids.max pids.max "$ID")" 2>/dev/null)" 20
echo '{"pids": {"limit": 30}}' > "$T/res.json"
check "update -r FILE succeeds" b update -r "$T/res.json" "$ID"
check_eq "pids limit is now 30" "$(cat "$(cg pids pids.max pids.max "$ID")" 2>/dev/null)" 30
check_refused "update --memory with garbage fails" "--memory lots: expected a size" 1 b update --memory lots "$ID"
check_eq "... and leaves the memory limit alone" \
    "$(cat "$(cg memory memory.limit_in_bytes memory.max "$ID")" 2>/dev/null)" 134217728
echo '{"pids": {"limit": "many"}}' > "$T/bad.json"
check_refused "update -r with a wrong type fails" "linux.resources.pids.limit: expected a signed 64-bit integer" 1 b update -r "$T/bad.json" "$ID"
check_eq "... and leaves the pids limit alone" "$(cat "$(cg pids pids.max pids.max "$ID")" 2>/dev/null)" 30
check_refused "update --l3-cache-schema is refused (no Intel RDT)" "linux.intelRdt is not supported by brig" 1 b update --l3-cache-schema "L3:0=f" "$ID"

# ---- events --stats ----------------------------------------------------------
b events --stats "$ID" > "$T/stats.json" 2>"$T/stats.err"
check_eq "events --stats exits 0" "$?" 0
check "events --stats prints a stats object for the container" jq -e --arg id "$ID" \
    '.type == "stats" and .id == $id and (.data | type == "object")' "$T/stats.json"
check "... counting at least one pid" jq -e '.data.pids.current >= 1' "$T/stats.json"

# ---- delete --force of a paused container --------------------------------------
check "pause again" b pause "$ID"
check "delete --force of a paused container succeeds" b delete --force "$ID"
check "its process is gone" bash -c "! [ -e /proc/${PID:-0} ] || grep -q '^State:.*Z' /proc/${PID:-0}/status"
assert_clean op

check_refused "pause of an unknown container fails" "container nosuch does not exist" 1 b pause nosuch
check_refused "update of an unknown container fails" "container nosuch does not exist" 1 b update --pids-limit 5 nosuch
